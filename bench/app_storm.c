/* Launch-storm application for the UI benchmark (bench/ui_bench.py): loads
 * K tiny kernels (storm_k00 ..) from PTX it writes itself and launches them
 * round robin at a fixed rate for a while, paced in 1 ms ticks, so the live
 * UI has a steady stream of launches (and, with --vary, of `launch` events:
 * the grid changes every launch, so the hook writes a line for each).
 * Over the fake driver (tests/fakecuda) a launch costs well under a
 * microsecond, so the rate is what the app asks for, not what a GPU allows.
 *
 *   app_storm [--rate N|max|0] [--seconds S] [--kernels K] [--vary] [--procs P] [--stop FILE]
 *
 * --rate: launches per second (default 100000); max: back to back; 0: one
 * launch of each kernel, then idle until the time is up (the baseline).
 * --procs: P processes (ranks) forked before the driver is touched, each
 * doing all of it (the rate is each one's). Prints "app_storm:
 * launches=N seconds=S rate=R/s" at the end (the launches of all). */
#include <sys/wait.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <cuda.h>

#define STORM_MAX_KERNELS 256
#define STORM_MAX_PROCS 64
#define STORM_TICK_NS 1000000l /* pacing granularity: 1 ms */

struct storm_args {
	double rate;     /* launches/s; < 0: unthrottled; 0: idle */
	double seconds;
	int kernels;
	int vary;
	int procs;
	const char *stop;
};

static double storm_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int storm_parse(int argc, char **argv, struct storm_args *a)
{
	*a = (struct storm_args){100000, 10, 16, 0, 1, NULL};
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(argv[i], "--vary")) {
			a->vary = 1;
			continue;
		}
		if (!v)
			return -1;
		if (!strcmp(argv[i], "--rate"))
			a->rate = strcmp(v, "max") == 0 ? -1 : atof(v);
		else if (!strcmp(argv[i], "--seconds"))
			a->seconds = atof(v);
		else if (!strcmp(argv[i], "--kernels"))
			a->kernels = atoi(v);
		else if (!strcmp(argv[i], "--stop"))
			a->stop = v;
		else if (!strcmp(argv[i], "--procs"))
			a->procs = atoi(v);
		else
			return -1;
		i++;
	}
	return a->kernels >= 1 && a->kernels <= STORM_MAX_KERNELS && a->seconds > 0 && a->procs >= 1 &&
			       a->procs <= STORM_MAX_PROCS
		       ? 0
		       : -1;
}

/* K empty entries, each taking one pointer. */
static char *storm_ptx(int kernels)
{
	size_t cap = 256 + (size_t)kernels * 128, n;
	char *s = malloc(cap);
	if (!s)
		return NULL;
	n = (size_t)snprintf(s, cap, ".version 7.0\n.target sm_70\n.address_size 64\n");
	for (int k = 0; k < kernels; k++)
		n += (size_t)snprintf(s + n, cap - n, "\n.visible .entry storm_k%03d(\n\t.param .u64 p0\n)\n{\n\tret;\n}\n", k);
	return s;
}

static int storm_stopped(const struct storm_args *a, double end)
{
	struct stat st;
	return storm_now() >= end || (a->stop && stat(a->stop, &st) == 0);
}

#define CK(x)                                                                   \
	do {                                                                    \
		CUresult rc_ = (x);                                             \
		if (rc_ != CUDA_SUCCESS) {                                      \
			fprintf(stderr, "app_storm: %s -> %d\n", #x, (int)rc_); \
			return -1;                                              \
		}                                                               \
	} while (0)

static int storm_launch(CUfunction f, long i, int vary, void **params)
{
	unsigned grid = vary ? 1 + (unsigned)(i % 5) : 1;
	CK(cuLaunchKernel(f, grid, 1, 1, 32, 1, 1, 0, 0, params, NULL));
	return 0;
}

/* Launches until the time is up; returns the launch count or -1. */
static long storm_run(const struct storm_args *a, CUfunction *f, void **params)
{
	double t0 = storm_now(), end = t0 + a->seconds;
	long n = 0;
	for (int k = 0; k < a->kernels; k++, n++)
		if (storm_launch(f[k], n, a->vary, params) < 0)
			return -1;
	while (!storm_stopped(a, end)) {
		long due = a->rate < 0 ? n + 1000 : (long)((storm_now() - t0) * a->rate);
		for (; n < due; n++)
			if (storm_launch(f[n % a->kernels], n, a->vary, params) < 0)
				return -1;
		if (a->rate >= 0) {
			struct timespec ts = {0, STORM_TICK_NS};
			nanosleep(&ts, NULL);
		}
	}
	CK(cuCtxSynchronize());
	return n;
}

/* One process's storm: its launch count, or -1. */
static long storm_proc(const struct storm_args *a);

/* P - 1 children and this process storm at once; the launches of all. */
static long storm_procs(const struct storm_args *a)
{
	int fds[2];
	if (a->procs > 1 && pipe(fds) < 0)
		return -1;
	for (int p = 1; p < a->procs; p++)
		if (fork() == 0) {
			long n = storm_proc(a);
			if (write(fds[1], &n, sizeof n) != sizeof n)
				n = -1;
			exit(n < 0); /* exit handlers run: the hook's exit line and its flush */
		}
	long total = storm_proc(a), n;
	for (int p = 1; p < a->procs; p++) {
		if (read(fds[0], &n, sizeof n) != sizeof n || n < 0 || total < 0)
			total = -1;
		else
			total += n;
		wait(NULL);
	}
	return total;
}

int main(int argc, char **argv)
{
	struct storm_args a;
	if (storm_parse(argc, argv, &a) < 0) {
		fprintf(stderr, "usage: app_storm [--rate N|max|0] [--seconds S] [--kernels K] [--vary] [--procs P] [--stop FILE]\n");
		return 2;
	}
	double t0 = storm_now();
	long n = storm_procs(&a);
	double dt = storm_now() - t0;
	if (n < 0)
		return 1;
	printf("app_storm: launches=%ld seconds=%.3f rate=%.0f/s\n", n, dt, (double)n / dt);
	return 0;
}

static long storm_proc(const struct storm_args *ap)
{
	struct storm_args a = *ap;
	char *ptx = storm_ptx(a.kernels);
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction f[STORM_MAX_KERNELS];
	CUdeviceptr buf;
	if (!ptx)
		return -1;
	if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
	    cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS || cuCtxSetCurrent(ctx) != CUDA_SUCCESS ||
	    cuModuleLoadData(&mod, ptx) != CUDA_SUCCESS || cuMemAlloc(&buf, 4096) != CUDA_SUCCESS) {
		fprintf(stderr, "app_storm: driver setup failed\n");
		free(ptx);
		return -1;
	}
	for (int k = 0; k < a.kernels; k++) {
		char name[32];
		snprintf(name, sizeof name, "storm_k%03d", k);
		if (cuModuleGetFunction(&f[k], mod, name) != CUDA_SUCCESS) {
			fprintf(stderr, "app_storm: no kernel %s\n", name);
			free(ptx);
			return -1;
		}
	}
	void *params[] = {&buf};
	long n = storm_run(&a, f, params);
	free(ptx);
	return n;
}
