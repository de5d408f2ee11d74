/* The UI's state and its parts that need no terminal (tui.h): creating it
 * from a trace or a session, event lines into the model and the log pane,
 * keys to views, and drawing the whole screen into a cell grid. The loop
 * with the terminal is in tui_loop.c. */
#include "tui/tui.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cause.h"
#include "common/timeutil.h"
#include "trace/events.h"
#include "trace/trace_file.h"
#include "tui/draw.h"
#include "tui/export.h"
#include "viz/textfit.h"

#define TUI_LOG_LINES 5000
#define TUI_STATUS_NS 6000000000ull /* a transient message stays 6 s */

/* ---- messages ---- */

void tui_msg(struct tui *t, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(t->status, sizeof t->status, fmt, ap);
	va_end(ap);
	t->status_err = err;
	t->status_keep = 0;
	t->status_until = time_mono_ns() + TUI_STATUS_NS;
	msglog_add(t->log, err ? MSG_ERROR : MSG_INFO, time_wall_ns(), t->status);
	t->dirty = 1;
}

void tui_msg_path(struct tui *t, int err, const char *what, const char *path)
{
	char cwd[4096], shown[4096];
	export_path_short(path, getcwd(cwd, sizeof cwd), getenv("HOME"), shown, sizeof shown);
	tui_msg(t, err, "%s %s", what, path);
	int n = snprintf(t->status, sizeof t->status, "%s %s", what, shown);
	t->status_keep = n > 0 ? layout_text_cells(what) + 1 : 0;
}

void tui_flash(struct tui *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(t->status, sizeof t->status, fmt, ap);
	va_end(ap);
	t->status_err = 0;
	t->status_keep = 0;
	t->status_until = time_mono_ns() + TUI_STATUS_NS / 2;
	t->dirty = 1;
}

/* ---- exports ---- */

int tui_export(struct tui *t, const char *path, export_job_fn fn, void *arg)
{
	char *cause = NULL;
	if (t->job) {
		tui_flash(t, "an export is still being written (%s)", export_job_path(t->job));
		return -1;
	}
	if (export_job_start(&t->job, path, fn, arg, &cause) < 0) {
		tui_msg(t, 1, "export failed: %s", cause ? cause : "?");
		free(cause);
		return -1;
	}
	return 0;
}

char *tui_export_path(struct tui *t, const struct td_kernel *k, uint64_t seq,
		      char *(*path_fn)(const char *dir, const struct td_kernel *k, uint64_t seq))
{
	char *note = NULL, *cause = NULL, *dir, *path = NULL;
	if (!k)
		return NULL;
	if (!(dir = export_dir(t->td->path, &note, &cause))) {
		tui_msg(t, 1, "export failed: %s", cause ? cause : "?");
		free(cause);
		return NULL;
	}
	if (note)
		msglog_add(t->log, MSG_INFO, time_wall_ns(), note);
	if (!(path = path_fn(dir, k, seq)))
		tui_msg(t, 1, "export failed: out of memory");
	free(note);
	free(dir);
	return path;
}

int tui_export_poll(struct tui *t, int block)
{
	int failed = 0;
	char *cause = NULL;
	if (!t->job)
		return 0;
	if (!export_job_poll(t->job, block, &failed, &cause))
		return 0;
	if (failed)
		tui_msg(t, 1, "export failed: %s", cause ? cause : "?");
	else
		tui_msg_path(t, 0, "exported", export_job_path(t->job));
	free(cause);
	export_job_free(t->job);
	t->job = NULL;
	return 1;
}

/* ---- views ---- */

int tui_push(struct tui *t, const struct view_ops *ops, void *arg)
{
	if (t->depth >= TUI_MAX_VIEWS)
		return -1;
	struct view *v = calloc(1, sizeof *v);
	if (!v)
		return -1;
	v->ops = ops;
	v->tui = t;
	v->w = v->h = -1;
	if (ops->init && ops->init(v, arg) < 0) {
		if (v->priv && ops->free)
			ops->free(v);
		free(v);
		return -1;
	}
	t->stack[t->depth++] = v;
	t->dirty = 1;
	return 0;
}

void tui_pop(struct tui *t)
{
	if (t->depth <= 0)
		return;
	struct view *v = t->stack[--t->depth];
	if (v->ops->free)
		v->ops->free(v);
	free(v);
	t->dirty = 1;
}

