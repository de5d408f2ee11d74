/* The help screen: help.c's items flowed into as many columns as fit. */
#include <stdlib.h>

#include "tui/draw.h"
#include "tui/help.h"
#include "tui/tui.h"
#include "tui/view.h"

struct vh {
	int top;
	int rows, visible;
};

static int vh_init(struct view *v, void *arg)
{
	(void)arg;
	v->priv = calloc(1, sizeof(struct vh));
	return v->priv ? 0 : -1;
}

static void vh_free(struct view *v)
{
	free(v->priv);
}

static int vh_key(struct view *v, int key)
{
	struct vh *s = v->priv;
	int max = s->rows - s->visible > 0 ? s->rows - s->visible : 0;
	switch (key) {
	case 'j': case TK_DOWN: case TK_WHEEL_DOWN: s->top++; break;
	case 'k': case TK_UP: case TK_WHEEL_UP: s->top--; break;
	case TK_PGDN: case ' ': s->top += s->visible; break;
	case TK_PGUP: s->top -= s->visible; break;
	case '?': case 'q': case TK_ESC: case TK_ENTER: case TK_F0 + 1: return VIEW_QUIT;
	default: return VIEW_HANDLED; /* the help screen takes every key */
	}
	if (s->top > max)
		s->top = max;
	if (s->top < 0)
		s->top = 0;
	return VIEW_HANDLED | VIEW_REDRAW;
}

static void vh_draw(struct view *v, struct cellgrid *g, int x, int y, int w, int h)
{
	struct vh *s = v->priv;
	struct tui *t = v->tui;
	int kw, cw, rows;
	int cols = layout_help(help_items, help_n_items, w - 2, &kw, &cw, &rows);
	s->rows = rows;
	s->visible = h - 2;
	draw_role(t, g, x + 1, y, w - 1, "ntop keys (q or ? closes)", THEME_ACCENT);
	for (int i = 0; i < help_n_items; i++) {
		int col = i / rows, row = i % rows - s->top;
		if (row < 0 || row >= h - 2)
			continue;
		int cx = x + 1 + col * (cw + 3), cy = y + 2 + row;
		const struct layout_help_item *it = &help_items[i];
		if (!it->what) {
			draw_text(t, g, cx, cy, cw, it->keys, draw_c(t, THEME_ACCENT), t->theme.c[THEME_BG], CELL_BOLD);
			continue;
		}
		draw_role(t, g, cx, cy, kw, it->keys, THEME_SELECTION);
		draw_role(t, g, cx + kw + 2, cy, cw - kw - 2, it->what, THEME_FG);
	}
	(void)cols;
}

static const char *vh_hints(struct view *v)
{
	(void)v;
	return "j/k scroll  q close";
}

const struct view_ops view_help_ops = {
	.name = "help",
	.init = vh_init,
	.free = vh_free,
	.key = vh_key,
	.draw = vh_draw,
	.hints = vh_hints,
};
