/* The source-line view of one probed dmat launch: a row per source line
 * (its loads and its stores apart), with accesses, bytes, warp-level
 * requests, the 32-byte sectors they touched, sectors per request and the
 * distinct pages; a line whose probed instructions made no record shows
 * as not run. Enter opens the launch's heatmap of that line's accesses. The records are streamed once when the view opens
 * (viz/lines.h); only the per-line table stays in memory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/draw.h"
#include "tui/tui.h"
#include "tui/view.h"
#include "viz/dmat.h"
#include "viz/lines.h"

struct vli {
	struct lines *L;
	int ri;
	int sel, top, list_h;
	unsigned long long seq;
};

static int vli_init(struct view *v, void *arg)
{
	struct tui *t = v->tui;
	int ri = *(int *)arg;
	if (ri < 0 || ri >= t->td->n_results || !t->td->results[ri].path)
		return -1;
	struct vli *s = calloc(1, sizeof *s);
	if (!s)
		return -1;
	v->priv = s;
	s->ri = ri;
	s->seq = (unsigned long long)t->td->results[ri].seq;
	struct result_stream *rs = NULL;
	char *cause = NULL;
	int map = -1;
	if (result_stream_open(t->td->results[ri].path, &rs, &cause) == 0) {
		map = lines_find_map(result_stream_result(rs));
		if (map < 0)
			cause = strdup("no dmat map with an access field");
		else
			lines_analyze(rs, map, &s->L, &cause);
	}
	result_stream_close(rs);
	if (!s->L) {
		tui_msg(t, 1, "cannot count launch %llu's memory by line: %s", s->seq, cause ? cause : "out of memory");
		free(cause);
		return -1;
	}
	return 0;
}

static void vli_free(struct view *v)
{
	struct vli *s = v->priv;
	if (!s)
		return;
	lines_free(s->L);
	free(s);
}

/* Enter: the launch's heatmap of the selected line's accesses only. */
static int vli_heatmap(struct view *v)
{
	struct vli *s = v->priv;
	struct tui *t = v->tui;
	const struct ln_line *l = s->sel < s->L->n ? &s->L->v[s->sel] : NULL;
	struct result *r = NULL;
	char *cause = NULL, label[240];
	uint8_t sites[DMAT_SITES / 8];
	if (!l || !l->accesses) {
		tui_msg(t, 1, "%s made no records: nothing to draw", l ? l->where : "no line");
		return VIEW_HANDLED | VIEW_REDRAW;
	}
	if (result_read_head(t->td->results[s->ri].path, &r, &cause) < 0) {
		tui_msg(t, 1, "launch %llu: %s", s->seq, cause ? cause : "unreadable");
		free(cause);
		return VIEW_HANDLED | VIEW_REDRAW;
	}
	lines_site_mask(r, l, sites, DMAT_SITES);
	result_free(r);
	snprintf(label, sizeof label, "%s %s", l->where, l->stores ? "stores" : "loads");
	tui_push(t, &view_heatmap_ops, &(struct view_heatmap_arg){s->ri, sites, label});
	return VIEW_HANDLED | VIEW_REDRAW;
}

static int vli_key(struct view *v, int key)
{
	struct vli *s = v->priv;
	int page = s->list_h > 1 ? s->list_h - 1 : 1;
	switch (key) {
	case 'j': case TK_DOWN: s->sel++; break;
	case 'k': case TK_UP: s->sel--; break;
	case 'g': case TK_HOME: s->sel = 0; break;
	case 'G': case TK_END: s->sel = s->L->n - 1; break;
	case TK_PGDN: case TK_CTRL('d'): s->sel += page; break;
	case TK_PGUP: case TK_CTRL('u'): s->sel -= page; break;
	case TK_ENTER: case 'l': case TK_RIGHT: return vli_heatmap(v);
	case 'q': case 'h': case TK_LEFT: case TK_ESC: return VIEW_QUIT;
	default: return 0;
	}
	if (s->sel >= s->L->n)
		s->sel = s->L->n - 1;
	if (s->sel < 0)
		s->sel = 0;
	return VIEW_HANDLED | VIEW_REDRAW;
}

