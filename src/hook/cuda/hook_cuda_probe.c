/* Probed launches: the instrumented copy (hook_cuda_build.c) is launched
 * in the original's place with a pooled, zeroed map buffer (hook_cuda_pool.c)
 * appended to its parameters; the application's stream gets the probed
 * kernel and nothing it would wait on (probe_enqueue), and the result is
 * copied back and written by the collector (hook_cuda_results.c). The
 * probes come from NTOP_PROBES, or from the live control file's selection
 * once it exists (hook_control.c). Whenever anything is missing or fails,
 * the original kernel runs and a `probe status=declined` line says why. */
#include <stdlib.h>
#include <string.h>
#include "common/cause.h"
#include "common/timeutil.h"
#include "engine/engine.h"
#include "hook/hook_config.h"
#include "hook/hook_kernel_events.h"
#include "hook/cuda/hook_cuda.h"
#include "hook/cuda/hook_cuda_api.h"
#include "hook/cuda/hook_cuda_results.h"
#include "hook/hook_events.h"
#include "hook/hook_extra.h"
#include "hook/hook_log.h"
#include "hook/hook_probe_sel.h"

#define PROBE_BUILD_GRACE_NS 500000ull /* how long a launch waits for its copy being built */

/* Parameters of the probed launch: the originals plus one pointer per map.
 * kernelParams gets a longer array; `extra` a longer buffer with each map
 * pointer at its parameter's offset in the probed function. */
struct probe_args {
	void **params, **extra;
	void *params_local[ENGINE_MAX_MAPS + 64]; /* most kernels: no allocation per launch */
	void **params_alloc;
	uint8_t *buf;
	size_t buf_size;
	void *extra_arr[5];
};

/* Only the slots used are cleared (the NULL after the last parameter):
 * the whole of *a is ten cache lines of the app's thread. */
