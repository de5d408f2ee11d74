/* Internals shared by the CUDA backend's files (hook_cuda*.c). */
#ifndef NTOP_HOOK_CUDA_H
#define NTOP_HOOK_CUDA_H
#include <stdint.h>
#include <cuda.h>
#include "engine/engine.h"
#include "engine/ptx/ptxas_locate.h"
#include "hook/hook_probe_sel.h"
#include "hook/hook_registry.h"
#include "hook/hook_state.h"

/* One launch as the entry points describe it, normalised. */
struct hook_launch {
	enum hook_row_id row;       /* the entry point called */
	const char *api;            /* exported entry point name */
	CUfunction f;
	unsigned grid[3], block[3], smem;
	CUstream stream;            /* as given (0 = default stream of the API) */
	CUstream ostream;           /* for our own async calls: CU_STREAM_PER_THREAD for _ptsz + 0 */
	void **params, **extra;
	const CUlaunchConfig *config; /* cuLaunchKernelEx only */
	int cooperative;
	uint64_t seq;
	int dev;                    /* device ordinal of the current context, -1 unknown */
	int timed;                  /* sampled for timing (hook_timing_wanted) */
	uint64_t entry_ns;          /* probed: when the hook took the launch (time_mono_ns) */
	uint64_t submit_ns;         /* probed: when the probed kernel was queued */
	uint64_t fwd_ns, queued_ns; /* NTOP_SELF_TIME=1, probed: before the driver's launch call, after
				     * the end event (hook_selftime.h) */
	uint64_t found_ns;          /* NTOP_SELF_TIME=1: the hook's entry (0: not timed), for P_FIND */
	int slab;                   /* probed: its map buffer's device slab was allocated on its path */
	int beside;                 /* probed: another of the hook's holding calls ran while it was queued */
	int first;                  /* the kernel's first launch: its capture check asks the driver */
};

/* Around the hook's own calls that hold all of the app's driver calls
 * while they run (a device slab's cuMemAlloc, a staging registration): a
 * probed launch queued meanwhile says `beside=1` (hook_probe_launch). */
static inline void hook_hold_begin(void)
{
	__atomic_add_fetch(&hook.holds_busy, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&hook.holds_began, 1, __ATOMIC_RELAXED);
}

static inline void hook_hold_end(void)
{
	__atomic_sub_fetch(&hook.holds_busy, 1, __ATOMIC_RELAXED);
}

/* hook_cuda.c */
/* Device facts of the calling thread's current context (NULL without one). */
const struct hook_device *hook_cuda_device(CUcontext *ctx);
/* The same for a launch: its device from the ordinal looked up at its start
 * (hook_cuda_current_dev: cached per thread, no driver call with one
 * device), the context asked once more. */
const struct hook_device *hook_cuda_launch_device(const struct hook_launch *l, CUcontext *ctx);
/* The current context's device ordinal, -1 without one: cached per thread
 * for the context last seen (the registry generation invalidates it); 0
 * without asking the driver when cuInit saw one device. */
int hook_cuda_current_dev(void);
/* hook_cuda_capture.c. Is the stream capturing? Errors count as capturing
 * (never copy into a capture we cannot see). No driver call while no
 * capture the hook saw begin is open. */
int hook_cuda_capturing(CUstream stream);
/* The same, always asking the driver (where a kernel is first seen or its
 * configuration changes): a capture it finds that the hook did not see
 * begin makes every later check ask. */
int hook_cuda_capturing_asked(CUstream stream);
/* cuThreadExchangeStreamCaptureMode to relaxed around the hook's own
 * allocations, so they neither fail nor invalidate another thread's capture. */
CUstreamCaptureMode hook_cuda_relax_begin(void);
void hook_cuda_relax_end(CUstreamCaptureMode prev);
/* The context a hook thread keeps current from one job to the next. */
struct hook_ctx_held {
	CUcontext cur;
	uint64_t gen;               /* hook.ctx_gen when cur was made current */
};
/* Makes ctx current on the calling hook thread unless it already is (a
 * context that went may have left its address to a new one); 1 when it
 * is current. */
int hook_cuda_hold_ctx(struct hook_ctx_held *h, CUcontext ctx);

/* hook_cuda_launch.c */
CUresult hook_cuda_launch(struct hook_launch *l);
/* Forwards l to the real entry point with function f and params/extra. */
CUresult hook_cuda_forward(const struct hook_launch *l, CUfunction f, void **params, void **extra);
void hook_cuda_emit_launch(struct hook_kernel *k, const struct hook_launch *l, int probed, int capturing);

