/* The kernel list: a row per kernel name across processes (a group,
 * Enter expands it into a row per process) or per (pid, kernel) (g),
 * columns by ktable.c, sorted and filtered there; x hides the kernels of
 * processes that exited. The selection follows the kernel (pid, kid), not
 * the row number, so rows moving under a live stream keep the cursor on
 * the same kernel. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/draw.h"
#include "tui/tui.h"
#include "tui/view.h"

struct vk {
	int sel, top;
	unsigned sel_pid, sel_kid;
	int has_sel;
	int sel_group;        /* the selection is a group's row (not a member's) */
	int editing;          /* typing a filter after '/' */
	int cx[KC_N], cw[KC_N];
	int list_y, list_h;   /* rows of kernels on screen (absolute) */
	int header_y;
};

static int vk_init(struct view *v, void *arg)
{
	(void)arg;
	v->priv = calloc(1, sizeof(struct vk));
	return v->priv ? 0 : -1;
}

static void vk_free(struct view *v)
{
	free(v->priv);
}

/* Puts the selection back on its kernel after the rows changed. */
static void vk_resync(struct view *v)
{
	struct vk *s = v->priv;
	struct tui *t = v->tui;
	struct ktable_ctx kc = tui_kctx(t);
	ktable_update(&t->kt, &kc);
	if (s->has_sel) {
		int r = ktable_find(&t->kt, t->td, s->sel_pid, s->sel_kid, s->sel_group);
		if (r >= 0)
			s->sel = r;
	}
	if (s->sel >= t->kt.n)
		s->sel = t->kt.n - 1;
	if (s->sel < 0)
		s->sel = 0;
}

static void vk_remember(struct view *v)
{
	struct vk *s = v->priv;
	struct tui *t = v->tui;
	if (s->sel >= 0 && s->sel < t->kt.n) {
		const struct td_kernel *k = &t->td->kernels[t->kt.rows[s->sel].k];
		s->sel_group = !t->kt.rows[s->sel].child && t->kt.rows[s->sel].n > 1;
		s->sel_pid = k->pid;
		s->sel_kid = k->kid;
		s->has_sel = 1;
	}
}

static const struct td_kernel *vk_selected(struct view *v)
{
	struct vk *s = v->priv;
	struct tui *t = v->tui;
	if (s->sel < 0 || s->sel >= t->kt.n)
		return NULL;
	return &t->td->kernels[t->kt.rows[s->sel].k];
}

static void vk_move(struct view *v, int delta)
{
	struct vk *s = v->priv;
	int n = v->tui->kt.n;
	s->sel += delta;
	if (s->sel >= n)
		s->sel = n - 1;
	if (s->sel < 0)
		s->sel = 0;
	vk_remember(v);
}

static void vk_sort(struct view *v, int col, int toggle_same)
{
	struct tui *t = v->tui;
	if (col < 0 || col >= KC_N)
		return;
	if (toggle_same && t->kt.sort == (enum kcol)col)
		t->kt.reverse = !t->kt.reverse;
	else
		t->kt.sort = (enum kcol)col;
	ktable_mark(&t->kt);
	tui_flash(t, "sorted by %s%s", ktable_col_key(t->kt.sort), t->kt.reverse ? " (reversed)" : "");
}

/* Next/previous visible column after the sorted one. */
static void vk_sort_step(struct view *v, int dir)
{
	struct vk *s = v->priv;
	int c = v->tui->kt.sort;
	for (int i = 0; i < KC_N; i++) {
		c = (c + dir + KC_N) % KC_N;
		if (s->cw[c] > 0)
			break;
	}
	vk_sort(v, c, 0);
}

