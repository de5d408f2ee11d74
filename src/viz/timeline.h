/* The block-scheduling timeline as a model (no I/O, no curses, no libpng):
 * one lane per SM (sorted by smid), inside a lane one sub-row per residency
 * slot of the block_sched replay, so blocks resident at the same time do not
 * overlap. The renderers (render_term.c, render_png.c) and the TUI draw it.
 *
 * Time axis, in "axis units":
 *  - TL_TIME_SM: SM clock cycles. Every SM has its own clock with its own
 *    origin, so each lane is aligned at its own first block start; times in
 *    different lanes are not comparable to the cycle.
 *  - TL_TIME_GLOBAL: ns of the global timer since the earliest block start,
 *    aligned across SMs. A block's end is its gstart plus its length in
 *    cycles converted with the SM clock rate. Without a recorded global timer
 *    or a known clock rate the model falls back to TL_TIME_SM and says why
 *    in `note`. On AMD GPUs the global timer (GTIMER: s_memrealtime or
 *    MSG_RTN_GET_REALTIME) counts 100 MHz ticks, not ns: the model scales
 *    them by 10 and its axis label says so; lanes are compute units ("CU").
 *
 * Rendering a lane bins its blocks into pixel columns in one pass over the
 * lane's blocks (timeline_bin_lane), so a million-block launch costs
 * O(blocks + pixels), never a search over all blocks per pixel. */
#ifndef NTOP_TIMELINE_H
#define NTOP_TIMELINE_H
#include <stddef.h>
#include <stdint.h>

#include "viz/block_sched.h"
#include "viz/theme.h"

enum tl_time { TL_TIME_SM, TL_TIME_GLOBAL };

/* ns per global timer tick on AMD GPUs: their real-time counter runs at a
 * constant 100 MHz (CUDA's %globaltimer counts ns). */
#define TL_AMD_GTIMER_NS 10u

/* The device the records come from: the result's clock rate and
 * multiprocessor count, the trace's device line for the vendor. */
struct tl_device {
	uint32_t sm_clock_khz;   /* 0 unknown */
	uint32_t sms;            /* 0 unknown */
	int amd;                 /* AMD GPU: lanes are CUs, GTIMER ticks are 10 ns */
};
enum tl_color { TL_COLOR_INDEX, TL_COLOR_DURATION };

#define TL_NONE UINT32_MAX
#define TL_TAIL_FRACTION 0.10 /* blocks ending in the last 10% of the kernel are "tail" */

struct tl_lane {
	uint32_t smid;
	uint32_t first, n;   /* its blocks: bs->blocks[first .. first + n) */
	uint32_t rows;       /* sub-rows: highest slot + 1 */
	uint64_t origin;     /* cycles: first block start (TL_TIME_SM zero) */
};

struct tl_stats {
	uint64_t blocks;          /* in the grid */
	uint64_t blocks_recorded;
	double waves;             /* per SM; < 0 unknown */
	double mean_running;      /* cycles per SM */
	double mean_sched;        /* cycles per SM */
	uint32_t sms_used;
	uint32_t device_sms;      /* 0 unknown */
	uint32_t max_concurrent;  /* blocks resident at once on one SM */
	uint64_t tail_blocks;     /* ending in the last TL_TAIL_FRACTION */
	double span;              /* axis units: end of the last block */
};

struct timeline {
	const struct block_sched *bs; /* borrowed: must outlive the timeline */
	enum tl_time time;            /* what was asked for may have fallen back */
	char note[160];               /* why it fell back, "" otherwise */
	uint32_t sm_clock_khz;        /* 0 unknown */
	const char *lane;             /* what a lane is: "SM", or "CU" on AMD GPUs */
	const char *warps;            /* what a block's units are: "warps", or "waves" on AMD GPUs */
	uint32_t gtimer_ns;           /* ns per recorded global timer tick: 1, or 10 on AMD */
	uint32_t n_lanes;
	struct tl_lane *lanes;
	uint32_t n_blocks;            /* bs->n_blocks_recorded */
	double *t_start, *t_end;      /* [n_blocks] axis units, per bs->blocks order */
	uint64_t dur_min, dur_max;    /* cycles: block lengths (end - start) */
	double tail_from;             /* axis units: blocks ending at or after are tail */
	uint64_t index_max;           /* highest block index (index colour scale) */
	struct tl_stats stats;
	const char *unit;             /* axis units: "cycles" or "ns" */
	const char *tick_unit;        /* what tick labels count: "cycles", "ns", "\u00b5s" (UTF-8), "ms" */
	double tick_div;              /* axis units per tick_unit */
	char axis_label[128];         /* UTF-8 */
};

