/* WMMA (RDNA3 gfx1100: v_wmma_f32_16x16x16_f16 on 16-half operands; RDNA4
 * gfx1201: its gfx12 form on 8 halves), one per loop trip; a plain loop
 * elsewhere. LLVM 19 decodes all of it (Triton's gfx1100 tl.dot does not). */
#include "hip_mini.h"

typedef float f32x8 __attribute__((ext_vector_type(8)));
#if defined(__gfx1201__)
#define WMMA_HALVES 8
#else
#define WMMA_HALVES 16
#endif
typedef _Float16 f16xn __attribute__((ext_vector_type(WMMA_HALVES)));

extern "C" __global__ void wmma_tile(float *out, const _Float16 *a, const _Float16 *b, int k)
{
	unsigned t = tid_x();
	f32x8 acc = {};
	for (int i = 0; i < k; i += WMMA_HALVES) {
		f16xn va, vb;
		for (int j = 0; j < WMMA_HALVES; j++) {
			va[j] = a[(i + j) * 32 + t];
			vb[j] = b[(i + j) * 32 + t];
		}
#if defined(__gfx1100__)
		acc = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(va, vb, acc);
#elif defined(__gfx1201__)
		acc = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32_gfx12(va, vb, acc);
#else
		for (int j = 0; j < 8; j++)
			acc[j] += (float)va[j] * (float)vb[j + 8];
#endif
	}
	for (int j = 0; j < 8; j++)
		out[j * 32 + t] = acc[j];
}
