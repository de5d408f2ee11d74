// Known answers for what ntop sees inside a kernel (tests/gpu/inside_kernel.sh).
//
//   rg_spin  every warp spins in two regions for a number of cycles that
//            differs per warp (region a on one source line, region b on
//            another); lane 0 also reads the clock around each spin itself,
//            and --truth FILE writes those durations, the truth the regions
//            probe's durations are held to.
//   rg_func  every thread loads twice through a __noinline__ device
//            function and stores once: dmat must record all three accesses
//            (the two inside the device function included).
//
// Usage: regions_check [--n N] [--truth FILE]
// Lines starting with "info:" vary between runs; the others must not.
#include "common.h"

#define TPB 128

// The two regions' source lines: ntop record -p regions
// -r a=regions_check.cu:SPIN_A_LINE -r b=regions_check.cu:SPIN_B_LINE.
// Keep each spin on its own line (the script greps for the markers).
__device__ __forceinline__ long long spin_a(long long t0, long long n)
{
	long long t;
	do { t = clock64(); } while (t - t0 < n); // REGION_A
	return t;
}

__device__ __forceinline__ long long spin_b(long long t0, long long n)
{
	long long t;
	do { t = clock64(); } while (t - t0 < n); // REGION_B
	return t;
}

extern "C" __global__ void rg_spin(long long *truth, int *out, int base_a, int base_b)
{
	int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
	long long a0 = clock64();
	long long a1 = spin_a(a0, (long long)base_a * (1 + warp % 4));
	long long b0 = clock64();
	long long b1 = spin_b(b0, (long long)base_b * (1 + warp % 3));
	if (threadIdx.x % 32 == 0) {
		truth[2 * warp] = a1 - a0;
		truth[2 * warp + 1] = b1 - b0;
	}
	out[blockIdx.x * blockDim.x + threadIdx.x] = warp;
}

__device__ __noinline__ float twice_sum(const float *in, int i, int n)
{
	return in[i] + in[(i + 1) % n];
}

extern "C" __global__ void rg_func(const float *in, float *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = twice_sum(in, i, n);
}

int main(int argc, char **argv)
{
	int n = 1 << 16;
	const char *truth_path = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--n") && i + 1 < argc)
			n = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--truth") && i + 1 < argc)
			truth_path = argv[++i];
		else {
			fprintf(stderr, "usage: regions_check [--n N] [--truth FILE]\n");
			return 2;
		}
	}
	if (n < TPB || n % TPB) {
		fprintf(stderr, "--n takes a multiple of %d\n", TPB);
		return 2;
	}
	int blocks = 8, warps = blocks * TPB / 32;
	long long *truth;
	int *iout;
	CK(cudaMalloc(&truth, sizeof(long long) * 2 * warps));
	CK(cudaMalloc(&iout, sizeof(int) * blocks * TPB));
	rg_spin<<<blocks, TPB>>>(truth, iout, 20000, 30000);
	CK_LAUNCH();
	long long *h = (long long *)malloc(sizeof(long long) * 2 * warps);
	int *hi = (int *)malloc(sizeof(int) * blocks * TPB);
	CK(cudaMemcpy(h, truth, sizeof(long long) * 2 * warps, cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(hi, iout, sizeof(int) * blocks * TPB, cudaMemcpyDeviceToHost));
	FILE *tf = truth_path ? fopen(truth_path, "w") : NULL;
	if (truth_path && !tf) {
		fprintf(stderr, "cannot write %s\n", truth_path);
		return 1;
	}
	for (int w = 0; tf && w < warps; w++)
		fprintf(tf, "%d,%d,%lld,%lld\n", w / (TPB / 32), w % (TPB / 32), h[2 * w], h[2 * w + 1]);
	if (tf)
		fclose(tf);
	printf("rg_spin: %d warps, out %016llx\n", warps, (unsigned long long)fnv1a(hi, sizeof(int) * blocks * TPB));

	float *in, *out;
	float *hin = (float *)malloc(sizeof(float) * n), *hout = (float *)malloc(sizeof(float) * n);
	for (int i = 0; i < n; i++)
		hin[i] = (float)(i % 97) * 0.5f;
	CK(cudaMalloc(&in, sizeof(float) * n));
	CK(cudaMalloc(&out, sizeof(float) * n));
	CK(cudaMemcpy(in, hin, sizeof(float) * n, cudaMemcpyHostToDevice));
	rg_func<<<n / TPB, TPB>>>(in, out, n);
	CK_LAUNCH();
	CK(cudaMemcpy(hout, out, sizeof(float) * n, cudaMemcpyDeviceToHost));
	int bad = 0;
	for (int i = 0; i < n; i++)
		bad += hout[i] != hin[i] + hin[(i + 1) % n];
	printf("rg_func: n %d, out %016llx, %s\n", n, (unsigned long long)fnv1a(hout, sizeof(float) * n),
	       bad ? "MISMATCH" : "verified");
	return bad ? 1 : 0;
}
