/* Live probe control (hook_control.h, doc/control.md). The poller (the
 * constructor once, then a thread every 100 ms) stats NTOP_CONTROL; when the
 * file's identity changed, or it changed less than a second ago (a rename
 * can reuse an inode within one timestamp tick), it reads it and applies a
 * generation above the last one: probe files are loaded and verified here,
 * never on the launch path, then the new table is published with one
 * release store. Launch threads hold a per-kernel view (kernel -> selection
 * of one generation in one process) and build a new one only when the
 * generation or the process changed. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "common/strbuf.h"
#include "common/timeutil.h"
#include "engine/probe/probe.h"
#include "engine/probe/verify.h"
#include "hook/hook_backend.h"
#include "hook/hook_control.h"
#include "hook/hook_events.h"
#include "hook/hook_log.h"
#include "hook/hook_signals.h"
#include "hook/hook_source.h"
#include "hook/hook_state.h"
#include "trace/control.h"
#include "trace/events.h"

#define CONTROL_POLL_NS 100000000ll       /* stat the file every 100 ms */
#define CONTROL_RECENT_NS 1000000000ll    /* re-read a file this young even if it looks unchanged */

static uint64_t control_hash(const char *a, size_t alen, const char *b)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < alen; i++)
		h = (h ^ (unsigned char)a[i]) * 1099511628211ull;
	for (; b && *b; b++)
		h = (h ^ (unsigned char)*b) * 1099511628211ull;
	return h;
}

/* 1 the first time key is seen (then the caller says it); under poll_lock. */
static int control_first_time(uint64_t key)
{
	struct hook_control *c = &hook.ctl;
	for (int i = 0; i < c->n_warned; i++)
		if (c->warned[i] == key)
			return 0;
	/* A ring: past its size the oldest messages may be said again, but a
	 * file re-read every poll never floods the stream. */
	int cap = (int)(sizeof c->warned / sizeof c->warned[0]);
	c->warned[c->next_warned] = key;
	c->next_warned = (c->next_warned + 1) % cap;
	if (c->n_warned < cap)
		c->n_warned++;
	return 1;
}

static int64_t control_mtime(const struct stat *st)
{
	return (int64_t)st->st_mtim.tv_sec * 1000000000ll + st->st_mtim.tv_nsec;
}

/* ---- probe files and sets (poller only) ---- */

static struct hook_ctl_file *control_file_load(const char *path, const struct stat *st)
{
	struct hook_ctl_file *f = calloc(1, sizeof *f);
	if (!f || !(f->path = strdup(path))) {
		free(f);
		return NULL;
	}
	if (st) {
		f->dev = st->st_dev;
		f->ino = st->st_ino;
		f->size = st->st_size;
		f->mtime_ns = control_mtime(st);
	}
	if (probe_load_file(path, &f->probe, &f->cause) < 0 || verify_probe(f->probe, &f->cause) < 0) {
		probe_free(f->probe);
		f->probe = NULL;
		if (!f->cause)
			f->cause = strdup(path);
		hook_event_warn("probe %s rejected: %s", path, f->cause ? f->cause : "?");
	}
	f->next = hook.ctl.files;
	hook.ctl.files = f;
	return f;
}

/* The loaded probe for path as it is on disk now. */
static struct hook_ctl_file *control_file_get(const char *path)
{
	struct stat st;
	int ok = stat(path, &st) == 0;
	for (struct hook_ctl_file *f = hook.ctl.files; f; f = f->next) {
		if (strcmp(f->path, path) != 0)
			continue;
		if (!ok && f->ino == 0)
			return f;
		if (ok && f->dev == st.st_dev && f->ino == st.st_ino && f->size == st.st_size &&
		    f->mtime_ns == control_mtime(&st))
			return f;
	}
	return control_file_load(path, ok ? &st : NULL);
}

static struct hook_ctl_set *control_set_find(struct hook_ctl_file **files, int n)
{
	for (struct hook_ctl_set *s = hook.ctl.sets; s; s = s->next)
		if (s->n_files == n && memcmp(s->files, files, (size_t)n * sizeof *files) == 0)
			return s;
	return NULL;
}

