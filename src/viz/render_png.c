/* Timeline to PNG (render_png.h): the layout and drawing of the timeline on
 * the shared raster (png_canvas.h: rectangles, lines, 5x7 text, the libpng
 * writer). */
#include "viz/render_png.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"
#include "viz/font5x7.h"
#include "viz/png_canvas.h"

void render_png_opts_init(struct rp_opts *o)
{
	memset(o, 0, sizeof *o);
	o->width = RP_DEFAULT_W;
	o->height = RP_DEFAULT_H;
	o->color = TL_COLOR_INDEX;
}

int render_png_check_size(int w, int h, char **cause)
{
	if (w < RP_MIN_W || h < RP_MIN_H || w > RP_MAX_SIDE || h > RP_MAX_SIDE)
		return cause_set(cause, "image size %dx%d: width must be %d..%d and height %d..%d pixels", w, h,
				 RP_MIN_W, RP_MAX_SIDE, RP_MIN_H, RP_MAX_SIDE);
	return 0;
}

/* ---- layout ---- */

struct rp_ctx {
	struct rp_image *im;
	const struct timeline *tl;
	const struct tl_view *v;
	const struct theme *th;
	const struct rp_opts *o;
	struct rp_layout l;
	int s, pad;
	int head_y;     /* first header line below the title */
};

static int rp_scale(int w, int h)
{
	return png_canvas_scale(w, h);
}

static int rp_line_h(int s)
{
	return png_canvas_line_h(s);
}

static int rp_header_lines(const struct timeline *tl, const struct rp_opts *o)
{
	return 1 + (o->subtitle && *o->subtitle) + (tl->note[0] != 0); /* stats, subtitle, note */
}

void render_png_layout(const struct timeline *tl, const struct tl_view *v, const struct rp_opts *o,
		       struct rp_layout *l)
{
	int s = rp_scale(o->width, o->height), pad = 8 * s;
	l->scale = s;
	char buf[16];
	uint32_t max_smid = tl->n_lanes ? tl->lanes[tl->n_lanes - 1].smid : 0;
	snprintf(buf, sizeof buf, "%u", max_smid);
	int lab = font5x7_text_width(buf, s), cap = font5x7_text_width(tl->lane, s);
	l->plot_x = pad + (lab > cap ? lab : cap) + 6 * s;
	int top = pad + (FONT5X7_H + 4) * (s + 1) + rp_header_lines(tl, o) * rp_line_h(s);
	l->plot_y = top + 2 * rp_line_h(s); /* room for the lane caption and the tail marker label */
	int bottom = pad + 3 * rp_line_h(s) + 10 * s; /* ticks, tick labels, axis label, legend */
	l->plot_w = o->width - l->plot_x - 3 * pad;
	l->plot_h = o->height - l->plot_y - bottom;
	if (l->plot_w < 1)
		l->plot_w = 1;
	if (l->plot_h < 1)
		l->plot_h = 1;
	l->lane_h = v->n_lanes ? (double)l->plot_h / v->n_lanes : l->plot_h;
}

static void rp_band(const struct rp_layout *l, int k, int *y0, int *bh)
{
	int top = l->plot_y + (int)floor(k * l->lane_h);
	int bot = l->plot_y + (int)floor((k + 1) * l->lane_h);
	int gap = l->lane_h >= 4 ? 1 : 0; /* keeps neighbouring SMs apart */
	*y0 = top;
	*bh = bot - top - gap;
	if (*bh < 1)
		*bh = 1;
}

int render_png_out_rows(const struct rp_layout *l, uint32_t rows)
{
	int y0, bh;
	rp_band(l, 0, &y0, &bh);
	return (int)(rows < (uint32_t)bh ? rows : (uint32_t)bh);
}

void render_png_row_span(const struct rp_layout *l, int k, int row, int out_rows, int *y0, int *y1)
{
	int top, bh;
	rp_band(l, k, &top, &bh);
	*y0 = top + (int)((long)row * bh / out_rows);
	*y1 = top + (int)((long)(row + 1) * bh / out_rows);
	if (bh / out_rows >= 5)
		(*y1)--; /* a pixel between residency slots */
	if (*y1 <= *y0)
		*y1 = *y0 + 1;
}

