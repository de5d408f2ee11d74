/* Signals a write can raise inside the application: SIGPIPE (a reader that
 * went away) and SIGXFSZ (a file past `ulimit -f`). Their default action
 * kills the process, so the hook never lets one reach the application: its
 * own threads start with both blocked (the write then fails with EPIPE or
 * EFBIG, which the caller counts like a full disk), and a write made on an
 * application thread blocks them around itself and takes back a signal it
 * raised (never one that was already pending). */
#ifndef NTOP_HOOK_SIGNALS_H
#define NTOP_HOOK_SIGNALS_H
#include <pthread.h>
#include <signal.h>

/* pthread_create with SIGPIPE and SIGXFSZ blocked in the new thread. */
int hook_thread_create(pthread_t *t, void *(*fn)(void *), void *arg);
/* Stops a hook thread whose loop waits on `wake` under `lock` until *stop:
 * sets it, wakes the thread and, if it was started (*started == 1), joins
 * it (the work under way ends first). */
void hook_thread_stop(pthread_mutex_t *lock, pthread_cond_t *wake, int *stop, const int *started,
		      const pthread_t *t);

struct hook_io_signals {
	sigset_t old;
	int pending_pipe, pending_xfsz; /* already pending before: not ours to take */
};
/* Around a write on an application thread. */
void hook_io_signals_begin(struct hook_io_signals *s);
void hook_io_signals_end(struct hook_io_signals *s);

#endif
