/* Which form of a probed kernel to launch (engine.h, ENGINE_ADDR_AT_EXIT):
 * map addresses kept from the entry (the default: exits are stores alone,
 * so warps leave as soon as the kernel's work is done) or computed at each
 * exit (a few registers fewer through the whole kernel). Those registers
 * matter only where they cost the kernel resident blocks or spills, so
 * the entry form is measured against the original at the first probed
 * launch's block size and dynamic shared memory, and the exit form is
 * built only when the entry form fits fewer blocks per SM or spills more. */
#include "hook/cuda/hook_cuda.h"

#include "hook/cuda/hook_cuda_api.h"

/* One attribute of f, a CUfunction or a CUkernel the runtime passed as one
 * (function queries refuse those: the kernel API answers for the current
 * device). -1 when unknown. */
int hook_func_attr(CUfunction f, CUfunction_attribute a)
{
	int v = -1;
	CUdevice dev;
	if (cu.cuFuncGetAttribute && cu.cuFuncGetAttribute(&v, a, f) == CUDA_SUCCESS)
		return v;
	if (cu.cuKernelGetAttribute && cu.cuCtxGetDevice && cu.cuCtxGetDevice(&dev) == CUDA_SUCCESS &&
	    cu.cuKernelGetAttribute(&v, a, (CUkernel)f, dev) == CUDA_SUCCESS)
		return v;
	return -1;
}

void hook_place_fit(CUfunction f, unsigned threads, unsigned smem, struct hook_fit *fit)
{
	fit->occ = -1;
	if (cu.cuOccupancyMaxActiveBlocksPerMultiprocessor &&
	    cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(&fit->occ, f, (int)threads, smem) != CUDA_SUCCESS)
		fit->occ = -1;
	fit->local = hook_func_attr(f, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
}

/* Does a cost the kernel more than b: fewer blocks per SM, or as many and
 * more local memory per thread (spills)? Unknown figures compare as equal. */
int hook_place_worse(const struct hook_fit *a, const struct hook_fit *b)
{
	if (a->occ >= 0 && b->occ >= 0 && a->occ != b->occ)
		return a->occ < b->occ;
	return a->local >= 0 && b->local >= 0 && a->local > b->local;
}
