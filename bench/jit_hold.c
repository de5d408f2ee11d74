/* Which driver calls does one thread wait on while another thread's driver
 * JIT compiles PTX? The question behind the hook's builder thread: it JITs
 * a probed copy while the app keeps launching, and a kernel's first launch
 * during the build was seen to wait 15-30 ms (bench/app_cost.sh, `w`).
 *
 * For each call and each way to JIT, a thread starts compiling a large
 * generated kernel (a fresh one each time, CUDA_CACHE_DISABLE=1); 10 ms in,
 * the main thread makes the call once and times it. Ways to JIT:
 *   load   cuModuleLoadDataEx of the PTX (what the builder does)
 *   link   cuLinkCreate/cuLinkAddData/cuLinkComplete (a cubin back), then
 *          cuModuleLoadData of that cubin
 * Calls: launch (cuLaunchKernel of an empty kernel), occupancy
 * (cuOccupancyMaxActiveBlocksPerMultiprocessor, a new block size each time),
 * func_attr (cuFuncGetAttribute), is_capturing (cuStreamIsCapturing),
 * ctx_current (cuCtxGetCurrent), event_record (cuEventRecord), stream_query
 * (cuStreamQuery), mem_alloc (cuMemAlloc + cuMemFree of 4 KiB), get_function
 * (cuModuleGetFunction), load_cubin (cuModuleLoadData of a small cubin).
 *
 * Prints per pair "jit=<way> call=<name> idle_us=<x> during_us=<y>
 * jit_ms=<z> left_ms=<how much of the JIT was left when the call began>
 * held=<yes|no>" (yes: the call returned only once the JIT was done, or
 * within 1 ms of it, and took over 1 ms).
 *   jit_hold [statements]      default 30000 (the generated kernel's size)
 * Exit status 0, 1 on a CUDA error, 2 on usage. */
#define _POSIX_C_SOURCE 200809L
#include <cuda.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#define BENCH_NAME "jit_hold"
#include "bench_ck.h"

static const char NOP_PTX[] = ".version 7.0\n.target sm_50\n.address_size 64\n"
			      ".visible .entry nop() { ret; }\n";

enum call { C_LAUNCH, C_OCC, C_ATTR, C_CAPT, C_CTX, C_EVENT, C_QUERY, C_ALLOC, C_GETFN, C_CUBIN, C_N };
static const char *const CALLS[C_N] = { "launch",	"occupancy",	"func_attr",	"is_capturing", "ctx_current",
					"event_record", "stream_query", "mem_alloc", "get_function", "load_cubin" };

struct fixture {
	CUcontext ctx;
	CUmodule mod;
	CUfunction nop;
	CUstream s;
	CUevent ev;
	void *cubin; /* nop, linked once: what load_cubin loads */
	int occ_bs;
};

struct jit {
	CUcontext ctx;
	const char *ptx;
	int link;
	atomic_int started;
	double t_end; /* ms, when the compile returned */
	CUresult rc;
};

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void nap_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&t, NULL);
}

/* A kernel of `n` dependent FMAs over 64 live registers, stored every 64:
 * enough straight-line work that ptxas takes a while. `salt` makes each one
 * new to the driver. */
