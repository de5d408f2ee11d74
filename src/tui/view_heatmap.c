/* The dense memory access timeline (DMAT) of one probed launch as a heatmap:
 * render_dmat_term.c draws header, plot, axis and legend into a grid of the
 * view's size; this view adds a title row above and the model's totals
 * below, and handles zoom (time around the cursor, rows too), pan, page
 * scrolling, a cursor whose cell the renderer reads out in its header, the
 * time base, stepping through the address ranges, and PNG export of what is
 * shown. The model streams the records from the result file (dmat_open) and
 * draws from its histogram; only views finer than that re-read the file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/draw.h"
#include "tui/export.h"
#include "tui/ktable.h"
#include "tui/tui.h"
#include "tui/view.h"
#include "viz/dmat.h"
#include "viz/dmat_alloc.h"
#include "viz/render_dmat_term.h"

struct vhm {
	unsigned pid, kid;
	int amd;                /* recorded on an AMD GPU (CU clocks, GTIMER ticks) */
	struct result *r;       /* header and counts (result_read_head) */
	char *path;             /* the result file the model streams */
	int map;                /* the dmat map in r */
	struct dmat *m;
	struct dmat_view v;
	struct rdt_opts o;
	struct rdt_layout l;
	double cur_t;           /* cursor time, axis units */
	double cur_y;           /* cursor row on the collapsed page axis */
	int range;              /* run shown alone ('a'), -1: every range */
	int plot_gx, plot_gy;   /* screen position of the render grid */
	struct cellgrid *sub;
	int fitted;
	struct dmat_alloc *allocs; /* the launch's live allocations (labels) */
	int n_allocs;
	int site_filter;        /* only the accesses of sites[] (a source line) */
	uint8_t sites[DMAT_SITES / 8];
	char label[200];        /* what those sites are */
};

/* Builds the model with the time base `want` in place of the current one. */
static int vhm_build(struct vhm *s, enum dmat_time want, char **cause)
{
	struct dmat_opts o;
	dmat_opts_init(&o);
	o.time = want;
	o.amd = s->amd;
	o.allocs = s->allocs;
	o.n_allocs = s->n_allocs;
	o.sites = s->site_filter ? s->sites : NULL;
	struct dmat *m = NULL;
	if (dmat_open(s->path, s->map, &o, &m, cause) < 0)
		return -1;
	dmat_free(s->m);
	s->m = m;
	return 0;
}

static int vhm_init(struct view *v, void *arg)
{
	struct tui *t = v->tui;
	const struct view_heatmap_arg *a = arg;
	int ri = a->ri;
	if (ri < 0 || ri >= t->td->n_results || !t->td->results[ri].path)
		return -1;
	struct vhm *s = calloc(1, sizeof *s);
	if (!s)
		return -1;
	v->priv = s;
	if (a->sites) {
		s->site_filter = 1;
		memcpy(s->sites, a->sites, sizeof s->sites);
		snprintf(s->label, sizeof s->label, "%s", a->label ? a->label : "some sites");
	}
	const struct td_result *tr = &t->td->results[ri];
	s->pid = tr->pid;
	s->kid = tr->kid;
	s->amd = td_device_amd(trace_dir_device(t->td, tr->pid));
	char *cause = NULL;
	s->path = strdup(tr->path);
	if (dmat_allocs_from_trace(tr, &s->allocs, &s->n_allocs) < 0)
		s->n_allocs = 0; /* out of memory: ranges shown by address */
	if (!s->path || result_read_head(tr->path, &s->r, &cause) < 0 || (s->map = dmat_find_map(s->r)) < 0 ||
	    vhm_build(s, DMAT_TIME_SM, &cause) < 0) {
		tui_msg(t, 1, "cannot open the heatmap of launch %llu: %s", (unsigned long long)tr->seq,
			cause ? cause : "no dmat map");
		free(cause);
		return -1;
	}
	s->range = -1;
	render_dmat_term_opts_init(&s->o);
	return 0;
}

