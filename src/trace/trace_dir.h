/* A trace directory as a model: what events.log says about processes, devices,
 * modules, kernels and probed launches (doc/trace-format.md). Built by feeding
 * event lines, so the same code serves a finished trace (trace_dir_load reads
 * events.log) and a live one (the recorder and the TUI feed lines from the
 * hook's socket as they arrive). Unknown event types and keys are ignored; lines
 * that do not parse, or lack the ids their type needs, are counted, never
 * fatal. Result files are not opened here: td_result has their paths. */
#ifndef NTOP_TRACE_DIR_H
#define NTOP_TRACE_DIR_H
#include <stddef.h>
#include <stdint.h>

struct td_process {
	uint32_t pid, ppid;  /* in a job of several traces: pid + trace index << TD_PID_SHIFT */
	int trace;           /* index in trace_dir.traces (0 for a single trace) */
	char *exe;          /* NULL until its hello event */
	char *hook_version;
	char *driver;       /* real libcuda path the hook forwards to */
	int exited;
	uint64_t exit_launches;
	uint64_t graph_launches;
	/* the hook's last `results` line: probed launches queued and not yet
	 * written, written, lost to errors; final once the process drained */
	uint64_t results_pending, results_written, results_failed, results_pending_max;
	/* device memory for maps: the most the hook pooled (its `results`
	 * lines' dev_peak), and what it gave back when the app ran out */
	uint64_t map_pooled_max, map_given;
	int results_final;
	int results_draining;  /* the process is exiting and still writing results */
	uint64_t lines;        /* its lines read, `idle` and `lost` lines aside */
	int quiet;             /* its last line was an `idle` line counting every line before it */
};

struct td_device {
	uint32_t pid;
	int ordinal;
	char *name;
	int cc;             /* 90 for sm_90 (0 on AMD GPUs) */
	char *arch;         /* AMD GPUs: the target ID ("gfx90a:sramecc+:xnack-"), else NULL */
	int sms;            /* multiprocessors (compute units on AMD GPUs) */
	int clock_khz;
};

struct td_module {
	uint32_t pid, mid;
	char *api, *kind, *source;
	uint64_t size;      /* bytes */
	int n_ptx, n_sass;  /* entries in the image */
};

struct td_config {
	uint32_t grid[3], block[3];
	uint32_t smem;      /* dynamic shared memory, bytes */
	int dev;            /* device ordinal the launch ran on, -1 unknown (traces before dev=, HIP) */
};

#define TD_DEVICES 16   /* device ordinals a kernel's launches are counted for (the hook's) */

struct td_kernel {
	uint32_t pid, kid, mid;
	char *name;         /* mangled */
	char *demangled;
	int has_ptx;        /* it has code ntop can instrument: PTX, or an AMD code object when amd */
	char *ptx_reason;   /* why there is none; NULL when there is */
	int amd;            /* its module came through the HIP stand-in: AMD code objects, not PTX */
	/* instrumentation (NULL status: never instrumented) */
	char *instrument_status; /* "ok" | "failed" */
	char *instrument_reason;
	char *instrument_probes;
	int regs_orig, regs_probed; /* -1 unknown */
	int occ_orig, occ_probed;   /* blocks per SM at the first probed launch's shape; -1 unknown */
	int addr_at_exit;           /* the form computing map addresses at each exit (engine.h); -1 unknown */
	int sites;
	double ms_jit;
	char *instrument_jit;      /* what compiled the copy (jit=: ptxas, driver, link), NULL unknown */
	/* its PTX saved on request (`source`: kernels/<pid>-<kid>/source.ptx) */
	int source_saved;   /* 1 saved, -1 could not be (source_error says why), 0 not yet */
	char *source_error;
	/* launches: the stats event is cumulative and wins over counting */
	uint64_t launches;
	uint64_t timed;     /* launches with a measured duration */
	uint64_t total_ns;  /* sum over timed launches */
	uint64_t min_ns, max_ns;
	uint64_t launch_events;
	uint64_t dev_launches[TD_DEVICES]; /* per device ordinal (stats devs=), 0 unknown */
	uint32_t devs;      /* bit d: launches on device d were seen (launch dev= or stats devs=) */
	struct td_config last; /* from the last launch event */
	int has_config;
	int n_configs;      /* distinct configs seen */
	struct td_config *configs;
	int occ;            /* resident blocks per SM (occ= of the launch), 0 unknown */
	uint64_t declined;  /* launches that should have been probed but ran unprobed */
	uint64_t deferred;  /* launches that ran unprobed while their probed copy was built off the app's threads */
	uint64_t probed_started; /* probed launches the hook started (stats), results or not */
	char *declined_reason; /* the last one */
	uint64_t graph_nodes;
	int *results;       /* indices into trace_dir.results, in seq order */
	int n_results;
	/* private: time events, used only when no stats event came */
	uint64_t time_count, time_total_ns;
	int has_stats;
};

