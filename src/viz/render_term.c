/* Timeline into terminal cells (render_term.h). Each track is binned to the
 * plot's columns once per draw (timeline_bin_lane), then two tracks at a
 * time become one row of half-block cells. */
#include "viz/render_term.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viz/term_axis.h"
#include "viz/textfit.h"

void render_term_opts_init(struct rt_opts *o)
{
	memset(o, 0, sizeof *o);
	o->utf8 = 1;
	o->color = TL_COLOR_INDEX;
	o->cursor_lane = -1;
}

static int rt_digits(uint32_t v)
{
	int d = 1;
	while (v >= 10) {
		v /= 10;
		d++;
	}
	return d;
}

void render_term_layout(const struct timeline *tl, int w, int h, const struct rt_opts *o,
			struct rt_layout *l)
{
	memset(l, 0, sizeof *l);
	uint32_t max_smid = tl->n_lanes ? tl->lanes[tl->n_lanes - 1].smid : 0;
	l->label_w = rt_digits(max_smid) + 1;
	if (l->label_w < 3)
		l->label_w = 3;
	if (l->label_w >= w)
		l->label_w = 0;
	int small = h < 4; /* too small for anything but the plot */
	l->header_y = o->no_header || small ? -1 : 0;
	l->legend_y = o->no_legend || small ? -1 : h - 1;
	l->axis_y = o->no_axis || small ? -1 : (l->legend_y >= 0 ? h - 2 : h - 1);
	l->plot_x = l->label_w;
	l->plot_y = l->header_y >= 0 ? 1 : 0;
	l->plot_w = w - l->label_w;
	l->plot_h = h - l->plot_y - (l->axis_y >= 0) - (l->legend_y >= 0);
	if (l->plot_h < 0)
		l->plot_h = 0;
	l->tracks_per_row = o->utf8 && !o->mono ? 2 : 1;
}

int render_term_tracks_fit(const struct rt_layout *l)
{
	return l->plot_h * l->tracks_per_row;
}

int render_term_track(const struct timeline *tl, const struct tl_view *v, const struct rt_opts *o, int k,
		      uint32_t *lane, int *row, int *out_rows)
{
	if (k < 0)
		return -1;
	uint32_t end = v->lane0 + v->n_lanes;
	if (end > tl->n_lanes)
		end = tl->n_lanes;
	if (!o->expand) {
		if ((uint64_t)v->lane0 + (uint64_t)k >= end)
			return -1;
		*lane = v->lane0 + (uint32_t)k;
		*row = 0;
		*out_rows = 1;
		return 0;
	}
	for (uint32_t l = v->lane0; l < end; l++) {
		if ((uint32_t)k < tl->lanes[l].rows) {
			*lane = l;
			*row = k;
			*out_rows = (int)tl->lanes[l].rows;
			return 0;
		}
		k -= (int)tl->lanes[l].rows;
	}
	return -1;
}

int render_term_at(const struct timeline *tl, const struct tl_view *v, const struct rt_opts *o,
		   const struct rt_layout *l, int x, int y, int half, int *track, double *t)
{
	(void)tl;
	(void)o;
	if (x < l->plot_x || x >= l->plot_x + l->plot_w || y < l->plot_y || y >= l->plot_y + l->plot_h)
		return -1;
	*track = (y - l->plot_y) * l->tracks_per_row + (l->tracks_per_row == 2 && half ? 1 : 0);
	*t = timeline_x_to_t(v, l->plot_w, x - l->plot_x + 0.5);
	return 0;
}

/* ---- the plot ---- */

struct rt_track {
	int valid;
	uint32_t lane;
	struct tl_bin *bins; /* [plot_w] */
};

struct rt_ctx {
	struct cellgrid *g;
	const struct timeline *tl;
	const struct tl_view *v;
	const struct theme *th;
	const struct rt_opts *o;
	struct rt_layout l;
	struct tl_bin *lane_bins; /* scratch: a whole lane */
	uint32_t cached_lane;
	int cached_rows;
	int cursor_x;             /* plot column of the cursor, -1 none */
};

