/* ntop view DIR and ntop [OPTIONS] [--] PROGRAM: the terminal UI (src/tui).
 * This file parses the options, finds the pieces the UI needs (themes, the
 * probe files the picker offers) and, for live mode, connects the UI to the
 * launcher (session.h) through `struct tui_app`: the application runs with
 * its output captured (app.log and the log pane, never across the screen),
 * in its own process group, with the live control file switched on and
 * nothing probed until the user picks probes for a kernel. */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/attach.h"
#include "cli/cli.h"
#include "cli/sessions.h"
#include "cli/session.h"
#include "common/timeutil.h"
#include "trace/events.h"
#include "tui/settings.h"
#include "tui/term.h"
#include "tui/tui.h"
#include "viz/theme.h"

struct view_args {
	const char *dir;
	const char *more[64]; /* further trace directories: a job read as one */
	int n_more;
	const char *theme;
	int no_color, no_mouse, ascii;
	long max_frames;
	const char **probes; /* -p, live mode */
	int n_probes;
	const char *out;     /* -o, live mode */
	int no_audit;        /* --no-audit, live mode */
	char **prog;         /* live mode */
};

struct tui_opts;
static int view_follow(const struct view_args *a, const char *dir, struct tui_opts *o);

static void view_help(void)
{
	printf("Usage: ntop view [options] DIR\n"
	       "       ntop [options] [-p PROBE]... [-o DIR] [--] PROGRAM [ARGS...]\n"
	       "\n"
	       "The terminal UI. 'ntop view DIR' opens a trace directory written by 'ntop record'\n"
	       "(or by a live session); 'ntop PROGRAM' runs PROGRAM under the hook and shows its\n"
	       "kernels as they appear, with probes switched per kernel from the UI.\n"
	       "\n"
	       "The kernel list has one row per (process, kernel): launches, last grid and block,\n"
	       "total and mean duration, whether the kernel has PTX, its probe state and the\n"
	       "traces captured. Enter opens a kernel's probed launches, Enter on a launch its\n"
	       "block-scheduling timeline (one lane per SM); e there writes a PNG into\n"
	       "DIR/export/ (into the current directory when DIR is not yours or not\n"
	       "writable, else ~/.local/state/ntop/export/). ? lists every key.\n"
	       "\n"
	       "The UI needs a terminal that can move the cursor (TERM=xterm-256color,\n"
	       "screen, tmux, vt100...; not dumb); with NO_COLOR or without colours, plots\n"
	       "tell blocks and densities apart by glyphs. 'ntop view DIR | less' prints\n"
	       "the text report (ntop report DIR) instead of the UI.\n"
	       "\n"
	       "Options:\n"
	       "      --theme NAME|PATH  dark, light, colorblind, mono, or a theme .toml file\n"
	       "                         (default: the saved setting, else dark)\n"
	       "      --no-color         no colours (also when NO_COLOR is set)\n"
	       "      --no-mouse         leave the mouse to the terminal (selecting text)\n"
	       "      --ascii            ASCII glyphs only (default: UTF-8 when the locale is)\n"
	       "      --exit-after-frames N  quit after drawing N frames (tests; also\n"
	       "                         NTOP_TUI_MAX_FRAMES)\n"
	       "  live mode only:\n"
	       "  -p, --probe PROBE      offer PROBE (a .toml file) in the probe picker besides\n"
	       "                         the built-ins and ~/.config/ntop/probes/*.toml\n"
	       "  -o, --output DIR       session directory (default ./ntop-trace/DATE-TIME_PID)\n"
	       "      --no-audit         no loader audit module in PROGRAM's LD_AUDIT: libraries\n"
	       "                         it opens by absolute path bypass ntop's stand-ins, and\n"
	       "                         ROCm 6/7 HIP runtimes run unhooked\n"
	       "  -h, --help             this text\n"
	       "\n"
	       "Settings (theme, sort column, mangled names, log pane) are saved on exit in\n"
	       "$XDG_CONFIG_HOME/ntop/ntop.conf (default ~/.config/ntop/ntop.conf).\n"
	       "\n"
	       "Examples:\n"
	       "  ntop view ntop-trace/20261101-120000_4242\n"
	       "  ntop view --theme light --no-mouse trace1\n"
	       "  ntop ./bench --size 4096\n"
	       "  ntop -p ./mem.toml -o session1 -- python train.py\n");
}

