/* A device function kept out of line (a call with a stack), a module
 * variable reached through a PC-relative address (s_getpc_b64), and dynamic
 * LDS. */
#include "hip_mini.h"

__device__ int counter;
extern __shared__ float dyn[];

__attribute__((noinline)) __device__ float poly(float x, int k)
{
	float acc[16];
	for (int i = 0; i < 16; i++)
		acc[i] = x * (float)(i + k);
	float s = 0;
	for (int i = 0; i < 16; i += 1 + (k & 3))
		s += acc[i];
	return s;
}

extern "C" __global__ void calls(float *out, const float *in, int n)
{
	int i = bid_x() * bdim_x() + tid_x();
	dyn[tid_x()] = i < n ? in[i] : 0.0f;
	syncthreads();
	if (i < n)
		out[i] = poly(dyn[(tid_x() + 1) % bdim_x()], i);
	if (tid_x() == 0)
		__atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED);
}
