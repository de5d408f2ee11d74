/* fakecuda: function attributes. Every attribute the setters accept
 * (cuFuncSetAttribute, cuKernelSetAttribute, cuFuncSetCacheConfig,
 * cuKernelSetCacheConfig, cuFuncSetSharedMemConfig) is stored per function
 * and read back by the getters; a launch asking for more than 48 KB of
 * dynamic shared memory fails with CUDA_ERROR_INVALID_VALUE (error 1)
 * unless MAX_DYNAMIC_SHARED_SIZE_BYTES was set at least that high on the
 * very function launched, as on the GPU: a probed copy that did not get the
 * application's attribute fails exactly like there. The fake's CUkernel is
 * its function, so the kernel and function setters share one store.
 *
 * For the tests: fakecuda_probed_attr() reports what the last probed copy
 * launched had (so a test sees every attribute arrive on the copy);
 * fakecuda_set_attr_unseen() sets an attribute behind the hook's back (as a
 * path it does not watch would); FAKECUDA_KERNEL_ATTR=strict makes
 * cuFuncGetAttribute refuse a library kernel (a CUkernel), as the real
 * driver does, so the hook must ask cuKernelGetAttribute. */
#include <stdlib.h>
#include <string.h>
#include "fake.h"

#define FAKE_SMEM_OPTIN_MAX (227 * 1024) /* an H100's opt-in limit per block */

static struct fake_func fake_last_probed; /* copy of the last probed copy launched */
static unsigned long fake_probed_launches;

static int fake_settable(CUfunction_attribute a)
{
	switch (a) {
	case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
	case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
	case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
	case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
	case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
	case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
	case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
		return 1;
	default:
		return 0;
	}
}

static int fake_attr_value(const struct fake_func *fn, CUfunction_attribute a)
{
	if (fake_settable(a) && fn->attr_set[a])
		return fn->attr[a];
	switch (a) {
	case CU_FUNC_ATTRIBUTE_NUM_REGS: return fake_regs(fn);
	case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: return 1024;
	case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: return FAKE_SMEM_DEFAULT;
	case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: return -1;
	default: return 0;
	}
}

static CUresult fake_attr_store(struct fake_func *fn, CUfunction_attribute a, int v)
{
	if (!fn || a < 0 || a >= CU_FUNC_ATTRIBUTE_MAX || !fake_settable(a))
		return CUDA_ERROR_INVALID_VALUE;
	if (fake_module_alive(fn->mod, "a function (setting an attribute)") != CUDA_SUCCESS)
		return CUDA_ERROR_INVALID_HANDLE;
	if (a == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES && (v < 0 || v > FAKE_SMEM_OPTIN_MAX))
		return CUDA_ERROR_INVALID_VALUE;
	if (a == CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT && (v < -1 || v > 100))
		return CUDA_ERROR_INVALID_VALUE;
	fn->attr[a] = v;
	fn->attr_set[a] = 1;
	return CUDA_SUCCESS;
}

static int fake_kernel_strict(const struct fake_func *fn)
{
	const char *v = getenv("FAKECUDA_KERNEL_ATTR");
	return fn->mod && fn->mod->is_library && v && strcmp(v, "strict") == 0;
}

