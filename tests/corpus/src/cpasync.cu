// cp.async (sm_80): double-buffered global->shared copies with commit/wait.
#include <cuda_pipeline.h>

__global__ void cp_async_copy(const float4 *src, float4 *dst, int tiles)
{
	__shared__ float4 buf[2][128];
	int t = threadIdx.x;
	__pipeline_memcpy_async(&buf[0][t], &src[t], sizeof(float4));
	__pipeline_commit();
	for (int i = 0; i < tiles; ++i) {
		if (i + 1 < tiles)
			__pipeline_memcpy_async(&buf[(i + 1) & 1][t], &src[(i + 1) * 128 + t], sizeof(float4));
		__pipeline_commit();
		__pipeline_wait_prior(1);
		__syncthreads();
		float4 v = buf[i & 1][t];
		v.x *= 2.f;
		dst[i * 128 + t] = v;
		__syncthreads();
	}
}
