/* Monotonic and wall clocks in nanoseconds. */
#ifndef NTOP_TIMEUTIL_H
#define NTOP_TIMEUTIL_H
#include <stdint.h>

uint64_t time_mono_ns(void);
uint64_t time_wall_ns(void);

#endif
