/* DMAT into terminal cells (render_dmat_term.h): the view is binned once per
 * draw at the plot's resolution (cells x 2 rows with half blocks), then each
 * cell takes the colours of its two bins. */
#include "viz/render_dmat_term.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viz/term_axis.h"
#include "viz/textfit.h"
#include "viz/timeline.h"

#define RDT_LABEL_MAX 15 /* "0x7f0000001000" and a blank; longer labels are cut */

void render_dmat_term_opts_init(struct rdt_opts *o)
{
	memset(o, 0, sizeof *o);
	o->utf8 = 1;
	o->cursor_col = o->cursor_row = -1;
}

static int rdt_label_w(const struct dmat *m, int w, const struct rdt_opts *o)
{
	if (o->no_labels || w < 24)
		return 0;
	char buf[32];
	dmat_fmt_addr(m->addr_max, buf, sizeof buf);
	int n = (int)strlen(buf);
	for (int i = 0; i < m->n_allocs; i++)
		if (m->allocs[i].label && (int)strlen(m->allocs[i].label) > n)
			n = (int)strlen(m->allocs[i].label);
	n += 2; /* a blank and the gap marker column */
	if (n > RDT_LABEL_MAX + 1)
		n = RDT_LABEL_MAX + 1;
	return n <= w / 2 ? n : 0; /* a cut address would mislead: none then */
}

void render_dmat_term_layout(const struct dmat *m, int w, int h, const struct rdt_opts *o,
			     struct rdt_layout *l)
{
	memset(l, 0, sizeof *l);
	l->label_w = rdt_label_w(m, w, o);
	int small = h < 4;
	l->header_y = o->no_header || small ? -1 : 0;
	l->legend_y = o->no_legend || small ? -1 : h - 1;
	l->axis_y = o->no_axis || small ? -1 : (l->legend_y >= 0 ? h - 2 : h - 1);
	l->plot_x = l->label_w;
	l->plot_y = l->header_y >= 0 ? 1 : 0;
	l->plot_w = w - l->label_w;
	l->plot_h = h - l->plot_y - (l->axis_y >= 0) - (l->legend_y >= 0);
	if (l->plot_w < 0)
		l->plot_w = 0;
	if (l->plot_h < 0)
		l->plot_h = 0;
	l->rows_per_cell = o->utf8 && !o->mono ? 2 : 1;
	l->bin_cols = l->plot_w;
	l->bin_rows = l->plot_h * l->rows_per_cell;
}

int render_dmat_term_at(const struct rdt_layout *l, int x, int y, int half, int *col, int *row)
{
	if (x < l->plot_x || x >= l->plot_x + l->plot_w || y < l->plot_y || y >= l->plot_y + l->plot_h)
		return -1;
	*col = x - l->plot_x;
	int from_top = (y - l->plot_y) * l->rows_per_cell + (l->rows_per_cell == 2 && half ? 1 : 0);
	*row = l->bin_rows - 1 - from_top;
	return 0;
}

char render_dmat_term_glyph(uint32_t count, uint32_t max)
{
	if (!count)
		return ' ';
	int n = (int)strlen(RDT_RAMP) - 1; /* glyphs with ink */
	int i = 1 + (int)floor(dmat_scale(count, max) * (n - 1) + 1e-9);
	return RDT_RAMP[i > n ? n : i];
}

/* ---- plot ---- */

struct rdt_ctx {
	struct cellgrid *g;
	const struct dmat *m;
	const struct dmat_view *v;
	const struct theme *th;
	const struct rdt_opts *o;
	struct rdt_layout l;
	uint32_t *bins; /* [bin_rows][bin_cols], row 0 lowest address */
	uint32_t max;
};

static int rdt_is_cursor(const struct rdt_ctx *c, int col, int row)
{
	return c->o->cursor_col == col && c->o->cursor_row == row;
}

static struct rgb rdt_bin_color(const struct rdt_ctx *c, int col, int row)
{
	if (rdt_is_cursor(c, col, row))
		return c->th->c[THEME_SELECTION];
	return dmat_color(c->th, c->bins[(size_t)row * c->l.bin_cols + col], c->max);
}

static int rdt_lit(const struct rdt_ctx *c, int col, int row)
{
	return c->bins[(size_t)row * c->l.bin_cols + col] || rdt_is_cursor(c, col, row);
}

static void rdt_half_cell(struct rdt_ctx *c, int gx, int gy, int col, int top, int bot)
{
	int pt = rdt_lit(c, col, top), pb = rdt_lit(c, col, bot);
	struct rgb bg = c->th->c[THEME_BG];
	cellgrid_half(c->g, gx, gy, pt, pt ? rdt_bin_color(c, col, top) : bg, pb, pb ? rdt_bin_color(c, col, bot) : bg,
		      bg);
}

