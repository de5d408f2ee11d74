/* The instrumented copy of a kernel. On the first probed launch of a
 * kernel in a context the engine instruments its PTX (the module's own PTX
 * for the device's compute capability, Numba's link PTX, or Triton's cache
 * PTX) and ptxas, nvJitLink or the driver's JIT compiles it
 * (hook_cuda_assemble.c), in the form
 * that costs the kernel least at that launch's shape (hook_cuda_place.c);
 * the outcome is cached per (kernel, context, probe set) and reported once
 * in an `instrument` line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/cause.h"
#include "common/timeutil.h"
#include "engine/engine.h"
#include "engine/image/image.h"
#include "hook/hook_config.h"
#include "hook/hook_control.h"
#include "hook/cuda/hook_cuda.h"
#include "hook/cuda/hook_cuda_api.h"
#include "hook/hook_dir.h"
#include "hook/hook_events.h"
#include "hook/hook_log.h"
#include "hook/hook_probe_sel.h"
#include "trace/events.h"

/* The PTX to instrument: for a cubin the PTX it was made from (Numba,
 * NVRTC, nvJitLink, Triton), for an -rdc fatbin its translation unit's, else
 * the image's (the container defining the kernel). */
static int probe_source(const struct hook_kernel *k, int cc, char **ptx, size_t *len, char **cause)
{
	const struct hook_module *m = k->mod;
	if (!k->has_ptx || !m)
		return cause_set(cause, "%s", k->reason ? k->reason : "no PTX");
	if (m->link_ptx) {
		/* Inputs are NUL-separated: take the one defining the kernel. */
		for (const char *p = m->link_ptx; p < m->link_ptx + m->link_ptx_len; p += strlen(p) + 1) {
			if (!image_ptx_defines(p, k->name))
				continue;
			*len = strlen(p);
			*ptx = malloc(*len + 1);
			if (!*ptx)
				return cause_set(cause, "out of memory");
			memcpy(*ptx, p, *len + 1);
			return 0;
		}
		return cause_set(cause, "no linked PTX input defines %s", k->name);
	}
	if (m->ptx_image)
		return image_pick_kernel_ptx(m->ptx_image, m->ptx_image_size, cc, k->name, ptx, len, cause);
	/* one container per translation unit in a host ELF: the kernel's */
	if (m->kind == IMAGE_FATBIN || m->kind == IMAGE_HOST_ELF)
		return image_pick_kernel_ptx(m->image, m->size, cc, k->name, ptx, len, cause);
	return image_pick_ptx(m->image, m->size, cc, ptx, len, cause);
}

/* Any arch: the highest PTX the image holds (source lines are the same). */
int hook_cuda_kernel_source(const struct hook_kernel *k, char **ptx, size_t *len, char **cause)
{
	return probe_source(k, 1000, ptx, len, cause);
}

/* NTOP_KEEP_PTX: kernels/<pid>-<kid>/{pruned,probed}.ptx, made below the
 * checked trace directory without following links (hook_dir.c). */
static void probe_keep_ptx(const struct hook_kernel *k, const struct engine_result *res)
{
	if (!hook.cfg.keep_ptx || !hook.cfg.trace_dir)
		return;
	char *cause = NULL;
	const char *names[2] = { "pruned.ptx", "probed.ptx" };
	const char *texts[2] = { res->pruned_ptx, res->ptx };
	for (int i = 0; i < 2; i++)
		if (texts[i] && hook_dir_kernel_file(k->kid, names[i], texts[i], strlen(texts[i]), &cause) < 0)
			break;
	if (cause)
		hook_event_warn("NTOP_KEEP_PTX: kernels/%d-%u: %s", hook.pid, k->kid, cause);
	free(cause);
}

