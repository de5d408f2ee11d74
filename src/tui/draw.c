/* Drawing helpers (draw.h). */
#include "tui/draw.h"

#include <string.h>

#include "viz/textfit.h"

struct rgb draw_c(const struct tui *t, int role)
{
	return role >= 0 && role < THEME_N_ROLES ? t->theme.c[role] : t->theme.c[THEME_FG];
}

void draw_fill(struct cellgrid *g, int x, int y, int w, int h, struct rgb bg)
{
	for (int r = y; r < y + h; r++)
		for (int c = x; c < x + w; c++)
			cellgrid_set(g, c, r, " ", bg, bg, 0);
}

int draw_text(const struct tui *t, struct cellgrid *g, int x, int y, int w, const char *s, struct rgb fg,
	      struct rgb bg, int attr)
{
	char buf[1024];
	if (w <= 0 || !s)
		return 0;
	layout_clip(s, w, draw_ellipsis(t), buf, sizeof buf);
	int n = 0;
	for (const char *p = buf; *p && n < w; n++) {
		int b = layout_char_bytes(p);
		char ch[CELL_GLYPH_MAX];
		memcpy(ch, p, (size_t)b);
		ch[b] = 0;
		if ((unsigned char)ch[0] < 0x20 || (!t->utf8 && (unsigned char)ch[0] >= 0x80))
			strcpy(ch, "?");
		cellgrid_set(g, x + n, y, ch, fg, bg, (uint8_t)attr);
		p += b;
	}
	return n;
}

void draw_cell(const struct tui *t, struct cellgrid *g, int x, int y, int w, const char *s, enum layout_align a,
	       struct rgb fg, struct rgb bg, int attr)
{
	if (w <= 0)
		return;
	for (int i = 0; i < w; i++)
		cellgrid_set(g, x + i, y, " ", fg, bg, (uint8_t)attr);
	int n = layout_text_cells(s);
	int off = a == LAYOUT_RIGHT && n < w ? w - n : 0;
	draw_text(t, g, x + off, y, w - off, s, fg, bg, attr);
}

int draw_role(const struct tui *t, struct cellgrid *g, int x, int y, int w, const char *s, int role)
{
	return draw_text(t, g, x, y, w, s, draw_c(t, role), t->theme.c[THEME_BG], 0);
}

const char *draw_ellipsis(const struct tui *t)
{
	return t->utf8 ? "\xe2\x80\xa6" : "~";
}

int draw_fields(const struct tui *t, struct cellgrid *g, int x, int y, int w, const char *s, struct rgb fg,
		struct rgb bg, int attr)
{
	char buf[1024];
	textfit_fields(s, w, draw_ellipsis(t), buf, sizeof buf);
	return draw_text(t, g, x, y, w, buf, fg, bg, attr);
}

int draw_wrapped(const struct tui *t, struct cellgrid *g, int x, int y, int w, int max_rows, const char *s,
		 int role)
{
	char row[1100];
	int n = layout_wrap(s, w, 2, 0, NULL, 0), r = 0;
	for (; r < n && r < max_rows; r++) {
		layout_wrap(s, w, 2, r, row, sizeof row);
		int used = draw_role(t, g, x, y + r, w, row, role);
		if (r == max_rows - 1 && r < n - 1) /* more than fits: mark the cut */
			draw_role(t, g, x + (used < w ? used : w - 1), y + r, 1, draw_ellipsis(t), role);
	}
	return r;
}

void draw_title(const struct tui *t, struct cellgrid *g, int x, int y, int w, const char *details, const char *name,
		struct rgb fg, struct rgb bg, int attr)
{
	int dl = layout_text_cells(details), nl = layout_text_cells(name);
	int name_w = nl, used = 0;
	if (dl + 2 + nl > w) {
		int room = w - dl - 2 > w * 2 / 3 ? w - dl - 2 : w * 2 / 3;
		name_w = nl < room ? nl : room;
	}
	if (w - name_w - 2 >= 6)
		used = draw_fields(t, g, x, y, w - name_w - 2, details, fg, bg, attr) + 2;
	draw_text(t, g, x + used, y, w - used, name, fg, bg, attr);
}

const char *draw_hline(const struct tui *t)
{
	return t->utf8 ? "\xe2\x94\x80" : "-";
}

void draw_box(struct tui *t, struct cellgrid *g, int x, int y, int w, int h, const char *title)
{
	struct rgb bg = rgb_mix(t->theme.c[THEME_BG], t->theme.c[THEME_FG], 0.10);
	struct rgb fr = draw_c(t, THEME_ACCENT);
	draw_fill(g, x, y, w, h, bg);
	const char *hz = t->utf8 ? "\xe2\x94\x80" : "-", *vt = t->utf8 ? "\xe2\x94\x82" : "|";
	for (int i = 1; i < w - 1; i++) {
		cellgrid_set(g, x + i, y, hz, fr, bg, 0);
		cellgrid_set(g, x + i, y + h - 1, hz, fr, bg, 0);
	}
	for (int j = 1; j < h - 1; j++) {
		cellgrid_set(g, x, y + j, vt, fr, bg, 0);
		cellgrid_set(g, x + w - 1, y + j, vt, fr, bg, 0);
	}
	cellgrid_set(g, x, y, t->utf8 ? "\xe2\x94\x8c" : "+", fr, bg, 0);
	cellgrid_set(g, x + w - 1, y, t->utf8 ? "\xe2\x94\x90" : "+", fr, bg, 0);
	cellgrid_set(g, x, y + h - 1, t->utf8 ? "\xe2\x94\x94" : "+", fr, bg, 0);
	cellgrid_set(g, x + w - 1, y + h - 1, t->utf8 ? "\xe2\x94\x98" : "+", fr, bg, 0);
	if (title)
		draw_text(t, g, x + 2, y, w - 4, title, fr, bg, CELL_BOLD);
}
