/* A kernel's page: what the trace knows about it (names, PTX, instrumentation,
 * declines) and its probed launches, one row each with the block_sched
 * summary when the result has one. Enter on a launch opens its timeline,
 * else its warps (regions records), else its DMAT heatmap; `d` opens the
 * heatmap, `w` the warps, `i` memory by source line.
 * The kernel is kept as (pid, kid): the model's arrays move as they grow. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/draw.h"
#include "tui/ktable.h"
#include "tui/tui.h"
#include "tui/view.h"

enum lcol { LC_SEQ, LC_GPU, LC_GRID, LC_BLOCK, LC_STATUS, LC_RECORDS, LC_DROPPED, LC_DUR, LC_SUMMARY, LC_N };

static const struct layout_col lcols[LC_N] = {
	[LC_SEQ] = {"SEQ", 7, 0, 0, LAYOUT_RIGHT, 0},
	[LC_GPU] = {"GPU", 3, 1, 0, LAYOUT_RIGHT, 0},
	[LC_GRID] = {"GRID", 11, 5, 0, LAYOUT_RIGHT, 0},
	[LC_BLOCK] = {"BLOCK", 9, 6, 0, LAYOUT_RIGHT, 0},
	[LC_STATUS] = {"STATUS", 8, 1, 0, LAYOUT_LEFT, 0},
	[LC_RECORDS] = {"RECORDS", 9, 2, 0, LAYOUT_RIGHT, 0},
	[LC_DROPPED] = {"DROPPED", 8, 3, 0, LAYOUT_RIGHT, 0},
	[LC_DUR] = {"PROBED", 9, 4, 0, LAYOUT_RIGHT, 0},
	[LC_SUMMARY] = {"SUMMARY", 40, 0, 1, LAYOUT_LEFT, 0},
};

struct vl {
	unsigned pid, kid;
	int sel, top;
	int list_y, list_h;
	char hint[96];
};

static const struct td_kernel *vl_kernel(struct view *v)
{
	struct vl *s = v->priv;
	return trace_dir_kernel(v->tui->td, s->pid, s->kid);
}

static int vl_init(struct view *v, void *arg)
{
	int idx = *(int *)arg;
	struct tui *t = v->tui;
	if (idx < 0 || idx >= t->td->n_kernels)
		return -1;
	struct vl *s = calloc(1, sizeof *s);
	if (!s)
		return -1;
	s->pid = t->td->kernels[idx].pid;
	s->kid = t->td->kernels[idx].kid;
	s->sel = t->td->kernels[idx].n_results - 1; /* the latest launch */
	if (s->sel < 0)
		s->sel = 0;
	v->priv = s;
	return 0;
}

static void vl_free(struct view *v)
{
	free(v->priv);
}

/* The selected launch's result index and summary; -1 (with a message) when
 * there is nothing to open. */
static int vl_selected(struct view *v, const struct rsum **rs_out)
{
	struct vl *s = v->priv;
	struct tui *t = v->tui;
	const struct td_kernel *k = vl_kernel(v);
	if (!k || s->sel >= k->n_results) {
		tui_msg(t, 1, "no probed launch to open%s", t->o.app ? " (p probes this kernel)" : "");
		return -1;
	}
	int ri = k->results[s->sel];
	const struct rsum *rs = rcache_get(&t->rc, t->td, ri, 1);
	if (rs->state == RSUM_PENDING) {
		tui_msg(t, 1, "launch %llu has no result yet", (unsigned long long)t->td->results[ri].seq);
		return -1;
	}
	if (rs->state == RSUM_ERROR) {
		tui_msg(t, 1, "launch %llu: %s", (unsigned long long)t->td->results[ri].seq, rs->line);
		return -1;
	}
	*rs_out = rs;
	return ri;
}

/* What each key opens, and what the summary must have for it. */
enum vl_want { VL_ANY, VL_HEATMAP, VL_WARPS, VL_LINES };

/* Enter (VL_ANY): the timeline when there are block_sched records, else
 * the warps, else the heatmap; the others: that view only. */
