/* Drawing helpers for views: themed text into a cell grid, clipped to a
 * width by characters (kernel names are long and may hold UTF-8). */
#ifndef NTOP_TUI_DRAW_H
#define NTOP_TUI_DRAW_H
#include "tui/layout.h"
#include "tui/tui.h"
#include "viz/cellgrid.h"

/* Theme colour of a role. */
struct rgb draw_c(const struct tui *t, int role);
/* Fills [x, x + w) x [y, y + h) with blanks on bg. */
void draw_fill(struct cellgrid *g, int x, int y, int w, int h, struct rgb bg);
/* Text at (x, y) in at most w cells ("…"/"~" when cut); returns cells used. */
int draw_text(const struct tui *t, struct cellgrid *g, int x, int y, int w, const char *s, struct rgb fg,
	      struct rgb bg, int attr);
/* Text padded to exactly w cells, aligned. */
void draw_cell(const struct tui *t, struct cellgrid *g, int x, int y, int w, const char *s, enum layout_align a,
	       struct rgb fg, struct rgb bg, int attr);
/* A text with a role colour on the theme background. */
int draw_role(const struct tui *t, struct cellgrid *g, int x, int y, int w, const char *s, int role);
/* Text of fields ("a  b  c") in at most w cells: whole fields drop from
 * the end when it is too wide (textfit.h); returns cells used. */
int draw_fields(const struct tui *t, struct cellgrid *g, int x, int y, int w, const char *s, struct rgb fg,
		struct rgb bg, int attr);
/* Text wrapped (layout_wrap) into at most max_rows rows from (x, y), the
 * last row cut with an ellipsis when more would follow; returns rows used. */
int draw_wrapped(const struct tui *t, struct cellgrid *g, int x, int y, int w, int max_rows, const char *s,
		 int role);
/* A view's title row: `details` (fields) then the kernel name. The name
 * keeps the most room: when both do not fit, it gets what the details leave
 * but at least two thirds of the row, and the details lose whole fields. */
void draw_title(const struct tui *t, struct cellgrid *g, int x, int y, int w, const char *details, const char *name,
		struct rgb fg, struct rgb bg, int attr);
/* The ellipsis glyph ("…" or "~"). */
const char *draw_ellipsis(const struct tui *t);
/* The horizontal rule glyph ("─" or "-"). */
const char *draw_hline(const struct tui *t);

/* A framed box filled with a raised background; title on the top edge. */
void draw_box(struct tui *t, struct cellgrid *g, int x, int y, int w, int h, const char *title);

#endif
