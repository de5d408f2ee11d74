/* Function attributes and probed copies. A probed copy is a function of its
 * own: what the application set on the original (more than 48 KB of
 * dynamic shared memory, the shared memory carveout, cluster dimensions and
 * scheduling, the cache and shared memory bank configuration) must be set
 * on the copy too, or the probed launch fails where the original works
 * (CUDA error 1 for more than 48 KB of dynamic shared memory).
 *
 * The setters are hooked: forwarded, then, when the driver accepted the
 * value, recorded in the kernel's record (struct hook_attrs) whatever handle
 * they came on: a CUfunction, a CUkernel, or a CUkernel passed as a
 * CUfunction (the 13.0 runtime's cudaFuncSetAttribute), all of which reach
 * the same record. hook_attr_apply gives a probed copy what was recorded
 * since it last looked, and on its first call also what the original has
 * that the copy lacks (set before the hook saw the handle, or through a
 * path it does not watch). One record per kernel, not per device: a value
 * set for one device stands for all (what applications do). */
#include "common/cause.h"
#include "hook/cuda/hook_cuda.h"
#include "hook/cuda/hook_cuda_api.h"
#include "hook/hook_log.h"
#include "hook/cuda/hook_table.h"

/* The settable function attributes, by record slot. */
static const struct {
	CUfunction_attribute attr;
	const char *name;
} attr_func[] = {
	[HOOK_ATTR_MAX_DYN_SMEM] = { CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, "MAX_DYNAMIC_SHARED_SIZE_BYTES" },
	[HOOK_ATTR_CARVEOUT] = { CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, "PREFERRED_SHARED_MEMORY_CARVEOUT" },
	[HOOK_ATTR_CLUSTER_W] = { CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, "REQUIRED_CLUSTER_WIDTH" },
	[HOOK_ATTR_CLUSTER_H] = { CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT, "REQUIRED_CLUSTER_HEIGHT" },
	[HOOK_ATTR_CLUSTER_D] = { CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH, "REQUIRED_CLUSTER_DEPTH" },
	[HOOK_ATTR_NON_PORTABLE] = { CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED,
				     "NON_PORTABLE_CLUSTER_SIZE_ALLOWED" },
	[HOOK_ATTR_SCHED_POLICY] = { CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE,
				     "CLUSTER_SCHEDULING_POLICY_PREFERENCE" },
	[HOOK_ATTR_CACHE_CONFIG] = { CU_FUNC_ATTRIBUTE_MAX, "cache config" },
	[HOOK_ATTR_SMEM_CONFIG] = { CU_FUNC_ATTRIBUTE_MAX, "shared memory config" },
};

/* The record slot of a function attribute; -1 for a read-only one. */
static int attr_slot(CUfunction_attribute a)
{
	for (int i = 0; i < HOOK_ATTR_N; i++)
		if (attr_func[i].attr == a && a != CU_FUNC_ATTRIBUTE_MAX)
			return i;
	return -1;
}

static void attr_record(void *handle, int slot, int v)
{
	if (slot < 0)
		return;
	if (hook_registry_attr_set(handle, (enum hook_attr_id)slot, v) < 0)
		hook_log("%s = %d on unknown handle %p: not recorded (read from the original instead)",
			 attr_func[slot].name, v, handle);
}

/* ---- the hooked setters: forward, then record what the driver took ---- */

CUresult hook_cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int v)
{
	CUresult rc = HOOK_REAL(cuFuncSetAttribute)(f, a, v);
	if (rc == CUDA_SUCCESS)
		attr_record(f, attr_slot(a), v);
	return rc;
}

CUresult hook_cuKernelSetAttribute(CUfunction_attribute a, int v, CUkernel k, CUdevice dev)
{
	CUresult rc = HOOK_REAL(cuKernelSetAttribute)(a, v, k, dev);
	if (rc == CUDA_SUCCESS)
		attr_record(k, attr_slot(a), v);
	return rc;
}

CUresult hook_cuFuncSetCacheConfig(CUfunction f, CUfunc_cache c)
{
	CUresult rc = HOOK_REAL(cuFuncSetCacheConfig)(f, c);
	if (rc == CUDA_SUCCESS)
		attr_record(f, HOOK_ATTR_CACHE_CONFIG, (int)c);
	return rc;
}

