/* The kernel list as a table: one row per kernel name across the
 * processes of the app (grouped, the default: launches, times and results
 * summed; a group expands into a row per process), or one per (pid,
 * kernel), filtered by a substring of the demangled or mangled name (and
 * kernels of exited processes hidden on request) and sorted by any
 * column. Rows are indices into trace_dir.kernels (the array moves when it
 * grows); the table is rebuilt only when the model, the filter or the sort
 * changed (ktable_mark), at most once per frame, so a live stream of events
 * costs parsing, not re-sorting per event. Cells are formatted only for the
 * rows on screen. */
#ifndef NTOP_TUI_KTABLE_H
#define NTOP_TUI_KTABLE_H
#include <stddef.h>

#include "trace/trace_dir.h"
#include "tui/layout.h"
#include "tui/rcache.h"
#include "viz/theme.h"

enum kcol { KC_PID, KC_GPU, KC_LAUNCHES, KC_GRID, KC_BLOCK, KC_TOTAL, KC_MEAN, KC_PTX, KC_PROBE, KC_TRACES, KC_NAME, KC_N };

/* What the table reads besides the model. */
struct ktable_ctx {
	const struct trace_dir *td;
	const struct rcache *rc;
	int utf8;          /* "µs" and "→" or "us" and "->" */
	int mangled;       /* show mangled names */
	/* requested probe state of a kernel (live mode), NULL when none */
	const char *(*request)(void *arg, const struct td_kernel *k);
	void *arg;
};

/* A row: one kernel, or a group (the kernels of one name, the k-th of that
 * name in each process), or a member under its expanded group. */
struct krow {
	int k;             /* td->kernels index: the kernel, or the group's representative
			      (a member of a running process with the most launches) */
	int first, n;      /* members: kt->members[first .. first + n) (n = 1: a kernel alone) */
	int child;         /* a member row under its expanded group */
};

struct ktable {
	struct krow *rows;
	int n, cap;
	int *members;      /* indices into td->kernels, by group */
	int n_members;
	int matched;       /* kernels that pass the filter */
	enum kcol sort;
	int reverse;
	char filter[128];
	int dirty;         /* rebuild before the next use */
	int single;        /* a row per (pid, kernel): grouping off (g) */
	int hide_exited;   /* leave out kernels of processes that exited (x) */
	char **expanded;   /* names of the groups shown expanded */
	int n_expanded;
};

/* Column key ("launches"), title ("LAUNCH") and layout for `multi_pid`
 * traces (the PID column moves up in priority when several processes ran)
 * and `multi_gpu` ones (the GPU column is shown only where some process
 * used several GPUs). */
const char *ktable_col_key(enum kcol c);
int ktable_col_from_key(const char *key); /* -1 unknown */
void ktable_columns(int multi_pid, int multi_gpu, struct layout_col out[KC_N]);
/* Does some process of the trace use several GPUs? */
int ktable_multi_gpu(const struct trace_dir *td);

void ktable_init(struct ktable *kt);
void ktable_done(struct ktable *kt);
void ktable_mark(struct ktable *kt);
/* ktable_rows.c: rebuilds rows when dirty. */
void ktable_update(struct ktable *kt, const struct ktable_ctx *c);
/* Row of kernel (pid, kid): its own, else its group's (group: its group's
 * first); -1 when filtered out. */
int ktable_find(const struct ktable *kt, const struct trace_dir *td, unsigned pid, unsigned kid, int group);
/* Text and theme role of a row's cell: a group's sums, a member's own. */
void ktable_row_cell(const struct ktable_ctx *c, const struct ktable *kt, const struct krow *r, enum kcol col,
		     char *buf, size_t len, int *role);
/* Expands or folds row r's group; 0 when r is no group. */
int ktable_toggle(struct ktable *kt, const struct trace_dir *td, const struct krow *r);
/* Text of a cell, and the theme role to draw it with. */
void ktable_cell(const struct ktable_ctx *c, const struct td_kernel *k, enum kcol col, char *buf, size_t len,
		 int *role);
/* A kernel's sort key for a numeric column; its display name. */
double ktable_num(const struct ktable_ctx *c, const struct td_kernel *k, enum kcol col);
const char *ktable_name(const struct ktable_ctx *c, const struct td_kernel *k);
/* The probe column (shared with the launches view's header). */
void ktable_probe_state(const struct ktable_ctx *c, const struct td_kernel *k, char *buf, size_t len, int *role);
/* Filter match: case-insensitive substring of the demangled or mangled
 * name; "gpu:N" keeps the kernels that ran on GPU N. */
int ktable_match(const struct td_kernel *k, const char *filter);

/* "950ns" "12.3µs" "4.56ms" "1.23s" (ASCII "us" when !utf8). */
void ktable_fmt_ns(double ns, int utf8, char *buf, size_t len);
/* "4096", "64x64", "8x8x8". */
void ktable_fmt_dims(const unsigned d[3], char *buf, size_t len);
/* Result files written for k. */
int ktable_traces(const struct trace_dir *td, const struct td_kernel *k);

#endif