static int vk_filter_key(struct view *v, int key)
{
	struct vk *s = v->priv;
	struct ktable *kt = &v->tui->kt;
	size_t n = strlen(kt->filter);
	if (key == TK_ESC) {
		kt->filter[0] = 0;
		s->editing = 0;
	} else if (key == TK_ENTER) {
		s->editing = 0;
	} else if (key == TK_BACKSPACE || key == TK_CTRL('h')) {
		while (n > 0 && ((unsigned char)kt->filter[n - 1] & 0xc0) == 0x80)
			n--; /* a whole UTF-8 character */
		if (n)
			kt->filter[n - 1] = 0;
	} else if (key == TK_CTRL('u')) {
		kt->filter[0] = 0;
	} else if (key == TK_UP || key == TK_DOWN) {
		vk_move(v, key == TK_UP ? -1 : 1);
		return VIEW_HANDLED | VIEW_REDRAW;
	} else if (key >= 0x20 && key < 0x100 && key != 0x7f) {
		if (n + 1 < sizeof kt->filter) {
			kt->filter[n] = (char)key;
			kt->filter[n + 1] = 0;
		}
	} else {
		return VIEW_HANDLED; /* swallow other keys while typing */
	}
	ktable_mark(kt);
	vk_resync(v);
	return VIEW_HANDLED | VIEW_REDRAW;
}

/* Enter: a group expands or folds; a kernel opens its launches. */
static int vk_open(struct view *v)
{
	struct vk *s = v->priv;
	struct tui *t = v->tui;
	const struct td_kernel *k = vk_selected(v);
	if (!k)
		return VIEW_HANDLED;
	if (ktable_toggle(&t->kt, t->td, &t->kt.rows[s->sel])) {
		vk_resync(v);
		return VIEW_HANDLED | VIEW_REDRAW;
	}
	int idx = (int)(k - v->tui->td->kernels);
	tui_push(v->tui, &view_launches_ops, &idx);
	return VIEW_HANDLED | VIEW_REDRAW;
}

static int vk_probe(struct view *v, int off)
{
	struct tui *t = v->tui;
	const struct td_kernel *k = vk_selected(v);
	if (!k)
		return VIEW_HANDLED;
	if (!t->o.app) {
		tui_msg(t, 1, "this is a recorded trace: probes are switched while ntop runs the program "
			      "(ntop PROGRAM, or ntop record -p PROBE -k NAME)");
		return VIEW_HANDLED | VIEW_REDRAW;
	}
	if (off) {
		tui_request_set(t, k, NULL, NULL, PMODE_NEXT, 0);
		return VIEW_HANDLED | VIEW_REDRAW;
	}
	if (!k->has_ptx) {
		tui_msg(t, 1, "%s cannot be probed: %s", tui_kernel_name(t, k),
			k->ptx_reason ? k->ptx_reason
			: k->amd      ? "no code object ntop can instrument for the device"
				      : "no PTX in its image (rebuild with a +PTX arch list)");
		return VIEW_HANDLED | VIEW_REDRAW;
	}
	int idx = (int)(k - t->td->kernels);
	tui_push(t, &view_probes_ops, &idx);
	return VIEW_HANDLED | VIEW_REDRAW;
}

static int vk_mouse(struct view *v, int key)
{
	struct vk *s = v->priv;
	struct tui *t = v->tui;
	if (key == TK_WHEEL_UP || key == TK_WHEEL_DOWN) {
		vk_move(v, key == TK_WHEEL_UP ? -3 : 3);
		return VIEW_HANDLED | VIEW_REDRAW;
	}
	if (t->mouse_y == s->header_y) {
		for (int c = 0; c < KC_N; c++)
			if (s->cw[c] && t->mouse_x >= s->cx[c] && t->mouse_x < s->cx[c] + s->cw[c])
				vk_sort(v, c, 1);
		return VIEW_HANDLED | VIEW_REDRAW;
	}
	int row = t->mouse_y - s->list_y;
	if (row < 0 || row >= s->list_h || s->top + row >= t->kt.n)
		return VIEW_HANDLED;
	s->sel = s->top + row;
	vk_remember(v);
	if (key == TK_MOUSE_DOUBLE)
		return vk_open(v);
	return VIEW_HANDLED | VIEW_REDRAW;
}