/* ---- the model ---- */

const char *tui_kernel_name(const struct tui *t, const struct td_kernel *k)
{
	const char *n = t->set.mangled ? k->name : k->demangled ? k->demangled : k->name;
	return n ? n : "(unnamed)";
}

static const char *tui_request_label(void *arg, const struct td_kernel *k)
{
	struct tui *t = arg;
	struct tui_request *r = k->name ? tui_request_find(t, k->name) : NULL;
	if (!r || r->failed || k->n_results > r->results_at)
		return NULL;
	return r->label;
}

struct ktable_ctx tui_kctx(struct tui *t)
{
	struct ktable_ctx c = {t->td, &t->rc, t->utf8, t->set.mangled, tui_request_label, t};
	return c;
}

static const char *tui_kname_by_id(struct tui *t, const struct event *ev)
{
	long long pid = event_get_int(ev, "pid", -1), kid = event_get_int(ev, "kid", -1);
	const struct td_kernel *k = pid >= 0 && kid >= 0 ? trace_dir_kernel(t->td, (uint32_t)pid, (uint32_t)kid) : NULL;
	return k ? tui_kernel_name(t, k) : "?";
}

/* A failure or decline that follows a live request shows on the kernel. */
static void tui_request_failed(struct tui *t, const struct event *ev)
{
	long long pid = event_get_int(ev, "pid", -1), kid = event_get_int(ev, "kid", -1);
	const struct td_kernel *k = pid >= 0 && kid >= 0 ? trace_dir_kernel(t->td, (uint32_t)pid, (uint32_t)kid) : NULL;
	struct tui_request *r = k && k->name ? tui_request_find(t, k->name) : NULL;
	if (r)
		r->failed = 1;
}

/* The log pane's view of an event the user should see. */
static void tui_log_event(struct tui *t, const struct event *ev)
{
	uint64_t ts = event_get_u64(ev, "t", 0);
	long long pid = event_get_int(ev, "pid", 0);
	const char *ty = ev->type, *s;
	char buf[1200];
	enum msg_kind kind = MSG_INFO;
	if (!strcmp(ty, "warn")) {
		kind = MSG_WARN;
		snprintf(buf, sizeof buf, "pid %lld: %s", pid, (s = event_get(ev, "msg")) ? s : "(no message)");
	} else if (!strcmp(ty, "instrument")) {
		s = event_get(ev, "status");
		if (s && !strcmp(s, "failed")) {
			kind = MSG_ERROR;
			tui_request_failed(t, ev);
			snprintf(buf, sizeof buf, "instrumenting %s failed: %s", tui_kname_by_id(t, ev),
				 event_get(ev, "reason") ? event_get(ev, "reason") : "?");
		} else {
			/* a kernel launched in several shapes gets one copy per shape (doc/hook.md) */
			const char *shape = event_get(ev, "shape");
			snprintf(buf, sizeof buf, "instrumented %s with %s (registers %lld -> %lld, %s ms JIT%s%s)",
				 tui_kname_by_id(t, ev), event_get(ev, "probes") ? event_get(ev, "probes") : "?",
				 event_get_int(ev, "regs_orig", -1), event_get_int(ev, "regs_probed", -1),
				 event_get(ev, "ms_jit") ? event_get(ev, "ms_jit") : "?",
				 shape && strcmp(shape, "any") ? ", copy for launches of shape " : "",
				 shape && strcmp(shape, "any") ? shape : "");
		}
	} else if (!strcmp(ty, "probe") && (s = event_get(ev, "status")) && !strcmp(s, "deferred")) {
		snprintf(buf, sizeof buf, "building the probed copy of %s off the app's threads: launch %lld and those "
			 "until it is ready run unprobed", tui_kname_by_id(t, ev), event_get_int(ev, "seq", -1));
	} else if (!strcmp(ty, "probe")) {
		kind = MSG_WARN;
		tui_request_failed(t, ev);
		snprintf(buf, sizeof buf, "probe declined on %s (launch %lld): %s", tui_kname_by_id(t, ev),
			 event_get_int(ev, "seq", -1), event_get(ev, "reason") ? event_get(ev, "reason") : "?");
	} else if (!strcmp(ty, "lost")) {
		kind = MSG_WARN;
		snprintf(buf, sizeof buf, "pid %lld: the hook dropped %lld events (its buffer was full)", pid,
			 event_get_int(ev, "events", 0));
	} else if (!strcmp(ty, "control")) {
		snprintf(buf, sizeof buf, "pid %lld applied control generation %lld (%lld kernels)", pid,
			 event_get_int(ev, "gen", -1), event_get_int(ev, "kernels", 0));
	} else if (!strcmp(ty, "result")) {
		rcache_rescan(&t->rc);
		if (!t->o.app)
			return; /* a recorded trace: the launches view lists them */
		int n = snprintf(buf, sizeof buf, "result for %s launch %lld: %llu records, %llu dropped",
				 tui_kname_by_id(t, ev), event_get_int(ev, "seq", -1),
				 (unsigned long long)event_get_u64(ev, "records", 0),
				 (unsigned long long)event_get_u64(ev, "dropped", 0));
		if (event_get(ev, "sampled") && !event_get(ev, "unsampled") && n > 0 && (size_t)n < sizeof buf)
			snprintf(buf + n, sizeof buf - (size_t)n, ", 1 block in %llu sampled (the others not counted)",
				 (unsigned long long)event_get_u64(ev, "sampled", 1));
		else if (event_get(ev, "sampled") && n > 0 && (size_t)n < sizeof buf)
			snprintf(buf + n, sizeof buf - (size_t)n, ", 1 block in %llu sampled (%llu records not kept)",
				 (unsigned long long)event_get_u64(ev, "sampled", 1),
				 (unsigned long long)event_get_u64(ev, "unsampled", 0));
	} else if (!strcmp(ty, "hello")) {
		snprintf(buf, sizeof buf, "pid %lld started (%s, parent %lld)", pid,
			 event_get(ev, "exe") ? event_get(ev, "exe") : "?", event_get_int(ev, "ppid", 0));
	} else if (!strcmp(ty, "exit")) {
		snprintf(buf, sizeof buf, "pid %lld exiting after %lld launches", pid, event_get_int(ev, "launches", 0));
	} else {
		return;
	}
	msglog_add(t->log, kind, ts, buf);
}

