/* A HIP application as users write and build it: the ROCm headers
 * (<hip/hip_runtime.h>, Debian's libamdhip64-dev), a C++ kernel (mangled
 * name), launched with <<<>>>, hipLaunchKernelGGL and hipLaunchKernel,
 * built in one step for host and device and linked against libamdhip64:
 *   clang++-19 -x hip --offload-arch=gfx90a -O2 app_vecadd.hip -lamdhip64
 *   hipcc --offload-arch=gfx90a -O2 app_vecadd.hip
 * The compiler's module constructor registers the device code
 * (__hipRegisterFatBinary, __hipRegisterFunction). tests/regress/hip_app.sh
 * builds it and runs it on the HIP test double (tests/fakehip), which
 * computes vecadd on the CPU, with and without ntop.
 *   app_vecadd [ROUNDS]
 * Prints "app_vecadd: N launches, all correct"; exits 1 when a launch fails
 * or a sum is wrong. */
#include <hip/hip_runtime.h>
#include <stdio.h>
#include <stdlib.h>

__global__ void vecadd(float *c, const float *a, const float *b, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] = a[i] + b[i];
}

static const int N = 1000;

/* Copies c back, checks c = a + b, clears c on the device. */
static int check(const char *how, hipError_t rc, float *dc, const float *a, const float *b)
{
	float c[N];
	int wrong = 0;
	if (rc == hipSuccess)
		rc = hipMemcpy(c, dc, sizeof c, hipMemcpyDeviceToHost);
	for (int i = 0; i < N && rc == hipSuccess; i++)
		wrong += c[i] != a[i] + b[i];
	if (rc != hipSuccess || wrong)
		printf("%s: %s (error %d, %d wrong sums)\n", how, rc ? "failed" : "wrong", (int)rc, wrong);
	for (int i = 0; i < N; i++)
		c[i] = 0;
	if (hipMemcpy(dc, c, sizeof c, hipMemcpyHostToDevice) != hipSuccess)
		return 1;
	return rc != hipSuccess || wrong;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 1, n = N, launches = 0, bad = 0;
	float a[N], b[N], *da, *db, *dc;
	for (int i = 0; i < N; i++)
		a[i] = (float)i, b[i] = (float)(3 * i + 1);
	if (hipMalloc(&da, sizeof a) != hipSuccess || hipMalloc(&db, sizeof b) != hipSuccess ||
	    hipMalloc(&dc, sizeof a) != hipSuccess || hipMemcpy(da, a, sizeof a, hipMemcpyHostToDevice) != hipSuccess ||
	    hipMemcpy(db, b, sizeof b, hipMemcpyHostToDevice) != hipSuccess) {
		fprintf(stderr, "app_vecadd: HIP set-up failed\n");
		return 1;
	}
	dim3 grid((N + 255) / 256), block(256);
	void *args[] = { &dc, &da, &db, &n };
	for (int r = 0; r < rounds; r++) {
		vecadd<<<grid, block>>>(dc, da, db, n);
		bad |= check("vecadd<<<>>>", hipGetLastError(), dc, a, b);
		hipLaunchKernelGGL(vecadd, grid, block, 0, 0, dc, da, db, n);
		bad |= check("hipLaunchKernelGGL", hipGetLastError(), dc, a, b);
		bad |= check("hipLaunchKernel", hipLaunchKernel((const void *)vecadd, grid, block, args, 0, 0), dc, a, b);
		launches += 3;
	}
	if (hipDeviceSynchronize() != hipSuccess)
		bad = 1;
	(void)hipFree(da);
	(void)hipFree(db);
	(void)hipFree(dc);
	printf("app_vecadd: %d launches, %s\n", launches, bad ? "SOME FAILED" : "all correct");
	return bad;
}