/* ---- options ---- */

static int view_push(const char ***v, int *n, const char *s)
{
	const char **nv = realloc(*v, (size_t)(*n + 1) * sizeof *nv);
	if (!nv)
		return -1;
	nv[(*n)++] = s;
	*v = nv;
	return 0;
}

/* One UI option at argv[*i]: 1 taken, 0 not a UI option, 2 usage error. */
static int view_opt(const char *cmd, struct view_args *a, int argc, char **argv, int *i, int live)
{
	const char *v, *arg = argv[*i];
	int r;
	if (!strcmp(arg, "--no-color") || !strcmp(arg, "--no-colour"))
		return a->no_color = 1;
	if (!strcmp(arg, "--no-mouse"))
		return a->no_mouse = 1;
	if (!strcmp(arg, "--ascii"))
		return a->ascii = 1;
	if ((r = cli_opt(cmd, argc, argv, i, NULL, "--theme", &v)) != 0) {
		a->theme = v;
		return r < 0 ? 2 : 1;
	}
	if ((r = cli_opt(cmd, argc, argv, i, NULL, "--exit-after-frames", &v)) != 0) {
		unsigned long n;
		if (r < 0)
			return 2;
		if (cli_parse_ulong(v, &n) < 0 || n == 0)
			return cli_usage(cmd, "--exit-after-frames takes a positive number, not '%s'", v);
		a->max_frames = (long)n;
		return 1;
	}
	if (!live)
		return 0;
	if (!strcmp(arg, "--no-audit"))
		return a->no_audit = 1;
	if ((r = cli_opt(cmd, argc, argv, i, "-p", "--probe", &v)) != 0)
		return r < 0 || view_push(&a->probes, &a->n_probes, v) < 0 ? 2 : 1;
	if ((r = cli_opt(cmd, argc, argv, i, "-o", "--output", &v)) != 0) {
		a->out = v;
		return r < 0 ? 2 : 1;
	}
	return 0;
}

static void view_defaults(struct view_args *a)
{
	memset(a, 0, sizeof *a);
	const char *mf = getenv("NTOP_TUI_MAX_FRAMES");
	unsigned long n;
	if (mf && cli_parse_ulong(mf, &n) == 0)
		a->max_frames = (long)n;
}

/* ---- what the UI needs ---- */

static void view_opts(struct tui_opts *o, const struct view_args *a, const char *themes_dir)
{
	memset(o, 0, sizeof *o);
	o->theme = a->theme;
	o->themes_dir = themes_dir;
	o->no_color = a->no_color;
	o->no_mouse = a->no_mouse;
	o->ascii = a->ascii;
	o->max_frames = a->max_frames;
}

static int view_run(struct tui_opts *o)
{
	struct tui *t = NULL;
	char *cause = NULL;
	if (tui_create(o, &t, &cause) < 0) {
		cli_err("%s", cause ? cause : "cannot start the UI");
		free(cause);
		return CLI_EXIT_USAGE;
	}
	int rc = tui_run(t, &cause);
	if (rc < 0) {
		cli_err("%s", cause ? cause : "terminal UI failed");
		free(cause);
		tui_free(t);
		return CLI_EXIT_USAGE;
	}
	tui_free(t);
	return 0;
}

