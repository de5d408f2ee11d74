// An -rdc=true build (two translation units, device-linked), as the CUDA
// samples' *_rdc are. The runtime loads the device-linked fatbin,
// which holds SASS only; each unit's PTX is in the executable's
// __nv_relfatbin. rdc_scale is self-contained; rdc_cross calls a device
// function of the other unit (ntop links its probed PTX with that unit's,
// doc/hook.md). Prints sums; exits 1 on a wrong element.
#include <cstdio>
#include <vector>

extern __device__ float rdc_twice(float v);

__global__ void rdc_scale(float *y, float a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = a * y[i];
}

__global__ void rdc_cross(float *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = rdc_twice(y[i]);
}

int main()
{
	const int n = 1 << 16, launches = 10;
	std::vector<float> h(n);
	for (int i = 0; i < n; i++)
		h[i] = (float)(i % 3);
	float *y;
	cudaMalloc(&y, n * sizeof(float));
	cudaMemcpy(y, h.data(), n * sizeof(float), cudaMemcpyHostToDevice);
	for (int i = 0; i < launches; i++) {
		rdc_scale<<<(n + 127) / 128, 128>>>(y, 1.0f, n);
		rdc_cross<<<(n + 127) / 128, 128>>>(y, n);
	}
	cudaMemcpy(h.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost);
	double sum = 0;
	int bad = 0;
	for (int i = 0; i < n; i++) {
		bad += h[i] != (float)(i % 3) * (float)(1 << launches);
		sum += h[i];
	}
	printf("rdc %s sum %.1f (%s)\n", bad ? "WRONG" : "ok", sum, cudaGetErrorString(cudaGetLastError()));
	return bad != 0;
}
