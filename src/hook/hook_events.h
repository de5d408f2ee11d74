/* The hook's event stream (doc/events.md): app threads build a line and queue
 * it; a writer thread drains the queue to the sink (hook_sink.h) with one
 * message or write() per line. An app thread never blocks on the sink: a
 * full queue drops the line and counts it, and the writer later emits
 * `lost events=N`. */
#ifndef NTOP_HOOK_EVENTS_H
#define NTOP_HOOK_EVENTS_H
#include "common/strbuf.h"

/* Is there a sink at all? (When not, callers skip building lines.) */
int hook_events_on(void);
/* event_begin with the hook's pid and the wall clock. */
void hook_event_begin(struct strbuf *sb, const char *type);
/* Ends the line and queues it (takes the buffer). */
void hook_event_emit(struct strbuf *sb);
/* Writes the line at once, bypassing the queue (a fork child's hello: the
 * child may _exit before a writer thread ever runs); queued instead when
 * that would mean waiting. */
void hook_event_emit_sync(struct strbuf *sb);
/* `warn msg=...`. */
void hook_event_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Waits up to timeout_ms for the queue to drain, then stops the writer. */
void hook_events_shutdown(int timeout_ms);
/* In a fork child: the writer thread is gone; drop the parent's lines. */
void hook_events_fork_child(void);

#endif
