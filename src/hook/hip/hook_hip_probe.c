/* Probed HIP launches. On a kernel's first probed launch on a device the
 * engine instruments its code object (the one the device's target ID
 * loads, from the module's bundle: amdgpu_instrument disassembles,
 * inserts, reassembles with LLVM 19 and checks), and the real runtime
 * loads the probed object (hipModuleLoadData); the outcome is cached per
 * (kernel, device, probe set) and reported once in an `instrument` line.
 * Each probed launch then runs the probed copy with hipModuleLaunchKernel
 * (hipModuleLaunchCooperativeKernel for a cooperative launch whose probed
 * copy still fits, hook_hip_coop.c; hipDrvLaunchKernelEx with the app's
 * attributes for one through it, hook_hip_attrs.c) on the application's
 * stream, its arguments the original ones plus the
 * ntop_launch block and one pointer per map (from the hook's pool), between
 * two events of ours (and the app's own for hipExt*); the collector
 * (hook_hip_results.c) copies the maps back on the hook's stream. Whenever
 * anything is missing or fails, the original kernel runs and a `probe
 * status=declined` line says why. A probe given in its PTX form (the
 * built-in names resolve to probes/NAME.toml) is replaced by its GCN
 * version beside it, DIR/amd/NAME.toml. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/cause.h"
#include "common/timeutil.h"
#include "engine/amdgpu/amdgpu_co.h"
#include "engine/amdgpu/amdgpu_image.h"
#include "engine/amdgpu/amdgpu_instrument.h"
#include "engine/amdgpu/amdgpu_map.h"
#include "engine/probe/probe.h"
#include "engine/probe/verify.h"
#include "hook/hook_extra.h"
#include "hook/hook_events.h"
#include "hook/hip/hook_hip.h"
#include "trace/events.h"

/* PTX probes and their GCN versions, loaded once (under hook.probe_lock). */
struct gcn_twin {
	struct gcn_twin *next;
	const struct probe *ptx;
	struct probe *gcn;       /* NULL: none, cause says why */
	char *cause;
};
static struct gcn_twin *twins;

static struct gcn_twin *gcn_twin_of(const struct probe *p)
{
	struct gcn_twin *t;
	for (t = twins; t && t->ptx != p; t = t->next)
		;
	if (t || !(t = calloc(1, sizeof *t)))
		return t;
	t->ptx = p;
	const char *slash = p->path ? strrchr(p->path, '/') : NULL;
	char *path = NULL, *cause = NULL;
	if (!slash || asprintf(&path, "%.*s/amd/%s", (int)(slash - p->path), p->path, slash + 1) < 0)
		path = NULL;
	if (!path)
		cause_set(&cause, "%s is a PTX probe; AMD kernels take GCN probes (isa = \"gcn\")", p->name);
	else if (probe_load_file(path, &t->gcn, &cause) < 0 || verify_probe(t->gcn, &cause) < 0 ||
		 t->gcn->isa != PROBE_ISA_GCN) {
		char *why = cause;
		cause = NULL;
		cause_set(&cause, "%s is a PTX probe and its GCN version %s is unusable: %s", p->name, path,
			  why ? why : "not isa = \"gcn\"");
		free(why);
		probe_free(t->gcn);
		t->gcn = NULL;
	}
	free(path);
	t->cause = cause;
	t->next = twins;
	twins = t;
	return t;
}

/* The set's probes as GCN probes; -1 with a cause. */
static int gcn_probes(const struct hook_probe_list *pl, struct probe **out, char **cause)
{
	if (pl->n == 0)
		return cause_set(cause, "%s", pl->cause ? pl->cause : "no probes");
	for (int i = 0; i < pl->n; i++) {
		if (pl->v[i]->isa == PROBE_ISA_GCN) {
			out[i] = pl->v[i];
			continue;
		}
		struct gcn_twin *t = gcn_twin_of(pl->v[i]);
		if (!t || !t->gcn)
			return cause_set(cause, "%s", t ? t->cause : "out of memory");
		out[i] = t->gcn;
	}
	return 0;
}

