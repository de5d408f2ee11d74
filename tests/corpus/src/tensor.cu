// Tensor cores: wmma (sm_70+ API, built for sm_80) and inline-asm mma.sync.
#include <mma.h>
#include <cuda_fp16.h>
using namespace nvcuda;

__global__ void wmma_16x16(const half *a, const half *b, float *c)
{
	wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
	wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
	wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
	wmma::fill_fragment(fc, 0.f);
	wmma::load_matrix_sync(fa, a, 16);
	wmma::load_matrix_sync(fb, b, 16);
	wmma::mma_sync(fc, fa, fb, fc);
	wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
}

// One m16n8k16 f16 MMA per warp through inline PTX (register layout simplified).
__global__ void mma_sync_m16n8k16(const unsigned *a, const unsigned *b, float *d)
{
	int lane = threadIdx.x & 31;
	unsigned a0 = a[lane * 4 + 0], a1 = a[lane * 4 + 1], a2 = a[lane * 4 + 2], a3 = a[lane * 4 + 3];
	unsigned b0 = b[lane * 2 + 0], b1 = b[lane * 2 + 1];
	float d0 = 0.f, d1 = 0.f, d2 = 0.f, d3 = 0.f;
	asm volatile(
		"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
		"{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
		: "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
		: "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
	d[lane * 4 + 0] = d0;
	d[lane * 4 + 1] = d1;
	d[lane * 4 + 2] = d2;
	d[lane * 4 + 3] = d3;
}
