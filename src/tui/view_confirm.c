/* The question asked when the user quits (q, Ctrl-C) while the application
 * runs: kill it, detach (the UI stops; the application goes on and the
 * session library keeps copying its events and output into the session
 * directory until it exits, but nothing probes anew: no one writes the
 * control file any more), or cancel. Drawn over the view below. */
#include <stdio.h>
#include <stdlib.h>

#include "tui/draw.h"
#include "tui/tui.h"
#include "tui/view.h"

static int vc_init(struct view *v, void *arg)
{
	(void)arg;
	v->modal = 1;
	return 0;
}

static int vc_key(struct view *v, int key)
{
	struct tui *t = v->tui;
	switch (key) {
	case 'k':
	case 'K':
		if (t->o.app && t->o.app->kill)
			t->o.app->kill(t->o.app->ctx);
		t->quit = 1;
		return VIEW_HANDLED;
	case 'd':
	case 'D':
		if (t->o.app && t->o.app->detach)
			t->o.app->detach(t->o.app->ctx);
		t->app_state.detached = 1;
		t->quit = 1;
		return VIEW_HANDLED;
	case 'c': case 'n': case 'q': case TK_ESC: case TK_CTRL('c'):
		return VIEW_QUIT;
	default:
		return VIEW_HANDLED;
	}
}

static void vc_draw(struct view *v, struct cellgrid *g, int x, int y, int w, int h)
{
	struct tui *t = v->tui;
	char l0[160];
	snprintf(l0, sizeof l0, "The application (pid %d) is still running.", t->app_state.pid);
	const char *lines[] = {
		l0,
		"",
		"k  kill it (SIGTERM, then SIGKILL) and quit",
		"d  detach: quit the UI; the application runs on,",
		"   its events still go to the session directory",
		"c  cancel (also Esc)",
	};
	int n = (int)(sizeof lines / sizeof lines[0]);
	int bw = 52 < w ? 52 : w, bh = n + 2 < h ? n + 2 : h;
	int bx = x + (w - bw) / 2, by = y + (h - bh) / 2;
	draw_box(t, g, bx, by, bw, bh, "Quit ntop?");
	struct rgb bg = rgb_mix(t->theme.c[THEME_BG], t->theme.c[THEME_FG], 0.10);
	for (int i = 0; i < n && i < bh - 2; i++)
		draw_text(t, g, bx + 2, by + 1 + i, bw - 4, lines[i], draw_c(t, i ? THEME_FG : THEME_WARN), bg, 0);
}

static const char *vc_hints(struct view *v)
{
	(void)v;
	return "k kill  d detach  c cancel";
}

const struct view_ops view_confirm_ops = {
	.name = "quit",
	.init = vc_init,
	.key = vc_key,
	.draw = vc_draw,
	.hints = vc_hints,
};
