/* Test application shaped like the CUDA samples' vectorAddDrv (driver API
 * only): per round, get a context, load the kernels, allocate three
 * buffers, copy two in, launch, copy the result back, free the three
 * buffers and tear the context down; then the next round in a new context
 * (the fake hands it out at the same address); then free the host memory
 * and exit. The launches are timed by the hook (its first launches always
 * are), and probed under -p. Prints one line; exit 0 when every driver
 * call succeeded (regress/hook_teardown.sh).
 * Usage: app_drv KERNELS.ptx MODE ROUNDS LAUNCHES
 *   MODE create:  cuCtxCreate ... cuCtxDestroy
 *        primary: cuDevicePrimaryCtxRetain ... cuDevicePrimaryCtxRelease
 *        reset:   cuDevicePrimaryCtxRetain ... cuDevicePrimaryCtxReset,
 *                 then the release
 * APP_DRV_SMEM=BYTES: launch with that much dynamic shared memory, after
 * cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES) (more than 48 KB needs it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda.h>
#include "app_util.h"

#define N 4096

static void round_once(const char *ptx, const char *mode, CUdevice dev, int launches, float *h_a, float *h_b,
		       float *h_c)
{
	CUcontext ctx = NULL;
	CUmodule mod;
	CUfunction fill;
	CUdeviceptr d_a, d_b, d_c;
	int primary = strcmp(mode, "create") != 0;
	if (primary) {
		CK(cuDevicePrimaryCtxRetain(&ctx, dev));
		CK(cuCtxSetCurrent(ctx));
	} else {
		CK(cuCtxCreate(&ctx, NULL, 0, dev));
	}
	CK(cuModuleLoadData(&mod, ptx));
	CK(cuModuleGetFunction(&fill, mod, "fill"));
	unsigned smem = getenv("APP_DRV_SMEM") ? (unsigned)atoi(getenv("APP_DRV_SMEM")) : 0;
	if (smem)
		CK(cuFuncSetAttribute(fill, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)smem));
	CK(cuMemAlloc(&d_a, N * sizeof(float)));
	CK(cuMemAlloc(&d_b, N * sizeof(float)));
	CK(cuMemAlloc(&d_c, N * sizeof(float)));
	CK(cuMemcpyHtoD(d_a, h_a, N * sizeof(float)));
	CK(cuMemcpyHtoD(d_b, h_b, N * sizeof(float)));
	unsigned n = N;
	void *params[] = { &d_c, &n };
	for (int i = 0; i < launches; i++)
		CK(cuLaunchKernel(fill, N / 256, 1, 1, 256, 1, 1, smem, 0, params, NULL));
	CK(cuMemcpyDtoH(h_c, d_c, N * sizeof(float)));
	CK(cuMemFree(d_a));
	CK(cuMemFree(d_b));
	CK(cuMemFree(d_c));
	/* no synchronisation: whatever the hook has in flight is its business */
	if (!primary) {
		CK(cuCtxDestroy(ctx));
	} else {
		if (strcmp(mode, "reset") == 0)
			CK(cuDevicePrimaryCtxReset(dev));
		CK(cuCtxSetCurrent(NULL));
		CK(cuDevicePrimaryCtxRelease(dev));
	}
}

int main(int argc, char **argv)
{
	if (argc < 5)
		return 2;
	char *ptx = slurp(argv[1]);
	const char *mode = argv[2];
	int rounds = atoi(argv[3]), launches = atoi(argv[4]);
	if (!ptx || (strcmp(mode, "create") && strcmp(mode, "primary") && strcmp(mode, "reset")))
		return 2;
	float *h_a = malloc(N * sizeof(float)), *h_b = malloc(N * sizeof(float)), *h_c = malloc(N * sizeof(float));
	if (!h_a || !h_b || !h_c)
		return 2;
	for (int i = 0; i < N; i++)
		h_a[i] = (float)i, h_b[i] = 2.0f * (float)i;
	CUdevice dev;
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	for (int r = 0; r < rounds; r++)
		round_once(ptx, mode, dev, launches, h_a, h_b, h_c);
	/* Like the sample: host memory is freed after the context is gone
	 * (where the glibc heap check fired). */
	free(h_a);
	free(h_b);
	free(h_c);
	free(ptx);
	printf("app_drv: %s done, %d failures\n", mode, failures);
	return failures ? 1 : 0;
}
