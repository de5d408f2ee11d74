/* The block-scheduling timeline of one probed launch: render_term.c draws
 * lanes (one per SM), axis and legend into a grid of the view's size, this
 * view adds a title row above and a cursor readout below, and handles zoom,
 * pan, lane scrolling, the cursor, time base and colour toggles, and PNG
 * export of exactly what is shown. The result stays in memory while the
 * view is open (the timeline borrows the block_sched analysis of it). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/draw.h"
#include "tui/export.h"
#include "tui/ktable.h"
#include "tui/tui.h"
#include "tui/view.h"
#include "viz/block_sched.h"
#include "viz/render_term.h"
#include "viz/timeline.h"

struct vt {
	int ri;                 /* index into td->results */
	unsigned pid, kid;
	struct result *r;
	struct block_sched *bs;
	struct timeline *tl;
	enum tl_time time;
	struct rt_opts o;
	struct tl_view v;
	struct rt_layout l;
	int cur_lane;           /* cursor lane */
	double cur_t;           /* cursor time, axis units */
	int plot_gx, plot_gy;   /* screen position of the render grid */
	struct cellgrid *sub;
	int fitted;
};

static int vt_build(struct vt *s, struct tui *t, enum tl_time want, char **cause)
{
	struct timeline *tl = NULL;
	struct tl_device dev = { s->r->sm_clock_khz, s->r->device_sms,
				 td_device_amd(trace_dir_device(t->td, s->pid)) };
	if (timeline_create(s->bs, want, &dev, &tl, cause) < 0)
		return -1;
	timeline_free(s->tl);
	s->tl = tl;
	s->time = tl->time;
	if (tl->note[0] && want == TL_TIME_GLOBAL)
		tui_msg(t, 0, "global timer: %s", tl->note);
	s->fitted = 0;
	return 0;
}

static int vt_init(struct view *v, void *arg)
{
	struct tui *t = v->tui;
	int ri = *(int *)arg;
	if (ri < 0 || ri >= t->td->n_results || !t->td->results[ri].path)
		return -1;
	struct vt *s = calloc(1, sizeof *s);
	if (!s)
		return -1;
	v->priv = s;
	s->ri = ri;
	const struct td_result *tr = &t->td->results[ri];
	s->pid = tr->pid;
	s->kid = tr->kid;
	char *cause = NULL;
	const struct td_kernel *k = trace_dir_kernel(t->td, s->pid, s->kid);
	int occ = tr->occ > 0 ? tr->occ : k ? k->occ : 0;
	int map;
	if (result_read(tr->path, &s->r, &cause) < 0 || (map = block_sched_find_map(s->r)) < 0 ||
	    block_sched_analyze(s->r, map, occ, &s->bs, &cause) < 0 || vt_build(s, t, TL_TIME_GLOBAL, &cause) < 0) {
		tui_msg(t, 1, "cannot open the timeline of launch %llu: %s", (unsigned long long)tr->seq,
			cause ? cause : "no block_sched map");
		free(cause);
		return -1;
	}
	s->tl->note[0] = 0; /* falling back to SM cycles by default is expected, not news */
	render_term_opts_init(&s->o);
	s->cur_lane = 0;
	return 0;
}

static void vt_free(struct view *v)
{
	struct vt *s = v->priv;
	if (!s)
		return;
	cellgrid_free(s->sub);
	timeline_free(s->tl);
	block_sched_free(s->bs);
	result_free(s->r);
	free(s);
}

/* ---- viewport ---- */

static void vt_fit_lanes(struct vt *s)
{
	int fit = render_term_tracks_fit(&s->l);
	s->v.n_lanes = fit > 0 ? (uint32_t)fit : 1;
	timeline_view_clamp(s->tl, &s->v);
}

static void vt_keep_cursor(struct vt *s)
{
	uint32_t n = s->tl->n_lanes;
	if (!n)
		return;
	if (s->cur_lane < 0)
		s->cur_lane = 0;
	if ((uint32_t)s->cur_lane >= n)
		s->cur_lane = (int)n - 1;
	if ((uint32_t)s->cur_lane < s->v.lane0)
		s->v.lane0 = (uint32_t)s->cur_lane;
	if ((uint32_t)s->cur_lane >= s->v.lane0 + s->v.n_lanes)
		s->v.lane0 = (uint32_t)s->cur_lane - s->v.n_lanes + 1;
	timeline_view_clamp(s->tl, &s->v);
	if (s->cur_t < s->v.t0 || s->cur_t >= s->v.t1)
		s->cur_t = s->cur_t < s->v.t0 ? s->v.t0 : s->v.t1 - (s->v.t1 - s->v.t0) / (s->l.plot_w > 0 ? s->l.plot_w : 1);
}

