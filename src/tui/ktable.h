/* The kernel list as a table: one row per (pid, kernel) of the trace model,
 * filtered by a substring of the demangled or mangled name and sorted by any
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

struct ktable {
	int *rows;         /* indices into td->kernels */
	int n, cap;
	enum kcol sort;
	int reverse;
	char filter[128];
	int dirty;         /* rebuild before the next use */
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
/* Rebuilds rows when dirty. */
void ktable_update(struct ktable *kt, const struct ktable_ctx *c);
/* Row of kernel (pid, kid), -1 when filtered out. */
int ktable_find(const struct ktable *kt, const struct trace_dir *td, unsigned pid, unsigned kid);
/* Text of a cell, and the theme role to draw it with. */
void ktable_cell(const struct ktable_ctx *c, const struct td_kernel *k, enum kcol col, char *buf, size_t len,
		 int *role);
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