/* Types worth a log line; the rest (launch, stats, time, kernel...) are
 * only parsed once, by the model. */
static int tui_loggable(const char *line, size_t len)
{
	static const char *const types[] = {"warn ", "instrument ", "probe ", "lost ", "control ", "result ",
					    "hello ", "exit "};
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
		size_t n = strlen(types[i]);
		if (len >= n && memcmp(line, types[i], n) == 0)
			return 1;
	}
	return 0;
}

static char *tui_dup(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* A forked child inherits its parent's modules: the hook reports its
 * launches under the parent's kernel ids without a `kernel` event of its
 * own. Such kernels take the parent's name and PTX facts (a later `kernel`
 * event for the child replaces them). The parent is the `hello` event's
 * ppid; a child that sent no hello (yet) is taken for a child of the
 * launched application, or of the first process in the trace. */
static uint32_t tui_parent_of(const struct tui *t, uint32_t pid)
{
	const struct td_process *p = trace_dir_process(t->td, pid);
	if (p && p->ppid)
		return p->ppid;
	if (t->app_state.pid > 0)
		return (uint32_t)t->app_state.pid;
	for (int i = 0; i < t->td->n_procs; i++)
		if (t->td->procs[i].exe)
			return t->td->procs[i].pid;
	return 0;
}

static void tui_inherit(struct tui *t, int from)
{
	int unnamed = 0;
	for (int i = from; i < t->td->n_kernels; i++) {
		struct td_kernel *k = &t->td->kernels[i];
		if (k->name)
			continue;
		uint32_t parent = tui_parent_of(t, k->pid);
		const struct td_kernel *pk = parent && parent != k->pid ? trace_dir_kernel(t->td, parent, k->kid) : NULL;
		if (!pk || !pk->name) {
			unnamed = 1;
			continue;
		}
		k->name = tui_dup(pk->name);
		k->demangled = tui_dup(pk->demangled);
		k->has_ptx = pk->has_ptx;
		k->amd = pk->amd;
		k->ptx_reason = tui_dup(pk->ptx_reason);
		k->mid = pk->mid;
	}
	if (from == 0)
		t->unnamed = unnamed;
	else
		t->unnamed |= unnamed;
}

