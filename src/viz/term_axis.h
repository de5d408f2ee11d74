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

#endif
