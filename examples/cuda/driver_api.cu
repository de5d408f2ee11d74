/* Driver-API launches the runtime never makes: a module loaded from PTX text
 * with cuModuleLoadData, launched through cuLaunchKernel with kernelParams and
 * with a packed `extra` parameter buffer (CU_LAUNCH_PARAM_BUFFER_POINTER), the
 * way JIT frameworks and hand-written launchers do. ntop must append its map
 * pointer to both forms. Built with nvcc but links libcuda (-lcuda). */
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CKD(call)                                                            \
	do {                                                                 \
		CUresult r_ = (call);                                        \
		if (r_ != CUDA_SUCCESS) {                                    \
			const char *s_ = NULL;                               \
			cuGetErrorString(r_, &s_);                           \
			fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, \
				__LINE__, #call, s_ ? s_ : "?");             \
			exit(1);                                             \
		}                                                            \
	} while (0)

/* y[i] = a * x[i] + i, written by hand so the app carries its own PTX. */
static const char ptx[] =
	".version 8.0\n.target sm_75\n.address_size 64\n"
	".visible .entry drv_axpy(.param .u64 x, .param .u64 y, .param .f32 a, .param .u32 n)\n"
	"{\n"
	"  .reg .pred %p<2>; .reg .b32 %r<6>; .reg .f32 %f<4>; .reg .b64 %rd<8>;\n"
	"  ld.param.u64 %rd1, [x]; ld.param.u64 %rd2, [y]; ld.param.f32 %f1, [a]; ld.param.u32 %r1, [n];\n"
	"  mov.u32 %r2, %ctaid.x; mov.u32 %r3, %ntid.x; mov.u32 %r4, %tid.x;\n"
	"  mad.lo.s32 %r5, %r2, %r3, %r4;\n"
	"  setp.ge.u32 %p1, %r5, %r1;\n"
	"  @%p1 bra DONE;\n"
	"  cvta.to.global.u64 %rd3, %rd1; cvta.to.global.u64 %rd4, %rd2;\n"
	"  mul.wide.u32 %rd5, %r5, 4; add.s64 %rd6, %rd3, %rd5; add.s64 %rd7, %rd4, %rd5;\n"
	"  ld.global.f32 %f2, [%rd6];\n"
	"  cvt.rn.f32.u32 %f3, %r5;\n"
	"  fma.rn.f32 %f2, %f1, %f2, %f3;\n"
	"  st.global.f32 [%rd7], %f2;\n"
	"DONE:\n"
	"  ret;\n"
	"}\n";

static uint64_t fnv1a(const void *data, size_t n)
{
	const unsigned char *p = (const unsigned char *)data;
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

static int verify(const float *x, const float *y, unsigned n, float a, const char *what)
{
	for (unsigned i = 0; i < n; i++) {
		float want = fmaf(a, x[i], (float)i);
		if (y[i] != want) {
			fprintf(stderr, "MISMATCH %s[%u]: got %.9g want %.9g\n", what, i, y[i], want);
			return 1;
		}
	}
	printf("checksum %s %016llx\n", what, (unsigned long long)fnv1a(y, n * sizeof *y));
	return 0;
}

int main(void)
{
	const unsigned n = 1u << 20, tpb = 256;
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction f;
	CKD(cuInit(0));
	CKD(cuDeviceGet(&dev, 0));
	CKD(cuDevicePrimaryCtxRetain(&ctx, dev));
	CKD(cuCtxSetCurrent(ctx));
	CKD(cuModuleLoadData(&mod, ptx));
	CKD(cuModuleGetFunction(&f, mod, "drv_axpy"));

	float *hx = (float *)malloc(n * sizeof(float)), *hy = (float *)malloc(n * sizeof(float));
	for (unsigned i = 0; i < n; i++)
		hx[i] = (float)((i * 2654435761u) % 1000) / 7.0f;
	CUdeviceptr dx, dy;
	CKD(cuMemAlloc(&dx, n * sizeof(float)));
	CKD(cuMemAlloc(&dy, n * sizeof(float)));
	CKD(cuMemcpyHtoD(dx, hx, n * sizeof(float)));
	int fails = 0;

	/* 1. kernelParams */
	float a = 1.5f;
	unsigned nn = n;
	void *params[] = { &dx, &dy, &a, &nn };
	CKD(cuMemsetD8(dy, 0xAB, n * sizeof(float)));
	CKD(cuLaunchKernel(f, (n + tpb - 1) / tpb, 1, 1, tpb, 1, 1, 0, NULL, params, NULL));
	CKD(cuCtxSynchronize());
	CKD(cuMemcpyDtoH(hy, dy, n * sizeof(float)));
	fails += verify(hx, hy, n, a, "params");

	/* 2. extra: one packed buffer laid out as the parameters are (8, 8, 4, 4). */
	struct {
		CUdeviceptr x, y;
		float a;
		unsigned n;
	} packed = { dx, dy, -0.25f, n };
	size_t size = sizeof packed;
	void *extra[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, &packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
			  CU_LAUNCH_PARAM_END };
	CKD(cuMemsetD8(dy, 0xAB, n * sizeof(float)));
	CKD(cuLaunchKernel(f, (n + tpb - 1) / tpb, 1, 1, tpb, 1, 1, 0, NULL, NULL, extra));
	CKD(cuCtxSynchronize());
	CKD(cuMemcpyDtoH(hy, dy, n * sizeof(float)));
	fails += verify(hx, hy, n, packed.a, "extra");

	CKD(cuMemFree(dx));
	CKD(cuMemFree(dy));
	CKD(cuModuleUnload(mod));
	free(hx);
	free(hy);
	printf("driver_api %s\n", fails ? "FAILED" : "ok");
	return fails ? 1 : 0;
}
