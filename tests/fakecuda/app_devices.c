/* Two devices in one process (FAKECUDA_DEVICES=2): each device's primary
 * context made current in turn, the kernels' module loaded in each (a
 * CUfunction per device), and a library kernel (one CUkernel for both, as
 * the CUDA 12+ runtime launches) run on both. Per round: fill with grid 4
 * on device 0 and grid 8 on device 1, and the library's scale with grid 2
 * on device 0 and grid 6 on device 1.
 *
 *   app_devices KERNELS.ptx ROUNDS */
#include "app_util.h"

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s KERNELS.ptx ROUNDS\n", argv[0]);
		return 2;
	}
	char *ptx = slurp(argv[1]);
	int rounds = atoi(argv[2]), n = 0;
	CK(cuInit(0));
	CK(cuDeviceGetCount(&n));
	if (n < 2 || !ptx) {
		printf("FAIL: %d device(s), want 2; kernels %s\n", n, ptx ? "read" : "unreadable");
		free(ptx);
		return 1;
	}
	CUcontext ctx[2];
	CUfunction fill[2];
	CUdeviceptr buf[2];
	for (int d = 0; d < 2; d++) {
		CUmodule m;
		CK(cuDevicePrimaryCtxRetain(&ctx[d], d));
		CK(cuCtxSetCurrent(ctx[d]));
		CK(cuModuleLoadData(&m, ptx));
		CK(cuModuleGetFunction(&fill[d], m, "fill"));
		CK(cuMemAlloc(&buf[d], 1 << 16));
	}
	CUlibrary lib;
	CUkernel scale;
	CK(cuLibraryLoadData(&lib, ptx, NULL, NULL, 0, NULL, NULL, 0));
	CK(cuLibraryGetKernel(&scale, lib, "scale"));
	int elems = 1 << 14;
	float two = 2.0f;
	for (int r = 0; r < rounds; r++)
		for (int d = 0; d < 2; d++) {
			void *fp[] = { &buf[d], &elems };
			void *sp[] = { &buf[d], &two };
			CK(cuCtxSetCurrent(ctx[d]));
			CK(cuLaunchKernel(fill[d], d ? 8 : 4, 1, 1, 64, 1, 1, 0, NULL, fp, NULL));
			CK(cuLaunchKernel((CUfunction)scale, d ? 6 : 2, 1, 1, 32, 1, 1, 0, NULL, sp, NULL));
		}
	for (int d = 0; d < 2; d++) {
		CK(cuCtxSetCurrent(ctx[d]));
		CK(cuCtxSynchronize());
	}
	free(ptx);
	printf("app_devices: %d rounds on 2 devices, %d failures\n", rounds, failures);
	return failures ? 1 : 0;
}
