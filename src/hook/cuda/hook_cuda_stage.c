/* The next probed launches' jobs, made ahead. While the app waits for each
 * launch, everything the hook does before the probed kernel is queued is
 * GPU idle time on the app's own clock: taking the job, the plan, a zeroed
 * map buffer and an end event took 1.5-5 us of a launch's 3.2-7.2 us on an
 * H100 (doc/performance.md), and up to hundreds of us where a buffer had
 * to be found. So once a kernel's probed copy has been launched twice,
 * each probed launch asks the stager thread (hook_cuda_stager.c) to fill
 * the copy's HOOK_STAGE_DEPTH slots with jobs of its shape while the
 * kernel runs; the next launch takes one with an atomic exchange. Not the
 * collector: behind a copy back of 14 MB (block_sched on a 16M-thread
 * copy, H200) it made them too late for a third of the launches.
 *
 * A job made ahead holds a zeroed buffer the pool does not see, so only
 * small ones are made (STAGE_JOB_MAX each, STAGE_ALL_MAX in all): dmat's
 * large maps keep taking theirs at launch (doc/performance.md says what a
 * larger cap did). A job of another shape goes back to the pool unused; a
 * context's jobs go back before it is torn down (hook_cuda_ctx.c). A copy
 * built by the builder thread (the default) gets its first two launches'
 * jobs there too (every slot), and the builder starts the stager thread:
 * a second probed launch that made its own job and created that thread
 * took 20-46 us on the app's thread (H200). A copy built on its launch
 * (`record --wait-build`) gets them from that launch, which waited for the
 * build anyway. Its first probed launch then asks for the third's, which
 * the stager, napping until then, is slow to make. */
#include <stdlib.h>
#include <string.h>
#include "common/timeutil.h"
#include "hook/cuda/hook_cuda.h"
#include "hook/cuda/hook_cuda_results.h"
#include "hook/hook_probe_sel.h"

#define STAGE_JOB_MAX ((uint64_t)16 << 20)
#define STAGE_ALL_MAX ((uint64_t)64 << 20)
#define STAGE_IDLE_NS 20000000ull /* a copy not launched this long gives its jobs up at the cap */

/* The launch path's part of a job: three cache lines, prefetched as one. */
_Static_assert(HOOK_JOB_HOT <= 3 * HOOK_CACHE_LINE, "struct hook_job's hot fields outgrew three cache lines");

void hook_stage_prefetch(const struct hook_kernel *k)
{
	const struct hook_inst *in = __atomic_load_n(&k->inst_hint, __ATOMIC_RELAXED);
	if (in)
		__builtin_prefetch(&in->staged[0], 1);
}

struct hook_job *hook_stage_take(struct hook_inst *in, const struct hook_launch *l)
{
	for (int i = 0; i < HOOK_STAGE_DEPTH; i++) {
		if (!__atomic_load_n(&in->staged[i], __ATOMIC_RELAXED))
			continue;
		struct hook_job *j = __atomic_exchange_n(&in->staged[i], NULL, __ATOMIC_ACQ_REL);
		if (!j)
			continue;
		/* its hot lines from the stager's core at once, not one by one */
		for (size_t off = 0; off < HOOK_JOB_HOT; off += HOOK_CACHE_LINE)
			__builtin_prefetch((const char *)j + off, 1);
		if (memcmp(j->grid, l->grid, sizeof j->grid) != 0 || memcmp(j->block, l->block, sizeof j->block) != 0) {
			hook_probe_job_free(j);
			continue;
		}
		return j;
	}
	return NULL;
}