static int vl_open(struct view *v, enum vl_want want)
{
	struct tui *t = v->tui;
	const struct rsum *rs = NULL;
	int ri = vl_selected(v, &rs);
	if (ri < 0)
		return VIEW_HANDLED | VIEW_REDRAW;
	unsigned long long seq = (unsigned long long)t->td->results[ri].seq;
	if (want == VL_ANY && rs->has_bs)
		tui_push(t, &view_timeline_ops, &ri);
	else if ((want == VL_ANY || want == VL_WARPS) && rs->has_regions)
		tui_push(t, &view_warps_ops, &ri);
	else if ((want == VL_ANY || want == VL_HEATMAP) && rs->has_dmat)
		tui_push(t, &view_heatmap_ops, &(struct view_heatmap_arg){ri, NULL, NULL});
	else if (want == VL_LINES && rs->has_lines)
		tui_push(t, &view_lines_ops, &ri);
	else if (want == VL_HEATMAP)
		tui_msg(t, 1, "launch %llu has no dmat records to draw a heatmap from (%s)", seq, rs->line);
	else if (want == VL_WARPS)
		tui_msg(t, 1, "launch %llu has no regions records (the regions probe makes them)", seq);
	else if (want == VL_LINES)
		tui_msg(t, 1, "launch %llu has no dmat records naming their sites (the dmat probe makes them)", seq);
	else
		tui_msg(t, 1, "launch %llu has no block_sched, regions or dmat records to draw (%s)", seq, rs->line);
	return VIEW_HANDLED | VIEW_REDRAW;
}

static int vl_key(struct view *v, int key)
{
	struct vl *s = v->priv;
	struct tui *t = v->tui;
	const struct td_kernel *k = vl_kernel(v);
	int n = k ? k->n_results : 0, page = s->list_h > 1 ? s->list_h - 1 : 1;
	switch (key) {
	case 'j': case TK_DOWN: s->sel++; break;
	case 'k': case TK_UP: s->sel--; break;
	case 'g': case TK_HOME: s->sel = 0; break;
	case 'G': case TK_END: s->sel = n - 1; break;
	case TK_CTRL('d'): s->sel += page / 2 ? page / 2 : 1; break;
	case TK_CTRL('u'): s->sel -= page / 2 ? page / 2 : 1; break;
	case TK_PGDN: s->sel += page; break;
	case TK_PGUP: s->sel -= page; break;
	case TK_WHEEL_DOWN: s->sel += 3; break;
	case TK_WHEEL_UP: s->sel -= 3; break;
	case TK_ENTER: case 'l': case TK_RIGHT: return vl_open(v, VL_ANY);
	case 'd': return vl_open(v, VL_HEATMAP);
	case 'w': return vl_open(v, VL_WARPS);
	case 'i': return vl_open(v, VL_LINES);
	case 'h': case TK_LEFT: return VIEW_QUIT;
	case TK_MOUSE_CLICK:
	case TK_MOUSE_DOUBLE: {
		int row = t->mouse_y - s->list_y;
		if (row < 0 || row >= s->list_h || s->top + row >= n)
			return VIEW_HANDLED;
		s->sel = s->top + row;
		if (key == TK_MOUSE_DOUBLE)
			return vl_open(v, VL_ANY);
		break;
	}
	case 'p':
	case 'P':
		if (!k)
			return VIEW_HANDLED;
		if (!t->o.app) {
			tui_msg(t, 1, "this is a recorded trace: probes are switched while ntop runs the program");
		} else if (key == 'P') {
			tui_request_set(t, k, NULL, NULL, PMODE_NEXT, 0);
		} else {
			int idx = (int)(k - t->td->kernels);
			tui_push(t, &view_probes_ops, &idx);
		}
		return VIEW_HANDLED | VIEW_REDRAW;
	default:
		return 0;
	}
	if (s->sel >= n)
		s->sel = n - 1;
	if (s->sel < 0)
		s->sel = 0;
	return VIEW_HANDLED | VIEW_REDRAW;
}

/* " blocks/SM 32 -> 16" where the hook measured both at the first probed
 * launch, else "". */
static const char *occ_text(const struct td_kernel *k, char *buf, size_t n)
{
	buf[0] = 0;
	if (k->occ_orig >= 0 && k->occ_probed >= 0)
		snprintf(buf, n, " blocks/SM %d -> %d,", k->occ_orig, k->occ_probed);
	return buf;
}

