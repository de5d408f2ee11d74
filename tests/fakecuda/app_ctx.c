/* Test application for context teardown (regress/hook_ctx.sh): ROUNDS
 * times, create a context, load the kernels, launch `fill` LAUNCHES times
 * and destroy the context at once, probed launches and timings still in
 * flight; the fake driver hands the next context out at the same address.
 * Like the CUDA samples' vectorAddDrv, and then some. Prints one line and
 * exits 0 when every driver call succeeded.
 * Usage: app_ctx KERNELS.ptx ROUNDS LAUNCHES */
#include <stdio.h>
#include <stdlib.h>
#include <cuda.h>
#include "app_util.h"

int main(int argc, char **argv)
{
	if (argc < 4)
		return 2;
	char *ptx = slurp(argv[1]);
	int rounds = atoi(argv[2]), launches = atoi(argv[3]);
	if (!ptx)
		return 2;
	CK(cuInit(0));
	static CUdevice dev;
	CK(cuDeviceGet(&dev, 0));
	for (int r = 0; r < rounds; r++) {
		static CUcontext ctx;
		static CUmodule mod;
		static CUfunction fill;
		static CUdeviceptr buf;
		CK(cuCtxCreate(&ctx, NULL, 0, dev));
		CK(cuModuleLoadData(&mod, ptx));
		CK(cuModuleGetFunction(&fill, mod, "fill"));
		CK(cuMemAlloc(&buf, 1024 * sizeof(float)));
		unsigned n = 1024;
		void *params[] = { &buf, &n };
		for (int i = 0; i < launches; i++)
			CK(cuLaunchKernel(fill, 4, 1, 1, 64, 1, 1, 0, 0, params, NULL));
		CK(cuMemFree(buf));
		CK(cuCtxDestroy(ctx)); /* no synchronize: the hook's work is in flight */
	}
	free(ptx);
	printf("app_ctx: done, %d failures\n", failures);
	return failures ? 1 : 0;
}
