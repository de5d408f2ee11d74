/* SIGPIPE and SIGXFSZ kept away from the application (hook_signals.h). */
#include "hook/hook_signals.h"

#include <time.h>

static void io_set(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGPIPE);
	sigaddset(set, SIGXFSZ);
}

int hook_thread_create(pthread_t *t, void *(*fn)(void *), void *arg)
{
	sigset_t set, old;
	io_set(&set);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	int rc = pthread_create(t, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

void hook_thread_stop(pthread_mutex_t *lock, pthread_cond_t *wake, int *stop, const int *started,
		      const pthread_t *t)
{
	pthread_mutex_lock(lock);
	int joinable = *started == 1;
	*stop = 1;
	pthread_cond_signal(wake);
	pthread_mutex_unlock(lock);
	if (joinable)
		pthread_join(*t, NULL);
}

void hook_io_signals_begin(struct hook_io_signals *s)
{
	sigset_t set, pending;
	io_set(&set);
	pthread_sigmask(SIG_BLOCK, &set, &s->old);
	int have = sigpending(&pending) == 0;
	s->pending_pipe = have && sigismember(&pending, SIGPIPE);
	s->pending_xfsz = have && sigismember(&pending, SIGXFSZ);
}

void hook_io_signals_end(struct hook_io_signals *s)
{
	struct timespec zero = { 0, 0 };
	sigset_t one;
	if (!s->pending_pipe) {
		sigemptyset(&one);
		sigaddset(&one, SIGPIPE);
		sigtimedwait(&one, NULL, &zero);
	}
	if (!s->pending_xfsz) {
		sigemptyset(&one);
		sigaddset(&one, SIGXFSZ);
		sigtimedwait(&one, NULL, &zero);
	}
	pthread_sigmask(SIG_SETMASK, &s->old, NULL);
}
