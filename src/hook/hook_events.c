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
#include "hook/hook_log.h"
#include "hook/hook_signals.h"
#include "hook/hook_sink.h"
#include "hook/hook_state.h"
#include "trace/events.h"

int hook_events_on(void)
{
	return hook.cfg.events_on;
}

/* A fork child's first line: its hello goes first (hook_state.h). */
static void events_hello_first(void)
{
	void (*due)(void) = __atomic_exchange_n(&hook.hello_due, NULL, __ATOMIC_ACQ_REL);
	if (due)
		due();
}

void hook_event_begin(struct strbuf *sb, const char *type)
{
	if (__atomic_load_n(&hook.hello_due, __ATOMIC_ACQUIRE) && strcmp(type, "hello") != 0)
		events_hello_first();
	strbuf_init(sb);
	event_begin(sb, type, time_wall_ns(), hook.pid);
}

static enum hook_sink_rc events_write_line(const char *line, size_t len)
{
	return hook_sink_write(line, len, 0);
}

static void events_lost_line(struct strbuf *sb, uint64_t lost)
{
	hook_event_begin(sb, "lost");
	event_add_int(sb, "events", (long long)lost);
	event_end(sb);
}

static enum hook_sink_rc events_write_lost(uint64_t lost)
{
	struct strbuf sb;
	events_lost_line(&sb, lost);
	enum hook_sink_rc rc = sb.failed ? HOOK_SINK_DROPPED : events_write_line(sb.data, sb.len);
	strbuf_done(&sb);
	return rc;
}

/* Something to do: lines, or a count to report that is not stuck. */
static int events_work(const struct hook_queue *q)
{
	return q->count > 0 || (q->lost > 0 && !q->lost_stuck);
}

#define EVENTS_IDLE_NS 250000000ull /* quiet this long after writing: an `idle` line */
#define EVENTS_POLL_NS 2000000ull   /* awake after writing: how late a queued line may be written */

/* `idle lines=N`: the queue is empty and has been for EVENTS_IDLE_NS; N
 * lines were made before it. A process that ends without its exit line
 * right after one lost nothing it had sent (readers compare N with the
 * lines they got). Written under the lock: nothing is queued behind it. */
static void events_write_idle(struct hook_queue *q)
{
	struct strbuf sb;
	hook_event_begin(&sb, "idle");
	event_add_int(&sb, "lines", (long long)__atomic_load_n(&q->produced, __ATOMIC_RELAXED));
	event_end(&sb);
	if (!sb.failed)
		events_write_line(sb.data, sb.len);
	strbuf_done(&sb);
	q->since_idle = 0;
	hook_linger_busy(&q->linger);
}

/* Waits for work. After lines were written the writer stays awake
 * (hook_linger.h), so the app's threads queue lines without waking it;
 * once the queue stayed empty EVENTS_IDLE_NS it says `idle` and naps until
 * a line wakes it. */
static void events_wait(struct hook_queue *q)
{
	if (!q->since_idle)
		hook_linger_nap(&q->linger, &q->wake, &q->lock);
	else if (hook_linger_poll(&q->linger, &q->wake, &q->lock, EVENTS_POLL_NS, EVENTS_IDLE_NS))
		events_write_idle(q);
}

/* Every line that did not reach the sink is counted in q->lost and said in
 * a `lost events=N` line once the sink takes lines again; a failed `lost`
 * line waits for the next queued line (no spinning on a broken sink). */