int cmd_view(int argc, char **argv)
{
	struct view_args a;
	view_defaults(&a);
	for (int i = 1; i < argc; i++) {
		if (cli_is_help(argv[i])) {
			view_help();
			return 0;
		}
		int r = view_opt("view", &a, argc, argv, &i, 0);
		if (r == 2)
			return CLI_EXIT_USAGE;
		if (r == 1)
			continue;
		if (argv[i][0] == '-' && argv[i][1])
			return cli_usage("view", "unknown option '%s'", argv[i]);
		if (a.dir && a.n_more == (int)(sizeof a.more / sizeof a.more[0]))
			return cli_usage("view", "at most %d trace directories", 1 + a.n_more);
		if (a.dir)
			a.more[a.n_more++] = argv[i];
		else
			a.dir = argv[i];
	}
	if (!a.dir)
		return cli_usage("view", "which trace directory? ('ntop record' prints it)");
	struct stat st;
	for (int i = -1; i < a.n_more; i++) {
		const char *d = i < 0 ? a.dir : a.more[i];
		if (stat(d, &st) < 0 || !S_ISDIR(st.st_mode))
			return cli_usage("view", "%s is not a directory", d);
	}
	char *why = NULL, *themes = cli_themes_dir();
	struct theme th;
	if (a.theme && theme_resolve(a.theme, themes, &th, &why) < 0) { /* a bad argument, piped or not */
		cli_err("%s", why);
		free(why);
		free(themes);
		return CLI_EXIT_USAGE;
	}
	if (!isatty(STDOUT_FILENO)) {
		/* piped or redirected: what the UI shows, as text */
		free(themes);
		cli_err("standard output is not a terminal: the text report of %s instead of the UI", a.dir);
		char *rargv[2 + sizeof a.more / sizeof a.more[0]] = {"report", (char *)a.dir};
		for (int i = 0; i < a.n_more; i++)
			rargv[2 + i] = (char *)a.more[i];
		return cmd_report(2 + a.n_more, rargv);
	}
	if (term_usable(&why) < 0) {
		cli_err("%s", why);
		free(why);
		free(themes);
		return CLI_EXIT_USAGE;
	}
	char *abs = cli_abspath(a.dir);
	struct tui_opts o;
	view_opts(&o, &a, themes);
	if (!a.n_more && sessions_dir_running(a.dir, NULL)) { /* still recording: follow it */
		int rc = view_follow(&a, abs ? abs : a.dir, &o);
		free(abs);
		free(themes);
		return rc;
	}
	o.trace_dir = abs ? abs : a.dir;
	o.more_dirs = a.more;
	o.n_more_dirs = a.n_more;
	o.title = o.trace_dir;
	char *title = NULL;
	if (a.n_more && asprintf(&title, "%s and %d more trace%s (one job)", o.trace_dir, a.n_more,
				 a.n_more == 1 ? "" : "s") > 0)
		o.title = title;
	int rc = view_run(&o);
	free(title);
	free(abs);
	free(themes);
	return rc;
}

/* ---- live mode ---- */

struct view_probes {
	struct tui_probe *v;
	int n;
	char **notes;
	int n_notes;
};

static void view_note(struct view_probes *p, const char *fmt, const char *a, const char *b)
{
	char *s;
	char **nn = realloc(p->notes, (size_t)(p->n_notes + 1) * sizeof *nn);
	if (!nn || asprintf(&s, fmt, a, b) < 0) {
		if (nn)
			p->notes = nn;
		return;
	}
	p->notes = nn;
	p->notes[p->n_notes++] = s;
}

/* Adds one probe file; -1 when it does not load or verify (cause set). */
static int view_add_probe(struct view_probes *p, const char *path, const char *origin, char **cause)
{
	struct probe *pr = NULL;
	char *abs = cli_abspath(path);
	if (!abs || cli_probe_load_verified(abs, &pr, cause) < 0) {
		free(abs);
		return -1;
	}
	for (int i = 0; i < p->n; i++)
		if (!strcmp(p->v[i].path, abs)) { /* the same file twice */
			probe_free(pr);
			free(abs);
			return 0;
		}
	struct tui_probe *nv = realloc(p->v, (size_t)(p->n + 1) * sizeof *nv);
	if (!nv) {
		probe_free(pr);
		free(abs);
		return -1;
	}
	p->v = nv;
	p->v[p->n].name = strdup(pr->name);
	p->v[p->n].path = abs;
	p->v[p->n].origin = strdup(origin);
	p->n++;
	probe_free(pr);
	return 0;
}

static void view_scan_dir(struct view_probes *p, const char *dir, const char *origin)
{
	DIR *d = dir ? opendir(dir) : NULL;
	if (!d)
		return;
	struct dirent *e;
	char **names = NULL;
	int n = 0;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (len > 5 && !strcmp(e->d_name + len - 5, ".toml")) {
			char **nn = realloc(names, (size_t)(n + 1) * sizeof *nn);
			if (!nn)
				break;
			names = nn;
			names[n++] = strdup(e->d_name);
		}
	}
	closedir(d);
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
			if (names[i] && names[j] && strcmp(names[i], names[j]) > 0) {
				char *x = names[i];
				names[i] = names[j];
				names[j] = x;
			}
	for (int i = 0; i < n; i++) {
		char *path, *cause = NULL;
		if (names[i] && asprintf(&path, "%s/%s", dir, names[i]) >= 0) {
			if (view_add_probe(p, path, origin, &cause) < 0)
				view_note(p, "probe %s skipped: %s", path, cause ? cause : "cannot load");
			free(path);
		}
		free(cause);
		free(names[i]);
	}
	free(names);
}