static int rt_fill_track(struct rt_ctx *c, int k, struct rt_track *t)
{
	int row, rows;
	t->valid = render_term_track(c->tl, c->v, c->o, k, &t->lane, &row, &rows) == 0;
	if (!t->valid)
		return 0;
	int cols = c->l.plot_w;
	if (c->cached_lane != t->lane || c->cached_rows != rows) {
		free(c->lane_bins);
		c->lane_bins = malloc((size_t)rows * cols * sizeof *c->lane_bins);
		if (!c->lane_bins)
			return -1;
		timeline_bin_lane(c->tl, c->v, t->lane, cols, rows, c->lane_bins);
		c->cached_lane = t->lane;
		c->cached_rows = rows;
	}
	memcpy(t->bins, c->lane_bins + (size_t)row * cols, (size_t)cols * sizeof *t->bins);
	return 0;
}

static int rt_present(const struct rt_track *t, int x)
{
	return t->valid && t->bins[x].block != TL_NONE;
}

static struct rgb rt_color(const struct rt_ctx *c, const struct rt_track *t, int x)
{
	const struct tl_bin *b = &t->bins[x];
	if (c->o->cursor_lane >= 0 && t->lane == (uint32_t)c->o->cursor_lane && x == c->cursor_x)
		return c->th->c[THEME_SELECTION];
	struct rgb col = c->o->color == TL_COLOR_DURATION && timeline_block_is_tail(c->tl, b->block)
				 ? c->th->c[THEME_WARN]
				 : timeline_block_color(c->tl, b->block, c->o->color, c->th);
	double f = b->busy >= 1 ? 1 : 0.45 + 0.55 * b->busy; /* partly busy columns fade */
	return rgb_mix(c->th->c[THEME_BG], col, f);
}

static void rt_half_cell(struct rt_ctx *c, int gx, int gy, const struct rt_track *top,
			 const struct rt_track *bot, int x)
{
	int pt = rt_present(top, x), pb = rt_present(bot, x);
	struct rgb bg = c->th->c[THEME_BG];
	cellgrid_half(c->g, gx, gy, pt, pt ? rt_color(c, top, x) : bg, pb, pb ? rt_color(c, bot, x) : bg, bg);
}

/* The glyphs of a one-track row: a block, its neighbour, a tail block
 * (mono only: colour marks tails otherwise). */
static const char *rt_glyph(const struct rt_ctx *c, int alt, int tail)
{
	if (tail)
		return c->o->utf8 ? "\xe2\x96\x91" : "~"; /* ░ */
	if (c->o->utf8)
		return alt ? "\xe2\x96\x92" : "\xe2\x96\x88"; /* ▒ █ */
	return alt ? "=" : "#";
}

/* One track per row (ASCII, mono): the glyph alternates whenever the
 * dominant block changes, so neighbouring blocks stay apart without colour;
 * the cursor cell is in reverse video (a glyph's colour alone may not show). */
static void rt_glyph_row(struct rt_ctx *c, int gy, const struct rt_track *t)
{
	uint32_t prev = TL_NONE;
	int alt = 0;
	int cur = c->o->cursor_lane >= 0 && t->lane == (uint32_t)c->o->cursor_lane ? c->cursor_x : -1;
	for (int x = 0; x < c->l.plot_w; x++) {
		int gx = c->l.plot_x + x;
		if (!rt_present(t, x)) {
			prev = TL_NONE;
			if (x == cur)
				cellgrid_set(c->g, gx, gy, " ", c->th->c[THEME_FG], c->th->c[THEME_BG], CELL_REVERSE);
			continue;
		}
		if (t->bins[x].block != prev && prev != TL_NONE)
			alt = !alt;
		prev = t->bins[x].block;
		int tail = c->o->mono && c->o->color == TL_COLOR_DURATION && timeline_block_is_tail(c->tl, prev);
		cellgrid_set(c->g, gx, gy, rt_glyph(c, alt, tail), rt_color(c, t, x), c->th->c[THEME_BG],
			     x == cur ? CELL_REVERSE : 0);
	}
}

