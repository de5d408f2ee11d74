/* Does a host allocation on one thread hold up another thread's kernel
 * launches? The question behind the hook's staging (doc/performance.md,
 * "The first probed launch"): its collector allocates pinned memory for
 * large results while the app launches.
 *
 * One thread launches an empty kernel every 20 us and times each
 * cuLaunchKernel call on the CPU; the main thread, after a quiet 30 ms,
 * does one operation of SIZE bytes, then waits 30 ms more. Per operation
 * and size: how long the operation took, and the slowest launch call during
 * the quiet time before it and while it ran.
 *
 *   pinned_stall [MiB...]     default 1 4 16 64 128
 *   PINNED_STALL_OPS="op ..."  only those operations
 *
 * Operations: cuMemAllocHost, cuMemFreeHost, cuMemHostRegister of memory
 * already touched, cuMemcpyDtoH into such memory (not pinned), cuMemAlloc,
 * cuMemcpyDtoHAsync into pinned memory (waited for), the same into two
 * registrations side by side (also prints a "copy" line: how long the call
 * took, and whether the bytes arrived), and malloc + memset (no driver
 * call: the control), mmap with MAP_POPULATE and mmap in huge pages
 * (MADV_HUGEPAGE, then MADV_POPULATE_WRITE), and cuMemHostRegister of such
 * huge-page memory. "launches" counts the
 * launch calls that overlapped the operation (one every 20 us when nothing
 * holds them). Prints
 * "op=<op> mib=<n> op_ms=<x> launch_max_us=<y> quiet_max_us=<z> launches=<n>"
 * per operation and size. Exit status 0, 1 on a CUDA error, 2 on usage. */
#define _POSIX_C_SOURCE 200809L
#include <cuda.h>
#include <pthread.h>
#include <sys/mman.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#define BENCH_NAME "pinned_stall"
#include "bench_ck.h"

static const char PTX[] = ".version 7.0\n.target sm_50\n.address_size 64\n"
			  ".visible .entry nop() { ret; }\n";

struct launcher {
	CUcontext ctx;
	CUfunction fn;
	CUstream s;
	atomic_int stop;
	atomic_int window;   /* 0 quiet, 1 during the operation, 2 after */
	double max_us[3];
	long n[3];
	int failed;
};

static double now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void *launch_loop(void *arg)
{
	struct launcher *l = arg;
	if (ck(cuCtxSetCurrent(l->ctx), "cuCtxSetCurrent")) {
		l->failed = 1;
		return NULL;
	}
	while (!atomic_load(&l->stop)) {
		int w = atomic_load(&l->window);
		double t0 = now_us();
		if (ck(cuLaunchKernel(l->fn, 1, 1, 1, 32, 1, 1, 0, l->s, NULL, NULL), "cuLaunchKernel")) {
			l->failed = 1;
			return NULL;
		}
		double dt = now_us() - t0;
		/* a launch that overlapped the operation at all counts for it */
		int w2 = atomic_load(&l->window);
		w = w <= 1 && w2 >= 1 ? 1 : w;
		if (dt > l->max_us[w])
			l->max_us[w] = dt;
		l->n[w]++;
		double until = t0 + 20;
		while (now_us() < until)
			;
	}
	return NULL;
}

static void sleep_ms(int ms)
{
	struct timespec t = { ms / 1000, (long)(ms % 1000) * 1000000 };
	nanosleep(&t, NULL);
}

struct result {
	double op_ms, launch_max, quiet_max;
	long launches;
};

/* What an operation needs ready before it (not timed) and gives back
 * after it. */
struct opmem {
	void *host;
	CUdeviceptr dev;
	CUstream s;
	size_t bytes2;          /* where the second registration starts */
	size_t mapped;          /* host came from mmap: its length */
	int pinned, registered; /* registered: how many pieces */
};

/* Anonymous memory faulted in by the kernel: with MAP_POPULATE, or asked
 * for in huge pages first (MADV_HUGEPAGE) and then populated. */
static void *map_populated(size_t bytes, int huge)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | (huge ? 0 : MAP_POPULATE),
		       -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (huge) {
		madvise(p, bytes, MADV_HUGEPAGE);
		if (madvise(p, bytes, MADV_POPULATE_WRITE) != 0)
			memset(p, 0, bytes);
	}
	return p;
}

