/* Test application for the JIT stand-ins: "compiles" tests/fakecuda/
 * kernels.ptx with NVRTC (nvrtc) or links it with nvJitLink (nvjitlink),
 * linked against the toolkit's libraries as real programs are (versioned
 * symbols, DT_NEEDED libnvrtc.so.N / libnvJitLink.so.N), loads the cubin
 * with cuModuleLoadData and launches `fill` LAUNCHES times. The test
 * doubles (tests/fakecuda/jit) make the cubin. Prints a fixed summary.
 * Usage: app_jit nvrtc|nvjitlink KERNELS.ptx LAUNCHES */
#define NVJITLINK_NO_INLINE
#include <nvJitLink.h>
#include <nvrtc.h>
#include <string.h>
#include "app_util.h"

/* The cubin NVRTC makes from ptx ("compiling" the fake's way). */
static void *via_nvrtc(const char *ptx)
{
	nvrtcProgram prog;
	size_t size = 0;
	char *cubin = NULL;
	if (nvrtcCreateProgram(&prog, ptx, "kernels.cu", 0, NULL, NULL) != NVRTC_SUCCESS)
		return NULL;
	const char *opts[] = { "-arch=sm_80" };
	if (nvrtcCompileProgram(prog, 1, opts) == NVRTC_SUCCESS && nvrtcGetCUBINSize(prog, &size) == NVRTC_SUCCESS &&
	    (cubin = malloc(size)) != NULL && nvrtcGetCUBIN(prog, cubin) != NVRTC_SUCCESS) {
		free(cubin);
		cubin = NULL;
	}
	nvrtcDestroyProgram(&prog);
	return cubin;
}

static void *via_nvjitlink(const char *ptx)
{
	nvJitLinkHandle h;
	const char *opts[] = { "-arch=sm_80" };
	size_t size = 0;
	void *cubin = NULL;
	if (__nvJitLinkCreate_13_0(&h, 1, opts) != NVJITLINK_SUCCESS)
		return NULL;
	if (__nvJitLinkAddData_13_0(h, NVJITLINK_INPUT_PTX, ptx, strlen(ptx), "kernels.ptx") == NVJITLINK_SUCCESS &&
	    __nvJitLinkComplete_13_0(h) == NVJITLINK_SUCCESS &&
	    __nvJitLinkGetLinkedCubinSize_13_0(h, &size) == NVJITLINK_SUCCESS && (cubin = malloc(size)) != NULL &&
	    __nvJitLinkGetLinkedCubin_13_0(h, cubin) != NVJITLINK_SUCCESS) {
		free(cubin);
		cubin = NULL;
	}
	__nvJitLinkDestroy_13_0(&h);
	return cubin;
}

int main(int argc, char **argv)
{
	if (argc != 4 || (strcmp(argv[1], "nvrtc") && strcmp(argv[1], "nvjitlink"))) {
		fprintf(stderr, "usage: app_jit nvrtc|nvjitlink KERNELS.ptx LAUNCHES\n");
		return 2;
	}
	char *ptx = slurp(argv[2]);
	if (!ptx)
		return printf("FAIL cannot read %s\n", argv[2]), 1;
	void *cubin = strcmp(argv[1], "nvrtc") == 0 ? via_nvrtc(ptx) : via_nvjitlink(ptx);
	if (!cubin)
		return printf("FAIL %s gave no cubin\n", argv[1]), 1;
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction fill;
	CUdeviceptr buf;
	unsigned n = 1024;
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuCtxCreate(&ctx, NULL, 0, dev));
	CK(cuModuleLoadData(&mod, cubin));
	CK(cuModuleGetFunction(&fill, mod, "fill"));
	CK(cuMemAlloc(&buf, n * sizeof(unsigned)));
	void *params[] = { &buf, &n };
	int launches = atoi(argv[3]);
	for (int i = 0; i < launches; i++)
		CK(cuLaunchKernel(fill, 4, 1, 1, 256, 1, 1, 0, NULL, params, NULL));
	CK(cuCtxSynchronize());
	CK(cuMemFree(buf));
	CK(cuModuleUnload(mod));
	CK(cuCtxDestroy(ctx));
	printf("app_jit %s: %d launches, %d failures\n", argv[1], launches, failures);
	free(cubin);
	free(ptx);
	return failures != 0;
}