static void emit_instrument(const struct hook_kernel *k, const struct hook_inst *in, const char *probes,
			    const struct amdgpu_instrumented *r, double ms_load)
{
	if (!hook_events_on())
		return;
	struct strbuf sb;
	hook_event_begin(&sb, "instrument");
	event_add_int(&sb, "kid", k->kid);
	event_add(&sb, "status", in->ok ? "ok" : "failed");
	event_add(&sb, "probes", probes);
	if (!in->ok)
		event_add(&sb, "reason", in->reason);
	event_add_int(&sb, "regs_orig", in->regs_orig);
	event_add_int(&sb, "regs_probed", in->regs_probed);
	if (r) {
		event_add(&sb, "target", r->proc);
		event_add_int(&sb, "lines_in", r->n_insns);
		event_add_int(&sb, "lines_probed", r->check.original + r->check.inserted);
		event_add_int(&sb, "sites", r->inj.stats.sites);
		event_add_int(&sb, "sites_no_addr", r->inj.stats.sites_no_addr);
		event_addf(&sb, "ms_parse", "%.3f", r->ms_disasm);
		event_addf(&sb, "ms_inject", "%.3f", r->ms_inject);
		event_addf(&sb, "ms_emit", "%.3f", r->ms_write + r->ms_check);
	}
	event_addf(&sb, "ms_jit", "%.3f", ms_load);
	hook_event_emit(&sb);
}

/* The kernel's code object for the device: explicit argument count and
 * VGPRs of the original from its metadata. */
static int pick_object(const struct hook_kernel *k, const struct hip_device *dev, struct amdgpu_objects *objs,
		       int *index, char **cause)
{
	struct amdgpu_target t;
	if (!k->mod || !k->mod->image)
		return cause_set(cause, "%s", k->reason ? k->reason : "no code object");
	if (!dev->arch[0])
		return cause_set(cause, "the HIP runtime names no target for device %d", dev->ordinal);
	if (amdgpu_target_parse(dev->arch, &t, cause) < 0 || amdgpu_image_objects(k->mod->image, k->mod->size, objs,
										 cause) < 0)
		return -1;
	*index = amdgpu_image_pick(objs, &t, cause);
	if (*index < 0) {
		amdgpu_image_objects_done(objs);
		return -1;
	}
	return 0;
}

static int plan_original(const struct amdgpu_object *o, const char *kernel, struct hip_plan *p, int *vgprs,
			 char **cause)
{
	struct amdgpu_co co;
	if (amdgpu_co_open(o->data, o->size, &co, cause) < 0)
		return -1;
	const struct amdgpu_co_kernel *ck = amdgpu_co_kernel(&co, kernel);
	if (ck) {
		p->n_explicit = ck->meta->n_explicit;
		*vgprs = (int)ck->meta->vgpr_count;
	}
	amdgpu_co_done(&co);
	return ck ? 0 : cause_set(cause, "the %s code object has no kernel %s", o->id, kernel);
}

static void plan_names(struct hip_plan *p, struct probe *const *v, int n)
{
	for (int i = 0; i < n; i++) {
		size_t len = strlen(p->probes);
		snprintf(p->probes + len, sizeof p->probes - len, "%s%s", i ? "," : "", v[i]->name);
	}
}

/* Instruments, loads and finds the probed kernel: fills in (ok or reason). */
static int inst_build(struct hook_kernel *k, const struct hip_device *dev, struct probe *const *v, int n,
		      struct hook_inst *in, struct hip_plan *p, char **cause)
{
	struct amdgpu_objects objs;
	int index = -1, rc = -1;
	if (pick_object(k, dev, &objs, &index, cause) < 0) {
		in->reason = strdup(*cause ? *cause : "no code object for the device");
		emit_instrument(k, in, p->probes, NULL, 0);
		return -1;
	}
	const struct amdgpu_object *o = &objs.v[index];
	struct amdgpu_instrumented r;
	memset(&r, 0, sizeof r);
	double ms_load = 0;
	if (plan_original(o, k->name, p, &in->regs_orig, cause) == 0 &&
	    amdgpu_instrument(o->data, o->size, k->name, v, n, &r, cause) == 0) {
		p->elf = r.obj.elf;
		r.obj.elf = NULL;
		p->launch_offset = r.inj.launch_offset;
		p->kernarg_size = r.inj.kernarg_size;
		p->wave = r.inj.wave;
		p->n_maps = r.inj.n_maps;
		memcpy(p->maps, r.inj.maps, sizeof p->maps);
		in->regs_probed = (int)r.inj.alloc.kd_vgprs;
		uint64_t t0 = time_mono_ns();
		hipError_t e = hipr.hipModuleLoadData ? hipr.hipModuleLoadData(&p->module, p->elf) : HIP_ERROR_NOT_FOUND;
		ms_load = (double)(time_mono_ns() - t0) / 1e6;
		if (e != HIP_SUCCESS)
			cause_set(cause, "the HIP runtime refused the probed %s code object (HIP error %d)", r.proc, e);
		else if ((e = hipr.hipModuleGetFunction(&p->func, p->module, k->name)) != HIP_SUCCESS)
			cause_set(cause, "the probed module has no function %s (HIP error %d)", k->name, e);
		else
			rc = 0;
	}
	in->ok = rc == 0;
	if (!in->ok)
		in->reason = strdup(*cause ? *cause : "instrumentation failed");
	emit_instrument(k, in, p->probes, in->ok || r.n_insns ? &r : NULL, ms_load);
	amdgpu_instrumented_done(&r);
	amdgpu_image_objects_done(&objs);
	return rc;
}

