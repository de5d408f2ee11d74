/* What the hook knows about the application's code: modules and libraries
 * (with a private copy of their image when it can yield PTX), kernels (one
 * record per kernel, reachable from every CUfunction and CUkernel handle that
 * names it), cuLink states (Numba's PTX) and graph executables. One lock,
 * held only for lookups and inserts; the per-launch counters are atomics. */
#ifndef NTOP_HOOK_REGISTRY_H
#define NTOP_HOOK_REGISTRY_H
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include "hook/hook_ptrmap.h"
#include "hook/hook_selftime.h"

/* Jobs made ahead per probed copy: the second covers the stager's own
 * delay in noticing a request (its poll) when launches come fast. */
#define HOOK_STAGE_DEPTH 2
#define HOOK_CACHE_LINE 64 /* bytes: fields written by different threads keep this far apart */

struct hook_kernel;
struct hook_ctl_set;
struct hook_ctl_view;
struct hook_ctl_count;

struct hook_module {
	uint32_t mid;
	void *handle;         /* CUmodule, or CUlibrary when is_library */
	void *ctx;            /* CUcontext current at the load (a module dies with it); NULL for a library */
	int is_library;
	int unloaded;
	int kind;             /* enum image_kind */
	uint8_t *image;       /* private copy when it holds PTX or is a cubin */
	size_t size;
	int n_ptx, n_sass;
	char *link_ptx;       /* PTX texts (NUL-separated) from cuLink* (Numba), NVRTC,
				 nvJitLink or Triton's cache (hook_ptxsrc.h) */
	size_t link_ptx_len;
	uint8_t *ptx_image;   /* fatbin containers holding the PTX (-rdc: __nv_relfatbin) */
	size_t ptx_image_size;
	const char *source;   /* "app", "numba", "nvrtc", "nvjitlink", "triton", "rdc" */
	char *why;            /* why it has no PTX: every source looked at (NULL when it has) */
	struct hook_kernel *kernels; /* list through hook_kernel.next_in_mod */
};

/* An instrumented copy of a kernel in one context with one probe set. */
struct hook_inst {
	struct hook_inst *next;
	void *ctx;            /* CUcontext; NULL once it went (dead: never matched again) */
	int dead;             /* its context went: module and function are gone with it */
	uint64_t attrs_gen;   /* the kernel's attribute generation last applied to func (hook_attr_apply) */
	const struct hook_ctl_set *set; /* NULL: the NTOP_PROBES probes */
	int ok;               /* 0: failed, reason says why */
	char *reason;
	void *module;         /* CUmodule of the probed copy */
	const char *jit;      /* what compiled it (a literal: ptxas, driver, link) */
	void *func;           /* CUfunction of the probed copy */
	struct engine_result *res;
	int regs_orig, regs_probed;
	int occ_orig, occ_probed; /* blocks per SM at the first probed launch's shape; -1 unknown */
	int addr_at_exit;     /* the form that computes map addresses at each exit (engine.h) */
	unsigned shape;       /* launch shapes it assumes (ENGINE_BLOCK_1D, ENGINE_GRID_1D):
				 launched only where engine_shape_of gives the same */
	void *globals;        /* struct probe_inst_data (hook_cuda_probe.c) */
	int building;         /* the builder thread is making it (atomic): launches run unprobed */
	int deferred_said;    /* a `probe status=deferred` line went out for it */
	int timed_first;      /* its first probed launch was sampled for timing (atomic) */
	int staged_early;     /* its first launches' jobs were made with the copy (atomic): its first
				 probed launch asks for more (hook_cuda_stage.c) */
	int first_made;       /* hook_stage_first ran for it (atomic): by the builder, or by the
				 first probed launch of a copy built on the launch */
	/* Written for every probed launch by the launching thread and the
	 * stager: a cache line of their own, so the fields above, which each
	 * launch reads, stay in the launching thread's cache (hook_inst_new).
	 * staged: the next launches' jobs, made ahead (hook_cuda_stage.c; atomic). */
	_Alignas(HOOK_CACHE_LINE) struct hook_job *staged[HOOK_STAGE_DEPTH];
	int stage_asked;      /* a request to make them is queued (atomic; hook_cuda_stager.c) */
	uint64_t launches;    /* probed launches queued (atomic) */
	uint64_t last_ns;     /* its last probed launch queued, or its first jobs made (atomic) */
};

/* size zeroed bytes aligned to align (a type's _Alignof: calloc's is
 * less; size a multiple of it, as sizeof is), or NULL; free() frees it. */
