/* A probed launch in flight, from the launch path to its result file. */
#ifndef NTOP_HOOK_CUDA_RESULTS_H
#define NTOP_HOOK_CUDA_RESULTS_H
#include <stddef.h>
#include <stdint.h>
#include <cuda.h>
#include "engine/engine.h"
#include "hook/hook_state.h"

/* Where the counts the host reads sit in the device buffer: `rows` runs of
 * `len` bytes, `pitch` apart; kept_only: a sampled map's kept blocks only,
 * else every unit's (one run). */
struct hook_rows {
	uint64_t len, pitch, rows;
	int kept_only;
};

/* What must be zero in a map buffer before a launch, `runs[i]` from
 * `off[i]`: a map's counts where a unit may never reach an exit and leave
 * its count as found (records past a count are never read; a sampled map:
 * the kept blocks' counts only), and the records of a map with a folded
 * field (engine_map_records_clear: every warp folds into what is there).
 * `key` names the layout (kernel plan and launch shape): a buffer recycled
 * under the same key needs nothing more. */
struct hook_zero {
	uint64_t key;
	int n;
	uint64_t off[2 * ENGINE_MAX_MAPS];
	struct hook_rows runs[2 * ENGINE_MAX_MAPS];
};

/* The counts of map i of plan that are cleared and copied back: a sampled
 * slot-major map's kept blocks only (engine.h), else all. */
struct hook_rows hook_counts_rows(const struct engine_result *plan, int i, uint64_t blocks, uint32_t threads,
				  uint32_t shift);
/* Driver pitch above which 2D copies and memsets go a row at a time. */
#define HOOK_PITCH_MAX (1ull << 30)

/* Where one map's counts and stored records landed in the job's staging. */
struct hook_copy {
	uint64_t units, rec_units;
	struct hook_rows counts;          /* the device counts copied back (kept_only: the
					     staging holds the kept units' counts only) */
	uint32_t stored;                  /* record slots copied per unit (<= cap) */
	uint64_t counts_off, rec_off;     /* in counts / recs staging */
};

/* A probed launch's job. A job made ahead (hook_cuda_stage.c) comes to the
 * app's thread from the stager's core, and each of its cache lines the
 * launch touches is a transfer between cores (~0.1 us apiece on an H200's
 * host): what the launch path reads and writes comes first, in the job's
 * first HOOK_JOB_HOT bytes, which the taker prefetches all at once. */
struct hook_job {
	_Alignas(HOOK_CACHE_LINE) uint64_t seq; /* line-aligned: the hot part spans as few lines as it can */
	uint64_t wall_ns;
	CUcontext ctx;
	CUevent start, end;               /* around the probed launch, on the app's stream */
	uint64_t dev_ptr;                 /* dev->ptr: the launch reads no hook_buf */
	uint64_t bytes;                   /* map bytes of the launch (device layout) */
	uint64_t app_queued;              /* hook.res.app_queued once it was queued */
	int end_bare;                     /* end has no timing (an untimed launch's) */
	int dev_ready;                    /* its zeroing was seen done: no wait needed */
	int from_stage;                   /* made ahead: counted in staged_bytes until hook_stage_settle */
	uint32_t sample_shift;            /* block sampling of slot-major maps (engine.h) */
	unsigned grid[3], block[3], smem;
	uint64_t map_off[ENGINE_MAX_MAPS];
	/* the collector's */
	struct hook_job *next;
	struct hook_kernel *k;
	const struct engine_result *plan; /* the instrumented copy's maps (lives until exit) */
	struct hook_buf *dev;             /* the maps as the kernel wrote them */
	struct hook_buf *counts, *recs;   /* pinned staging: counts; records actually written */
	struct hook_zero zero;            /* the counts to clear after it */
	struct hook_copy copy[ENGINE_MAX_MAPS];
	struct hook_device device;
	float ms;                         /* probed kernel time by its events */
	int slab_made;                    /* a device slab was allocated for its buffer on a launch's path */
};
#define HOOK_JOB_HOT offsetof(struct hook_job, next)

/* hook_cuda_pool.c */
CUstream hook_pool_stream(CUcontext ctx);
/* A buffer whose counts for layout z are zero once its `ready` event has
 * passed; *ready = 1 when that is known already (no wait needed);
 * *allocated = 1 when a new device slab was allocated for it. */
struct hook_buf *hook_pool_take_dev(CUcontext ctx, uint64_t bytes, const struct hook_zero *z, int *ready,
				    int *allocated, char **cause);
void hook_pool_put_dev(struct hook_buf *b);
/* Clears z's counts on the hook's stream after what it holds, then pools b;
 * returns the clearing's generation (0: b stays out of use),
 * for a caller that then waits for the stream anyway and marks b known
 * zeroed (a launch then takes it without asking the driver), unless b was
 * taken and cleared again meanwhile. */
uint32_t hook_pool_recycle_dev_gen(struct hook_buf *b, const struct hook_zero *z);
void hook_pool_mark_zeroed(struct hook_buf *b, uint32_t gen);
/* Waits until everything queued on s (a hook stream of ctx) is done; a
 * hook thread's wait for one event. Both ask the driver every
 * HOOK_WAIT_NAP_NS instead of spinning in it (the collector naps as long
 * between its looks for the app's next launch). */
#define HOOK_WAIT_NAP_NS 20000l
#define HOOK_TIMER_SLACK_NS 2000ul /* a hook thread's: Linux's default, 50 us, would more than double a nap */
CUresult hook_pool_wait(CUcontext ctx, CUstream s);
CUresult hook_event_wait_quiet(CUevent e);
void hook_pool_add_spares(CUcontext ctx, uint64_t bytes, uint64_t n);
void hook_pool_ctx_gone(CUcontext ctx);
/* The application's `api` of `bytes` failed for lack of memory: frees the
 * current context's idle map slabs; 1 when any went (worth a retry). */
int hook_pool_give_back(const char *api, size_t bytes);
/* Waits at most ns until no result in flight holds a map buffer; 1 when
 * any came back meanwhile. Not again within ns after the last wait (0). */
int hook_results_wait_held(uint64_t ns);
/* 1 (and why) for a while after the application ran out of memory: the
 * pool then takes no new memory. */
int hook_pool_quiet(char **cause);
/* Best-fitting free buffer of ctx (NULL: host staging) with at least
 * `bytes`, unlinked from *list (hook.res.lock held). */
struct hook_buf *hook_buf_take(struct hook_buf **list, void *ctx, uint64_t bytes);

/* hook_cuda_staging.c (collector thread, ctx current) */
/* Pinned staging of at least `bytes`. */
struct hook_buf *hook_staging_take_pinned(CUcontext ctx, uint64_t bytes, char **cause);
/* Pinned staging up to hook.cfg.pinned_max bytes, ordinary memory beyond
 * (b->pageable); both go back with hook_staging_put. */
struct hook_buf *hook_staging_take(CUcontext ctx, uint64_t bytes, char **cause);
void hook_staging_put(struct hook_buf *b);
/* For staging a failed copy may still write: kept out of use. */
void hook_staging_drop(struct hook_buf *b);
/* ctx is about to go, nothing in flight: its registrations go with it. */
void hook_staging_ctx_gone(CUcontext ctx);

/* hook_cuda_results.c */
/* Counts a launch the app has queued (probed or not); the new count. */
uint64_t hook_results_app_queued(void);
/* The same for an unprobed launch: nothing until a probed launch started the collector. */
void hook_results_note_queued(void);

#endif
