/* Map memory given back to the application. The pool frees nothing while
 * the process runs (cuMemFree waits for the whole device), except here:
 * when one of the application's allocations fails for lack of memory,
 * every slab of the current context whose buffers are all free goes back
 * to the driver and the allocation is tried again (hook_cuda_mem.c, which
 * also waits for results in flight when that was not enough), so memory
 * pooled for results never makes an allocation fail that would have
 * succeeded without ntop. Jobs made ahead give theirs back first; slabs of
 * the device's other contexts stay. For a while after, the pool takes no
 * new memory (probed launches that find no free buffer decline, with that
 * reason), so the stager cannot take back what was just given (nor can a
 * new buffer reuse a freed one's address while the collector may still
 * look it up to mark it zeroed: hook_pool_mark_zeroed). */
#include <stdlib.h>
#include "common/cause.h"
#include "common/timeutil.h"
#include "hook/cuda/hook_cuda.h"
#include "hook/cuda/hook_cuda_api.h"
#include "hook/cuda/hook_cuda_results.h"
#include "hook/hook_log.h"

#define GIVEBACK_QUIET_NS 2000000000ull /* no new map memory this long after */

static unsigned giveback_free_bufs(const struct hook_buf *list, const struct hook_dev_slab *sl)
{
	unsigned n = 0;
	for (; list; list = list->next)
		n += list->dev_slab == sl && list->ctx == sl->ctx;
	return n;
}

/* Moves the buffers of slab sl from *list to *out. */
static void giveback_unlink(struct hook_buf **list, const struct hook_dev_slab *sl, struct hook_buf **out)
{
	for (struct hook_buf **p = list; *p;) {
		struct hook_buf *b = *p;
		if (b->dev_slab != sl || b->ctx != sl->ctx) {
			p = &b->next;
			continue;
		}
		*p = b->next;
		b->next = *out;
		*out = b;
	}
}

/* Unlinks the slabs of ctx with every buffer free, and those buffers. */
static struct hook_dev_slab *giveback_take_idle(struct hook_results *r, CUcontext ctx, struct hook_buf **bufs)
{
	struct hook_dev_slab *idle = NULL;
	for (struct hook_dev_slab **p = &r->dev_slabs; *p;) {
		struct hook_dev_slab *sl = *p;
		if (sl->ctx != ctx || giveback_free_bufs(r->dev_free, sl) != sl->bufs) {
			p = &sl->next;
			continue;
		}
		*p = sl->next;
		giveback_unlink(&r->dev_free, sl, bufs);
		r->dev_free_last = NULL; /* it may have been one of sl's */
		sl->next = idle;
		idle = sl;
	}
	return idle;
}

/* Frees sl's memory and its buffers; on failure both go back to the pool
 * (the memory is still ours). Caller holds no lock. */
static uint64_t giveback_free_slab(struct hook_dev_slab *sl, struct hook_buf **bufs)
{
	struct hook_buf *mine = NULL;
	giveback_unlink(bufs, sl, &mine);
	if (!cu.cuMemFree_v2 || cu.cuMemFree_v2((CUdeviceptr)sl->base) != CUDA_SUCCESS) {
		pthread_mutex_lock(&hook.res.lock);
		sl->next = hook.res.dev_slabs;
		hook.res.dev_slabs = sl;
		pthread_mutex_unlock(&hook.res.lock);
		while (mine) {
			struct hook_buf *n = mine->next;
			hook_pool_put_dev(mine);
			mine = n;
		}
		return 0;
	}
	while (mine) {
		struct hook_buf *n = mine->next;
		hook_event_put_bare((CUcontext)sl->ctx, (CUevent)mine->ready);
		free(mine);
		mine = n;
	}
	uint64_t len = sl->len;
	pthread_mutex_lock(&hook.res.lock);
	hook.res.dev_pooled -= len;
	hook.res.dev_given += len;
	pthread_mutex_unlock(&hook.res.lock);
	free(sl);
	return len;
}

int hook_pool_give_back(const char *api, size_t bytes)
{
	CUcontext ctx = NULL;
	__atomic_store_n(&hook.res.app_oom_ns, time_mono_ns(), __ATOMIC_RELAXED);
	if (!__atomic_load_n(&hook.res.dev_slabs, __ATOMIC_RELAXED))
		return 0; /* nothing pooled (the usual case: no probe) */
	if (!cu.cuCtxGetCurrent || cu.cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || !ctx)
		return 0;
	hook_stage_return(ctx); /* their buffers are idle too */
	struct hook_results *r = &hook.res;
	struct hook_buf *bufs = NULL;
	pthread_mutex_lock(&r->lock);
	struct hook_dev_slab *idle = giveback_take_idle(r, ctx, &bufs);
	pthread_mutex_unlock(&r->lock);
	uint64_t freed = 0;
	unsigned slabs = 0;
	CUstreamCaptureMode prev = hook_cuda_relax_begin();
	while (idle) {
		struct hook_dev_slab *n = idle->next;
		uint64_t len = giveback_free_slab(idle, &bufs);
		freed += len;
		slabs += len != 0;
		idle = n;
	}
	hook_cuda_relax_end(prev);
	hook_log("the application's %s of %zu bytes found the GPU out of memory: gave back %llu bytes of idle map "
		 "buffers (%u allocations)%s",
		 api, bytes, (unsigned long long)freed, slabs, freed ? ", trying it again" : "");
	return freed != 0;
}

int hook_pool_quiet(char **cause)
{
	uint64_t at = __atomic_load_n(&hook.res.app_oom_ns, __ATOMIC_RELAXED);
	if (!at || time_mono_ns() - at >= GIVEBACK_QUIET_NS)
		return 0;
	cause_set(cause, "the application ran out of GPU memory %llu ms ago: no map memory taken until %llu ms after",
		  (unsigned long long)((time_mono_ns() - at) / 1000000), GIVEBACK_QUIET_NS / 1000000);
	return 1;
}