void hook_stage_settle(struct hook_job *j, int launched)
{
	if (!j->from_stage)
		return;
	j->from_stage = 0;
	__atomic_sub_fetch(&hook.res.staged_bytes, j->bytes, __ATOMIC_RELAXED);
	if (launched)
		__atomic_add_fetch(&hook.res.staged, 1, __ATOMIC_RELAXED);
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

/* A slot of `in` with no job, or -1. */
static int stage_empty_slot(const struct hook_inst *in)
{
	for (int i = 0; i < HOOK_STAGE_DEPTH; i++)
		if (!__atomic_load_n(&in->staged[i], __ATOMIC_ACQUIRE))
			return i;
	return -1;
}

/* Leaves j (counted in staged_bytes) in an empty slot of `in`, with a bare
 * end event of ctx; dropped when other threads filled them first. */
static void stage_put(struct hook_inst *in, CUcontext ctx, struct hook_job *j)
{
	j->end = hook_event_get_bare(ctx); /* a timed launch swaps it (probe_enqueue) */
	j->end_bare = 1;
	for (int i = 0; i < HOOK_STAGE_DEPTH; i++) {
		struct hook_job *none = NULL;
		if (__atomic_compare_exchange_n(&in->staged[i], &none, j, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return;
	}
	hook_probe_job_free(j);
}

int hook_stage_wanted(struct hook_inst *in, const struct hook_kernel *k, uint64_t bytes, uint64_t now_ns)
{
	uint64_t n = __atomic_add_fetch(&in->launches, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&in->last_ns, now_ns, __ATOMIC_RELAXED);
	unsigned early = (unsigned)__atomic_load_n(&in->staged_early, __ATOMIC_RELAXED);
	return n >= 2u - early && bytes <= STAGE_JOB_MAX && stage_empty_slot(in) >= 0 &&
	       stage_worth_it(k);
}

static void stage_drop(CUcontext ctx, int forget, const struct hook_inst *keep, uint64_t idle_before);

/* At the byte cap: the jobs made ahead for ctx's copies other than `keep`
 * whose last probed launch is over STAGE_IDLE_NS old go back, so that the
 * kernels an app is done with do not hold the cap (with theirs kept, the
 * third of three kernels with 14 MiB jobs launched one after another gets
 * none made ahead, test double). Only ctx's: the stager works in ctx, and a
 * context going waits for it (hook_stager_ctx_gone), so the pool those
 * buffers go back to stays meanwhile. At most one look per STAGE_IDLE_NS:
 * each walks every kernel. */
static void stage_reclaim(const struct hook_inst *keep, CUcontext ctx)
{
	uint64_t now = time_mono_ns(), last = __atomic_load_n(&hook.res.stage_walk_ns, __ATOMIC_RELAXED);
	if (now < STAGE_IDLE_NS || now - last < STAGE_IDLE_NS ||
	    !__atomic_compare_exchange_n(&hook.res.stage_walk_ns, &last, now, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return;
	stage_drop(ctx, 0, keep, now - STAGE_IDLE_NS);
}

/* One job of l's shape into an empty slot of `in`: 1 when one was put, 0
 * when none was (the caps, no empty slot, or making it failed: the launch,
 * made the usual way, says why if it fails too). Whether it is worth it
 * the caller knows: the stager reading k->probed, which each launch
 * writes, cost the next launch a transfer of that line (~0.05 us, H200).
 * reclaim: at the byte cap, idle copies' jobs may go (the stager only). */
static int stage_one(struct hook_inst *in, struct hook_kernel *k, const struct hook_launch *l, CUcontext ctx,
		     const struct hook_device *dev, int *slab, int reclaim)
{
	if (stage_empty_slot(in) < 0)
		return 0;
	char *cause = NULL;
	struct hook_job *j = hook_probe_job_new(l, k, in, ctx, dev, &cause);
	free(cause);
	if (!j)
		return 0;
	if (j->bytes > STAGE_JOB_MAX) {
		hook_probe_job_free(j);
		return 0;
	}
	j->from_stage = 1;
	if (slab && j->slab_made)
		*slab = 1;
	j->slab_made = 0; /* a slab made here held no launch's path (unless *slab says) */
	if (__atomic_add_fetch(&hook.res.staged_bytes, j->bytes, __ATOMIC_RELAXED) > STAGE_ALL_MAX) {
		if (reclaim)
			stage_reclaim(in, ctx);
		if (__atomic_load_n(&hook.res.staged_bytes, __ATOMIC_RELAXED) > STAGE_ALL_MAX) {
			hook_probe_job_free(j);
			return 0;
		}
	}
	stage_put(in, ctx, j);
	return 1;
}

void hook_stage_fill(struct hook_inst *in, struct hook_kernel *k, const struct hook_launch *l,
		     const struct hook_device *dev)
{
	/* asked for by a launch that found it worth it (hook_stage_wanted) */
	CUcontext ctx = __atomic_load_n(&in->ctx, __ATOMIC_ACQUIRE); /* NULL once its context went */
	if (!in->ok || !ctx)
		return;
	for (int i = 0; i < HOOK_STAGE_DEPTH && stage_one(in, k, l, ctx, dev, NULL, 1); i++)
		;
}

int hook_stage_first(struct hook_inst *in, struct hook_kernel *k, const struct hook_launch *l,
		     const struct hook_device *dev, int *slab)
{
	if (__atomic_exchange_n(&in->first_made, 1, __ATOMIC_ACQ_REL))
		return 0; /* once a copy: the builder, or one of the launches that found it unmade */
	CUcontext ctx = __atomic_load_n(&in->ctx, __ATOMIC_ACQUIRE);
	int n = 0;
	__atomic_store_n(&in->last_ns, time_mono_ns(), __ATOMIC_RELAXED); /* not idle before its first launch */
	while (in->ok && ctx && stage_worth_it(k) && n < HOOK_STAGE_DEPTH && stage_one(in, k, l, ctx, dev, slab, 0))
		n++;
	if (n) {
		/* atomic: a copy built on its launch has other app threads reading it */
		__atomic_store_n(&in->staged_early, 1, __ATOMIC_RELAXED);
		hook_stager_start(); /* not at the launch that first asks it */
	}
	/* Started at the first submit (once the kernel was queued), the
	 * collector and the writers took about 0.45 ms of the app's thread a
	 * process (cpu_post_us, H200). */
	if (in->ok)
		hook_results_start();
	return n;
}

/* The jobs made ahead in ctx (NULL: in any context, forgotten without a
 * driver call, for a fork child) of every instrumented copy but `keep`
 * (NULL: none kept); with idle_before, only those of copies whose last
 * probed launch came before it (time_mono_ns). */
static void stage_drop(CUcontext ctx, int forget, const struct hook_inst *keep, uint64_t idle_before)
{
	uint32_t n = 0;
	struct hook_kernel **all = hook_registry_kernels(&n);
	for (uint32_t i = 0; all && i < n; i++) {
		pthread_mutex_lock(&hook.probe_lock);
		struct hook_job *mine = NULL;
		for (struct hook_inst *in = all[i]->insts; in; in = in->next) {
			if ((!forget && in->ctx != ctx) || in == keep ||
			    (idle_before && __atomic_load_n(&in->last_ns, __ATOMIC_RELAXED) >= idle_before))
				continue;
			if (forget) /* its request, if any, died with the parent's stager */
				__atomic_store_n(&in->stage_asked, 0, __ATOMIC_RELAXED);
			for (int s = 0; s < HOOK_STAGE_DEPTH; s++) {
				struct hook_job *j = __atomic_exchange_n(&in->staged[s], NULL, __ATOMIC_ACQ_REL);
				if (j && !forget) {
					j->next = mine;
					mine = j;
				}
			}
		}
		pthread_mutex_unlock(&hook.probe_lock);
		while (mine) {
			struct hook_job *next = mine->next;
			hook_probe_job_free(mine);
			mine = next;
		}
	}
	free(all);
}

void hook_stage_return(CUcontext ctx)
{
	stage_drop(ctx, 0, NULL, 0);
}

void hook_stage_ctx_gone(CUcontext ctx)
{
	hook_stager_ctx_gone(ctx); /* nothing is being made there once this returns */
	stage_drop(ctx, 0, NULL, 0);
}

/* The parent's jobs belong to its contexts: never used here (their
 * buffers stay the parent's, like the pools' in hook_results_fork_child). */
void hook_stage_fork_child(void)
{
	hook_stager_fork_child();
	stage_drop(NULL, 1, NULL, 0);
	hook.res.staged_bytes = 0;
}
