// One process, two GPUs (cudaSetDevice): the same kernel with 4096 blocks
// on GPU 0 and 8192 on GPU 1, ten launches each, interleaved; prints one
// checksum per GPU (the same under ntop as without). Needs two GPUs.
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	std::printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); return 1; } } while (0)

__global__ void scale_dev(float *x, float a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = x[i] * a + 1.0f;
}

int main()
{
	int n_dev = 0;
	CK(cudaGetDeviceCount(&n_dev));
	if (n_dev < 2) {
		std::printf("multi_gpu: %d GPU(s), needs 2\n", n_dev);
		return 2;
	}
	const int blocks[2] = {4096, 8192}, threads = 256;
	float *d[2];
	for (int g = 0; g < 2; g++) {
		int n = blocks[g] * threads;
		std::vector<float> h(n);
		for (int i = 0; i < n; i++)
			h[i] = (float)(i % 1000) / 1000.0f;
		CK(cudaSetDevice(g));
		CK(cudaMalloc(&d[g], n * sizeof(float)));
		CK(cudaMemcpy(d[g], h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
	}
	for (int r = 0; r < 10; r++)
		for (int g = 0; g < 2; g++) {
			CK(cudaSetDevice(g));
			scale_dev<<<blocks[g], threads>>>(d[g], 0.5f, blocks[g] * threads);
			CK(cudaGetLastError());
		}
	for (int g = 0; g < 2; g++) {
		int n = blocks[g] * threads;
		std::vector<float> h(n);
		CK(cudaSetDevice(g));
		CK(cudaMemcpy(h.data(), d[g], n * sizeof(float), cudaMemcpyDeviceToHost));
		double sum = 0;
		for (int i = 0; i < n; i++)
			sum += h[i];
		std::printf("multi_gpu: GPU %d, %d blocks, checksum %.6f\n", g, blocks[g], sum);
		CK(cudaFree(d[g]));
	}
	return 0;
}
