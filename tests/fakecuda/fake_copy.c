/* fakecuda: what the hook's own copy stream needs (cross-stream waits,
 * memory info) and a watch on one thread's calls, so a test can
 * prove that the hook's launch path neither allocates nor synchronises once
 * warmed up: the app calls fakecuda_watch(1) on its launching thread, runs
 * its probed launches, and reads fakecuda_watch_count() (found with
 * dlsym(RTLD_DEFAULT) — the fake is loaded by the hook — or through the
 * driver's path). */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "fake.h"

static __thread int watch_on;
static unsigned long watch_counts[FAKE_WATCH_KINDS];

void fake_watch_note(enum fake_watch kind)
{
	if (watch_on)
		__atomic_add_fetch(&watch_counts[kind], 1, __ATOMIC_RELAXED);
}

FAKE_EXPORT void fakecuda_watch(int on)
{
	watch_on = on;
}

FAKE_EXPORT unsigned long fakecuda_watch_count(int kind)
{
	return kind >= 0 && kind < FAKE_WATCH_KINDS ? __atomic_load_n(&watch_counts[kind], __ATOMIC_RELAXED) : 0;
}

/* FAKECUDA_SYNC_DELAY_US: every wait on the "device" takes this long (an
 * event answers queries "not ready" for this long after its record), so a
 * test can make the hook's collector fall behind the application. */
uint64_t fake_sync_delay_ns(void)
{
	const char *v = getenv("FAKECUDA_SYNC_DELAY_US");
	long us = v ? strtol(v, NULL, 10) : 0;
	return us > 0 ? (uint64_t)us * 1000 : 0;
}

void fake_sync_delay(void)
{
	uint64_t ns = fake_sync_delay_ns();
	if (!ns)
		return;
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
	nanosleep(&ts, NULL);
}

/* Streams run at once, so a wait is already satisfied. */
FAKE_EXPORT CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned int flags)
{
	(void)s;
	(void)flags;
	return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

FAKE_EXPORT CUresult cuMemGetInfo_v2(size_t *free_b, size_t *total_b)
{
	fake_dev_mem(free_b, total_b);
	return CUDA_SUCCESS;
}