static void rdt_plot(struct rdt_ctx *c)
{
	for (int y = 0; y < c->l.plot_h; y++) {
		int gy = c->l.plot_y + y;
		for (int x = 0; x < c->l.plot_w; x++) {
			int gx = c->l.plot_x + x;
			if (c->l.rows_per_cell == 2) {
				int top = c->l.bin_rows - 1 - 2 * y;
				rdt_half_cell(c, gx, gy, x, top, top - 1);
				continue;
			}
			int row = c->l.bin_rows - 1 - y;
			uint32_t n = c->bins[(size_t)row * c->l.bin_cols + x];
			char glyph[2] = {render_dmat_term_glyph(n, c->max), 0};
			if (rdt_is_cursor(c, x, row))
				cellgrid_set(c->g, gx, gy, n ? glyph : "+", c->th->c[THEME_SELECTION], c->th->c[THEME_BG],
					     CELL_REVERSE);
			else if (n)
				cellgrid_set(c->g, gx, gy, glyph, dmat_color(c->th, n, c->max), c->th->c[THEME_BG], 0);
		}
	}
}

/* Collapsed rows [a, b) shown by display row y (0 = top of the plot). */
static void rdt_row_span(const struct rdt_ctx *c, int y, double *a, double *b)
{
	double h = (c->v->y1 - c->v->y0) / c->l.plot_h;
	*a = c->v->y0 + (c->l.plot_h - 1 - y) * h;
	*b = *a + h;
}

static void rdt_label_row(struct rdt_ctx *c, int y, uint64_t row, int gap)
{
	const struct theme *th = c->th;
	int gy = c->l.plot_y + y, w = c->l.label_w;
	char buf[48];
	dmat_row_label(c->m, row, buf, sizeof buf);
	cellgrid_puts(c->g, 0, gy, buf, th->c[THEME_AXIS], th->c[THEME_BG], w - 2);
	if (gap)
		cellgrid_set(c->g, w - 1, gy, c->o->utf8 ? "\xe2\x94\x84" : "-", th->c[THEME_DIM], th->c[THEME_BG], 0);
}

/* Labels the bottom row and every row where a range starts; a gap marker
 * where a collapsed gap falls inside or below the row. A row shows the
 * pages dmat_bin puts in its bins: those whose centre falls in it, or,
 * zoomed past one bin row per page, every page it overlaps (a range starts
 * in the row that holds its first page's start), so that a label names
 * the page the cursor readout names. */
static void rdt_labels(struct rdt_ctx *c)
{
	if (c->l.label_w < 4 || !c->m->n_rows)
		return;
	int zoomed = c->l.bin_rows > c->v->y1 - c->v->y0;
	for (int y = c->l.plot_h - 1; y >= 0; y--) {
		double a, b;
		rdt_row_span(c, y, &a, &b);
		double fa = zoomed ? floor(a) : ceil(a - 0.5), fb = zoomed ? ceil(b) : ceil(b - 0.5);
		uint64_t ra = fa < 0 ? 0 : (uint64_t)fa, rb = fb > (double)c->m->n_rows ? c->m->n_rows : (uint64_t)fb;
		if (ra >= rb)
			continue;
		int start = -1;
		for (uint32_t k = 1; k < c->m->n_runs && start < 0; k++) {
			uint64_t r0 = c->m->runs[k].row0;
			if (zoomed ? (double)r0 >= a && (double)r0 < b : r0 >= ra && r0 < rb)
				start = (int)k;
		}
		if (start >= 0)
			rdt_label_row(c, y, c->m->runs[start].row0, 1);
		else if (y == c->l.plot_h - 1)
			rdt_label_row(c, y, ra, 0);
	}
}

/* ---- axis, header, legend ---- */

static int rdt_text(struct rdt_ctx *c, int x, int y, const char *s, enum theme_role role)
{
	return x + cellgrid_puts(c->g, x, y, s, c->th->c[role], c->th->c[THEME_BG], -1);
}

static void rdt_fmt_tick(const void *ctx, double t, double step, char *buf, size_t len)
{
	dmat_fmt_tick(ctx, t, step, buf, len);
}

static void rdt_axis(struct rdt_ctx *c)
{
	const struct theme *th = c->th;
	struct term_axis a = {c->l.plot_x, c->l.axis_y, c->l.plot_w, c->v->t0, c->v->t1, c->o->cursor_col, c->o->utf8,
			      th->c[THEME_AXIS], th->c[THEME_SELECTION], th->c[THEME_BG], rdt_fmt_tick, c->m};
	term_axis_draw(c->g, &a);
}

/* A row of fields that drops whole ones to fit the width (textfit.h). */
static void rdt_fields(struct rdt_ctx *c, int y, const char *s, enum theme_role role)
{
	char fit[320];
	textfit_fields(s, c->g->w, c->o->utf8 ? "\xe2\x80\xa6" : "~", fit, sizeof fit);
	rdt_text(c, 0, y, fit, role);
}

