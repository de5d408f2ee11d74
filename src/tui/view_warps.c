/* The warps view of one probed launch of the regions probe: a lane per warp
 * (of one block, or of the warps one SM ran: `b` switches, `[` `]` step
 * through blocks or SMs), each cell the region a warp spent most of that
 * cell's cycles in, coloured per region (a letter per region where colours
 * are poor); a cursor reads out the warp, the time, the region and the
 * source line it began at; `+` `-` `h` `l` zoom and pan as the timeline.
 * `t` shows the per-region table instead (segments, warps, cycles per
 * warp, share of their time, the gaps). The result and its analysis stay
 * in memory while the view is open. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/draw.h"
#include "tui/tui.h"
#include "tui/view.h"
#include "viz/regions.h"
#include "viz/render_regions_png.h"
#include "viz/timeline.h"

struct vw {
	int ri;
	struct result *r;
	struct regions *g;
	long long by;          /* regions_lanes: block (> 0), SM (< 0) */
	uint64_t *idx;         /* the lanes: warp indices */
	uint64_t n;
	uint64_t t0, t1;       /* the lanes' span (cycles) */
	double v0, v1;         /* visible window, cycles since t0 */
	int lane0, cur_lane;
	double cur_t;          /* cursor, cycles since t0 */
	int table;             /* `t`: the region table instead */
	int plot_x, plot_w, plot_h;
};

static void vw_lanes(struct vw *s)
{
	free(s->idx);
	s->n = regions_lanes(s->g, s->by, NULL, 0);
	s->idx = calloc(s->n ? s->n : 1, sizeof *s->idx);
	if (!s->idx) {
		s->n = 0;
		return;
	}
	regions_lanes(s->g, s->by, s->idx, s->n);
	regions_span(s->g, s->idx, s->n, &s->t0, &s->t1);
	s->v0 = 0;
	s->v1 = (double)(s->t1 > s->t0 ? s->t1 - s->t0 : 1);
	s->lane0 = s->cur_lane = 0;
	s->cur_t = 0;
}

static int vw_init(struct view *v, void *arg)
{
	struct tui *t = v->tui;
	int ri = *(int *)arg;
	if (ri < 0 || ri >= t->td->n_results || !t->td->results[ri].path)
		return -1;
	struct vw *s = calloc(1, sizeof *s);
	if (!s)
		return -1;
	v->priv = s;
	s->ri = ri;
	char *cause = NULL;
	const struct td_result *tr = &t->td->results[ri];
	if (result_read(tr->path, &s->r, &cause) < 0 || regions_analyze(s->r, regions_find_map(s->r), &s->g, &cause) < 0) {
		tui_msg(t, 1, "cannot open the warps of launch %llu: %s", (unsigned long long)tr->seq,
			cause ? cause : "no regions map");
		free(cause);
		return -1;
	}
	if (!s->g->n_warps) {
		tui_msg(t, 1, "launch %llu: no warp left region records", (unsigned long long)tr->seq);
		return -1;
	}
	vw_lanes(s);
	return 0;
}

static void vw_free(struct view *v)
{
	struct vw *s = v->priv;
	if (!s)
		return;
	free(s->idx);
	regions_free(s->g);
	result_free(s->r);
	free(s);
}

/* The block or SM after (dir 1) or before (-1) the one shown. */
static void vw_step(struct vw *s, int dir)
{
	const struct rg_warp *w = s->n ? &s->g->warps[s->idx[0]] : NULL;
	long long best = 0;
	for (uint64_t i = 0; w && i < s->g->n_warps; i++) {
		const struct rg_warp *x = &s->g->warps[i];
		long long cand = s->by > 0 ? (long long)x->block + 1 : -(long long)x->smid - 1;
		long long cur = s->by > 0 ? (long long)w->block + 1 : -(long long)w->smid - 1;
		long long d = (cand - cur) * (s->by > 0 ? dir : -dir);
		long long bd = (best - cur) * (s->by > 0 ? dir : -dir);
		if (d > 0 && (!best || d < bd))
			best = cand;
	}
	if (best) {
		s->by = best;
		vw_lanes(s);
	}
}

