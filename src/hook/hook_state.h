/* All of the hook's process-wide state, in one struct (`hook`, defined in
 * hook_state.c), so fork handling and tests can see every lock and queue. */
#ifndef NTOP_HOOK_STATE_H
#define NTOP_HOOK_STATE_H
#include <pthread.h>
#include <stdint.h>
#include "hook/hook_control.h"
#include "hook/hook_linger.h"
#include "hook/cuda/hook_graph.h"
#include "hook/cuda/hook_ptxsrc.h"
#include "hook/hook_registry.h"
#include "hook/cuda/hook_table.h"

struct probe;

enum hook_time_mode { HOOK_TIME_OFF, HOOK_TIME_SAMPLE, HOOK_TIME_ALL };
/* What compiles a probed copy's PTX: ptxas or nvJitLink off the app's
 * threads and the driver's JIT on them (auto), the driver's JIT always,
 * ptxas always, nvJitLink always. */
enum hook_assembler { HOOK_AS_AUTO, HOOK_AS_JIT, HOOK_AS_PTXAS, HOOK_AS_NVJITLINK };

#define HOOK_QUEUE_SLOTS 8192   /* event lines waiting for the writer thread */
#define HOOK_MAX_DEVICES 64

struct hook_config {
	int events_on;             /* there is a sink to try (hook_sink.c); else no line is built */
	char *event_sock;          /* NTOP_EVENT_SOCK: the launcher's socket (absolute path), or NULL */
	int event_fd;              /* NTOP_EVENT_FD (by hand, without a socket): -1 none */
	unsigned long long event_dev, event_ino; /* what it must stay: NTOP_EVENT_ID, else as at load */
	char *trace_dir;           /* NULL when unset */
	char *results_dir;         /* trace_dir/results */
	char *probes;              /* NTOP_PROBES (':'-separated) or NULL */
	char **kernels;            /* NTOP_KERNELS patterns */
	int n_kernels;
	uint64_t probe_every, probe_limit;
	uint64_t map_budget;       /* bytes */
	uint64_t warp_map_target;  /* NTOP_WARP_MAP_TARGET: bytes a launch with a many-record warp map
				    * (regions) takes before its blocks are sampled */
	uint64_t map_target;       /* NTOP_MAP_TARGET: the same for thread maps of many records (dmat) */
	uint64_t pinned_max;       /* largest pinned staging buffer (bytes, > 0) */
	int sample_off;            /* NTOP_SAMPLE=off: decline rather than sample */
	uint32_t sample_min_shift; /* NTOP_SAMPLE=N: keep at most 1 block in 2^this */
	enum hook_assembler assembler; /* NTOP_ASSEMBLER */
	enum hook_time_mode time_mode;
	uint64_t time_gap_ns;      /* NTOP_TIME_GAP_MS: sampled timing, one launch per kernel per this */
	int probe_async;           /* NTOP_PROBE_ASYNC: 1 (default) copies built by the builder thread,
				    * 0 on the launch that first wants one */
	int keep_ptx;
	int self_time;             /* NTOP_SELF_TIME=1: time the hook's phases per launch (hook_selftime.h) */
	int log_on;                /* NTOP_LOG names a file the hook could open (hook_log.c) */
	char *control;             /* NTOP_CONTROL path, or NULL */
	char *unread;              /* numbers in the environment the hook could not read (a warn line
				    * after each hello), or NULL */
};

struct hook_queue {
	pthread_mutex_t lock;
	pthread_cond_t wake;       /* writer: lines queued or stop */
	pthread_cond_t idle;       /* flushers: queue drained */
	char *lines[HOOK_QUEUE_SLOTS];
	unsigned head, count;
	uint64_t lost;             /* dropped or not delivered since the last `lost` line */
	int lost_stuck;            /* writing the `lost` line failed: wait for a new line to try again */
	int writing;               /* writer holds a line outside the lock */
	int started, stop;
	uint64_t produced;         /* lines this process made (atomic), `idle` and `lost` lines aside */
	int since_idle;            /* lines written since the last `idle` line */
	struct hook_linger linger; /* the writer, awake after writing (hook_linger.h) */
	pthread_t thread;
};