static void rdt_legend(struct rdt_ctx *c)
{
	int y = c->l.legend_y, x = 0;
	char hi[32];
	timeline_fmt_num((double)c->max, hi, sizeof hi);
	x = rdt_text(c, x, y, "accesses/cell 1 ", THEME_DIM);
	if (c->l.rows_per_cell == 2) {
		for (int i = 0; i < 8; i++, x++)
			cellgrid_set(c->g, x, y, "\xe2\x96\x88", theme_gradient(c->th, i / 7.0), c->th->c[THEME_BG], 0);
	} else {
		static const char ramp[] = RDT_RAMP;
		int inked = (int)sizeof ramp - 2; /* glyphs after the blank */
		for (int i = 0; i < inked; i++, x++) {
			char gl[2] = {ramp[i + 1], 0};
			cellgrid_set(c->g, x, y, gl, theme_gradient(c->th, i / (double)(inked - 1)), c->th->c[THEME_BG], 0);
		}
	}
	x = rdt_text(c, x + 1, y, hi, THEME_DIM);
	x = rdt_text(c, x, y, " (log)", THEME_DIM);
	static const struct term_axis_unit tu = {"cycles since each block's first access", "cycles per block",
						 "the first access"};
	const char *u = c->o->utf8 || c->m->tick_div != 1e3 ? c->m->tick_unit : "us";
	char unit[160];
	if (term_axis_unit_text(&tu, c->m->time == DMAT_TIME_SM, u, c->g->w - x - 2, unit, sizeof unit) == 0)
		x = rdt_text(c, x + 2, y, unit, THEME_DIM);
	if (c->m->note[0])
		rdt_text(c, x + 2, y, c->m->note, THEME_WARN);
}

/* The cursor readout for a narrow terminal: the count kept, the address
 * range as its start and its size in pages ("t 0-95  0x7f0000001000 +2
 * pages  1 access"). */
static void rdt_cell_short(const struct rdt_ctx *c, const struct dmat_cell *cell, char *buf, size_t len)
{
	char t0[32], t1[32], a0[32];
	double step = cell->t1 - cell->t0;
	dmat_fmt_tick(c->m, cell->t0, step, t0, sizeof t0);
	dmat_fmt_tick(c->m, cell->t1, step, t1, sizeof t1);
	int n = snprintf(buf, len, "t %s-%s  %u access%s  ", t0, t1, cell->count, cell->count == 1 ? "" : "es");
	if (n < 0 || (size_t)n >= len)
		return;
	dmat_fmt_addr(cell->addr0, a0, sizeof a0);
	if (cell->pages)
		snprintf(buf + n, len - (size_t)n, "%s +%llu page%s", a0, (unsigned long long)cell->pages,
			 cell->pages == 1 ? "" : "s");
	else
		snprintf(buf + n, len - (size_t)n, "no pages");
}

static void rdt_header(struct rdt_ctx *c)
{
	char buf[320];
	struct dmat_cell cell;
	if (c->o->cursor_col >= 0 &&
	    dmat_cell_at(c->m, c->v, c->l.bin_cols, c->l.bin_rows, c->bins, c->o->cursor_col, c->o->cursor_row,
			 &cell) == 0) {
		dmat_cell_text(c->m, &cell, buf, sizeof buf);
		if (cellgrid_utf8_len(buf) > c->g->w)
			rdt_cell_short(c, &cell, buf, sizeof buf);
		rdt_fields(c, c->l.header_y, buf, THEME_ACCENT);
		return;
	}
	dmat_header(c->m, buf, sizeof buf);
	rdt_fields(c, c->l.header_y, buf, THEME_FG);
}

int render_dmat_term_draw(struct cellgrid *g, const struct dmat *m, const struct dmat_view *v,
			  const struct theme *th, const struct rdt_opts *o)
{
	struct rdt_ctx c = {g, m, v, th, o, {0}, NULL, 0};
	cellgrid_clear(g, th->c[THEME_FG], th->c[THEME_BG]);
	render_dmat_term_layout(m, g->w, g->h, o, &c.l);
	if (c.l.plot_w <= 0)
		return 0;
	if (c.l.bin_rows > 0) {
		c.bins = calloc((size_t)c.l.bin_cols * c.l.bin_rows, sizeof *c.bins);
		if (!c.bins)
			return -1;
		if (m->accesses)
			dmat_bin(m, v, c.l.bin_cols, c.l.bin_rows, c.bins, &c.max);
	}
	if (c.l.header_y >= 0)
		rdt_header(&c);
	if (!m->accesses)
		rdt_text(&c, c.l.plot_x, c.l.plot_y, "no memory accesses recorded", THEME_WARN);
	else if (c.bins) {
		rdt_plot(&c);
		rdt_labels(&c);
	}
	if (c.l.axis_y >= 0)
		rdt_axis(&c);
	if (c.l.legend_y >= 0)
		rdt_legend(&c);
	free(c.bins);
	return 0;
}