static void vt_layout(struct vt *s, int w, int h)
{
	s->o.cursor_lane = s->cur_lane;
	s->o.cursor_t = s->cur_t;
	render_term_layout(s->tl, w, h, &s->o, &s->l);
	if (!s->fitted) {
		timeline_view_fit(s->tl, &s->v);
		s->cur_t = s->v.t0;
		s->fitted = 1;
	}
	vt_fit_lanes(s);
}

static void vt_scroll_lanes(struct vt *s, int delta)
{
	timeline_view_scroll(s->tl, &s->v, delta);
	s->cur_lane += delta;
	if ((uint32_t)s->cur_lane < s->v.lane0)
		s->cur_lane = (int)s->v.lane0;
	if ((uint32_t)s->cur_lane >= s->v.lane0 + s->v.n_lanes)
		s->cur_lane = (int)(s->v.lane0 + s->v.n_lanes) - 1;
}

/* Width of one plot column, axis units. */
static double vt_col(const struct vt *s)
{
	return (s->v.t1 - s->v.t0) / (s->l.plot_w > 0 ? s->l.plot_w : 1);
}

/* The block under the cursor, -1 none. */
static long vt_hit(const struct vt *s)
{
	if (!s->tl->n_lanes)
		return -1;
	return timeline_hit(s->tl, (uint32_t)s->cur_lane, -1, s->cur_t + vt_col(s) / 2, vt_col(s) / 2);
}

/* Moves the cursor to the previous/next block start in its lane. */
static void vt_jump(struct vt *s, int dir)
{
	const struct tl_lane *ln = &s->tl->lanes[s->cur_lane];
	double best = dir > 0 ? INFINITY : -INFINITY;
	double eps = vt_col(s) * 0.999;
	for (uint32_t i = ln->first; i < ln->first + ln->n; i++) {
		double ts = s->tl->t_start[i];
		if (dir > 0 && ts > s->cur_t + eps && ts < best)
			best = ts;
		if (dir < 0 && ts < s->cur_t - eps * 0.001 && ts > best)
			best = ts;
	}
	if (isfinite(best)) {
		s->cur_t = best;
		double w = s->v.t1 - s->v.t0;
		if (best < s->v.t0 || best >= s->v.t1) {
			s->v.t0 = best - w / 2;
			s->v.t1 = best + w / 2;
			timeline_view_clamp(s->tl, &s->v);
		}
	}
}

/* What the export child draws: the view as it was at `e`. */
struct vt_export_arg {
	const struct trace_dir *td;
	const struct td_kernel *k;
	const struct vt *s;
	const struct theme *th;
	const char *path;
};

static int vt_export_run(void *arg, char **cause)
{
	const struct vt_export_arg *a = arg;
	return export_timeline(a->td, a->k, a->s->r, a->s->tl, &a->s->v, a->s->o.color, a->th, a->path, cause);
}

static void vt_export(struct view *v)
{
	struct vt *s = v->priv;
	struct tui *t = v->tui;
	const struct td_kernel *k = trace_dir_kernel(t->td, s->pid, s->kid);
	char *path = tui_export_path(t, k, s->r->seq, export_timeline_path);
	if (!path)
		return;
	struct vt_export_arg a = {t->td, k, s, &t->theme, path};
	tui_export(t, path, vt_export_run, &a);
	free(path);
}

static void vt_toggle_time(struct view *v)
{
	struct vt *s = v->priv;
	struct tui *t = v->tui;
	char *cause = NULL;
	enum tl_time want = s->time == TL_TIME_SM ? TL_TIME_GLOBAL : TL_TIME_SM;
	if (vt_build(s, t, want, &cause) < 0) {
		tui_msg(t, 1, "%s", cause ? cause : "cannot rebuild the timeline");
		free(cause);
		return;
	}
	if (want == TL_TIME_GLOBAL && s->tl->time != want)
		tui_msg(t, 1, "no global timer in these records: %s", s->tl->note);
	else if (s->tl->time == TL_TIME_SM)
		tui_flash(t, "x axis: %s clock cycles (each %s from its first block)", s->tl->lane, s->tl->lane);
	else
		tui_flash(t, "x axis: global timer, aligned across %ss", s->tl->lane);
}

