/* Times PTX variants of one examples/cuda/app_cost.cu kernel side by side:
 * every variant's module loaded once, then ROUNDS rounds in which each
 * variant in turn gets PER launches, each with its own event pair, on a
 * stream of its own; per variant the median over rounds of each round's
 * median launch time. Variants that take a map get a buffer sized for one
 * count and up to 32 bytes of record per warp (block_sched's layout,
 * engine.h, and ptx_variants.py's wider strides);
 * `--check-blocks PTX` also launches that variant once over a cleared map
 * and checks one record per block (bench/ptx_variants.py's `block`).
 *
 *   ptx_time fill|copy|reduce KERNEL PTX...
 *
 * PTX_TIME_WAIT=1: each launch is waited for before the next is queued
 * (cuEventSynchronize on its end event), as an app timing each launch
 * does, so the time the GPU idles until a launch arrives counts;
 * PTX_TIME_WAIT=2: the same with an event without timing recorded between
 * the kernel and the end event (what the hook queues after a probed
 * kernel). Default: launches queued back to back.
 * PTX_TIME_CAPCHECK=1: cuStreamIsCapturing on the stream between the
 * start event and the launch (what the hook asks before a probed launch).
 * PTX_TIME_PRE_US=N / PTX_TIME_POST_US=N: the host busy for N us between
 * the start event and the launch / between the launch and the end event
 * (the hook's own work before and after it queues a probed kernel).
 * PTX_TIME_DTOH=BYTES: before each launch a copy of that many bytes from
 * the device into pinned memory is queued on a second stream, so it runs
 * beside the kernel (as the hook's copies back of earlier results do).
 *
 * Prints "variant <ptx> median_us=<x> min_us=<y> max_us=<z> call_ns=<c>" per
 * PTX; call_ns is the host time of the cuLaunchKernel call alone (median of
 * the rounds' medians): what the driver takes to queue that variant.
 * Exit status 0, 1 on a CUDA error or a failed check, 2 on usage. */
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#define BENCH_NAME "ptx_time"
#include "bench_ck.h"

#define ROUNDS 7
#define PER 41
#define MAX_VARIANTS 32

struct shape {
	const char *kind;
	int n, block;
};

static const struct shape SHAPES[] = {
	{ "fill", 4 << 20, 64 },
	{ "copy", 16 << 20, 256 },
	{ "reduce", 4 << 20, 256 },
};

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return NULL;
	}
	char *b = NULL;
	long n = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
	if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (b = malloc((size_t)n + 1)) && fread(b, 1, (size_t)n, f) == (size_t)n)
		b[n] = 0;
	else {
		free(b);
		b = NULL;
		fprintf(stderr, "ptx_time: cannot read %s\n", path);
	}
	fclose(f);
	return b;
}

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return x < y ? -1 : x > y;
}

struct bench {
	const struct shape *sh;
	CUfunction fn[MAX_VARIANTS];
	int n_fn;
	CUdeviceptr a, b, map;
	size_t map_bytes;
	int v, n;
	void *args[4];
	CUstream s;
	CUevent e0[PER], e1[PER];
	int wait;   /* PTX_TIME_WAIT */
	CUevent bare; /* PTX_TIME_WAIT=2: recorded after each kernel */
	size_t dtoh;  /* PTX_TIME_DTOH */
	int capcheck; /* PTX_TIME_CAPCHECK */
	double pre_us, post_us; /* PTX_TIME_PRE_US, PTX_TIME_POST_US */
	CUdeviceptr dsrc;
	void *hdst;
	CUstream s2;
	uint64_t call_ns[PER]; /* the launch call's host time, this round */
};

static int launch(struct bench *b, int i)
{
	unsigned blocks = (unsigned)(b->sh->n / b->sh->block);
	return ck(cuLaunchKernel(b->fn[i], blocks, 1, 1, (unsigned)b->sh->block, 1, 1, 0, b->s, b->args, NULL),
		  "cuLaunchKernel");
}

static void busy_us(double us)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while (us > 0 && (double)(t.tv_sec - t0.tv_sec) * 1e6 + (double)(t.tv_nsec - t0.tv_nsec) / 1e3 < us);
}

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Host work where the hook does its own, before and after the launch. */
static int launch_busy(struct bench *b, int i, int k)
{
	busy_us(b->pre_us);
	uint64_t t0 = now_ns();
	int rc = launch(b, i);
	b->call_ns[k] = now_ns() - t0;
	busy_us(b->post_us);
	return rc;
}

