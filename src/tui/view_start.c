/* The start screen (`ntop` alone on a terminal): the machine's GPUs (NVML:
 * utilisation, memory, compute processes, those of the user's running
 * sessions counted apart) and the user's sessions, newest first. Enter on
 * a running session attaches to it, on an ended one opens it; n asks for a
 * program to start under ntop. The choice is handed back in
 * t->o.start->next (ntop runs it once the UI has given the terminal
 * back). Figures are refreshed each time the screen is drawn (at least
 * once a second). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tui/draw.h"
#include "tui/tui.h"
#include "tui/view.h"

#define VS_GPUS 32
#define VS_SESSIONS 200

struct vs {
	struct tui_gpu gpu[VS_GPUS];
	int n_gpu;
	char gpu_why[160];
	struct tui_session ses[VS_SESSIONS];
	int n_ses;
	int sel, top, list_h;
	int prompting;         /* n: typing a command line */
	char cmd[512];
};

static int vs_init(struct view *v, void *arg)
{
	(void)arg;
	if (!v->tui->o.start)
		return -1;
	v->priv = calloc(1, sizeof(struct vs));
	return v->priv ? 0 : -1;
}

static void vs_free(struct view *v)
{
	free(v->priv);
}

static void vs_refresh(struct vs *s, struct tui_start *st)
{
	s->gpu_why[0] = 0;
	s->n_gpu = st->gpus ? st->gpus(st->ctx, s->gpu, VS_GPUS, s->gpu_why, sizeof s->gpu_why) : -1;
	s->n_ses = st->sessions ? st->sessions(st->ctx, s->ses, VS_SESSIONS) : 0;
	if (s->sel >= s->n_ses)
		s->sel = s->n_ses - 1;
	if (s->sel < 0)
		s->sel = 0;
}

/* argv (malloc'd) for ntop to run after the UI. */
static void vs_choose(struct tui *t, const char *const *words, int n)
{
	char **v = calloc((size_t)n + 2, sizeof *v);
	if (!v)
		return;
	v[0] = strdup("ntop");
	for (int i = 0; i < n; i++)
		v[i + 1] = strdup(words[i]);
	t->o.start->next = v;
	t->quit = 1;
}

/* The command line typed after n: words split at spaces (no shell). */
static void vs_run_typed(struct tui *t, struct vs *s)
{
	const char *w[64];
	int n = 0;
	w[n++] = "--";
	for (char *p = strtok(s->cmd, " \t"); p && n < 63; p = strtok(NULL, " \t"))
		w[n++] = p;
	if (n == 1) {
		tui_msg(t, 1, "no program given");
		return;
	}
	vs_choose(t, w, n);
}

static int vs_prompt_key(struct view *v, int key)
{
	struct vs *s = v->priv;
	size_t n = strlen(s->cmd);
	if (key == TK_ESC) {
		s->prompting = 0;
		s->cmd[0] = 0;
	} else if (key == TK_ENTER) {
		s->prompting = 0;
		vs_run_typed(v->tui, s);
	} else if (key == TK_BACKSPACE || key == TK_CTRL('h')) {
		if (n)
			s->cmd[n - 1] = 0;
	} else if (key >= 0x20 && key < 0x100 && key != 0x7f && n + 1 < sizeof s->cmd) {
		s->cmd[n] = (char)key;
		s->cmd[n + 1] = 0;
	}
	return VIEW_HANDLED | VIEW_REDRAW;
}

static int vs_key(struct view *v, int key)
{
	struct vs *s = v->priv;
	if (s->prompting)
		return vs_prompt_key(v, key);
	switch (key) {
	case 'j': case TK_DOWN: s->sel++; break;
	case 'k': case TK_UP: s->sel--; break;
	case 'g': case TK_HOME: s->sel = 0; break;
	case 'G': case TK_END: s->sel = s->n_ses - 1; break;
	case 'n': s->prompting = 1; break;
	case TK_ENTER: case 'l': case TK_RIGHT:
		if (s->sel < s->n_ses) {
			const char *w[] = {s->ses[s->sel].running ? "attach" : "view", s->ses[s->sel].dir};
			vs_choose(v->tui, w, 2);
		}
		return VIEW_HANDLED;
	default: return 0;
	}
	if (s->sel >= s->n_ses)
		s->sel = s->n_ses - 1;
	if (s->sel < 0)
		s->sel = 0;
	return VIEW_HANDLED | VIEW_REDRAW;
}

static void vs_bytes(uint64_t b, char *buf, size_t n)
{
	snprintf(buf, n, "%.1f GiB", (double)b / (double)(1ull << 30));
}