static void view_probes_free(struct view_probes *p)
{
	for (int i = 0; i < p->n; i++) {
		free(p->v[i].name);
		free(p->v[i].path);
		free(p->v[i].origin);
	}
	free(p->v);
	for (int i = 0; i < p->n_notes; i++)
		free(p->notes[i]);
	free(p->notes);
}

/* Built-ins, then -p files (which must load: a typo fails before the
 * program starts), then the user's directory. */
static int view_gather_probes(const struct view_args *a, struct view_probes *p)
{
	memset(p, 0, sizeof *p);
	char *builtin = cli_probes_dir();
	view_scan_dir(p, builtin, "built-in");
	free(builtin);
	for (int i = 0; i < a->n_probes; i++) {
		char *cause = NULL, *path = cli_probe_path(a->probes[i], &cause);
		if (!path || view_add_probe(p, path, "-p", &cause) < 0) {
			cli_err("probe %s: %s", a->probes[i], cause ? cause : "cannot load");
			free(cause);
			free(path);
			return -1;
		}
		free(path);
	}
	char *cfg = settings_dir(), *dir = NULL;
	if (cfg && asprintf(&dir, "%s/probes", cfg) >= 0)
		view_scan_dir(p, dir, "~/.config/ntop/probes");
	free(dir);
	free(cfg);
	return 0;
}

static int view_live_parse(int argc, char **argv, struct view_args *a)
{
	view_defaults(a);
	int i = 1;
	for (; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		}
		if (argv[i][0] != '-' || !argv[i][1])
			break;
		if (cli_is_help(argv[i])) {
			view_help();
			return 1;
		}
		int r = view_opt("ntop", a, argc, argv, &i, 1);
		if (r == 2)
			return CLI_EXIT_USAGE;
		if (r == 0)
			return cli_usage("ntop", "unknown option '%s'", argv[i]);
	}
	if (i >= argc)
		return cli_usage("ntop", "no program to run");
	a->prog = argv + i;
	return 0;
}

/* ---- the application behind struct tui_app (session.h) ---- */

#define LIVE_DRAIN_NS 2000000000ull /* children may still send events after the app exits */
#define LIVE_KILL_GRACE_MS 2000

struct live {
	struct session *s;
	struct tui *t;
	struct strbuf out;   /* application output not yet ending in '\n' */
	int events_eof, output_eof;
	int exited, detached, killed;
};

static void live_line(void *arg, const char *line, size_t len)
{
	tui_feed_line(arg, line, len);
}

/* Output bytes into lines for the log pane (app.log has them raw). */
static void live_output(struct live *l, const char *buf, size_t n, int flush)
{
	strbuf_append(&l->out, buf, n);
	size_t a = 0;
	for (size_t i = 0; i < l->out.len; i++)
		if (l->out.data[i] == '\n') {
			tui_app_output(l->t, 0, l->out.data + a, i - a);
			a = i + 1;
		}
	if (flush && a < l->out.len) {
		tui_app_output(l->t, 0, l->out.data + a, l->out.len - a);
		a = l->out.len;
	}
	if (l->out.len - a > 4096) { /* a "line" that never ends: show it in pieces */
		tui_app_output(l->t, 0, l->out.data + a, l->out.len - a);
		a = l->out.len;
	}
	if (a) {
		memmove(l->out.data, l->out.data + a, l->out.len - a);
		l->out.len -= a;
	}
}

static int live_fds(void *ctx, struct pollfd *p, int max)
{
	struct live *l = ctx;
	return l->detached ? 0 : session_fds(l->s, p, max);
}

static int live_pump(void *ctx, struct tui *t)
{
	struct live *l = ctx;
	int any = 0;
	l->t = t;
	if (l->detached)
		return 0;
	if (!l->events_eof) {
		int n = session_read_events(l->s, live_line, t);
		if (n < 0)
			l->events_eof = 1;
		any |= n != 0;
	}
	/* processes whose fds were closed (spawned workers) write their own file */
	any |= session_poll_pid_logs(l->s, live_line, t, 0) > 0;
	char buf[16384];
	long k;
	for (int i = 0; !l->output_eof && i < 64 && (k = session_read_output(l->s, buf, sizeof buf)) != 0; i++) {
		if (k < 0) {
			l->output_eof = 1;
			live_output(l, "", 0, 1);
			break;
		}
		live_output(l, buf, (size_t)k, 0);
		any = 1;
	}
	if (!l->exited && session_poll_exit(l->s)) {
		l->exited = 1;
		any = 1;
	}
	return any;
}

