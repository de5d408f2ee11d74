/* Cooperative HIP launches, probed: every workgroup of one must be
 * resident at once, and the probed copy (more VGPRs, maybe more SGPRs)
 * may fit fewer workgroups per CU than the original. As on CUDA
 * (hook_cuda_probe.c), the runtime is asked: its
 * hipModuleOccupancyMaxActiveBlocksPerMultiprocessor on the probed
 * function reads the probed descriptor's VGPR, SGPR and LDS use against
 * the device's limits (register file per SIMD, wave slots, LDS, which
 * differ per family and wave size), and occupancy x CUs is the rule ROCm
 * applies itself when it refuses a cooperative launch as too large.
 * Computing it from the descriptor here would repeat per-family tables
 * that nothing without an AMD GPU can check. */
#include "common/cause.h"
#include "hook/hip/hook_hip.h"

int hook_hip_coop_fits(const struct hip_launch *l, const struct hook_inst *in, const struct hip_device *dev,
		       char **cause)
{
	const struct hip_plan *p = in->globals;
	uint64_t blocks = (uint64_t)l->grid[0] * l->grid[1] * l->grid[2];
	int threads = (int)(l->block[0] * l->block[1] * l->block[2]), occ = 0, cus = dev->d ? dev->d->sms : 0;
	hipError_t e = HIP_ERROR_NOT_FOUND;
	if (!l->config && !hipr.hipModuleLaunchCooperativeKernel)
		return cause_set(cause, "cooperative launch: the HIP runtime has no hipModuleLaunchCooperativeKernel "
				 "to launch the probed copy with (HIP 5.2 has none)");
	if (hipr.hipModuleOccupancyMaxActiveBlocksPerMultiprocessor)
		e = hipr.hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(&occ, p->func, threads, l->smem);
	if (e != HIP_SUCCESS || cus <= 0)
		return cause_set(cause, "cooperative launch: occupancy of the probed copy unknown (%s)",
				 e != HIP_SUCCESS ? "hipModuleOccupancyMaxActiveBlocksPerMultiprocessor failed"
						  : "the runtime gave no CU count");
	if ((uint64_t)occ * (uint64_t)cus < blocks)
		return cause_set(cause, "cooperative launch: the probed copy (%d VGPRs, the original %d) fits %d "
				 "workgroups per CU x %d CUs, %llu workgroups must be co-resident", in->regs_probed,
				 in->regs_orig, occ, cus, (unsigned long long)blocks);
	return 0;
}
