/* Buffer (MUBUF) loads and stores through resource descriptors the kernel
 * builds, as Triton and rocSPARSE use them: a raw buffer (no stride) with
 * num_records the array's size, offsets in a VGPR (offen) with and without
 * an immediate offset, a constant offset alone (no VGPR), and one offset
 * in an SGPR (soffset: a form the memory probes refuse by name). */
#include "hip_mini.h"

/* word 3 of the V#: gfx9's data format; gfx10+ also the raw range check
 * (OOB_SELECT 3, bits 28-29) */
#if defined(__gfx90a__) || defined(__gfx942__)
#define RSRC_FLAGS 0x27000
#else
#define RSRC_FLAGS 0x31014000
#endif

extern "C" __global__ void buf_copy(float *out, const float *in, int n, int skip)
{
	unsigned t = bid_x() * bdim_x() + tid_x();
	__amdgpu_buffer_rsrc_t a = __builtin_amdgcn_make_buffer_rsrc((void *)in, 0, n * 4, RSRC_FLAGS);
	__amdgpu_buffer_rsrc_t b = __builtin_amdgcn_make_buffer_rsrc((void *)out, 0, n * 4, RSRC_FLAGS);
	float x = __builtin_amdgcn_raw_buffer_load_b32(a, t * 4, 0, 0);
	float y = __builtin_amdgcn_raw_buffer_load_b32(a, t * 4 + 16, 0, 0);
	float z = __builtin_amdgcn_raw_buffer_load_b32(a, 8, 0, 0);
	float s = __builtin_amdgcn_raw_buffer_load_b32(a, t * 4, skip, 0);
	__builtin_amdgcn_raw_buffer_store_b32(x + y + z + s, b, t * 4, 0, 0);
}
