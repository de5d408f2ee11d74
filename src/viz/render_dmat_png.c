/* DMAT to PNG (render_dmat_png.h): layout, one dmat_bin at pixel
 * resolution, axes, colour bar and the range legend, drawn on the shared
 * raster (png_canvas.h). */
#include "viz/render_dmat_png.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"
#include "viz/font5x7.h"
#include "viz/render_png.h"
#include "viz/timeline.h"

#define RDP_MAX_LABELS 256
#define RDP_LABEL_CHARS 24 /* the widest address label; longer ones lose their tail */

void render_dmat_png_opts_init(struct rdp_opts *o)
{
	memset(o, 0, sizeof *o);
	o->width = RDP_DEFAULT_W;
	o->height = RDP_DEFAULT_H;
}

static int rdp_header_lines(const struct dmat *m, const struct rdp_opts *o)
{
	return 1 + (o->subtitle && *o->subtitle) + (m->note[0] != 0);
}

/* Room for the widest label dmat_row_label can give: an address, or an
 * allocation's label with the offset of its last page. */
static int rdp_addr_w(const struct dmat *m, int s)
{
	char buf[64];
	dmat_fmt_addr(m->addr_max ? m->addr_max : 0xffffffffffull, buf, sizeof buf);
	int w = font5x7_text_width(buf, s), max = RDP_LABEL_CHARS * FONT5X7_ADVANCE * s;
	for (int i = 0; i < m->n_allocs; i++)
		if (m->allocs[i].label) {
			uint64_t last = m->allocs[i].size > m->page_size ? (m->allocs[i].size - 1) / m->page_size * m->page_size : 0;
			snprintf(buf, sizeof buf, "%s+0x%llx", m->allocs[i].label, (unsigned long long)last);
			int lw = font5x7_text_width(buf, s);
			w = lw > w ? lw : w;
		}
	return w < max ? w : max;
}

/* Cuts a label to `room` pixels from its end, as the terminal does, so the
 * allocation it names stays readable. */
static void rdp_fit_label(char *text, int room, int s)
{
	size_t n = strlen(text);
	while (n > 0 && font5x7_text_width(text, s) > room)
		text[--n] = 0;
}

void render_dmat_png_layout(const struct dmat *m, const struct rdp_opts *o, struct rdp_layout *l)
{
	int s = png_canvas_scale(o->width, o->height), pad = 8 * s, lh = png_canvas_line_h(s);
	l->scale = s;
	l->plot_x = pad + rdp_addr_w(m, s) + 8 * s;
	int top = pad + (FONT5X7_H + 4) * (s + 1) + rdp_header_lines(m, o) * lh;
	l->plot_y = top + 2 * lh + 6 * s; /* room for the colour bar's caption */
	int bottom = pad + 4 * lh + 10 * s; /* ticks, tick labels, axis label, range legend */
	char mx[32];
	timeline_fmt_num(4.29e9, mx, sizeof mx); /* the widest count label */
	int right = pad + 12 * s + 14 * s + 4 * s + font5x7_text_width(mx, s);
	int cap_w = 12 * s + font5x7_text_width("per cell (log)", s) + pad;
	if (right < cap_w)
		right = cap_w;
	l->plot_w = o->width - l->plot_x - right;
	l->plot_h = o->height - l->plot_y - bottom;
	if (l->plot_w < 1)
		l->plot_w = 1;
	if (l->plot_h < 1)
		l->plot_h = 1;
	l->bar_w = 14 * s;
	l->bar_x = l->plot_x + l->plot_w + 12 * s;
	l->bar_y = l->plot_y;
	l->bar_h = l->plot_h;
}

struct rdp_ctx {
	struct rp_image *im;
	const struct dmat *m;
	const struct dmat_view *v;
	const struct theme *th;
	const struct rdp_opts *o;
	struct rdp_layout l;
	int s, pad, lh;
	uint32_t max;
};

/* ---- header ---- */

static void rdp_header(struct rdp_ctx *c)
{
	int s = c->s, x = c->pad, y = c->pad, max_w = c->im->w - 2 * c->pad;
	const struct theme *th = c->th;
	const char *title = c->o->title && *c->o->title ? c->o->title : "dense memory access timeline";
	png_canvas_text_fit(c->im, x, y, title, s + 1, max_w, th->c[THEME_FG]);
	y += (FONT5X7_H + 4) * (s + 1);
	if (c->o->subtitle && *c->o->subtitle) {
		png_canvas_text_fit(c->im, x, y, c->o->subtitle, s, max_w, th->c[THEME_DIM]);
		y += c->lh;
	}
	char buf[320];
	dmat_header(c->m, buf, sizeof buf);
	png_canvas_text_fit(c->im, x, y, buf, s, max_w, th->c[THEME_ACCENT]);
	y += c->lh;
	if (c->m->note[0])
		png_canvas_text_fit(c->im, x, y, c->m->note, s, max_w, th->c[THEME_WARN]);
}

/* ---- heatmap ---- */

