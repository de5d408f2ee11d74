// Hopper (sm_90a) bulk copies that are not TMA tensor copies, through inline
// PTX (PTX ISA 8.0 / 8.6): global->shared::cluster and global->shared::cta
// with an mbarrier (register size, immediate size, L2 cache hint),
// shared::cta->global with a bulk group, and a bulk reduction into global
// memory. A TMA tensor store rides along (its [tensorMap, {coords}] operand
// has no address: hooks that use ADDR skip it), and a cluster kernel with
// every barrier form the warp_progress probe sees: bar.sync with a register
// operand, __syncwarp (bar.warp.sync) and the cluster barrier.
#include <cooperative_groups.h>
#include <cstdint>

namespace cg = cooperative_groups;

__device__ __forceinline__ unsigned smem_addr(const void *p)
{
	return (unsigned)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ void bar_wait(unsigned bar)
{
	asm volatile(
		"{\n"
		".reg .pred done;\n"
		"WAIT_%=:\n"
		"mbarrier.try_wait.parity.shared::cta.b64 done, [%0], 0;\n"
		"@!done bra WAIT_%=;\n"
		"}\n" :: "r"(bar) : "memory");
}

// global -> shared: the ::cluster form with a size in a register and the
// ::cta form with an immediate size and an L2 cache policy.
__global__ void bulk_load(const float4 *src, float *out, unsigned n_bytes, uint64_t policy)
{
	__shared__ alignas(128) float4 buf[512];
	__shared__ alignas(8) uint64_t bar;
	unsigned b = smem_addr(&bar), s = smem_addr(buf);
	const float4 *blk = src + blockIdx.x * 512;
	if (threadIdx.x == 0) {
		asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b));
		asm volatile("fence.proxy.async.shared::cta;");
		asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"(n_bytes + 4096));
		asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
			     :: "r"(s), "l"(blk), "r"(n_bytes), "r"(b) : "memory");
		asm volatile("cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes.L2::cache_hint "
			     "[%0], [%1], 4096, [%2], %3;"
			     :: "r"(s + 4096), "l"(blk + 256), "r"(b), "l"(policy) : "memory");
	}
	__syncthreads();
	bar_wait(b);
	float4 v = buf[threadIdx.x];
	out[blockIdx.x * blockDim.x + threadIdx.x] = v.x + v.y + v.z + v.w;
}

// shared -> global with a bulk group, then a bulk add-reduction of the same
// tile into a second array.
__global__ void bulk_store(float4 *dst, float *sum, unsigned n_bytes)
{
	__shared__ alignas(128) float4 buf[256];
	int t = threadIdx.x;
	buf[t] = make_float4(t, t + 1, t + 2, t + 3);
	asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
	__syncthreads();
	if (t == 0) {
		asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
			     :: "l"(dst + blockIdx.x * 256), "r"(smem_addr(buf)), "r"(n_bytes) : "memory");
		asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;"
			     :: "l"(sum + blockIdx.x * 1024), "r"(smem_addr(buf)), "r"(n_bytes) : "memory");
		asm volatile("cp.async.bulk.commit_group;");
		asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
	}
	__syncthreads();
	sum[blockIdx.x] += 1.f;
}

// A TMA tensor store: tmap is the generic address of a CUtensorMap.
__global__ void tensor_store(uint64_t tmap, float *out)
{
	__shared__ alignas(128) float buf[64];
	int t = threadIdx.x;
	buf[t] = t;
	asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
	__syncthreads();
	if (t == 0) {
		asm volatile("cp.async.bulk.tensor.1d.global.shared::cta.bulk_group [%0, {%1}], [%2];"
			     :: "l"(tmap), "r"((int)blockIdx.x * 64), "r"(smem_addr(buf)) : "memory");
		asm volatile("cp.async.bulk.commit_group;");
		asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
	}
	out[blockIdx.x * blockDim.x + t] = buf[t];
}

// Barriers: __syncthreads (bar.sync 0), a named barrier with register
// operands, __syncwarp (bar.warp.sync) and the cluster barrier.
__global__ void __cluster_dims__(2, 1, 1) barriers(float *out, unsigned id)
{
	__shared__ float s[128];
	int t = threadIdx.x;
	s[t] = t;
	__syncthreads();
	float v = s[(t + 1) & 127];
	__syncwarp();
	if (t < 64)
		asm volatile("bar.sync %0, %1;" :: "r"(id), "r"(64) : "memory");
	cg::this_cluster().sync();
	out[blockIdx.x * blockDim.x + t] = v + s[(t + 2) & 127];
}
