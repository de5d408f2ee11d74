/* Test application for -rdc builds: loads the SASS-only fatbin it embeds
 * in .nv_fatbin (as the CUDA runtime does with an -rdc program's linked
 * image) and launches rdc_scale and rdc_cross (which calls a device
 * function of the other translation unit) LAUNCHES times each; the PTX
 * sits in the executable's __nv_relfatbin (app_rdc_images.S), where the
 * hook finds it.
 * With "heap", a copy on the heap is loaded instead (no ELF around it).
 * Prints a fixed summary. Usage: app_rdc LAUNCHES [heap] */
#include <string.h>
#include "app_util.h"

extern const unsigned char rdc_linked[], rdc_linked_end[];

int main(int argc, char **argv)
{
	int launches = argc > 1 ? atoi(argv[1]) : 1;
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction scale, cross;
	CUdeviceptr buf;
	float a = 2.0f;
	int n = 1024;
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuCtxCreate(&ctx, NULL, 0, dev));
	const void *image = rdc_linked;
	void *copy = NULL;
	if (argc > 2 && strcmp(argv[2], "heap") == 0) {
		size_t size = (size_t)(rdc_linked_end - rdc_linked);
		if ((copy = malloc(size)) != NULL)
			memcpy(copy, rdc_linked, size);
		image = copy;
	}
	CK(cuModuleLoadData(&mod, image));
	CK(cuModuleGetFunction(&scale, mod, "_Z9rdc_scalePffi"));
	CK(cuModuleGetFunction(&cross, mod, "_Z9rdc_crossPfi"));
	CK(cuMemAlloc(&buf, (size_t)n * sizeof(float)));
	void *params[] = { &buf, &a, &n };
	void *cparams[] = { &buf, &n };
	for (int i = 0; i < launches; i++) {
		CK(cuLaunchKernel(scale, 4, 1, 1, 256, 1, 1, 0, NULL, params, NULL));
		CK(cuLaunchKernel(cross, 8, 1, 1, 128, 1, 1, 0, NULL, cparams, NULL));
	}
	CK(cuCtxSynchronize());
	CK(cuMemFree(buf));
	CK(cuCtxDestroy(ctx));
	free(copy);
	printf("app_rdc: %d launches, %d failures\n", launches, failures);
	return failures != 0;
}
