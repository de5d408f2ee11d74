/* Launch-overhead benchmark for the hook (real driver or fakecuda): loads a
 * PTX file, launches `scale` (1 block of 32 threads) N times back to back on
 * one stream, synchronises once, and prints the mean host time per launch.
 * APP_BENCH_PACED=1: synchronises after every launch instead, as an app
 * timing each launch does, and prints the median host time of the launch
 * call (the hook's work on a probed launch that is not hidden by a queue).
 * Usage: app_bench KERNELS.ptx N */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <cuda.h>

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *s = malloc((size_t)n + 1);
	if (s && fread(s, 1, (size_t)n, f) == (size_t)n)
		s[n] = 0;
	fclose(f);
	return s;
}

#define CK(x) do { CUresult rc_ = (x); if (rc_ != CUDA_SUCCESS) { printf("%s -> %d\n", #x, (int)rc_); return 1; } } while (0)

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static int bench_paced(CUfunction f, CUstream s, void **params, long n)
{
	double *ns = malloc((size_t)n * sizeof *ns);
	if (!ns || n < 1)
		return 2;
	for (long i = 0; i < n; i++) {
		double t0 = now_ns();
		CK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, params, NULL));
		ns[i] = now_ns() - t0;
		CK(cuStreamSynchronize(s));
	}
	qsort(ns, (size_t)n, sizeof *ns, cmp_double);
	printf("paced launches=%ld launch_ns_median=%.1f p90=%.1f\n", n, ns[n / 2], ns[n * 9 / 10]);
	free(ns);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	char *ptx = slurp(argv[1]);
	long n = atol(argv[2]);
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction f;
	CUstream s;
	CUdeviceptr buf;
	if (!ptx)
		return 2;
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	CK(cuStreamCreate(&s, 0));
	CK(cuModuleLoadData(&mod, ptx));
	CK(cuModuleGetFunction(&f, mod, "scale"));
	CK(cuMemAlloc(&buf, 1 << 20));
	float one = 1.0f;
	void *params[] = { &buf, &one };
	for (int i = 0; i < 1000; i++)
		CK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, params, NULL));
	CK(cuStreamSynchronize(s));
	const char *paced = getenv("APP_BENCH_PACED");
	if (paced && paced[0] == '1')
		return bench_paced(f, s, params, n);
	double t0 = now_ns();
	for (long i = 0; i < n; i++)
		CK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, params, NULL));
	double t1 = now_ns();
	CK(cuStreamSynchronize(s));
	double t2 = now_ns();
	printf("launches=%ld host_ns_per_launch=%.1f total_ns_per_launch=%.1f\n", n, (t1 - t0) / (double)n,
	       (t2 - t0) / (double)n);
	free(ptx);
	return 0;
}
