/* The warps view as a PNG: one lane per warp (of a block, or of the warps
 * an SM ran), each warp's life a thin line from its entry to its exit and
 * its regions as bars on it, coloured per region; time in cycles of the
 * SM since the first warp shown entered. A legend names each region with
 * its share of the warps' time. */
#include "viz/render_regions_png.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"
#include "viz/font5x7.h"
#include "viz/timeline.h"

/* Okabe-Ito: told apart with every common colour blindness. */
static const struct rgb region_palette[] = {
	{ 0xE6, 0x9F, 0x00 }, { 0x56, 0xB4, 0xE9 }, { 0x00, 0x9E, 0x73 }, { 0xF0, 0xE4, 0x42 },
	{ 0x00, 0x72, 0xB2 }, { 0xD5, 0x5E, 0x00 }, { 0xCC, 0x79, 0xA7 },
};
#define PALETTE_N (sizeof region_palette / sizeof region_palette[0])

struct rgb render_regions_color(const struct theme *th, uint32_t region, int n_regions)
{
	if (th->mono)
		return theme_gradient(th, n_regions > 1 ? (double)region / (n_regions - 1) : 0.5);
	return region_palette[region % PALETTE_N];
}

struct rr_ctx {
	struct rp_image *im;
	const struct regions *g;
	const struct theme *th;
	const uint64_t *idx;
	uint64_t n;
	uint64_t t0, t1;
	int s, pad, plot_x, plot_y, plot_w, plot_h;
};

static int rr_x(const struct rr_ctx *c, uint64_t t)
{
	double span = (double)(c->t1 > c->t0 ? c->t1 - c->t0 : 1);
	return c->plot_x + (int)((double)(t - c->t0) / span * c->plot_w);
}

static void rr_lane(struct rr_ctx *c, uint64_t k)
{
	const struct rg_warp *w = &c->g->warps[c->idx[k]];
	int y0 = c->plot_y + (int)((double)k * c->plot_h / (double)c->n);
	int y1 = c->plot_y + (int)((double)(k + 1) * c->plot_h / (double)c->n);
	int mid = (y0 + y1) / 2, gap = y1 - y0 > 4 ? 1 : 0;
	png_canvas_fill(c->im, rr_x(c, w->entry), mid, rr_x(c, w->exit) + 1, mid + 1, c->th->c[THEME_DIM]);
	for (uint32_t i = 0; i < w->n_segs; i++) {
		const struct rg_seg *s = &c->g->segs[w->first_seg + i];
		int x0 = rr_x(c, s->start), x1 = rr_x(c, s->end);
		png_canvas_fill(c->im, x0, y0 + gap, x1 > x0 ? x1 : x0 + 1, y1 - gap,
				render_regions_color(c->th, s->region, c->g->n_regions));
	}
}

static void rr_tick_fmt(const void *ctx, double t, double step, char *buf, size_t len)
{
	(void)ctx;
	(void)step;
	timeline_fmt_num(t, buf, len);
}

/* Legend: a swatch and "name share" per region, as many as fit a row. */
static void rr_legend(struct rr_ctx *c, int y)
{
	int x = c->pad, s = c->s;
	for (int r = 0; r < c->g->n_regions; r++) {
		char name[32], label[96];
		if (c->g->reg[r].share >= 0)
			snprintf(label, sizeof label, "%s %.1f%%", regions_name(c->g, (uint32_t)r, name, sizeof name),
				 100.0 * c->g->reg[r].share);
		else
			snprintf(label, sizeof label, "%s", regions_name(c->g, (uint32_t)r, name, sizeof name));
		int w = font5x7_text_width(label, s);
		if (x + 10 * s + w > c->im->w - c->pad)
			break;
		png_canvas_fill(c->im, x, y, x + 8 * s, y + 7 * s, render_regions_color(c->th, (uint32_t)r, c->g->n_regions));
		png_canvas_text(c->im, x + 10 * s, y, label, s, c->th->c[THEME_FG]);
		x += 10 * s + w + 12 * s;
	}
}

int render_regions_png(const struct regions *g, const uint64_t *idx, uint64_t n, const struct theme *th,
		       const struct rr_opts *o, struct rp_image *out, char **cause)
{
	if (!n)
		return cause_set(cause, "no warp with region records to draw");
	if (png_canvas_create(out, o->width, o->height, th->c[THEME_BG], cause) < 0)
		return -1;
	struct rr_ctx c = { .im = out, .g = g, .th = th, .idx = idx, .n = n };
	c.s = png_canvas_scale(o->width, o->height);
	int lh = png_canvas_line_h(c.s);
	c.pad = 8 * c.s;
	regions_span(g, idx, n, &c.t0, &c.t1);
	png_canvas_text_fit(out, c.pad, c.pad, o->title ? o->title : "", c.s, o->width - 2 * c.pad, th->c[THEME_ACCENT]);
	png_canvas_text_fit(out, c.pad, c.pad + lh, o->subtitle ? o->subtitle : "", c.s, o->width - 2 * c.pad,
			    th->c[THEME_DIM]);
	png_canvas_text_fit(out, c.pad, c.pad + 2 * lh, o->header ? o->header : "", c.s, o->width - 2 * c.pad,
			    th->c[THEME_FG]);
	c.plot_x = c.pad + 8 * 6 * c.s;
	c.plot_y = c.pad + 4 * lh;
	c.plot_w = o->width - c.plot_x - c.pad;
	c.plot_h = o->height - c.plot_y - 4 * lh - c.pad;
	if (c.plot_w < 16 || c.plot_h < 8) {
		png_canvas_free(out);
		return cause_set(cause, "%dx%d leaves no room for the plot", o->width, o->height);
	}
	for (uint64_t k = 0; k < n; k++)
		rr_lane(&c, k);
	/* lane labels: block.warp, as many as fit */
	int every = (int)((double)lh * n / c.plot_h) + 1;
	for (uint64_t k = 0; k < n; k += (uint64_t)every) {
		char label[32];
		const struct rg_warp *w = &g->warps[idx[k]];
		snprintf(label, sizeof label, "%llu.%u", (unsigned long long)w->block, w->warp);
		int y = c.plot_y + (int)((double)k * c.plot_h / (double)n);
		png_canvas_text_fit(out, c.pad, y, label, c.s, c.plot_x - c.pad - 2 * c.s, th->c[THEME_AXIS]);
	}
	int ay = c.plot_y + c.plot_h + 2 * c.s;
	double span = (double)(c.t1 - c.t0), step = timeline_tick_step(span > 0 ? span : 1, 8);
	png_canvas_x_ticks(out, c.plot_x, c.plot_w, ay, 0, span, step, c.s, th->c[THEME_AXIS], rr_tick_fmt, NULL);
	png_canvas_text(out, c.plot_x, ay + lh + 2 * c.s, "cycles since the first warp shown entered (SM clock)", c.s,
			th->c[THEME_DIM]);
	rr_legend(&c, ay + 2 * lh + 4 * c.s);
	return 0;
}