static int vk_key(struct view *v, int key)
{
	struct vk *s = v->priv;
	struct tui *t = v->tui;
	if (s->editing)
		return vk_filter_key(v, key);
	int page = s->list_h > 1 ? s->list_h - 1 : 1;
	switch (key) {
	case 'j': case TK_DOWN: vk_move(v, 1); break;
	case 'k': case TK_UP: vk_move(v, -1); break;
	case TK_HOME: vk_move(v, -t->kt.n); break;
	case 'G': case TK_END: vk_move(v, t->kt.n); break;
	case TK_CTRL('d'): vk_move(v, page / 2 ? page / 2 : 1); break;
	case TK_CTRL('u'): vk_move(v, -(page / 2 ? page / 2 : 1)); break;
	case TK_PGDN: case TK_CTRL('f'): vk_move(v, page); break;
	case TK_PGUP: case TK_CTRL('b'): vk_move(v, -page); break;
	case 's': case '>': vk_sort_step(v, 1); break;
	case '<': vk_sort_step(v, -1); break;
	case 'S':
		t->kt.reverse = !t->kt.reverse;
		ktable_mark(&t->kt);
		break;
	case '/':
		s->editing = 1;
		break;
	case TK_ESC:
		if (!t->kt.filter[0])
			return 0;
		t->kt.filter[0] = 0;
		ktable_mark(&t->kt);
		break;
	case TK_ENTER: case 'l': case TK_RIGHT: return vk_open(v);
	case 'p': return vk_probe(v, 0);
	case 'P': return vk_probe(v, 1);
	case 'g':
		t->kt.single = !t->kt.single;
		ktable_mark(&t->kt);
		tui_flash(t, t->kt.single ? "a row per process and kernel" : "a row per kernel name across processes");
		break;
	case 'x':
		t->kt.hide_exited = !t->kt.hide_exited;
		ktable_mark(&t->kt);
		tui_flash(t, t->kt.hide_exited ? "kernels of exited processes hidden" : "kernels of exited processes shown");
		break;
	case TK_MOUSE_CLICK: case TK_MOUSE_DOUBLE: case TK_WHEEL_UP: case TK_WHEEL_DOWN: return vk_mouse(v, key);
	default:
		if (key >= TK_F0 + 2 && key <= TK_F0 + 1 + KC_N) {
			vk_sort(v, key - TK_F0 - 2, 1);
			break;
		}
		return 0;
	}
	vk_resync(v);
	return VIEW_HANDLED | VIEW_REDRAW;
}

static void vk_header(struct view *v, struct cellgrid *g, int x, int y)
{
	struct vk *s = v->priv;
	struct tui *t = v->tui;
	struct layout_col cols[KC_N];
	ktable_columns(t->td->n_procs > 1, ktable_multi_gpu(t->td), cols);
	struct rgb bg = rgb_mix(t->theme.c[THEME_BG], t->theme.c[THEME_FG], 0.08);
	draw_fill(g, x, y, v->w, 1, bg);
	for (int c = 0; c < KC_N; c++) {
		if (!s->cw[c])
			continue;
		char title[32];
		int sorted = t->kt.sort == (enum kcol)c;
		const char *mark = !sorted ? "" : t->utf8 ? (t->kt.reverse ? "\xe2\x96\xb2" : "\xe2\x96\xbc")
						       : (t->kt.reverse ? "^" : "v");
		snprintf(title, sizeof title, "%s%s", cols[c].title, mark);
		draw_cell(t, g, x + s->cx[c], y, s->cw[c], title, cols[c].align,
			  draw_c(t, sorted ? THEME_ACCENT : THEME_DIM), bg, sorted ? CELL_BOLD : 0);
	}
}

