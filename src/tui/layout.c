/* Layout maths (layout.h): pure functions of sizes and strings. */
#include "tui/layout.h"

#include <string.h>

void layout_screen(int w, int h, int show_log, struct layout_screen *o)
{
	memset(o, 0, sizeof *o);
	o->w = w;
	o->h = h;
	if (w < LAYOUT_MIN_W || h < LAYOUT_MIN_H) {
		o->too_small = 1;
		o->status_y = h > 0 ? h - 1 : 0;
		return;
	}
	o->title_y = 0;
	o->status_y = h - 1;
	int body = h - 2; /* between title and status */
	int log_h = 0;
	if (show_log) {
		log_h = body / 3;
		if (log_h < 3)
			log_h = 3;
		if (log_h > 14)
			log_h = 14;
		if (body - log_h < 4)
			log_h = 0;
	}
	o->view_y = 1;
	o->view_h = body - log_h;
	o->log_h = log_h;
	o->log_y = log_h ? o->view_y + o->view_h : 0;
}

/* ---- columns ---- */

static int layout_total(const struct layout_col *c, int n, const int *on, int pref)
{
	int sum = 0, shown = 0;
	for (int i = 0; i < n; i++)
		if (on[i]) {
			sum += pref && c[i].flex && c[i].pref > c[i].width ? c[i].pref : c[i].width;
			shown++;
		}
	return sum + (shown > 1 ? shown - 1 : 0);
}

/* The shown column that drops next (highest priority number, rightmost on a
 * tie), or -1 when only never-dropped columns are left. */
static int layout_victim(const struct layout_col *c, int n, const int *on, int min_prio)
{
	int v = -1;
	for (int i = 0; i < n; i++)
		if (on[i] && c[i].priority > 0 && c[i].priority >= min_prio && (v < 0 || c[i].priority >= c[v].priority))
			v = i;
	return v;
}

int layout_columns(const struct layout_col *c, int n, int width, int *x, int *w)
{
	int on[64];
	if (n > 64)
		n = 64;
	for (int i = 0; i < n; i++)
		on[i] = 1;
	/* luxury columns make room for the flexible column's preferred width,
	 * then anything but the never-dropped ones for its minimum */
	while (layout_total(c, n, on, 1) > width) {
		int v = layout_victim(c, n, on, LAYOUT_LUXURY);
		if (v < 0)
			break;
		on[v] = 0;
	}
	while (layout_total(c, n, on, 0) > width) {
		int v = layout_victim(c, n, on, 1);
		if (v < 0)
			break;
		on[v] = 0;
	}
	int spare = width - layout_total(c, n, on, 0), pos = 0, shown = 0;
	if (spare < 0)
		spare = 0;
	int flex = -1;
	for (int i = 0; i < n; i++)
		if (on[i] && c[i].flex && flex < 0)
			flex = i;
	for (int i = 0; i < n; i++) {
		if (!on[i]) {
			x[i] = 0;
			w[i] = 0;
			continue;
		}
		if (shown)
			pos++;
		int cw = c[i].width + (i == flex ? spare : 0);
		if (pos + cw > width) /* never-dropped columns wider than the screen */
			cw = width - pos > 0 ? width - pos : 0;
		x[i] = pos;
		w[i] = cw;
		pos += cw;
		shown += cw > 0;
	}
	return shown;
}

/* ---- help ---- */

int layout_help(const struct layout_help_item *it, int n, int w, int *key_w, int *col_w, int *rows)
{
	int kw = 0, ww = 0;
	for (int i = 0; i < n; i++) {
		int k = layout_text_cells(it[i].keys);
		if (!it[i].what) { /* a section title spans key and text */
			if (k > ww)
				ww = k;
			continue;
		}
		if (k > kw)
			kw = k;
		int t = layout_text_cells(it[i].what);
		if (t > ww)
			ww = t;
	}
	if (kw > 18)
		kw = 18;
	int cols = 1;
	for (int c = 4; c > 1; c--)
		if (c * (kw + 2 + ww) + (c - 1) * 3 <= w) {
			cols = c;
			break;
		}
	*key_w = kw;
	*col_w = cols > 1 ? (w - (cols - 1) * 3) / cols : w;
	*rows = (n + cols - 1) / cols;
	return cols;
}

/* ---- text ---- */

