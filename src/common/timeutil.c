#include "common/timeutil.h"

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

uint64_t time_mono_coarse_ns(void)
{
	return read_clock(CLOCK_MONOTONIC_COARSE);
}

uint64_t time_wall_ns(void)
{
	return read_clock(CLOCK_REALTIME);
}

void time_deadline(struct timespec *ts, long long ns_from_now)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_sec += ns_from_now / 1000000000ll;
	ts->tv_nsec += ns_from_now % 1000000000ll;
	if (ts->tv_nsec >= 1000000000l) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000l;
	}
}