void *hook_zalloc_aligned(size_t align, size_t size);
/* A zeroed hook_inst, aligned as its type asks; never freed, as copies
 * live as long as the process. */
struct hook_inst *hook_inst_new(void);

/* Function attributes the application set on any handle of a kernel
 * (cuFuncSetAttribute, cuKernelSetAttribute, cuFuncSetCacheConfig,
 * cuKernelSetCacheConfig, cuFuncSetSharedMemConfig), so a probed copy can be
 * given the same (hook_cuda_attr.c). */
enum hook_attr_id {
	HOOK_ATTR_MAX_DYN_SMEM,      /* CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES (bytes) */
	HOOK_ATTR_CARVEOUT,          /* CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT (percent, -1 default) */
	HOOK_ATTR_CLUSTER_W,         /* CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH (blocks) */
	HOOK_ATTR_CLUSTER_H,         /* ..._HEIGHT */
	HOOK_ATTR_CLUSTER_D,         /* ..._DEPTH */
	HOOK_ATTR_NON_PORTABLE,      /* CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED */
	HOOK_ATTR_SCHED_POLICY,      /* CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE */
	HOOK_ATTR_CACHE_CONFIG,      /* CUfunc_cache (cuFuncSetCacheConfig) */
	HOOK_ATTR_SMEM_CONFIG,       /* CUsharedconfig (cuFuncSetSharedMemConfig) */
	HOOK_ATTR_N
};

/* Each slot: (generation << 32) | (uint32_t)value, 0 while never set;
 * written under the registry lock, slot first, then `gen` (release), so a
 * reader that loads `gen` (acquire) sees every slot up to it. */
struct hook_attrs {
	uint64_t slot[HOOK_ATTR_N];
	uint64_t gen;              /* last generation given to a slot (atomic); 0: none set */
};

struct hook_launch_cfg {
	unsigned grid[3], block[3], smem;
	int dev;                   /* device ordinal, -1 unknown */
	const char *api;
};

#define HOOK_DEV_COUNTS 16 /* devices whose launches a kernel counts apart (ordinals 0..15) */

/* Read by every thread and written once or rarely first; then what the
 * launching threads count on every launch and the timing thread's sums,
 * each from a line of its own: a line one thread writes and another reads
 * makes every write a transfer between cores (hook_state.h). */
struct hook_kernel {
	uint32_t kid;
	char *name;
	struct hook_module *mod;   /* NULL when the handle was never seen created */
	void *library_kernel;      /* the CUkernel cuLibraryGetKernel gave, or NULL */
	struct hook_kernel *next_in_mod;
	int has_ptx;
	char *reason;              /* why it cannot be probed */
	int match;                 /* -1 not decided, 0/1: matches NTOP_KERNELS and probes are set */
	uint64_t next_sample_ns;   /* monotonic: earliest next sampled timing */
	uint64_t occ_key;          /* (threads, smem) of occ, + 1; 0: not asked yet (atomic) */
	int occ;                   /* blocks per SM of the original function at occ_key */
	int announced_pid;         /* process whose event stream has this kernel's `kernel` line */
	int source_pid;            /* process that saved its PTX for the UI (hook_source.c), under the lock */
	struct hook_inst *insts;   /* per context and probe set */
	struct hook_inst *inst_hint; /* the copy found last (atomic; copies are never freed): the
				      launch path's lookup without probe_lock (hook_probe_inst) */
	char *decline_reported;    /* last decline reason emitted (say it once) */
	struct hook_ctl_view *ctl; /* atomic: selection of the live control file */
	struct hook_ctl_count *ctl_counts; /* per (probe set, process), under hook.ctl.lock */
	struct hook_launch_seen {  /* under hook.probe_lock: a launch whose configuration changed, */
		void *f, *ctx;     /* its handle and context (NULL: none yet, or the context went), */
		int cc;            /* so that a probe picked live is built before the next launch */
		unsigned grid[3], block[3], smem;
	} seen;
	struct hook_attrs attrs;   /* what the app set (hook_cuda_attr.c) */
	_Alignas(HOOK_CACHE_LINE) uint64_t launches; /* atomic */
	uint64_t dev_launches[HOOK_DEV_COUNTS]; /* atomic: launches per device ordinal */
	uint64_t probe_attempts;   /* launches that wanted a probe (NTOP_PROBE_EVERY counting) */
	uint64_t probed;           /* probed launches started */
	uint64_t declined;         /* launches that wanted a probe and ran unprobed (atomic) */
	uint64_t deferred;         /* launches that ran unprobed while their copy was built (atomic) */
	uint64_t last_hash;        /* hash of `last` (atomic): the lock-free fast path */
	uint64_t last_hash_dev[HOOK_DEV_COUNTS]; /* per device ordinal: hash of the last config shown there */
	struct hook_launch_cfg last; /* last config a `launch` line showed */
	int launched;              /* a `launch` line was emitted */
	struct hook_self self;     /* NTOP_SELF_TIME=1: the hook's time per launch, by phase */
	_Alignas(HOOK_CACHE_LINE) uint64_t timed, total_ns, min_ns, max_ns; /* under the timing lock */
	uint64_t stats_launches;   /* launches at the last stats line */
	uint64_t stats_timed;
};

