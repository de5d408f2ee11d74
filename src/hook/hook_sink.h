/* Where one process's event lines go (doc/hook.md, "Events, threads and
 * fork"): the launcher's socket (NTOP_EVENT_SOCK), which each process
 * connects to itself; else a descriptor given by hand (NTOP_EVENT_FD, tests
 * and manual runs only); else $NTOP_TRACE_DIR/events-<pid>.log, created by
 * the process. The hook writes only into a descriptor it opened (or was
 * handed by NTOP_EVENT_FD) and checks before every write that the number
 * still is that file: an application that closed it and opened something
 * of its own under the same number never gets an event line. */
#ifndef NTOP_HOOK_SINK_H
#define NTOP_HOOK_SINK_H
#include <stddef.h>

enum hook_sink_rc {
	HOOK_SINK_DONE,    /* written */
	HOOK_SINK_LATER,   /* nowait: it would have to wait (connect backlog, full socket) */
	HOOK_SINK_DROPPED, /* not written (nowhere to go, a write error): the caller counts it */
};

/* At load, after hook.cfg was read: is there anywhere to write at all?
 * Sets hook.cfg.events_on. Opens nothing. */
void hook_sink_init(void);
/* Writes one line (at most EVENT_LINE_MAX bytes) as one message or one
 * write(), opening or reopening the sink when needed. Only one thread may
 * call it at a time (the events writer; a fork child before any thread).
 * `nowait`: an application thread, which never blocks. */
enum hook_sink_rc hook_sink_write(const char *line, size_t len, int nowait);
/* Writes one line to a new events-<pid>.<k>.log of its own, whatever the
 * sink is (at exit, when the writer thread is stuck on a reader that does
 * not read: the count of lines it could not deliver still reaches the
 * trace). Any thread; 0 written, -1 not. */
int hook_sink_write_aside(const char *line, size_t len);
/* In a fork child: the parent's connection or file is closed (the child
 * never shares it); the child's next line opens its own. */
void hook_sink_fork_child(void);

#endif
