// Vector add with a grid-stride loop, plus a scaled variant (two entries).
extern "C" __global__ void vecadd(const float *a, const float *b, float *c, int n)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		c[i] = a[i] + b[i];
}

__global__ void __launch_bounds__(256, 2) saxpy(float alpha, const float *__restrict__ x, float *y, long n)
{
	long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = alpha * x[i] + y[i];
}