static void live_state(void *ctx, struct tui_app_state *st)
{
	struct live *l = ctx;
	st->pid = (int)session_pid(l->s);
	st->running = !l->exited;
	st->detached = l->detached;
	if (l->exited) {
		int status = session_status(l->s);
		st->exited = WIFEXITED(status);
		st->status = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
		st->signaled = WIFSIGNALED(status);
		st->sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
	}
}

static int live_control(void *ctx, const char *text, char **cause)
{
	struct live *l = ctx;
	return session_write_control_text(l->s, text, strlen(text), cause);
}

static void live_kill(void *ctx)
{
	struct live *l = ctx;
	if (!l->exited && !l->killed) {
		l->killed = 1;
		session_terminate(l->s, LIVE_KILL_GRACE_MS);
	}
}

static void live_detach(void *ctx)
{
	struct live *l = ctx;
	char *cause = NULL;
	if (l->detached || l->exited)
		return;
	if (session_detach(l->s, &cause) < 0)
		fprintf(stderr, "ntop: detach: %s\n", cause ? cause : "?");
	free(cause);
	l->detached = 1;
}

/* After the UI: wait for a killed or finished application, read the last
 * events (children may stay connected a little longer, processes off the
 * socket left files), close the log. */
static void live_finish(struct live *l)
{
	if (l->detached)
		return;
	uint64_t deadline = 0;
	while (!l->events_eof) {
		struct pollfd p[4];
		int n = session_fds(l->s, p, 4);
		poll(p, (nfds_t)n, 100);
		live_pump(l, l->t);
		if (l->exited && !deadline)
			deadline = time_mono_ns() + LIVE_DRAIN_NS;
		if (deadline && time_mono_ns() >= deadline)
			break;
	}
	while (!l->exited) {
		poll(NULL, 0, 50);
		l->exited = session_poll_exit(l->s);
	}
	session_poll_pid_logs(l->s, live_line, l->t, 1);
	char *cause = NULL;
	if (session_finish_events(l->s, &cause) < 0)
		cli_err("%s", cause ? cause : "cannot finish events.log");
	free(cause);
}

static int live_header(struct session *s, const struct view_args *a, char **line, size_t *len, char **cause)
{
	struct strbuf sb, av;
	strbuf_init(&sb);
	strbuf_init(&av);
	for (int i = 0; a->prog[i]; i++)
		strbuf_printf(&av, "%s%s", i ? " " : "", a->prog[i]);
	event_begin(&sb, "record", time_wall_ns(), (int)getpid());
	event_add(&sb, "argv", av.data ? av.data : "");
	event_add(&sb, "version", NTOP_VERSION);
	char cwd[4096];
	event_add(&sb, "cwd", getcwd(cwd, sizeof cwd) ? cwd : "");
	event_add(&sb, "probes", "");
	event_add(&sb, "kernels", "");
	event_add(&sb, "mode", "live");
	cli_job_fields(&sb);
	event_end(&sb);
	strbuf_done(&av);
	*line = strbuf_finish(&sb, len);
	if (!*line)
		return -1;
	return session_open_events(s, *line, *len, cause);
}

static int live_hook(char **hook_dir)
{
	*hook_dir = cli_hook_dir();
	char *lib = NULL;
	if (*hook_dir && asprintf(&lib, "%s/libcuda.so.1", *hook_dir) < 0)
		lib = NULL;
	int ok = lib && access(lib, R_OK) == 0;
	if (!ok)
		cli_err("hook library not found: %s/libcuda.so.1 (build the ntop_hook target or reinstall ntop; "
			"NTOP_HOOK_DIR overrides the location)", *hook_dir ? *hook_dir : "?");
	free(lib);
	return ok ? 0 : -1;
}