static int probe_global_addr(const struct hook_kernel *k, CUmodule pmod, const struct engine_global *g,
			     struct probe_global *out, char **cause)
{
	size_t asz = 0, psz = 0;
	CUresult rc = CUDA_ERROR_NOT_FOUND;
	if (k->mod->is_library && cu.cuLibraryGetGlobal)
		rc = cu.cuLibraryGetGlobal(&out->app, &asz, (CUlibrary)k->mod->handle, g->name);
	else if (!k->mod->is_library && cu.cuModuleGetGlobal_v2)
		rc = cu.cuModuleGetGlobal_v2(&out->app, &asz, (CUmodule)k->mod->handle, g->name);
	if (rc != CUDA_SUCCESS)
		return cause_set(cause, "global %s not found in the application's module (CUDA error %d)", g->name,
				 (int)rc);
	rc = cu.cuModuleGetGlobal_v2 ? cu.cuModuleGetGlobal_v2(&out->probed, &psz, pmod, g->name) : CUDA_ERROR_NOT_FOUND;
	if (rc != CUDA_SUCCESS)
		return cause_set(cause, "global %s not found in the probed module (CUDA error %d)", g->name, (int)rc);
	out->size = asz < psz ? asz : psz;
	out->is_const = g->is_const;
	return 0;
}

static void probe_emit_instrument(const struct hook_kernel *k, const struct hook_inst *in, const struct hook_probe_list *pl,
				  double ms_jit)
{
	if (!hook_events_on())
		return;
	struct strbuf sb;
	hook_event_begin(&sb, "instrument");
	event_add_int(&sb, "kid", k->kid);
	event_add(&sb, "status", in->ok ? "ok" : "failed");
	char names[512] = "";
	for (int i = 0; i < pl->n; i++) {
		size_t n = strlen(names);
		snprintf(names + n, sizeof names - n, "%s%s", i ? "," : "", pl->v[i]->name);
	}
	event_add(&sb, "probes", names);
	if (!in->ok)
		event_add(&sb, "reason", in->reason);
	event_add_int(&sb, "regs_orig", in->regs_orig);
	event_add_int(&sb, "regs_probed", in->regs_probed);
	if (in->ok) {
		event_add(&sb, "addr", in->addr_at_exit ? "exit" : "entry");
		event_add_int(&sb, "occ_orig", in->occ_orig);
		event_add_int(&sb, "occ_probed", in->occ_probed);
	}
	if (in->res) {
		const struct engine_stats *s = &in->res->stats;
		event_add_int(&sb, "lines_in", s->lines_in);
		event_add_int(&sb, "lines_pruned", s->lines_pruned);
		event_add_int(&sb, "lines_probed", s->lines_probed);
		event_add_int(&sb, "sites", s->sites);
		event_add_int(&sb, "sites_in_funcs", s->sites_in_funcs);
		event_add_int(&sb, "sites_no_addr", s->sites_no_addr);
		event_addf(&sb, "ms_parse", "%.3f", s->ms_parse);
		event_addf(&sb, "ms_prune", "%.3f", s->ms_prune);
		event_addf(&sb, "ms_inject", "%.3f", s->ms_inject);
		event_addf(&sb, "ms_emit", "%.3f", s->ms_emit);
	}
	event_addf(&sb, "ms_jit", "%.3f", ms_jit);
	if (in->jit)
		event_add(&sb, "jit", in->jit);
	static const char *const shapes[] = { "any", "1d-block", "1d-grid", "1d" };
	event_add(&sb, "shape", shapes[in->shape >> 1 & 3]);
	hook_event_emit(&sb);
}

/* One form of the probed copy (engine.h's flags): its plan, module and
 * function, and what it costs the kernel at the first launch's shape. */
struct probe_form {
	struct engine_result *res;
	const char *jit;          /* what compiled it: ptxas, nvjitlink, driver, link */
	CUmodule module;
	CUfunction func;
	int regs;
	uint64_t attrs_gen;
	struct hook_fit fit;
};

static void probe_form_drop(struct probe_form *f)
{
	if (f->module)
		HOOK_REAL(cuModuleUnload)(f->module);
	engine_result_done(f->res);
	free(f->res);
	memset(f, 0, sizeof *f);
}

/* Is the builder thread making it (launches run unprobed meanwhile)? */
static int probe_by_builder(const struct hook_inst *in)
{
	return __atomic_load_n(&in->building, __ATOMIC_ACQUIRE);
}