/* ---- header ---- */

static void rp_text_fit(struct rp_ctx *c, int x, int y, const char *s, int scale, int max_w, struct rgb col)
{
	png_canvas_text_fit(c->im, x, y, s, scale, max_w, col);
}

static void rp_header(struct rp_ctx *c)
{
	int s = c->s, x = c->pad, y = c->pad, max_w = c->im->w - 2 * c->pad;
	const struct theme *th = c->th;
	const char *title = c->o->title && *c->o->title ? c->o->title : "block scheduling";
	rp_text_fit(c, x, y, title, s + 1, max_w, th->c[THEME_FG]);
	y += (FONT5X7_H + 4) * (s + 1);
	if (c->o->subtitle && *c->o->subtitle) {
		rp_text_fit(c, x, y, c->o->subtitle, s, max_w, th->c[THEME_DIM]);
		y += rp_line_h(s);
	}
	char buf[320];
	timeline_header(c->tl, buf, sizeof buf);
	rp_text_fit(c, x, y, buf, s, max_w, th->c[THEME_ACCENT]);
	y += rp_line_h(s);
	if (c->tl->note[0]) {
		rp_text_fit(c, x, y, c->tl->note, s, max_w, th->c[THEME_WARN]);
		y += rp_line_h(s);
	}
	c->head_y = y;
}

/* ---- plot ---- */

static int rp_x(const struct rp_ctx *c, double t)
{
	return c->l.plot_x + (int)floor(timeline_t_to_x(c->v, c->l.plot_w, t));
}

static double rp_step(const struct rp_ctx *c)
{
	char a[32];
	timeline_fmt_tick(c->tl, c->v->t1, (c->v->t1 - c->v->t0) / 10, a, sizeof a);
	int lw = font5x7_text_width(a, c->s) + 16 * c->s;
	int n = c->l.plot_w / (lw > 1 ? lw : 1);
	return timeline_tick_step(c->v->t1 - c->v->t0, n < 2 ? 2 : n);
}

static void rp_grid(struct rp_ctx *c, double step)
{
	int y1 = c->l.plot_y + c->l.plot_h;
	for (double t = ceil(c->v->t0 / step) * step; t <= c->v->t1; t += step) {
		int x = rp_x(c, t);
		if (x > c->l.plot_x && x < c->l.plot_x + c->l.plot_w)
			png_canvas_fill(c->im, x, c->l.plot_y, x + 1, y1, c->th->c[THEME_GRID]);
	}
	if (c->o->color != TL_COLOR_DURATION || c->tl->tail_from < c->v->t0 || c->tl->tail_from > c->v->t1)
		return;
	/* where the tail starts, behind the bars, labelled above the plot */
	int x = rp_x(c, c->tl->tail_from);
	struct rgb warn = c->th->c[THEME_WARN];
	png_canvas_vdash(c->im, x, c->l.plot_y, y1, 3 * c->s, 3 * c->s, rgb_mix(c->th->c[THEME_BG], warn, 0.6));
	const char *lab = "last 10%";
	int w = font5x7_text_width(lab, c->s);
	png_canvas_text(c->im, x - w / 2, c->l.plot_y - rp_line_h(c->s), lab, c->s, warn);
}

static struct rgb rp_bin_color(const struct rp_ctx *c, const struct tl_bin *b)
{
	struct rgb col = timeline_block_color(c->tl, b->block, c->o->color, c->th);
	if (b->busy >= 1)
		return col;
	return rgb_mix(c->th->c[THEME_BG], col, 0.35 + 0.65 * b->busy); /* thin blocks stay visible */
}

