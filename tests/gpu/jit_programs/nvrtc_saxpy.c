/* A kernel compiled at run time with NVRTC to a cubin for the
 * device (-arch=sm_XX), loaded with cuModuleLoadData and launched 20 times,
 * as the CUDA samples' *_nvrtc do. The driver sees a cubin without PTX; ntop
 * gets the PTX from its NVRTC stand-in. Prints the result's sum (exact:
 * small integers in float); exits 1 on a wrong element. */
#include <cuda.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>

#define N (1 << 20)
#define LAUNCHES 20

static const char *src =
	"extern \"C\" __global__ void jit_saxpy(float a, const float *x, float *y, int n)\n"
	"{\n"
	"	int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
	"	if (i < n)\n"
	"		y[i] = a * x[i] + y[i];\n"
	"}\n";

#define CK(call)                                                                            \
	do {                                                                                \
		int rc_ = (int)(call);                                                      \
		if (rc_) {                                                                  \
			fprintf(stderr, "%s:%d: %s -> %d\n", __FILE__, __LINE__, #call, rc_); \
			exit(1);                                                            \
		}                                                                           \
	} while (0)

int main(void)
{
	CUdevice dev;
	CUcontext ctx;
	int major, minor;
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
	CK(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));

	nvrtcProgram prog;
	char arch[32];
	snprintf(arch, sizeof arch, "-arch=sm_%d%d", major, minor);
	const char *opts[] = { arch };
	CK(nvrtcCreateProgram(&prog, src, "saxpy.cu", 0, NULL, NULL));
	if (nvrtcCompileProgram(prog, 1, opts) != NVRTC_SUCCESS) {
		size_t n;
		nvrtcGetProgramLogSize(prog, &n);
		char *log = malloc(n + 1);
		nvrtcGetProgramLog(prog, log);
		fprintf(stderr, "compile failed:\n%s\n", log);
		return 1;
	}
	size_t size;
	CK(nvrtcGetCUBINSize(prog, &size));
	char *cubin = malloc(size);
	CK(nvrtcGetCUBIN(prog, cubin));
	CK(nvrtcDestroyProgram(&prog));

	CUmodule mod;
	CUfunction f;
	CK(cuModuleLoadData(&mod, cubin));
	CK(cuModuleGetFunction(&f, mod, "jit_saxpy"));
	float *hx = malloc(N * sizeof(float)), *hy = malloc(N * sizeof(float));
	for (int i = 0; i < N; i++) {
		hx[i] = (float)(i % 7);
		hy[i] = (float)(i % 5);
	}
	CUdeviceptr x, y;
	CK(cuMemAlloc(&x, N * sizeof(float)));
	CK(cuMemAlloc(&y, N * sizeof(float)));
	CK(cuMemcpyHtoD(x, hx, N * sizeof(float)));
	CK(cuMemcpyHtoD(y, hy, N * sizeof(float)));
	float a = 2.0f;
	int n = N;
	void *args[] = { &a, &x, &y, &n };
	for (int i = 0; i < LAUNCHES; i++)
		CK(cuLaunchKernel(f, (N + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
	CK(cuMemcpyDtoH(hy, y, N * sizeof(float)));
	double sum = 0;
	int bad = 0;
	for (int i = 0; i < N; i++) {
		bad += hy[i] != (float)(i % 5) + LAUNCHES * 2.0f * (float)(i % 7);
		sum += hy[i];
	}
	printf("nvrtc_saxpy %s sum %.1f\n", bad ? "WRONG" : "ok", sum);
	CK(cuModuleUnload(mod));
	CK(cuDevicePrimaryCtxRelease(dev));
	return bad != 0;
}
