/* Block reduction through LDS with barriers, finished with a global atomic. */
#include "hip_mini.h"

extern "C" __global__ void reduce_sum(const float *in, float *out, int n)
{
	__shared__ float part[256];
	unsigned t = tid_x();
	int i = bid_x() * 256 + t;
	part[t] = i < n ? in[i] : 0.0f;
	syncthreads();
	for (unsigned s = 128; s > 0; s >>= 1) {
		if (t < s)
			part[t] += part[t + s];
		syncthreads();
	}
	if (t == 0)
		__atomic_fetch_add(out, part[0], __ATOMIC_RELAXED);
}
