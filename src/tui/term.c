/* Terminal ownership (term.h). The only file that includes curses. */
#ifndef NCURSES_WIDECHAR
#define NCURSES_WIDECHAR 1
#endif
#include "tui/term.h"

#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <term.h>
#include <unistd.h>

#include "common/cause.h"
#include "common/timeutil.h"
#include "tui/view.h"

#define TERM_DOUBLE_NS 400000000ull /* two clicks this close are a double click */

static SCREEN *term_screen;
static int term_on;
static enum color_depth term_depth;
static volatile sig_atomic_t term_sig;
static struct sigaction term_old[65];
static int term_mouse_x = -1, term_mouse_y = -1;
static uint64_t term_mouse_t;
static int term_queue[8], term_nq; /* bytes of a wide character, for the filter */

static const int term_crash_sigs[] = {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL};
static const int term_quit_sigs[] = {SIGINT, SIGTERM, SIGHUP};

/* ---- signals ---- */

static int term_sigpipe[2] = {-1, -1}; /* the handler's wake-up for poll() */

static void term_on_quit(int sig)
{
	int e = errno;
	term_sig = sig;
	if (term_sigpipe[1] >= 0 && write(term_sigpipe[1], "s", 1) < 0) {
		/* full: a wake-up is pending anyway */
	}
	errno = e;
}

static void term_on_crash(int sig)
{
	if (term_on) {
		term_on = 0;
		endwin(); /* not async-signal-safe, but the process is dying anyway */
	}
	sigaction(sig, &term_old[sig], NULL);
	raise(sig);
}

static void term_signals(void)
{
	if (term_sigpipe[0] < 0 && pipe2(term_sigpipe, O_CLOEXEC | O_NONBLOCK) < 0)
		term_sigpipe[0] = term_sigpipe[1] = -1;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = term_on_quit;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof term_quit_sigs / sizeof term_quit_sigs[0]; i++)
		sigaction(term_quit_sigs[i], &sa, &term_old[term_quit_sigs[i]]);
	sa.sa_handler = term_on_crash;
	sa.sa_flags = SA_RESETHAND;
	for (size_t i = 0; i < sizeof term_crash_sigs / sizeof term_crash_sigs[0]; i++)
		sigaction(term_crash_sigs[i], &sa, &term_old[term_crash_sigs[i]]);
	signal(SIGPIPE, SIG_IGN);
}

static void term_unsignals(void)
{
	for (size_t i = 0; i < sizeof term_quit_sigs / sizeof term_quit_sigs[0]; i++)
		sigaction(term_quit_sigs[i], &term_old[term_quit_sigs[i]], NULL);
	for (size_t i = 0; i < sizeof term_crash_sigs / sizeof term_crash_sigs[0]; i++)
		sigaction(term_crash_sigs[i], &term_old[term_crash_sigs[i]], NULL);
}

int term_signal(void)
{
	char buf[16];
	while (term_sigpipe[0] >= 0 && read(term_sigpipe[0], buf, sizeof buf) > 0)
		;
	int s = term_sig;
	term_sig = 0;
	return s;
}

int term_signal_fd(void)
{
	return term_sigpipe[0];
}

/* ---- set-up ---- */

static int term_terminfo_exists(const char *name)
{
	int err = 0;
	TERMINAL *saved = cur_term;
	if (setupterm(name, STDOUT_FILENO, &err) != OK)
		return 0;
	del_curterm(cur_term);
	set_curterm(saved);
	return 1;
}

/* The UI moves the cursor everywhere: a terminal that cannot (TERM=dumb,
 * an Emacs shell buffer, TERM unset under cron or a bare container) would
 * show a blank screen, so it is refused up front with what works instead. */
int term_usable(char **cause)
{
	const char *term = getenv("TERM");
	static const char alt[] = "for scripts use 'ntop record' and 'ntop report'";
	if (!term || !*term)
		return cause_set(cause, "TERM is not set, so the terminal UI cannot drive this terminal "
				        "(set it, e.g. TERM=xterm-256color; %s)", alt);
	int err = 0;
	TERMINAL *saved = cur_term;
	if (setupterm(term, STDOUT_FILENO, &err) != OK)
		return cause_set(cause, "TERM=%s is unknown to terminfo, so the terminal UI cannot drive this "
				        "terminal (try TERM=xterm-256color; %s)", term, alt);
	const char *cup = tigetstr("cup");
	int ok = cup && cup != (const char *)-1;
	del_curterm(cur_term);
	set_curterm(saved);
	if (!ok)
		return cause_set(cause, "TERM=%s cannot move the cursor, which the terminal UI needs "
				        "(use a terminal that can, e.g. TERM=xterm-256color; %s)", term, alt);
	return 0;
}

