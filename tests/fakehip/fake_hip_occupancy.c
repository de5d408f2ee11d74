/* The fake's occupancy: how many workgroups of a kernel a CU holds at
 * once, from its metadata (.vgpr_count, .group_segment_fixed_size) on a
 * gfx90a-like CU: 4 SIMDs of at most 8 waves each, FAKEHIP_VGPRS VGPRs per
 * lane of a SIMD (512 by default, gfx90a's; a test sets fewer so that the
 * few VGPRs a probe adds change the count), allocated in granules of 8,
 * 64 KiB of LDS and 2048 work-items per CU. A model, not AMD's exact rules
 * (those are unproven here): what matters is that a copy with more VGPRs
 * can fit fewer workgroups. hipModuleOccupancyMaxActiveBlocksPerMultiprocessor
 * answers with it, and every cooperative launch refuses a grid that would
 * not be co-resident on FH_CUS CUs, as ROCm does. */
#include <stdlib.h>
#include "fake_hip.h"

static unsigned vgpr_file(void)
{
	const char *e = getenv("FAKEHIP_VGPRS");
	unsigned v = e ? (unsigned)strtoul(e, NULL, 10) : 0;
	return v ? v : 512;
}

static unsigned min_u(unsigned a, unsigned b)
{
	return a < b ? a : b;
}

int fh_occupancy(const struct fh_kernel *k, unsigned threads, size_t smem)
{
	if (!threads || threads > 1024 || k->wave <= 0)
		return 0;
	unsigned alloc = ((k->vgprs ? k->vgprs : 1) + 7) & ~7u;
	unsigned per_simd = min_u(8, vgpr_file() / alloc);
	unsigned waves = (threads + (unsigned)k->wave - 1) / (unsigned)k->wave;
	size_t lds = k->lds + smem;
	unsigned by_lds = lds ? (unsigned)min_u(2048, lds > 65536 ? 0 : (unsigned)(65536 / lds)) : 2048;
	return (int)min_u(min_u(4 * per_simd / waves, 2048 / threads), by_lds);
}

hipError_t fh_coop_check(const struct fh_kernel *k, const unsigned grid[3], const unsigned block[3], size_t smem)
{
	uint64_t blocks = (uint64_t)grid[0] * grid[1] * grid[2];
	uint64_t fit = (uint64_t)fh_occupancy(k, block[0] * block[1] * block[2], smem) * FH_CUS;
	return blocks > fit ? hipErrorCooperativeLaunchTooLarge : hipSuccess;
}

hipError_t hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(int *n, hipFunction_t f, int threads, size_t smem)
{
	if (!n || !f || threads <= 0)
		return hipErrorInvalidValue;
	*n = fh_occupancy(f->k, (unsigned)threads, smem);
	return hipSuccess;
}