/* A device allocation the hook saw (`alloc`/`free` events). */
struct td_alloc {
	uint32_t pid;
	uint64_t n;         /* its order in the process: 1 = first allocation */
	uint64_t base, bytes;
	char api[32];       /* cuMemAlloc, cuMemAllocAsync, ... */
};

struct td_result {
	uint32_t pid, kid;
	uint64_t seq;
	char *file;         /* as written in the event: results/<pid>-<seq>.ntr */
	char *path;         /* joined with the trace directory; NULL if file is unsafe */
	uint64_t maps, records, dropped, bytes;
	uint64_t ns;        /* time the hook spent on it */
	struct td_config config; /* of the probed launch, when its launch event came */
	int has_config;
	int occ;            /* from the launch event, 0 unknown */
	struct td_alloc *allocs; /* the process's live allocations at the probed launch */
	int n_allocs;
};

struct td_warning {
	uint32_t pid;
	uint64_t t_ns;
	char *msg;
};

/* One trace directory of a job read as one (trace_dir_load_job): the
 * ranks of a multi-node run recorded by `ntop record -o DIR-%h-%r`. */
struct td_trace {
	char *path;
	char *host;         /* the recording host (record line host=), NULL unknown */
	int rank;           /* RANK / SLURM_PROCID / OMPI_COMM_WORLD_RANK when recorded, -1 none */
	char *argv;
	int has_end, end_status, end_signal;
};

/* Process ids of the k-th trace of a job are pid + (k << TD_PID_SHIFT)
 * (Linux pids stay below 2^22), so two hosts' pids never meet. */
#define TD_PID_SHIFT 22

struct trace_dir {
	char *path;                 /* the (first) trace directory */
	struct td_trace *traces;    /* the job's traces, in the order given; 1 for one trace */
	int n_traces;
	int feeding;                /* the trace whose lines are being fed */
	/* the recorder's header line */
	char *record_argv, *record_version;
	uint64_t record_t_ns;
	uint32_t record_pid;

	struct td_process *procs;   int n_procs;
	struct td_device *devices;  int n_devices;
	struct td_module *modules;  int n_modules;
	struct td_kernel *kernels;  int n_kernels;
	struct td_result *results;  int n_results;
	struct td_warning *warnings; int n_warnings;
	uint64_t lost_events;       /* sum of lost events= */
	struct td_alloc *live;      /* live allocations, every process */
	int n_live, cap_live;
	uint64_t unpaired_frees;    /* frees of bases with no live allocation */

	/* how the recording ended (trace_dir_end.c) */
	int has_end;                /* ntop's `end` line was read: it finished the recording */
	int end_status;             /* its status=: the program's exit status as ntop returned it, -1 unknown */
	int end_signal;             /* its signal=: what killed the program, 0 none */
	int leftover_logs;          /* events-<pid>.log files ntop never merged, read after events.log */
	int unlisted_results;       /* result files no `result` line named, read from results/ */

	uint64_t lines;             /* complete lines fed */
	uint64_t malformed_lines;   /* did not parse, or missing ids */
	uint64_t unknown_lines;     /* well-formed, type unknown */
	int truncated_last_line;    /* events.log did not end with '\n' */

	void *index;                /* private: (pid, kid) -> kernel */
	int caps[6];                /* private: array capacities */
};

/* An empty model for `path` (may be NULL for a live stream). */
struct trace_dir *trace_dir_create(const char *path);
/* Applies one event line (with or without its '\n'). */
void trace_dir_feed(struct trace_dir *td, const char *line, size_t len);
/* Reads path/events.log into a new model, then what a recording cut short
 * left beside it (trace_dir_recover). Fails only when events.log cannot be
 * read at all (missing, not a regular file); bad lines are counted. */
int trace_dir_load(const char *path, struct trace_dir **out, char **cause);
/* Several trace directories as one job: each trace's processes keep
 * their own ids (pid + index << TD_PID_SHIFT); how each ended is kept per
 * trace, and the job ended when all did. */