/* Columns after LINE take 70 cells; LINE gets the rest, 16 to 40 (at 80
 * columns BYTES and PAGES, last, are cut; sectors per request stay). */
static int vli_line_w(int w)
{
	int lw = w - 71;
	return lw < 16 ? 16 : lw > 40 ? 40 : lw;
}

static void vli_row(const struct lines *L, const struct ln_line *l, int lw, char *buf, size_t n)
{
	char k[64], spr[16] = "-", pages[24];
	if (L->coalescing && l->requests)
		snprintf(spr, sizeof spr, "%.2f", (double)l->sectors / (double)l->requests);
	snprintf(pages, sizeof pages, "%llu%s", (unsigned long long)l->pages, l->pages >= LINES_PAGES_MAX ? "+" : "");
	if (!l->accesses)
		snprintf(k, sizeof k, "not run");
	else
		lines_kinds_text(l->kinds, k, sizeof k);
	snprintf(buf, n, "%-*.*s %-10.10s %9llu %8s %9llu %9llu %10llu %7s", lw, lw, l->where, k,
		 (unsigned long long)l->accesses, spr, (unsigned long long)l->requests, (unsigned long long)l->sectors,
		 (unsigned long long)l->bytes, pages);
}

static void vli_draw(struct view *v, struct cellgrid *g, int x, int y, int w, int h)
{
	struct vli *s = v->priv;
	struct tui *t = v->tui;
	const struct lines *L = s->L;
	char buf[320];
	draw_fill(g, x, y, w, h, t->theme.c[THEME_BG]);
	int n = snprintf(buf, sizeof buf, "memory by source line: launch %llu, %llu accesses", s->seq,
			 (unsigned long long)L->records);
	if (L->unattributed && n > 0 && (size_t)n < sizeof buf)
		snprintf(buf + n, sizeof buf - (size_t)n, ", %llu from sites past the 2047 a record names",
			 (unsigned long long)L->unattributed);
	draw_fields(t, g, x, y, w, buf, draw_c(t, THEME_ACCENT), t->theme.c[THEME_BG], CELL_BOLD);
	if (!L->has_sites) {
		draw_wrapped(t, g, x, y + 2, w, h - 2, "this launch's records name no sites (a result older than the site table)",
			     THEME_WARN);
		return;
	}
	int lw = vli_line_w(w);
	snprintf(buf, sizeof buf, "%-*s %-10s %9s %8s %9s %9s %10s %7s", lw, "LINE", "KIND", "ACCESSES", "SECT/REQ",
		 "REQUESTS", "SECTORS", "BYTES", "PAGES");
	draw_role(t, g, x, y + 1, w, buf, THEME_DIM);
	s->list_h = h - 3 > 0 ? h - 3 : 0;
	s->top = layout_scroll(s->top, s->sel, s->list_h, L->n);
	for (int r = 0; r < s->list_h && s->top + r < L->n; r++) {
		int i = s->top + r, sel = i == s->sel;
		struct rgb bg = sel ? tui_sel_bg(t) : t->theme.c[THEME_BG];
		vli_row(L, &L->v[i], lw, buf, sizeof buf);
		draw_fill(g, x, y + 2 + r, w, 1, bg);
		draw_text(t, g, x, y + 2 + r, w, buf, draw_c(t, L->v[i].accesses ? THEME_FG : THEME_DIM), bg,
			  sel && t->mono ? CELL_REVERSE : 0);
	}
	draw_role(t, g, x, y + h - 1, w,
		  L->coalescing ? "a request: one warp's lanes at one instruction; sectors: the 32-byte pieces it touched"
				: "requests and sectors need a thread-level map: not counted",
		  THEME_DIM);
}

static const char *vli_hints(struct view *v)
{
	(void)v;
	return "Enter heatmap of the line  j/k move  g/G first/last  q back";
}

const struct view_ops view_lines_ops = {
	.name = "lines",
	.init = vli_init,
	.free = vli_free,
	.key = vli_key,
	.draw = vli_draw,
	.hints = vli_hints,
};
