/* Layout maths for the terminal UI, with no curses and no model: where the
 * title, view, log pane and status line go on a w x h screen; which table
 * columns fit a width (columns drop by priority, the flexible name column
 * takes what is left); how help text flows into columns; text clipping by
 * cells. Unit-tested at every width from 40 to 300 (tests/unit/
 * test_tui_layout.c), so nothing overlaps at 80x24 or on a narrow SSH pane. */
#ifndef NTOP_TUI_LAYOUT_H
#define NTOP_TUI_LAYOUT_H
#include <stddef.h>

#define LAYOUT_MIN_W 20 /* below this the UI draws only "terminal too small" */
#define LAYOUT_MIN_H 6

/* Screen regions; rows are [y, y + h). A region with h = 0 is not drawn. */
struct layout_screen {
	int w, h;
	int title_y;             /* one row */
	int view_y, view_h;      /* the current view */
	int log_y, log_h;        /* log pane: its title row plus lines; 0 when hidden */
	int status_y;            /* one row */
	int too_small;           /* draw only a notice */
};

/* show_log: the user wants the log pane; it gets about a third of the rows
 * (at least 3, at most 14) and disappears when the view would get fewer
 * than 4 rows. */
void layout_screen(int w, int h, int show_log, struct layout_screen *out);

/* ---- table columns ---- */
enum layout_align { LAYOUT_LEFT, LAYOUT_RIGHT };

/* Columns of this priority or more also drop to give the flexible column
 * its preferred width; the others only to give it its minimum. */
#define LAYOUT_LUXURY 6

struct layout_col {
	const char *title;
	int width;               /* cells; for the flexible column its minimum */
	int priority;            /* 0 = never dropped; larger drops first */
	int flex;                /* takes the remaining width (one column) */
	enum layout_align align;
	int pref;                /* flexible column: preferred width (0: width) */
};

/* Fits columns into `width` cells, one blank cell between columns. x[i] and
 * w[i] get each column's position and width; w[i] = 0 for a dropped column.
 * Returns the number of columns shown. Higher-priority columns are never
 * dropped while a lower-priority one is shown. */
int layout_columns(const struct layout_col *cols, int n, int width, int *x, int *w);

/* ---- help text ---- */
struct layout_help_item {
	const char *keys;        /* "j k / Up Down" */
	const char *what;        /* "move the selection" */
};

/* How help items flow: items with a NULL `what` are section titles. Returns
 * the number of text columns (1..4) so that every line fits in w; key_w is
 * the width given to keys, col_w a column's width, rows the rows needed. */
int layout_help(const struct layout_help_item *items, int n, int w, int *key_w, int *col_w, int *rows);

/* ---- text ---- */
/* Bytes of the UTF-8 character at s (1 for a stray or cut byte). */
int layout_char_bytes(const char *s);
/* Number of cells of UTF-8 text (one per character). */
int layout_text_cells(const char *s);
/* Copies at most `cells` cells of s into buf (UTF-8 safe), ending with
 * `ellipsis` (e.g. "\u2026" or "~") when s was cut. */
void layout_clip(const char *s, int cells, const char *ellipsis, char *buf, size_t len);
/* Like layout_clip, but what is cut is the middle: the first `keep` cells
 * of s stay (a message's verb: "exported "), then `ellipsis`, then as much
 * of the end as fits (a path's file name, an error's reason). keep is
 * dropped too when even one cell of the end would not fit after it. */
void layout_clip_tail(const char *s, int keep, int cells, const char *ellipsis, char *buf, size_t len);
/* s broken into rows of at most `cells` cells, after a blank where one
 * lies in the row's second half, else anywhere (paths); continuation rows
 * indented by `indent` blanks (the log pane). Returns the rows needed; with
 * buf, row `row` (0 = first) is copied into it, indent included. Every
 * character of s is in exactly one row (a blank at the end of its row). */
int layout_wrap(const char *s, int cells, int indent, int row, char *buf, size_t len);
/* First visible list row for a selection: keeps sel inside [top, top + rows). */
int layout_scroll(int top, int sel, int rows, int n);

#endif
