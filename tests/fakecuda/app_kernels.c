/* Several kernels probed one after another, as a model's layers are:
 * loads the kernels' PTX K times (K modules, so K kernels named `scale`),
 * then launches each module's `scale` N times on a grid of BLOCKS blocks
 * of 1024 threads, waiting for each launch, before moving to the next
 * module. With block_sched each launch's maps are 24 bytes a warp (BLOCKS
 * 512: 384 KiB; 16384: 12 MiB), so a few large kernels fill the hook's
 * budget for jobs made ahead. A 5 ms pause after each launch, in which
 * the hook's threads make the next job, on a loaded machine too (app_loop
 * pauses 2 ms; these jobs are larger); APP_KERNELS_GAP_MS: one before each
 * module's first launch (default 0), so the kernels before it are idle
 * that long. Prints one line and exits 0 when every driver call
 * succeeded.
 * Usage: app_kernels KERNELS.ptx K N BLOCKS */
#include <time.h>
#include "app_util.h"

#define MODULES_MAX 16
#define LAUNCH_PAUSE_MS 5

static void pause_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000l };
	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	if (argc < 5)
		return 2;
	char *ptx = slurp(argv[1]);
	int k = atoi(argv[2]);
	long n = atol(argv[3]);
	unsigned blocks = (unsigned)atoi(argv[4]);
	if (!ptx || k < 1 || k > MODULES_MAX || n < 1 || blocks < 1)
		return 2;
	CUdevice dev;
	CUcontext ctx;
	CUstream s;
	CUdeviceptr buf = 0;
	CUmodule mod[MODULES_MAX];
	CUfunction f[MODULES_MAX];
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	CK(cuStreamCreate(&s, 0));
	CK(cuMemAlloc(&buf, (size_t)blocks * 1024 * sizeof(float)));
	for (int m = 0; m < k; m++) {
		CK(cuModuleLoadData(&mod[m], ptx));
		CK(cuModuleGetFunction(&f[m], mod[m], "scale"));
	}
	float two = 2.0f;
	void *params[] = { &buf, &two };
	const char *gap = getenv("APP_KERNELS_GAP_MS");
	long gap_ms = gap ? atol(gap) : 0;
	for (int m = 0; m < k && !failures; m++) {
		if (gap_ms > 0)
			pause_ms(gap_ms);
		for (long i = 0; i < n; i++) {
			CK(cuLaunchKernel(f[m], blocks, 1, 1, 1024, 1, 1, 0, s, params, NULL));
			CK(cuStreamSynchronize(s));
			pause_ms(LAUNCH_PAUSE_MS);
		}
	}
	printf("app_kernels modules=%d launches=%ld failures=%d\n", k, n, failures);
	free(ptx);
	return failures ? 1 : 0;
}