static int live_ui(struct live *l, struct view_args *a, struct view_probes *p, const char *header, size_t hlen)
{
	struct tui_app app = {l, live_fds, live_pump, live_state, live_control, live_kill, live_detach};
	char *themes = cli_themes_dir(), *title = NULL, *cause = NULL;
	struct tui_opts o;
	view_opts(&o, a, themes);
	o.trace_dir = session_dir(l->s);
	if (asprintf(&title, "%s%s  (session %s)", a->prog[0], a->prog[1] ? " ..." : "", o.trace_dir) < 0)
		title = NULL;
	o.title = title;
	o.app = &app;
	o.probes = p->v;
	o.n_probes = p->n;
	o.notes = (const char *const *)p->notes;
	o.n_notes = p->n_notes;
	struct tui *t = NULL;
	int rc = tui_create(&o, &t, &cause);
	if (rc == 0) {
		l->t = t;
		tui_feed_line(t, header, hlen);
		if (session_note(l->s))
			tui_msg(t, 0, "%s", session_note(l->s));
		rc = tui_run(t, &cause);
	}
	if (rc < 0) {
		cli_err("%s", cause ? cause : "terminal UI failed");
		live_kill(l);
	}
	live_finish(l);
	tui_free(t);
	free(cause);
	free(title);
	free(themes);
	return rc;
}

static int live_report(struct live *l, int ui_rc)
{
	const char *dir = session_dir(l->s);
	pid_t pid = session_pid(l->s);
	if (l->detached) {
		fprintf(stderr, "ntop: detached from pid %d; it keeps running, its events and output still go to %s\n",
			(int)pid, dir);
		return 0;
	}
	int status = session_status(l->s), code = session_exit_code(status);
	if (WIFSIGNALED(status))
		fprintf(stderr, "ntop: pid %d was killed by signal %d (%s)\n", (int)pid, WTERMSIG(status),
			strsignal(WTERMSIG(status)));
	else
		fprintf(stderr, "ntop: pid %d exited with status %d\n", (int)pid, code);
	fprintf(stderr, "ntop: session in %s (ntop view %s; ntop report %s)\n", dir, dir, dir);
	return ui_rc < 0 ? CLI_EXIT_USAGE : code;
}

/* Whether argv0 can be run (as posix_spawnp would find it), so a typo
 * fails before a session directory is made and the terminal taken. */
static int live_findable(const char *argv0)
{
	if (strchr(argv0, '/'))
		return access(argv0, X_OK) == 0;
	const char *path = getenv("PATH");
	char *copy = strdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin"), *save = NULL;
	int ok = 0;
	for (char *d = copy ? strtok_r(copy, ":", &save) : NULL; d && !ok; d = strtok_r(NULL, ":", &save)) {
		char *f;
		if (asprintf(&f, "%s/%s", *d ? d : ".", argv0) >= 0) {
			ok = access(f, X_OK) == 0;
			free(f);
		}
	}
	free(copy);
	return ok;
}

static int view_live_run(struct view_args *a, struct view_probes *p)
{
	struct live l;
	memset(&l, 0, sizeof l);
	strbuf_init(&l.out);
	char *hook_dir = NULL, *cause = NULL, *header = NULL;
	size_t hlen = 0;
	int rc = CLI_EXIT_USAGE;
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		cli_err("the terminal UI needs a terminal on stdin and stdout; without one, record instead: "
			"ntop record -- %s", a->prog[0]);
		goto out;
	}
	if (term_usable(&cause) < 0) {
		cli_err("%s", cause);
		goto out;
	}
	if (!live_findable(a->prog[0])) {
		cli_err("cannot run '%s': %s", a->prog[0], strchr(a->prog[0], '/') ? strerror(errno) : "not found in PATH");
		rc = 127;
		goto out;
	}
	if (live_hook(&hook_dir) < 0)
		goto out;
	if (session_create(&l.s, a->out, &cause) < 0 || live_header(l.s, a, &header, &hlen, &cause) < 0) {
		cli_err("%s", cause ? cause : "cannot create the session directory");
		if (l.s)
			session_abandon(l.s);
		goto out;
	}
	{
		struct strbuf av;
		char *why = NULL;
		strbuf_init(&av);
		for (int i = 0; a->prog[i]; i++)
			strbuf_printf(&av, "%s%s", i ? " " : "", a->prog[i]);
		if (sessions_register(session_dir(l.s), av.data ? av.data : "", &why) < 0) /* best effort */
			view_note(p, "%s%s", "ntop ls will not list this session: ", why ? why : "?");
		free(why);
		strbuf_done(&av);
	}
	struct session_spawn_opts so = {0};
	so.argv = a->prog;
	so.hook_dir = hook_dir;
	so.output = SESSION_OUTPUT_CAPTURE;
	so.no_audit = a->no_audit;
	if (session_spawn(l.s, &so, &cause) < 0) {
		cli_err("%s", cause ? cause : "cannot run the program");
		session_abandon(l.s);
		rc = 127;
		goto out;
	}
	rc = live_report(&l, live_ui(&l, a, p, header, hlen));