/* hook_cuda_attr.c */
/* Gives the probed copy of k every function attribute recorded for k (the
 * app's cuFuncSetAttribute, cuKernelSetAttribute, cuFuncSetCacheConfig,
 * cuKernelSetCacheConfig, cuFuncSetSharedMemConfig, on any of k's handles)
 * newer than *applied_gen; on the first call (*applied_gen == 0) also the
 * settable attributes the original `orig` (a CUfunction, or a CUkernel
 * passed as one) has and the copy lacks. *applied_gen is the copy's own
 * bookkeeping (0 at first, opaque after). 0, or -1 with a cause naming the
 * attribute and the CUDA error. When nothing changed: one atomic load. */
int hook_attr_apply(struct hook_kernel *k, CUfunction orig, CUfunction probed, uint64_t *applied_gen, char **cause);

/* hook_cuda_build.c */
/* Module globals of an instrumented copy: where the app's and the probed
 * module's copies live in this context. */
struct probe_global {
	CUdeviceptr app, probed;
	size_t size;
	int is_const;
};

struct probe_inst_data {
	struct probe_global globals[ENGINE_MAX_GLOBALS];
	int n_globals;
};

/* The PTX a kernel was built from, any arch (the backend's kernel_source). */
int hook_cuda_kernel_source(const struct hook_kernel *k, char **ptx, size_t *len, char **cause);

/* The instrumented copy of k for (ctx, set), built on first use (l: the
 * launch that asked, whose shape picks the form); with `background` and
 * not NTOP_PROBE_ASYNC=0 a new copy is built by the builder thread and comes
 * back with `building` set (the launch runs unprobed). */
struct hook_inst *hook_probe_inst(struct hook_kernel *k, const struct hook_launch *l, CUcontext ctx, int cc,
				  const struct hook_ctl_set *set, int background);
/* Notes l's configuration, handle and context as k's last seen (a launch
 * whose configuration changed). */
void hook_probe_note_launch(struct hook_kernel *k, const struct hook_launch *l);
/* Queues k's copy with `set` for the last configuration seen, unless
 * NTOP_PROBE_ASYNC=0 or there is one (a probe picked live). */
void hook_probe_prebuild(struct hook_kernel *k, const struct hook_ctl_set *set);
/* The backend's `picked`: hook_probe_prebuild for each kernel t picks. */
void hook_cuda_picked(const struct hook_ctl_table *t);
/* Builds `in` with ctx current: ok, or a reason; an `instrument` line. */
void hook_probe_inst_build(struct hook_kernel *k, const struct hook_launch *l, int cc, const struct hook_probe_list *pl,
			   struct hook_inst *in);

/* hook_cuda_builder.c: probed copies built off the application's threads. */
/* Queues in's build (ctx, the launch's shape and block size); -1 when the
 * thread cannot run (the caller builds it now). Caller holds probe_lock. */
int hook_builder_queue(struct hook_kernel *k, const struct hook_launch *l, CUcontext ctx, int cc,
		       const struct hook_probe_list *pl, struct hook_inst *in);
/* Until in is built (a graph's node cannot wait for a later launch). */
void hook_builder_wait(struct hook_inst *in);
/* The same for at most ns: 1 when the build is done. */
int hook_builder_wait_for(struct hook_inst *in, uint64_t ns);
/* ctx is about to go: queued builds for it are dropped, one under way is
 * waited for. */
void hook_builder_ctx_gone(CUcontext ctx);
void hook_builder_shutdown(void);
/* hook_cuda_assemble.c: what compiles one build's forms of a probed copy
 * (the entry form, then perhaps the exit-address one). The ptxas found
 * are looked for once a build, best first; one that fails is not run again
 * for the build's next form. */
struct hook_asm {
	int builder;                      /* off the app's threads */
	int n, next;                      /* ptxas found; the first not failed yet */
	char *ptxas[PTXAS_MAX_CANDIDATES];
	struct hook_njl *njl;             /* the real nvJitLink, or NULL */
};
void hook_asm_begin(struct hook_asm *a, int builder);
void hook_asm_end(struct hook_asm *a);
/* Compiles len bytes of probed PTX for sm_cc into *mod; *jit says what
 * did: "ptxas", "nvjitlink" or "driver". */
int hook_asm_load(struct hook_asm *a, const char *kname, const char *ptx, size_t len, int cc, CUmodule *mod,
		  const char **jit, char **cause);
/* Does the driver's JIT build copies off the app's threads
 * (NTOP_ASSEMBLER=jit, or neither ptxas nor nvJitLink found)? Before the
 * first build, ptxas is assumed. */