static char *big_ptx(int n, int salt)
{
	size_t cap = (size_t)n * 64 + 8192;
	char *p = malloc(cap);
	if (!p)
		return NULL;
	size_t o = (size_t)snprintf(p, cap,
				    ".version 7.0\n.target sm_50\n.address_size 64\n"
				    ".visible .entry big(.param .u64 a) {\n"
				    ".reg .f32 %%f<64>;\n.reg .u64 %%rd<4>;\n.reg .u32 %%r<4>;\n"
				    "ld.param.u64 %%rd1, [a];\ncvta.to.global.u64 %%rd1, %%rd1;\n"
				    "mov.u32 %%r1, %%tid.x;\nmul.wide.u32 %%rd2, %%r1, 4;\nadd.u64 %%rd1, %%rd1, %%rd2;\n"
				    "mov.u32 %%r2, %d;\nst.global.u32 [%%rd1], %%r2;\n",
				    salt);
	for (int i = 0; i < 64; i++)
		o += (size_t)snprintf(p + o, cap - o, "ld.global.f32 %%f%d, [%%rd1+%d];\n", i, 4096 * (i + 1));
	for (int i = 0; i < n; i++) {
		o += (size_t)snprintf(p + o, cap - o, "fma.rn.f32 %%f%d, %%f%d, %%f%d, %%f%d;\n", i % 64, (i * 7 + 3) % 64,
				      (i * 13 + 5) % 64, i % 64);
		if (i % 64 == 63)
			o += (size_t)snprintf(p + o, cap - o, "st.global.f32 [%%rd1+%d], %%f%d;\n", 4096 * (i % 61 + 1),
					      (i * 5) % 64);
	}
	snprintf(p + o, cap - o, "ret;\n}\n");
	return p;
}

static CUresult jit_link(const char *ptx, CUmodule *m, double *t_end)
{
	CUlinkState ls;
	void *cubin;
	size_t size;
	CUresult rc = cuLinkCreate(0, NULL, NULL, &ls);
	if (rc != CUDA_SUCCESS)
		return rc;
	rc = cuLinkAddData(ls, CU_JIT_INPUT_PTX, (void *)ptx, strlen(ptx) + 1, "big", 0, NULL, NULL);
	if (rc == CUDA_SUCCESS)
		rc = cuLinkComplete(ls, &cubin, &size);
	*t_end = now_ms();
	if (rc == CUDA_SUCCESS)
		rc = cuModuleLoadData(m, cubin);
	cuLinkDestroy(ls);
	return rc;
}

static void *jit_main(void *arg)
{
	struct jit *j = arg;
	CUmodule m = NULL;
	cuCtxSetCurrent(j->ctx);
	atomic_store(&j->started, 1);
	if (j->link) {
		j->rc = jit_link(j->ptx, &m, &j->t_end);
	} else {
		j->rc = cuModuleLoadDataEx(&m, j->ptx, 0, NULL, NULL);
		j->t_end = now_ms();
	}
	if (m)
		cuModuleUnload(m);
	return NULL;
}

/* One call of c; its time in ms, or -1 when it failed. */
static double call_once(struct fixture *f, enum call c)
{
	CUstreamCaptureStatus st;
	CUcontext ctx;
	CUdeviceptr d;
	CUfunction fn;
	CUmodule m;
	int v;
	CUresult rc = CUDA_SUCCESS;
	double t0 = now_ms();
	switch (c) {
	case C_LAUNCH: rc = cuLaunchKernel(f->nop, 1, 1, 1, 32, 1, 1, 0, f->s, NULL, NULL); break;
	case C_OCC:
		f->occ_bs = f->occ_bs % 1024 + 32;
		rc = cuOccupancyMaxActiveBlocksPerMultiprocessor(&v, f->nop, f->occ_bs, 0);
		break;
	case C_ATTR: rc = cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, f->nop); break;
	case C_CAPT: rc = cuStreamIsCapturing(f->s, &st); break;
	case C_CTX: rc = cuCtxGetCurrent(&ctx); break;
	case C_EVENT: rc = cuEventRecord(f->ev, f->s); break;
	case C_QUERY:
		rc = cuStreamQuery(f->s);
		if (rc == CUDA_ERROR_NOT_READY)
			rc = CUDA_SUCCESS;
		break;
	case C_ALLOC:
		rc = cuMemAlloc(&d, 4096);
		if (rc == CUDA_SUCCESS)
			rc = cuMemFree(d);
		break;
	case C_GETFN: rc = cuModuleGetFunction(&fn, f->mod, "nop"); break;
	case C_CUBIN:
		rc = cuModuleLoadData(&m, f->cubin);
		if (rc == CUDA_SUCCESS)
			rc = cuModuleUnload(m);
		break;
	default: break;
	}
	double t1 = now_ms();
	return ck(rc, CALLS[c]) < 0 ? -1 : t1 - t0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double idle_ms(struct fixture *f, enum call c)
{
	double v[7];
	for (int i = 0; i < 7; i++)
		if ((v[i] = call_once(f, c)) < 0)
			return -1;
	qsort(v, 7, sizeof *v, cmp_double);
	return v[3];
}