static void vk_row(struct view *v, struct cellgrid *g, int x, int y, const struct krow *r, int selected)
{
	struct vk *s = v->priv;
	struct tui *t = v->tui;
	struct ktable_ctx kc = tui_kctx(t);
	struct layout_col cols[KC_N];
	ktable_columns(t->td->n_procs > 1, ktable_multi_gpu(t->td), cols);
	struct rgb bg = selected ? tui_sel_bg(t) : t->theme.c[THEME_BG];
	int attr = selected && t->mono ? CELL_REVERSE : 0;
	draw_fill(g, x, y, v->w, 1, bg);
	if (attr)
		for (int i = 0; i < v->w; i++)
			cellgrid_set(g, x + i, y, " ", bg, bg, (uint8_t)attr);
	for (int c = 0; c < KC_N; c++) {
		if (!s->cw[c])
			continue;
		char buf[1024];
		int role;
		ktable_row_cell(&kc, &t->kt, r, (enum kcol)c, buf, sizeof buf, &role);
		draw_cell(t, g, x + s->cx[c], y, s->cw[c], buf, cols[c].align, draw_c(t, role), bg, attr);
	}
}

static void vk_empty(struct view *v, struct cellgrid *g, int x, int y)
{
	struct tui *t = v->tui;
	char msg[300];
	if (t->kt.filter[0])
		snprintf(msg, sizeof msg, "no kernel matches '%s' (Esc clears the filter)", t->kt.filter);
	else if (t->o.app)
		snprintf(msg, sizeof msg, "no kernels yet: waiting for the application to load a GPU module");
	else
		snprintf(msg, sizeof msg, "no kernels in this trace (%d processes seen; the hook %s loaded)",
			 t->td->n_procs, t->td->n_procs ? "was" : "was not");
	draw_role(t, g, x + 1, y, v->w - 1, msg, THEME_DIM);
}

static void vk_filter_line(struct view *v, struct cellgrid *g, int x, int y)
{
	struct vk *s = v->priv;
	struct tui *t = v->tui;
	char buf[300];
	snprintf(buf, sizeof buf, "/%s%s  (%d of %d kernels%s)", t->kt.filter, s->editing ? "_" : "", t->kt.matched,
		 t->td->n_kernels, s->editing ? "; Enter keeps, Esc clears" : "; Esc clears");
	draw_fill(g, x, y, v->w, 1, t->theme.c[THEME_BG]);
	draw_role(t, g, x, y, v->w, buf, THEME_ACCENT);
}

static void vk_draw(struct view *v, struct cellgrid *g, int x, int y, int w, int h)
{
	struct vk *s = v->priv;
	struct tui *t = v->tui;
	struct layout_col cols[KC_N];
	ktable_columns(t->td->n_procs > 1, ktable_multi_gpu(t->td), cols);
	layout_columns(cols, KC_N, w, s->cx, s->cw);
	vk_resync(v);
	int filter_row = s->editing || t->kt.filter[0];
	s->header_y = y;
	s->list_y = y + 1;
	s->list_h = h - 1 - filter_row;
	if (s->list_h < 0)
		s->list_h = 0;
	vk_header(v, g, x, y);
	s->top = layout_scroll(s->top, s->sel, s->list_h, t->kt.n);
	if (!t->kt.n && s->list_h > 0)
		vk_empty(v, g, x, s->list_y);
	for (int r = 0; r < s->list_h && s->top + r < t->kt.n; r++)
		vk_row(v, g, x, s->list_y + r, &t->kt.rows[s->top + r], s->top + r == s->sel);
	if (filter_row && h > 1)
		vk_filter_line(v, g, x, y + h - 1);
	if (!s->has_sel)
		vk_remember(v);
}

static const char *vk_hints(struct view *v)
{
	struct vk *s = v->priv;
	if (s->editing)
		return "type to filter  Enter keep  Esc clear";
	return v->tui->o.app ? "Enter open  p probe  P off  / filter  s sort  g group  x exited  q quit"
			     : "Enter open  / filter  s sort  g group  x exited  m mangled  q quit";
}

const struct view_ops view_kernels_ops = {
	.name = "kernels",
	.init = vk_init,
	.free = vk_free,
	.key = vk_key,
	.draw = vk_draw,
	.hints = vk_hints,
};