FAKE_EXPORT CUresult cuFuncLoad(CUfunction f)
{
	struct fake_func *fn = fake_fn(f);
	return fn && fake_module_alive(fn->mod, "cuFuncLoad") == CUDA_SUCCESS ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

FAKE_EXPORT CUresult cuFuncGetAttribute(int *v, CUfunction_attribute a, CUfunction f)
{
	struct fake_func *fn = fake_fn(f);
	if (!fn || a < 0 || a >= CU_FUNC_ATTRIBUTE_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	if (fake_kernel_strict(fn))
		return CUDA_ERROR_INVALID_HANDLE;
	if (fake_module_alive(fn->mod, "cuFuncGetAttribute") != CUDA_SUCCESS)
		return CUDA_ERROR_INVALID_HANDLE;
	*v = fake_attr_value(fn, a);
	return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int v)
{
	return fake_attr_store(fake_fn(f), a, v);
}

FAKE_EXPORT CUresult cuKernelGetAttribute(int *v, CUfunction_attribute a, CUkernel k, CUdevice d)
{
	struct fake_func *fn = fake_fn(k);
	if (!fake_valid_device(d))
		return CUDA_ERROR_INVALID_DEVICE;
	if (!fn || a < 0 || a >= CU_FUNC_ATTRIBUTE_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	*v = fake_attr_value(fn, a);
	return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuKernelSetAttribute(CUfunction_attribute a, int v, CUkernel k, CUdevice d)
{
	if (!fake_valid_device(d))
		return CUDA_ERROR_INVALID_DEVICE;
	return fake_attr_store(fake_fn(k), a, v);
}

FAKE_EXPORT CUresult cuFuncSetCacheConfig(CUfunction f, CUfunc_cache c)
{
	struct fake_func *fn = fake_fn(f);
	if (!fn || c < CU_FUNC_CACHE_PREFER_NONE || c > CU_FUNC_CACHE_PREFER_EQUAL)
		return CUDA_ERROR_INVALID_VALUE;
	if (fake_module_alive(fn->mod, "cuFuncSetCacheConfig") != CUDA_SUCCESS)
		return CUDA_ERROR_INVALID_HANDLE;
	fn->cache_config = (int)c;
	return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuKernelSetCacheConfig(CUkernel k, CUfunc_cache c, CUdevice d)
{
	if (!fake_valid_device(d))
		return CUDA_ERROR_INVALID_DEVICE;
	return cuFuncSetCacheConfig((CUfunction)k, c);
}

FAKE_EXPORT CUresult cuFuncSetSharedMemConfig(CUfunction f, CUsharedconfig c)
{
	struct fake_func *fn = fake_fn(f);
	if (!fn || c < CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE || c > CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE)
		return CUDA_ERROR_INVALID_VALUE;
	if (fake_module_alive(fn->mod, "cuFuncSetSharedMemConfig") != CUDA_SUCCESS)
		return CUDA_ERROR_INVALID_HANDLE;
	fn->smem_config = (int)c;
	return CUDA_SUCCESS;
}

CUresult fake_smem_ok(const struct fake_func *fn, unsigned smem)
{
	return smem > (unsigned)fake_attr_value(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
		       ? CUDA_ERROR_INVALID_VALUE
		       : CUDA_SUCCESS;
}

void fake_attr_note_probed(const struct fake_func *fn)
{
	pthread_mutex_lock(&fake_lock);
	fake_last_probed = *fn;
	fake_probed_launches++;
	pthread_mutex_unlock(&fake_lock);
}

/* The last probed copy launched: attribute `a` (a CUfunction_attribute),
 * or its cache config (a = -1) or shared memory config (a = -2). */
FAKE_EXPORT int fakecuda_probed_attr(int a)
{
	pthread_mutex_lock(&fake_lock);
	int v = a == -1 ? fake_last_probed.cache_config
		: a == -2 ? fake_last_probed.smem_config
		: a >= 0 && a < CU_FUNC_ATTRIBUTE_MAX ? fake_attr_value(&fake_last_probed, (CUfunction_attribute)a) : 0;
	pthread_mutex_unlock(&fake_lock);
	return v;
}

FAKE_EXPORT unsigned long fakecuda_probed_launches(void)
{
	pthread_mutex_lock(&fake_lock);
	unsigned long n = fake_probed_launches;
	pthread_mutex_unlock(&fake_lock);
	return n;
}

/* What a setter the hook does not see would do (a path it does not hook). */
FAKE_EXPORT CUresult fakecuda_set_attr_unseen(CUfunction f, CUfunction_attribute a, int v)
{
	return fake_attr_store(fake_fn(f), a, v);
}