static int probe_form_load(struct hook_kernel *k, int cc, struct hook_asm *as, struct probe_form *f, char **cause)
{
	const struct engine_result *res = f->res;
	if (k->mod && k->mod->ptx_image && strstr(res->ptx, ".extern .func")) {
		f->jit = "link";
		return hook_rdc_link(k->mod, k->name, res->ptx, cc, &f->module, cause); /* calls into other units */
	}
	return hook_asm_load(as, k->name, res->ptx, res->ptx_len, cc, &f->module, &f->jit, cause);
}

static int probe_form_build(struct hook_kernel *k, int cc, const struct hook_probe_list *pl, const char *ptx,
			    size_t len, unsigned flags, struct hook_asm *as, struct probe_form *f, double *ms_jit,
			    char **cause)
{
	if (!(f->res = calloc(1, sizeof *f->res)))
		return cause_set(cause, "out of memory");
	if (engine_instrument(ptx, len, k->name, pl->v, pl->n, flags, f->res, cause) < 0)
		return -1;
	uint64_t t0 = time_mono_ns();
	int rc = probe_form_load(k, cc, as, f, cause);
	*ms_jit += (double)(time_mono_ns() - t0) / 1e6;
	if (rc < 0)
		return -1;
	CUresult r = HOOK_REAL(cuModuleGetFunction)(&f->func, f->module, k->name);
	if (r != CUDA_SUCCESS)
		return cause_set(cause, "probed module has no function %s (CUDA error %d)", k->name, (int)r);
	f->regs = hook_func_attr(f->func, CU_FUNC_ATTRIBUTE_NUM_REGS);
	/* Under lazy loading (the driver's default since CUDA 12.2) a
	 * function's code goes to the GPU at its first launch, which waits for
	 * it: here, that is on the builder thread when it builds. */
	if (cu.cuFuncLoad && cu.cuFuncLoad(f->func) == CUDA_SUCCESS)
		hook_log("%s: probed function loaded", k->name);
	return 0;
}

/* What form f costs at l's shape, once it has the app's attributes (over
 * 48 KB of dynamic shared memory changes the answer). A failure to apply
 * them is reported at launch, where they are applied again. */
static void probe_form_fit(struct hook_kernel *k, const struct hook_launch *l, struct probe_form *f)
{
	char *c = NULL;
	if (hook_attr_apply(k, l->f, f->func, &f->attrs_gen, &c) < 0)
		f->attrs_gen = 0;
	free(c);
	hook_place_fit(f->func, l->block[0] * l->block[1] * l->block[2], l->smem, &f->fit);
}

/* The form to launch (hook_cuda_place.c): the entry form unless it costs
 * the kernel blocks per SM or spills the original does not have, and the
 * exit form costs less. */
static void probe_place(struct hook_kernel *k, const struct hook_launch *l, int cc,
			const struct hook_probe_list *pl, const char *ptx, size_t len, struct probe_form *entry,
			struct hook_asm *as, struct hook_inst *in, double *ms_jit)
{
	struct probe_form alt;
	memset(&alt, 0, sizeof alt);
	struct hook_fit orig;
	probe_form_fit(k, l, entry);
	hook_place_fit(l->f, l->block[0] * l->block[1] * l->block[2], l->smem, &orig);
	in->occ_orig = orig.occ;
	if (entry->res->n_maps == 0 || !hook_place_worse(&entry->fit, &orig))
		return;
	char *c = NULL;
	if (probe_form_build(k, cc, pl, ptx, len, ENGINE_ADDR_AT_EXIT | in->shape, as, &alt, ms_jit,
			     &c) < 0) {
		hook_event_warn("%s: the probed copy with map addresses at the exits failed (%s); launching the "
				"one that keeps them from the entry", k->name, c ? c : "?");
		free(c);
		probe_form_drop(&alt);
		return;
	}
	probe_form_fit(k, l, &alt);
	if (hook_place_worse(&entry->fit, &alt.fit)) {
		struct probe_form t = *entry;
		*entry = alt;
		alt = t;
		in->addr_at_exit = 1;
	}
	probe_form_drop(&alt);
}

