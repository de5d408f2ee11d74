/* Small memory-bound kernels for the slowdown benchmark: a copy, a scale and
 * a strided gather (uncoalesced), 16 Mi floats each. NEUTRINO's block_sched
 * cost 1.3-1.6x on such kernels. Usage: memk [launches per kernel] (20). */
#include <vector>
#include "common.h"

static const int N = 1 << 24;
static const int TPB = 256;
static const int STRIDE = 33; /* odd: (i * STRIDE) mod N is a permutation */

__global__ void memk_copy(const float *in, float *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = in[i];
}

__global__ void memk_scale(const float *in, float *out, float s, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = in[i] * s;
}

__global__ void memk_strided(const float *in, float *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = in[(int)(((long long)i * STRIDE) & (n - 1))];
}

enum { K_COPY, K_SCALE, K_STRIDED, K_COUNT };
static const char *const names[K_COUNT] = { "memk_copy", "memk_scale", "memk_strided" };

static void launch(int k, const float *in, float *out)
{
	int blocks = (N + TPB - 1) / TPB;
	if (k == K_COPY)
		memk_copy<<<blocks, TPB>>>(in, out, N);
	else if (k == K_SCALE)
		memk_scale<<<blocks, TPB>>>(in, out, 0.5f, N);
	else
		memk_strided<<<blocks, TPB>>>(in, out, N);
}

static float expect(int k, const std::vector<float> &in, int i)
{
	if (k == K_COPY)
		return in[i];
	if (k == K_SCALE)
		return in[i] * 0.5f;
	return in[(int)(((long long)i * STRIDE) & (N - 1))];
}

int main(int argc, char **argv)
{
	long launches = arg_long(argc, argv, 1, 20);
	std::vector<float> hin(N), hout(N);
	for (int i = 0; i < N; i++)
		hin[i] = (float)(i % 4093) * 0.125f;
	float *in, *out;
	CK(cudaMalloc(&in, N * sizeof(float)));
	CK(cudaMalloc(&out, N * sizeof(float)));
	CK(cudaMemcpy(in, hin.data(), N * sizeof(float), cudaMemcpyHostToDevice));
	cudaEvent_t start, stop;
	CK(cudaEventCreate(&start));
	CK(cudaEventCreate(&stop));

	for (int k = 0; k < K_COUNT; k++) {
		double total_ms = 0;
		for (long l = 0; l < launches; l++) {
			poison_device(out, N * sizeof(float));
			CK(cudaEventRecord(start));
			launch(k, in, out);
			CK(cudaEventRecord(stop));
			CK_LAUNCH();
			float ms;
			CK(cudaEventElapsedTime(&ms, start, stop));
			total_ms += ms;
			if (l != 0 && l != launches - 1)
				continue;
			CK(cudaMemcpy(hout.data(), out, N * sizeof(float), cudaMemcpyDeviceToHost));
			for (int i = 0; i < N; i++)
				if (hout[i] != expect(k, hin, i))
					return report_mismatch(names[k], i, hout[i], expect(k, hin, i));
			if (l == 0)
				print_checksum(names[k], hout.data(), N * sizeof(float));
		}
		printf("info: %s mean %.3f us over %ld launches\n", names[k], total_ms * 1000.0 / launches, launches);
	}
	printf("memk ok launches=%ld\n", launches);
	CK(cudaFree(in));
	CK(cudaFree(out));
	return 0;
}