static void vw_zoom(struct vw *s, double f)
{
	double span = (s->v1 - s->v0) * f, full = (double)(s->t1 - s->t0);
	if (span < 16)
		span = 16;
	if (span > full)
		span = full;
	s->v0 = s->cur_t - span / 2;
	if (s->v0 < 0)
		s->v0 = 0;
	if (s->v0 + span > full)
		s->v0 = full - span;
	s->v1 = s->v0 + span;
}

static void vw_pan(struct vw *s, double f)
{
	double span = s->v1 - s->v0, full = (double)(s->t1 - s->t0), d = span * f;
	if (s->v0 + d < 0)
		d = -s->v0;
	if (s->v1 + d > full)
		d = full - s->v1;
	s->v0 += d;
	s->v1 += d;
	s->cur_t += d;
}

static int vw_key(struct view *v, int key)
{
	struct vw *s = v->priv;
	double cell = (s->v1 - s->v0) / (s->plot_w > 0 ? s->plot_w : 1);
	switch (key) {
	case 't': s->table = !s->table; break;
	case 'b':
		s->by = s->by > 0 ? -(long long)s->g->warps[s->idx[0]].smid - 1 : (long long)s->g->warps[s->idx[0]].block + 1;
		vw_lanes(s);
		break;
	case '[': vw_step(s, -1); break;
	case ']': vw_step(s, 1); break;
	case '+': case '=': vw_zoom(s, 0.5); break;
	case '-': vw_zoom(s, 2.0); break;
	case '0': s->v0 = 0; s->v1 = (double)(s->t1 - s->t0); break;
	case 'h': case TK_LEFT: vw_pan(s, -0.25); break;
	case 'l': case TK_RIGHT: vw_pan(s, 0.25); break;
	case 'H': s->cur_t -= cell; break;
	case 'L': s->cur_t += cell; break;
	case 'j': case TK_DOWN: case 'J': s->cur_lane++; break;
	case 'k': case TK_UP: case 'K': s->cur_lane--; break;
	case 'q': case TK_ESC: return VIEW_QUIT;
	default: return 0;
	}
	if (s->cur_lane >= (int)s->n)
		s->cur_lane = (int)s->n - 1;
	if (s->cur_lane < 0)
		s->cur_lane = 0;
	if (s->cur_t < s->v0)
		s->cur_t = s->v0;
	if (s->cur_t >= s->v1)
		s->cur_t = s->v1 - cell;
	return VIEW_HANDLED | VIEW_REDRAW;
}

/* ---- drawing ---- */

/* The region warp w spent most of cycles [a, b) in (since t0), or -1. */
static int vw_cell_region(const struct vw *s, const struct rg_warp *w, double a, double b, int *in_life)
{
	double best = 0;
	int reg = -1;
	double e0 = (double)(w->entry - s->t0), e1 = (double)(w->exit - s->t0);
	*in_life = e1 > a && e0 < b;
	for (uint32_t i = 0; i < w->n_segs; i++) {
		const struct rg_seg *g = &s->g->segs[w->first_seg + i];
		double x0 = (double)(g->start - s->t0), x1 = (double)(g->end - s->t0);
		double o = (x1 < b ? x1 : b) - (x0 > a ? x0 : a);
		if (x1 == x0 && x0 >= a && x0 < b)
			o = 0.5; /* a segment shorter than a cycle still shows */
		if (o > best) {
			best = o;
			reg = (int)g->region;
		}
	}
	return reg;
}

static const char *vw_glyph(const struct tui *t, int reg)
{
	static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEF";
	static char one[REGIONS_MAX][2];
	if (reg < 0)
		return t->utf8 ? "─" : "-";
	if (!tui_mono(t))
		return " ";
	one[reg][0] = letters[reg % 32];
	one[reg][1] = 0;
	return one[reg];
}

