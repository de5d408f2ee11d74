// A kernel using 96 KB of dynamic shared memory after
// cudaFuncSetAttribute(MaxDynamicSharedMemorySize): under ntop -p
// block_sched it must be probed (not declined) and its output unchanged.
// DYN_SMEM_PAUSE_MS=N: it waits N ms after its first launch, so a copy built
// off its thread is ready for the other four (else it exits while one may
// still be building).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("FAIL %s: %s\n", #x, cudaGetErrorString(e_)); return 1; } } while (0)

__global__ void reverse_block(const int *in, int *out, int per_block)
{
	extern __shared__ int tile[];
	const int *src = in + (size_t)blockIdx.x * per_block;
	for (int i = threadIdx.x; i < per_block; i += blockDim.x)
		tile[i] = src[i];
	__syncthreads();
	for (int i = threadIdx.x; i < per_block; i += blockDim.x)
		out[(size_t)blockIdx.x * per_block + i] = tile[per_block - 1 - i] * 3;
}

int main()
{
	const int smem = 96 * 1024, per = smem / 4, blocks = 264;
	std::vector<int> h((size_t)per * blocks);
	for (size_t i = 0; i < h.size(); i++)
		h[i] = (int)(i * 7 % 1000);
	int *in, *out;
	CK(cudaMalloc(&in, h.size() * 4));
	CK(cudaMalloc(&out, h.size() * 4));
	CK(cudaMemcpy(in, h.data(), h.size() * 4, cudaMemcpyHostToDevice));
	CK(cudaFuncSetAttribute(reverse_block, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
	for (int l = 0; l < 5; l++) {
		reverse_block<<<blocks, 256, smem>>>(in, out, per);
		CK(cudaGetLastError());
		if (l == 0 && getenv("DYN_SMEM_PAUSE_MS"))
			std::this_thread::sleep_for(std::chrono::milliseconds(atoi(getenv("DYN_SMEM_PAUSE_MS"))));
	}
	CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(h.data(), out, h.size() * 4, cudaMemcpyDeviceToHost));
	long long s = 0;
	for (int v : h)
		s += v;
	printf("dyn_smem_big sum %lld\n", s);
	return 0;
}