static int op_setup(const char *op, size_t bytes, struct opmem *m)
{
	if (!strcmp(op, "free_host")) {
		m->pinned = !ck(cuMemAllocHost(&m->host, bytes), "cuMemAllocHost");
		return m->pinned ? 0 : -1;
	}
	if (!strcmp(op, "dtoh_pinned")) {
		m->pinned = !ck(cuMemAllocHost(&m->host, bytes), "cuMemAllocHost");
		if (!m->pinned)
			return -1;
	} else if (!strcmp(op, "register_thp")) {
		m->host = map_populated(bytes, 1);
		if (!m->host)
			return -1;
		m->mapped = bytes;
	} else if (strcmp(op, "malloc") && strcmp(op, "alloc_host") && strcmp(op, "mem_alloc") &&
		   strncmp(op, "mmap_", 5)) {
		m->host = malloc(bytes);
		if (!m->host)
			return -1;
		memset(m->host, 1, bytes);
	}
	if (!strcmp(op, "dtoh_span")) { /* two registrations side by side */
		if (ck(cuMemHostRegister(m->host, bytes / 2, 0), "cuMemHostRegister"))
			return -1;
		m->registered = 1;
		m->bytes2 = bytes / 2;
		if (ck(cuMemHostRegister((char *)m->host + bytes / 2, bytes - bytes / 2, 0), "cuMemHostRegister"))
			return -1;
		m->registered = 2;
	}
	if (!strncmp(op, "dtoh_", 5) &&
	    (ck(cuMemAlloc(&m->dev, bytes), "cuMemAlloc") || ck(cuMemsetD8(m->dev, 0x5a, bytes), "cuMemsetD8") ||
	     ck(cuStreamCreate(&m->s, CU_STREAM_NON_BLOCKING), "cuStreamCreate") || ck(cuCtxSynchronize(), "sync")))
		return -1;
	return 0;
}

/* An async copy into pinned memory, waited for; "dtoh_span": into two
 * registrations side by side (does the driver take it as pinned: how long
 * the call itself takes, and are the bytes right). */
static int op_dtoh_async(const char *op, size_t bytes, struct opmem *m)
{
	double t0 = now_us();
	CUresult rc = cuMemcpyDtoHAsync(m->host, m->dev, bytes, m->s);
	double t1 = now_us();
	if (rc != CUDA_SUCCESS && !strcmp(op, "dtoh_span")) { /* an answer, not a failure */
		printf("copy op=%s mib=%zu refused (CUDA error %d)\n", op, bytes >> 20, (int)rc);
		return 0;
	}
	if (ck(rc, "cuMemcpyDtoHAsync") || ck(cuStreamSynchronize(m->s), "cuStreamSynchronize"))
		return -1;
	double t2 = now_us();
	size_t bad = 0;
	for (size_t i = 0; i < bytes; i++)
		bad += ((unsigned char *)m->host)[i] != 0x5a;
	printf("copy op=%s mib=%zu call_ms=%.3f done_ms=%.3f wrong_bytes=%zu\n", op, bytes >> 20, (t1 - t0) / 1e3,
	       (t2 - t0) / 1e3, bad);
	return bad ? -1 : 0;
}

static int op_run(const char *op, size_t bytes, struct opmem *m)
{
	if (!strcmp(op, "alloc_host")) {
		m->pinned = !ck(cuMemAllocHost(&m->host, bytes), "cuMemAllocHost");
		return m->pinned ? 0 : -1;
	}
	if (!strcmp(op, "free_host")) {
		m->pinned = 0;
		CUresult rc = cuMemFreeHost(m->host);
		m->host = NULL;
		return ck(rc, "cuMemFreeHost");
	}
	if (!strncmp(op, "mmap_", 5)) {
		m->host = map_populated(bytes, !strcmp(op, "mmap_thp"));
		m->mapped = m->host ? bytes : 0;
		return m->host ? 0 : -1;
	}
	if (!strcmp(op, "host_register") || !strcmp(op, "register_thp")) {
		m->registered = !ck(cuMemHostRegister(m->host, bytes, 0), "cuMemHostRegister");
		return m->registered ? 0 : -1;
	}
	if (!strcmp(op, "dtoh_pageable"))
		return ck(cuMemcpyDtoH(m->host, m->dev, bytes), "cuMemcpyDtoH");
	if (!strcmp(op, "dtoh_pinned") || !strcmp(op, "dtoh_span"))
		return op_dtoh_async(op, bytes, m);
	if (!strcmp(op, "mem_alloc"))
		return ck(cuMemAlloc(&m->dev, bytes), "cuMemAlloc");
	m->host = malloc(bytes); /* malloc: the control, no driver call */
	if (!m->host)
		return -1;
	memset(m->host, 1, bytes);
	return 0;
}