struct hook_device {
	void *primary;             /* CUcontext cuDevicePrimaryCtxRetain gave for it (atomic) */
	int primary_refs;          /* retains minus releases the hook saw (atomic) */
	int known;
	int cc, sms, clock_khz;
	char name[128];
};

/* A launch being timed: two pooled events, polled by the timing thread. */
struct hook_timed {
	struct hook_timed *next;
	struct hook_kernel *k;
	uint64_t seq;
	void *ctx, *start, *end;   /* CUcontext, CUevent x2 */
};

struct hook_event_pool {
	struct hook_event_pool *next;
	void *ctx;
	int bare;             /* events without timing (CU_EVENT_DISABLE_TIMING) */
	void **free;
	int n, cap;
};

struct hook_timing {
	pthread_mutex_t lock;
	pthread_mutex_t poll_lock; /* held while the thread touches events: context teardown waits */
	pthread_cond_t wake;
	struct hook_timed *pending;
	struct hook_event_pool *pools;
	int started, stop;
	pthread_t thread;
	uint64_t last_stats_ns;
	uint64_t timed_total;      /* launches timed so far, all kernels (atomic) */
	uint64_t stats_seq, stats_timed; /* hook.seq and timed_total at the last stats pass */
	uint64_t window;           /* the second (coarse monotonic) sampled launches are counted in (atomic) */
	uint64_t in_window;        /* sampled launches timed in it (atomic) */
};

/* A registration of pinned host staging (hook_cuda_staging.c): it lasts
 * as long as the context that made it, portable meanwhile. */
struct hook_slab {
	struct hook_slab *next;
	void *base;
	uint64_t len;
	void *ctx;                 /* the registering context; NULL once it went */
};

/* A device allocation carved into map buffers (hook_cuda_pool.c): freed
 * whole, and only when the application runs out of memory
 * (hook_cuda_giveback.c). */
struct hook_dev_slab {
	struct hook_dev_slab *next;
	void *ctx;                 /* CUcontext */
	uint64_t base, len;        /* CUdeviceptr and bytes */
	uint64_t size;             /* each buffer's */
	unsigned bufs;             /* buffers carved from it */
};

/* A pooled map buffer. Device buffers are zeroed on the hook's copy stream
 * after each use; `ready` (a CUevent) marks the end of that zeroing, and
 * the next launch that takes the buffer waits on it (already passed, as a
 * rule). Host buffers stage what is copied back until it is written. */
struct hook_buf {
	struct hook_buf *next;
	void *ctx;                 /* device: its context (host staging: NULL) */
	struct hook_slab *slab;    /* host, pinned: its registration */
	struct hook_dev_slab *dev_slab; /* device: the allocation it is part of */
	uint64_t ptr;              /* CUdeviceptr, or host address */
	uint64_t size;             /* bytes */
	void *ready;               /* device: CUevent after the last zeroing */
	uint64_t key;              /* device: the layout whose counts are zero (0: all of it is) */
	int zeroed;                /* device: `ready` was seen complete (no query needed) */
	int pageable;              /* host: ordinary memory, not registered */
	uint32_t gen;              /* device: clearings queued so far */
};

/* The hook's own non-blocking stream in one context: zeroing and copies
 * back run there, never on the application's streams. */
struct hook_copier {
	struct hook_copier *next;
	void *ctx;
	void *stream;              /* CUstream: copies back, then the clearing after them */
	void *clear;               /* CUstream: clearings a launch waits for (never behind copies) */
};

struct hook_job;               /* hook_cuda_results.h */

#define HOOK_MAX_WRITERS 8
#define HOOK_DEV_GROWING 8 /* threads allocating device slabs at once that size theirs after the others' */

/* Probed launches after the launch path: the collector thread waits for
 * each kernel, copies back what it wrote and recycles the device buffer;
 * writer threads compress and write the result files. */
