/* Context teardown: cuCtxDestroy and the primary context's reset and last
 * release take every allocation, event, stream and module of the context
 * with them, and the driver may hand the same address out for the next
 * context. Before forwarding, the hook drops everything it holds for the
 * context, exactly once, while the context is still alive: the probed
 * launches in flight (hook_results_ctx_gone), the pending timings and
 * pooled events (the timing thread is kept out of its pass meanwhile), the
 * instrumented copies (marked dead: a new context at the same address
 * builds its own) and the handles of its modules. (The timing thread
 * querying the events of a destroyed context was how the hook crashed the
 * CUDA samples' vectorAddDrv at exit: glibc "double free or corruption".)
 *
 * Primary contexts: cuDevicePrimaryCtxRetain records the context per device
 * and counts references; a reset always destroys it (the references stay),
 * a release when it drops the last reference the hook counted. Should the driver report the
 * context inactive after a release the hook did not count as the last, it
 * is forgotten then (no driver call on it). */
#include <stdlib.h>
#include "hook/cuda/hook_cuda.h"
#include "hook/cuda/hook_cuda_api.h"
#include "hook/cuda/hook_cuda_results.h"
#include "hook/hook_log.h"
#include "hook/cuda/hook_table.h"

/* Instrumented copies in ctx: their module and function go with it; the
 * launches seen there are no longer built for. */
static void ctx_insts_dead(CUcontext ctx)
{
	uint32_t n = 0;
	struct hook_kernel **all = hook_registry_kernels(&n);
	pthread_mutex_lock(&hook.probe_lock);
	for (uint32_t i = 0; all && i < n; i++) {
		for (struct hook_inst *in = all[i]->insts; in; in = in->next)
			if (!in->dead && in->ctx == ctx) {
				in->dead = 1;
				__atomic_store_n(&in->ctx, NULL, __ATOMIC_RELEASE); /* hook_probe_inst reads it unlocked */
			}
		if (all[i]->seen.ctx == ctx) /* nothing is built for it from now on */
			all[i]->seen.ctx = NULL;
	}
	pthread_mutex_unlock(&hook.probe_lock);
	free(all);
}

/* Forgetting ctx without touching it (it may be gone already). */
static void ctx_forget(CUcontext ctx)
{
	hook_timing_ctx_gone(ctx);
	ctx_insts_dead(ctx);
	hook_registry_ctx_gone(ctx);
	/* threads holding ctx current forget it (a new one may get its address) */
	__atomic_add_fetch(&hook.ctx_gen, 1, __ATOMIC_ACQ_REL);
}

void hook_ctx_drop(CUcontext ctx)
{
	if (!ctx)
		return;
	hook_builder_ctx_gone(ctx);
	hook_stage_ctx_gone(ctx);
	hook_results_ctx_gone(ctx);
	hook_graph_ctx_gone(ctx);
	ctx_forget(ctx);
	hook_log("context %p: dropped before its teardown", (void *)ctx);
}

static CUresult ctx_destroy(CUresult (*real)(CUcontext), CUcontext ctx)
{
	hook_ctx_drop(ctx);
	return real(ctx);
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
	if (rc == CUDA_SUCCESS && hd && ctx) {
		__atomic_store_n(&hd->primary, (void *)*ctx, __ATOMIC_RELEASE);
		__atomic_add_fetch(&hd->primary_refs, 1, __ATOMIC_ACQ_REL);
	}
	return rc;
}

/* The device's primary context, taken: only one caller drops it. */
static CUcontext ctx_primary_take(struct hook_device *hd)
{
	void *ctx = hd ? __atomic_load_n(&hd->primary, __ATOMIC_ACQUIRE) : NULL;
	while (ctx && !__atomic_compare_exchange_n(&hd->primary, &ctx, NULL, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		;
	return (CUcontext)ctx;
}

/* Reset destroys the primary context; a release destroys it when it drops
 * the last reference. */
static CUresult ctx_primary(CUresult (*real)(CUdevice), CUdevice d, int reset)
{
	struct hook_device *hd = ctx_dev(d);
	int last = reset || (hd && __atomic_load_n(&hd->primary_refs, __ATOMIC_ACQUIRE) <= 1);
	/* A reset keeps the references (and, as a rule, the address): the
	 * context comes back on its next use, and a later reset or last
	 * release drops what was built in it since. */
	if (reset)
		hook_ctx_drop(hd ? (CUcontext)__atomic_load_n(&hd->primary, __ATOMIC_ACQUIRE) : NULL);
	else if (last)
		hook_ctx_drop(ctx_primary_take(hd));
	CUresult rc = real(d);
	if (rc != CUDA_SUCCESS || !hd)
		return rc;
	if (!reset) {
		int refs = __atomic_load_n(&hd->primary_refs, __ATOMIC_ACQUIRE);
		while (refs > 0 && !__atomic_compare_exchange_n(&hd->primary_refs, &refs, refs - 1, 0, __ATOMIC_ACQ_REL,
								 __ATOMIC_ACQUIRE))
			;
	}
	unsigned flags = 0;
	int active = 1;
	if (!last && cu.cuDevicePrimaryCtxGetState && cu.cuDevicePrimaryCtxGetState(d, &flags, &active) == CUDA_SUCCESS &&
	    !active) {
		/* The hook missed a retain: the context is gone already. */
		CUcontext ctx = ctx_primary_take(hd);
		if (ctx) {
			hook_log("primary context %p of device %d went with a release the hook did not count as "
				 "the last", (void *)ctx, (int)d);
			ctx_forget(ctx);
		}
	}
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
