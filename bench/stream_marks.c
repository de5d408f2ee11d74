/* What the hook's own stream work around a probed kernel costs on the
 * app's clock, each part alone, with no hook loaded: the app's pattern of
 * app_cost (cudaEvents around one launch, then a wait for it), a
 * one-element copy kernel of N floats, and in each variant one thing a
 * probed launch adds:
 *
 *   bare        the launch alone
 *   pre_1us     1 us of host work before the launch (calibration: the
 *               GPU idles through it)
 *   post_3us    3 us of host work after the launch, before the app's stop
 *               event (does the kernel hide it?)
 *   end_bare    an event without timing recorded after the kernel (the
 *               hook's end event of an untimed probed launch)
 *   end_timed   a timing event there (a timed probed launch)
 *   end_block   a CU_EVENT_BLOCKING_SYNC event without timing there
 *   end_write   cuStreamWriteValue32 to device memory there
 *   dtoh        a device-to-host copy of COPY_MIB into pinned memory on
 *               another stream, queued just before the app's start event
 *               (a collector's copy back overlapping the next kernel)
 *
 * Variants take turns launch by launch, in an order that rotates every
 * round, so drift and clocks fall on all alike. Prints, per size and
 * variant, "n=<floats> variant=<v> us=<median> plus=<median - bare's>".
 *
 * Then the bare launch again while another thread of the process keeps
 * the driver busy the way a collector does, in turns of 50 launches:
 *
 *   none        nothing beside (the reference)
 *   dtoh_pinned copies of COPY_MIB into pinned memory, each waited for
 *   dtoh_page   the same into ordinary (pageable) memory
 *   small_sync  copies of 64 KiB into pinned memory, each waited for
 *   query       an event recorded and polled with cuEventQuery
 *   sync_spin   a 50 us one-thread kernel, an event after it and
 *               cuEventSynchronize (the driver spins: the event's default)
 *   sync_block  the same with a CU_EVENT_BLOCKING_SYNC event
 *   query_nap   the same, polled with cuEventQuery every 20 us
 *
 * printing "n=<floats> beside=<b> us=<median> plus=<median - none's>".
 *
 *   stream_marks [floats...]      default 16777216 4194304 1048576
 *   STREAM_MARKS_ROUNDS=N         launches per variant (default 400)
 *   STREAM_MARKS_COPY_MIB=M       the dtoh variant's bytes (default 14)
 * Exit status 0, 1 on a CUDA error, 2 on usage. */
#define _POSIX_C_SOURCE 200809L
#include <cuda.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#define BENCH_NAME "stream_marks"
#include "bench_ck.h"

static const char PTX[] =
	".version 7.0\n.target sm_50\n.address_size 64\n"
	".visible .entry copy(.param .u64 a, .param .u64 b, .param .u32 n)\n{\n"
	".reg .pred %p;\n.reg .b32 %r<6>;\n.reg .b64 %rd<8>;\n.reg .f32 %f1;\n"
	"ld.param.u64 %rd1, [a];\nld.param.u64 %rd2, [b];\nld.param.u32 %r1, [n];\n"
	"mov.u32 %r2, %ctaid.x;\nmov.u32 %r3, %ntid.x;\nmov.u32 %r4, %tid.x;\n"
	"mad.lo.s32 %r5, %r2, %r3, %r4;\nsetp.ge.u32 %p, %r5, %r1;\n@%p ret;\n"
	"cvta.to.global.u64 %rd3, %rd1;\ncvta.to.global.u64 %rd4, %rd2;\n"
	"mul.wide.u32 %rd5, %r5, 4;\nadd.s64 %rd6, %rd3, %rd5;\nadd.s64 %rd7, %rd4, %rd5;\n"
	"ld.global.f32 %f1, [%rd6];\nst.global.f32 [%rd7], %f1;\nret;\n}\n"
	".visible .entry spin(.param .u64 ns)\n{\n.reg .pred %p;\n.reg .b64 %t<4>;\n"
	"ld.param.u64 %t1, [ns];\nmov.u64 %t2, %globaltimer;\nadd.s64 %t1, %t1, %t2;\n"
	"L: mov.u64 %t3, %globaltimer;\nsetp.lt.u64 %p, %t3, %t1;\n@%p bra L;\nret;\n}\n";