/* The lines above the table; returns rows used. */
static int vl_info(struct view *v, struct cellgrid *g, int x, int y, int w, int h, const struct td_kernel *k)
{
	struct tui *t = v->tui;
	char buf[1200], st[200], occ[48];
	int row = 0, role;
	if (h < 6)
		return 0;
	draw_text(t, g, x, y + row++, w, k->demangled ? k->demangled : k->name ? k->name : "(unnamed)",
		  draw_c(t, THEME_ACCENT), t->theme.c[THEME_BG], CELL_BOLD);
	snprintf(buf, sizeof buf, "mangled %s", k->name ? k->name : "?");
	draw_role(t, g, x, y + row++, w, buf, THEME_DIM);
	struct ktable_ctx kc = tui_kctx(t);
	ktable_probe_state(&kc, k, st, sizeof st, &role);
	char who[320];
	snprintf(buf, sizeof buf, "pid %s  kid %u  launches %llu  %s %s  probe: %s", td_process_label(t->td, k->pid, who, sizeof who), k->kid,
		 (unsigned long long)k->launches, td_kernel_code_word(k),
		 k->has_ptx ? "yes" : k->ptx_reason ? k->ptx_reason : "no", st);
	draw_role(t, g, x, y + row++, w, buf, THEME_FG);
	if (k->instrument_status && !strcmp(k->instrument_status, "failed"))
		snprintf(buf, sizeof buf, "instrumentation failed: %s", k->instrument_reason ? k->instrument_reason : "?");
	else if (k->instrument_status)
		snprintf(buf, sizeof buf, "instrumented with %s: registers %d -> %d,%s %d sites, JIT %.3f ms%s%s",
			 k->instrument_probes ? k->instrument_probes : "?", k->regs_orig, k->regs_probed,
			 occ_text(k, occ, sizeof occ), k->sites, k->ms_jit, k->instrument_jit ? " by " : "",
			 k->instrument_jit ? k->instrument_jit : "");
	else
		snprintf(buf, sizeof buf, "never instrumented");
	/* reasons wrap while the table keeps a header and three rows */
	int spare = h - 4 - 5;
	row += draw_wrapped(t, g, x, y + row, w, spare > 1 ? 1 + spare / 2 : 1, buf,
			    k->instrument_status && !strcmp(k->instrument_status, "failed") ? THEME_ERROR : THEME_DIM);
	spare = h - row - 5;
	if (k->deferred && spare > 0) {
		snprintf(buf, sizeof buf, "%llu launch%s ran unprobed while the probed copy was built; the first probed "
			 "launch is %s", (unsigned long long)k->deferred, k->deferred == 1 ? "" : "es",
			 k->n_results ? "the first row" : "still to come");
		row += draw_wrapped(t, g, x, y + row, w, spare, buf, THEME_DIM);
		spare = h - row - 5;
	}
	if (k->declined && spare > 0) {
		snprintf(buf, sizeof buf, "%llu probed launch%s declined: %s", (unsigned long long)k->declined,
			 k->declined == 1 ? "" : "es", k->declined_reason ? k->declined_reason : "?");
		row += draw_wrapped(t, g, x, y + row, w, spare, buf, THEME_WARN);
	}
	return row + 1;
}

static void vl_cellf(struct tui *t, const struct tui_opts *o, char *buf, size_t len, enum lcol c,
		     const struct td_result *r, const struct rsum *rs, int *role)
{
	(void)o;
	*role = THEME_FG;
	switch (c) {
	case LC_SEQ: snprintf(buf, len, "%llu", (unsigned long long)r->seq); break;
	case LC_GPU:
		if (td_result_dev(r) >= 0)
			snprintf(buf, len, "%d", td_result_dev(r));
		else
			snprintf(buf, len, "-");
		break;
	case LC_GRID:
	case LC_BLOCK:
		if (r->has_config)
			ktable_fmt_dims(c == LC_GRID ? r->config.grid : r->config.block, buf, len);
		else
			snprintf(buf, len, "-");
		break;
	case LC_STATUS:
		snprintf(buf, len, "%s", rs->state == RSUM_OK ? "ok" : rs->state == RSUM_ERROR ? "error"
								  : r->file ? "unread" : "pending");
		*role = rs->state == RSUM_OK ? THEME_ACCENT : rs->state == RSUM_ERROR ? THEME_ERROR : THEME_DIM;
		break;
	case LC_RECORDS: snprintf(buf, len, "%llu", (unsigned long long)r->records); break;
	case LC_DROPPED:
		snprintf(buf, len, "%llu", (unsigned long long)r->dropped);
		*role = r->dropped ? THEME_WARN : THEME_DIM;
		break;
	case LC_DUR: ktable_fmt_ns((double)rs->duration_ns, t->utf8, buf, len); break;
	case LC_SUMMARY:
		if (rs->state == RSUM_PENDING && r->file)
			snprintf(buf, len, "%.1f MB: Enter reads it", r->bytes / 1e6);
		else
			snprintf(buf, len, "%s", rs->line);
		*role = rs->state == RSUM_ERROR ? THEME_ERROR : rs->has_bs || rs->has_dmat || rs->has_regions ? THEME_FG : THEME_DIM;
		break;
	default: buf[0] = 0;
	}
}