int hook_build_by_jit(void);
void hook_builder_fork_child(void);

/* hook_cuda_place.c: which form of a probed kernel to launch (engine.h's
 * ENGINE_ADDR_AT_EXIT). */
struct hook_fit {
	int occ;   /* blocks per SM at the launch's block size and shared memory; -1 unknown */
	int local; /* local memory bytes per thread (spills); -1 unknown */
};
void hook_place_fit(CUfunction f, unsigned threads, unsigned smem, struct hook_fit *fit);
/* Does a cost the kernel more than b (fewer blocks per SM, or more spills)? */
int hook_place_worse(const struct hook_fit *a, const struct hook_fit *b);
/* Attribute a of f, a CUfunction or a CUkernel passed as one; -1 unknown. */
int hook_func_attr(CUfunction f, CUfunction_attribute a);

/* hook_cuda_rdclink.c */
/* Loads probed PTX of module m's -rdc kernel linked with the PTX of the
 * other translation units of its __nv_relfatbin (m->ptx_image). */
int hook_rdc_link(const struct hook_module *m, const char *kernel, const char *ptx, int cc, CUmodule *mod,
		  char **cause);

/* hook_cuda_ctx.c */
/* Forgets everything the hook holds for ctx (timings, event pools,
 * instrumented copies, its modules' handles, and hook_results_ctx_gone),
 * before the driver destroys it. */
void hook_ctx_drop(CUcontext ctx);

/* hook_cuda_timing.c */
/* Whether the n-th launch of k is sampled for timing (NTOP_TIME_LAUNCHES). */
int hook_timing_wanted(struct hook_kernel *k, uint64_t n);
/* After a launch call: a timed one starts the sampling gap afresh. */
void hook_timing_launched(struct hook_kernel *k, const struct hook_launch *l);
/* 1 the first time for *once (a probed copy's first launch) when timing is on. */
int hook_timing_first_probed(int *once);
/* Records a start event; 0 and fills *t when timing goes ahead. */
int hook_timing_start(struct hook_kernel *k, uint64_t seq, CUstream stream, struct hook_timed **t);
void hook_timing_finish(struct hook_timed *t, CUstream stream);
void hook_timing_abort(struct hook_timed *t);
/* Emits `stats` for kernels whose counters moved (all when final). */
void hook_timing_stats(int final);
void hook_timing_shutdown(void);
void hook_timing_fork_child(void);
/* Before a context is destroyed: its pending timings and pooled events go;
 * returns once the timing thread is outside its polling pass (it then has
 * no context current). */
void hook_timing_ctx_gone(CUcontext ctx);
/* Event pool shared with the result path. */
CUevent hook_event_get(CUcontext ctx);
void hook_event_put(CUcontext ctx, CUevent e);
/* Events without timing, for waits alone: on an H100 recording one took
 * ~0.4 us against ~2 us for an event with timing, and with them as the end
 * events of untimed probed launches the app saw those launches 0.02-0.13x
 * faster (doc/performance.md). */
CUevent hook_event_get_bare(CUcontext ctx);
void hook_event_put_bare(CUcontext ctx, CUevent e);
void hook_timing_ensure_thread(void);

/* hook_cuda_probe.c */
struct hook_job;
/* Runs the probed copy; 1 when it launched (rc set), 0 when the original
 * must run (reason emitted, pick's reservation given back). */
int hook_probe_launch(struct hook_launch *l, struct hook_kernel *k, const struct hook_probe_pick *pick,
		      CUresult *rc);
/* What a probed launch needs before it is queued (the instrumented copy in
 * the current context, attributes applied, the job with its map buffer):
 * 0, -1 with a cause (the reservation is the caller's to give back), or 1
 * with `background` when the copy is being built (*in set, no job). */
struct hook_inst;
int hook_probe_prepare(const struct hook_launch *l, struct hook_kernel *k, const struct hook_probe_pick *pick,
		       int background, struct hook_inst **in, struct hook_job **job, char **cause);
/* A job for a launch of l's shape on `in` (plan, zeroed map buffer), or
 * NULL with a cause. */
struct hook_job *hook_probe_job_new(const struct hook_launch *l, struct hook_kernel *k, const struct hook_inst *in,
				    CUcontext ctx, const struct hook_device *dev, char **cause);
/* The map pointers the probed copy takes, in map order. */
void hook_probe_maps(const struct hook_inst *in, const struct hook_job *j, CUdeviceptr *maps);
/* Does the probed copy share module globals with the app's module? */
int hook_probe_uses_globals(const struct hook_inst *in);
/* A timed launch's job gets a start and an end event with timing; an
 * untimed one's an end event without (cheaper to record), made ahead or
 * taken here. */
