// Contexts torn down with the hook's work in flight: five
// rounds of launches (probed under ntop) followed at once by
// cudaDeviceReset() (the primary context's reset), so each round runs in
// a new context, maybe at the old one's address. Prints a checksum per round.
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("FAIL %s: %s\n", #x, cudaGetErrorString(e_)); return 1; } } while (0)

__global__ void iota_sq(int *out, int n, int k)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = (i % 1000) * (i % 1000) + k;
}

int main()
{
	const int n = 1 << 20;
	for (int round = 0; round < 5; round++) {
		int *d;
		CK(cudaMalloc(&d, n * sizeof(int)));
		for (int k = 0; k < 12; k++)
			iota_sq<<<n / 256, 256>>>(d, n, k + round);
		CK(cudaGetLastError());
		std::vector<int> h(n);
		CK(cudaMemcpy(h.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost));
		long long s = 0;
		for (int v : h)
			s += v;
		printf("round %d sum %lld\n", round, s);
		iota_sq<<<n / 256, 256>>>(d, n, 0); // probed, results still queued at the reset
		CK(cudaDeviceReset());
	}
	return 0;
}