/* Engine, JIT, function, globals: fills `in` (ok or a reason). */
static int probe_build(struct hook_kernel *k, const struct hook_launch *l, int cc, const struct hook_probe_list *pl,
		       struct hook_inst *in, double *ms_jit, char **cause)
{
	char *ptx = NULL;
	size_t len = 0;
	struct probe_form f;
	memset(&f, 0, sizeof f);
	if (probe_source(k, cc, &ptx, &len, cause) < 0)
		return -1;
	struct hook_asm as;
	hook_asm_begin(&as, probe_by_builder(in));
	int rc = probe_form_build(k, cc, pl, ptx, len, in->shape, &as, &f, ms_jit, cause);
	if (rc == 0)
		probe_place(k, l, cc, pl, ptx, len, &f, &as, in, ms_jit);
	hook_asm_end(&as);
	free(ptx);
	if (rc < 0) {
		probe_form_drop(&f);
		return -1;
	}
	probe_keep_ptx(k, f.res);
	in->res = f.res;
	in->module = f.module;
	in->jit = f.jit;
	in->func = f.func;
	in->attrs_gen = f.attrs_gen;
	in->regs_probed = f.regs;
	in->occ_probed = f.fit.occ;
	in->regs_orig = hook_func_attr(l->f, CU_FUNC_ATTRIBUTE_NUM_REGS);
	struct probe_inst_data *d = calloc(1, sizeof *d);
	if (!d)
		return cause_set(cause, "out of memory");
	in->globals = d;
	for (int i = 0; i < in->res->n_globals; i++)
		if (probe_global_addr(k, f.module, &in->res->globals[i], &d->globals[d->n_globals++], cause) < 0)
			return -1;
	return 0;
}

void hook_probe_inst_build(struct hook_kernel *k, const struct hook_launch *l, int cc, const struct hook_probe_list *pl,
			   struct hook_inst *in)
{
	char *cause = NULL;
	double ms_jit = 0;
	if (pl->n == 0)
		cause_set(&cause, "%s", pl->cause ? pl->cause : "no probes");
	else if (probe_build(k, l, cc, pl, in, &ms_jit, &cause) == 0)
		in->ok = 1;
	if (!in->ok) {
		in->reason = cause ? cause : strdup("instrumentation failed");
		cause = NULL;
	}
	/* NTOP_PROBES that all failed were said at load; a control file's set
	 * is new to the reader, so its failure is reported per kernel. */
	if ((pl->n > 0 || in->set) && k->has_ptx)
		probe_emit_instrument(k, in, pl, ms_jit);
	free(cause);
}

/* Is `in` the copy for (ctx, set, shape)? Also asked without probe_lock
 * (hook_probe_inst): set and shape never change, ctx goes NULL atomically. */
static int probe_inst_fits(const struct hook_inst *in, CUcontext ctx, const struct hook_ctl_set *set,
			   unsigned shape)
{
	return in->set == set && in->shape == shape && __atomic_load_n(&in->ctx, __ATOMIC_ACQUIRE) == ctx;
}

/* Under probe_lock. */
static struct hook_inst *probe_inst_find(struct hook_kernel *k, CUcontext ctx, const struct hook_ctl_set *set,
					 unsigned shape)
{
	struct hook_inst *in;
	for (in = k->insts; in && !probe_inst_fits(in, ctx, set, shape); in = in->next)
		;
	return in;
}

/* A new copy of k for (ctx, set, l's shape), built now or queued (with
 * `queue_only`, queued or not made: a thread without ctx current cannot
 * build it); under probe_lock. */
static struct hook_inst *probe_inst_new(struct hook_kernel *k, const struct hook_launch *l, CUcontext ctx, int cc,
					const struct hook_ctl_set *set, int background, int queue_only)
{
	struct hook_probe_list pl = hook_probe_list_locked(set);
	struct hook_inst *in = hook_inst_new();
	if (!in)
		return NULL;
	in->ctx = ctx;
	in->set = set;
	in->shape = engine_shape_of(l->grid, l->block);
	in->regs_orig = in->regs_probed = in->occ_orig = in->occ_probed = -1;
	in->building = background && hook.cfg.probe_async && pl.n > 0;
	if (!in->building || hook_builder_queue(k, l, ctx, cc, &pl, in) < 0) {
		if (queue_only) {
			free(in);
			return NULL;
		}
		in->building = 0;
		hook_probe_inst_build(k, l, cc, &pl, in);
	}
	in->next = k->insts;
	k->insts = in;
	return in;
}