static void vhm_free(struct view *v)
{
	struct vhm *s = v->priv;
	if (!s)
		return;
	cellgrid_free(s->sub);
	dmat_free(s->m);
	result_free(s->r);
	free(s->path);
	dmat_allocs_free(s->allocs, s->n_allocs);
	free(s);
}

/* ---- viewport and cursor ---- */

/* One bin's width (axis units) and height (rows) at the current layout. */
static double vhm_bin_w(const struct vhm *s)
{
	return (s->v.t1 - s->v.t0) / (s->l.bin_cols > 0 ? s->l.bin_cols : 1);
}

static double vhm_bin_h(const struct vhm *s)
{
	return (s->v.y1 - s->v.y0) / (s->l.bin_rows > 0 ? s->l.bin_rows : 1);
}

static int vhm_clampi(int x, int lo, int hi)
{
	return x < lo ? lo : x > hi ? hi : x;
}

/* The cursor's bin, clamped into the window; the cursor snaps to its centre
 * so that repeated steps never drift across bin edges. */
static void vhm_keep_cursor(struct vhm *s)
{
	int cols = s->l.bin_cols, rows = s->l.bin_rows;
	if (cols <= 0 || rows <= 0) {
		s->o.cursor_col = s->o.cursor_row = -1;
		return;
	}
	double bw = vhm_bin_w(s), bh = vhm_bin_h(s);
	int col = vhm_clampi((int)floor((s->cur_t - s->v.t0) / bw), 0, cols - 1);
	int row = vhm_clampi((int)floor((s->cur_y - s->v.y0) / bh), 0, rows - 1);
	s->cur_t = s->v.t0 + (col + 0.5) * bw;
	s->cur_y = s->v.y0 + (row + 0.5) * bh;
	s->o.cursor_col = col;
	s->o.cursor_row = row;
}

static void vhm_cursor_home(struct vhm *s)
{
	s->cur_t = s->v.t0;
	s->cur_y = s->v.y0;
}

static void vhm_layout(struct vhm *s, int w, int h)
{
	render_dmat_term_layout(s->m, w, h, &s->o, &s->l);
	if (!s->fitted) {
		dmat_view_fit(s->m, &s->v);
		vhm_cursor_home(s);
		s->fitted = 1;
	}
	vhm_keep_cursor(s);
}

/* With a range shown alone ('a'), the page axis stays inside it: scrolling,
 * row zoom and jumps cannot wander into the other ranges while the footer
 * still names this one. */
static void vhm_keep_range(struct vhm *s)
{
	if (s->range < 0 || s->range >= (int)s->m->n_runs)
		return;
	const struct dmat_run *run = &s->m->runs[s->range];
	double a = (double)run->row0, b = (double)(run->row0 + run->n_pages);
	double h = s->v.y1 - s->v.y0;
	if (!(h <= b - a))
		h = b - a;
	if (s->v.y0 < a)
		s->v.y0 = a;
	if (s->v.y0 + h > b)
		s->v.y0 = b - h;
	s->v.y1 = s->v.y0 + h;
}

/* The page axis on a grid of 2^-20 rows: window edges, their distance and
 * scroll steps stay exact in binary, so paging up and down comes back to the
 * same rows instead of drifting (by 1e-7 rows after a while, enough to move
 * a page centre across a bin edge and a label by one page). */
#define VHM_GRID 1048576.0

static double vhm_grid(double y)
{
	return round(y * VHM_GRID) / VHM_GRID;
}

static void vhm_snap(struct vhm *s)
{
	double h = vhm_grid(s->v.y1 - s->v.y0);
	s->v.y0 = vhm_grid(s->v.y0);
	s->v.y1 = s->v.y0 + (h > 0 ? h : 1 / VHM_GRID);
}

/* Scrolls the page axis by `bins` bin rows (negative: lower addresses); the
 * cursor moves along. */
