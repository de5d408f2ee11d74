/* The time axis row shared by the terminal timeline and heatmap: a tick
 * mark ('╵' or '|') at each step with its label after it, and the cursor's
 * column marked ('▲' or '^'). A label that the marker would cut is left
 * out, so no label ever reads wrong (a "^00" for "200"). The caller formats
 * labels (cycles, ns, µs) through `fmt`. */
#ifndef NTOP_TERM_AXIS_H
#define NTOP_TERM_AXIS_H
#include <stddef.h>

#include "viz/cellgrid.h"

struct term_axis {
	int x, y, cols;        /* the plot's columns on row y start at cell x */
	double t0, t1;         /* time at the left edge of column 0 and the right of the last */
	int cursor_col;        /* plot column of the cursor, -1 none */
	int utf8;
	struct rgb fg, cursor, bg;
	/* the label of tick t with this step */
	void (*fmt)(const void *ctx, double t, double step, char *buf, size_t len);
	const void *ctx;
};

void term_axis_draw(struct cellgrid *g, const struct term_axis *a);

/* What a legend says about the x axis, in three lengths: the SM clock
 * explained ("x: cycles, each SM from its first block"), shorter ("x:
 * cycles per SM"), or the global timer since `since` ("x: µs since the
 * first block (global timer)"), down to "x: cyc" / "x: µs". */
struct term_axis_unit {
	const char *sm_long, *sm_mid; /* after "x: " */
	const char *since;            /* "the first block" */
};

/* The longest form that fits in `room` cells into buf; -1 when none does. */
int term_axis_unit_text(const struct term_axis_unit *u, int sm_clock, const char *unit, int room, char *buf,
			size_t len);

#endif