CUresult hook_cuKernelSetCacheConfig(CUkernel k, CUfunc_cache c, CUdevice dev)
{
	CUresult rc = HOOK_REAL(cuKernelSetCacheConfig)(k, c, dev);
	if (rc == CUDA_SUCCESS)
		attr_record(k, HOOK_ATTR_CACHE_CONFIG, (int)c);
	return rc;
}

CUresult hook_cuFuncSetSharedMemConfig(CUfunction f, CUsharedconfig c)
{
	CUresult rc = HOOK_REAL(cuFuncSetSharedMemConfig)(f, c);
	if (rc == CUDA_SUCCESS)
		attr_record(f, HOOK_ATTR_SMEM_CONFIG, (int)c);
	return rc;
}

/* ---- onto a probed copy ---- */

/* The original's value: a CUfunction, or a CUkernel (the function attribute
 * query refuses one) asked for the current context's device. */
static int attr_get_orig(CUfunction orig, CUfunction_attribute a, int *v)
{
	CUdevice dev;
	if (cu.cuFuncGetAttribute && cu.cuFuncGetAttribute(v, a, orig) == CUDA_SUCCESS)
		return 0;
	if (cu.cuKernelGetAttribute && cu.cuCtxGetDevice && cu.cuCtxGetDevice(&dev) == CUDA_SUCCESS &&
	    cu.cuKernelGetAttribute(v, a, (CUkernel)orig, dev) == CUDA_SUCCESS)
		return 0;
	return -1;
}

static int attr_set(CUfunction probed, int slot, int v, char **cause)
{
	CUresult rc;
	if (slot == HOOK_ATTR_CACHE_CONFIG)
		rc = cu.cuFuncSetCacheConfig ? cu.cuFuncSetCacheConfig(probed, (CUfunc_cache)v) : CUDA_ERROR_NOT_FOUND;
	else if (slot == HOOK_ATTR_SMEM_CONFIG)
		rc = cu.cuFuncSetSharedMemConfig ? cu.cuFuncSetSharedMemConfig(probed, (CUsharedconfig)v)
						 : CUDA_ERROR_NOT_FOUND;
	else
		rc = cu.cuFuncSetAttribute ? cu.cuFuncSetAttribute(probed, attr_func[slot].attr, v) : CUDA_ERROR_NOT_FOUND;
	if (rc != CUDA_SUCCESS)
		return cause_set(cause, "setting %s = %d on the probed copy failed (CUDA error %d)", attr_func[slot].name,
				 v, (int)rc);
	return 0;
}

/* First call: what the original has and the copy lacks, for the function
 * attributes the record does not hold (it wins: it saw every handle). A
 * value either side cannot report is left alone. */
static int attr_copy_orig(const struct hook_kernel *k, CUfunction orig, CUfunction probed, char **cause)
{
	for (int i = 0; i < HOOK_ATTR_N; i++) {
		int want = 0, have = 0;
		if (attr_func[i].attr == CU_FUNC_ATTRIBUTE_MAX ||
		    (k && __atomic_load_n(&k->attrs.slot[i], __ATOMIC_RELAXED) != 0))
			continue;
		if (!cu.cuFuncGetAttribute || attr_get_orig(orig, attr_func[i].attr, &want) < 0 ||
		    cu.cuFuncGetAttribute(&have, attr_func[i].attr, probed) != CUDA_SUCCESS || want == have)
			continue;
		if (attr_set(probed, i, want, cause) < 0)
			return -1;
	}
	return 0;
}

int hook_attr_apply(struct hook_kernel *k, CUfunction orig, CUfunction probed, uint64_t *applied_gen, char **cause)
{
	uint64_t done = __atomic_load_n(applied_gen, __ATOMIC_ACQUIRE);
	uint64_t gen = k ? __atomic_load_n(&k->attrs.gen, __ATOMIC_ACQUIRE) : 0;
	/* *applied_gen: 0 before the first call, then 1 + the generation applied */
	if (done == gen + 1)
		return 0;
	if (done == 0 && attr_copy_orig(k, orig, probed, cause) < 0)
		return -1;
	for (int i = 0; k && i < HOOK_ATTR_N; i++) {
		uint64_t s = __atomic_load_n(&k->attrs.slot[i], __ATOMIC_RELAXED);
		uint64_t g = s >> 32;
		if (g == 0 || g + 1 <= done)
			continue;
		if (attr_set(probed, i, (int)(uint32_t)s, cause) < 0)
			return -1;
	}
	__atomic_store_n(applied_gen, gen + 1, __ATOMIC_RELEASE);
	return 0;
}
