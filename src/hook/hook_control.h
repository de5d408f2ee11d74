/* Live probe control (doc/control.md): a background thread polls the file
 * NTOP_CONTROL names and publishes each new generation as an immutable table
 * (kernel name -> probe set + mode) through one atomic pointer. The launch
 * path compares its kernel's view generation with the published one and
 * resolves again only when they differ, so an unchanged selection costs two
 * loads and a compare: no lock, no syscall. Tables, probe sets and views are
 * never freed while the process runs (a launch may still read an old one). */
#ifndef NTOP_HOOK_CONTROL_H
#define NTOP_HOOK_CONTROL_H
#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

struct hook_kernel;
struct probe;

/* One probe file, loaded and verified once per (path, file identity): an
 * edited file is loaded again. */
struct hook_ctl_file {
	struct hook_ctl_file *next;
	char *path;
	dev_t dev;
	ino_t ino;                  /* 0: the file could not be stat'ed */
	off_t size;                 /* bytes */
	int64_t mtime_ns;
	struct probe *probe;        /* NULL when it did not load or verify */
	char *cause;                /* why not (FILE:LINE: ...) */
};

/* An ordered list of probe files; instrumented copies are cached per
 * (kernel, context, set), keyed on the set's address. */
struct hook_ctl_set {
	struct hook_ctl_set *next;
	struct hook_ctl_file **files;
	int n_files;
	struct probe **probes;      /* the usable ones, in order */
	int n;
	char *cause;                /* why some or all files are unusable, or NULL */
};

struct hook_ctl_sel {
	char *name;                 /* mangled kernel name */
	const struct hook_ctl_set *set;
	int mode;                   /* enum control_mode */
	uint64_t n;                 /* nth */
	uint64_t limit;             /* probed launches per (kernel, set, process) */
};

/* One generation: sorted by name, immutable once published. */
struct hook_ctl_table {
	struct hook_ctl_table *older;
	uint64_t gen;
	int n;
	struct hook_ctl_sel *sels;
};

/* Probed launches of a kernel with one set in one process (every, nth). */
struct hook_ctl_count {
	struct hook_ctl_count *next;
	const struct hook_ctl_set *set;
	int pid;
	uint64_t probed;            /* atomic, reserved before the launch */
};

/* A kernel's view of one generation in one process (hook_kernel.ctl). */
struct hook_ctl_view {
	struct hook_ctl_view *all;  /* every view made, kept until exit */
	uint64_t gen;
	int pid;
	const struct hook_ctl_sel *sel; /* NULL: not probed in this generation */
	struct hook_ctl_count *count;
	uint64_t launches;          /* atomic: launches under this view (nth) */
	int next_taken;             /* atomic: `next` has fired */
};

struct hook_control {
	struct hook_ctl_table *table;   /* published (atomic); NULL until a file was applied */
	pthread_mutex_t lock;           /* views and counts; the thread's start/stop */
	pthread_cond_t wake;
	struct hook_ctl_view *views;
	/* the poller's state, under poll_lock */
	pthread_mutex_t poll_lock;
	int have_seen;
	dev_t dev;
	ino_t ino;
	off_t size;
	int64_t mtime_ns;
	uint64_t applied_gen;
	struct hook_ctl_file *files;
	struct hook_ctl_set *sets;
	char **sources;                 /* `source` names of the last generation applied */
	int n_sources;
	uint64_t warned[256];           /* hashes of messages said once (a ring) */
	int n_warned, next_warned;
	int started, stop;
	pthread_t thread;
};

/* What the launch path decided to probe with. */
struct hook_probe_pick {
	const struct hook_ctl_set *set; /* NULL: the NTOP_PROBES probes */
	uint64_t *reserved;             /* counter to give back on decline, or NULL */
	int *next_taken;                /* a `next` selection's flag, given back when the launch is
					 * deferred (its copy still being built), or NULL */
};

/* At load: applies the file if it already exists (before any launch). */
void hook_control_init(void);
/* Starts the poll thread once per process (first launch); cheap when done. */
void hook_control_ensure_thread(void);
/* The probe set table t picks for the kernel named `name`, or NULL. */
const struct hook_ctl_set *hook_control_set_of(const struct hook_ctl_table *t, const char *name);
/* 1 when this launch of k should be probed under table t (pick filled). */
int hook_control_wanted(struct hook_kernel *k, const struct hook_ctl_table *t, struct hook_probe_pick *pick);
/* Applies the file now if it changed (the thread does this every 100 ms). */
void hook_control_poll(void);
void hook_control_shutdown(void);
void hook_control_fork_child(void);

#endif