static struct hook_ctl_set *control_set_make(struct hook_ctl_file **files, int n)
{
	struct hook_ctl_set *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->files = files;
	s->n_files = n;
	s->probes = calloc((size_t)n, sizeof *s->probes);
	struct strbuf why;
	strbuf_init(&why);
	for (int i = 0; s->probes && i < n; i++) {
		if (files[i]->probe)
			s->probes[s->n++] = files[i]->probe;
		else
			strbuf_printf(&why, "%s%s", why.len ? "; " : "", files[i]->cause);
	}
	if (!s->probes) {
		strbuf_done(&why);
		free(s);
		return NULL;
	}
	s->cause = why.len ? strbuf_finish(&why, NULL) : NULL;
	if (!s->cause)
		strbuf_done(&why);
	s->next = hook.ctl.sets;
	hook.ctl.sets = s;
	return s;
}

/* "a.toml,b.toml" -> the set of those files as they are now. */
static const struct hook_ctl_set *control_set_get(const char *probes)
{
	int n = 1;
	for (const char *p = probes; *p; p++)
		n += *p == ',';
	struct hook_ctl_file **files = calloc((size_t)n, sizeof *files);
	char *copy = strdup(probes);
	int k = 0;
	for (char *save = NULL, *tok = copy && files ? strtok_r(copy, ",", &save) : NULL; tok && k < n;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!(files[k] = control_file_get(tok)))
			break;
		k++;
	}
	free(copy);
	struct hook_ctl_set *s = NULL;
	if (files && k == n && !(s = control_set_find(files, n)))
		s = control_set_make(files, n);
	if (!s || s->files != files)
		free(files);
	return s;
}

/* ---- generations ---- */

struct control_parse_ctx {
	const char *text;
};

static void control_bad_line(void *arg, const char *line, size_t len, const char *why)
{
	const struct control_parse_ctx *pc = arg;
	int lineno = 1;
	for (const char *p = pc->text; p < line; p++)
		lineno += *p == '\n';
	if (!control_first_time(control_hash(line, len, why)))
		return;
	hook_event_warn("control file %s:%d: %s: %.*s", hook.cfg.control, lineno, why, (int)(len > 200 ? 200 : len),
			line);
}

static int control_sel_cmp(const void *a, const void *b)
{
	return strcmp(((const struct hook_ctl_sel *)a)->name, ((const struct hook_ctl_sel *)b)->name);
}

static struct hook_ctl_table *control_table_build(const struct control_file *cf)
{
	struct hook_ctl_table *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	t->gen = cf->gen;
	t->sels = calloc((size_t)cf->n + 1, sizeof *t->sels);
	if (!t->sels) {
		free(t);
		return NULL;
	}
	for (int i = 0; i < cf->n; i++) {
		const struct control_entry *e = &cf->entries[i];
		struct hook_ctl_sel *s = &t->sels[t->n];
		if (!(s->set = control_set_get(e->probes)) || !(s->name = strdup(e->name)))
			continue;
		s->mode = (int)e->mode;
		s->n = e->n ? e->n : 1;
		s->limit = e->limit ? e->limit : hook.cfg.probe_limit;
		t->n++;
	}
	qsort(t->sels, (size_t)t->n, sizeof *t->sels, control_sel_cmp);
	return t;
}

/* The generation's `source` names, taken from cf: saved on the thread only
 * (an application thread can apply a file at load or at its first launch). */
static void control_keep_sources(struct control_file *cf)
{
	struct hook_control *c = &hook.ctl;
	for (int i = 0; i < c->n_sources; i++)
		free(c->sources[i]);
	free(c->sources);
	c->sources = cf->sources;
	c->n_sources = cf->n_sources;
	cf->sources = NULL;
	cf->n_sources = 0;
}

static void control_apply(const char *text, size_t len)
{
	struct control_file cf;
	char *cause = NULL;
	struct control_parse_ctx pc = { text };
	if (control_parse(text, len, &cf, control_bad_line, &pc, &cause) < 0) {
		if (control_first_time(control_hash(text, len, cause)))
			hook_event_warn("control file %s ignored: %s", hook.cfg.control, cause ? cause : "?");
		free(cause);
		return;
	}
	struct hook_ctl_table *t = cf.gen > hook.ctl.applied_gen ? control_table_build(&cf) : NULL;
	if (t) {
		/* the line is queued before the table is published: a launch that
		 * already runs under the new generation comes after it in the
		 * stream (the other order made a reader count it in the old one) */
		struct strbuf sb;
		hook_event_begin(&sb, "control");
		event_add_int(&sb, "gen", (long long)t->gen);
		event_add_int(&sb, "kernels", t->n);
		hook_event_emit(&sb);
		t->older = hook.ctl.table;
		hook.ctl.applied_gen = t->gen;
		__atomic_store_n(&hook.ctl.table, t, __ATOMIC_RELEASE);
		hook_log("control gen %llu: %d kernels", (unsigned long long)t->gen, t->n);
		control_keep_sources(&cf);
		/* on the control thread only: an app thread polls before its
		 * first launch, and building starts from launches seen anyway */
		if (hook_backend_in_use->picked && __atomic_load_n(&hook.ctl.started, __ATOMIC_ACQUIRE) &&
		    pthread_equal(pthread_self(), hook.ctl.thread))
			hook_backend_in_use->picked(t);
	}
	control_file_done(&cf);
}