void hook_probe_job_events(struct hook_job *j, int timed);
/* A job's events go back to their pools. */
void hook_probe_job_events_put(struct hook_job *j);
/* A prepared job never queued: its events and buffer go back (one made
 * ahead leaves the stager's byte count: hook_stage_settle). */
void hook_probe_job_free(struct hook_job *j);

/* hook_cuda_stage.c: the next probed launches' jobs, made ahead */
/* Starts bringing the slots of k's last copy from the stager's core (a
 * cache line transfer, ~0.1 us on an H200's host), to arrive while the
 * launch asks the driver about capture and context. */
void hook_stage_prefetch(const struct hook_kernel *k);
/* A job made ahead for `in` that fits l's shape (others go back): NULL
 * when there is none. */
struct hook_job *hook_stage_take(struct hook_inst *in, const struct hook_launch *l);
/* After its kernel was queued (launched) or when it is freed unlaunched
 * (0): a job made ahead leaves the stager's byte count, a launch is counted
 * as staged. Kept off the launch's way: both are counters the stager's core
 * writes too. */
void hook_stage_settle(struct hook_job *j, int launched);
/* On the app's thread after a probed launch of in (counted here, queued
 * at now_ns), its maps `bytes`: should the stager make the next launches'
 * jobs (hook_stager_ask)? */
int hook_stage_wanted(struct hook_inst *in, const struct hook_kernel *k, uint64_t bytes, uint64_t now_ns);
/* On the stager, l's context current: jobs of l's shape into every empty
 * slot of `in`, within the caps; at the byte cap, the jobs of the
 * context's copies launched last over STAGE_IDLE_NS ago go first. */
void hook_stage_fill(struct hook_inst *in, struct hook_kernel *k, const struct hook_launch *l,
		     const struct hook_device *dev);
/* Once `in` is built, before its first probed launch (its context
 * current): the jobs of its first probed launches, of the shape of the
 * launch that asked for it, in every slot, and the threads its launches
 * hand work to (the stager, the collector and the writers); how many jobs
 * were made. Runs once a copy (first_made; 0 after): the builder thread
 * calls it, and a copy built on its launch (`record --wait-build`) gets it
 * from that launch; *slab (when not NULL) says whether a device slab was
 * allocated. */
int hook_stage_first(struct hook_inst *in, struct hook_kernel *k, const struct hook_launch *l,
		     const struct hook_device *dev, int *slab);
/* ctx is about to go: the jobs made ahead there give their buffers back. */
void hook_stage_ctx_gone(CUcontext ctx);
/* The jobs made ahead in ctx go back to the pool (their buffers with them). */
void hook_stage_return(CUcontext ctx);
void hook_stage_fork_child(void);

/* hook_cuda_stager.c: the thread that makes them */
/* Starts the thread where it has not started (hook_stage_first does, so
 * no probed launch after a copy's first creates it). */
void hook_stager_start(void);
/* Asks for in's next launches' jobs, of l's shape in ctx (on device dev);
 * no-op while one request for `in` is queued. */
void hook_stager_ask(struct hook_inst *in, struct hook_kernel *k, const struct hook_launch *l, CUcontext ctx,
		     const struct hook_device *dev);
/* Asks for n spare device buffers of `bytes` in ctx. */
void hook_stage_want_spare(CUcontext ctx, uint64_t bytes, uint64_t n);
/* ctx is about to go: its queued requests are dropped, the one under way waited for. */
void hook_stager_ctx_gone(CUcontext ctx);
void hook_stager_shutdown(void);
void hook_stager_fork_child(void);

/* hook_cuda_results.c */
/* Queues a probed launch (already on its stream) for the collector. */
void hook_results_submit(struct hook_job *job);
/* Starts the collector and the writers, unless they run. */
void hook_results_start(void);
/* A probed launch's time on the app's thread (hook_state.h: cpu_pre_ns...). */
void hook_results_count_launch(uint64_t pre_ns, uint64_t post_ns, int waited);
/* Timing thread, every stats tick: a `results` line while a backlog moves. */
void hook_results_tick(void);
/* Exit: finishes every queued result while they keep coming out. */
void hook_results_shutdown(void);
void hook_results_fork_child(void);
/* Before ctx is destroyed (called once per teardown, on the thread that
 * destroys it, while it is still alive): no queued probed launch, buffer,
 * stream or event of ctx is used afterwards. */
void hook_results_ctx_gone(CUcontext ctx);

#endif