/* Pixel row of the boundary below collapsed row `row`. */
static int rdp_row_y(const struct rdp_ctx *c, double row)
{
	double f = (row - c->v->y0) / (c->v->y1 - c->v->y0);
	return c->l.plot_y + c->l.plot_h - (int)floor(f * c->l.plot_h + 0.5);
}

static int rdp_heat(struct rdp_ctx *c)
{
	int cols = c->l.plot_w, rows = c->l.plot_h;
	uint32_t *g = malloc((size_t)cols * rows * sizeof *g);
	if (!g)
		return -1;
	dmat_bin(c->m, c->v, cols, rows, g, &c->max);
	for (int r = 0; r < rows; r++) {
		int py = c->l.plot_y + rows - 1 - r;
		const uint32_t *row = g + (size_t)r * cols;
		for (int x = 0; x < cols; x++)
			if (row[x])
				png_canvas_fill(c->im, c->l.plot_x + x, py, c->l.plot_x + x + 1, py + 1,
						dmat_color(c->th, row[x], c->max));
	}
	free(g);
	/* collapsed gaps: dashed lines, unless they would hatch the whole plot */
	uint32_t shown = 0;
	for (uint32_t k = 1; k < c->m->n_runs; k++)
		shown += c->m->runs[k].row0 > c->v->y0 && c->m->runs[k].row0 < c->v->y1;
	if (shown * 10 > (uint32_t)rows)
		return 0;
	struct rgb col = rgb_mix(c->th->c[THEME_BG], c->th->c[THEME_DIM], 0.8);
	for (uint32_t k = 1; k < c->m->n_runs; k++) {
		double r0 = (double)c->m->runs[k].row0;
		if (r0 > c->v->y0 && r0 < c->v->y1)
			png_canvas_hdash(c->im, rdp_row_y(c, r0), c->l.plot_x, c->l.plot_x + cols, 4 * c->s, 3 * c->s, col);
	}
	return 0;
}

/* ---- axes ---- */

static void rdp_tick_fmt(const void *m, double t, double step, char *buf, size_t len)
{
	dmat_fmt_tick(m, t, step, buf, len);
}

static void rdp_time_axis(struct rdp_ctx *c)
{
	int s = c->s, y = c->l.plot_y + c->l.plot_h;
	struct rgb ax = c->th->c[THEME_AXIS];
	png_canvas_fill(c->im, c->l.plot_x - 1, y, c->l.plot_x + c->l.plot_w, y + 1, ax);
	double span = c->v->t1 - c->v->t0;
	char probe[32];
	dmat_fmt_tick(c->m, c->v->t1, span / 10, probe, sizeof probe);
	int lw = font5x7_text_width(probe, s) + 16 * s;
	int n = c->l.plot_w / (lw > 1 ? lw : 1);
	double step = timeline_tick_step(span, n < 2 ? 2 : n);
	png_canvas_x_ticks(c->im, c->l.plot_x, c->l.plot_w, y, c->v->t0, c->v->t1, step, s, ax, rdp_tick_fmt, c->m);
	const char *al = c->m->axis_label;
	int w = font5x7_text_width(al, s), x = c->l.plot_x + (c->l.plot_w - w) / 2;
	png_canvas_text(c->im, x < c->pad ? c->pad : x, y + 6 * s + c->lh, al, s, c->th->c[THEME_DIM]);
}

struct rdp_label {
	int y;
	char text[48];
};

static int rdp_label_free(const struct rdp_label *ls, int n, int y, int lh)
{
	for (int i = 0; i < n; i++)
		if (abs(ls[i].y - y) < lh)
			return 0;
	return 1;
}

/* Range starts first (allocation label or address), then addresses every
 * few lines where there is room. */
static void rdp_addr_axis(struct rdp_ctx *c)
{
	int s = c->s, x = c->l.plot_x - 1, bot = c->l.plot_y + c->l.plot_h;
	struct rgb ax = c->th->c[THEME_AXIS];
	png_canvas_fill(c->im, x, c->l.plot_y, x + 1, bot + 1, ax);
	png_canvas_text(c->im, c->pad, c->l.plot_y - c->lh, "address", s, c->th->c[THEME_DIM]);
	if (!c->m->n_rows)
		return;
	struct rdp_label ls[RDP_MAX_LABELS];
	int n = 0, need = (FONT5X7_H + 3) * s;
	for (uint32_t k = 0; k < c->m->n_runs && n < RDP_MAX_LABELS; k++) {
		const struct dmat_run *r = &c->m->runs[k];
		double r0 = (double)r->row0 < c->v->y0 ? c->v->y0 : (double)r->row0;
		if (r0 >= c->v->y1 || (double)(r->row0 + r->n_pages) <= c->v->y0)
			continue;
		int y = rdp_row_y(c, r0) - 1;
		if (!rdp_label_free(ls, n, y, need))
			continue;
		ls[n].y = y;
		dmat_row_label(c->m, (uint64_t)r0, ls[n].text, sizeof ls[n].text);
		n++;
	}
	for (int y = bot - 6 * c->lh; y > c->l.plot_y && n < RDP_MAX_LABELS; y -= 6 * c->lh) {
		double row = c->v->y0 + (double)(bot - y) / c->l.plot_h * (c->v->y1 - c->v->y0);
		if (!rdp_label_free(ls, n, y, 2 * need) || row >= (double)c->m->n_rows)
			continue;
		ls[n].y = y;
		dmat_row_label(c->m, (uint64_t)row, ls[n].text, sizeof ls[n].text);
		n++;
	}
	int room = c->l.plot_x - c->pad - 8 * s; /* rdp_addr_w */
	for (int i = 0; i < n; i++) {
		rdp_fit_label(ls[i].text, room, s);
		int w = font5x7_text_width(ls[i].text, s);
		png_canvas_fill(c->im, x - 3 * s, ls[i].y, x, ls[i].y + 1, ax);
		png_canvas_text(c->im, x - 4 * s - w, ls[i].y - FONT5X7_H * s / 2, ls[i].text, s, ax);
	}
}