static int probe_args_build(const struct hook_launch *l, const struct hook_inst *in, const CUdeviceptr *maps,
			    struct probe_args *a, char **cause)
{
	const struct engine_result *res = in->res;
	a->params = a->extra = a->params_alloc = NULL;
	a->buf = NULL;
	if (!l->extra || l->params) {
		size_t n = (size_t)res->n_params_orig + (size_t)res->n_maps + 1;
		void **p = a->params_local;
		if (n > sizeof a->params_local / sizeof a->params_local[0] &&
		    !(p = a->params_alloc = calloc(n, sizeof(void *))))
			return cause_set(cause, "out of memory");
		if (p == a->params_local)
			memset(p, 0, n * sizeof *p);
		for (int i = 0; i < res->n_params_orig && l->params; i++)
			p[i] = l->params[i];
		for (int j = 0; j < res->n_maps; j++)
			p[res->maps[j].param_index] = (void *)&maps[j];
		a->params = p;
		return 0;
	}
	static const struct hook_extra_keys keys = { CU_LAUNCH_PARAM_BUFFER_POINTER, CU_LAUNCH_PARAM_BUFFER_SIZE,
						    CU_LAUNCH_PARAM_END };
	void *obuf;
	size_t *osize;
	if (hook_extra_buffer(l->extra, &keys, &obuf, &osize, cause) < 0)
		return -1;
	if (!cu.cuFuncGetParamInfo)
		return cause_set(cause, "the driver has no cuFuncGetParamInfo: cannot place map pointers in `extra`");
	size_t size = *osize, offs[ENGINE_MAX_MAPS];
	for (int j = 0; j < res->n_maps; j++) {
		size_t off = 0, psz = 0;
		CUresult rc = cu.cuFuncGetParamInfo(in->func, (size_t)res->maps[j].param_index, &off, &psz);
		if (rc != CUDA_SUCCESS || psz != sizeof(CUdeviceptr))
			return cause_set(cause, "cuFuncGetParamInfo(map %d) failed (CUDA error %d)", j, (int)rc);
		offs[j] = off;
		if (off + psz > size)
			size = off + psz;
	}
	a->buf = calloc(1, size);
	if (!a->buf)
		return cause_set(cause, "out of memory");
	memcpy(a->buf, obuf, *osize);
	for (int j = 0; j < res->n_maps; j++)
		memcpy(a->buf + offs[j], &maps[j], sizeof maps[j]);
	a->buf_size = size;
	a->extra_arr[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
	a->extra_arr[1] = a->buf;
	a->extra_arr[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
	a->extra_arr[3] = &a->buf_size;
	a->extra_arr[4] = CU_LAUNCH_PARAM_END;
	a->extra = a->extra_arr;
	return 0;
}

static void probe_args_done(struct probe_args *a)
{
	free(a->params_alloc);
	free(a->buf);
}

static CUresult probe_copy_globals(const struct hook_inst *in, CUstream s, int back)
{
	const struct probe_inst_data *d = in->globals;
	for (int i = 0; d && i < d->n_globals; i++) {
		const struct probe_global *g = &d->globals[i];
		if (back && g->is_const)
			continue;
		CUresult rc = back ? cu.cuMemcpyDtoDAsync_v2(g->app, g->probed, g->size, s)
				   : cu.cuMemcpyDtoDAsync_v2(g->probed, g->app, g->size, s);
		if (rc != CUDA_SUCCESS)
			return rc;
	}
	return CUDA_SUCCESS;
}

/* Cooperative launches need every block resident at once: the probed copy
 * (more registers) must still fit. */
static int probe_coop_fits(const struct hook_launch *l, const struct hook_inst *in, int sms, char **cause)
{
	int occ = 0;
	unsigned threads = l->block[0] * l->block[1] * l->block[2];
	uint64_t blocks = (uint64_t)l->grid[0] * l->grid[1] * l->grid[2];
	if (!cu.cuOccupancyMaxActiveBlocksPerMultiprocessor ||
	    cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(&occ, in->func, (int)threads, l->smem) != CUDA_SUCCESS)
		return cause_set(cause, "cooperative launch: occupancy of the probed copy unknown");
	if ((uint64_t)occ * (uint64_t)sms < blocks)
		return cause_set(cause, "cooperative launch: the probed copy (%d registers) fits %d blocks per SM, "
				 "%llu blocks must be co-resident", in->regs_probed, occ, (unsigned long long)blocks);
	return 0;
}

/* What a buffer must have cleared for this launch (hook_zero: counts where
 * a unit may leave without storing its own, engine.h's count_clear; the
 * records of a map with a folded field), and the layout's key. */
static void probe_zero_spec(const struct engine_result *res, struct hook_job *j, uint64_t blocks, uint32_t threads)
{
	struct hook_zero *z = &j->zero;
	uint64_t h = 1469598103934665603ull;
	const uint64_t v[] = { (uint64_t)(uintptr_t)res, blocks, threads, j->sample_shift };
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
		h = (h ^ v[i]) * 1099511628211ull;
	z->key = h | 1; /* 0 means "all of it zero" */
	z->n = 0;
	for (int i = 0; i < res->n_maps; i++) {
		const struct probe_map *m = &res->maps[i].map;
		if (res->maps[i].count_clear) {
			z->off[z->n] = j->map_off[i];
			z->runs[z->n++] = hook_counts_rows(res, i, blocks, threads, j->sample_shift);
		}
		if (engine_map_records_clear(m)) { /* the record area, as the plan sized it (bytes checked) */
			uint64_t roff = engine_map_records_offset(m, blocks, threads);
			uint64_t len = engine_map_bytes(m, blocks, threads, j->sample_shift) - roff;
			z->off[z->n] = j->map_off[i] + roff;
			z->runs[z->n++] = (struct hook_rows){ len, len, 1, 0 };
		}
	}
}

/* The bytes block sampling fits a launch's maps into: their target (many
 * launches' buffers out at once, each soon cleared and copied back: a short
 * kernel under dmat, app_cost's 11 us call, took 16x on the app's clock
 * with 276 MiB a launch, waiting for buffers; a warp map of many records,
 * regions, is copied back whole, every slot, so its target is smaller: a
 * 4096^3 Triton matmul's 64 MiB of region slots took longer to copy back
 * than the 250 us kernel took to run), at most half the budget. */
static uint64_t probe_plan_target(const struct engine_result *res, uint64_t blocks, uint32_t threads,
				  uint64_t limit)
{
	uint64_t want = hook.cfg.map_target;
	if (engine_plan_warp_sampled(res) && hook.cfg.warp_map_target < want)
		want = hook.cfg.warp_map_target;
	/* the target is for the records sampling can shrink: not the counts of
	 * every unit (64 MiB for a 16M-thread launch) nor the one block kept */
	uint64_t fixed = engine_plan_bytes(res, blocks, threads, ENGINE_SAMPLE_SHIFT_MAX, NULL);
	want = fixed && want <= UINT64_MAX - fixed ? want + fixed : UINT64_MAX;
	return want < limit ? want : limit;
}

/* Buffer offsets and, for maps that grow with threads x cap, the block
 * sampling: one launch may take half the budget, so the previous one can be
 * copied back and written while it runs. */
static int probe_plan(const struct hook_launch *l, const struct engine_result *res, struct hook_job *j,
		      char **cause)
{
	uint64_t blocks = (uint64_t)l->grid[0] * l->grid[1] * l->grid[2];
	uint32_t threads = l->block[0] * l->block[1] * l->block[2];
	uint64_t limit = hook.cfg.map_budget / 2;
	uint32_t k = 0;
	if (engine_plan_sampled(res) && !hook.cfg.sample_off)
		k = engine_plan_shift(res, blocks, threads, hook.cfg.sample_min_shift,
				      probe_plan_target(res, blocks, threads, limit));
	j->sample_shift = k;
	j->bytes = engine_plan_bytes(res, blocks, threads, k, j->map_off);
	if (j->bytes == 0)
		return cause_set(cause, "map size overflows");
	probe_zero_spec(res, j, blocks, threads);
	if (j->bytes > limit)
		return cause_set(cause, "maps need %llu bytes%s, more than half the map budget (%llu bytes%s)",
				 (unsigned long long)j->bytes, k ? " even keeping one block" : "",
				 (unsigned long long)hook.cfg.map_budget,
				 hook.cfg.sample_off ? "; block sampling is off" : "");
	return 0;
}

void hook_probe_job_events(struct hook_job *j, int timed)
{
	if (timed && j->end_bare) {
		hook_event_put_bare(j->ctx, j->end);
		j->end = NULL;
		j->end_bare = 0;
	}
	if (!j->end) {
		j->end_bare = !timed;
		j->end = timed ? hook_event_get(j->ctx) : hook_event_get_bare(j->ctx);
	}
	if (timed)
		j->start = hook_event_get(j->ctx);
}

static CUresult probe_forward(struct hook_launch *l, const struct hook_inst *in, const struct probe_args *a)
{
	l->fwd_ns = hook_self_now();
	return hook_cuda_forward(l, in->func, a->params, a->extra);
}

/* The application's stream gets the probed kernel and nothing it would
 * wait on: a wait for the buffer's zeroing (long done, as a rule), the
 * module globals the kernel shares with the app (stream-ordered state), and
 * an end event the collector waits on. Copies back run on the hook's own
 * stream. A start event only for launches sampled for timing: it costs the
 * app ~2-3 us on its own clock (the GPU idles while it is recorded when the
 * app waited for its previous launch). */
static int probe_enqueue(struct hook_launch *l, struct hook_inst *in, struct hook_job *j, CUresult *lrc,
			 char **cause)
{
	CUstream s = l->ostream;
	CUdeviceptr maps[ENGINE_MAX_MAPS];
	hook_probe_maps(in, j, maps);
	struct probe_args a;
	if (probe_args_build(l, in, maps, &a, cause) < 0)
		return -1;
	if (hook_timing_first_probed(&in->timed_first))
		l->timed = 1;
	hook_probe_job_events(j, l->timed);
	int rc = -1;
	CUresult r;
	if (!j->end || (l->timed && !j->start) || !cu.cuStreamWaitEvent)
		cause_set(cause, "cannot create events");
	else if (!j->dev_ready && (r = cu.cuStreamWaitEvent(s, (CUevent)j->dev->ready, 0)) != CUDA_SUCCESS)
		cause_set(cause, "cuStreamWaitEvent for the zeroed maps failed (CUDA error %d)", (int)r);
	else if ((r = probe_copy_globals(in, s, 0)) != CUDA_SUCCESS)
		cause_set(cause, "copying module globals in failed (CUDA error %d)", (int)r);
	else if (j->start && (r = cu.cuEventRecord(j->start, s)) != CUDA_SUCCESS)
		cause_set(cause, "cuEventRecord failed (CUDA error %d)", (int)r);
	else if ((r = probe_forward(l, in, &a)) != CUDA_SUCCESS)
		cause_set(cause, "probed launch failed (CUDA error %d); the original ran", (int)r);
	else
		rc = 0;
	l->submit_ns = time_mono_ns();
	probe_args_done(&a);
	if (rc < 0)
		return -1;
	/* From here the probed kernel is queued: report failures, never launch
	 * the original a second time. */
	*lrc = CUDA_SUCCESS;
	if ((r = cu.cuEventRecord(j->end, s)) != CUDA_SUCCESS || (r = probe_copy_globals(in, s, 1)) != CUDA_SUCCESS) {
		hook_event_warn("probed launch %llu: queuing its end event failed (CUDA error %d), result lost",
				(unsigned long long)j->seq, (int)r);
		return 1;
	}
	l->queued_ns = hook_self_now();
	return 0;
}

void hook_probe_job_events_put(struct hook_job *j)
{
	hook_event_put(j->ctx, j->start);
	if (j->end_bare)
		hook_event_put_bare(j->ctx, j->end);
	else
		hook_event_put(j->ctx, j->end);
	j->start = j->end = NULL;
	j->end_bare = 0;
}

void hook_probe_job_free(struct hook_job *j)
{
	hook_stage_settle(j, 0);
	hook_probe_job_events_put(j);
	hook_pool_put_dev(j->dev); /* never written: still zeroed */
	free(j);
}

/* A job for a launch of l's shape on the instrumented copy `in`: its plan
 * and a zeroed map buffer (no sequence number or time yet). NULL with a
 * cause when the maps do not fit. */
struct hook_job *hook_probe_job_new(const struct hook_launch *l, struct hook_kernel *k, const struct hook_inst *in,
				    CUcontext ctx, const struct hook_device *dev, char **cause)
{
	struct hook_job *j = hook_zalloc_aligned(_Alignof(struct hook_job), sizeof *j);
	if (!j) {
		cause_set(cause, "out of memory");
		return NULL;
	}
	j->k = k;
	j->plan = in->res;
	j->ctx = ctx;
	j->device = *dev;
	memcpy(j->grid, l->grid, sizeof j->grid);
	memcpy(j->block, l->block, sizeof j->block);
	if (probe_plan(l, in->res, j, cause) < 0 ||
	    !(j->dev = hook_pool_take_dev(ctx, j->bytes, &j->zero, &j->dev_ready, &j->slab_made, cause))) {
		free(j);
		return NULL;
	}
	j->dev_ptr = j->dev->ptr;
	return j;
}

int hook_probe_prepare(const struct hook_launch *l, struct hook_kernel *k, const struct hook_probe_pick *pick,
		       int background, struct hook_inst **inp, struct hook_job **jp, char **cause)
{
	CUcontext ctx = NULL;
	const struct hook_device *dev = hook_cuda_launch_device(l, &ctx);
	*inp = NULL;
	*jp = NULL;
	if (!k->has_ptx)
		return cause_set(cause, "%s", k->reason ? k->reason : "no PTX");
	if (!dev)
		return cause_set(cause, "no current context");
	struct hook_inst *in = hook_probe_inst(k, l, ctx, dev->cc, pick->set, background);
	if (in && __atomic_load_n(&in->building, __ATOMIC_ACQUIRE)) {
		*inp = in;
		return 1;
	}
	if (!in || !in->ok)
		return cause_set(cause, "%s", in ? in->reason : "out of memory");
	/* What the app set on the original (over 48 KB of dynamic shared
	 * memory, clusters, carveout, cache config): one atomic load when
	 * nothing changed (hook_cuda_attr.c). */
	if (hook_attr_apply(k, l->f, in->func, &in->attrs_gen, cause) < 0)
		return -1;
	if (l->cooperative && probe_coop_fits(l, in, dev->sms, cause) < 0)
		return -1;
	/* a copy built on this launch: its first launches' jobs and threads */
	int slab = 0;
	if (!__atomic_load_n(&in->first_made, __ATOMIC_ACQUIRE))
		hook_stage_first(in, k, l, dev, &slab);
	struct hook_job *j = hook_stage_take(in, l);
	if (!j && !(j = hook_probe_job_new(l, k, in, ctx, dev, cause)))
		return -1;
	j->slab_made |= slab;
	j->seq = l->seq;
	j->smem = l->smem;
	*inp = in;
	*jp = j;
	return 0;
}

void hook_probe_maps(const struct hook_inst *in, const struct hook_job *j, CUdeviceptr *maps)
{
	for (int i = 0; i < in->res->n_maps; i++) {
		maps[i] = (CUdeviceptr)(j->dev_ptr + j->map_off[i]);
		if (engine_map_sampled(&in->res->maps[i].map))
			maps[i] |= j->sample_shift; /* engine.h: 256-aligned, shift in the low bits */
	}
}

int hook_probe_uses_globals(const struct hook_inst *in)
{
	const struct probe_inst_data *d = in->globals;
	return d && d->n_globals > 0;
}

static double probe_us(uint64_t t0, uint64_t t1)
{
	return t0 && t1 > t0 ? (double)(t1 - t0) / 1e3 : 0;
}

/* A copy's first probed launch is no sample of the steady state (it may
 * have built the copy): its phases go to the hook's log. */
static void probe_self_first(const struct hook_kernel *k, const struct hook_launch *l, uint64_t t_prep,
			     uint64_t t_emit, uint64_t t_end)
{
	uint64_t t_queued = l->queued_ns ? l->queued_ns : t_emit;
	hook_log("%s: first probed launch, us: finding %.1f, prepare %.1f, enqueue %.1f, driver %.1f, end event %.1f, "
		 "launch line %.1f, submit %.1f",
		 k->name, probe_us(l->found_ns, l->entry_ns), probe_us(l->entry_ns, t_prep), probe_us(t_prep, l->fwd_ns),
		 probe_us(l->fwd_ns, l->submit_ns), probe_us(l->submit_ns, t_queued), probe_us(t_queued, t_emit),
		 probe_us(t_emit, t_end));
}

static void probe_self_time(struct hook_kernel *k, const struct hook_launch *l, uint64_t t_prep, uint64_t t_emit,
			    uint64_t t_end, int first)
{
	if (!t_prep)
		return;
	if (first) {
		probe_self_first(k, l, t_prep, t_emit, t_end);
		return;
	}
	hook_self_add(k, HOOK_SELF_P_FIND, l->found_ns, l->entry_ns);
	hook_self_add(k, HOOK_SELF_P_PREP, l->entry_ns, t_prep);
	hook_self_add(k, HOOK_SELF_P_ENQ, t_prep, l->fwd_ns);
	hook_self_add(k, HOOK_SELF_P_DRV, l->fwd_ns, l->submit_ns);
	hook_self_add(k, HOOK_SELF_P_END, l->submit_ns, l->queued_ns ? l->queued_ns : t_emit);
	hook_self_add(k, HOOK_SELF_P_EMIT, l->queued_ns ? l->queued_ns : t_emit, t_emit);
	hook_self_add(k, HOOK_SELF_P_SUBMIT, t_emit, t_end);
	hook_self_count(k, 1, 0);
}

int hook_probe_launch(struct hook_launch *l, struct hook_kernel *k, const struct hook_probe_pick *pick,
		      CUresult *lrc)
{
	char *cause = NULL;
	struct hook_inst *in = NULL;
	struct hook_job *j = NULL;
	l->entry_ns = time_mono_ns();
	int held = __atomic_load_n(&hook.holds_busy, __ATOMIC_RELAXED) > 0;
	uint64_t began = __atomic_load_n(&hook.holds_began, __ATOMIC_RELAXED);
	if (!k->has_ptx)
		return hook_probe_give_up(k, l->seq, pick, k->reason);
	hook_stage_prefetch(k);
	if (l->first ? hook_cuda_capturing_asked(l->ostream) : hook_cuda_capturing(l->ostream))
		return hook_probe_give_up(k, l->seq, pick, "stream capture active: the launch is probed when its "
					  "graph is replayed (the capture itself is left as the app made it)");
	int prep = hook_probe_prepare(l, k, pick, 1, &in, &j, &cause);
	/* A copy the driver's JIT builds quickly (its cache warm, a small
	 * kernel) is worth a short wait for the first launch that finds it
	 * building: that launch is then probed, not deferred. Not for the
	 * later ones (each waiting 0.5 ms made an 11 us kernel's launches 50x
	 * slower on an H200), nor when ptxas builds (never that fast). */
	if (prep > 0 && !__atomic_load_n(&in->deferred_said, __ATOMIC_ACQUIRE) && hook_build_by_jit() &&
	    hook_builder_wait_for(in, PROBE_BUILD_GRACE_NS))
		prep = hook_probe_prepare(l, k, pick, 1, &in, &j, &cause);
	/* a copy's first launch may instrument it (its cpu_ns says how long): not a sample */
	int first = prep == 0 && !__atomic_load_n(&in->launches, __ATOMIC_RELAXED);
	uint64_t t_prep = prep == 0 ? hook_self_now() : 0;
	if (prep > 0) /* its copy is being built: this launch runs unprobed */
		return hook_probe_defer(k, l->seq, pick, !__atomic_exchange_n(&in->deferred_said, 1, __ATOMIC_RELAXED));
	if (prep < 0)
		goto declined;
	l->slab = j->slab_made;
	int q = probe_enqueue(l, in, j, lrc, &cause);
	if (q < 0)
		goto declined;
	/* its own slab's allocation (slab=1) began one */
	l->beside = held || __atomic_load_n(&hook.holds_began, __ATOMIC_RELAXED) - began > (uint64_t)l->slab;
	/* In launch order with the app's other launches (readers count on it);
	 * the occupancy it shows is asked once per config, so this is cheap. */
	hook_cuda_emit_launch(k, l, 1, 0);
	/* The line carries the configuration: the unprobed launches after it
	 * emit none for the same one (the first of them took 10-15 us of
	 * selecting to say it again, NTOP_SELF_TIME, H200 and test double). */
	if (hook_launch_cfg_changed(k, l->grid, l->block, l->smem, l->dev, l->api) && k->has_ptx && hook.cfg.control)
		hook_probe_note_launch(k, l);
	hook_stage_settle(j, 1);
	j->app_queued = hook_results_app_queued();
	int waited = !j->dev_ready; /* j is the collector's once submitted */
	if (hook_stage_wanted(in, k, j->bytes, l->submit_ns))
		hook_stager_ask(in, k, l, j->ctx, &j->device);
	uint64_t t_emit = hook_self_now();
	if (q == 0)
		hook_results_submit(j);
	/* else: the kernel may still write the buffer; keep it out of use (rare). */
	uint64_t t_end = time_mono_ns();
	/* "after": everything on the app's thread once the kernel was queued */
	hook_results_count_launch(l->submit_ns - l->entry_ns, t_end - l->submit_ns, waited);
	probe_self_time(k, l, t_prep, t_emit, t_end, first);
	return 1;
declined:
	hook_probe_give_up(k, l->seq, pick, cause ? cause : "declined");
	free(cause);
	if (j)
		hook_probe_job_free(j);
	return 0;
}