/* Bytes of the UTF-8 character at s (1 for a stray byte). */
static int layout_char_len(const unsigned char *s)
{
	int n = *s < 0x80 ? 1 : (*s & 0xe0) == 0xc0 ? 2 : (*s & 0xf0) == 0xe0 ? 3 : (*s & 0xf8) == 0xf0 ? 4 : 1;
	for (int i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 1;
	return n;
}

int layout_char_bytes(const char *s)
{
	return layout_char_len((const unsigned char *)s);
}

int layout_text_cells(const char *s)
{
	int n = 0;
	if (!s)
		return 0;
	while (*s) {
		s += layout_char_len((const unsigned char *)s);
		n++;
	}
	return n;
}

/* Copies `n` cells of s starting at cell `from` to buf + *o (UTF-8 safe,
 * never past len - 1). */
static void layout_copy_cells(const char *s, int from, int n, char *buf, size_t len, size_t *o)
{
	const char *p = s;
	for (int i = 0; i < from && *p; i++)
		p += layout_char_len((const unsigned char *)p);
	for (int i = 0; i < n && *p; i++) {
		int cl = layout_char_len((const unsigned char *)p);
		if (*o + (size_t)cl >= len)
			break;
		memcpy(buf + *o, p, (size_t)cl);
		*o += (size_t)cl;
		p += cl;
	}
	buf[*o] = 0;
}

void layout_clip(const char *s, int cells, const char *ellipsis, char *buf, size_t len)
{
	if (!len)
		return;
	buf[0] = 0;
	if (!s || cells <= 0)
		return;
	int total = layout_text_cells(s);
	int keep = total <= cells ? total : cells - layout_text_cells(ellipsis);
	size_t o = 0;
	layout_copy_cells(s, 0, keep < 0 ? 0 : keep, buf, len, &o);
	if (total > cells && ellipsis) {
		size_t el = strlen(ellipsis);
		if (o + el < len)
			memcpy(buf + o, ellipsis, el + 1);
	}
}

void layout_clip_tail(const char *s, int keep, int cells, const char *ellipsis, char *buf, size_t len)
{
	if (!len)
		return;
	buf[0] = 0;
	if (!s || cells <= 0)
		return;
	int total = layout_text_cells(s), el = layout_text_cells(ellipsis);
	size_t o = 0;
	if (total <= cells) {
		layout_copy_cells(s, 0, total, buf, len, &o);
		return;
	}
	if (keep < 0 || keep + el + 1 > cells)
		keep = 0;
	int tail = cells - keep - el;
	if (tail < 0) { /* not even room for the ellipsis */
		layout_copy_cells(s, total - cells, cells, buf, len, &o);
		return;
	}
	layout_copy_cells(s, 0, keep, buf, len, &o);
	layout_copy_cells(ellipsis, 0, el, buf, len, &o);
	layout_copy_cells(s, total - tail, tail, buf, len, &o);
}

/* Cells of the row that starts at s with room for `room` cells: all of it
 * when it fits, else up to and including the last blank of the row when
 * that keeps more than half the row (a word is not split), else `room`. */
static int layout_row_cells(const char *s, int room)
{
	int n = 0, blank = -1;
	const char *p = s;
	for (; *p && n < room; n++) {
		if (*p == ' ')
			blank = n;
		p += layout_char_len((const unsigned char *)p);
	}
	if (!*p || n < room)
		return n;
	return blank >= room / 2 ? blank + 1 : room;
}

int layout_wrap(const char *s, int cells, int indent, int row, char *buf, size_t len)
{
	if (indent >= cells)
		indent = 0;
	if (buf && len)
		buf[0] = 0;
	if (!s || cells <= 0)
		return 1;
	int rows = 0;
	const char *p = s;
	do {
		int room = rows ? cells - indent : cells;
		int n = layout_row_cells(p, room);
		if (rows == row && buf && len) {
			size_t o = 0;
			for (int i = 0; rows && i < indent && o + 1 < len; i++)
				buf[o++] = ' ';
			buf[o] = 0;
			layout_copy_cells(p, 0, n, buf, len, &o);
		}
		for (int i = 0; i < n; i++)
			p += layout_char_len((const unsigned char *)p);
		rows++;
	} while (*p);
	return rows;
}

int layout_scroll(int top, int sel, int rows, int n)
{
	if (rows <= 0 || n <= 0)
		return 0;
	if (sel < top)
		top = sel;
	if (sel >= top + rows)
		top = sel - rows + 1;
	if (top > n - rows)
		top = n - rows;
	return top < 0 ? 0 : top;
}