/* The instrumented copy of k for (device, set), built on first use. */
static struct hook_inst *inst_get(struct hook_kernel *k, const struct hip_device *dev, const struct hook_ctl_set *set)
{
	void *key = (void *)(uintptr_t)(dev->ordinal + 1);
	pthread_mutex_lock(&hook.probe_lock);
	struct hook_inst *in;
	for (in = k->insts; in && (in->ctx != key || in->set != set); in = in->next)
		;
	if (in || !(in = hook_inst_new())) {
		pthread_mutex_unlock(&hook.probe_lock);
		return in;
	}
	struct hip_plan *p = calloc(1, sizeof *p);
	in->ctx = key;
	in->set = set;
	in->regs_orig = in->regs_probed = -1;
	in->globals = p;
	struct hook_probe_list pl = hook_probe_list_locked(set);
	struct probe *v[64];
	char *cause = NULL;
	if (!p) {
		in->reason = strdup("out of memory");
	} else if (pl.n > 64 || gcn_probes(&pl, v, &cause) < 0) {
		in->reason = cause ? cause : strdup("too many probes");
		cause = NULL;
		plan_names(p, pl.v, pl.n > 64 ? 0 : pl.n);
		emit_instrument(k, in, p->probes, NULL, 0);
	} else {
		plan_names(p, v, pl.n);
		inst_build(k, dev, v, pl.n, in, p, &cause);
	}
	free(cause);
	in->next = k->insts;
	k->insts = in;
	pthread_mutex_unlock(&hook.probe_lock);
	return in;
}

/* Each map 256-aligned in one buffer; -1 when one is 4 GiB or more, or
 * all are over half the budget. */
static int job_layout(const struct hip_plan *p, struct hip_job *j, char **cause)
{
	uint64_t blocks = (uint64_t)j->grid[0] * j->grid[1] * j->grid[2], off = 0;
	uint32_t threads = j->block[0] * j->block[1] * j->block[2];
	for (int i = 0; i < p->n_maps; i++) {
		uint64_t b = amdgpu_map_bytes(&p->maps[i].map, blocks, threads, p->wave);
		j->units[i] = amdgpu_map_units(&p->maps[i].map, blocks, threads, p->wave);
		if (!b || !j->units[i] || off > UINT64_MAX - b - 255)
			return cause_set(cause, "map %s size overflows", p->maps[i].map.name);
		/* the probe code's offsets into a map are 32-bit */
		if (b > UINT32_MAX)
			return cause_set(cause, "map %s needs %llu bytes: over the 4 GiB a probe's 32-bit offsets reach",
					 p->maps[i].map.name, (unsigned long long)b);
		j->map_off[i] = off;
		off = (off + b + 255) & ~(uint64_t)255;
	}
	j->bytes = off;
	if (off > hook.cfg.map_budget / 2)
		return cause_set(cause, "maps need %llu bytes, more than half the map budget (%llu bytes; block "
				 "sampling is not done on AMD)", (unsigned long long)off,
				 (unsigned long long)hook.cfg.map_budget);
	return 0;
}

/* Arguments of the probed launch: the originals, then ntop_launch and the
 * map pointers, as kernelParams, or in a copy of the `extra` buffer at
 * their offsets in the probed kernarg segment. */
struct probe_args {
	void *params[256];
	void *extra[5];
	uint8_t *buf;
	size_t buf_size;
	uint32_t launch[8];
	uint64_t maps[AMDGPU_MAX_MAPS];
};