void tui_feed_line(struct tui *t, const char *line, size_t len)
{
	trace_dir_feed(t->td, line, len);
	if ((len > 6 && !memcmp(line, "hello ", 6)) || (t->unnamed && len > 7 && !memcmp(line, "kernel ", 7)))
		tui_inherit(t, 0); /* a child's kernels may have come before its hello or its parent's kernel */
	else if (t->named_upto < t->td->n_kernels)
		tui_inherit(t, t->named_upto);
	t->named_upto = t->td->n_kernels;
	if (tui_loggable(line, len)) {
		struct event ev;
		if (event_parse(line, len, &ev) == 0) {
			tui_log_event(t, &ev);
			event_done(&ev);
		}
	}
	ktable_mark(&t->kt);
	t->model_gen++;
	t->dirty = 1;
}

void tui_feed_bytes(struct tui *t, const char *buf, size_t n)
{
	size_t a = 0;
	for (size_t i = 0; i < n; i++) {
		if (buf[i] != '\n')
			continue;
		if (t->partial.len) {
			strbuf_append(&t->partial, buf + a, i + 1 - a);
			if (!t->partial.failed)
				tui_feed_line(t, t->partial.data, t->partial.len);
			t->partial.len = 0;
		} else {
			tui_feed_line(t, buf + a, i + 1 - a);
		}
		a = i + 1;
	}
	if (a < n && t->partial.len + (n - a) <= EVENT_LINE_MAX * 4)
		strbuf_append(&t->partial, buf + a, n - a);
	else if (a < n)
		t->partial.len = 0; /* no line is this long: resynchronise at the next '\n' */
}

void tui_app_output(struct tui *t, int err, const char *line, size_t len)
{
	char buf[1001];
	if (len && line[len - 1] == '\n')
		len--;
	if (len > sizeof buf - 1)
		len = sizeof buf - 1;
	memcpy(buf, line, len);
	buf[len] = 0;
	msglog_add(t->log, err ? MSG_APP_ERR : MSG_APP_OUT, time_wall_ns(), buf);
	t->dirty = 1;
}

/* ---- creating ---- */

static void tui_load_line(void *arg, const char *line, size_t len)
{
	tui_feed_line(arg, line, len);
}

/* events.log (a regular file only: a FIFO would hang the UI), then what a
 * recording cut short left beside it (trace_dir_recover); for each trace
 * of a job. */
static int tui_load_one(struct tui *t, const char *dir, char **cause);

static int tui_load_trace(struct tui *t, char **cause)
{
	if (tui_load_one(t, t->o.trace_dir, cause) < 0)
		return -1;
	for (int i = 0; i < t->o.n_more_dirs; i++)
		if (trace_dir_begin_trace(t->td, t->o.more_dirs[i]) < 0 || tui_load_one(t, t->o.more_dirs[i], cause) < 0)
			return cause && !*cause ? cause_set(cause, "out of memory") : -1;
	trace_dir_end_job(t->td);
	if (t->td->malformed_lines)
		msglog_addf(t->log, MSG_WARN, "%llu malformed lines in events.log were skipped",
			    (unsigned long long)t->td->malformed_lines);
	if (trace_dir_incomplete(t->td, NULL))
		msglog_add(t->log, MSG_WARN, 0, "this trace is incomplete: 'ntop report' says why");
	return 0;
}

static int tui_load_one(struct tui *t, const char *dir, char **cause)
{
	char *path;
	if (asprintf(&path, "%s/events.log", dir) < 0)
		return cause_set(cause, "out of memory");
	int fd = trace_file_open(AT_FDCWD, path, cause);
	if (fd < 0) {
		char *why = cause ? *cause : NULL;
		if (cause)
			*cause = NULL;
		cause_set(cause, "%s: cannot open (%s); is %s a trace directory written by 'ntop record'?", path,
			  why ? why : "?", dir);
		free(why);
		free(path);
		return -1;
	}
	struct trace_lines tl;
	trace_lines_read(fd, tui_load_line, t, &tl);
	close(fd);
	free(path);
	if (tl.cut) {
		t->td->truncated_last_line = 1; /* the recorder died mid-line */
		msglog_add(t->log, MSG_WARN, 0, "events.log ends in a cut line (the recorder was killed?)");
	}
	t->td->malformed_lines += tl.too_long;
	trace_dir_recover(t->td);
	return 0;
}