static void rp_bar_column(struct rp_ctx *c, const struct tl_bin *bins, int x, int y0, int y1)
{
	const struct tl_bin *b = &bins[x];
	int cols = c->l.plot_w, px = c->l.plot_x + x;
	struct rgb col = rp_bin_color(c, b);
	struct rgb bg = c->th->c[THEME_BG];
	int tail = c->o->color == TL_COLOR_DURATION && timeline_block_is_tail(c->tl, b->block);
	if (!tail) {
		if (b->edge && x > 0 && bins[x - 1].block != TL_NONE)
			col = rgb_mix(col, bg, 0.5); /* separator where the next block starts */
		png_canvas_fill(c->im, px, y0, px + 1, y1, col);
		return;
	}
	/* tail blocks: duration colour inside a warn-coloured outline */
	struct rgb warn = c->th->c[THEME_WARN];
	int first = x == 0 || bins[x - 1].block != b->block;
	int last = x == cols - 1 || bins[x + 1].block != b->block;
	int t = y1 - y0 >= 6 ? c->s : 1;
	if (y1 - y0 < 4 || first || last) {
		png_canvas_fill(c->im, px, y0, px + 1, y1, warn);
		return;
	}
	png_canvas_fill(c->im, px, y0, px + 1, y1, col);
	png_canvas_fill(c->im, px, y0, px + 1, y0 + t, warn);
	png_canvas_fill(c->im, px, y1 - t, px + 1, y1, warn);
}

static int rp_bars(struct rp_ctx *c)
{
	int cols = c->l.plot_w;
	struct tl_bin *bins = NULL;
	size_t cap = 0;
	for (uint32_t k = 0; k < c->v->n_lanes && c->v->lane0 + k < c->tl->n_lanes; k++) {
		uint32_t lane = c->v->lane0 + k;
		int rows = render_png_out_rows(&c->l, c->tl->lanes[lane].rows);
		size_t need = (size_t)rows * cols;
		if (need > cap) {
			free(bins);
			cap = need;
			if (!(bins = malloc(cap * sizeof *bins)))
				return -1;
		}
		timeline_bin_lane(c->tl, c->v, lane, cols, rows, bins);
		for (int r = 0; r < rows; r++) {
			int y0, y1;
			render_png_row_span(&c->l, (int)k, r, rows, &y0, &y1);
			const struct tl_bin *row = bins + (size_t)r * cols;
			for (int x = 0; x < cols; x++)
				if (row[x].block != TL_NONE)
					rp_bar_column(c, row, x, y0, y1);
		}
	}
	free(bins);
	return 0;
}

/* ---- axes, labels, legend ---- */

static void rp_tick_fmt(const void *tl, double t, double step, char *buf, size_t len)
{
	timeline_fmt_tick(tl, t, step, buf, len);
}

static void rp_time_axis(struct rp_ctx *c, double step)
{
	int s = c->s, y = c->l.plot_y + c->l.plot_h;
	struct rgb ax = c->th->c[THEME_AXIS];
	png_canvas_fill(c->im, c->l.plot_x - 1, y, c->l.plot_x + c->l.plot_w, y + 1, ax);
	png_canvas_x_ticks(c->im, c->l.plot_x, c->l.plot_w, y, c->v->t0, c->v->t1, step, s, ax, rp_tick_fmt, c->tl);
	const char *al = c->tl->axis_label;
	int w = font5x7_text_width(al, s);
	int x = c->l.plot_x + (c->l.plot_w - w) / 2;
	png_canvas_text(c->im, x < c->pad ? c->pad : x, y + 6 * s + rp_line_h(s), al, s, c->th->c[THEME_DIM]);
}

static void rp_sm_axis(struct rp_ctx *c)
{
	int s = c->s, x = c->l.plot_x - 1;
	struct rgb ax = c->th->c[THEME_AXIS];
	png_canvas_fill(c->im, x, c->l.plot_y, x + 1, c->l.plot_y + c->l.plot_h + 1, ax);
	int cw = font5x7_text_width(c->tl->lane, s);
	png_canvas_text(c->im, x - 4 * s - cw, c->l.plot_y - rp_line_h(s), c->tl->lane, s, c->th->c[THEME_DIM]);
	/* label every k-th lane so labels never touch */
	double need = (FONT5X7_H + 3) * s;
	uint32_t k = 1;
	while (k * c->l.lane_h < need)
		k = k < 2 ? 2 : k < 4 ? 4 : k < 5 ? 5 : k < 8 ? 8 : k * 2;
	for (uint32_t i = 0; i < c->v->n_lanes && c->v->lane0 + i < c->tl->n_lanes; i++) {
		uint32_t lane = c->v->lane0 + i;
		if (lane % k)
			continue;
		int y0 = c->l.plot_y + (int)floor(i * c->l.lane_h);
		int ym = y0 + (int)(c->l.lane_h / 2);
		char buf[16];
		snprintf(buf, sizeof buf, "%u", c->tl->lanes[lane].smid);
		int w = font5x7_text_width(buf, s);
		png_canvas_fill(c->im, x - 3 * s, ym, x, ym + 1, ax);
		png_canvas_text(c->im, x - 4 * s - w, ym - FONT5X7_H * s / 2, buf, s, ax);
	}
}