static void vhm_scroll(struct vhm *s, double bins)
{
	double d = vhm_grid(bins * vhm_bin_h(s));
	double y0 = s->v.y0;
	dmat_view_scroll(s->m, &s->v, d / (s->v.y1 - s->v.y0));
	vhm_snap(s);
	vhm_keep_range(s);
	s->cur_y += s->v.y0 - y0;
}

/* Moves the cursor by whole bins, panning when it leaves the window. */
static void vhm_move(struct vhm *s, int dcol, int drow)
{
	s->cur_t += dcol * vhm_bin_w(s);
	s->cur_y += drow * vhm_bin_h(s);
	if (s->cur_t < s->v.t0)
		dmat_view_pan(s->m, &s->v, -0.25);
	if (s->cur_t >= s->v.t1)
		dmat_view_pan(s->m, &s->v, 0.25);
	if (s->cur_y < s->v.y0 || s->cur_y >= s->v.y1)
		dmat_view_scroll(s->m, &s->v, s->cur_y < s->v.y0 ? -0.25 : 0.25);
}

/* 'a': the next address range alone (all its time), then every range again. */
static void vhm_next_range(struct view *v)
{
	struct vhm *s = v->priv;
	struct tui *t = v->tui;
	if (!s->m->n_runs) {
		tui_flash(t, "no address ranges recorded");
		return;
	}
	s->range = s->range + 1 >= (int)s->m->n_runs ? -1 : s->range + 1;
	dmat_view_fit(s->m, &s->v);
	if (s->range < 0) {
		vhm_cursor_home(s);
		tui_flash(t, "every address range (%u)", s->m->n_runs);
		return;
	}
	const struct dmat_run *run = &s->m->runs[s->range];
	s->v.y0 = (double)run->row0;
	s->v.y1 = (double)(run->row0 + run->n_pages);
	dmat_view_clamp(s->m, &s->v);
	vhm_cursor_home(s);
	char from[64], size[32];
	dmat_row_label(s->m, run->row0, from, sizeof from);
	dmat_fmt_bytes(run->n_pages * s->m->page_size, size, sizeof size);
	tui_flash(t, "range %d of %u: %s, %s, %llu accesses", s->range + 1, s->m->n_runs, from, size,
		  (unsigned long long)run->accesses);
}

/* 't': SM clock <-> global timer, when the map records both (checked
 * first, so that a refusal keeps the view as it was). The page axis is the
 * same under either clock, so the rows shown, the range and the cursor's row
 * stay; time is refitted, since its unit changes. */
static void vhm_toggle_time(struct view *v)
{
	struct vhm *s = v->priv;
	struct tui *t = v->tui;
	const char *map = s->r->maps[s->map].map.name;
	enum dmat_time want = s->m->time == DMAT_TIME_SM ? DMAT_TIME_GLOBAL : DMAT_TIME_SM;
	if (want == DMAT_TIME_GLOBAL && s->m->off_gtime < 0) {
		tui_msg(t, 1, "no global timer: map %s has no gtime:u64 field, only the %s clock", map,
			s->amd ? "CU" : "SM");
		return;
	}
	if (want == DMAT_TIME_SM && s->m->off_clock < 0) {
		tui_msg(t, 1, "no %s clock: map %s has no clock field, only the global timer", s->amd ? "CU" : "SM", map);
		return;
	}
	char *cause = NULL;
	if (vhm_build(s, want, &cause) < 0) {
		tui_msg(t, 1, "%s", cause ? cause : "cannot rebuild the heatmap");
		free(cause);
		return;
	}
	struct dmat_view fit;
	dmat_view_fit(s->m, &fit);
	s->v.t0 = fit.t0;
	s->v.t1 = fit.t1;
	dmat_view_clamp(s->m, &s->v);
	vhm_keep_range(s);
	s->cur_t = s->v.t0;
	if (s->m->time == DMAT_TIME_SM)
		tui_flash(t, "x axis: %s clock cycles since each block's first access", s->amd ? "CU" : "SM");
	else
		tui_flash(t, "x axis: global timer, aligned across %ss", s->amd ? "CU" : "SM");
}