static void tui_settings(struct tui *t)
{
	settings_defaults(&t->set);
	char *dir = t->o.config_dir ? strdup(t->o.config_dir) : settings_dir();
	if (dir && asprintf(&t->settings_path, "%s/ntop.conf", dir) < 0)
		t->settings_path = NULL;
	free(dir);
	if (t->settings_path && settings_load(&t->set, t->settings_path) > 0)
		msglog_addf(t->log, MSG_WARN, "%s: some lines were not understood and are ignored", t->settings_path);
	int col = ktable_col_from_key(t->set.sort);
	t->kt.sort = col >= 0 ? (enum kcol)col : KC_LAUNCHES;
	t->kt.reverse = t->set.sort_reverse;
	t->show_log = t->set.show_log;
}

static int tui_theme(struct tui *t, char **cause)
{
	const char *want = t->o.theme ? t->o.theme : t->set.theme;
	if (theme_resolve(want, t->o.themes_dir, &t->theme, cause) == 0) {
		if (t->o.theme)
			snprintf(t->set.theme, sizeof t->set.theme, "%s", t->o.theme);
		return 0;
	}
	if (t->o.theme)
		return -1; /* asked for on the command line: say so */
	msglog_addf(t->log, MSG_WARN, "saved theme '%s' not found; using dark", want);
	free(*cause);
	*cause = NULL;
	theme_builtin("dark", &t->theme);
	return 0;
}

int tui_create(const struct tui_opts *o, struct tui **out, char **cause)
{
	*out = NULL;
	struct tui *t = calloc(1, sizeof *t);
	if (!t)
		return cause_set(cause, "out of memory");
	t->o = *o;
	t->utf8 = !o->ascii;
	t->mono = o->no_color;
	strbuf_init(&t->partial);
	rcache_init(&t->rc);
	ktable_init(&t->kt);
	t->log = msglog_create(TUI_LOG_LINES);
	t->td = trace_dir_create(o->trace_dir);
	if (!t->log || !t->td) {
		cause_set(cause, "out of memory");
		goto fail;
	}
	tui_settings(t);
	for (int i = 0; i < o->n_notes; i++)
		msglog_add(t->log, MSG_WARN, 0, o->notes[i]);
	if (tui_theme(t, cause) < 0)
		goto fail;
	if (!o->app && !o->start && tui_load_trace(t, cause) < 0)
		goto fail;
	if (tui_push(t, o->start ? &view_start_ops : &view_kernels_ops, NULL) < 0) {
		cause_set(cause, o->start ? "cannot open the start screen" : "cannot open the kernel list");
		goto fail;
	}
	t->dirty = 1;
	*out = t;
	return 0;
fail:
	tui_free(t);
	return -1;
}

void tui_free(struct tui *t)
{
	if (!t)
		return;
	while (t->depth)
		tui_pop(t);
	if (t->settings_path) {
		char *cause = NULL;
		t->set.sort_reverse = t->kt.reverse;
		snprintf(t->set.sort, sizeof t->set.sort, "%s", ktable_col_key(t->kt.sort));
		t->set.show_log = t->show_log;
		if (settings_save(&t->set, t->settings_path, &cause) < 0)
			fprintf(stderr, "ntop: settings not saved: %s\n", cause);
		free(cause);
		free(t->settings_path);
	}
	for (int i = 0; i < t->n_sources; i++)
		free(t->sources[i]);
	free(t->sources);
	for (int i = 0; i < t->n_reqs; i++) {
		free(t->reqs[i].name);
		free(t->reqs[i].probes);
		free(t->reqs[i].label);
	}
	free(t->reqs);
	export_job_free(t->job); /* still running (a signal ended the UI): it finishes on its own */
	strbuf_done(&t->partial);
	rcache_done(&t->rc);
	ktable_done(&t->kt);
	msglog_free(t->log);
	trace_dir_free(t->td);
	free(t);
}

/* ---- keys ---- */

static int tui_app_running(const struct tui *t)
{
	return t->o.app && t->app_state.running && !t->app_state.detached;
}

void tui_ask_quit(struct tui *t)
{
	if (!tui_app_running(t)) {
		t->quit = 1;
		return;
	}
	if (t->depth && t->stack[t->depth - 1]->ops == &view_confirm_ops)
		return;
	tui_push(t, &view_confirm_ops, NULL);
}

