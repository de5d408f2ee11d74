#ifndef NTOP_HOOK_LINGER_H
#define NTOP_HOOK_LINGER_H
/* A hook thread that stays awake for a while after its last work, looking
 * for more by itself, so that the app's threads hand it work without a
 * wake-up (a futex call, and a lock handed back and forth: microseconds of
 * an app's launch each time); past that it naps until signalled. Used by
 * the event writer and the results collector, under their own locks. */
#include <pthread.h>
#include <stdint.h>

struct hook_linger {
	int napping;          /* waiting for a signal: a producer must send one */
	uint64_t quiet_since; /* monotonic ns the thread ran out of work; 0: it has work */
};

/* Under the thread's lock, with no work: 1 when it has been out of work
 * linger_ns (the caller then naps, or does what it does once quiet); else
 * waits on cond at most poll_ns (1 ms once it has been out of work for 1
 * ms: the app's next launch comes soon or not at all) and returns 0. */
int hook_linger_poll(struct hook_linger *g, pthread_cond_t *cond, pthread_mutex_t *lock, uint64_t poll_ns,
		     uint64_t linger_ns);
/* Under the lock: waits for a signal. */
void hook_linger_nap(struct hook_linger *g, pthread_cond_t *cond, pthread_mutex_t *lock);
/* Under the lock: work came (the quiet time starts again when it runs out). */
void hook_linger_busy(struct hook_linger *g);

#endif