static int fixture_open(struct fixture *f)
{
	CUdevice dev;
	CUlinkState ls;
	void *cubin;
	size_t size;
	if (ck(cuInit(0), "cuInit") || ck(cuDeviceGet(&dev, 0), "cuDeviceGet") ||
	    ck(cuDevicePrimaryCtxRetain(&f->ctx, dev), "cuDevicePrimaryCtxRetain") ||
	    ck(cuCtxSetCurrent(f->ctx), "cuCtxSetCurrent") ||
	    ck(cuModuleLoadData(&f->mod, NOP_PTX), "cuModuleLoadData nop") ||
	    ck(cuModuleGetFunction(&f->nop, f->mod, "nop"), "cuModuleGetFunction") ||
	    ck(cuStreamCreate(&f->s, CU_STREAM_NON_BLOCKING), "cuStreamCreate") ||
	    ck(cuEventCreate(&f->ev, CU_EVENT_DISABLE_TIMING), "cuEventCreate") ||
	    ck(cuLinkCreate(0, NULL, NULL, &ls), "cuLinkCreate"))
		return -1;
	int bad = ck(cuLinkAddData(ls, CU_JIT_INPUT_PTX, (void *)NOP_PTX, sizeof NOP_PTX, "nop", 0, NULL, NULL),
		     "cuLinkAddData nop") ||
		  ck(cuLinkComplete(ls, &cubin, &size), "cuLinkComplete nop") || !(f->cubin = malloc(size));
	if (!bad)
		memcpy(f->cubin, cubin, size);
	cuLinkDestroy(ls);
	return bad ? -1 : 0;
}

/* One JIT of a fresh kernel with call c made 10 ms into it; a line. */
static int measure(struct fixture *f, enum call c, int link, int stmts, int salt)
{
	double idle = idle_ms(f, c);
	char *ptx = big_ptx(stmts, salt);
	if (idle < 0 || !ptx) {
		free(ptx);
		return -1;
	}
	struct jit j = { .ctx = f->ctx, .ptx = ptx, .link = link };
	pthread_t th;
	double t_start = now_ms();
	if (pthread_create(&th, NULL, jit_main, &j) != 0) {
		free(ptx);
		return -1;
	}
	while (!atomic_load(&j.started))
		nap_ms(1);
	nap_ms(10);
	double t_call = now_ms();
	double during = call_once(f, c);
	pthread_join(th, NULL);
	free(ptx);
	if (during < 0 || ck(j.rc, link ? "link the big kernel" : "load the big kernel") < 0)
		return -1;
	double left = j.t_end - t_call;
	int held = during > 1.0 && t_call + during >= j.t_end - 1.0;
	printf("jit=%s call=%s idle_us=%.1f during_us=%.1f jit_ms=%.1f left_ms=%.1f held=%s\n", link ? "link" : "load",
	       CALLS[c], idle * 1e3, during * 1e3, j.t_end - t_start, left, held ? "yes" : "no");
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	int stmts = argc > 1 ? atoi(argv[1]) : 30000;
	if (argc > 2 || stmts < 64 || stmts > 2000000) {
		fprintf(stderr, "usage: jit_hold [statements]   (64 to 2000000)\n");
		return 2;
	}
	setenv("CUDA_CACHE_DISABLE", "1", 1);
	struct fixture f = { 0 };
	if (fixture_open(&f) < 0)
		return 1;
	int salt = 1;
	for (int link = 0; link < 2; link++)
		for (int c = 0; c < C_N; c++)
			if (measure(&f, (enum call)c, link, stmts, salt++) < 0)
				return 1;
	cuStreamSynchronize(f.s);
	free(f.cubin);
	cuEventDestroy(f.ev);
	cuStreamDestroy(f.s);
	cuModuleUnload(f.mod);
	return 0;
}