enum variant { V_BARE, V_PRE_1US, V_POST_3US, V_END_BARE, V_END_TIMED, V_END_BLOCK, V_END_WRITE, V_DTOH, V_N };
static const char *const NAMES[V_N] = { "bare", "pre_1us", "post_3us", "end_bare", "end_timed", "end_block",
					"end_write", "dtoh" };

enum beside { B_NONE, B_DTOH_PINNED, B_DTOH_PAGE, B_SMALL_SYNC, B_QUERY, B_SYNC_SPIN, B_SYNC_BLOCK, B_QUERY_NAP, B_N };
static const char *const BESIDE[B_N] = { "none", "dtoh_pinned", "dtoh_page", "small_sync", "query", "sync_spin",
					 "sync_block", "query_nap" };

struct bench {
	CUcontext ctx;
	CUfunction fn, spin;
	CUstream s, side;
	CUevent start, stop, mark_bare, mark_timed, mark_block;
	CUdeviceptr a, b, flag, src;
	void *host, *page;
	size_t copy_bytes;
	CUevent side_ev, side_block;
	atomic_int side_stop;
	enum beside side_what;
	int side_failed;
};

static void spin_ns(long ns)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < ns);
}

/* One launch as the variant has it; *us: the app's event time. */
static int one(struct bench *b, enum variant v, unsigned n, float *us)
{
	void *args[] = { &b->a, &b->b, &n };
	int rc = 0;
	if (v == V_DTOH)
		rc |= ck(cuMemcpyDtoHAsync(b->host, b->src, b->copy_bytes, b->side), "cuMemcpyDtoHAsync");
	rc |= ck(cuEventRecord(b->start, b->s), "cuEventRecord start");
	if (v == V_PRE_1US)
		spin_ns(1000);
	rc |= ck(cuLaunchKernel(b->fn, (n + 255) / 256, 1, 1, 256, 1, 1, 0, b->s, args, NULL), "cuLaunchKernel");
	if (v == V_POST_3US)
		spin_ns(3000);
	if (v == V_END_BARE)
		rc |= ck(cuEventRecord(b->mark_bare, b->s), "cuEventRecord mark");
	if (v == V_END_TIMED)
		rc |= ck(cuEventRecord(b->mark_timed, b->s), "cuEventRecord mark");
	if (v == V_END_BLOCK)
		rc |= ck(cuEventRecord(b->mark_block, b->s), "cuEventRecord mark");
	if (v == V_END_WRITE)
		rc |= ck(cuStreamWriteValue32(b->s, b->flag, n, 0), "cuStreamWriteValue32");
	rc |= ck(cuEventRecord(b->stop, b->s), "cuEventRecord stop");
	rc |= ck(cuEventSynchronize(b->stop), "cuEventSynchronize");
	rc |= ck(cuEventElapsedTime(us, b->start, b->stop), "cuEventElapsedTime");
	*us *= 1000.0f;
	if (v == V_DTOH)
		rc |= ck(cuStreamSynchronize(b->side), "cuStreamSynchronize side");
	return rc;
}

static int cmp_float(const void *x, const void *y)
{
	float a = *(const float *)x, b = *(const float *)y;
	return (a > b) - (a < b);
}

static int run_size(struct bench *b, unsigned n, int rounds)
{
	float *t[V_N];
	for (int v = 0; v < V_N; v++)
		if (!(t[v] = calloc((size_t)rounds, sizeof(float))))
			return -1;
	int rc = 0;
	for (int w = 0; w < 20 && !rc; w++) /* warm-up: clocks, first-launch costs */
		rc = one(b, V_BARE, n, &t[0][0]);
	for (int r = 0; r < rounds && !rc; r++)
		for (int i = 0; i < V_N && !rc; i++) {
			enum variant v = (enum variant)((i + r) % V_N);
			rc = one(b, v, n, &t[v][r]);
		}
	float med[V_N];
	for (int v = 0; v < V_N && !rc; v++) {
		qsort(t[v], (size_t)rounds, sizeof(float), cmp_float);
		med[v] = t[v][rounds / 2];
	}
	for (int v = 0; v < V_N && !rc; v++)
		printf("n=%u variant=%s us=%.2f plus=%+.2f\n", n, NAMES[v], med[v], med[v] - med[V_BARE]);
	for (int v = 0; v < V_N; v++)
		free(t[v]);
	return rc;
}