/* "xterm-256color" + COLORTERM=truecolor -> "xterm-direct" when installed. */
static const char *term_pick_name(int no_color, char *buf, size_t len)
{
	const char *term = getenv("TERM"), *ct = getenv("COLORTERM");
	if (no_color || !term || !ct || (strcmp(ct, "truecolor") && strcmp(ct, "24bit")) || strstr(term, "direct"))
		return NULL;
	snprintf(buf, len, "%s", term);
	char *dash = strchr(buf, '-');
	if (dash)
		*dash = 0;
	if (strlen(buf) + 8 > len)
		return NULL;
	strcat(buf, "-direct");
	return term_terminfo_exists(buf) ? buf : NULL;
}

static enum color_depth term_colors(const struct term_opts *o)
{
	const char *nc = getenv("NO_COLOR");
	if (o->no_color || (nc && *nc) || !has_colors())
		return DEPTH_NONE;
	if (start_color() != OK)
		return DEPTH_NONE;
	if (COLORS >= 0x1000000)
		return DEPTH_RGB;
	if (COLORS >= 256)
		return DEPTH_256;
	return COLORS >= 8 ? DEPTH_8 : DEPTH_NONE;
}

static void term_atexit(void)
{
	term_done();
}

int term_init(const struct term_opts *o, struct term_info *info, char **cause)
{
	static int registered;
	memset(info, 0, sizeof *info);
	setlocale(LC_ALL, "");
	info->utf8 = !o->ascii && strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
		return cause_set(cause, "the terminal UI needs a terminal on stdin and stdout "
				        "(for scripts use 'ntop record' and 'ntop report')");
	if (term_usable(cause) < 0)
		return -1;
	char namebuf[64];
	const char *name = term_pick_name(o->no_color, namebuf, sizeof namebuf);
	term_signals(); /* before newterm, so ncurses leaves SIGINT/SIGTERM to us */
	if (!registered++)
		atexit(term_atexit);
	if (!getenv("ESCDELAY"))
		set_escdelay(25);
	term_screen = newterm(name, stdout, stdin);
	if (!term_screen && name)
		term_screen = newterm(NULL, stdout, stdin);
	if (!term_screen) {
		term_unsignals();
		return cause_set(cause, "cannot initialise the terminal (TERM=%s unknown to terminfo?)",
				 getenv("TERM") ? getenv("TERM") : "unset");
	}
	term_on = 1;
	raw();
	noecho();
	nonl();
	curs_set(0);
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	meta(stdscr, TRUE);
	term_depth = term_colors(o);
	if (!o->no_mouse) {
		mouseinterval(0);
		mousemask(BUTTON1_PRESSED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
	}
	info->depth = term_depth;
	info->term_name = termname();
	getmaxyx(stdscr, info->h, info->w);
	return 0;
}

void term_done(void)
{
	if (!term_on)
		return;
	term_on = 0;
	mousemask(0, NULL);
	curs_set(1);
	endwin();
	delscreen(term_screen);
	term_screen = NULL;
	term_unsignals();
}

int term_active(void)
{
	return term_on;
}

void term_size(int *w, int *h)
{
	getmaxyx(stdscr, *h, *w);
}

/* ---- keys ---- */

static int term_mouse(int *mx, int *my)
{
	MEVENT ev;
	if (getmouse(&ev) != OK)
		return -1;
	*mx = ev.x;
	*my = ev.y;
	if (ev.bstate & BUTTON4_PRESSED)
		return TK_WHEEL_UP;
	if (ev.bstate & BUTTON5_PRESSED)
		return TK_WHEEL_DOWN;
	if (!(ev.bstate & BUTTON1_PRESSED))
		return -1;
	uint64_t now = time_mono_ns();
	int dbl = ev.x == term_mouse_x && ev.y == term_mouse_y && now - term_mouse_t < TERM_DOUBLE_NS;
	term_mouse_x = dbl ? -1 : ev.x;
	term_mouse_y = ev.y;
	term_mouse_t = now;
	return dbl ? TK_MOUSE_DOUBLE : TK_MOUSE_CLICK;
}

static int term_special(int k, int *mx, int *my)
{
	switch (k) {
	case KEY_UP: return TK_UP;
	case KEY_DOWN: return TK_DOWN;
	case KEY_LEFT: return TK_LEFT;
	case KEY_RIGHT: return TK_RIGHT;
	case KEY_PPAGE: return TK_PGUP;
	case KEY_NPAGE: return TK_PGDN;
	case KEY_HOME: return TK_HOME;
	case KEY_END: return TK_END;
	case KEY_RESIZE: return TK_RESIZE;
	case KEY_BACKSPACE: return TK_BACKSPACE;
	case KEY_ENTER: return TK_ENTER;
	case KEY_MOUSE: return term_mouse(mx, my);
	default:
		if (k >= KEY_F(1) && k <= KEY_F(12))
			return TK_F0 + (k - KEY_F(0));
		return -2; /* ignored */
	}
}

/* A wide character as UTF-8 bytes, queued one per key. */
static int term_wide(wint_t c)
{
	char buf[8];
	int n = 0;
	if (c < 0x800) {
		buf[n++] = (char)(0xc0 | (c >> 6));
	} else if (c < 0x10000) {
		buf[n++] = (char)(0xe0 | (c >> 12));
		buf[n++] = (char)(0x80 | ((c >> 6) & 0x3f));
	} else {
		buf[n++] = (char)(0xf0 | (c >> 18));
		buf[n++] = (char)(0x80 | ((c >> 12) & 0x3f));
		buf[n++] = (char)(0x80 | ((c >> 6) & 0x3f));
	}
	buf[n++] = (char)(0x80 | (c & 0x3f));
	for (int i = 1; i < n; i++)
		term_queue[term_nq++] = (unsigned char)buf[i];
	return (unsigned char)buf[0];
}

int term_key(int *mx, int *my)
{
	if (term_nq) {
		int k = term_queue[0];
		memmove(term_queue, term_queue + 1, (size_t)--term_nq * sizeof term_queue[0]);
		return k;
	}
	for (;;) {
		wint_t c;
		int r = get_wch(&c);
		if (r == ERR)
			return -1;
		if (r == KEY_CODE_YES) {
			int k = term_special((int)c, mx, my);
			if (k == -2)
				continue;
			return k;
		}
		if (c == '\r' || c == '\n')
			return TK_ENTER;
		if (c == 8)
			return TK_BACKSPACE;
		if (c >= 0x80)
			return term_wide(c);
		return (int)c;
	}
}

/* ---- drawing ---- */

static wchar_t term_decode(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	if (p[0] < 0x80)
		return p[0];
	if ((p[0] & 0xe0) == 0xc0 && (p[1] & 0xc0) == 0x80)
		return (wchar_t)(((p[0] & 0x1f) << 6) | (p[1] & 0x3f));
	if ((p[0] & 0xf0) == 0xe0 && (p[1] & 0xc0) == 0x80 && (p[2] & 0xc0) == 0x80)
		return (wchar_t)(((p[0] & 0x0f) << 12) | ((p[1] & 0x3f) << 6) | (p[2] & 0x3f));
	if ((p[0] & 0xf8) == 0xf0 && (p[1] & 0xc0) == 0x80 && (p[2] & 0xc0) == 0x80 && (p[3] & 0xc0) == 0x80)
		return (wchar_t)(((p[0] & 0x07) << 18) | ((p[1] & 0x3f) << 12) | ((p[2] & 0x3f) << 6) | (p[3] & 0x3f));
	return L'?';
}

static int term_pair(const struct cell *c)
{
	static int last_fg = -1, last_bg = -1, last_pair;
	int fg, bg;
	switch (term_depth) {
	case DEPTH_RGB:
		fg = (c->fg.r << 16) | (c->fg.g << 8) | c->fg.b;
		bg = (c->bg.r << 16) | (c->bg.g << 8) | c->bg.b;
		break;
	case DEPTH_256: fg = c->fg256; bg = c->bg256; break;
	case DEPTH_8: fg = c->fg8; bg = c->bg8; break;
	default: return 0;
	}
	if (fg == last_fg && bg == last_bg)
		return last_pair;
	int p = alloc_pair(fg, bg);
	last_fg = fg;
	last_bg = bg;
	last_pair = p > 0 ? p : 0;
	return last_pair;
}

void term_blit(const struct cellgrid *g)
{
	if (!term_on)
		return;
	int w, h;
	getmaxyx(stdscr, h, w);
	for (int y = 0; y < g->h && y < h; y++)
		for (int x = 0; x < g->w && x < w; x++) {
			const struct cell *c = &g->cells[(size_t)y * g->w + x];
			wchar_t wc[2] = {term_decode(c->glyph), 0};
			attr_t a = 0;
			if (c->attr & CELL_BOLD)
				a |= A_BOLD;
			if (c->attr & CELL_REVERSE)
				a |= A_REVERSE;
			if (c->attr & CELL_UNDERLINE)
				a |= A_UNDERLINE;
			int pair = term_pair(c);
			cchar_t cc;
			setcchar(&cc, wc, a, 0, &pair);
			mvadd_wch(y, x, &cc);
		}
	wnoutrefresh(stdscr);
	doupdate();
}