static int vt_mouse(struct view *v, int key)
{
	struct vt *s = v->priv;
	struct tui *t = v->tui;
	if (key == TK_WHEEL_UP || key == TK_WHEEL_DOWN) {
		vt_scroll_lanes(s, key == TK_WHEEL_UP ? -3 : 3);
		return VIEW_HANDLED | VIEW_REDRAW;
	}
	int track;
	double tt;
	if (render_term_at(s->tl, &s->v, &s->o, &s->l, t->mouse_x - s->plot_gx, t->mouse_y - s->plot_gy, 0, &track,
			   &tt) < 0)
		return VIEW_HANDLED;
	uint32_t lane;
	int row, rows;
	if (render_term_track(s->tl, &s->v, &s->o, track, &lane, &row, &rows) < 0)
		return VIEW_HANDLED;
	s->cur_lane = (int)lane;
	s->cur_t = timeline_x_to_t(&s->v, s->l.plot_w, t->mouse_x - s->plot_gx - s->l.plot_x);
	return VIEW_HANDLED | VIEW_REDRAW;
}

static int vt_key(struct view *v, int key)
{
	struct vt *s = v->priv;
	struct tui *t = v->tui;
	int page = (int)s->v.n_lanes > 1 ? (int)s->v.n_lanes - 1 : 1;
	double at = s->cur_t >= s->v.t0 && s->cur_t < s->v.t1 ? s->cur_t : (s->v.t0 + s->v.t1) / 2;
	switch (key) {
	case '+': case '=': timeline_view_zoom(s->tl, &s->v, 2, at); break;
	case '-': case '_': timeline_view_zoom(s->tl, &s->v, 0.5, at); break;
	case 'h': case TK_LEFT: timeline_view_pan(s->tl, &s->v, -0.25); break;
	case 'l': case TK_RIGHT: timeline_view_pan(s->tl, &s->v, 0.25); break;
	case 'j': case TK_DOWN: vt_scroll_lanes(s, 1); return VIEW_HANDLED | VIEW_REDRAW;
	case 'k': case TK_UP: vt_scroll_lanes(s, -1); return VIEW_HANDLED | VIEW_REDRAW;
	case TK_PGDN: case TK_CTRL('d'): vt_scroll_lanes(s, page); return VIEW_HANDLED | VIEW_REDRAW;
	case TK_PGUP: case TK_CTRL('u'): vt_scroll_lanes(s, -page); return VIEW_HANDLED | VIEW_REDRAW;
	case 'g': case TK_HOME: vt_scroll_lanes(s, -(int)s->tl->n_lanes); return VIEW_HANDLED | VIEW_REDRAW;
	case 'G': case TK_END: vt_scroll_lanes(s, (int)s->tl->n_lanes); return VIEW_HANDLED | VIEW_REDRAW;
	case 'H': s->cur_t -= vt_col(s); if (s->cur_t < s->v.t0) timeline_view_pan(s->tl, &s->v, -0.25); break;
	case 'L': s->cur_t += vt_col(s); if (s->cur_t >= s->v.t1) timeline_view_pan(s->tl, &s->v, 0.25); break;
	case 'J': s->cur_lane++; break;
	case 'K': s->cur_lane--; break;
	case '[': vt_jump(s, -1); break;
	case ']': vt_jump(s, 1); break;
	case '0': timeline_view_fit(s->tl, &s->v); vt_fit_lanes(s); s->cur_lane = 0; s->cur_t = s->v.t0; break;
	case 't': vt_toggle_time(v); break;
	case 'c':
		s->o.color = s->o.color == TL_COLOR_INDEX ? TL_COLOR_DURATION : TL_COLOR_INDEX;
		tui_flash(t, "colour by %s", s->o.color == TL_COLOR_INDEX ? "block index" : "duration (tail marked)");
		break;
	case 'x':
		s->o.expand = !s->o.expand;
		break;
	case 'e': vt_export(v); break;
	case TK_MOUSE_CLICK: case TK_MOUSE_DOUBLE: case TK_WHEEL_UP: case TK_WHEEL_DOWN: return vt_mouse(v, key);
	default: return 0;
	}
	vt_keep_cursor(s);
	return VIEW_HANDLED | VIEW_REDRAW;
}

