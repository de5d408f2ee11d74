/* Context teardown: cuCtxDestroy and the primary context's reset and last
 * release take every allocation, event, stream and module of the context
 * with them. Before one goes, the hook finishes the probed launches still
 * queued (their map buffers live in it) and stops the timing thread from
 * querying its events; once it is gone, the hook forgets its pools, events,
 * copy stream and instrumented copies, exactly once, so a context created
 * later (perhaps at the same address) starts clean. */
#include "hook/hook_cuda.h"
#include "hook/hook_cuda_api.h"
#include "hook/hook_cuda_results.h"
#include "hook/hook_log.h"
#include "hook/hook_table.h"

/* Before a context may go: nothing of the hook's is in flight in it. */
static void ctx_quiesce(CUcontext ctx)
{
	hook_results_drain();
	hook_timing_ctx_gone(ctx);
}

/* After it went: forget it everywhere. */
static void ctx_forget(CUcontext ctx)
{
	hook_pool_ctx_gone(ctx);
	hook_probe_ctx_gone(ctx);
	__atomic_add_fetch(&hook.ctx_gen, 1, __ATOMIC_ACQ_REL);
	hook_log("context %p gone", (void *)ctx);
}

static CUresult ctx_destroy(CUresult (*real)(CUcontext), CUcontext ctx)
{
	if (ctx)
		ctx_quiesce(ctx);
	CUresult rc = real(ctx);
	if (rc == CUDA_SUCCESS && ctx)
		ctx_forget(ctx);
	return rc;
}

CUresult hook_cuCtxDestroy(CUcontext ctx)
{
	return ctx_destroy(HOOK_REAL(cuCtxDestroy), ctx);
}

CUresult hook_cuCtxDestroy_v2(CUcontext ctx)
{
	return ctx_destroy(HOOK_REAL(cuCtxDestroy_v2), ctx);
}

static struct hook_device *ctx_dev(CUdevice d)
{
	return d >= 0 && d < HOOK_MAX_DEVICES ? &hook.dev[d] : NULL;
}

CUresult hook_cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice d)
{
	CUresult rc = HOOK_REAL(cuDevicePrimaryCtxRetain)(ctx, d);
	struct hook_device *hd = ctx_dev(d);
	if (rc == CUDA_SUCCESS && hd)
		__atomic_store_n(&hd->primary, (void *)*ctx, __ATOMIC_RELEASE);
	return rc;
}

/* Reset destroys the primary context; a release destroys it when it was the
 * last reference (asked of the driver afterwards). */
static CUresult ctx_primary(CUresult (*real)(CUdevice), CUdevice d, int reset)
{
	struct hook_device *hd = ctx_dev(d);
	CUcontext ctx = hd ? (CUcontext)__atomic_load_n(&hd->primary, __ATOMIC_ACQUIRE) : NULL;
	if (ctx)
		ctx_quiesce(ctx);
	CUresult rc = real(d);
	unsigned flags = 0;
	int active = 1;
	if (rc == CUDA_SUCCESS && ctx && !reset && cu.cuDevicePrimaryCtxGetState &&
	    cu.cuDevicePrimaryCtxGetState(d, &flags, &active) != CUDA_SUCCESS)
		active = 1; /* unknown: keep what we have */
	if (rc == CUDA_SUCCESS && ctx && (reset || !active) &&
	    __atomic_compare_exchange_n(&hd->primary, (void **)&ctx, NULL, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		ctx_forget(ctx);
	return rc;
}

CUresult hook_cuDevicePrimaryCtxRelease(CUdevice d)
{
	return ctx_primary(HOOK_REAL(cuDevicePrimaryCtxRelease), d, 0);
}

CUresult hook_cuDevicePrimaryCtxRelease_v2(CUdevice d)
{
	return ctx_primary(HOOK_REAL(cuDevicePrimaryCtxRelease_v2), d, 0);
}

CUresult hook_cuDevicePrimaryCtxReset(CUdevice d)
{
	return ctx_primary(HOOK_REAL(cuDevicePrimaryCtxReset), d, 1);
}

CUresult hook_cuDevicePrimaryCtxReset_v2(CUdevice d)
{
	return ctx_primary(HOOK_REAL(cuDevicePrimaryCtxReset_v2), d, 1);
}
