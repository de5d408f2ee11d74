/* Event queue and writer thread (hook_events.h). The queue is a ring of
 * malloc'd lines under one mutex; the writer takes a line, writes it outside
 * the lock (hook_sink.c: the launcher's socket, one message per line, or a
 * file) and frees it. Lines longer than EVENT_LINE_MAX are cut at the last
 * field that fits, so each stays one message or one atomic write. */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "common/timeutil.h"
#include "hook/hook_events.h"
#include "hook/hook_sink.h"
#include "hook/hook_state.h"
#include "trace/events.h"

int hook_events_on(void)
{
	return hook.cfg.events_on;
}

void hook_event_begin(struct strbuf *sb, const char *type)
{
	strbuf_init(sb);
	event_begin(sb, type, time_wall_ns(), hook.pid);
}

static void events_write_line(const char *line, size_t len)
{
	hook_sink_write(line, len, 0);
}

static void events_write_lost(uint64_t lost)
{
	struct strbuf sb;
	hook_event_begin(&sb, "lost");
	event_add_int(&sb, "events", (long long)lost);
	event_end(&sb);
	if (!sb.failed)
		events_write_line(sb.data, sb.len);
	strbuf_done(&sb);
}

static void *events_writer(void *arg)
{
	(void)arg;
	/* A reader that went away (ntop quit) must not kill the application
	 * with SIGPIPE: blocked here, the write fails with EPIPE instead. */
	sigset_t pipe_set;
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, NULL);
	struct hook_queue *q = &hook.q;
	pthread_mutex_lock(&q->lock);
	for (;;) {
		while (q->count == 0 && q->lost == 0 && !q->stop)
			pthread_cond_wait(&q->wake, &q->lock);
		if (q->count == 0 && q->lost == 0 && q->stop)
			break;
		char *line = NULL;
		uint64_t lost = 0;
		if (q->count > 0) {
			line = q->lines[q->head];
			q->head = (q->head + 1) % HOOK_QUEUE_SLOTS;
			q->count--;
		} else {
			lost = q->lost;
			q->lost = 0;
		}
		q->writing = 1;
		pthread_mutex_unlock(&q->lock);
		if (line)
			events_write_line(line, strlen(line));
		else
			events_write_lost(lost);
		free(line);
		pthread_mutex_lock(&q->lock);
		q->writing = 0;
		if (q->count == 0 && q->lost == 0)
			pthread_cond_broadcast(&q->idle);
	}
	pthread_cond_broadcast(&q->idle);
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

/* Cuts an over-long line after the last complete field that fits. */
static void events_clip(struct strbuf *sb)
{
	if (sb->len <= EVENT_LINE_MAX)
		return;
	size_t cut = EVENT_LINE_MAX - 1;
	while (cut > 0 && sb->data[cut] != ' ')
		cut--;
	sb->data[cut] = '\n';
	sb->data[cut + 1] = 0;
	sb->len = cut + 1;
}

/* Queues a finished line (takes it) and wakes the writer, starting it the
 * first time. */
static void events_queue(char *line, size_t len)
{
	struct hook_queue *q = &hook.q;
	pthread_mutex_lock(&q->lock);
	if (!line || q->count == HOOK_QUEUE_SLOTS || q->stop) {
		q->lost++;
		free(line);
	} else {
		struct strbuf tmp = { line, len, len + 1, 0 };
		events_clip(&tmp);
		q->lines[(q->head + q->count) % HOOK_QUEUE_SLOTS] = line;
		q->count++;
	}
	if (!q->started && !q->stop) {
		q->started = 1;
		if (pthread_create(&q->thread, NULL, events_writer, NULL) != 0)
			q->started = -1; /* no thread: lines stay queued, nothing blocks */
	}
	pthread_cond_signal(&q->wake);
	pthread_mutex_unlock(&q->lock);
}

void hook_event_emit(struct strbuf *sb)
{
	if (!hook_events_on()) {
		strbuf_done(sb);
		return;
	}
	event_end(sb);
	size_t len;
	char *line = strbuf_finish(sb, &len);
	events_queue(line, len);
}

void hook_event_emit_sync(struct strbuf *sb)
{
	if (!hook_events_on()) {
		strbuf_done(sb);
		return;
	}
	event_end(sb);
	if (sb->failed) {
		strbuf_done(sb);
		return;
	}
	/* An application thread: SIGPIPE blocked around the write (a pipe
	 * given as NTOP_EVENT_FD), and one the write raised is taken back (not
	 * one that was already due). */
	sigset_t pipe_set, old, pending;
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	int was_pending = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE);
	events_clip(sb);
	enum hook_sink_rc rc = hook_sink_write(sb->data, sb->len, 1);
	struct timespec zero = { 0, 0 };
	if (!was_pending)
		sigtimedwait(&pipe_set, NULL, &zero);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc == HOOK_SINK_LATER) { /* the socket would make us wait: the writer thread will */
		size_t len;
		char *line = strbuf_finish(sb, &len);
		events_queue(line, len);
		return;
	}
	strbuf_done(sb);
}

void hook_event_warn(const char *fmt, ...)
{
	if (!hook_events_on())
		return;
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	struct strbuf sb;
	hook_event_begin(&sb, "warn");
	event_add(&sb, "msg", msg);
	hook_event_emit(&sb);
}

void hook_events_shutdown(int timeout_ms)
{
	struct hook_queue *q = &hook.q;
	struct timespec until;
	time_deadline(&until, timeout_ms * 1000000ll);
	pthread_mutex_lock(&q->lock);
	if (q->started != 1) {
		pthread_mutex_unlock(&q->lock);
		return;
	}
	q->stop = 1;
	pthread_cond_signal(&q->wake);
	int rc = 0;
	while ((q->count > 0 || q->lost > 0 || q->writing) && rc == 0)
		rc = pthread_cond_timedwait(&q->idle, &q->lock, &until);
	int drained = q->count == 0 && !q->writing;
	pthread_mutex_unlock(&q->lock);
	if (drained)
		pthread_join(q->thread, NULL);
}

/* Lines a fork child inherited queued: the parent's to write, never freed
 * (the child cannot know what the parent's writer was doing), kept
 * reachable so a leak checker in a child that exits normally stays quiet. */
static char **events_orphans;
static size_t events_n_orphans;

void hook_events_fork_child(void)
{
	struct hook_queue *q = &hook.q;
	char **v = q->count ? realloc(events_orphans, (events_n_orphans + q->count) * sizeof *v) : NULL;
	if (v) {
		for (unsigned i = 0; i < q->count; i++)
			v[events_n_orphans++] = q->lines[(q->head + i) % HOOK_QUEUE_SLOTS];
		events_orphans = v;
	}
	q->head = q->count = 0;
	q->lost = 0;
	q->writing = 0;
	q->started = 0;
	q->stop = 0;
}