/* ---- drawing ---- */

static void vt_title(struct view *v, struct cellgrid *g, int x, int y, int w)
{
	struct vt *s = v->priv;
	struct tui *t = v->tui;
	const struct td_kernel *k = trace_dir_kernel(t->td, s->pid, s->kid);
	char grid[32], block[32], buf[200];
	ktable_fmt_dims(s->r->grid, grid, sizeof grid);
	ktable_fmt_dims(s->r->block, block, sizeof block);
	snprintf(buf, sizeof buf, "launch %llu  grid %s  block %s", (unsigned long long)s->r->seq, grid, block);
	draw_title(t, g, x, y, w, buf, k ? tui_kernel_name(t, k) : "?", draw_c(t, THEME_ACCENT), t->theme.c[THEME_BG],
		   CELL_BOLD);
}

static void vt_readout(struct view *v, struct cellgrid *g, int x, int y, int w)
{
	struct vt *s = v->priv;
	struct tui *t = v->tui;
	char buf[400], a[32], b[32], c[32];
	if (!s->tl->n_lanes) {
		draw_role(t, g, x, y, w, "no blocks recorded", THEME_WARN);
		return;
	}
	long i = vt_hit(s);
	const char *u = s->tl->time == TL_TIME_SM ? "cyc" : "ns";
	timeline_fmt_num(s->cur_t, a, sizeof a);
	if (i < 0) {
		snprintf(buf, sizeof buf, "cursor %s %u  t %s %s  (no block here; H/L J/K move, [ ] jump)",
			 s->tl->lane, s->tl->lanes[s->cur_lane].smid, a, u);
	} else {
		const struct bs_block *bl = &s->bs->blocks[i];
		timeline_fmt_num(s->tl->t_start[i], b, sizeof b);
		timeline_fmt_num((double)(bl->end - bl->start), c, sizeof c);
		snprintf(buf, sizeof buf, "cursor %s %u  slot %u  block %llu  start %s %s  duration %s cyc  %s %u%s",
			 s->tl->lane, bl->smid, bl->slot, (unsigned long long)bl->index, b, u, c,
			 s->tl->warps, bl->warps,
			 timeline_block_is_tail(s->tl, (uint32_t)i) ? "  (tail)" : "");
	}
	draw_fields(t, g, x, y, w, buf, draw_c(t, THEME_FG), t->theme.c[THEME_BG], 0);
}

static void vt_draw(struct view *v, struct cellgrid *g, int x, int y, int w, int h)
{
	struct vt *s = v->priv;
	struct tui *t = v->tui;
	int ph = h - 2; /* title above, readout below */
	if (ph < 4 || w < 10) {
		draw_role(t, g, x, y, w, "too small for the timeline", THEME_WARN);
		return;
	}
	if (cellgrid_fit(&s->sub, w, ph) < 0)
		return;
	s->o.utf8 = t->utf8;
	s->o.mono = tui_mono(t);
	vt_layout(s, w, ph);
	vt_keep_cursor(s);
	s->o.cursor_lane = s->cur_lane;
	s->o.cursor_t = s->cur_t;
	vt_title(v, g, x, y, w);
	render_term_draw(s->sub, s->tl, &s->v, &t->theme, &s->o);
	s->plot_gx = x;
	s->plot_gy = y + 1;
	cellgrid_blit(g, s->sub, x, y + 1);
	vt_readout(v, g, x, y + h - 1, w);
}

static const char *vt_hints(struct view *v)
{
	(void)v;
	return "+/- zoom  h/l pan  j/k lanes  H/L cursor  0 fit  t time  c colour  e PNG  @ log  q back";
}

const struct view_ops view_timeline_ops = {
	.name = "timeline",
	.init = vt_init,
	.free = vt_free,
	.key = vt_key,
	.draw = vt_draw,
	.hints = vt_hints,
};