static CUresult side_spin_kernel(struct bench *b)
{
	unsigned long long ns = 50000;
	void *args[] = { &ns };
	CUresult rc = cuLaunchKernel(b->spin, 1, 1, 1, 1, 1, 1, 0, b->side, args, NULL);
	return rc == CUDA_SUCCESS ? cuEventRecord(b->side_what == B_SYNC_BLOCK ? b->side_block : b->side_ev, b->side)
				  : rc;
}

static CUresult side_wait(struct bench *b)
{
	CUresult rc;
	switch (b->side_what) {
	case B_QUERY:
		while ((rc = cuEventQuery(b->side_ev)) == CUDA_ERROR_NOT_READY)
			;
		return rc;
	case B_SYNC_SPIN: return cuEventSynchronize(b->side_ev);
	case B_SYNC_BLOCK: return cuEventSynchronize(b->side_block);
	case B_QUERY_NAP:
		while ((rc = cuEventQuery(b->side_ev)) == CUDA_ERROR_NOT_READY)
			nanosleep(&(struct timespec){ 0, 20000 }, NULL);
		return rc;
	default: return cuStreamSynchronize(b->side);
	}
}

static void *side_loop(void *arg)
{
	struct bench *b = arg;
	if (ck(cuCtxSetCurrent(b->ctx), "cuCtxSetCurrent")) {
		b->side_failed = 1;
		return NULL;
	}
	while (!atomic_load(&b->side_stop)) {
		CUresult rc = CUDA_SUCCESS;
		switch (b->side_what) {
		case B_DTOH_PINNED: rc = cuMemcpyDtoHAsync(b->host, b->src, b->copy_bytes, b->side); break;
		case B_DTOH_PAGE: rc = cuMemcpyDtoHAsync(b->page, b->src, b->copy_bytes, b->side); break;
		case B_SMALL_SYNC: rc = cuMemcpyDtoHAsync(b->host, b->src, 65536, b->side); break;
		case B_QUERY: rc = cuEventRecord(b->side_ev, b->side); break;
		case B_SYNC_SPIN:
		case B_SYNC_BLOCK:
		case B_QUERY_NAP: rc = side_spin_kernel(b); break;
		default: return NULL;
		}
		if (rc == CUDA_SUCCESS)
			rc = side_wait(b);
		if (ck(rc, "beside")) {
			b->side_failed = 1;
			return NULL;
		}
	}
	return NULL;
}

/* Bare launches in turns of 50 per side activity; medians. */
static int run_beside(struct bench *b, unsigned n, int rounds)
{
	int turns = (rounds + 49) / 50, rc = 0;
	float *t[B_N];
	for (int w = 0; w < B_N; w++)
		if (!(t[w] = calloc((size_t)turns * 50, sizeof(float))))
			return -1;
	for (int r = 0; r < turns && !rc; r++)
		for (int i = 0; i < B_N && !rc; i++) {
			enum beside w = (enum beside)((i + r) % B_N);
			pthread_t th;
			b->side_what = w;
			atomic_store(&b->side_stop, 0);
			int started = w != B_NONE && pthread_create(&th, NULL, side_loop, b) == 0;
			for (int k = 0; k < 50 && !rc; k++)
				rc = one(b, V_BARE, n, &t[w][r * 50 + k]);
			atomic_store(&b->side_stop, 1);
			if (started)
				pthread_join(th, NULL);
			rc |= b->side_failed ? -1 : 0;
		}
	float med[B_N];
	for (int w = 0; w < B_N && !rc; w++) {
		qsort(t[w], (size_t)turns * 50, sizeof(float), cmp_float);
		med[w] = t[w][turns * 25];
	}
	for (int w = 0; w < B_N && !rc; w++)
		printf("n=%u beside=%s us=%.2f plus=%+.2f\n", n, BESIDE[w], med[w], med[w] - med[B_NONE]);
	for (int w = 0; w < B_N; w++)
		free(t[w]);
	return rc;
}