static void vw_lane(struct view *v, struct cellgrid *g, int y, uint64_t k)
{
	struct vw *s = v->priv;
	struct tui *t = v->tui;
	const struct rg_warp *w = &s->g->warps[s->idx[k]];
	double cell = (s->v1 - s->v0) / s->plot_w;
	char label[32];
	snprintf(label, sizeof label, "%llu.%u", (unsigned long long)w->block, w->warp);
	draw_cell(t, g, v->x, y, s->plot_x - v->x - 1, label, LAYOUT_RIGHT, draw_c(t, THEME_AXIS), t->theme.c[THEME_BG],
		  (int)k == s->cur_lane ? CELL_BOLD : 0);
	int cur_col = (int)((s->cur_t - s->v0) / cell);
	for (int c = 0; c < s->plot_w; c++) {
		int life, reg = vw_cell_region(s, w, s->v0 + c * cell, s->v0 + (c + 1) * cell, &life);
		struct rgb bg = reg >= 0 && !t->mono ? render_regions_color(&t->theme, (uint32_t)reg, s->g->n_regions)
						   : t->theme.c[THEME_BG];
		int attr = (c == cur_col && (int)k == s->cur_lane) ? CELL_REVERSE : 0;
		if (!life && reg < 0)
			cellgrid_set(g, s->plot_x + c, y, " ", draw_c(t, THEME_DIM), bg, attr);
		else
			cellgrid_set(g, s->plot_x + c, y, vw_glyph(t, reg), draw_c(t, reg < 0 ? THEME_DIM : THEME_BG), bg, attr);
	}
}

/* What is under the cursor: the warp, the time, the segment. */
static void vw_readout(struct view *v, struct cellgrid *g, int y)
{
	struct vw *s = v->priv;
	struct tui *t = v->tui;
	const struct rg_warp *w = &s->g->warps[s->idx[s->cur_lane]];
	char buf[512], tnum[32], name[32], where[192] = "";
	uint64_t at = s->t0 + (uint64_t)s->cur_t;
	const struct rg_seg *hit = NULL;
	for (uint32_t i = 0; i < w->n_segs; i++) {
		const struct rg_seg *x = &s->g->segs[w->first_seg + i];
		if (x->start <= at && at < x->end && (!hit || x->end - x->start < hit->end - hit->start))
			hit = x;
	}
	timeline_fmt_num(s->cur_t, tnum, sizeof tnum);
	if (hit && hit->begin_site >= 0 && hit->begin_site < s->r->sites.n) {
		const struct engine_site *e = &s->r->sites.s[hit->begin_site];
		if (e->line > 0 && e->file >= 0) {
			const char *f = s->r->sites.files[e->file], *b = strrchr(f, '/');
			snprintf(where, sizeof where, " from %s:%d", b ? b + 1 : f, e->line);
		} else {
			snprintf(where, sizeof where, " from ptx:%d", e->ptx_line);
		}
	}
	if (hit)
		snprintf(buf, sizeof buf, "warp %llu.%u  SM %u  t %s cyc  %s: %llu cycles%s", (unsigned long long)w->block,
			 w->warp, w->smid, tnum, regions_name(s->g, hit->region, name, sizeof name),
			 (unsigned long long)(hit->end - hit->start), where);
	else
		snprintf(buf, sizeof buf, "warp %llu.%u  SM %u  t %s cyc  %s", (unsigned long long)w->block, w->warp,
			 w->smid, tnum, at < w->entry || at >= w->exit ? "not running" : "in no region");
	draw_fields(t, g, v->x, y, v->w, buf, draw_c(t, THEME_FG), t->theme.c[THEME_BG], 0);
}

/* The legend: each region's colour (or letter) and name. */
static void vw_legend(struct view *v, struct cellgrid *g, int y)
{
	struct vw *s = v->priv;
	struct tui *t = v->tui;
	int x = v->x;
	for (int r = 0; r < s->g->n_regions && x < v->x + v->w - 4; r++) {
		char name[32];
		struct rgb bg = !t->mono ? render_regions_color(&t->theme, (uint32_t)r, s->g->n_regions) : t->theme.c[THEME_BG];
		cellgrid_set(g, x, y, vw_glyph(t, r), draw_c(t, THEME_BG), bg, 0);
		x += 2;
		x += draw_text(t, g, x, y, v->x + v->w - x, regions_name(s->g, (uint32_t)r, name, sizeof name),
			       draw_c(t, THEME_FG), t->theme.c[THEME_BG], 0) + 2;
	}
}

