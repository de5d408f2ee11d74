/* Test application for the probed-launch pipeline (regress/hook_pipeline.sh):
 * launches `fill` N times back to back without waiting (a warm-up burst),
 * waits until the hook has written N result files, then watches its own
 * thread's driver calls (the fake driver's fakecuda_watch) across a second
 * burst of N launches. Prints what each burst's launching thread allocated
 * and waited on:
 *   burst warm launches=N allocs=A syncs=S queries=Q records=R timing=T
 *   burst steady launches=N allocs=A syncs=S queries=Q records=R timing=T
 * With the hook's launch path correct, syncs are 0 in both, and allocs and
 * event queries 0 in the steady burst (the pool is as deep as the warm
 * burst needed, and its buffers came back known to be zeroed). Event
 * records: one per probed launch (its end), two where it is timed; T of
 * them of events with timing (a timed launch's two).
 * APP_BURST_SMEM=BYTES: every launch asks for that much dynamic shared
 * memory, after cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES) on `fill`
 * (as apps do for more than 48 KB).
 * APP_BURST_SHAPES=1: the bursts alternate between grids of 4 and 3 blocks
 * (a job the hook made ahead for one shape is not the next launch's).
 * APP_BURST_SHAPES=2: they alternate between a 1-D launch (4 x 64) and a
 * 2-D one (2x2 blocks of 32x2 threads), the same threads and blocks.
 * APP_BURST_CAPTURE=1: after the bursts, a probed launch on a stream and at
 * once a global-mode capture on that stream that lasts while the hook
 * still drains results; the capture must end valid.
 * APP_BURST_LATE_ALLOC=BYTES: after the bursts' results are written, one
 * cuMemAlloc of BYTES; prints `late alloc BYTES: ok` or its error (a
 * failure). APP_BURST_LATE_NOW=1: right after the bursts instead, while
 * results may still be in flight. APP_BURST_LATE_VMM=1: with cuMemCreate
 * (the virtual memory API) instead of cuMemAlloc. APP_BURST_LATE_PROBE=N:
 * first N allocations of twice BYTES, which must fail (an app searching
 * for what it can allocate).
 * Usage: app_burst KERNELS.ptx N (NTOP_TRACE_DIR names the trace) */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cuda.h>
#include "app_util.h"

static int results_written(const char *trace)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/results", trace);
	DIR *d = opendir(path);
	int n = 0;
	for (struct dirent *e; d && (e = readdir(d)) != NULL;)
		n += e->d_name[0] != '.' && strstr(e->d_name, ".ntr") != NULL;
	if (d)
		closedir(d);
	return n;
}

/* Waits (at most 30 s) until n result files are written; how many are. */
static int results_wait(const char *trace, int n)
{
	for (int tries = 0; results_written(trace) < n && tries < 3000; tries++) {
		struct timespec ts = { 0, 10000000 };
		nanosleep(&ts, NULL);
	}
	return results_written(trace);
}

struct watch {
	void (*on)(int);
	unsigned long (*count)(int);
};

static unsigned smem;
static int shapes;

static void burst(const char *name, CUfunction fill, CUdeviceptr buf, int n, const struct watch *w)
{
	unsigned len = 1024;
	void *params[] = { &buf, &len };
	unsigned long a0 = w->count(0), s0 = w->count(1), q0 = w->count(2), r0 = w->count(3), t0 = w->count(4);
	w->on(1);
	for (int i = 0; i < n; i++) {
		int odd = i % 2;
		if (shapes == 2 && odd)
			CK(cuLaunchKernel(fill, 2, 2, 1, 32, 2, 1, smem, 0, params, NULL));
		else
			CK(cuLaunchKernel(fill, shapes && odd ? 3 : 4, 1, 1, 64, 1, 1, smem, 0, params, NULL));
	}
	w->on(0);
	printf("burst %s launches=%d allocs=%lu syncs=%lu queries=%lu records=%lu timing=%lu\n", name, n,
	       w->count(0) - a0, w->count(1) - s0, w->count(2) - q0, w->count(3) - r0, w->count(4) - t0);
}