struct hook_results {
	pthread_mutex_t lock;
	pthread_cond_t wake;       /* collector: a job, or stop */
	pthread_cond_t wake_w;     /* writers: a job to write, or stop */
	pthread_cond_t idle;       /* drain: a job finished */
	pthread_cond_t room;       /* collector: staging memory came back */
	struct hook_job *collect_head, *collect_tail;
	struct hook_job *write_head, *write_tail;
	struct hook_buf *dev_free, *host_free, *page_free; /* page_free: ordinary staging */
	struct hook_buf *dev_free_last; /* dev_free's last buffer, or NULL: a buffer taken or
					 * lists cut clear it (hook_pool_put_dev then walks) */
	struct hook_slab *slabs;   /* registrations of pinned staging */
	struct hook_dev_slab *dev_slabs; /* device allocations of the pool */
	struct hook_dev_growing {  /* slabs being allocated, counted as made (hook_cuda_pool.c) */
		void *ctx;
		uint64_t size, bufs;
	} dev_growing[HOOK_DEV_GROWING];
	struct hook_copier *copiers;
	uint64_t dev_pooled;       /* device bytes allocated for maps */
	uint64_t dev_peak;         /* the most dev_pooled has been */
	uint64_t host_pooled;      /* pinned staging bytes registered */
	uint64_t host_pins;        /* registrations of pinned staging made (each holds the app's launches) */
	uint64_t page_pooled;      /* ordinary staging bytes held (busy or free) */
	uint64_t host_busy;        /* staging bytes held by jobs not yet written */
	uint64_t host_pageable;    /* stagings in ordinary memory (over cfg.pinned_max) */
	uint64_t pending;          /* jobs submitted and not yet finished */
	uint64_t holding;          /* of those, jobs whose device buffer is not back in the pool */
	uint64_t written, failed;  /* results written; results lost to errors */
	uint64_t launch_allocs;    /* device buffers allocated on a launch path (warm-up) */
	uint64_t dev_allocs;       /* cuMemAlloc calls (slabs) */
	uint64_t dev_given;        /* device bytes freed for the application (out of memory) */
	uint64_t app_oom_ns;       /* when an allocation of the app last failed for memory (atomic) */
	uint64_t oom_wait_ns;      /* when such a failure last finished waiting for results in flight */
	uint64_t collect_ns, write_ns; /* time the collector / all writers spent on jobs */
	/* what the app's launches write (and every launch of a probing process
	 * reads), on a line the collector writes nothing on: it reads
	 * app_queued once per probed kernel (results_let_app_go) */
	_Alignas(HOOK_CACHE_LINE) uint64_t app_queued; /* launches the app has queued (atomic) */
	int started;
	/* the app's thread on probed launches: from the hook's entry to the
	 * probed kernel queued (the GPU idles meanwhile when the stream was
	 * empty) and from there to returning; launches whose stream waited for
	 * a buffer's zeroing */
	uint64_t cpu_pre_ns, cpu_post_ns, cpu_launches, zero_waits;
	uint64_t staged;           /* probed launches that took a job made ahead (atomic) */
	_Alignas(HOOK_CACHE_LINE) struct hook_linger linger; /* the collector, awake after a job (hook_linger.h) */
	uint64_t staged_bytes;     /* map bytes of jobs made ahead (atomic; hook_cuda_stage.c) */
	uint64_t stage_walk_ns;    /* the stager's last look for idle copies' jobs (hook_cuda_stage.c) */
	int draining;              /* at exit or a context's end (atomic): nobody to let go first */
	int n_writers;
	int stop;
	pthread_t collector;
	pthread_t writers[HOOK_MAX_WRITERS];
};

/* Probed copies built off the application's threads (hook_cuda_builder.c). */
struct hook_build_req;
struct hook_builder {
	int jit_only;              /* neither ptxas nor nvJitLink found: the driver's JIT builds (atomic) */
	char *asm_said;            /* what the log last named as building copies (the builder thread's) */
	pthread_mutex_t njl_lock;  /* finding nvJitLink and compiling with it, one at a time */
	struct hook_njl *njl;      /* the real nvJitLink, once found (hook_cuda_assemble.c) */
	int njl_searched;          /* its library's places were searched (once a process) */
	int njl_closed;            /* the process is exiting: no compile starts (written under njl_lock, atomic) */
	pthread_mutex_t lock;
	pthread_cond_t wake;       /* builder: work or stop */
	pthread_cond_t done;       /* a build ended (a context waits to go) */
	struct hook_build_req *head, *tail;
	void *busy_ctx;            /* CUcontext of the build under way, or NULL */
	int started, stop;         /* started -1: no thread, builds run on the launch */
	pthread_t thread;
};

