#include "common/timeutil.h"

#include <time.h>

static uint64_t read_clock(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t time_mono_ns(void)
{
	return read_clock(CLOCK_MONOTONIC);
}

uint64_t time_wall_ns(void)
{
	return read_clock(CLOCK_REALTIME);
}
