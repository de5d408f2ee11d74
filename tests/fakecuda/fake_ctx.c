/* fakecuda: context destruction. The fake has one context address, so a
 * context destroyed and created again comes back at the same address, as
 * a real driver's may: what the hook kept of the old one must not be used
 * with the new one. cuCtxDestroy, a primary context reset and the last
 * primary release kill every event, stream and module (and their
 * functions) made before; using one afterwards answers
 * CUDA_ERROR_INVALID_HANDLE, or aborts under FAKECUDA_STRICT_CTX=1 so a
 * hook that keeps a dead handle fails its test loudly. So does creating
 * anything in a thread whose current context was destroyed (a thread that
 * did not set the new context current because it has the old address).
 * Libraries (cuLibraryLoadData) are context-independent and survive. */
#include <stdio.h>
#include <stdlib.h>
#include "fake.h"

unsigned fake_ctx_gen;
__thread unsigned fake_current_gen;
static int fake_primary_refs;
static int fake_primary_active;

CUresult fake_ctx_alive(unsigned gen, const char *what)
{
	if (gen == __atomic_load_n(&fake_ctx_gen, __ATOMIC_ACQUIRE))
		return CUDA_SUCCESS;
	const char *strict = getenv("FAKECUDA_STRICT_CTX");
	if (strict && *strict == '1') {
		fprintf(stderr, "fakecuda: %s of a destroyed context used\n", what);
		abort();
	}
	return CUDA_ERROR_INVALID_HANDLE;
}

CUresult fake_current_alive(const char *what)
{
	if (fake_current_gen == 0) /* no current context: tolerated */
		return CUDA_SUCCESS;
	return fake_ctx_alive(fake_current_gen - 1, what) == CUDA_SUCCESS ? CUDA_SUCCESS
									  : CUDA_ERROR_CONTEXT_IS_DESTROYED;
}

CUresult fake_module_alive(const struct fake_module *m, const char *what)
{
	if (!m || m->is_library)
		return CUDA_SUCCESS;
	return fake_ctx_alive(m->gen, what);
}

static void fake_ctx_kill(void)
{
	__atomic_add_fetch(&fake_ctx_gen, 1, __ATOMIC_ACQ_REL);
}

FAKE_EXPORT CUresult cuCtxDestroy_v2(CUcontext c)
{
	if (!c)
		return CUDA_ERROR_INVALID_VALUE;
	fake_ctx_kill();
	return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
	if (!fake_valid_device(d))
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&fake_lock);
	fake_primary_refs++;
	fake_primary_active = 1;
	pthread_mutex_unlock(&fake_lock);
	*c = (CUcontext)&fake_ctx_storage[d];
	return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d)
{
	if (!fake_valid_device(d))
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&fake_lock);
	int last = fake_primary_refs > 0 && --fake_primary_refs == 0;
	if (last)
		fake_primary_active = 0;
	pthread_mutex_unlock(&fake_lock);
	if (last)
		fake_ctx_kill();
	return CUDA_SUCCESS;
}

/* The references stay; the context comes back with the next retain. */
FAKE_EXPORT CUresult cuDevicePrimaryCtxReset_v2(CUdevice d)
{
	if (!fake_valid_device(d))
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&fake_lock);
	fake_primary_active = 0;
	pthread_mutex_unlock(&fake_lock);
	fake_ctx_kill();
	return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDevicePrimaryCtxGetState(CUdevice d, unsigned int *flags, int *active)
{
	if (!fake_valid_device(d))
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&fake_lock);
	*active = fake_primary_active;
	pthread_mutex_unlock(&fake_lock);
	*flags = 0;
	return CUDA_SUCCESS;
}