/* Why the control file may not steer this process, or NULL: it picks the
 * probes that run in the app, so it must be a regular file of the caller's
 * that nobody else can write (a directory another user can write into is
 * refused by ntop; this also covers NTOP_CONTROL set by hand). */
static const char *control_untrusted(const struct stat *st)
{
	if (!S_ISREG(st->st_mode))
		return "not a regular file";
	if (st->st_uid != geteuid())
		return "owned by another user";
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return "writable by group or others (chmod go-w)";
	return NULL;
}

/* Reads the whole file (at most CONTROL_MAX_BYTES); st describes what was read. */
static char *control_read(const char *path, size_t *len, struct stat *st)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0) {
		if (errno == ELOOP && control_first_time(control_hash("link", 4, path)))
			hook_event_warn("control file %s ignored: a symbolic link", path);
		return NULL;
	}
	char *buf = NULL;
	const char *why = fstat(fd, st) == 0 ? control_untrusted(st) : "cannot stat it";
	if (why) {
		if (control_first_time(control_hash("trust", 5, path)))
			hook_event_warn("control file %s ignored: %s", path, why);
	} else if (st->st_size <= (off_t)CONTROL_MAX_BYTES && (buf = malloc((size_t)st->st_size + 1)) != NULL) {
		size_t n = 0;
		ssize_t r = 0;
		while (n < (size_t)st->st_size && ((r = read(fd, buf + n, (size_t)st->st_size - n)) > 0 ||
						   (r < 0 && errno == EINTR)))
			n += r > 0 ? (size_t)r : 0;
		buf[n] = 0;
		*len = n;
	} else if (st->st_size > (off_t)CONTROL_MAX_BYTES && control_first_time(control_hash("size", 4, path))) {
		hook_event_warn("control file %s ignored: larger than %u bytes", path, CONTROL_MAX_BYTES);
	}
	close(fd);
	return buf;
}

void hook_control_poll(void)
{
	const char *path = hook.cfg.control;
	if (!path || !hook_events_on())
		return;
	struct hook_control *c = &hook.ctl;
	pthread_mutex_lock(&c->poll_lock);
	struct stat st;
	if (lstat(path, &st) == 0) {
		int64_t mt = control_mtime(&st), age = (int64_t)time_wall_ns() - mt;
		int same = c->have_seen && c->dev == st.st_dev && c->ino == st.st_ino && c->size == st.st_size &&
			   c->mtime_ns == mt;
		size_t len = 0;
		char *text = !same || (age < CONTROL_RECENT_NS && age > -CONTROL_RECENT_NS) ? control_read(path, &len, &st)
											     : NULL;
		if (text) {
			c->have_seen = 1;
			c->dev = st.st_dev;
			c->ino = st.st_ino;
			c->size = st.st_size;
			c->mtime_ns = control_mtime(&st);
			control_apply(text, len);
			free(text);
		}
	}
	pthread_mutex_unlock(&c->poll_lock);
}

/* ---- the thread ---- */

