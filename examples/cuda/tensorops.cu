/* Tensor-core kernels for checking the tensorop_count and gmem_bytes probes
 * against Nsight Compute (tests/gpu/ncu_probes.sh). Needs sm_80 or newer.
 *
 *   to_wmma_gemm  C = A * B with wmma m16n16k16 (f16 in, f32 out): one warp
 *                 per 16x16 tile of C; its A and B tiles are staged in shared
 *                 memory with 16-byte ld.global (fully coalesced 32-byte
 *                 rows), so every global byte is a plain ld.global.
 *   to_mma_sync   the same product with inline-PTX mma.sync m16n8k16: one
 *                 warp per 16x8 tile; tiles copied to shared memory with
 *                 cp.async.cg (16 bytes), so global loads are async copies.
 *
 * Per launch (M = N = K = 256): to_wmma_gemm runs 256 warps x 16 k-steps =
 * 4096 wmma.mma (8192 SASS HMMA.16816: two per m16n16k16), loads 4 MiB of
 * tiles; to_mma_sync runs 512 warps x 16 = 8192 mma.sync (one HMMA each),
 * copies 6 MiB with cp.async; each stores 256 KiB of C.
 * Inputs are small integers, so every product and sum is exact: the result
 * is compared bit for bit with a CPU reference. Usage: tensorops [launches] (3). */
#include <cuda_fp16.h>
#include <mma.h>
#include <vector>
#include "common.h"

static const int M = 256, N = 256, K = 256;
static const int WARPS = 4; /* per block */

/* A: M x K row-major; B: K x N row-major; C: M x N row-major (f32). */
__global__ void to_wmma_gemm(const __half *A, const __half *B, float *C)
{
	using namespace nvcuda;
	__shared__ __align__(32) __half sa[WARPS][16 * 16];
	__shared__ __align__(32) __half sb[WARPS][16 * 16];
	int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
	int tile = blockIdx.x * WARPS + warp;
	int tm = tile / (N / 16), tn = tile % (N / 16);
	/* each lane moves one 16-byte chunk of each 16x16 tile: row lane/2, half lane%2 */
	int r = lane / 2, c8 = (lane % 2) * 8;
	wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
	wmma::fill_fragment(acc, 0.0f);
	for (int k0 = 0; k0 < K; k0 += 16) {
		const uint4 *ga = (const uint4 *)(A + (size_t)(tm * 16 + r) * K + k0 + c8);
		const uint4 *gb = (const uint4 *)(B + (size_t)(k0 + r) * N + tn * 16 + c8);
		*(uint4 *)&sa[warp][r * 16 + c8] = *ga;
		*(uint4 *)&sb[warp][r * 16 + c8] = *gb;
		__syncwarp();
		wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
		wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> fb;
		wmma::load_matrix_sync(fa, sa[warp], 16);
		wmma::load_matrix_sync(fb, sb[warp], 16);
		wmma::mma_sync(acc, fa, fb, acc);
		__syncwarp();
	}
	/* through shared memory, so the stores are plain st.global (a wmma.store
	 * to global memory would not be counted by gmem_bytes) */
	__shared__ __align__(32) float sc[WARPS][16 * 16];
	wmma::store_matrix_sync(sc[warp], acc, 16, wmma::mem_row_major);
	__syncwarp();
	float4 *gc = (float4 *)(C + (size_t)(tm * 16 + r) * N + tn * 16 + c8);
	gc[0] = *(const float4 *)&sc[warp][r * 16 + c8];
	gc[1] = *(const float4 *)&sc[warp][r * 16 + c8 + 4];
}

__device__ __forceinline__ void to_cp_async16(void *smem, const void *gmem)
{
	unsigned s = (unsigned)__cvta_generic_to_shared(smem);
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem) : "memory");
}

/* A: M x K row-major; Bt: N x K (B transposed, the "col" operand); C as above.
 * Fragment layouts of mma.m16n8k16 (PTX ISA, "Matrix Fragments for
 * mma.m16n8k16"): g = lane / 4, t = lane % 4; A regs hold rows g, g+8 at
 * columns 2t and 2t+8; B regs hold k = 2t, 2t+8 of column g; C holds rows g,
 * g+8 at columns 2t, 2t+1. */