struct hook_registry {
	pthread_mutex_t lock;
	struct ptrmap modules;  /* CUmodule/CUlibrary -> hook_module */
	struct ptrmap kernels;  /* CUfunction/CUkernel -> hook_kernel */
	struct ptrmap links;    /* CUlinkState -> hook_link */
	struct ptrmap cubins;   /* cubin pointer from cuLinkComplete -> hook_link */
	struct ptrmap graphs;   /* CUgraphExec -> launch count (uintptr_t) */
	struct hook_kernel **all; /* every kernel, by kid - 1 */
	uint32_t n_kernels, cap_kernels;
	uint32_t n_modules;
	uint64_t generation;    /* bumped when handles are dropped: invalidates thread caches */
};

struct hook_link {
	char *ptx;     /* PTX inputs joined (each NUL-separated, last NUL-terminated) */
	size_t ptx_len;
	int n_ptx;
};

void hook_registry_init(struct hook_registry *r);
/* Registers a loaded image; returns the record (also on a repeated handle). */
struct hook_module *hook_registry_add_module(void *handle, int is_library, const char *api,
					     const void *image, size_t size_hint);
struct hook_module *hook_registry_module(void *handle);
void hook_registry_unload(void *handle);
/* Another handle for the same image (cuLibraryGetModule). */
void hook_registry_module_alias(void *handle, struct hook_module *m);
/* The kernel named `name` in `mod` (created on first sight) for `handle`. */
struct hook_kernel *hook_registry_add_kernel(void *handle, struct hook_module *mod, const char *name);
/* Maps another handle (CUfunction from cuKernelGetFunction) to a kernel. */
void hook_registry_alias(void *handle, struct hook_kernel *k);
/* k came from cuLibraryGetKernel as `kernel` (a CUkernel): functions the
 * driver makes of it later are recognised (hook_registry_kernel_slow). */
void hook_registry_library_kernel(void *kernel, struct hook_kernel *k);
/* Emits the kernel's `kernel` line again in a process that has not seen it
 * (a fork child inherits the registry but not the parent's event stream). */
void hook_registry_announce(struct hook_kernel *k);
/* Fork child: every kernel's next launch takes the slow path, which
 * announces it and emits a `launch` line under the child's pid. */
void hook_registry_fork_child(void);
/* Lookup on the launch path; creates a record via the driver's name query
 * for a handle we never saw created. NULL only when even that fails. */
struct hook_kernel *hook_registry_kernel(void *handle);
/* The kernel of a handle, or NULL when unknown (never creates one). */
struct hook_kernel *hook_registry_find(void *handle);
/* Records attribute `a` = v set by the app on `handle`'s kernel; 0, or -1
 * when the handle is unknown. */
int hook_registry_attr_set(void *handle, enum hook_attr_id a, int v);
/* A context went: drop the handles of its modules (the driver destroyed
 * them and may hand the same values out again). Libraries are kept. */
void hook_registry_ctx_gone(void *ctx);
/* Registers a handle the registry has never seen, named by the driver. */
struct hook_kernel *hook_registry_kernel_slow(void *handle);
/* Snapshot of every kernel (for stats); caller frees the array. */
struct hook_kernel **hook_registry_kernels(uint32_t *n);

/* Numba: PTX inputs per link state, then per linked cubin. */
void hook_registry_link_create(void *state);
void hook_registry_link_add(void *state, const void *ptx, size_t len);
void hook_registry_link_complete(void *state, const void *cubin);
void hook_registry_link_destroy(void *state);

/* Counts a replay of a graph executable; returns the count so far. */
uint64_t hook_registry_graph_launch(void *exec);

#endif