static void op_teardown(struct opmem *m)
{
	if (m->registered)
		cuMemHostUnregister(m->host);
	if (m->registered > 1)
		cuMemHostUnregister((char *)m->host + m->bytes2);
	if (m->s)
		cuStreamDestroy(m->s);
	if (m->pinned)
		cuMemFreeHost(m->host);
	else if (m->mapped)
		munmap(m->host, m->mapped);
	else
		free(m->host);
	if (m->dev)
		cuMemFree(m->dev);
}

/* Runs op on `bytes` between two quiet spells while the launcher runs. */
static int measure(CUcontext ctx, CUfunction fn, const char *op, size_t bytes, struct result *out)
{
	struct launcher l = { .ctx = ctx, .fn = fn };
	struct opmem m = { 0 };
	if (ck(cuStreamCreate(&l.s, CU_STREAM_NON_BLOCKING), "cuStreamCreate"))
		return -1;
	if (op_setup(op, bytes, &m) < 0) {
		op_teardown(&m);
		return -1;
	}
	pthread_t t;
	pthread_create(&t, NULL, launch_loop, &l);
	sleep_ms(30);
	atomic_store(&l.window, 1);
	double t0 = now_us();
	int bad = op_run(op, bytes, &m);
	double op_us = now_us() - t0;
	atomic_store(&l.window, 2);
	sleep_ms(30);
	atomic_store(&l.stop, 1);
	pthread_join(t, NULL);
	cuStreamSynchronize(l.s);
	cuStreamDestroy(l.s);
	op_teardown(&m);
	if (bad || l.failed)
		return -1;
	out->op_ms = op_us / 1e3;
	out->launch_max = l.max_us[1];
	out->quiet_max = l.max_us[0];
	out->launches = l.n[1];
	return 0;
}

/* PINNED_STALL_OPS="op op ...": only those (default all). */
static int op_wanted(const char *op)
{
	const char *want = getenv("PINNED_STALL_OPS");
	if (!want || !*want)
		return 1;
	size_t n = strlen(op);
	for (const char *p = strstr(want, op); p; p = strstr(p + 1, op))
		if ((p == want || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0))
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const OPS[] = { "malloc", "alloc_host", "free_host", "host_register", "dtoh_pageable",
					   "mem_alloc", "dtoh_pinned", "dtoh_span", "mmap_populate",
					   "mmap_thp", "register_thp" };
	int sizes[16] = { 1, 4, 16, 64, 128 }, nsizes = 5;
	if (argc > 1) {
		nsizes = 0;
		for (int i = 1; i < argc && nsizes < 16; i++) {
			sizes[nsizes] = atoi(argv[i]);
			if (sizes[nsizes++] <= 0) {
				fprintf(stderr, "usage: pinned_stall [MiB...]\n");
				return 2;
			}
		}
	}
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction fn;
	if (ck(cuInit(0), "cuInit") || ck(cuDeviceGet(&dev, 0), "cuDeviceGet") ||
	    ck(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain") ||
	    ck(cuCtxSetCurrent(ctx), "cuCtxSetCurrent") || ck(cuModuleLoadData(&mod, PTX), "cuModuleLoadData") ||
	    ck(cuModuleGetFunction(&fn, mod, "nop"), "cuModuleGetFunction"))
		return 1;
	for (int i = 0; i < nsizes; i++)
		for (size_t o = 0; o < sizeof OPS / sizeof *OPS; o++) {
			if (!op_wanted(OPS[o]))
				continue;
			struct result r;
			if (measure(ctx, fn, OPS[o], (size_t)sizes[i] << 20, &r))
				return 1;
			printf("op=%s mib=%d op_ms=%.2f launch_max_us=%.1f quiet_max_us=%.1f launches=%ld\n", OPS[o],
			       sizes[i], r.op_ms, r.launch_max, r.quiet_max, r.launches);
			fflush(stdout);
		}
	return 0;
}