static void *events_writer(void *arg)
{
	(void)arg; /* SIGPIPE and SIGXFSZ are blocked here (hook_thread_create) */
	struct hook_queue *q = &hook.q;
	pthread_mutex_lock(&q->lock);
	for (;;) {
		while (!events_work(q) && !q->stop)
			events_wait(q);
		if (!events_work(q) && q->stop)
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
		int was_line = line != NULL;
		enum hook_sink_rc rc = line ? events_write_line(line, strlen(line)) : events_write_lost(lost);
		free(line);
		pthread_mutex_lock(&q->lock);
		q->writing = 0;
		if (rc == HOOK_SINK_DROPPED) {
			q->lost += was_line ? 1 : lost;
			q->lost_stuck = !was_line;
		}
		q->since_idle = 1;
		hook_linger_busy(&q->linger);
		if (!events_work(q))
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

/* Under q->lock: the writer thread, started the first time it is needed. */
static void events_start_writer(struct hook_queue *q)
{
	if (!q->started && !q->stop) {
		q->started = 1;
		if (hook_thread_create(&q->thread, events_writer, NULL) != 0)
			q->started = -1; /* no thread: lines stay queued, nothing blocks */
	}
}

/* A line went out directly (an app thread's synchronous one, a fork
 * child's hello): the writer says `idle` once things stay quiet, so a
 * process that writes nothing else still ends with one. */
static void events_note_written(void)
{
	struct hook_queue *q = &hook.q;
	pthread_mutex_lock(&q->lock);
	q->since_idle = 1;
	hook_linger_busy(&q->linger);
	events_start_writer(q);
	pthread_cond_signal(&q->wake);
	pthread_mutex_unlock(&q->lock);
}

/* Queues a finished line (takes it) and wakes the writer, starting it the
 * first time. */
static void events_queue(char *line, size_t len)
{
	struct hook_queue *q = &hook.q;
	pthread_mutex_lock(&q->lock);
	__atomic_add_fetch(&q->produced, 1, __ATOMIC_RELAXED);
	if (!line || q->count == HOOK_QUEUE_SLOTS || q->stop) {
		q->lost++;
		free(line);
	} else {
		q->lost_stuck = 0; /* a new line: the count may get through with it */
		struct strbuf tmp = { line, len, len + 1, 0 };
		events_clip(&tmp);
		q->lines[(q->head + q->count) % HOOK_QUEUE_SLOTS] = line;
		q->count++;
	}
	events_start_writer(q);
	/* an awake writer finds the line by itself; half a queue is worth a call */
	if (q->linger.napping || q->count >= HOOK_QUEUE_SLOTS / 2)
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
	/* An application thread: SIGPIPE (a pipe given as NTOP_EVENT_FD) and
	 * SIGXFSZ (a file past ulimit -f) kept from the application */
	struct hook_io_signals sig;
	hook_io_signals_begin(&sig);
	events_clip(sb);
	enum hook_sink_rc rc = hook_sink_write(sb->data, sb->len, 1);
	hook_io_signals_end(&sig);
	if (rc != HOOK_SINK_LATER) {
		__atomic_add_fetch(&hook.q.produced, 1, __ATOMIC_RELAXED);
		events_note_written(); /* its `idle` line will follow, as after queued lines */
	}
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

/* At exit, lines still queued, the count of lost ones and the line being
 * written when the writer could not finish (a reader that stopped reading,
 * a broken sink) go into a `lost` line of a file of the process's own:
 * the trace says how many never arrived instead of nothing. The line in
 * flight may still have arrived: the count is at most one too high. */
static void events_report_undelivered(uint64_t n)
{
	struct strbuf sb;
	events_lost_line(&sb, n);
	if (sb.failed || hook_sink_write_aside(sb.data, sb.len) < 0)
		hook_log("exit: %llu event lines were not delivered, and saying so failed too", (unsigned long long)n);
	strbuf_done(&sb);
}

/* Under q->lock: lines that will not be delivered now, taken off the queue
 * (the one being written counted once: it may still arrive). */
static uint64_t events_take_undelivered(struct hook_queue *q)
{
	static int inflight_counted;
	uint64_t n = q->count + q->lost;
	if (q->writing && !inflight_counted) {
		inflight_counted = 1;
		n++;
	}
	for (; q->count > 0; q->count--, q->head = (q->head + 1) % HOOK_QUEUE_SLOTS)
		free(q->lines[q->head]);
	q->lost = 0;
	q->lost_stuck = 1;
	return n;
}

void hook_events_shutdown(int timeout_ms)
{
	struct hook_queue *q = &hook.q;
	struct timespec until;
	time_deadline(&until, timeout_ms * 1000000ll);
	pthread_mutex_lock(&q->lock);
	int running = q->started == 1;
	if (running) {
		q->stop = 1;
		pthread_cond_signal(&q->wake);
		int rc = 0;
		while ((events_work(q) || q->writing) && rc == 0)
			rc = pthread_cond_timedwait(&q->idle, &q->lock, &until);
	}
	int drained = q->count == 0 && !q->writing;
	uint64_t undelivered = hook_events_on() ? events_take_undelivered(q) : 0;
	pthread_mutex_unlock(&q->lock);
	if (undelivered) /* counted here, said here: nobody else will */
		events_report_undelivered(undelivered);
	if (running && drained)
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
	q->lost_stuck = 0;
	q->writing = 0;
	q->started = 0;
	q->stop = 0;
	q->produced = 0;
	q->since_idle = 0;
	q->linger = (struct hook_linger){ 0 };
}
