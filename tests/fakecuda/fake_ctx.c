/* fakecuda: context destruction. The fake has one context address, so a
 * context destroyed and created again comes back at the same address, as
 * a real driver's may: what the hook kept of the old one must not be used
 * with the new one. */
#include <stdio.h>
#include <stdlib.h>
#include "fake.h"

unsigned fake_ctx_gen;

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

FAKE_EXPORT CUresult cuCtxDestroy_v2(CUcontext c)
{
	(void)c;
	__atomic_add_fetch(&fake_ctx_gen, 1, __ATOMIC_ACQ_REL);
	return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDevicePrimaryCtxReset_v2(CUdevice d)
{
	(void)d;
	return cuCtxDestroy_v2(NULL);
}