static void rp_legend(struct rp_ctx *c)
{
	int s = c->s, x = c->pad, y = c->im->h - c->pad - FONT5X7_H * s;
	const struct theme *th = c->th;
	struct rgb dim = th->c[THEME_DIM], fg = th->c[THEME_FG];
	char lo[32], hi[48];
	const char *what = c->o->color == TL_COLOR_INDEX ? "colour: block index" : "colour: block duration";
	png_canvas_text(c->im, x, y, what, s, dim);
	x += font5x7_text_width(what, s) + 6 * s;
	if (c->o->color == TL_COLOR_INDEX) {
		snprintf(lo, sizeof lo, "0");
		snprintf(hi, sizeof hi, "%llu", (unsigned long long)c->tl->index_max);
	} else {
		timeline_fmt_num((double)c->tl->dur_min, lo, sizeof lo);
		timeline_fmt_num((double)c->tl->dur_max, hi, sizeof hi);
		strcat(hi, " cycles");
	}
	png_canvas_text(c->im, x, y, lo, s, fg);
	x += font5x7_text_width(lo, s) + 4 * s;
	int bw = 120 * s;
	for (int i = 0; i < bw; i++)
		png_canvas_fill(c->im, x + i, y - s, x + i + 1, y + (FONT5X7_H + 1) * s,
			theme_gradient(th, (double)i / (bw - 1)));
	x += bw + 4 * s;
	png_canvas_text(c->im, x, y, hi, s, fg);
	x += font5x7_text_width(hi, s) + 16 * s;
	if (c->o->color == TL_COLOR_DURATION) {
		int sw = 14 * s;
		png_canvas_fill(c->im, x, y - s, x + sw, y + (FONT5X7_H + 1) * s, th->c[THEME_WARN]);
		png_canvas_fill(c->im, x + s, y, x + sw - s, y + FONT5X7_H * s, theme_gradient(th, 0.5));
		x += sw + 4 * s;
		char t[96];
		snprintf(t, sizeof t, "tail: ends in the last 10%% (%llu blocks)",
			 (unsigned long long)c->tl->stats.tail_blocks);
		png_canvas_text(c->im, x, y, t, s, dim);
	}
}

int render_png_draw(const struct timeline *tl, const struct tl_view *v, const struct theme *th,
		    const struct rp_opts *o, struct rp_image *out, char **cause)
{
	memset(out, 0, sizeof *out);
	if (render_png_check_size(o->width, o->height, cause) < 0)
		return -1;
	out->px = malloc((size_t)o->width * o->height * 3);
	if (!out->px)
		return cause_set(cause, "out of memory for a %dx%d image", o->width, o->height);
	out->w = o->width;
	out->h = o->height;
	struct rp_ctx c = {out, tl, v, th, o, {0}, 0, 0, 0};
	render_png_layout(tl, v, o, &c.l);
	c.s = c.l.scale;
	c.pad = 8 * c.s;
	png_canvas_fill(out, 0, 0, out->w, out->h, th->c[THEME_BG]);
	rp_header(&c);
	double step = rp_step(&c);
	if (tl->n_lanes && v->t1 > v->t0) {
		rp_grid(&c, step);
		if (rp_bars(&c) < 0) {
			rp_image_free(out);
			return cause_set(cause, "out of memory binning the timeline");
		}
	} else {
		png_canvas_text(out, c.l.plot_x + 8 * c.s, c.l.plot_y + 8 * c.s, "no blocks recorded", c.s, th->c[THEME_WARN]);
	}
	rp_time_axis(&c, step);
	rp_sm_axis(&c);
	rp_legend(&c);
	return 0;
}

void rp_image_free(struct rp_image *img)
{
	png_canvas_free(img);
}

int render_png_write(const char *path, const struct rp_image *img, char **cause)
{
	return png_canvas_write(path, img, cause);
}