/* ---- colour bar and legend ---- */

static void rdp_bar(struct rdp_ctx *c)
{
	const struct rdp_layout *l = &c->l;
	int s = c->s;
	struct rgb dim = c->th->c[THEME_DIM], ax = c->th->c[THEME_AXIS];
	png_canvas_text(c->im, l->bar_x, l->bar_y - 2 * c->lh - 6 * s, "accesses", s, dim);
	png_canvas_text(c->im, l->bar_x, l->bar_y - c->lh - 6 * s, "per cell (log)", s, dim);
	for (int i = 0; i < l->bar_h; i++) {
		double f = l->bar_h > 1 ? (double)(l->bar_h - 1 - i) / (l->bar_h - 1) : 1;
		png_canvas_fill(c->im, l->bar_x, l->bar_y + i, l->bar_x + l->bar_w, l->bar_y + i + 1,
				theme_gradient(c->th, f));
	}
	uint32_t max = c->max ? c->max : 1;
	int last = l->bar_y + l->bar_h + c->lh;
	for (double v = 1;; v *= 10) {
		uint32_t cnt = v >= max ? max : (uint32_t)v;
		int y = l->bar_y + l->bar_h - 1 - (int)floor(dmat_scale(cnt, max) * (l->bar_h - 1) + 0.5);
		char lab[32];
		timeline_fmt_num((double)cnt, lab, sizeof lab);
		if (last - y >= c->lh || cnt == max) {
			png_canvas_fill(c->im, l->bar_x + l->bar_w, y, l->bar_x + l->bar_w + 3 * s, y + 1, ax);
			png_canvas_text(c->im, l->bar_x + l->bar_w + 4 * s, y - FONT5X7_H * s / 2, lab, s, ax);
			last = y;
		}
		if (cnt == max)
			break;
	}
}

static void rdp_legend(struct rdp_ctx *c)
{
	int s = c->s, y = c->im->h - c->pad - FONT5X7_H * s;
	char buf[1024];
	size_t o = (size_t)snprintf(buf, sizeof buf, "ranges:");
	for (uint32_t k = 0; k < c->m->n_runs && o + 64 < sizeof buf; k++) {
		const struct dmat_run *r = &c->m->runs[k];
		char a[32], sz[32], acc[32];
		dmat_fmt_addr(r->page0 * c->m->page_size, a, sizeof a);
		dmat_fmt_bytes(r->n_pages * c->m->page_size, sz, sizeof sz);
		timeline_fmt_num((double)r->accesses, acc, sizeof acc);
		const char *lab = r->alloc >= 0 && c->m->allocs[r->alloc].label ? c->m->allocs[r->alloc].label : NULL;
		o += (size_t)snprintf(buf + o, sizeof buf - o, "  %s%s%s %s: %s acc", lab ? lab : "", lab ? " " : "", a, sz,
				      acc);
	}
	if (!c->m->n_runs)
		snprintf(buf + o, sizeof buf - o, " none");
	png_canvas_text_fit(c->im, c->pad, y, buf, s, c->im->w - 2 * c->pad, c->th->c[THEME_DIM]);
}

int render_dmat_png_draw(const struct dmat *m, const struct dmat_view *v, const struct theme *th,
			 const struct rdp_opts *o, struct rp_image *out, char **cause)
{
	if (render_png_check_size(o->width, o->height, cause) < 0)
		return -1;
	if (png_canvas_create(out, o->width, o->height, th->c[THEME_BG], cause) < 0)
		return -1;
	struct rdp_ctx c = {out, m, v, th, o, {0}, 0, 0, 0, 0};
	render_dmat_png_layout(m, o, &c.l);
	c.s = c.l.scale;
	c.pad = 8 * c.s;
	c.lh = png_canvas_line_h(c.s);
	rdp_header(&c);
	if (m->accesses && v->t1 > v->t0 && v->y1 > v->y0) {
		if (rdp_heat(&c) < 0) {
			png_canvas_free(out);
			return cause_set(cause, "out of memory binning the DMAT");
		}
	} else {
		png_canvas_text(out, c.l.plot_x + 8 * c.s, c.l.plot_y + 8 * c.s, "no memory accesses recorded", c.s,
				th->c[THEME_WARN]);
	}
	rdp_time_axis(&c);
	rdp_addr_axis(&c);
	rdp_bar(&c);
	rdp_legend(&c);
	return 0;
}