/* What the export child draws: the view as it was at `e`. */
struct vhm_export_arg {
	const struct trace_dir *td;
	const struct td_kernel *k;
	const struct vhm *s;
	const struct theme *th;
	const char *path;
};

static int vhm_export_run(void *arg, char **cause)
{
	const struct vhm_export_arg *a = arg;
	return export_dmat(a->td, a->k, a->s->r, a->s->m, &a->s->v, a->th, a->path, cause);
}

static void vhm_export(struct view *v)
{
	struct vhm *s = v->priv;
	struct tui *t = v->tui;
	const struct td_kernel *k = trace_dir_kernel(t->td, s->pid, s->kid);
	char *path = tui_export_path(t, k, s->r->seq, export_dmat_path);
	if (!path)
		return;
	struct vhm_export_arg a = {t->td, k, s, &t->theme, path};
	tui_export(t, path, vhm_export_run, &a);
	free(path);
}

static int vhm_mouse(struct view *v, int key)
{
	struct vhm *s = v->priv;
	struct tui *t = v->tui;
	if (key == TK_WHEEL_UP || key == TK_WHEEL_DOWN) {
		vhm_scroll(s, (key == TK_WHEEL_UP ? 3 : -3) * s->l.rows_per_cell);
		vhm_keep_cursor(s);
		return VIEW_HANDLED | VIEW_REDRAW;
	}
	int col, row;
	if (render_dmat_term_at(&s->l, t->mouse_x - s->plot_gx, t->mouse_y - s->plot_gy, 0, &col, &row) < 0)
		return VIEW_HANDLED;
	s->cur_t = s->v.t0 + (col + 0.5) * vhm_bin_w(s);
	s->cur_y = s->v.y0 + (row + 0.5) * vhm_bin_h(s);
	vhm_keep_cursor(s);
	return VIEW_HANDLED | VIEW_REDRAW;
}

static int vhm_key(struct view *v, int key)
{
	struct vhm *s = v->priv;
	int rpc = s->l.rows_per_cell > 0 ? s->l.rows_per_cell : 1;
	int page = s->l.bin_rows > rpc ? s->l.bin_rows - rpc : rpc;
	switch (key) {
	case '+': case '=': dmat_view_zoom(s->m, &s->v, 2, s->cur_t); break;
	case '-': case '_': dmat_view_zoom(s->m, &s->v, 0.5, s->cur_t); break;
	case 'z': dmat_view_zoom_rows(s->m, &s->v, 2, s->cur_y); break;
	case 'Z': dmat_view_zoom_rows(s->m, &s->v, 0.5, s->cur_y); break;
	case 'h': case TK_LEFT: dmat_view_pan(s->m, &s->v, -0.25); break;
	case 'l': case TK_RIGHT: dmat_view_pan(s->m, &s->v, 0.25); break;
	/* lowest address at the bottom: down goes to lower addresses */
	case 'j': case TK_DOWN: vhm_scroll(s, -rpc); break;
	case 'k': case TK_UP: vhm_scroll(s, rpc); break;
	case TK_PGDN: case TK_CTRL('d'): vhm_scroll(s, -page); break;
	case TK_PGUP: case TK_CTRL('u'): vhm_scroll(s, page); break;
	case 'g': case TK_HOME: vhm_scroll(s, -(double)s->m->n_rows / vhm_bin_h(s)); break;
	case 'G': case TK_END: vhm_scroll(s, (double)s->m->n_rows / vhm_bin_h(s)); break;
	case 'H': vhm_move(s, -1, 0); break;
	case 'L': vhm_move(s, 1, 0); break;
	case 'J': vhm_move(s, 0, -1); break;
	case 'K': vhm_move(s, 0, 1); break;
	case '0': dmat_view_fit(s->m, &s->v); s->range = -1; vhm_cursor_home(s); break;
	case 't': vhm_toggle_time(v); break;
	case 'a': vhm_next_range(v); break;
	case 'e': vhm_export(v); break;
	case TK_MOUSE_CLICK: case TK_MOUSE_DOUBLE: case TK_WHEEL_UP: case TK_WHEEL_DOWN: return vhm_mouse(v, key);
	default: return 0;
	}
	vhm_snap(s);
	vhm_keep_range(s);
	vhm_keep_cursor(s);
	return VIEW_HANDLED | VIEW_REDRAW;
}