static int capture_check(struct bench *b)
{
	CUstreamCaptureStatus st;
	return b->capcheck ? ck(cuStreamIsCapturing(b->s, &st), "cuStreamIsCapturing") : 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Median launch time of PER launches of variant i, in us; *call the median
 * host time of its launch calls, ns. */
static int round_median(struct bench *b, int i, float *us, uint64_t *call)
{
	float t[PER];
	for (int k = 0; k < PER; k++)
		if ((b->dtoh && ck(cuMemcpyDtoHAsync(b->hdst, b->dsrc, b->dtoh, b->s2), "cuMemcpyDtoHAsync") < 0) ||
		    ck(cuEventRecord(b->e0[k], b->s), "cuEventRecord") < 0 || capture_check(b) < 0 || launch_busy(b, i, k) < 0 ||
		    (b->wait > 1 && ck(cuEventRecord(b->bare, b->s), "cuEventRecord") < 0) ||
		    ck(cuEventRecord(b->e1[k], b->s), "cuEventRecord") < 0 ||
		    (b->wait && ck(cuEventSynchronize(b->e1[k]), "cuEventSynchronize") < 0))
			return -1;
	if (ck(cuStreamSynchronize(b->s), "cuStreamSynchronize") < 0)
		return -1;
	for (int k = 0; k < PER; k++)
		if (ck(cuEventElapsedTime(&t[k], b->e0[k], b->e1[k]), "cuEventElapsedTime") < 0)
			return -1;
	qsort(t + 1, PER - 1, sizeof *t, cmp_float); /* the first launch left out */
	*us = t[1 + (PER - 1) / 2] * 1000.0f;
	qsort(b->call_ns + 1, PER - 1, sizeof b->call_ns[0], cmp_u64);
	*call = b->call_ns[1 + (PER - 1) / 2];
	return 0;
}

/* One launch over a cleared map: every block's count is 24 and its record
 * has clocks, an elapsed time and an SM id below 1024. */
static int check_blocks(struct bench *b, int i, const char *name)
{
	size_t blocks = (size_t)(b->sh->n / b->sh->block), counts = (blocks * 4 + 15) & ~(size_t)15;
	size_t bytes = counts + blocks * 24;
	unsigned char *h = malloc(bytes);
	if (!h || ck(cuMemsetD8(b->map, 0, bytes), "cuMemsetD8") < 0 || launch(b, i) < 0 ||
	    ck(cuStreamSynchronize(b->s), "cuStreamSynchronize") < 0 || ck(cuMemcpyDtoH(h, b->map, bytes), "cuMemcpyDtoH") < 0) {
		free(h);
		return -1;
	}
	size_t bad = 0;
	for (size_t k = 0; k < blocks; k++) {
		unsigned cnt, el, sm;
		unsigned long long st, gs;
		const unsigned char *r = h + counts + 24 * k;
		memcpy(&cnt, h + 4 * k, 4);
		memcpy(&st, r, 8);
		memcpy(&gs, r + 8, 8);
		memcpy(&el, r + 16, 4);
		memcpy(&sm, r + 20, 4);
		bad += cnt != 24 || !st || !gs || !el || sm >= 1024;
	}
	printf("check %s: %zu of %zu blocks bad\n", name, bad, blocks);
	free(h);
	return bad ? -1 : 0;
}

static int setup(struct bench *b)
{
	size_t n = (size_t)b->sh->n;
	b->map_bytes = n / 32 * 36 + 4096;
	if (ck(cuMemAlloc(&b->a, n * 4), "cuMemAlloc") < 0 || ck(cuMemAlloc(&b->b, n * 4), "cuMemAlloc") < 0 ||
	    ck(cuMemAlloc(&b->map, b->map_bytes), "cuMemAlloc") < 0 ||
	    ck(cuMemsetD32(b->a, 0x3f800000u, n), "cuMemsetD32") < 0 || ck(cuMemsetD32(b->b, 0, n), "cuMemsetD32") < 0 ||
	    ck(cuStreamCreate(&b->s, CU_STREAM_NON_BLOCKING), "cuStreamCreate") < 0)
		return -1;
	for (int k = 0; k < PER; k++)
		if (ck(cuEventCreate(&b->e0[k], 0), "cuEventCreate") < 0 || ck(cuEventCreate(&b->e1[k], 0), "cuEventCreate") < 0)
			return -1;
	const char *w = getenv("PTX_TIME_WAIT");
	b->wait = w ? atoi(w) : 0;
	if (b->wait > 1 && ck(cuEventCreate(&b->bare, CU_EVENT_DISABLE_TIMING), "cuEventCreate") < 0)
		return -1;
	const char *pre = getenv("PTX_TIME_PRE_US"), *post = getenv("PTX_TIME_POST_US");
	b->pre_us = pre ? atof(pre) : 0;
	b->post_us = post ? atof(post) : 0;
	const char *c = getenv("PTX_TIME_CAPCHECK");
	b->capcheck = c && atoi(c) > 0;
	const char *d = getenv("PTX_TIME_DTOH");
	b->dtoh = d ? (size_t)strtoull(d, NULL, 10) : 0;
	if (b->dtoh && (ck(cuMemAlloc(&b->dsrc, b->dtoh), "cuMemAlloc") < 0 ||
			ck(cuMemAllocHost(&b->hdst, b->dtoh), "cuMemAllocHost") < 0 ||
			ck(cuStreamCreate(&b->s2, CU_STREAM_NON_BLOCKING), "cuStreamCreate") < 0))
		return -1;
	/* k_fill(int *out, int v, int n); k_copy/k_reduce(in, out, int n); then the map */
	b->v = 7;
	b->n = b->sh->n;
	b->args[0] = &b->a;
	b->args[1] = strcmp(b->sh->kind, "fill") == 0 ? (void *)&b->v : (void *)&b->b;
	b->args[2] = &b->n;
	b->args[3] = &b->map; /* a kernel without a map parameter reads 3 */
	return 0;
}

int main(int argc, char **argv)
{
	const char *check = NULL;
	int first = 1;
	if (argc > 2 && strcmp(argv[1], "--check-blocks") == 0) {
		check = argv[2];
		first = 3;
	}
	if (argc - first < 3 || argc - first - 2 > MAX_VARIANTS) {
		fprintf(stderr, "usage: ptx_time [--check-blocks PTX] fill|copy|reduce KERNEL PTX... (at most %d)\n",
			MAX_VARIANTS);
		return 2;
	}
	struct bench b;
	memset(&b, 0, sizeof b);
	for (size_t i = 0; i < sizeof SHAPES / sizeof SHAPES[0]; i++)
		if (strcmp(argv[first], SHAPES[i].kind) == 0)
			b.sh = &SHAPES[i];
	if (!b.sh) {
		fprintf(stderr, "ptx_time: kind %s is none of fill, copy, reduce\n", argv[first]);
		return 2;
	}
	const char *kernel = argv[first + 1];
	char **ptx = argv + first + 2;
	b.n_fn = argc - first - 2;
	CUdevice d;
	CUcontext c;
	if (ck(cuInit(0), "cuInit") < 0 || ck(cuDeviceGet(&d, 0), "cuDeviceGet") < 0 ||
	    ck(cuDevicePrimaryCtxRetain(&c, d), "cuDevicePrimaryCtxRetain") < 0 || ck(cuCtxSetCurrent(c), "cuCtxSetCurrent") < 0)
		return 1;
	for (int i = 0; i < b.n_fn; i++) {
		CUmodule m;
		char *text = slurp(ptx[i]);
		if (!text || ck(cuModuleLoadData(&m, text), ptx[i]) < 0 || ck(cuModuleGetFunction(&b.fn[i], m, kernel), kernel) < 0)
			return 1;
		free(text);
	}
	if (setup(&b) < 0)
		return 1;
	for (int i = 0; check && i < b.n_fn; i++)
		if (strcmp(ptx[i], check) == 0 && check_blocks(&b, i, ptx[i]) < 0)
			return 1;
	float med[ROUNDS][MAX_VARIANTS];
	uint64_t calls[MAX_VARIANTS][ROUNDS];
	for (int r = 0; r < ROUNDS; r++)
		for (int i = 0; i < b.n_fn; i++)
			if (round_median(&b, i, &med[r][i], &calls[i][r]) < 0)
				return 1;
	for (int i = 0; i < b.n_fn; i++) {
		float m[ROUNDS];
		for (int r = 0; r < ROUNDS; r++)
			m[r] = med[r][i];
		qsort(m, ROUNDS, sizeof *m, cmp_float);
		qsort(calls[i], ROUNDS, sizeof calls[i][0], cmp_u64);
		printf("variant %s median_us=%.2f min_us=%.2f max_us=%.2f call_ns=%llu\n", ptx[i], m[ROUNDS / 2], m[0],
		       m[ROUNDS - 1], (unsigned long long)calls[i][ROUNDS / 2]);
	}
	return 0;
}
