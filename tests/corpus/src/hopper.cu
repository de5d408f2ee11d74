// Hopper (sm_90a): one wgmma m64n8k16 per warpgroup through inline PTX with
// fence / commit_group / wait_group, and a TMA-style bulk copy global->shared
// completed through an mbarrier. Descriptors are simplified (the corpus only
// needs the instructions to assemble).
#include <cstdint>

__global__ void __launch_bounds__(128) wgmma_m64n8k16(const uint64_t *descs, float *out)
{
	float d[4] = {0.f, 0.f, 0.f, 0.f};
	uint64_t desc_a = descs[0], desc_b = descs[1];
	asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
	asm volatile(
		"{\n"
		".reg .pred p;\n"
		"setp.ne.b32 p, %6, 0;\n"
		"wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 "
		"{%0, %1, %2, %3}, %4, %5, p, 1, 1, 0, 0;\n"
		"}\n"
		: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
		: "l"(desc_a), "l"(desc_b), "r"(1));
	asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
	asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
	int t = threadIdx.x;
	for (int k = 0; k < 4; ++k)
		out[t * 4 + k] = d[k];
}

__global__ void bulk_copy(const float4 *src, float *out)
{
	__shared__ alignas(128) float4 buf[256];
	__shared__ alignas(8) uint64_t bar;
	unsigned bar_addr = (unsigned)__cvta_generic_to_shared(&bar);
	unsigned buf_addr = (unsigned)__cvta_generic_to_shared(buf);
	const unsigned bytes = sizeof buf;
	if (threadIdx.x == 0) {
		asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(bar_addr));
		asm volatile("fence.proxy.async.shared::cta;");
		asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(bar_addr), "r"(bytes));
		asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
			     :: "r"(buf_addr), "l"(src + blockIdx.x * 256), "r"(bytes), "r"(bar_addr) : "memory");
	}
	__syncthreads();
	asm volatile(
		"{\n"
		".reg .pred done;\n"
		"WAIT_%=:\n"
		"mbarrier.try_wait.parity.shared::cta.b64 done, [%0], 0;\n"
		"@!done bra WAIT_%=;\n"
		"}\n" :: "r"(bar_addr) : "memory");
	float4 v = buf[threadIdx.x];
	out[blockIdx.x * blockDim.x + threadIdx.x] = v.x + v.y + v.z + v.w;
}

__global__ void __cluster_dims__(2, 1, 1) cluster_kernel(int *out)
{
	out[blockIdx.x * blockDim.x + threadIdx.x] = blockIdx.x;
}