/* What the next probed launches need, made ahead off the application's
 * threads and apart from the collector, which may be busy copying back
 * (hook_cuda_stager.c): their jobs, and spare map buffers. */
struct hook_stage_req;
struct hook_stager {
	pthread_mutex_t lock;
	pthread_cond_t wake;       /* stager: a request, or stop */
	pthread_cond_t done;       /* a request ended (a context waits to go) */
	struct hook_stage_req *head, *tail;
	void *busy_ctx;            /* CUcontext of the request under way, or NULL */
	void *spare_ctx;           /* allocate spare_n spares of spare_bytes there */
	uint64_t spare_bytes, spare_n;
	struct hook_linger linger; /* awake after a request (hook_linger.h) */
	int started, stop;         /* started -1: no thread, nothing is made ahead */
	pthread_t thread;
};

struct hook_state {
	int pid;
	int initialised;
	struct hook_config cfg;
	/* driver */
	void *driver;              /* dlopen handle of the real driver */
	char real_path[4096];
	char *no_driver;           /* why there is no real driver */
	void *real[HOOK_N_ROWS];   /* real driver function per hooked row (or a stub) */
	/* subsystems, each from a cache line of its own: their threads write
	 * their own fields, and a line two threads write is a transfer between
	 * cores each time (~0.1 us on an H200's host) */
	struct hook_queue q;
	_Alignas(HOOK_CACHE_LINE) struct hook_registry reg;
	_Alignas(HOOK_CACHE_LINE) struct hook_timing timing;
	_Alignas(HOOK_CACHE_LINE) struct hook_results res;
	_Alignas(HOOK_CACHE_LINE) struct hook_control ctl;
	struct hook_ptxsrc ptxsrc;
	struct hook_graphs graphs;
	pthread_mutex_t dev_lock;
	struct hook_device dev[HOOK_MAX_DEVICES];
	pthread_mutex_t probe_lock; /* probe loading and instrumentation */
	_Alignas(HOOK_CACHE_LINE) struct hook_builder builder;
	_Alignas(HOOK_CACHE_LINE) struct hook_stager stager;
	_Alignas(HOOK_CACHE_LINE) int probes_loaded;
	struct probe **probes;
	int n_probes;
	char *probes_cause;        /* why the probes could not be loaded */
	/* what every launch counts, apart from what other threads read: every
	 * event line reads hello_due, on whichever thread makes it */
	_Alignas(HOOK_CACHE_LINE) uint64_t seq; /* launch sequence (atomic) */
	uint64_t launches;         /* graph replays and unnamed launches (atomic); kernels count their own */
	uint64_t allocs;           /* device allocations seen (atomic): their order number */
	/* the hook's own calls that hold the app's driver calls (a device
	 * slab's cuMemAlloc, a staging registration): how many began and how
	 * many are under way (atomics, hook_hold_begin); a probed launch that
	 * saw either move says so (`beside`). Written rarely, read by probed
	 * launches: a line of their own */
	_Alignas(HOOK_CACHE_LINE) uint64_t holds_began;
	uint64_t holds_busy;
	/* what every launch reads, written once or rarely */
	_Alignas(HOOK_CACHE_LINE) uint64_t ctx_gen; /* bumped when a context goes (atomic): threads forget their current one */
	int n_devices;             /* devices cuInit saw (0: not known yet) */
	int captures;              /* stream captures begun and not seen ended (atomic, hook_cuda_capture.c) */
	int captures_unseen;       /* a capture the hook did not see begin was found: always ask (atomic) */
	int atexit_done;
	/* a fork child says hello with its first line (atomic), so a child that
	 * execs another program or never touches the GPU leaves no trace */
	void (*hello_due)(void);
};

extern struct hook_state hook;

/* Resets every lock after fork() in the child (threads do not survive). */
void hook_state_init_locks(void);

#endif