static void rt_label(struct rt_ctx *c, int gy, const struct rt_track *t, uint32_t *last_lane)
{
	if (!t->valid || t->lane == *last_lane || c->l.label_w < 2)
		return;
	*last_lane = t->lane;
	char buf[16];
	snprintf(buf, sizeof buf, "%*u", c->l.label_w - 1, c->tl->lanes[t->lane].smid);
	int cur = c->o->cursor_lane >= 0 && t->lane == (uint32_t)c->o->cursor_lane;
	cellgrid_puts(c->g, 0, gy, buf, cur ? c->th->c[THEME_SELECTION] : c->th->c[THEME_DIM], c->th->c[THEME_BG],
		      -1);
	if (cur)
		for (int x = 0; x < c->l.label_w - 1; x++)
			cellgrid_at(c->g, x, gy)->attr |= CELL_REVERSE;
}

static int rt_plot(struct rt_ctx *c)
{
	int cols = c->l.plot_w, tpr = c->l.tracks_per_row;
	struct rt_track t[2] = {{0, 0, calloc((size_t)cols, sizeof(struct tl_bin))},
				{0, 0, calloc((size_t)cols, sizeof(struct tl_bin))}};
	int rc = t[0].bins && t[1].bins ? 0 : -1;
	uint32_t last_lane = TL_NONE;
	for (int r = 0; rc == 0 && r < c->l.plot_h; r++) {
		int gy = c->l.plot_y + r;
		for (int h = 0; h < tpr && rc == 0; h++)
			rc = rt_fill_track(c, r * tpr + h, &t[h]);
		if (rc < 0 || !t[0].valid)
			break;
		rt_label(c, gy, &t[0], &last_lane);
		if (tpr == 1) {
			rt_glyph_row(c, gy, &t[0]);
			continue;
		}
		if (t[1].valid && t[1].lane != t[0].lane)
			last_lane = t[1].lane; /* labelled by the row above's top only */
		for (int x = 0; x < cols; x++)
			rt_half_cell(c, c->l.plot_x + x, gy, &t[0], &t[1], x);
	}
	free(t[0].bins);
	free(t[1].bins);
	return rc;
}

/* ---- axis, header, legend ---- */

static void rt_fmt_tick(const void *ctx, double t, double step, char *buf, size_t len)
{
	timeline_fmt_tick(ctx, t, step, buf, len);
}

static void rt_axis(struct rt_ctx *c)
{
	const struct theme *th = c->th;
	if (c->l.label_w >= 3)
		cellgrid_puts(c->g, 0, c->l.axis_y, c->tl->lane, th->c[THEME_DIM], th->c[THEME_BG], -1);
	struct term_axis a = {c->l.plot_x, c->l.axis_y, c->l.plot_w, c->v->t0, c->v->t1, c->cursor_x, c->o->utf8,
			      th->c[THEME_AXIS], th->c[THEME_SELECTION], th->c[THEME_BG], rt_fmt_tick, c->tl};
	term_axis_draw(c->g, &a);
}

static int rt_text(struct rt_ctx *c, int x, int y, const char *s, enum theme_role role)
{
	return x + cellgrid_puts(c->g, x, y, s, c->th->c[role], c->th->c[THEME_BG], -1);
}

/* Without colours the legend keys the glyphs instead of a colour scale. */
static int rt_legend_mono(struct rt_ctx *c, int y)
{
	int x = rt_text(c, 0, y, rt_glyph(c, 0, 0), THEME_FG);
	x = rt_text(c, x, y, rt_glyph(c, 1, 0), THEME_FG);
	x = rt_text(c, x + 1, y, "alternating blocks", THEME_DIM);
	if (c->o->color == TL_COLOR_DURATION) {
		x = rt_text(c, x + 2, y, rt_glyph(c, 0, 1), THEME_FG);
		x = rt_text(c, x + 1, y, "tail (ends in last 10%)", THEME_DIM);
	}
	return x;
}

