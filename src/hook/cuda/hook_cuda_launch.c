/* Launch entry points. Every launch is counted; a `launch` line is emitted
 * only for a kernel's first launch, a configuration other than its last
 * line's (grid, block, shared memory, entry point) and every probed launch,
 * so the per-launch cost is a registry lookup and a few atomics. Sampled
 * launches are timed with pooled events, probed or not; matching kernels
 * take the probe path. */
#include <stdio.h>
#include <string.h>
#include "hook/cuda/hook_cuda.h"
#include "hook/cuda/hook_cuda_api.h"
#include "hook/cuda/hook_cuda_results.h"
#include "hook/hook_dispatch.h"
#include "hook/hook_events.h"
#include "hook/hook_kernel_events.h"
#include "hook/cuda/hook_table.h"
#include "trace/events.h"

CUresult hook_cuda_forward(const struct hook_launch *l, CUfunction f, void **params, void **extra)
{
	void *fn = hook.real[l->row];
	if (l->config) {
		CUresult (*ex)(const CUlaunchConfig *, CUfunction, void **, void **) = fn;
		return ex(l->config, f, params, extra);
	}
	if (l->cooperative) {
		__typeof__(&hook_cuLaunchCooperativeKernel) coop = fn;
		return coop(f, l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2], l->smem,
			    l->stream, params);
	}
	__typeof__(&hook_cuLaunchKernel) lk = fn;
	return lk(f, l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2], l->smem, l->stream,
		  params, extra);
}

/* Blocks per SM of the original function, asked once per (threads, smem):
 * every probed launch emits a line, and the query is no free driver call. */
static int launch_occupancy(struct hook_kernel *k, const struct hook_launch *l)
{
	unsigned threads = l->block[0] * l->block[1] * l->block[2];
	uint64_t key = ((uint64_t)threads << 32 | l->smem) + 1;
	if (__atomic_load_n(&k->occ_key, __ATOMIC_ACQUIRE) == key)
		return __atomic_load_n(&k->occ, __ATOMIC_RELAXED);
	int occ = 0;
	if (cu.cuOccupancyMaxActiveBlocksPerMultiprocessor &&
	    cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(&occ, l->f, (int)threads, l->smem) != CUDA_SUCCESS)
		occ = 0;
	__atomic_store_n(&k->occ, occ, __ATOMIC_RELAXED);
	__atomic_store_n(&k->occ_key, key, __ATOMIC_RELEASE);
	return occ;
}

void hook_cuda_emit_launch(struct hook_kernel *k, const struct hook_launch *l, int probed, int capturing)
{
	if (!hook_events_on())
		return;
	if (__atomic_load_n(&k->announced_pid, __ATOMIC_RELAXED) != hook.pid)
		hook_registry_announce(k);
	struct hook_launch_line line = { .seq = l->seq, .api = l->api, .grid = l->grid, .block = l->block,
					 .smem = l->smem, .stream = l->stream, .capturing = capturing,
					 .probed = probed, .occ = launch_occupancy(k, l), .dev = l->dev,
					 .cpu_ns = probed ? l->submit_ns - l->entry_ns : 0, .slab = probed && l->slab,
					 .beside = probed && l->beside };
	hook_launch_line(k, &line);
}

static CUresult launch_unprobed(struct hook_launch *l, struct hook_kernel *k)
{
	struct hook_timed *t = NULL;
	int timed = l->timed && hook_timing_start(k, l->seq, l->ostream, &t) == 0;
	uint64_t t0 = l->entry_ns ? hook_self_now() : 0; /* 0: no self-time for this launch */
	CUresult rc = hook_cuda_forward(l, l->f, l->params, l->extra);
	if (t0) {
		uint64_t t1 = hook_self_now();
		hook_self_add(k, HOOK_SELF_U_PRE, l->entry_ns, t0);
		hook_self_add(k, HOOK_SELF_U_DRV, t0, t1);
		l->entry_ns = t1; /* what follows is U_POST */
	}
	if (timed && rc == CUDA_SUCCESS)
		hook_timing_finish(t, l->ostream);
	else if (timed)
		hook_timing_abort(t);
	return rc;
}

