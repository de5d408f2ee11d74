// Atomics of several widths and spaces, including CAS loops and shared atomics.
__global__ void histogram(const unsigned char *in, unsigned *bins, int n)
{
	__shared__ unsigned local[256];
	for (int i = threadIdx.x; i < 256; i += blockDim.x)
		local[i] = 0;
	__syncthreads();
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		atomicAdd(&local[in[i]], 1u);
	__syncthreads();
	for (int i = threadIdx.x; i < 256; i += blockDim.x)
		atomicAdd(&bins[i], local[i]);
}

__device__ double atomic_mul(double *addr, double v)
{
	unsigned long long *p = (unsigned long long *)addr, old = *p, seen;
	do {
		seen = old;
		old = atomicCAS(p, seen, __double_as_longlong(v * __longlong_as_double(seen)));
	} while (seen != old);
	return __longlong_as_double(old);
}

__global__ void atomics_mix(double *d, unsigned long long *u, int *i, float *f)
{
	atomic_mul(d, 1.0001);
	atomicAdd(u, 1ull);
	atomicExch(i + 1, threadIdx.x);
	atomicMin(i + 2, (int)threadIdx.x);
	atomicOr(i + 3, 1 << (threadIdx.x & 31));
	atomicInc((unsigned *)i + 4, 1000u);
	atomicAdd(f, 0.5f);
}