void tui_key(struct tui *t, int key)
{
	if (key == TK_RESIZE) {
		t->dirty = 1;
		return;
	}
	struct view *v = t->depth ? t->stack[t->depth - 1] : NULL;
	int r = v && v->ops->key ? v->ops->key(v, key) : 0;
	if (r & VIEW_REDRAW)
		t->dirty = 1;
	if (r & VIEW_QUIT) {
		if (t->depth > 1)
			tui_pop(t);
		else
			tui_ask_quit(t);
		return;
	}
	if (r & VIEW_HANDLED)
		return;
	switch (key) {
	case 'q':
	case TK_ESC:
		if (t->depth > 1)
			tui_pop(t);
		else if (key == 'q')
			tui_ask_quit(t);
		break;
	case TK_CTRL('c'):
		tui_ask_quit(t);
		break;
	case 'L':
	case '@': /* where a view takes L (the plots' cursor) */
		t->show_log = !t->show_log;
		break;
	case '?':
	case TK_F0 + 1:
		tui_push(t, &view_help_ops, NULL);
		break;
	case 'm':
		t->set.mangled = !t->set.mangled;
		ktable_mark(&t->kt);
		break;
	default:
		return;
	}
	t->dirty = 1;
}

/* ---- drawing ---- */

struct rgb tui_sel_bg(const struct tui *t)
{
	return rgb_mix(t->theme.c[THEME_BG], t->theme.c[THEME_SELECTION], 0.35);
}

int tui_mono(const struct tui *t)
{
	return t->mono || t->theme.mono;
}

/* " NVIDIA H200, 132 SMs ", or for several GPUs " 2 GPUs: NVIDIA H200,
 * 132 SMs " (the name when all are alike). */
static void tui_devices_text(const struct trace_dir *td, char *buf, size_t n)
{
	const struct td_device *d = td->n_devices ? &td->devices[0] : NULL;
	uint32_t ords = 0;
	int alike = 1;
	for (int i = 0; i < td->n_devices; i++) {
		if (td->devices[i].ordinal >= 0 && td->devices[i].ordinal < 32)
			ords |= 1u << td->devices[i].ordinal;
		alike &= d->name && td->devices[i].name && !strcmp(d->name, td->devices[i].name) &&
			 d->sms == td->devices[i].sms;
	}
	int gpus = __builtin_popcount(ords);
	buf[0] = 0;
	if (!d || !d->name)
		return;
	const char *lanes = td_device_amd(d) ? "CUs" : "SMs";
	if (gpus <= 1)
		snprintf(buf, n, " %s, %d %s ", d->name, d->sms, lanes);
	else if (alike)
		snprintf(buf, n, " %d GPUs: %s, %d %s ", gpus, d->name, d->sms, lanes);
	else
		snprintf(buf, n, " %d GPUs ", gpus);
}

static void tui_draw_title(struct tui *t, struct cellgrid *g)
{
	struct rgb bg = rgb_mix(t->theme.c[THEME_BG], t->theme.c[THEME_ACCENT], 0.18);
	draw_fill(g, 0, t->lay.title_y, g->w, 1, bg);
	int x = draw_text(t, g, 0, t->lay.title_y, g->w, "ntop ", draw_c(t, THEME_ACCENT), bg, CELL_BOLD);
	char right[160] = "";
	tui_devices_text(t->td, right, sizeof right);
	int rw = layout_text_cells(right);
	if (rw > g->w / 3)
		rw = 0;
	char crumbs[256] = "";
	size_t o = 0;
	for (int i = 1; i < t->depth && o < sizeof crumbs; i++)
		if (!t->stack[i]->modal)
			o += (size_t)snprintf(crumbs + o, sizeof crumbs - o, " > %s", t->stack[i]->ops->name);
	/* the views' names stay; a long title (a trace path, a command line)
	 * keeps its first word and its end: "…/session > launches" */
	const char *title = t->o.title ? t->o.title : "";
	char shown[1024], left[1400];
	int room = g->w - x - rw - layout_text_cells(crumbs), first = (int)strcspn(title, " ");
	layout_clip_tail(title, first <= room / 2 ? first : 0, room, draw_ellipsis(t), shown, sizeof shown);
	snprintf(left, sizeof left, "%s%s", shown, crumbs);
	draw_text(t, g, x, t->lay.title_y, g->w - x - rw, left, draw_c(t, THEME_FG), bg, 0);
	if (rw)
		draw_text(t, g, g->w - rw, t->lay.title_y, rw, right, draw_c(t, THEME_DIM), bg, 0);
}