/* The visible window: time [t0, t1) in axis units, lanes [lane0, lane0 + n_lanes). */
struct tl_view {
	double t0, t1;
	uint32_t lane0, n_lanes;
};

/* One pixel column of one output row of a lane. */
struct tl_bin {
	uint32_t block;  /* index into bs->blocks covering most of the column, TL_NONE: empty */
	uint32_t count;  /* blocks touching the column */
	float busy;      /* fraction of the column's time (x merged rows) covered by blocks */
	float best;      /* private: the dominant block's coverage */
	uint8_t edge;    /* a block at least 3 columns wide starts here (draw a separator) */
};

int timeline_create(const struct block_sched *bs, enum tl_time time, const struct tl_device *dev,
		    struct timeline **out, char **cause);
void timeline_free(struct timeline *tl);

/* ---- viewport ---- */
/* Everything: all lanes, time 0 .. span. */
void timeline_view_fit(const struct timeline *tl, struct tl_view *v);
/* Zooms by `factor` (> 1 in, < 1 out) keeping time `at` where it is on screen;
 * the window stays inside [0, span] and at least 4 axis units wide. */
void timeline_view_zoom(const struct timeline *tl, struct tl_view *v, double factor, double at);
/* Pans by `frac` of the window width (negative: earlier), clamped to [0, span]. */
void timeline_view_pan(const struct timeline *tl, struct tl_view *v, double frac);
/* Scrolls lanes by `delta`, keeping n_lanes visible where possible. */
void timeline_view_scroll(const struct timeline *tl, struct tl_view *v, int delta);
/* Puts the window back inside the data after a resize or a hand edit. */
void timeline_view_clamp(const struct timeline *tl, struct tl_view *v);
/* Column x of `cols` <-> time: x covers [t0 + x w, t0 + (x + 1) w), w = (t1 - t0) / cols. */
double timeline_x_to_t(const struct tl_view *v, int cols, double x);
double timeline_t_to_x(const struct tl_view *v, int cols, double t);

/* ---- binning ---- */
/* Bins lane `lane` into out_rows x cols bins (row-major, out[row * cols + col]);
 * sub-row s goes to output row s * out_rows / lane rows, so out_rows = 1
 * merges all slots and out_rows = lane rows keeps each slot. */
int timeline_bin_lane(const struct timeline *tl, const struct tl_view *v, uint32_t lane, int cols,
		      int out_rows, struct tl_bin *out);

/* ---- hit testing ---- */
/* The block of lane `lane` (sub-row `slot`, or any when slot < 0) covering
 * time t, or within `tol` axis units of it; several: the latest started.
 * Returns an index into bs->blocks or -1. */
long timeline_hit(const struct timeline *tl, uint32_t lane, int slot, double t, double tol);

/* ---- colour ---- */
/* Position of block i on the colour scale, in [0, 1]. */
double timeline_block_scale(const struct timeline *tl, uint32_t i, enum tl_color mode);
int timeline_block_is_tail(const struct timeline *tl, uint32_t i);
/* Block i's bar colour (gradient only; renderers mark tails themselves). */
struct rgb timeline_block_color(const struct timeline *tl, uint32_t i, enum tl_color mode,
				const struct theme *th);

/* ---- text ---- */
/* "4096 blocks  3.9 waves/SM  running 12.3k cyc  scheduling 2.1k cyc (14.6%)  132/132 SMs  <=8 resident"
 * (CUs on AMD GPUs) */
void timeline_header(const struct timeline *tl, char *buf, size_t len);
/* A compact number: 950, 12.3k, 4.56M, 1.2G. */
void timeline_fmt_num(double v, char *buf, size_t len);
/* Axis tick step for `span` axis units and at most `max_ticks` ticks: 1, 2 or 5 x 10^k. */
double timeline_tick_step(double span, int max_ticks);
/* Tick label at t for ticks `step` apart, in tick_unit (the caller prints
 * the unit once): cycles "0" "2.5k" "1.2M"; times "0" "12.5". */
void timeline_fmt_tick(const struct timeline *tl, double t, double step, char *buf, size_t len);

#endif
