/* fakecuda: a driver test double for the hook's plumbing tests. It runs on
 * the CPU: "device memory" is host memory, streams execute at once, kernels
 * do nothing except probed copies, which write plausible block_sched-style
 * records into their map buffers. It proves plumbing only, never GPU
 * behaviour. Internal header of the fake's files. */
#ifndef FAKECUDA_FAKE_H
#define FAKECUDA_FAKE_H
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <cuda.h>

#define FAKE_EXPORT __attribute__((visibility("default")))
#define FAKE_SMS 4
#define FAKE_MAX_PARAMS 64

struct fake_param {
	size_t offset, size;
};

struct fake_func {
	struct fake_func *next;
	/* A library kernel's function in the context (cuKernelGetFunction, a
	 * captured launch's node): a handle of its own, as the real driver's,
	 * standing for `base` in everything else (fake_fn). */
	struct fake_func *base, *ctx_fn;
	struct fake_module *mod;
	char name[512];
	int n_params;
	struct fake_param params[FAKE_MAX_PARAMS];
	int kept_addrs;    /* map address registers a probed copy keeps from its entry (%ntop_hc<i>) */
	int stores_counts; /* a probed copy's PTX stores its units' counts (engine.h: count_static) */
	int block_map;     /* ... folds into a block map (red.global): tests/gpu/block_span.toml */
	int only_1d_block, only_1d_grid; /* a probed copy built for 1-D launches (engine.h:
					    ENGINE_BLOCK_1D/GRID_1D): it never reads ntid.y / nctaid.y */
	int counts_kept_only; /* ... only in blocks block sampling keeps */
	/* fake_attr.c: settable attributes as set (cuFuncSetAttribute,
	 * cuKernelSetAttribute), by CUfunction_attribute; 0 until set */
	int attr_set[CU_FUNC_ATTRIBUTE_MAX];
	int attr[CU_FUNC_ATTRIBUTE_MAX];
	int cache_config;  /* CUfunc_cache */
	int smem_config;   /* CUsharedconfig */
};

/* The function a handle stands for (a context function's kernel). */
static inline struct fake_func *fake_fn(const void *handle)
{
	struct fake_func *fn = (struct fake_func *)handle;
	return fn && fn->base ? fn->base : fn;
}

/* A library kernel's context function (made once), else f itself. */
struct fake_func *fake_ctx_function(struct fake_func *f);

/* Dynamic shared memory a launch may use without the attribute (CUDA's 48 KB). */
#define FAKE_SMEM_DEFAULT (48 * 1024)

struct fake_global {
	struct fake_global *next;
	char name[256];
	void *data;
	size_t size;
};

struct fake_module {
	int is_library;
	unsigned gen;      /* fake_ctx_gen at the load: a module dies with its context */
	int any_name;      /* no PTX seen: any function name resolves */
	struct fake_func *funcs;
	struct fake_global *globals;
};

struct fake_graph;

struct fake_stream {
	unsigned gen;      /* fake_ctx_gen when created */
	int capturing;
	int invalidated;
	int nodes;
	struct fake_graph *graph; /* while capturing: the launches recorded */
};

extern pthread_mutex_t fake_lock;
/* Waits out a JIT under way on another thread (fake_module.c). */
void fake_jit_wait(void);
extern int fake_global_captures; /* global-mode captures in progress */

/* fake_ctx.c: contexts die with cuCtxDestroy (always recreated at the same
 * address, as a real driver may); a handle made before is dead. */
extern unsigned fake_ctx_gen;
/* CUDA_SUCCESS, or INVALID_HANDLE for a dead handle (abort() under
 * FAKECUDA_STRICT_CTX=1, so a hook that uses one fails its test loudly). */
CUresult fake_ctx_alive(unsigned gen, const char *what);
/* The calling thread's current context (0: none, else fake_ctx_gen + 1 when
 * it was set): creating in a destroyed one is the same error. */
extern __thread unsigned fake_current_gen;
CUresult fake_current_alive(const char *what);
/* A module's handles (and its functions') die with its context. */
CUresult fake_module_alive(const struct fake_module *m, const char *what);
extern int fake_ctx_storage[4];
int fake_n_devices(void);
int fake_valid_device(CUdevice d);

/* fake_attr.c: per-function attributes; a launch with more dynamic shared
 * memory than 48 KB fails (CUDA_ERROR_INVALID_VALUE) unless the launched
 * function's MAX_DYNAMIC_SHARED_SIZE_BYTES allows it, as on the GPU. */
CUresult fake_smem_ok(const struct fake_func *fn, unsigned smem);
/* A probed copy is being launched: its attributes are kept for
 * fakecuda_probed_attrs(). */
void fake_attr_note_probed(const struct fake_func *fn);

/* fake_copy.c: calls of the watched thread (fakecuda_watch) by kind */
enum fake_watch { FAKE_WATCH_ALLOC, FAKE_WATCH_SYNC, FAKE_WATCH_QUERY, FAKE_WATCH_RECORD, FAKE_WATCH_RECORD_TIMING,
		  FAKE_WATCH_KINDS };
void fake_watch_note(enum fake_watch kind);
void fake_sync_delay(void);
uint64_t fake_sync_delay_ns(void);

/* fake_module.c */
struct fake_module *fake_module_from_image(const void *image, int is_library);
/* Entry name -> parameter count of its first definition: a later function
 * of the same name with more parameters is a probed copy. */
int fake_first_param_count(const char *name);
int fake_regs(const struct fake_func *fn);
/* A launch as a graph replay runs one of its nodes. */
CUresult fake_launch_node(CUfunction f, const unsigned grid[3], const unsigned block[3], unsigned smem, CUstream s,
			  void **params);
/* fake_graph.c */
void fake_graph_begin_capture(struct fake_stream *fs);
/* A launch on a capturing stream becomes a node of its graph. */
CUresult fake_graph_capture(CUstream s, CUfunction f, const unsigned grid[3], const unsigned block[3], unsigned smem,
			    void **params);
/* fake_core.c */
/* Keeps a pointer reachable until exit: the fake never frees what it hands
 * out (handles must stay unique), and leak checkers must not blame the app. */
void *fake_keep(void *p);
/* The device's memory: FAKECUDA_DEV_MEM, less live allocations. */
void fake_dev_mem(size_t *free_b, size_t *total_b);
int fake_capture_blocks(CUstream s);
void fake_invalidate(CUstream s);

#endif