static void vl_draw(struct view *v, struct cellgrid *g, int x, int y, int w, int h)
{
	struct vl *s = v->priv;
	struct tui *t = v->tui;
	const struct td_kernel *k = vl_kernel(v);
	if (!k) {
		draw_role(t, g, x, y, w, "kernel not in the trace", THEME_ERROR);
		return;
	}
	int used = vl_info(v, g, x, y, w, h, k);
	int cx[LC_N], cw[LC_N];
	struct layout_col cols[LC_N];
	memcpy(cols, lcols, sizeof cols);
	if (td_process_n_devices(t->td, k->pid) < 2) { /* one GPU: no GPU column */
		cols[LC_GPU].width = 1 << 20;
		cols[LC_GPU].priority = 1000;
	}
	layout_columns(cols, LC_N, w, cx, cw);
	int hy = y + used;
	struct rgb hbg = rgb_mix(t->theme.c[THEME_BG], t->theme.c[THEME_FG], 0.08);
	draw_fill(g, x, hy, w, 1, hbg);
	for (int c = 0; c < LC_N; c++)
		if (cw[c])
			draw_cell(t, g, x + cx[c], hy, cw[c], cols[c].title, cols[c].align, draw_c(t, THEME_DIM), hbg, 0);
	s->list_y = hy + 1;
	s->list_h = y + h - s->list_y;
	if (!k->n_results) {
		draw_wrapped(t, g, x + 1, s->list_y, w - 1, s->list_h,
			     t->o.app ? "no probed launches yet: p picks probes for this kernel"
				      : "no probed launches (record with: ntop record -p block_sched -k NAME -- APP)",
			     THEME_DIM);
		return;
	}
	if (s->sel >= k->n_results)
		s->sel = k->n_results - 1;
	s->top = layout_scroll(s->top, s->sel, s->list_h, k->n_results);
	for (int r = 0; r < s->list_h && s->top + r < k->n_results; r++) {
		int ri = k->results[s->top + r];
		const struct td_result *tr = &t->td->results[ri];
		const struct rsum *rs = rcache_get(&t->rc, t->td, ri, tr->bytes <= RCACHE_IDLE_BYTES);
		int sel = s->top + r == s->sel;
		struct rgb bg = sel ? tui_sel_bg(t) : t->theme.c[THEME_BG];
		int attr = sel && t->mono ? CELL_REVERSE : 0;
		draw_fill(g, x, s->list_y + r, w, 1, bg);
		for (int c = 0; c < LC_N; c++) {
			if (!cw[c])
				continue;
			char buf[256];
			int role;
			vl_cellf(t, &t->o, buf, sizeof buf, (enum lcol)c, tr, rs, &role);
			draw_cell(t, g, x + cx[c], s->list_y + r, cw[c], buf, cols[c].align, draw_c(t, role), bg, attr);
		}
	}
}

/* The views the selected launch offers (its summary is not read here: an
 * unread launch shows the timeline, as Enter reads it first). */
static const char *vl_hints(struct view *v)
{
	struct vl *s = v->priv;
	struct tui *t = v->tui;
	const struct td_kernel *k = vl_kernel(v);
	struct rsum none = {.has_bs = 1};
	const struct rsum *rs = &none;
	if (k && s->sel >= 0 && s->sel < k->n_results) {
		const struct rsum *r = rcache_get(&t->rc, t->td, k->results[s->sel], 0);
		if (r->state == RSUM_OK)
			rs = r;
	}
	const char *first = rs->has_bs ? "timeline" : rs->has_regions ? "warps" : rs->has_dmat ? "heatmap" : "timeline";
	snprintf(s->hint, sizeof s->hint, "Enter %s%s%s%s  %s", first,
		 rs->has_bs && rs->has_regions ? "  w warps" : "",
		 rs->has_dmat && (rs->has_bs || rs->has_regions) ? "  d heatmap" : "",
		 rs->has_lines ? "  i lines" : "", t->o.app ? "p probe  q back" : "j/k move  q back");
	return s->hint;
}

const struct view_ops view_launches_ops = {
	.name = "launches",
	.init = vl_init,
	.free = vl_free,
	.key = vl_key,
	.draw = vl_draw,
	.hints = vl_hints,
};