__global__ void to_mma_sync(const __half *A, const __half *Bt, float *C)
{
	__shared__ __align__(16) __half sa[WARPS][16 * 16];
	__shared__ __align__(16) __half sb[WARPS][8 * 16];
	int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
	int tile = blockIdx.x * WARPS + warp;
	int tm = tile / (N / 8), tn = tile % (N / 8);
	int g = lane / 4, t = lane % 4;
	float d[4] = { 0.0f, 0.0f, 0.0f, 0.0f };
	for (int k0 = 0; k0 < K; k0 += 16) {
		int r = lane / 2, c8 = (lane % 2) * 8;
		to_cp_async16(&sa[warp][r * 16 + c8], A + (size_t)(tm * 16 + r) * K + k0 + c8);
		if (lane < 16)
			to_cp_async16(&sb[warp][r * 16 + c8], Bt + (size_t)(tn * 8 + r) * K + k0 + c8);
		asm volatile("cp.async.commit_group;\n" ::: "memory");
		asm volatile("cp.async.wait_group 0;\n" ::: "memory");
		__syncwarp();
		const __half *pa = sa[warp], *pb = sb[warp];
		unsigned a0 = *(const unsigned *)&pa[g * 16 + 2 * t];
		unsigned a1 = *(const unsigned *)&pa[(g + 8) * 16 + 2 * t];
		unsigned a2 = *(const unsigned *)&pa[g * 16 + 2 * t + 8];
		unsigned a3 = *(const unsigned *)&pa[(g + 8) * 16 + 2 * t + 8];
		unsigned b0 = *(const unsigned *)&pb[g * 16 + 2 * t];
		unsigned b1 = *(const unsigned *)&pb[g * 16 + 2 * t + 8];
		asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
			     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
			     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
			     : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
		__syncwarp();
	}
	float *c = C + (size_t)(tm * 16 + g) * N + tn * 8 + 2 * t;
	*(float2 *)c = make_float2(d[0], d[1]);
	*(float2 *)(c + 8 * N) = make_float2(d[2], d[3]);
}

/* Every launch is compared; the first one's checksum is printed. */
static int check(const char *what, const std::vector<float> &got, const std::vector<float> &want, int print)
{
	for (size_t i = 0; i < want.size(); i++)
		if (got[i] != want[i])
			return report_mismatch(what, i, got[i], want[i]);
	if (print)
		print_checksum(what, got.data(), got.size() * sizeof(float));
	return 0;
}

int main(int argc, char **argv)
{
	long launches = arg_long(argc, argv, 1, 3);
	int dev;
	cudaDeviceProp prop;
	CK(cudaGetDevice(&dev));
	CK(cudaGetDeviceProperties(&prop, dev));
	if (prop.major < 8) {
		fprintf(stderr, "tensorops needs sm_80 or newer (device is sm_%d%d)\n", prop.major, prop.minor);
		return 1;
	}
	/* values in -2..2: products and 256-term sums are exact in f16 x f16 -> f32 */
	std::vector<__half> ha((size_t)M * K), hb((size_t)K * N), hbt((size_t)N * K);
	std::vector<float> fa((size_t)M * K), fb((size_t)K * N), want((size_t)M * N, 0.0f);
	for (int i = 0; i < M; i++)
		for (int k = 0; k < K; k++) {
			fa[(size_t)i * K + k] = (float)((i * 3 + k * 5) % 5 - 2);
			ha[(size_t)i * K + k] = __float2half(fa[(size_t)i * K + k]);
		}
	for (int k = 0; k < K; k++)
		for (int j = 0; j < N; j++) {
			fb[(size_t)k * N + j] = (float)((k * 7 + j * 3) % 5 - 2);
			hb[(size_t)k * N + j] = __float2half(fb[(size_t)k * N + j]);
			hbt[(size_t)j * K + k] = hb[(size_t)k * N + j];
		}
	for (int i = 0; i < M; i++)
		for (int k = 0; k < K; k++)
			for (int j = 0; j < N; j++)
				want[(size_t)i * N + j] += fa[(size_t)i * K + k] * fb[(size_t)k * N + j];

	__half *da, *db, *dbt;
	float *dc;
	CK(cudaMalloc(&da, ha.size() * sizeof(__half)));
	CK(cudaMalloc(&db, hb.size() * sizeof(__half)));
	CK(cudaMalloc(&dbt, hbt.size() * sizeof(__half)));
	CK(cudaMalloc(&dc, want.size() * sizeof(float)));
	CK(cudaMemcpy(da, ha.data(), ha.size() * sizeof(__half), cudaMemcpyHostToDevice));
	CK(cudaMemcpy(db, hb.data(), hb.size() * sizeof(__half), cudaMemcpyHostToDevice));
	CK(cudaMemcpy(dbt, hbt.data(), hbt.size() * sizeof(__half), cudaMemcpyHostToDevice));
	std::vector<float> got(want.size());
	for (int kind = 0; kind < 2; kind++) {
		const char *name = kind == 0 ? "to_wmma_gemm" : "to_mma_sync";
		for (long l = 0; l < launches; l++) {
			poison_device(dc, want.size() * sizeof(float));
			if (kind == 0)
				to_wmma_gemm<<<(M / 16) * (N / 16) / WARPS, 32 * WARPS>>>(da, db, dc);
			else
				to_mma_sync<<<(M / 16) * (N / 8) / WARPS, 32 * WARPS>>>(da, dbt, dc);
			CK_LAUNCH();
			CK(cudaMemcpy(got.data(), dc, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
			if (check(name, got, want, l == 0))
				return 1;
		}
	}
	printf("tensorops ok launches=%ld\n", launches);
	CK(cudaFree(da));
	CK(cudaFree(db));
	CK(cudaFree(dbt));
	CK(cudaFree(dc));
	return 0;
}
