/* The one owner of the terminal (htop's CRT.c): ncursesw set-up and
 * tear-down, keys (translated to view.h's TK_* codes, so nothing else
 * includes curses), copying a cell grid to the screen with the colour depth
 * the terminal has, and signals. Handlers only set flags (and wake the
 * loop through a pipe); the crash
 * handlers (SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL) restore the terminal
 * first and then re-raise through the previous handler. term_done is
 * idempotent and also runs at exit, so every path leaves a sane terminal.
 *
 * Colour: none with NO_COLOR, --no-color or a terminal without colours;
 * 24-bit when the terminfo entry has direct colours (TERM=xterm-direct), or
 * COLORTERM=truecolor/24bit and a "-direct" variant of TERM is installed;
 * else 256; else 8. Glyphs: UTF-8 (half blocks, box lines) when the locale's
 * codeset is UTF-8, else ASCII. */
#ifndef NTOP_TUI_TERM_H
#define NTOP_TUI_TERM_H
#include "viz/cellgrid.h"

struct term_opts {
	int no_color;
	int no_mouse;
	int ascii;
};

struct term_info {
	int utf8;
	enum color_depth depth;
	int w, h;
	const char *term_name; /* the terminfo entry in use */
};

/* Whether $TERM names a terminal the UI can drive (known to terminfo, with
 * cursor addressing); -1 with a one-line cause that names what works
 * instead. term_init checks it too; launchers ask first so that nothing is
 * started for a UI that cannot show. */
int term_usable(char **cause);
int term_init(const struct term_opts *o, struct term_info *info, char **cause);
void term_done(void);
int term_active(void);
/* Next key, -1 when none is waiting. Mouse keys set *mx, *my. */
int term_key(int *mx, int *my);
void term_size(int *w, int *h);
/* Copies g to the screen and updates the terminal. */
void term_blit(const struct cellgrid *g);
/* A pending SIGINT/SIGTERM/SIGHUP (cleared), 0 none. */
int term_signal(void);
/* Readable once such a signal arrived (the handler writes to a pipe), so a
 * signal that lands just before poll() still wakes it; -1 when none. */
int term_signal_fd(void);

#endif