CUresult hook_cuda_launch(struct hook_launch *l)
{
	uint64_t t_entry = hook_self_now();
	struct hook_kernel *k = hook_registry_kernel(l->f);
	l->seq = __atomic_add_fetch(&hook.seq, 1, __ATOMIC_RELAXED);
	CUresult rc;
	if (!k) {
		__atomic_add_fetch(&hook.launches, 1, __ATOMIC_RELAXED);
		rc = hook_cuda_forward(l, l->f, l->params, l->extra);
		hook_results_note_queued();
		return rc;
	}
	uint64_t n = __atomic_add_fetch(&k->launches, 1, __ATOMIC_RELAXED);
	l->entry_ns = n > 1 ? t_entry : 0; /* a kernel's first launch registers it: left out of self-time */
	l->first = n == 1;
	if (l->first)
		hook_self_ready(k);
	l->dev = hook_cuda_current_dev();
	hook_count_dev_launch(k, l->dev);
	if (!hook.atexit_done)
		hook_dispatch_register_exit();
	uint64_t t_found = l->entry_ns ? hook_self_now() : 0;
	l->found_ns = l->entry_ns; /* a probed launch counts its lookup and selection as P_FIND */
	l->timed = hook_timing_wanted(k, n);
	if (hook_events_on()) {
		hook_timing_ensure_thread();
		hook_control_ensure_thread();
		struct hook_probe_pick pick;
		if (hook_probe_wanted(k, &pick) && hook_probe_launch(l, k, &pick, &rc)) {
			hook_timing_launched(k, l);
			return rc; /* it counted itself in hook_results_app_queued */
		}
		if (hook_launch_cfg_changed(k, l->grid, l->block, l->smem, l->dev, l->api)) {
			hook_cuda_emit_launch(k, l, 0, hook_cuda_capturing_asked(l->ostream));
			if (k->has_ptx && hook.cfg.control)
				hook_probe_note_launch(k, l);
		}
	}
	if (t_found) { /* what follows the selection is U_PRE */
		hook_self_add(k, HOOK_SELF_U_LOOKUP, l->found_ns, t_found); /* entry_ns: reset by a declined probe */
		l->entry_ns = hook_self_now();
		hook_self_add(k, HOOK_SELF_U_SELECT, t_found, l->entry_ns);
	}
	rc = launch_unprobed(l, k);
	hook_timing_launched(k, l);
	hook_results_note_queued();
	if (l->entry_ns) {
		hook_self_add(k, HOOK_SELF_U_POST, l->entry_ns, hook_self_now());
		hook_self_count(k, 0, l->timed);
	}
	return rc;
}

static CUresult launch_kernel(enum hook_row_id row, int ptsz, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
			      unsigned bx, unsigned by, unsigned bz, unsigned smem, CUstream s, void **params,
			      void **extra, int coop)
{
	struct hook_launch l = { .row = row, .api = hook_table[row].name, .f = f, .grid = { gx, gy, gz }, .block = { bx, by, bz }, .smem = smem,
				 .stream = s, .ostream = s, .params = params, .extra = extra, .cooperative = coop };
	if (ptsz && !s)
		l.ostream = CU_STREAM_PER_THREAD;
	return hook_cuda_launch(&l);
}

CUresult hook_cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
			     unsigned bz, unsigned smem, CUstream s, void **params, void **extra)
{
	return launch_kernel(HOOK_ROW_cuLaunchKernel, 0, f, gx, gy, gz, bx, by, bz, smem, s, params, extra, 0);
}

CUresult hook_cuLaunchKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
				  unsigned bz, unsigned smem, CUstream s, void **params, void **extra)
{
	return launch_kernel(HOOK_ROW_cuLaunchKernel_ptsz, 1, f, gx, gy, gz, bx, by, bz, smem, s, params, extra, 0);
}

CUresult hook_cuLaunchCooperativeKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
					unsigned by, unsigned bz, unsigned smem, CUstream s, void **params)
{
	return launch_kernel(HOOK_ROW_cuLaunchCooperativeKernel, 0, f, gx, gy, gz, bx, by, bz, smem, s, params, NULL, 1);
}

CUresult hook_cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
					     unsigned by, unsigned bz, unsigned smem, CUstream s, void **params)
{
	return launch_kernel(HOOK_ROW_cuLaunchCooperativeKernel_ptsz, 1, f, gx, gy, gz, bx, by, bz, smem, s, params, NULL,
			     1);
}

static int launch_ex_cooperative(const CUlaunchConfig *c)
{
	for (unsigned i = 0; i < c->numAttrs; i++)
		if (c->attrs[i].id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE && c->attrs[i].value.cooperative)
			return 1;
	return 0;
}

static CUresult launch_ex(enum hook_row_id row, int ptsz, const CUlaunchConfig *c, CUfunction f, void **params,
			  void **extra)
{
	if (!c)
		return ((__typeof__(&hook_cuLaunchKernelEx))hook.real[row])(c, f, params, extra);
	struct hook_launch l = { .row = row, .api = hook_table[row].name, .f = f, .grid = { c->gridDimX, c->gridDimY, c->gridDimZ },
				 .block = { c->blockDimX, c->blockDimY, c->blockDimZ }, .smem = c->sharedMemBytes,
				 .stream = c->hStream, .ostream = c->hStream, .params = params, .extra = extra,
				 .config = c, .cooperative = launch_ex_cooperative(c) };
	if (ptsz && !c->hStream)
		l.ostream = CU_STREAM_PER_THREAD;
	return hook_cuda_launch(&l);
}

CUresult hook_cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **params, void **extra)
{
	return launch_ex(HOOK_ROW_cuLaunchKernelEx, 0, c, f, params, extra);
}

CUresult hook_cuLaunchKernelEx_ptsz(const CUlaunchConfig *c, CUfunction f, void **params, void **extra)
{
	return launch_ex(HOOK_ROW_cuLaunchKernelEx_ptsz, 1, c, f, params, extra);
}