/* The colour scale: by block index, or by duration with the tail colour. */
static int rt_legend_scale(struct rt_ctx *c, int y)
{
	const struct timeline *tl = c->tl;
	const char *full = c->o->utf8 ? "\xe2\x96\x88" : "#";
	char lo[32], hi[64];
	int x;
	if (c->o->color == TL_COLOR_INDEX) {
		x = rt_text(c, 0, y, "block index 0 ", THEME_DIM);
		timeline_fmt_num((double)tl->index_max, hi, sizeof hi);
	} else {
		timeline_fmt_num((double)tl->dur_min, lo, sizeof lo);
		timeline_fmt_num((double)tl->dur_max, hi, sizeof hi);
		strcat(hi, " cyc");
		x = rt_text(c, 0, y, "duration ", THEME_DIM);
		x = rt_text(c, x, y, lo, THEME_DIM);
		x = rt_text(c, x, y, " ", THEME_DIM);
	}
	for (int i = 0; i < 8; i++, x++)
		cellgrid_set(c->g, x, y, full, theme_gradient(c->th, i / 7.0), c->th->c[THEME_BG], 0);
	x = rt_text(c, x + 1, y, hi, THEME_DIM);
	if (c->o->color == TL_COLOR_DURATION) {
		cellgrid_set(c->g, x + 2, y, full, c->th->c[THEME_WARN], c->th->c[THEME_BG], 0);
		x = rt_text(c, x + 4, y, "tail (ends in last 10%)", THEME_DIM);
	}
	return x;
}

static void rt_legend(struct rt_ctx *c)
{
	const struct timeline *tl = c->tl;
	int y = c->l.legend_y;
	int x = c->o->mono ? rt_legend_mono(c, y) : rt_legend_scale(c, y);
	char sm_long[64], sm_mid[32];
	snprintf(sm_long, sizeof sm_long, "cycles, each %s from its first block", tl->lane);
	snprintf(sm_mid, sizeof sm_mid, "cycles per %s", tl->lane);
	const struct term_axis_unit tu = {sm_long, sm_mid, "the first block"};
	const char *u = c->o->utf8 ? tl->tick_unit : tl->tick_div == 1e3 ? "us" : tl->tick_unit;
	char unit[160];
	if (term_axis_unit_text(&tu, tl->time == TL_TIME_SM, u, c->g->w - x - 2, unit, sizeof unit) == 0)
		x = rt_text(c, x + 2, y, unit, THEME_DIM);
	if (tl->note[0])
		rt_text(c, x + 2, y, tl->note, THEME_WARN);
}

static void rt_header(struct rt_ctx *c)
{
	char buf[256], fit[256];
	timeline_header(c->tl, buf, sizeof buf);
	textfit_fields(buf, c->g->w, c->o->utf8 ? "\xe2\x80\xa6" : "~", fit, sizeof fit);
	rt_text(c, 0, c->l.header_y, fit, THEME_FG);
}

int render_term_draw(struct cellgrid *g, const struct timeline *tl, const struct tl_view *v,
		     const struct theme *th, const struct rt_opts *o)
{
	struct rt_ctx c = {g, tl, v, th, o, {0}, NULL, TL_NONE, 0, -1};
	cellgrid_clear(g, th->c[THEME_FG], th->c[THEME_BG]);
	render_term_layout(tl, g->w, g->h, o, &c.l);
	if (c.l.plot_w <= 0)
		return 0;
	if (o->cursor_lane >= 0 && o->cursor_t >= v->t0 && o->cursor_t < v->t1)
		c.cursor_x = (int)floor(timeline_t_to_x(v, c.l.plot_w, o->cursor_t));
	if (c.l.header_y >= 0)
		rt_header(&c);
	int rc = 0;
	if (!tl->n_lanes)
		rt_text(&c, c.l.plot_x, c.l.plot_y, "no blocks recorded", THEME_WARN);
	else if (v->t1 > v->t0)
		rc = rt_plot(&c);
	if (c.l.axis_y >= 0)
		rt_axis(&c);
	if (c.l.legend_y >= 0)
		rt_legend(&c);
	free(c.lane_bins);
	return rc;
}