static int tui_msg_role(enum msg_kind k)
{
	switch (k) {
	case MSG_WARN: return THEME_WARN;
	case MSG_ERROR: return THEME_ERROR;
	case MSG_APP_OUT: return THEME_FG;
	case MSG_APP_ERR: return THEME_WARN;
	default: return THEME_DIM;
	}
}

static void tui_draw_log(struct tui *t, struct cellgrid *g)
{
	int y = t->lay.log_y, h = t->lay.log_h;
	struct rgb bg = t->theme.c[THEME_BG];
	draw_fill(g, 0, y, g->w, h, bg);
	for (int x = 0; x < g->w; x++)
		cellgrid_set(g, x, y, draw_hline(t), draw_c(t, THEME_GRID), bg, 0);
	char head[128];
	snprintf(head, sizeof head, " log: %llu lines (L or @ hides) ", (unsigned long long)t->log->total);
	draw_role(t, g, 2, y, g->w - 2, head, THEME_DIM);
	/* newest at the bottom; a long line wraps (indented) so that paths and
	 * reasons are there in full */
	int row = y + h - 1;
	for (int i = t->log->n - 1; i >= 0 && row > y; i--) {
		const struct msg *m = msglog_get(t->log, i);
		const char *tag = m->kind == MSG_APP_OUT ? "app| " : m->kind == MSG_APP_ERR ? "app! " : "";
		char line[1100], part[1100];
		snprintf(line, sizeof line, "%s%s", tag, m->text);
		int n = layout_wrap(line, g->w, 2, 0, NULL, 0);
		for (int r = n - 1; r >= 0 && row > y; r--, row--) {
			layout_wrap(line, g->w, 2, r, part, sizeof part);
			draw_role(t, g, 0, row, g->w, part, tui_msg_role(m->kind));
		}
	}
}

static void tui_counts(const struct tui *t, char *buf, size_t len)
{
	uint64_t launches = 0;
	for (int i = 0; i < t->td->n_kernels; i++)
		launches += t->td->kernels[i].launches;
	int probed = 0;
	for (int i = 0; i < t->td->n_results; i++)
		probed += t->td->results[i].file != NULL;
	uint64_t waiting = 0, lost = 0;
	for (int i = 0; i < t->td->n_procs; i++) {
		const struct td_process *p = &t->td->procs[i];
		waiting += p->results_final ? 0 : p->results_pending;
		lost += td_process_results_lost(p);
	}
	int n = snprintf(buf, len, "%d kernels  %llu launches  %d probed  %llu warn", t->td->n_kernels,
			 (unsigned long long)launches, probed, (unsigned long long)t->log->warnings);
	/* The hook's result backlog: results still being written, or lost. */
	if (n > 0 && (size_t)n < len && waiting)
		n += snprintf(buf + n, len - (size_t)n, "  %llu writing", (unsigned long long)waiting);
	if (n > 0 && (size_t)n < len && lost)
		snprintf(buf + n, len - (size_t)n, "  %llu lost", (unsigned long long)lost);
}

static void tui_app_text(const struct tui *t, char *buf, size_t len)
{
	const struct tui_app_state *s = &t->app_state;
	if (t->o.start) {
		snprintf(buf, len, "GPUs and sessions");
		return;
	}
	if (!t->o.app) {
		snprintf(buf, len, trace_dir_incomplete(t->td, NULL) ? "recorded, incomplete" : "recorded");
		return;
	}
	if (s->attached && s->running)
		snprintf(buf, len, "attached, pid %d running", s->pid);
	else if (s->attached)
		snprintf(buf, len, "attached, recording ended");
	else if (s->detached)
		snprintf(buf, len, "pid %d detached", s->pid);
	else if (s->running)
		snprintf(buf, len, "pid %d running", s->pid);
	else if (s->signaled)
		snprintf(buf, len, "pid %d killed by signal %d (%s)", s->pid, s->sig, strsignal(s->sig));
	else if (s->exited)
		snprintf(buf, len, "pid %d exited with status %d", s->pid, s->status);
	else
		snprintf(buf, len, "not started");
}

