/* Time axis row (term_axis.h). */
#include "viz/term_axis.h"

#include <math.h>
#include <stdio.h>

#include "viz/textfit.h"
#include "viz/timeline.h"

void term_axis_draw(struct cellgrid *g, const struct term_axis *a)
{
	double span = a->t1 - a->t0;
	if (!(span > 0) || a->cols <= 0)
		return;
	double step = timeline_tick_step(span, a->cols / 12 > 1 ? a->cols / 12 : 1);
	int last_end = -1;
	for (double t = ceil(a->t0 / step) * step; t < a->t1; t += step) {
		int x = (int)floor((t - a->t0) * a->cols / span);
		if (x < 0 || x >= a->cols || x <= last_end)
			continue;
		char lab[32];
		a->fmt(a->ctx, t, step, lab, sizeof lab);
		int n = cellgrid_utf8_len(lab);
		cellgrid_set(g, a->x + x, a->y, a->utf8 ? "\xe2\x95\xb5" : "|", a->fg, a->bg, 0);
		int cut = a->cursor_col > x && a->cursor_col <= x + n;
		if (x + 1 + n <= a->cols && !cut)
			cellgrid_puts(g, a->x + x + 1, a->y, lab, a->fg, a->bg, -1);
		last_end = x + n + 1;
	}
	if (a->cursor_col >= 0 && a->cursor_col < a->cols)
		cellgrid_set(g, a->x + a->cursor_col, a->y, a->utf8 ? "\xe2\x96\xb2" : "^", a->cursor, a->bg, CELL_BOLD);
}

int term_axis_unit_text(const struct term_axis_unit *u, int sm_clock, const char *unit, int room, char *buf,
			size_t len)
{
	char lng[128], mid[96], shrt[32];
	if (sm_clock) {
		snprintf(lng, sizeof lng, "x: %s", u->sm_long);
		snprintf(mid, sizeof mid, "x: %s", u->sm_mid);
		snprintf(shrt, sizeof shrt, "x: cyc");
	} else {
		snprintf(lng, sizeof lng, "x: %s since %s (global timer)", unit, u->since);
		snprintf(mid, sizeof mid, "x: %s (global timer)", unit);
		snprintf(shrt, sizeof shrt, "x: %s", unit);
	}
	const char *const alts[] = {lng, mid, shrt};
	int a = textfit_first(alts, 3, room);
	if (a < 0)
		return -1;
	snprintf(buf, len, "%s", alts[a]);
	return 0;
}
