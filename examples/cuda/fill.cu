/* Many small blocks, like torch.zeros on a 4096x4096 fp16 tensor: 32768
 * blocks of 128 threads, 4 halves per thread. The seed measured ~20% block
 * scheduling cost on this shape, and NEUTRINO's block_sched probe slowed it
 * 3x: the worst case for a per-warp probe. Usage: fill [launches] (100). */
#include <cuda_fp16.h>
#include <vector>
#include "common.h"

static const int ROWS = 4096, COLS = 4096;
static const int N = ROWS * COLS;
static const int TPB = 128, PER_THREAD = 4;
static const int BLOCKS = N / (TPB * PER_THREAD); /* 32768 */

__global__ void fill_half4(__half *out, __half value, int n)
{
	int base = (blockIdx.x * blockDim.x + threadIdx.x) * PER_THREAD;
	if (base + PER_THREAD <= n) {
		__half2 v = __halves2half2(value, value);
		__half2 *p = (__half2 *)(out + base);
		p[0] = v;
		p[1] = v;
	}
}

int main(int argc, char **argv)
{
	long launches = arg_long(argc, argv, 1, 100);
	__half *d;
	CK(cudaMalloc(&d, N * sizeof(__half)));
	cudaEvent_t start, stop;
	CK(cudaEventCreate(&start));
	CK(cudaEventCreate(&stop));

	double total_ms = 0;
	std::vector<__half> h(N);
	for (long l = 0; l < launches; l++) {
		/* Each launch writes a different value so a skipped launch shows. */
		float value = (float)(l % 64) + 0.5f;
		poison_device(d, N * sizeof(__half));
		CK(cudaEventRecord(start));
		fill_half4<<<BLOCKS, TPB>>>(d, __float2half(value), N);
		CK(cudaEventRecord(stop));
		CK_LAUNCH();
		float ms;
		CK(cudaEventElapsedTime(&ms, start, stop));
		total_ms += ms;
		/* Every launch: 4 slices of 64 KiB; first and last: everything. */
		for (int k = 0; k < 4; k++) {
			const int span = 32768, off = (int)((long long)k * (N - span) / 3);
			CK(cudaMemcpy(h.data() + off, d + off, span * sizeof(__half), cudaMemcpyDeviceToHost));
			for (int i = off; i < off + span; i++)
				if (__half2float(h[i]) != value)
					return report_mismatch("fill_slice", i, __half2float(h[i]), value);
		}
		if (l == 0 || l == launches - 1) {
			CK(cudaMemcpy(h.data(), d, N * sizeof(__half), cudaMemcpyDeviceToHost));
			for (int i = 0; i < N; i++)
				if (__half2float(h[i]) != value)
					return report_mismatch("fill", i, __half2float(h[i]), value);
			print_checksum(l == 0 ? "fill_first" : "fill_last", h.data(), N * sizeof(__half));
		}
	}
	printf("info: fill_half4 mean %.3f us over %ld launches\n", total_ms * 1000.0 / launches, launches);
	printf("fill ok launches=%ld\n", launches);
	CK(cudaFree(d));
	return 0;
}