static void *control_thread(void *arg)
{
	(void)arg;
	struct hook_control *c = &hook.ctl;
	pthread_mutex_lock(&c->lock);
	while (!c->stop) {
		struct timespec ts;
		time_deadline(&ts, CONTROL_POLL_NS);
		pthread_cond_timedwait(&c->wake, &c->lock, &ts);
		if (c->stop)
			break;
		pthread_mutex_unlock(&c->lock);
		hook_control_poll();
		pthread_mutex_lock(&c->poll_lock);
		hook_source_requests(c->sources, c->n_sources);
		pthread_mutex_unlock(&c->poll_lock);
		pthread_mutex_lock(&c->lock);
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

void hook_control_init(void)
{
	hook_control_poll();
}

void hook_control_ensure_thread(void)
{
	struct hook_control *c = &hook.ctl;
	if (!hook.cfg.control || __atomic_load_n(&c->started, __ATOMIC_ACQUIRE))
		return;
	/* A fork child (or a file written since load) is up to date before its
	 * first launch goes ahead. */
	hook_control_poll();
	pthread_mutex_lock(&c->lock);
	if (!c->started && !c->stop) {
		if (hook_thread_create(&c->thread, control_thread, NULL) == 0)
			__atomic_store_n(&c->started, 1, __ATOMIC_RELEASE);
		else
			c->stop = 1;
	}
	pthread_mutex_unlock(&c->lock);
}

void hook_control_shutdown(void)
{
	struct hook_control *c = &hook.ctl;
	hook_thread_stop(&c->lock, &c->wake, &c->stop, &c->started, &c->thread);
}

void hook_control_fork_child(void)
{
	/* The parent's thread is gone; views and counters are per process
	 * (pid-tagged), so the child's launches start afresh. */
	hook.ctl.started = 0;
	hook.ctl.stop = 0;
}

/* ---- the launch side ---- */

static const struct hook_ctl_sel *control_find(const struct hook_ctl_table *t, const char *name)
{
	int lo = 0, hi = t->n - 1;
	while (name && lo <= hi) {
		int mid = lo + (hi - lo) / 2, c = strcmp(name, t->sels[mid].name);
		if (c == 0)
			return &t->sels[mid];
		if (c < 0)
			hi = mid - 1;
		else
			lo = mid + 1;
	}
	return NULL;
}

/* Under hook.ctl.lock. */
static struct hook_ctl_count *control_count(struct hook_kernel *k, const struct hook_ctl_set *set)
{
	struct hook_ctl_count *n;
	for (n = k->ctl_counts; n; n = n->next)
		if (n->set == set && n->pid == hook.pid)
			return n;
	if ((n = calloc(1, sizeof *n)) != NULL) {
		n->set = set;
		n->pid = hook.pid;
		n->next = k->ctl_counts;
		k->ctl_counts = n;
	}
	return n;
}

/* Slow path: the kernel's view of the current table in this process. */
static struct hook_ctl_view *control_view(struct hook_kernel *k)
{
	struct hook_control *c = &hook.ctl;
	pthread_mutex_lock(&c->lock);
	const struct hook_ctl_table *t = __atomic_load_n(&c->table, __ATOMIC_ACQUIRE);
	struct hook_ctl_view *v = k->ctl;
	if (v && v->gen == t->gen && v->pid == hook.pid)
		goto out;
	if (!(v = calloc(1, sizeof *v)))
		goto out;
	v->gen = t->gen;
	v->pid = hook.pid;
	v->sel = control_find(t, k->name);
	if (v->sel && !(v->count = control_count(k, v->sel->set)))
		v->sel = NULL;
	v->all = c->views;
	c->views = v;
	__atomic_store_n(&k->ctl, v, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&c->lock);
	return v;
}

static int control_reserve(struct hook_ctl_view *v, struct hook_probe_pick *pick)
{
	if (__atomic_fetch_add(&v->count->probed, 1, __ATOMIC_RELAXED) < v->sel->limit) {
		pick->reserved = &v->count->probed;
		return 1;
	}
	__atomic_sub_fetch(&v->count->probed, 1, __ATOMIC_RELAXED);
	return 0;
}

const struct hook_ctl_set *hook_control_set_of(const struct hook_ctl_table *t, const char *name)
{
	const struct hook_ctl_sel *s = control_find(t, name);
	return s ? s->set : NULL;
}

int hook_control_wanted(struct hook_kernel *k, const struct hook_ctl_table *t, struct hook_probe_pick *pick)
{
	struct hook_ctl_view *v = __atomic_load_n(&k->ctl, __ATOMIC_ACQUIRE);
	if (!v || v->gen != t->gen || v->pid != hook.pid)
		v = control_view(k);
	if (!v || !v->sel)
		return 0;
	/* SASS-only kernels are declined once, then stay off the probe path. */
	if (!k->has_ptx && __atomic_load_n(&k->decline_reported, __ATOMIC_ACQUIRE))
		return 0;
	pick->set = v->sel->set;
	pick->reserved = NULL;
	pick->next_taken = NULL;
	switch (v->sel->mode) {
	case CONTROL_NEXT:
		pick->next_taken = &v->next_taken;
		return __atomic_exchange_n(&v->next_taken, 1, __ATOMIC_ACQ_REL) == 0;
	case CONTROL_NTH:
		if (__atomic_fetch_add(&v->launches, 1, __ATOMIC_RELAXED) % v->sel->n != 0)
			return 0;
		return control_reserve(v, pick);
	default:
		return control_reserve(v, pick);
	}
}
