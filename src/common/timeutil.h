/* Monotonic and wall clocks in nanoseconds, and deadlines for timed waits. */
#ifndef NTOP_TIMEUTIL_H
#define NTOP_TIMEUTIL_H
#include <stdint.h>
#include <time.h>

uint64_t time_mono_ns(void);
/* CLOCK_MONOTONIC_COARSE: jiffy resolution, but a few ns to read. */
uint64_t time_mono_coarse_ns(void);
uint64_t time_wall_ns(void);
/* The CLOCK_REALTIME time ns_from_now ahead, as pthread_cond_timedwait
 * takes it for a default (CLOCK_REALTIME) condition variable. */
void time_deadline(struct timespec *ts, long long ns_from_now);

#endif
