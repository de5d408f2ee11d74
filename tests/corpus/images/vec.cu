// Small kernels for ntop's image parser tests.
extern "C" __global__ void scale(float *x, float a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] *= a;
}

__global__ void vec_add(float *c, const float *a, const float *b, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] = a[i] + b[i];
}

template <typename T> __global__ void fill(T *x, T v, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = v;
}
template __global__ void fill<int>(int *, int, int);

__device__ float helper(float v) { return v * 2.0f; }