static int vs_gpus(struct view *v, struct cellgrid *g, int x, int y, int w, int h)
{
	struct vs *s = v->priv;
	struct tui *t = v->tui;
	char buf[256], used[24], total[24];
	draw_role(t, g, x, y, w, "GPUs", THEME_ACCENT);
	if (s->n_gpu < 0) {
		draw_role(t, g, x + 2, y + 1, w - 2, s->gpu_why[0] ? s->gpu_why : "no GPU information", THEME_DIM);
		return 2;
	}
	snprintf(buf, sizeof buf, "  %3s  %-24s %5s  %-19s %s", "#", "NAME", "UTIL", "MEMORY", "PROCESSES");
	draw_role(t, g, x, y + 1, w, buf, THEME_DIM);
	int r = 2;
	for (int i = 0; i < s->n_gpu && r < h; i++, r++) {
		const struct tui_gpu *gp = &s->gpu[i];
		char util[16] = "-", procs[48];
		if (gp->util >= 0)
			snprintf(util, sizeof util, "%d%%", gp->util);
		vs_bytes(gp->mem_used, used, sizeof used);
		vs_bytes(gp->mem_total, total, sizeof total);
		snprintf(procs, sizeof procs, gp->ours ? "%d (%d ntop)" : "%d", gp->procs, gp->ours);
		snprintf(buf, sizeof buf, "  %3d  %-24.24s %5s  %8s / %-8s %s", gp->index, gp->name, util, used, total, procs);
		draw_role(t, g, x, y + r, w, buf, gp->ours ? THEME_ACCENT : THEME_FG);
	}
	return r + 1;
}

/* "app_loop kernels.ptx 60" for "/path/to/app_loop kernels.ptx 60": the
 * program's own name first, so it survives a narrow column. */
static void vs_program(const char *argv, char *buf, size_t n)
{
	if (!argv) {
		snprintf(buf, n, "?");
		return;
	}
	size_t first = strcspn(argv, " ");
	const char *base = argv;
	for (size_t i = 0; i < first; i++)
		if (argv[i] == '/')
			base = argv + i + 1;
	snprintf(buf, n, "%s", base);
}

static void vs_sessions(struct view *v, struct cellgrid *g, int x, int y, int w, int h)
{
	struct vs *s = v->priv;
	struct tui *t = v->tui;
	char buf[1200];
	draw_role(t, g, x, y, w, "Sessions", THEME_ACCENT);
	if (!s->n_ses) {
		draw_role(t, g, x + 2, y + 1, w - 2, "none yet: n starts a program under ntop", THEME_DIM);
		return;
	}
	snprintf(buf, sizeof buf, "  %-8s %-16s %-30s %s", "STATE", "STARTED", "PROGRAM", "DIRECTORY");
	draw_role(t, g, x, y + 1, w, buf, THEME_DIM);
	s->list_h = h - 2;
	s->top = layout_scroll(s->top, s->sel, s->list_h, s->n_ses);
	for (int r = 0; r < s->list_h && s->top + r < s->n_ses; r++) {
		const struct tui_session *e = &s->ses[s->top + r];
		char when[32] = "?";
		time_t tt = (time_t)(e->start_ns / 1000000000ull);
		struct tm tm;
		if (localtime_r(&tt, &tm))
			strftime(when, sizeof when, "%Y-%m-%d %H:%M", &tm);
		char prog[256];
		vs_program(e->argv, prog, sizeof prog);
		snprintf(buf, sizeof buf, "  %-8s %-16s %-30.30s %s", e->running ? "running" : "ended", when, prog, e->dir);
		int sel = s->top + r == s->sel;
		struct rgb bg = sel ? tui_sel_bg(t) : t->theme.c[THEME_BG];
		draw_fill(g, x, y + 2 + r, w, 1, bg);
		draw_text(t, g, x, y + 2 + r, w, buf, draw_c(t, e->running ? THEME_FG : THEME_DIM), bg,
			  sel && t->mono ? CELL_REVERSE : 0);
	}
}

static void vs_draw(struct view *v, struct cellgrid *g, int x, int y, int w, int h)
{
	struct vs *s = v->priv;
	struct tui *t = v->tui;
	vs_refresh(s, t->o.start);
	draw_fill(g, x, y, w, h, t->theme.c[THEME_BG]);
	int used = vs_gpus(v, g, x, y, w, h - 3);
	vs_sessions(v, g, x, y + used, w, h - used - (s->prompting ? 1 : 0));
	if (s->prompting) {
		char buf[600];
		snprintf(buf, sizeof buf, "program to run under ntop: %s_", s->cmd);
		draw_fill(g, x, y + h - 1, w, 1, t->theme.c[THEME_BG]);
		draw_role(t, g, x, y + h - 1, w, buf, THEME_ACCENT);
	}
}

static const char *vs_hints(struct view *v)
{
	struct vs *s = v->priv;
	return s->prompting ? "Enter run  Esc cancel" : "Enter attach/open  n new program  q quit";
}

const struct view_ops view_start_ops = {
	.name = "start",
	.init = vs_init,
	.free = vs_free,
	.key = vs_key,
	.draw = vs_draw,
	.hints = vs_hints,
};
