// Non-inlined device functions, a __device__ global, __constant__ memory,
// a function pointer table and a string table (pointers in initialisers).
__device__ int g_counter;
__device__ float g_unused_buffer[64];
__constant__ float c_coeffs[8] = {1.f, 0.5f, 0.25f, 0.125f, 2.f, 4.f, 8.f, 16.f};
__constant__ int c_unused[4] = {1, 2, 3, 4};

__device__ __noinline__ float poly(float x)
{
	float r = 0.f;
	for (int k = 7; k >= 0; --k)
		r = r * x + c_coeffs[k];
	return r;
}

__device__ __noinline__ float twice(float x)
{
	atomicAdd(&g_counter, 1);
	return poly(x) * 2.f;
}

__device__ __noinline__ float negate(float x) { return -x; }
__device__ __noinline__ float square(float x) { return x * x; }
__device__ __noinline__ float unused_helper(float x) { return x + g_unused_buffer[0]; }

typedef float (*unary_fn)(float);
__device__ unary_fn g_ops[2] = {negate, square};
__device__ const char *g_names[2] = {"negate", "square"};

__global__ void apply_poly(float *data, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		data[i] = twice(data[i]);
}

__global__ void apply_table(float *data, const int *which, int n, char *name_out)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		int w = which[i] & 1;
		data[i] = g_ops[w](data[i]);
		if (i == 0)
			name_out[0] = g_names[w][0];
	}
}

__global__ void uses_unused(float *data)
{
	data[threadIdx.x] = unused_helper(data[threadIdx.x]) + c_unused[threadIdx.x & 3];
}
