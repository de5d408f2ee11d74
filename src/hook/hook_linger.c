/* Threads that stay awake after work (hook_linger.h). */
#include "hook/hook_linger.h"
#include "common/timeutil.h"

#define LINGER_FAST_NS 1000000ull      /* looks every poll_ns this long after its last work */
#define LINGER_SLOW_POLL_NS 1000000ull /* ... then this often until linger_ns */

int hook_linger_poll(struct hook_linger *g, pthread_cond_t *cond, pthread_mutex_t *lock, uint64_t poll_ns,
		     uint64_t linger_ns)
{
	uint64_t now = time_mono_ns();
	if (!g->quiet_since)
		g->quiet_since = now;
	if (now - g->quiet_since >= linger_ns)
		return 1;
	/* Work comes at the app's pace: looking every poll_ns for the whole
	 * linger kept a core a third busy at one probed launch per 11 ms. */
	if (now - g->quiet_since >= LINGER_FAST_NS && poll_ns < LINGER_SLOW_POLL_NS)
		poll_ns = LINGER_SLOW_POLL_NS;
	struct timespec ts;
	time_deadline(&ts, (long long)poll_ns);
	pthread_cond_timedwait(cond, lock, &ts);
	return 0;
}

void hook_linger_nap(struct hook_linger *g, pthread_cond_t *cond, pthread_mutex_t *lock)
{
	g->napping = 1;
	pthread_cond_wait(cond, lock);
	g->napping = 0;
	g->quiet_since = 0;
}

void hook_linger_busy(struct hook_linger *g)
{
	g->quiet_since = 0;
}