static int setup(struct bench *b, unsigned max_n, size_t copy_bytes)
{
	CUdevice dev;
	CUmodule mod;
	b->copy_bytes = copy_bytes;
	if (ck(cuInit(0), "cuInit") || ck(cuDeviceGet(&dev, 0), "cuDeviceGet") ||
	    ck(cuDevicePrimaryCtxRetain(&b->ctx, dev), "cuDevicePrimaryCtxRetain") ||
	    ck(cuCtxSetCurrent(b->ctx), "cuCtxSetCurrent") || ck(cuModuleLoadData(&mod, PTX), "cuModuleLoadData") ||
	    ck(cuModuleGetFunction(&b->fn, mod, "copy"), "cuModuleGetFunction") ||
	    ck(cuModuleGetFunction(&b->spin, mod, "spin"), "cuModuleGetFunction"))
		return -1;
	size_t bytes = (size_t)max_n * 4;
	if (ck(cuStreamCreate(&b->s, CU_STREAM_NON_BLOCKING), "cuStreamCreate") ||
	    ck(cuStreamCreate(&b->side, CU_STREAM_NON_BLOCKING), "cuStreamCreate") ||
	    ck(cuEventCreate(&b->start, 0), "cuEventCreate") || ck(cuEventCreate(&b->stop, 0), "cuEventCreate") ||
	    ck(cuEventCreate(&b->mark_bare, CU_EVENT_DISABLE_TIMING), "cuEventCreate") ||
	    ck(cuEventCreate(&b->mark_timed, 0), "cuEventCreate") ||
	    ck(cuEventCreate(&b->mark_block, CU_EVENT_DISABLE_TIMING | CU_EVENT_BLOCKING_SYNC), "cuEventCreate") ||
	    ck(cuMemAlloc(&b->a, bytes), "cuMemAlloc") ||
	    ck(cuMemAlloc(&b->b, bytes), "cuMemAlloc") || ck(cuMemAlloc(&b->flag, 64), "cuMemAlloc") ||
	    ck(cuMemAlloc(&b->src, copy_bytes), "cuMemAlloc") ||
	    ck(cuMemAllocHost(&b->host, copy_bytes), "cuMemAllocHost") ||
	    ck(cuEventCreate(&b->side_ev, CU_EVENT_DISABLE_TIMING), "cuEventCreate") ||
	    ck(cuEventCreate(&b->side_block, CU_EVENT_DISABLE_TIMING | CU_EVENT_BLOCKING_SYNC), "cuEventCreate") ||
	    ck(cuMemsetD8(b->a, 1, bytes), "cuMemsetD8") || ck(cuMemsetD8(b->src, 2, copy_bytes), "cuMemsetD8"))
		return -1;
	if (!(b->page = malloc(copy_bytes)))
		return -1;
	memset(b->page, 0, copy_bytes);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned sizes[16] = { 16777216u, 4194304u, 1048576u };
	int n_sizes = 3;
	if (argc > 1) {
		n_sizes = 0;
		for (int i = 1; i < argc && n_sizes < 16; i++) {
			char *end = NULL;
			unsigned long v = strtoul(argv[i], &end, 10);
			if (!end || *end || v == 0 || v > (1ul << 28)) {
				fprintf(stderr, "usage: stream_marks [floats (1..2^28)...]\n");
				return 2;
			}
			sizes[n_sizes++] = (unsigned)v;
		}
	}
	const char *e = getenv("STREAM_MARKS_ROUNDS");
	int rounds = e ? atoi(e) : 400;
	e = getenv("STREAM_MARKS_COPY_MIB");
	size_t copy_mib = e ? strtoul(e, NULL, 10) : 14;
	if (rounds < 1 || copy_mib < 1 || copy_mib > 4096) {
		fprintf(stderr, "stream_marks: STREAM_MARKS_ROUNDS >= 1, STREAM_MARKS_COPY_MIB in 1..4096\n");
		return 2;
	}
	unsigned max_n = 0;
	for (int i = 0; i < n_sizes; i++)
		max_n = sizes[i] > max_n ? sizes[i] : max_n;
	struct bench b;
	memset(&b, 0, sizeof b);
	if (setup(&b, max_n, copy_mib << 20) < 0)
		return 1;
	for (int i = 0; i < n_sizes; i++)
		if (run_size(&b, sizes[i], rounds) < 0 || run_beside(&b, sizes[i], rounds) < 0)
			return 1;
	return 0;
}
