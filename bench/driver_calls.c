/* What each driver call and clock read on a probed launch's path costs the
 * launching thread, with no hook loaded: each one called CALLS times in a
 * loop, the loops taking turns for ROUNDS rounds, the median ns a call.
 * A tight loop keeps the driver's lines in cache, so these are floors; the
 * launch path pays them with colder caches.
 *
 *   is_capturing      cuStreamIsCapturing on a created stream (the capture check)
 *   is_capturing_0    the same on the legacy default stream
 *   ctx_get_current   cuCtxGetCurrent
 *   ctx_get_device    cuCtxGetDevice
 *   capture_mode      cuThreadExchangeStreamCaptureMode, twice (relaxed and back)
 *   clock_mono        clock_gettime(CLOCK_MONOTONIC)
 *   clock_wall        clock_gettime(CLOCK_REALTIME)
 *
 * Prints "call=<name> ns=<median> min=<lowest round>" a line.
 *   driver_calls [calls] [rounds]    default 200000 and 9
 * Exit status 0, 1 on a CUDA error, 2 on usage. */
#define _POSIX_C_SOURCE 200809L
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#define BENCH_NAME "driver_calls"
#include "bench_ck.h"

enum call { C_CAPT, C_CAPT0, C_CTX, C_DEV, C_MODE, C_MONO, C_WALL, C_N };
static const char *const NAMES[C_N] = { "is_capturing", "is_capturing_0", "ctx_get_current", "ctx_get_device",
					"capture_mode", "clock_mono", "clock_wall" };

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* One loop of `calls` calls of c; ns a call, or -1 when a call failed. */
static double run_one(enum call c, CUstream s, long calls)
{
	CUstreamCaptureStatus st;
	CUcontext ctx;
	CUdevice dev;
	CUstreamCaptureMode mode;
	struct timespec ts;
	CUresult rc = CUDA_SUCCESS;
	double t0 = now_ns();
	for (long i = 0; i < calls && rc == CUDA_SUCCESS; i++) {
		switch (c) {
		case C_CAPT: rc = cuStreamIsCapturing(s, &st); break;
		case C_CAPT0: rc = cuStreamIsCapturing(0, &st); break;
		case C_CTX: rc = cuCtxGetCurrent(&ctx); break;
		case C_DEV: rc = cuCtxGetDevice(&dev); break;
		case C_MODE:
			mode = CU_STREAM_CAPTURE_MODE_RELAXED;
			rc = cuThreadExchangeStreamCaptureMode(&mode);
			if (rc == CUDA_SUCCESS)
				rc = cuThreadExchangeStreamCaptureMode(&mode);
			break;
		case C_MONO: clock_gettime(CLOCK_MONOTONIC, &ts); break;
		case C_WALL: clock_gettime(CLOCK_REALTIME, &ts); break;
		default: break;
		}
	}
	double t1 = now_ns();
	if (ck(rc, NAMES[c]) < 0)
		return -1;
	return (t1 - t0) / (double)calls;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	long calls = argc > 1 ? atol(argv[1]) : 200000;
	int rounds = argc > 2 ? atoi(argv[2]) : 9;
	if (argc > 3 || calls <= 0 || rounds <= 0 || rounds > 1000) {
		fprintf(stderr, "usage: driver_calls [calls] [rounds]\n");
		return 2;
	}
	CUdevice dev;
	CUcontext ctx;
	CUstream s;
	if (ck(cuInit(0), "cuInit") || ck(cuDeviceGet(&dev, 0), "cuDeviceGet") ||
	    ck(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain") ||
	    ck(cuCtxSetCurrent(ctx), "cuCtxSetCurrent") || ck(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate"))
		return 1;
	double *ns = calloc((size_t)rounds * C_N, sizeof *ns);
	if (!ns)
		return 1;
	for (int r = 0; r < rounds; r++)
		for (int k = 0; k < C_N; k++) {
			enum call c = (enum call)((k + r) % C_N); /* each round starts one later */
			if ((ns[c * rounds + r] = run_one(c, s, calls)) < 0)
				return 1;
		}
	for (int c = 0; c < C_N; c++) {
		double *v = ns + c * rounds;
		qsort(v, (size_t)rounds, sizeof *v, cmp_double);
		printf("call=%s ns=%.1f min=%.1f\n", NAMES[c], v[rounds / 2], v[0]);
	}
	free(ns);
	cuStreamDestroy(s);
	cuDevicePrimaryCtxRelease(dev);
	return 0;
}
