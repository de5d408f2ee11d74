/* The next probed launch's job, made ahead. While the app waits for each
 * launch, everything the hook does before the probed kernel is queued is
 * GPU idle time on the app's own clock. Measured on an H100 (doc/
 * performance.md), taking the job, the plan, a zeroed map buffer and an
 * end event took 1.5-5 us of a launch's 3.2-7.2 us there (up to 230 us
 * while the collector lagged behind large results); with them made ahead,
 * 1.0-1.9 us were left. So once a kernel's probed copy
 * has been launched twice, each probed launch asks for the job of the next
 * launch of the same shape, and the collector makes it when it takes the
 * launch's job (H200: made on the app's thread after the kernel was queued
 * it took 1.6-42 us of the app's time per launch, all of it on the app's
 * clock once a kernel is shorter than that) and leaves it in the
 * instrumented copy; the next launch takes it with one atomic exchange.
 *
 * A job made ahead holds a zeroed buffer the pool does not see, so only
 * small ones are made (STAGE_JOB_MAX each, STAGE_ALL_MAX in all): dmat's
 * large maps keep taking theirs at launch. A job of another shape goes
 * back to the pool unused; a context's jobs go back before it is torn down
 * (hook_cuda_ctx.c). A copy built by the builder thread (the default)
 * gets its first launch's job there too, so that launch takes no
 * allocation on the app's thread either. */
#include <stdlib.h>
#include <string.h>
#include "hook/cuda/hook_cuda.h"
#include "hook/cuda/hook_cuda_results.h"
#include "hook/hook_probe_sel.h"

#define STAGE_JOB_MAX ((uint64_t)16 << 20)
#define STAGE_ALL_MAX ((uint64_t)64 << 20)

static void stage_drop(struct hook_job *j)
{
	__atomic_sub_fetch(&hook.res.staged_bytes, j->bytes, __ATOMIC_RELAXED);
	hook_probe_job_free(j);
}

struct hook_job *hook_stage_take(struct hook_inst *in, const struct hook_launch *l)
{
	if (!__atomic_load_n(&in->staged, __ATOMIC_RELAXED))
		return NULL;
	struct hook_job *j = __atomic_exchange_n(&in->staged, NULL, __ATOMIC_ACQ_REL);
	if (!j)
		return NULL;
	if (memcmp(j->grid, l->grid, sizeof j->grid) != 0 || memcmp(j->block, l->block, sizeof j->block) != 0) {
		stage_drop(j);
		return NULL;
	}
	__atomic_sub_fetch(&hook.res.staged_bytes, j->bytes, __ATOMIC_RELAXED);
	__atomic_add_fetch(&hook.res.staged, 1, __ATOMIC_RELAXED);
	return j;
}

/* Will the kernel's next launch be probed, as far as the launch path can
 * tell without reserving it? Past NTOP_PROBE_LIMIT it will not; a control
 * file's selection is not looked into (the byte caps bound what waits). */
static int stage_worth_it(const struct hook_kernel *k)
{
	if (__atomic_load_n(&hook.ctl.table, __ATOMIC_ACQUIRE))
		return 1;
	return __atomic_load_n(&k->probed, __ATOMIC_RELAXED) < hook.cfg.probe_limit;
}

/* Leaves j (counted in staged_bytes) in `in` for the next launch, with a
 * bare end event of ctx; dropped when another thread left one first. */
static void stage_put(struct hook_inst *in, CUcontext ctx, struct hook_job *j)
{
	j->end = hook_event_get_bare(ctx); /* a timed launch swaps it (probe_enqueue) */
	j->end_bare = 1;
	struct hook_job *none = NULL;
	if (!__atomic_compare_exchange_n(&in->staged, &none, j, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		stage_drop(j);
}

int hook_stage_wanted(struct hook_inst *in, const struct hook_kernel *k, uint64_t bytes)
{
	return __atomic_add_fetch(&in->launches, 1, __ATOMIC_RELAXED) >= 2 && bytes <= STAGE_JOB_MAX &&
	       !__atomic_load_n(&in->staged, __ATOMIC_ACQUIRE) && stage_worth_it(k);
}

void hook_stage_next(struct hook_inst *in, struct hook_kernel *k, const struct hook_launch *l, uint64_t bytes,
		     const struct hook_device *dev)
{
	if (__atomic_load_n(&in->staged, __ATOMIC_ACQUIRE) || !stage_worth_it(k))
		return;
	if (__atomic_add_fetch(&hook.res.staged_bytes, bytes, __ATOMIC_RELAXED) > STAGE_ALL_MAX) {
		__atomic_sub_fetch(&hook.res.staged_bytes, bytes, __ATOMIC_RELAXED);
		return;
	}
	CUcontext ctx = in->ctx; /* where the launch was just queued; NULL once it went */
	char *cause = NULL;
	struct hook_job *j = ctx ? hook_probe_job_new(l, k, in, ctx, dev, &cause) : NULL;
	free(cause); /* the next launch, made the usual way, says why if it fails too */
	if (j && j->bytes != bytes) { /* the caps were checked for `bytes` */
		__atomic_add_fetch(&hook.res.staged_bytes, j->bytes, __ATOMIC_RELAXED);
		stage_drop(j);
		j = NULL;
	}
	if (!j) {
		__atomic_sub_fetch(&hook.res.staged_bytes, bytes, __ATOMIC_RELAXED);
		return;
	}
	stage_put(in, ctx, j);
}

void hook_stage_first(struct hook_inst *in, struct hook_kernel *k, const struct hook_launch *l,
		      const struct hook_device *dev)
{
	char *cause = NULL;
	struct hook_job *j = in->ok && in->ctx && stage_worth_it(k) ? hook_probe_job_new(l, k, in, in->ctx, dev, &cause)
								    : NULL;
	free(cause); /* the launch, made the usual way, says why if it fails too */
	if (!j)
		return;
	if (j->bytes > STAGE_JOB_MAX) {
		hook_probe_job_free(j);
		return;
	}
	if (__atomic_add_fetch(&hook.res.staged_bytes, j->bytes, __ATOMIC_RELAXED) > STAGE_ALL_MAX) {
		stage_drop(j);
		return;
	}
	stage_put(in, in->ctx, j);
}

/* Every instrumented copy's job made ahead in ctx (NULL: in any context,
 * forgotten without a driver call, for a fork child). */
static void stage_each(CUcontext ctx, int forget)
{
	uint32_t n = 0;
	struct hook_kernel **all = hook_registry_kernels(&n);
	for (uint32_t i = 0; all && i < n; i++) {
		pthread_mutex_lock(&hook.probe_lock);
		struct hook_job *mine = NULL;
		for (struct hook_inst *in = all[i]->insts; in; in = in->next) {
			if (!forget && in->ctx != ctx)
				continue;
			struct hook_job *j = __atomic_exchange_n(&in->staged, NULL, __ATOMIC_ACQ_REL);
			if (j && !forget) {
				j->next = mine;
				mine = j;
			}
		}
		pthread_mutex_unlock(&hook.probe_lock);
		while (mine) {
			struct hook_job *next = mine->next;
			stage_drop(mine);
			mine = next;
		}
	}
	free(all);
}

void hook_stage_ctx_gone(CUcontext ctx)
{
	stage_each(ctx, 0);
}

/* The parent's jobs belong to its contexts: never used here (their
 * buffers stay the parent's, like the pools' in hook_results_fork_child). */
void hook_stage_fork_child(void)
{
	stage_each(NULL, 1);
	hook.res.staged_bytes = 0;
}