out:
	if (l.s)
		session_free(l.s);
	strbuf_done(&l.out);
	free(header);
	free(cause);
	free(hook_dir);
	return rc;
}

int cmd_live(int argc, char **argv)
{
	struct view_args a;
	int rc = view_live_parse(argc, argv, &a);
	if (rc) {
		free(a.probes);
		return rc == 1 ? 0 : rc;
	}
	struct view_probes p;
	if (view_gather_probes(&a, &p) < 0) {
		view_probes_free(&p);
		free(a.probes);
		return CLI_EXIT_USAGE;
	}
	rc = view_live_run(&a, &p);
	view_probes_free(&p);
	free(a.probes);
	return rc;
}

/* Follows the running session dir (attach.h), with the picker's probes. */
static int view_follow(const struct view_args *a, const char *dir, struct tui_opts *o)
{
	struct view_probes p = {0};
	view_gather_probes(a, &p); /* built-ins and ~/.config/ntop/probes */
	o->probes = p.v;
	o->n_probes = p.n;
	o->notes = (const char *const *)p.notes;
	o->n_notes = p.n_notes;
	o->title = dir;
	int rc = attach_run(dir, o);
	view_probes_free(&p);
	return rc;
}

/* ntop attach [DIR]: follow a running session (the newest without DIR). */
int cmd_attach(int argc, char **argv)
{
	struct view_args a;
	view_defaults(&a);
	for (int i = 1; i < argc; i++) {
		if (cli_is_help(argv[i])) {
			printf("Usage: ntop attach [options] [DIR]\n"
			       "\n"
			       "Opens the terminal UI on a session ntop is recording (ntop record, or\n"
			       "ntop PROGRAM after a detach) and follows it live: new processes,\n"
			       "kernels, launches and results as they arrive, the program's output\n"
			       "(L), probes picked with p written into the session's control file\n"
			       "(requests already there are kept). Quitting, or the terminal closing,\n"
			       "leaves the program and the recording running; several viewers may\n"
			       "follow one session. Without DIR: the newest running session of\n"
			       "'ntop ls'. Only the owner of DIR attaches. Options as for ntop view.\n");
			return 0;
		}
		int r = view_opt("attach", &a, argc, argv, &i, 0);
		if (r == 2)
			return CLI_EXIT_USAGE;
		if (r == 1)
			continue;
		if (argv[i][0] == '-' && argv[i][1])
			return cli_usage("attach", "unknown option '%s'", argv[i]);
		if (a.dir)
			return cli_usage("attach", "one session at a time ('%s' and '%s')", a.dir, argv[i]);
		a.dir = argv[i];
	}
	struct sess_entry *v = NULL;
	int n = 0;
	char *cause = NULL, *pick = NULL;
	if (!a.dir) {
		if (sessions_list(&v, &n, &cause) < 0) {
			cli_err("%s", cause);
			free(cause);
			return CLI_EXIT_USAGE;
		}
		for (int i = 0; i < n && !pick; i++)
			if (v[i].running)
				pick = strdup(v[i].dir);
		sessions_free(v, n);
		if (!pick)
			return cli_usage("attach", "no running session ('ntop ls' lists them; give DIR to open an ended one)");
		a.dir = pick;
	}
	if (!isatty(STDOUT_FILENO) || term_usable(&cause) < 0) {
		cli_err("%s", cause ? cause : "standard output is not a terminal");
		free(cause);
		free(pick);
		return CLI_EXIT_USAGE;
	}
	char *abs = cli_abspath(a.dir), *themes = cli_themes_dir();
	struct tui_opts o;
	view_opts(&o, &a, themes);
	o.title = abs ? abs : a.dir;
	int rc = view_follow(&a, abs ? abs : a.dir, &o);
	free(abs);
	free(themes);
	free(pick);
	return rc;
}
