// Block reduction: shared memory tree, __syncthreads, then warp shuffles.
__device__ __forceinline__ float warp_sum(float v)
{
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_down_sync(0xffffffffu, v, o);
	return v;
}

__global__ void reduce_sum(const float *in, float *out, int n)
{
	__shared__ float tile[256];
	int tid = threadIdx.x;
	float v = 0.f;
	for (int i = blockIdx.x * blockDim.x + tid; i < n; i += gridDim.x * blockDim.x)
		v += in[i];
	tile[tid] = v;
	__syncthreads();
	for (int s = blockDim.x / 2; s >= 32; s >>= 1) {
		if (tid < s)
			tile[tid] += tile[tid + s];
		__syncthreads();
	}
	if (tid < 32) {
		v = warp_sum(tile[tid]);
		if (tid == 0)
			atomicAdd(out, v);
	}
}

__global__ void reduce_max_dyn(const int *in, int *out, int n)
{
	extern __shared__ int dyn[];
	int tid = threadIdx.x;
	int i = blockIdx.x * blockDim.x + tid;
	dyn[tid] = i < n ? in[i] : -2147483647;
	__syncthreads();
	for (int s = blockDim.x / 2; s > 0; s >>= 1) {
		if (tid < s)
			dyn[tid] = max(dyn[tid], dyn[tid + s]);
		__syncthreads();
	}
	if (tid == 0)
		atomicMax(out, dyn[0]);
}