/* The instrumented copy of k for (ctx, set, the launch's shape), built on
 * first use. 1D launches get a copy that reads no y/z indices (engine.h);
 * a kernel also launched with 2D or 3D blocks or grids gets a second one.
 * With `background` a new copy goes to the builder thread and comes back
 * `building` (unless NTOP_PROBE_ASYNC=0, `record --wait-build`: the app's
 * thread should not wait out the driver's JIT, tens of ms a kernel, for a
 * probe it picked; the price is that launches before the copy is ready run
 * unprobed); without, a copy being built is waited for. */
struct hook_inst *hook_probe_inst(struct hook_kernel *k, const struct hook_launch *l, CUcontext ctx, int cc,
				  const struct hook_ctl_set *set, int background)
{
	/* The lock is a cache line other threads take: ~0.05 us of every
	 * probed launch on an H200's host, where the kernel's last copy is the
	 * answer. */
	unsigned shape = engine_shape_of(l->grid, l->block);
	struct hook_inst *in = __atomic_load_n(&k->inst_hint, __ATOMIC_ACQUIRE);
	if (!in || !probe_inst_fits(in, ctx, set, shape)) {
		pthread_mutex_lock(&hook.probe_lock);
		in = probe_inst_find(k, ctx, set, shape);
		int made = !in;
		if (made)
			in = probe_inst_new(k, l, ctx, cc, set, background, 0);
		if (in)
			__atomic_store_n(&k->inst_hint, in, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&hook.probe_lock);
		if (made)
			return in;
	}
	if (!background)
		hook_builder_wait(in);
	return in;
}

void hook_probe_note_launch(struct hook_kernel *k, const struct hook_launch *l)
{
	CUcontext ctx = NULL;
	const struct hook_device *dev = hook_cuda_launch_device(l, &ctx);
	if (!dev || !ctx)
		return;
	struct hook_launch_seen s = { .f = l->f, .ctx = ctx, .cc = dev->cc, .smem = l->smem };
	memcpy(s.grid, l->grid, sizeof s.grid);
	memcpy(s.block, l->block, sizeof s.block);
	pthread_mutex_lock(&hook.probe_lock);
	k->seen = s;
	pthread_mutex_unlock(&hook.probe_lock);
}

/* A probe picked live is built when the pick arrives, for the kernel's
 * last launch configuration, by the builder thread: a kernel launched once
 * a step then runs probed at its next launch, not the one after. The
 * context is checked and the copy queued under probe_lock, which a
 * context's teardown takes to clear `seen` and mark its copies dead. */
void hook_probe_prebuild(struct hook_kernel *k, const struct hook_ctl_set *set)
{
	if (!hook.cfg.probe_async || !k->has_ptx || (k->mod && k->mod->unloaded))
		return;
	pthread_mutex_lock(&hook.probe_lock);
	struct hook_launch_seen s = k->seen;
	if (s.ctx) {
		struct hook_launch l = { .f = s.f, .smem = s.smem };
		memcpy(l.grid, s.grid, sizeof l.grid);
		memcpy(l.block, s.block, sizeof l.block);
		if (!probe_inst_find(k, s.ctx, set, engine_shape_of(l.grid, l.block)) &&
		    probe_inst_new(k, &l, s.ctx, s.cc, set, 1, 1))
			hook_log("%s: probed copy queued when picked", k->name);
	}
	pthread_mutex_unlock(&hook.probe_lock);
}

void hook_cuda_picked(const struct hook_ctl_table *t)
{
	uint32_t n = 0;
	struct hook_kernel **all = hook_registry_kernels(&n);
	for (uint32_t i = 0; all && i < n; i++) {
		const struct hook_ctl_set *set = hook_control_set_of(t, all[i]->name);
		if (set)
			hook_probe_prebuild(all[i], set);
	}
	free(all);
}