/* Cells of a status message's head kept when it is cut: the verb of a
 * message about a file, else the subject before the first ": " ("export
 * failed: ", "this is a recorded trace: ") when it is short. */
static int tui_status_keep(const struct tui *t, int w)
{
	if (t->status_keep)
		return t->status_keep;
	const char *colon = strstr(t->status, ": ");
	if (!colon)
		return 0;
	char head[sizeof t->status];
	snprintf(head, sizeof head, "%.*s", (int)(colon - t->status) + 2, t->status);
	int n = layout_text_cells(head);
	return n <= w / 2 ? n : 0;
}

static void tui_draw_status(struct tui *t, struct cellgrid *g)
{
	int y = t->lay.status_y;
	struct rgb bg = rgb_mix(t->theme.c[THEME_BG], t->theme.c[THEME_FG], 0.12);
	draw_fill(g, 0, y, g->w, 1, bg);
	char progress[300] = "";
	if (t->job)
		export_job_progress(t->job, time_mono_ns(), progress, sizeof progress);
	if (progress[0]) {
		draw_text(t, g, 0, y, g->w, progress, draw_c(t, THEME_ACCENT), bg, CELL_BOLD);
		return;
	}
	if (t->status[0] && time_mono_ns() < t->status_until) {
		/* too long: the end says most (a reason, a file name); the log
		 * pane holds all of it */
		char shown[sizeof t->status];
		layout_clip_tail(t->status, tui_status_keep(t, g->w), g->w, t->utf8 ? "\xe2\x80\xa6" : "~", shown,
				 sizeof shown);
		draw_text(t, g, 0, y, g->w, shown, draw_c(t, t->status_err ? THEME_ERROR : THEME_ACCENT), bg,
			  CELL_BOLD);
		return;
	}
	t->status[0] = 0;
	char app[160], counts[160], left[400];
	tui_app_text(t, app, sizeof app);
	tui_counts(t, counts, sizeof counts);
	snprintf(left, sizeof left, "[%s] %s", app, counts);
	int role = t->app_state.signaled || (t->app_state.exited && t->app_state.status) ? THEME_WARN : THEME_FG;
	int x = draw_text(t, g, 0, y, g->w, left, draw_c(t, role), bg, 0);
	struct view *v = t->depth ? t->stack[t->depth - 1] : NULL;
	const char *hints = v && v->ops->hints ? v->ops->hints(v) : "";
	char fit[300], h[320];
	/* the hints that fit (whole ones, from the first), then "? help" */
	int room = g->w - x - 2 - 8;
	if (room > 0 && textfit_fields(hints, room, NULL, fit, sizeof fit) > 0)
		snprintf(h, sizeof h, "%s  ? help", fit);
	else
		snprintf(h, sizeof h, "? help");
	int hw = layout_text_cells(h);
	if (x + 2 + hw <= g->w)
		draw_text(t, g, g->w - hw, y, hw, h, draw_c(t, THEME_DIM), bg, 0);
}

static void tui_draw_view(struct tui *t, struct view *v, struct cellgrid *g)
{
	int y = t->lay.view_y, h = t->lay.view_h;
	if (v->w != g->w || v->h != h || v->y != y) {
		v->x = 0;
		v->y = y;
		v->w = g->w;
		v->h = h;
		if (v->ops->resize)
			v->ops->resize(v, g->w, h);
	}
	v->ops->draw(v, g, 0, y, g->w, h);
}

void tui_draw(struct tui *t, struct cellgrid *g)
{
	cellgrid_clear(g, t->theme.c[THEME_FG], t->theme.c[THEME_BG]);
	layout_screen(g->w, g->h, t->show_log, &t->lay);
	if (t->lay.too_small) {
		draw_role(t, g, 0, 0, g->w, "terminal too small", THEME_WARN);
		return;
	}
	struct ktable_ctx kc = tui_kctx(t);
	ktable_update(&t->kt, &kc);
	tui_draw_title(t, g);
	int base = t->depth - 1;
	while (base > 0 && t->stack[base]->modal)
		base--;
	for (int i = base; i < t->depth; i++)
		tui_draw_view(t, t->stack[i], g);
	if (t->lay.log_h)
		tui_draw_log(t, g);
	tui_draw_status(t, g);
}
