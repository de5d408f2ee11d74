/* What a function's first launch costs the launching thread, and whether
 * another thread can pay it beforehand without running the kernel (as the
 * hook's builder would for a probed copy), with no hook loaded. Each
 * repetition loads a fresh module (a one-store kernel, JIT-compiled from
 * PTX) and calls cuFuncLoad, then another thread does one warm-up:
 *
 *   none         nothing more
 *   occupancy    cuOccupancyMaxActiveBlocksPerMultiprocessor and
 *                cuFuncGetAttribute on the function
 *   capture      a launch captured on a stream of its own (thread-local
 *                capture mode) into a graph, never instantiated
 *   instantiate  the same, the graph instantiated and both destroyed
 *   launched     (not possible for a probed copy: a reference) the kernel
 *                launched for real by that thread, on a stream of its own
 *   pause        (a reference) the kernel launched for real by the main
 *                thread: what is left is the pause's
 *
 * then, after a 20 ms pause (the app's thread idle), the main thread's
 * first and second cuLaunchKernel of the function are timed on the host,
 * each waited for. Warm-ups take turns, REPS repetitions each.
 *
 * Prints "warmup=<name> first_ns=<median> second_ns=<median>" a line.
 *   first_launch [reps]    default 15
 * Exit status 0, 1 on a CUDA error, 2 on usage. */
#define _POSIX_C_SOURCE 200809L
#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#define BENCH_NAME "first_launch"
#include "bench_ck.h"

#define MAX_REPS 64

static const char PTX[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
			  ".visible .entry k(.param .u64 p)\n{\n"
			  "\t.reg .b64 %rd<3>;\n\t.reg .b32 %r<2>;\n"
			  "\tld.param.u64 %rd1, [p];\n\tcvta.to.global.u64 %rd2, %rd1;\n"
			  "\tmov.u32 %r1, %tid.x;\n\tst.global.u32 [%rd2], %r1;\n\tret;\n}\n";

enum warmup { W_NONE, W_OCC, W_CAPTURE, W_INST, W_LAUNCHED, W_PAUSE, W_N };
static const char *const NAMES[W_N] = { "none", "occupancy", "capture", "instantiate", "launched", "pause" };

struct warm {
	CUcontext ctx;
	CUfunction f;
	CUdeviceptr out;
	enum warmup w;
	int rc;
};

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The kernel run once on stream s, or on a stream of its own (s NULL). */
static int run_once(CUfunction f, CUdeviceptr out, CUstream s)
{
	CUstream mine = NULL;
	void *args[] = { &out };
	if (!s && ck(cuStreamCreate(&mine, CU_STREAM_NON_BLOCKING), "cuStreamCreate") < 0)
		return -1;
	CUstream at = s ? s : mine;
	int rc = ck(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, at, args, NULL), "cuLaunchKernel (warm-up)") < 0 ||
			 ck(cuStreamSynchronize(at), "cuStreamSynchronize")
		 ? -1
		 : 0;
	if (mine && ck(cuStreamDestroy(mine), "cuStreamDestroy") < 0)
		rc = -1;
	return rc;
}

static int warm_capture(CUfunction f, int instantiate)
{
	CUstream s;
	CUgraph g;
	CUgraphExec e;
	CUdeviceptr zero = 0;
	void *args[] = { &zero };
	if (ck(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate") < 0 ||
	    ck(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "cuStreamBeginCapture") < 0 ||
	    ck(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, args, NULL), "cuLaunchKernel (captured)") < 0 ||
	    ck(cuStreamEndCapture(s, &g), "cuStreamEndCapture") < 0)
		return -1;
	if (instantiate && (ck(cuGraphInstantiate(&e, g, 0), "cuGraphInstantiate") < 0 ||
			    ck(cuGraphExecDestroy(e), "cuGraphExecDestroy") < 0))
		return -1;
	return ck(cuGraphDestroy(g), "cuGraphDestroy") < 0 || ck(cuStreamDestroy(s), "cuStreamDestroy") < 0 ? -1 : 0;
}

