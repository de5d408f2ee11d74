/* Test application for ntop's loader audit module (regress/hook_audit.sh):
 * links neither the driver nor NVRTC and opens both by the absolute paths
 * it is given, as CuPy and Numba do through cuda.pathfinder.
 *
 *   app_dlopen run LIBCUDA LIBNVRTC KERNELS.ptx LAUNCHES
 *       NVRTC first (its stand-in then finds the driver stand-in itself),
 *       "compiles" the PTX to a cubin (the test double's way), loads it
 *       with cuModuleLoadData and launches `fill` LAUNCHES times
 *   app_dlopen which PATH...
 *       opens each PATH and prints "PATH stand-in" when the library it got
 *       is one of ntop's (exports ntop_hook_marker), "PATH library" when
 *       not, "PATH error: ..." when the open failed */
#include <nvrtc.h>
#include <string.h>
#include "app_util.h"

#define STR2(x) #x
#define STR(x) STR2(x)
/* A pointer named f_p of f's type, looked up under the name cuda.h's
 * macros give f (cuMemAlloc is cuMemAlloc_v2). */
#define FN(f) static __typeof__(f) *f##_p
#define GET(h, f) (f##_p = (__typeof__(f) *)dlsym(h, STR(f)))

FN(cuInit);
FN(cuDeviceGet);
FN(cuCtxCreate);
FN(cuModuleLoadData);
FN(cuModuleGetFunction);
FN(cuMemAlloc);
FN(cuMemFree);
FN(cuLaunchKernel);
FN(cuCtxSynchronize);
FN(nvrtcCreateProgram);
FN(nvrtcCompileProgram);
FN(nvrtcGetCUBINSize);
FN(nvrtcGetCUBIN);
FN(nvrtcDestroyProgram);

static void *open_lib(const char *path)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		printf("FAIL dlopen %s: %s\n", path, dlerror());
	return h;
}

static void *compile(void *nvrtc, const char *ptx)
{
	if (!GET(nvrtc, nvrtcCreateProgram) || !GET(nvrtc, nvrtcCompileProgram) || !GET(nvrtc, nvrtcGetCUBINSize) ||
	    !GET(nvrtc, nvrtcGetCUBIN) || !GET(nvrtc, nvrtcDestroyProgram))
		return NULL;
	nvrtcProgram prog;
	size_t size = 0;
	char *cubin = NULL;
	const char *opts[] = { "-arch=sm_80" };
	if (nvrtcCreateProgram_p(&prog, ptx, "kernels.cu", 0, NULL, NULL) != NVRTC_SUCCESS)
		return NULL;
	if (nvrtcCompileProgram_p(prog, 1, opts) == NVRTC_SUCCESS && nvrtcGetCUBINSize_p(prog, &size) == NVRTC_SUCCESS &&
	    (cubin = malloc(size)) != NULL && nvrtcGetCUBIN_p(prog, cubin) != NVRTC_SUCCESS) {
		free(cubin);
		cubin = NULL;
	}
	nvrtcDestroyProgram_p(&prog);
	return cubin;
}

static int run(const char *libcuda, const char *libnvrtc, const char *ptx_path, int launches)
{
	char *ptx = slurp(ptx_path);
	void *nvrtc = open_lib(libnvrtc);
	void *cubin = ptx && nvrtc ? compile(nvrtc, ptx) : NULL;
	if (!cubin)
		return printf("FAIL no cubin from %s\n", libnvrtc), 1;
	void *drv = open_lib(libcuda);
	if (!drv || !GET(drv, cuInit) || !GET(drv, cuDeviceGet) || !GET(drv, cuCtxCreate) || !GET(drv, cuModuleLoadData) ||
	    !GET(drv, cuModuleGetFunction) || !GET(drv, cuMemAlloc) || !GET(drv, cuMemFree) ||
	    !GET(drv, cuLaunchKernel) || !GET(drv, cuCtxSynchronize))
		return printf("FAIL driver entry points missing in %s\n", libcuda), 1;
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction fill;
	CUdeviceptr buf;
	unsigned n = 1024;
	CK(cuInit_p(0));
	CK(cuDeviceGet_p(&dev, 0));
	CK(cuCtxCreate_p(&ctx, NULL, 0, dev));
	CK(cuModuleLoadData_p(&mod, cubin));
	CK(cuModuleGetFunction_p(&fill, mod, "fill"));
	CK(cuMemAlloc_p(&buf, n * sizeof(unsigned)));
	void *params[] = { &buf, &n };
	for (int i = 0; i < launches; i++)
		CK(cuLaunchKernel_p(fill, 4, 1, 1, 256, 1, 1, 0, NULL, params, NULL));
	CK(cuCtxSynchronize_p());
	CK(cuMemFree_p(buf));
	printf("app_dlopen: %d launches, %d failures\n", launches, failures);
	free(cubin);
	free(ptx);
	return failures != 0;
}

int main(int argc, char **argv)
{
	if (argc == 6 && strcmp(argv[1], "run") == 0)
		return run(argv[2], argv[3], argv[4], atoi(argv[5]));
	if (argc >= 3 && strcmp(argv[1], "which") == 0) {
		for (int i = 2; i < argc; i++) {
			void *h = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
			if (!h)
				printf("%s error: %s\n", argv[i], dlerror());
			else
				printf("%s %s\n", argv[i], dlsym(h, "ntop_hook_marker") ? "stand-in" : "library");
		}
		return 0;
	}
	fprintf(stderr, "usage: app_dlopen run LIBCUDA LIBNVRTC KERNELS.ptx LAUNCHES | which PATH...\n");
	return 2;
}
