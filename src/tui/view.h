/* Views are modes (tmux's window_mode, htop's Panel): the kernel list, a
 * kernel's launches, the timeline, the DMAT heatmap, the warps of a regions
 * launch, memory by source line, the help screen, the
 * probe picker and the quit question each export one `struct view_ops`. tui.c keeps a stack of
 * views, sends keys to the top one and draws it into the view region of a
 * cell grid. Views never call curses: keys arrive as the TK_* codes below
 * (term.c translates), output goes into a viz/cellgrid.h grid. */
#ifndef NTOP_TUI_VIEW_H
#define NTOP_TUI_VIEW_H
#include <stdint.h>

#include "viz/cellgrid.h"

struct tui;

/* key() result bits */
enum { VIEW_HANDLED = 1, VIEW_REDRAW = 2, VIEW_QUIT = 4 };

/* Keys: printable ASCII as themselves, control keys as TK_CTRL('x'), the
 * rest from here (outside the byte range). */
#define TK_CTRL(c) ((c) & 0x1f)
enum {
	TK_ESC = 27,
	TK_ENTER = '\n',
	TK_BACKSPACE = 0x7f,
	TK_UP = 0x1000,
	TK_DOWN,
	TK_LEFT,
	TK_RIGHT,
	TK_PGUP,
	TK_PGDN,
	TK_HOME,
	TK_END,
	TK_RESIZE,
	TK_MOUSE_CLICK,   /* tui->mouse_x / mouse_y: screen cell (absolute) */
	TK_MOUSE_DOUBLE,
	TK_WHEEL_UP,
	TK_WHEEL_DOWN,
	TK_F0 = 0x1100,   /* TK_F0 + n is F<n> */
};

struct view;

struct view_ops {
	const char *name;
	/* arg: what the caller opens (a kernel index, a result index...) */
	int (*init)(struct view *v, void *arg);
	void (*free)(struct view *v);
	/* the view's region changed (also called once before the first draw) */
	void (*resize)(struct view *v, int w, int h);
	int (*key)(struct view *v, int key);
	/* draw into g at [x, x + w) x [y, y + h) */
	void (*draw)(struct view *v, struct cellgrid *g, int x, int y, int w, int h);
	/* key hints for the status line ("Enter open  / filter  ? help") */
	const char *(*hints)(struct view *v);
};

struct view {
	const struct view_ops *ops;
	struct tui *tui;
	void *priv;
	int x, y, w, h; /* region of the last resize/draw */
	int modal;      /* drawn over the view below it (dialogs, help) */
};

/* What the heatmap opens: a launch (td->results index) and, to show one
 * source line's accesses only, the sites to keep (bit i: site i, NULL all)
 * and what to call them. */
struct view_heatmap_arg {
	int ri;
	const uint8_t *sites;  /* DMAT_SITES bits, copied */
	const char *label;     /* "attn.py:48 loads", copied */
};

extern const struct view_ops view_kernels_ops;
extern const struct view_ops view_launches_ops;
extern const struct view_ops view_timeline_ops;
extern const struct view_ops view_heatmap_ops;
extern const struct view_ops view_warps_ops;
extern const struct view_ops view_lines_ops;
extern const struct view_ops view_start_ops;
extern const struct view_ops view_help_ops;
extern const struct view_ops view_probes_ops;
extern const struct view_ops view_confirm_ops;

#endif
