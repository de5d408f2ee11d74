/* A grid of terminal cells, drawn by render_term.c without curses: the TUI
 * copies the cells to the screen (picking the colour field its terminal can
 * show), a snapshot mode can print them with ANSI escapes, and tests compare
 * rows as strings. Colour depth downgrade (tmux's RGB -> 256 -> 16 order)
 * lives here too: every cell carries its true colour and the 256- and
 * 8-colour indices. */
#ifndef NTOP_CELLGRID_H
#define NTOP_CELLGRID_H
#include <stddef.h>
#include <stdint.h>

#include "common/strbuf.h"
#include "viz/theme.h"

#define CELL_GLYPH_MAX 8 /* a UTF-8 character (up to 4 bytes) and its NUL */

enum cell_attr { CELL_BOLD = 1, CELL_REVERSE = 2, CELL_UNDERLINE = 4 };

struct cell {
	char glyph[CELL_GLYPH_MAX]; /* UTF-8, NUL-terminated; "" is never used (blank = " ") */
	struct rgb fg, bg;
	uint8_t fg256, bg256;       /* xterm-256 palette indices */
	uint8_t fg8, bg8;           /* ANSI 0-7; fg8 != bg8 when the glyph has ink */
	uint8_t attr;               /* enum cell_attr bits */
};

struct cellgrid {
	int w, h;
	struct cell *cells;         /* [h][w] */
	struct rgb base_bg;         /* the screen background (from cellgrid_clear) */
};

enum color_depth { DEPTH_RGB, DEPTH_256, DEPTH_8, DEPTH_NONE };

struct cellgrid *cellgrid_create(int w, int h);
void cellgrid_free(struct cellgrid *g);
struct cell *cellgrid_at(struct cellgrid *g, int x, int y); /* NULL outside */
/* Every cell blank with these colours. */
void cellgrid_clear(struct cellgrid *g, struct rgb fg, struct rgb bg);
/* Sets one cell (ignored outside); the palette indices are derived. Where a
 * glyph with ink sits on the screen background and its colour collapses
 * into the background's index at 256 or 8 colours, the index is moved off
 * it, so ink never vanishes on a poor terminal. */
void cellgrid_set(struct cellgrid *g, int x, int y, const char *glyph, struct rgb fg, struct rgb bg,
		  uint8_t attr);
/* Makes *g a w x h grid (at least 1 x 1), replacing it only when its size
 * differs; -1 when out of memory (then *g is NULL). */
int cellgrid_fit(struct cellgrid **g, int w, int h);
/* Copies src into dst with its top-left corner at (x, y), clipped to dst. */
void cellgrid_blit(struct cellgrid *dst, const struct cellgrid *src, int x, int y);
/* One cell holding two stacked pixels (UTF-8 half blocks): the upper one
 * lit in `top` when top_on, the lower one in `bot` when bot_on; a cell with
 * neither is left as it is. */
void cellgrid_half(struct cellgrid *g, int x, int y, int top_on, struct rgb top, int bot_on, struct rgb bot,
		   struct rgb bg);
/* Writes UTF-8 text from (x, y), one cell per character, clipped at the
 * grid's edge or after max_cells (< 0: no limit); returns cells written. */
int cellgrid_puts(struct cellgrid *g, int x, int y, const char *s, struct rgb fg, struct rgb bg,
		  int max_cells);
/* The glyphs of row y concatenated (for tests and plain snapshots). */
void cellgrid_row_text(const struct cellgrid *g, int y, struct strbuf *sb);
/* The whole grid as text with SGR colour escapes for `depth`, one line per row. */
void cellgrid_ansi(const struct cellgrid *g, enum color_depth depth, struct strbuf *sb);

/* ---- colour depth ---- */
/* Nearest xterm-256 colour among the 6x6x6 cube (16-231) and the grey ramp (232-255). */
uint8_t color_rgb_to_256(struct rgb c);
/* The colour xterm shows for a 256-palette index. */
struct rgb color_256_to_rgb(uint8_t idx);
/* Nearest of the 8 ANSI colours (0 black .. 7 white) for a 256-palette index. */
uint8_t color_256_to_8(uint8_t idx);
/* Count of UTF-8 characters in s (for cell widths; all our glyphs are one cell). */
int cellgrid_utf8_len(const char *s);

#endif