static int args_build(const struct hip_launch *l, const struct hip_plan *p, const struct hip_job *j,
		      struct probe_args *a, char **cause)
{
	amdgpu_map_launch(a->launch, j->grid, j->block, p->wave);
	for (int i = 0; i < p->n_maps; i++)
		a->maps[i] = (uint64_t)(uintptr_t)j->buf + j->map_off[i];
	if (!l->extra) {
		if (p->n_explicit + 1 + p->n_maps > 256 || (p->n_explicit > 0 && !l->params))
			return cause_set(cause, "%d explicit arguments and no kernelParams", p->n_explicit);
		for (int i = 0; i < p->n_explicit; i++)
			a->params[i] = l->params[i];
		a->params[p->n_explicit] = a->launch;
		for (int i = 0; i < p->n_maps; i++)
			a->params[p->n_explicit + 1 + i] = &a->maps[i];
		return 0;
	}
	static const struct hook_extra_keys keys = { HIP_LAUNCH_PARAM_BUFFER_POINTER, HIP_LAUNCH_PARAM_BUFFER_SIZE,
						    HIP_LAUNCH_PARAM_END };
	void *obuf;
	size_t *osize;
	if (hook_extra_buffer(l->extra, &keys, &obuf, &osize, cause) < 0)
		return -1;
	if (*osize > p->launch_offset)
		return cause_set(cause, "extra array with a buffer larger than the kernel's arguments");
	a->buf_size = p->kernarg_size;
	if (!(a->buf = calloc(1, a->buf_size)))
		return cause_set(cause, "out of memory");
	memcpy(a->buf, obuf, *osize);
	memcpy(a->buf + p->launch_offset, a->launch, sizeof a->launch);
	for (int i = 0; i < p->n_maps; i++)
		memcpy(a->buf + p->maps[i].arg_offset, &a->maps[i], 8);
	a->extra[0] = HIP_LAUNCH_PARAM_BUFFER_POINTER;
	a->extra[1] = a->buf;
	a->extra[2] = HIP_LAUNCH_PARAM_BUFFER_SIZE;
	a->extra[3] = &a->buf_size;
	a->extra[4] = HIP_LAUNCH_PARAM_END;
	return 0;
}

static void job_free(struct hip_job *j)
{
	if (j->start)
		hipr.hipEventDestroy(j->start);
	if (j->end)
		hipr.hipEventDestroy(j->end);
	if (j->buf)
		hook_hip_pool_put(j->ordinal, j->buf, j->bytes);
	free(j);
}

static struct hip_job *job_new(const struct hip_launch *l, struct hook_kernel *k, const struct hip_device *dev,
			       const struct hip_plan *p, char **cause)
{
	struct hip_job *j = calloc(1, sizeof *j);
	if (!j) {
		cause_set(cause, "out of memory");
		return NULL;
	}
	*j = (struct hip_job){ .k = k, .plan = p, .seq = l->seq, .wall_ns = time_wall_ns(), .ordinal = dev->ordinal,
			       .device = *dev->d, .grid = { l->grid[0], l->grid[1], l->grid[2] },
			       .block = { l->block[0], l->block[1], l->block[2] }, .smem = l->smem };
	hipError_t e;
	if (job_layout(p, j, cause) < 0 || !(j->buf = hook_hip_pool_take(dev->ordinal, j->bytes, cause)))
		;
	else if ((e = hipr.hipEventCreate(&j->start)) != HIP_SUCCESS || (e = hipr.hipEventCreate(&j->end)) != HIP_SUCCESS)
		cause_set(cause, "hipEventCreate failed (HIP error %d)", e);
	else
		return j;
	job_free(j);
	return NULL;
}

static int probe_capturing(hipStream_t s)
{
	int st = HIP_CAPTURE_STATUS_NONE;
	/* an error counts as capturing: never add work to a capture we cannot see */
	return hipr.hipStreamIsCapturing &&
	       (hipr.hipStreamIsCapturing(s, &st) != HIP_SUCCESS || st != HIP_CAPTURE_STATUS_NONE);
}

/* The probed copy, launched as the application launched the original:
 * hipDrvLaunchKernelEx with the application's config (its attributes
 * included), cooperatively for cooperative entry points. */
