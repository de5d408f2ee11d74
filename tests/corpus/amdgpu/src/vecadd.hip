/* The smallest kernels: one element per thread, a template (mangled name). */
#include "hip_mini.h"

extern "C" __global__ void vecadd(float *c, const float *a, const float *b, int n)
{
	int i = bid_x() * bdim_x() + tid_x();
	if (i < n)
		c[i] = a[i] + b[i];
}

template <typename T> __global__ void scale(T *x, T s, int n)
{
	int i = bid_x() * bdim_x() + tid_x();
	if (i < n)
		x[i] *= s;
}
template __global__ void scale<float>(float *, float, int);
template __global__ void scale<double>(double *, double, int);
