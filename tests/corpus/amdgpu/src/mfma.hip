/* Matrix cores where there are some (gfx90a, gfx942: AGPRs, accum_offset),
 * a plain dot product elsewhere. */
#include "hip_mini.h"

typedef float f32x16 __attribute__((ext_vector_type(16)));
typedef _Float16 f16x4 __attribute__((ext_vector_type(4)));

extern "C" __global__ void mfma_tile(float *out, const _Float16 *a, const _Float16 *b, int k)
{
	unsigned t = tid_x();
	f32x16 acc = {};
	for (int i = 0; i < k; i += 8) {
		f16x4 va, vb;
		for (int j = 0; j < 4; j++) {
			va[j] = a[(i + j) * 64 + t];
			vb[j] = b[(i + j) * 64 + t];
		}
#if defined(__gfx90a__) || defined(__gfx942__)
		acc = __builtin_amdgcn_mfma_f32_32x32x8f16(va, vb, acc, 0, 0, 0);
#else
		for (int j = 0; j < 16; j++)
			acc[j] += (float)va[j & 3] * (float)vb[(j >> 2) & 3];
#endif
	}
#if defined(__gfx90a__) || defined(__gfx942__)
	/* a round trip through an accumulation register: the kernel then
	 * reports AGPRs whatever the register allocator chose for the MFMA */
	float parked;
	__asm__ volatile("v_accvgpr_write_b32 %0, %1" : "=a"(parked) : "v"(acc[0]));
	__asm__ volatile("v_accvgpr_read_b32 %0, %1" : "=v"(acc[0]) : "a"(parked));
#endif
	for (int j = 0; j < 16; j++)
		out[j * 64 + t] = acc[j];
}