static hipError_t probe_run(const struct hip_launch *l, const struct hip_plan *p, const struct hip_job *j,
			    struct probe_args *a)
{
	void **params = l->extra ? NULL : a->params, **extra = l->extra ? a->extra : NULL;
	if (l->config)
		return hipr.hipDrvLaunchKernelEx ? hipr.hipDrvLaunchKernelEx(l->config, p->func, params, extra)
						 : HIP_ERROR_NOT_FOUND;
	if (l->cooperative)
		return hipr.hipModuleLaunchCooperativeKernel
			       ? hipr.hipModuleLaunchCooperativeKernel(p->func, j->grid[0], j->grid[1], j->grid[2],
									j->block[0], j->block[1], j->block[2],
									(unsigned)l->smem, l->ostream, params)
			       : HIP_ERROR_NOT_FOUND;
	return hipr.hipModuleLaunchKernel(p->func, j->grid[0], j->grid[1], j->grid[2], j->block[0], j->block[1],
					  j->block[2], (unsigned)l->smem, l->ostream, params, extra);
}

/* A call of ours that failed left its error for the app's next
 * hipGetLastError, as if the app's launch had failed (it then runs the
 * original, which succeeds). Cleared when the app had no error waiting;
 * an error it had waiting was replaced by ours, and cannot be put back. */
static void probe_forget_error(hipError_t pending, char **cause)
{
	if (!hipr.hipGetLastError)
		return;
	if (pending == HIP_SUCCESS)
		hipr.hipGetLastError();
	else if (cause && *cause)
		cause_set(cause, "%s; the application's unread error %d was replaced by it", *cause, (int)pending);
}

/* Queues the probed kernel between our events (and the app's, hipExt*). */
static int probe_enqueue(const struct hip_launch *l, const struct hip_plan *p, struct hip_job *j, char **cause)
{
	struct probe_args a;
	memset(&a, 0, sizeof a);
	if (args_build(l, p, j, &a, cause) < 0) {
		free(a.buf);
		return -1;
	}
	hipStream_t s = l->ostream;
	hipError_t e, pending = hipr.hipPeekAtLastError ? hipr.hipPeekAtLastError() : HIP_SUCCESS;
	int rc = -1;
	if (l->ev_start && (e = hipr.hipEventRecord(l->ev_start, s)) != HIP_SUCCESS)
		cause_set(cause, "hipEventRecord of the launch's start event failed (HIP error %d)", e);
	else if ((e = hipr.hipEventRecord(j->start, s)) != HIP_SUCCESS)
		cause_set(cause, "hipEventRecord failed (HIP error %d)", e);
	else if ((e = probe_run(l, p, j, &a)) != HIP_SUCCESS)
		cause_set(cause, "probed launch failed (HIP error %d); the original ran", e);
	else
		rc = 0;
	free(a.buf);
	if (rc < 0) {
		probe_forget_error(pending, cause);
		return -1;
	}
	/* queued: never launch the original a second time */
	if ((e = hipr.hipEventRecord(j->end, s)) != HIP_SUCCESS ||
	    (l->ev_stop && (e = hipr.hipEventRecord(l->ev_stop, s)) != HIP_SUCCESS)) {
		hook_event_warn("probed launch %llu: recording its end event failed (HIP error %d), result lost",
				(unsigned long long)j->seq, e);
		return 1;
	}
	return 0;
}

int hook_hip_probe_launch(struct hip_launch *l, struct hook_kernel *k, const struct hook_probe_pick *pick,
			  hipError_t *rc)
{
	char *cause = NULL;
	const struct hip_device *dev = NULL;
	struct hook_inst *in = NULL;
	struct hip_job *j = NULL;
	if (!k->has_ptx)
		return hook_probe_give_up(k, l->seq, pick, k->reason);
	if (probe_capturing(l->ostream))
		cause_set(&cause, "stream capture active: launches captured into a HIP graph run unprobed");
	else if (l->config && hook_hip_attrs_check(l->config, &l->cooperative, &cause) < 0)
		;
	else if (!(dev = hook_hip_device()))
		cause_set(&cause, "hipGetDevice failed: no current device");
	else if (!(in = inst_get(k, dev, pick->set)) || !in->ok)
		cause_set(&cause, "%s", in ? in->reason : "out of memory");
	else if (l->cooperative && hook_hip_coop_fits(l, in, dev, &cause) < 0)
		;
	else if ((j = job_new(l, k, dev, in->globals, &cause)) != NULL) {
		int q = probe_enqueue(l, in->globals, j, &cause);
		if (q >= 0) {
			*rc = HIP_SUCCESS;
			hook_hip_emit_launch(k, l, 1);
			if (q == 0)
				hook_hip_results_submit(j);
			/* else the kernel may still write the buffer: kept out of use */
			return 1;
		}
		job_free(j);
	}
	hook_probe_give_up(k, l->seq, pick, cause ? cause : "declined");
	free(cause);
	return 0;
}