static void vw_table(struct view *v, struct cellgrid *g, int y, int rows)
{
	struct vw *s = v->priv;
	struct tui *t = v->tui;
	char buf[256];
	snprintf(buf, sizeof buf, "%-12s %-18s %9s %7s %12s %9s %7s", "REGION", "SPEC", "SEGMENTS", "WARPS", "CYCLES/WARP",
		 "P95", "SHARE");
	draw_role(t, g, v->x, y, v->w, buf, THEME_ACCENT);
	for (int r = 0; r < s->g->n_regions && r + 1 < rows; r++) {
		const struct rg_region *x = &s->g->reg[r];
		char name[32], share[16] = "-";
		if (x->warps && x->share >= 0)
			snprintf(share, sizeof share, "%.1f%%", 100.0 * x->share);
		snprintf(buf, sizeof buf, "%-12s %-18.18s %9llu %7llu %12.0f %9llu %7s",
			 regions_name(s->g, (uint32_t)r, name, sizeof name), x->spec[0] ? x->spec : "-",
			 (unsigned long long)x->segments, (unsigned long long)x->warps, x->mean, (unsigned long long)x->p95,
			 share);
		draw_role(t, g, v->x, y + 1 + r, v->w, buf, THEME_FG);
	}
	if (s->g->n_regions + 1 < rows && s->g->life) {
		snprintf(buf, sizeof buf, "%-12s %-18s %9s %7s %12s %9s %6.1f%%", "(none)", "in no region", "", "", "", "",
			 100.0 * (double)s->g->gaps / (double)s->g->life);
		draw_role(t, g, v->x, y + 1 + s->g->n_regions, v->w, buf, THEME_DIM);
	}
}

static void vw_draw(struct view *v, struct cellgrid *g, int x, int y, int w, int h)
{
	struct vw *s = v->priv;
	struct tui *t = v->tui;
	char head[256];
	const struct rg_warp *w0 = &s->g->warps[s->idx[0]];
	v->x = x;
	v->w = w;
	draw_fill(g, x, y, w, h, t->theme.c[THEME_BG]);
	const char *trunc = s->g->warps_truncated ? ", some truncated at the cap" : "";
	if (s->table)
		snprintf(head, sizeof head, "regions: all %llu warps recorded%s", (unsigned long long)s->g->n_warps, trunc);
	else if (s->by > 0)
		snprintf(head, sizeof head, "regions: block %llu, %llu warp%s  (of %llu recorded%s)",
			 (unsigned long long)w0->block, (unsigned long long)s->n, s->n == 1 ? "" : "s",
			 (unsigned long long)s->g->n_warps, trunc);
	else
		snprintf(head, sizeof head, "regions: SM %u, %llu warp%s  (of %llu recorded%s)", w0->smid,
			 (unsigned long long)s->n, s->n == 1 ? "" : "s", (unsigned long long)s->g->n_warps, trunc);
	draw_fields(t, g, x, y, w, head, draw_c(t, THEME_ACCENT), t->theme.c[THEME_BG], CELL_BOLD);
	if (s->table) {
		vw_table(v, g, y + 2, h - 2);
		return;
	}
	s->plot_x = x + 10;
	s->plot_w = w - 10 > 4 ? w - 10 : 4;
	s->plot_h = h - 4 > 1 ? h - 4 : 1;
	if (s->cur_lane < s->lane0)
		s->lane0 = s->cur_lane;
	if (s->cur_lane >= s->lane0 + s->plot_h)
		s->lane0 = s->cur_lane - s->plot_h + 1;
	for (int k = 0; k < s->plot_h && (uint64_t)(s->lane0 + k) < s->n; k++)
		vw_lane(v, g, y + 1 + k, (uint64_t)(s->lane0 + k));
	char axis[128], a[32], b[32];
	timeline_fmt_num(s->v0, a, sizeof a);
	timeline_fmt_num(s->v1, b, sizeof b);
	snprintf(axis, sizeof axis, "cycles %s .. %s since the first warp shown entered", a, b);
	draw_role(t, g, s->plot_x, y + h - 3, w - 10, axis, THEME_AXIS);
	vw_legend(v, g, y + h - 2);
	vw_readout(v, g, y + h - 1);
}

static const char *vw_hints(struct view *v)
{
	(void)v;
	return "t table  b block/SM  [ ] next  H/L cursor  +/- zoom  h/l pan  q back";
}

const struct view_ops view_warps_ops = {
	.name = "warps",
	.init = vw_init,
	.free = vw_free,
	.key = vw_key,
	.draw = vw_draw,
	.hints = vw_hints,
};