static void *warm_thread(void *arg)
{
	struct warm *w = arg;
	int occ, regs;
	w->rc = ck(cuCtxSetCurrent(w->ctx), "cuCtxSetCurrent");
	if (w->rc == 0 && w->w == W_OCC)
		w->rc = ck(cuOccupancyMaxActiveBlocksPerMultiprocessor(&occ, w->f, 32, 0), "cuOccupancy") < 0 ||
				ck(cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, w->f), "cuFuncGetAttribute") < 0
			? -1
			: 0;
	if (w->rc == 0 && (w->w == W_CAPTURE || w->w == W_INST))
		w->rc = warm_capture(w->f, w->w == W_INST);
	if (w->rc == 0 && w->w == W_LAUNCHED)
		w->rc = run_once(w->f, w->out, NULL);
	return NULL;
}

/* One repetition of warm-up w: the first and second launch's call, ns. */
static int one(CUcontext ctx, enum warmup w, CUstream s, CUdeviceptr out, double *first, double *second)
{
	CUmodule m;
	struct warm wa = { .ctx = ctx, .w = w, .out = out };
	pthread_t t;
	void *args[] = { &out };
	if (ck(cuModuleLoadData(&m, PTX), "cuModuleLoadData") < 0 || ck(cuModuleGetFunction(&wa.f, m, "k"), "k") < 0 ||
	    ck(cuFuncLoad(wa.f), "cuFuncLoad") < 0 || pthread_create(&t, NULL, warm_thread, &wa) != 0)
		return -1;
	pthread_join(t, NULL);
	if (wa.rc < 0 || (w == W_PAUSE && run_once(wa.f, out, s) < 0))
		return -1;
	struct timespec pause = { 0, 20000000 };
	nanosleep(&pause, NULL);
	double *at[2] = { first, second };
	for (int i = 0; i < 2; i++) {
		double t0 = now_ns();
		CUresult rc = cuLaunchKernel(wa.f, 1, 1, 1, 32, 1, 1, 0, s, args, NULL);
		*at[i] = now_ns() - t0;
		if (ck(rc, "cuLaunchKernel") < 0 || ck(cuStreamSynchronize(s), "cuStreamSynchronize") < 0)
			return -1;
	}
	return ck(cuModuleUnload(m), "cuModuleUnload");
}

int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 15;
	if (reps < 1 || reps > MAX_REPS) {
		fprintf(stderr, "usage: first_launch [reps 1..%d]\n", MAX_REPS);
		return 2;
	}
	CUdevice d;
	CUcontext c;
	CUstream s;
	CUdeviceptr out;
	if (ck(cuInit(0), "cuInit") < 0 || ck(cuDeviceGet(&d, 0), "cuDeviceGet") < 0 ||
	    ck(cuDevicePrimaryCtxRetain(&c, d), "cuDevicePrimaryCtxRetain") < 0 || ck(cuCtxSetCurrent(c), "cuCtxSetCurrent") < 0 ||
	    ck(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate") < 0 || ck(cuMemAlloc(&out, 64), "cuMemAlloc") < 0)
		return 1;
	static double first[W_N][MAX_REPS], second[W_N][MAX_REPS];
	for (int r = 0; r < reps; r++)
		for (int w = 0; w < W_N; w++)
			if (one(c, (enum warmup)((w + r) % W_N), s, out, &first[(w + r) % W_N][r], &second[(w + r) % W_N][r]) < 0)
				return 1;
	for (int w = 0; w < W_N; w++) {
		qsort(first[w], (size_t)reps, sizeof first[w][0], cmp_double);
		qsort(second[w], (size_t)reps, sizeof second[w][0], cmp_double);
		printf("warmup=%s first_ns=%.0f second_ns=%.0f\n", NAMES[w], first[w][reps / 2], second[w][reps / 2]);
	}
	return 0;
}