static void capture_after_launch(CUfunction fill, CUdeviceptr buf)
{
	static CUstream s;
	static CUgraph g;
	unsigned len = 1024;
	void *params[] = { &buf, &len };
	CK(cuStreamCreate(&s, 0));
	for (int i = 0; i < 3; i++) {
		CK(cuLaunchKernel(fill, 4, 1, 1, 64, 1, 1, smem, s, params, NULL));
		CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
		CK(cuLaunchKernel(fill, 4, 1, 1, 64, 1, 1, smem, s, params, NULL));
		struct timespec ts = { 0, 60000000 }; /* the hook's threads keep working */
		nanosleep(&ts, NULL);
		CK(cuStreamEndCapture(s, &g));
	}
	printf("capture ok\n");
}

/* Once all n results are written (the hook's map buffers are back in its
 * pool), one allocation of `bytes`. */
static void late_alloc(const char *trace, int n, unsigned long long bytes)
{
	static CUdeviceptr late;
	results_wait(trace, n);
	static CUmemGenericAllocationHandle handle;
	int probes = getenv("APP_BURST_LATE_PROBE") ? atoi(getenv("APP_BURST_LATE_PROBE")) : 0;
	for (int i = 0; i < probes; i++)
		if (cuMemAlloc(&late, (size_t)bytes * 2) != CUDA_ERROR_OUT_OF_MEMORY)
			printf("FAIL: an allocation of twice the device did not fail for memory\n"), failures++;
	CUmemAllocationProp prop = { .type = CU_MEM_ALLOCATION_TYPE_PINNED,
				     .location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 } };
	CUresult rc = getenv("APP_BURST_LATE_VMM") ? cuMemCreate(&handle, (size_t)bytes, &prop, 0)
						   : cuMemAlloc(&late, (size_t)bytes);
	printf("late alloc %llu: %s\n", bytes, rc == CUDA_SUCCESS ? "ok" : "failed");
	CK(rc);
}

int main(int argc, char **argv)
{
	const char *trace = getenv("NTOP_TRACE_DIR");
	if (argc < 3 || !trace) {
		fprintf(stderr, "usage: NTOP_TRACE_DIR=DIR %s KERNELS.ptx N\n", argv[0]);
		return 2;
	}
	int n = atoi(argv[2]);
	char *ptx = slurp(argv[1]);
	if (!ptx || n <= 0)
		return 2;
	struct watch w = { (void (*)(int))fake_sym("fakecuda_watch"),
			   (unsigned long (*)(int))fake_sym("fakecuda_watch_count") };
	if (!w.on || !w.count) {
		printf("FAIL: not running on the fake driver\n");
		return 3;
	}
	static CUdevice dev;
	static CUcontext ctx;
	static CUmodule mod;
	static CUfunction fill;
	static CUdeviceptr buf;
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuCtxCreate(&ctx, NULL, 0, dev));
	CK(cuModuleLoadData(&mod, ptx));
	CK(cuModuleGetFunction(&fill, mod, "fill"));
	CK(cuMemAlloc(&buf, 1024 * sizeof(float)));
	free(ptx);
	smem = getenv("APP_BURST_SMEM") ? (unsigned)atoi(getenv("APP_BURST_SMEM")) : 0;
	shapes = getenv("APP_BURST_SHAPES") ? atoi(getenv("APP_BURST_SHAPES")) : 0;
	if (smem)
		CK(cuFuncSetAttribute(fill, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)smem));
	burst("warm", fill, buf, n, &w);
	int written = results_wait(trace, n);
	if (written < n)
		printf("FAIL: only %d of %d results written after 30 s\n", written, n), failures++;
	burst("steady", fill, buf, n, &w);
	if (getenv("APP_BURST_CAPTURE"))
		capture_after_launch(fill, buf);
	if (getenv("APP_BURST_LATE_ALLOC"))
		late_alloc(trace, getenv("APP_BURST_LATE_NOW") ? 0 : 2 * n, strtoull(getenv("APP_BURST_LATE_ALLOC"), NULL, 0));
	CK(cuCtxSynchronize());
	printf("app_burst: done, %d failures\n", failures);
	return failures ? 1 : 0;
}