/* ---- drawing ---- */

static void vhm_title(struct view *v, struct cellgrid *g, int x, int y, int w)
{
	struct vhm *s = v->priv;
	struct tui *t = v->tui;
	const struct td_kernel *k = trace_dir_kernel(t->td, s->pid, s->kid);
	char grid[32], block[32], ps[32], buf[400];
	ktable_fmt_dims(s->r->grid, grid, sizeof grid);
	ktable_fmt_dims(s->r->block, block, sizeof block);
	dmat_fmt_bytes(s->m->page_size, ps, sizeof ps);
	int n = snprintf(buf, sizeof buf, "DMAT launch %llu  grid %s  block %s  pages of %s",
			 (unsigned long long)s->r->seq, grid, block, ps);
	if (s->site_filter && n > 0 && (size_t)n < sizeof buf)
		snprintf(buf + n, sizeof buf - (size_t)n, "  only %s", s->label);
	draw_title(t, g, x, y, w, buf, k ? tui_kernel_name(t, k) : "?", draw_c(t, THEME_ACCENT), t->theme.c[THEME_BG],
		   CELL_BOLD);
}

/* The totals (the renderer's header holds the cursor readout) and the range shown. */
static void vhm_footer(struct view *v, struct cellgrid *g, int x, int y, int w)
{
	struct vhm *s = v->priv;
	struct tui *t = v->tui;
	char head[320], buf[400];
	dmat_header(s->m, head, sizeof head);
	if (s->range >= 0)
		snprintf(buf, sizeof buf, "range %d of %u  |  %s", s->range + 1, s->m->n_runs, head);
	else
		snprintf(buf, sizeof buf, "%s", head);
	draw_fields(t, g, x, y, w, buf, draw_c(t, THEME_DIM), t->theme.c[THEME_BG], 0);
}

static void vhm_draw(struct view *v, struct cellgrid *g, int x, int y, int w, int h)
{
	struct vhm *s = v->priv;
	struct tui *t = v->tui;
	int ph = h - 2; /* title above, totals below */
	if (ph < 4 || w < 10) {
		draw_role(t, g, x, y, w, "too small for the heatmap", THEME_WARN);
		return;
	}
	if (cellgrid_fit(&s->sub, w, ph) < 0)
		return;
	s->o.utf8 = t->utf8;
	s->o.mono = tui_mono(t);
	vhm_layout(s, w, ph);
	vhm_title(v, g, x, y, w);
	if (render_dmat_term_draw(s->sub, s->m, &s->v, &t->theme, &s->o) < 0) {
		draw_role(t, g, x, y + 1, w, "out of memory drawing the heatmap", THEME_ERROR);
		return;
	}
	s->plot_gx = x;
	s->plot_gy = y + 1;
	cellgrid_blit(g, s->sub, x, y + 1);
	vhm_footer(v, g, x, y + h - 1, w);
}

static const char *vhm_hints(struct view *v)
{
	(void)v;
	return "+- zoom  hjkl pan  HJKL cursor  t clock  a range  e PNG  @ log";
}

const struct view_ops view_heatmap_ops = {
	.name = "heatmap",
	.init = vhm_init,
	.free = vhm_free,
	.key = vhm_key,
	.draw = vhm_draw,
	.hints = vhm_hints,
};