int trace_dir_load_job(char *const *paths, int n, struct trace_dir **out, char **cause);
/* Starts feeding the lines of another trace directory of a job (the next
 * index); 0, or -1 out of memory. trace_dir_create's path is the first. */
int trace_dir_begin_trace(struct trace_dir *td, const char *path);
/* The process's id on its host, and a label: "1234", or in a job
 * "1234 on node2 (rank 1)". */
uint32_t td_os_pid(uint32_t pid);
const char *td_process_label(const struct trace_dir *td, uint32_t pid, char *buf, size_t n);
/* Private to the loaders: how a job ended, from its traces; freeing them. */
void trace_dir_end_job(struct trace_dir *td);
void trace_dir_free_traces(struct trace_dir *td);
void trace_dir_free(struct trace_dir *td);

struct td_kernel *trace_dir_kernel(const struct trace_dir *td, uint32_t pid, uint32_t kid);
struct td_process *trace_dir_process(const struct trace_dir *td, uint32_t pid);
/* Results the process will never write: lost to errors, or still queued
 * when it gave up draining at exit. */
uint64_t td_process_results_lost(const struct td_process *p);
/* Mean duration of timed launches in ns; 0 when none was timed. */
double td_kernel_mean_ns(const struct td_kernel *k);
/* The device a process used (first seen), or NULL. */
const struct td_device *trace_dir_device(const struct trace_dir *td, uint32_t pid);
/* Is the device an AMD GPU (its lanes are compute units, its global timer
 * counts 100 MHz ticks)? NULL: not known to be. */
int td_device_amd(const struct td_device *d);
/* What a kernel's instrumentable code is called: "code object" (AMD) or "PTX". */
const char *td_kernel_code_word(const struct td_kernel *k);
/* Does the trace hold an AMD kernel? */
int trace_dir_has_amd(const struct trace_dir *td);

/* trace_dir_devs.c: which GPU. The device a probed launch ran on (-1
 * unknown); how many devices a process used; a process's device by
 * ordinal (NULL unknown); how many devices a kernel ran on; their ordinals
 * ("0,1"), or with counts the launches on each ("0 (40), 1 (60)") where
 * the stats lines gave them. */
int td_result_dev(const struct td_result *r);
int td_process_n_devices(const struct trace_dir *td, uint32_t pid);
const struct td_device *trace_dir_device_of(const struct trace_dir *td, uint32_t pid, int ordinal);
int td_kernel_n_devs(const struct td_kernel *k);
const char *td_kernel_devs_text(const struct td_kernel *k, int counts, char *buf, size_t n);
/* The device probed launch seq of k ran on; the process's first device
 * where that is not known. */
const struct td_device *trace_dir_launch_device(const struct trace_dir *td, const struct td_kernel *k, uint64_t seq);

/* trace_dir_end.c: the recorder's `end` line (-1 malformed); events-<pid>.log
 * and events-<pid>.<k>.log (the hook's per-process names); the lines of
 * per-process files never merged and of result files no line names (a
 * model with a path); why the trace is incomplete: the number of reasons,
 * each a line appended to why (may be NULL). */
struct event;
struct strbuf;
int trace_dir_on_end(struct trace_dir *td, const struct event *ev);
int trace_pidlog_name(const char *name);
void trace_dir_recover(struct trace_dir *td);
int trace_dir_incomplete(const struct trace_dir *td, struct strbuf *why);
/* Processes that ended without their exit line but lost nothing: their
 * last line said they were idle with every line sent here, and each of
 * their probed launches has its result (os._exit, a killed idle worker).
 * The count; a line each appended to notes (may be NULL). */
int trace_dir_left_early(const struct trace_dir *td, struct strbuf *notes);
/* Probed launches of pid whose result line never came. */
int td_process_missing_results(const struct trace_dir *td, uint32_t pid);

/* trace_dir_alloc.c: `alloc`/`free` events (-1 malformed) and the copy of
 * a process's live allocations a probed launch keeps. */
int trace_dir_on_alloc(struct trace_dir *td, const struct event *ev, uint32_t pid);
int trace_dir_on_free(struct trace_dir *td, const struct event *ev, uint32_t pid);
void trace_dir_snapshot_allocs(const struct trace_dir *td, uint32_t pid, struct td_result *r);

#endif
