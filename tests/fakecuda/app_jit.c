/* Test application for the JIT stand-ins: "compiles" tests/fakecuda/
 * kernels.ptx with NVRTC (nvrtc) or links it with nvJitLink (nvjitlink, or
 * nvjitlink-lto: as the fake's LTO-IR with -lto, the way Numba links),
 * linked against the toolkit's libraries as real programs are (versioned
 * symbols, DT_NEEDED libnvrtc.so.N / libnvJitLink.so.N), loads the cubin
 * with cuModuleLoadData and launches `fill` LAUNCHES times. The test
 * doubles (tests/fakecuda/jit) make the cubin. Prints a fixed summary.
 * Usage: app_jit nvrtc|nvjitlink|nvjitlink-lto KERNELS.ptx LAUNCHES */
#define NVJITLINK_NO_INLINE
#include <nvJitLink.h>
#include <nvrtc.h>
#include <string.h>
#include "app_util.h"
#include "fake_cubin.h"

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

static void *via_nvjitlink(const char *ptx, int lto)
{
	nvJitLinkHandle h;
	const char *opts[] = { "-arch=sm_80", "-lto" };
	size_t size = 0, magic = strlen(FAKE_LTOIR_MAGIC), n = strlen(ptx);
	void *cubin = NULL;
	char *ir = malloc(magic + n);
	if (!ir || __nvJitLinkCreate_13_0(&h, lto ? 2 : 1, opts) != NVJITLINK_SUCCESS)
		return free(ir), NULL;
	memcpy(ir, FAKE_LTOIR_MAGIC, magic);
	memcpy(ir + magic, ptx, n);
	nvJitLinkResult rc = lto ? __nvJitLinkAddData_13_0(h, NVJITLINK_INPUT_LTOIR, ir, magic + n, "kernels.ltoir")
				 : __nvJitLinkAddData_13_0(h, NVJITLINK_INPUT_PTX, ptx, n, "kernels.ptx");
	free(ir);
	if (rc == NVJITLINK_SUCCESS && __nvJitLinkComplete_13_0(h) == NVJITLINK_SUCCESS &&
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
	if (argc != 4 || (strcmp(argv[1], "nvrtc") && strcmp(argv[1], "nvjitlink") && strcmp(argv[1], "nvjitlink-lto"))) {
		fprintf(stderr, "usage: app_jit nvrtc|nvjitlink|nvjitlink-lto KERNELS.ptx LAUNCHES\n");
		return 2;
	}
	char *ptx = slurp(argv[2]);
	if (!ptx)
		return printf("FAIL cannot read %s\n", argv[2]), 1;
	void *cubin = strcmp(argv[1], "nvrtc") == 0 ? via_nvrtc(ptx) : via_nvjitlink(ptx, strcmp(argv[1], "nvjitlink-lto") == 0);
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
