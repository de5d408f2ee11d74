/* A session: one application launched with ntop's hook, shared by
 * `ntop record` (headless) and the interactive UI. It owns
 *
 *   <dir>/            the session (trace) directory, 0700, new or empty
 *   <dir>/events.log  every event line the hook wrote, in arrival order
 *   <dir>/app.log     the application's stdout+stderr (captured mode only)
 *   <dir>/control     the live control file (doc/control.md), once written
 *
 *   <dir>/events.sock the socket every process's hook connects to
 *                     (NTOP_EVENT_SOCK; 0600, removed at the end; in a 0700
 *                     directory of its own when <dir>'s path is too long
 *                     for a socket: session_note says where)
 *
 * and the child process: its environment (the hook first on
 * LD_LIBRARY_PATH, ntop's loader audit module last on LD_AUDIT, NTOP_*
 * variables, TRITON_LIBCUDA_PATH, NTOP_CONTROL), the
 * event socket, the optional output pipe, signal forwarding, reaping.
 *
 * Nothing here blocks except session_wait(): a caller's loop polls the
 * descriptors session_fds() fills (plus its own, e.g. the terminal), then
 * calls session_read_events() and session_read_output(), which read what is
 * there and return, and session_poll_exit(). A typical loop:
 *
 *   session_create(&s, dir, &cause);
 *   session_open_events(s, header_line, len, &cause);   // optional header
 *   session_write_control(s, 1, entries, n, &cause);     // optional, any time
 *   session_signals_install();
 *   session_spawn(s, &opts, &cause);
 *   for (;;) {
 *       struct pollfd p[8]; int n = session_fds(s, p, 8);  // + own fds
 *       poll(p, n, 100);
 *       if (session_read_events(s, on_line, arg) < 0) ...  // events over
 *       session_poll_pid_logs(s, on_line, arg, 0);        // processes off the socket
 *       while ((k = session_read_output(s, buf, sizeof buf)) > 0) ...
 *       if (session_poll_exit(s)) ...                     // status ready
 *   }
 *   session_poll_pid_logs(s, on_line, arg, 1);
 *   session_finish_events(s, &cause);
 *   session_free(s);
 *
 * Failing functions return -1 with a malloc'd *cause (never print). */
#ifndef NTOP_SESSION_H
#define NTOP_SESSION_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "trace/control.h"

struct pollfd;
struct session;

enum session_output {
	SESSION_OUTPUT_INHERIT, /* the app shares ntop's stdin/stdout/stderr and process group (record) */
	SESSION_OUTPUT_CAPTURE, /* stdin </dev/null; stdout+stderr into one pipe, copied to app.log;
				   the app leads its own process group (the UI owns the terminal) */
};

struct session_spawn_opts {
	char *const *argv;          /* NULL-terminated; argv[0] searched in PATH (posix_spawnp) */
	const char *hook_dir;       /* directory holding the hook's libcuda.so.1 (cli_hook_dir()) */
	char *const *probes;        /* NTOP_PROBES: absolute paths without ':' (may be none) */
	int n_probes;
	char *const *kernels;       /* NTOP_KERNELS patterns, one line each (may be none) */
	int n_kernels;
	const char *every;          /* NTOP_PROBE_EVERY, NULL: hook default */
	const char *limit;          /* NTOP_PROBE_LIMIT, NULL: hook default */
	const char *map_budget;     /* NTOP_MAP_BUDGET (bytes, decimal), NULL: hook default */
	const char *sample;         /* NTOP_SAMPLE ("auto", "off", power of two), NULL: hook default */
	int no_control;             /* 1: no NTOP_CONTROL (default: <dir>/control, live control on) */
	int no_audit;               /* 1: no loader audit module (LD_AUDIT stays the user's): opens
				       by path bypass the stand-ins */
	int wait_build;             /* 1: NTOP_PROBE_ASYNC=0, probed copies built on the launch */
	enum session_output output;
};

/* Called with each complete event line (ends with '\n'). */
typedef void (*session_line_fn)(void *arg, const char *line, size_t len);

/* ---- directory ---- */
/* Creates the session directory (0700; parents 0755 as needed) or accepts an
 * existing empty one. dir NULL: ./ntop-trace/YYYYmmdd-HHMMSS_PID. */
int session_create(struct session **out, const char *dir, char **cause);
/* Absolute path of the directory (lives as long as the session). */
const char *session_dir(const struct session *s);
/* 1 when the directory was removed, moved or replaced since it was made:
 * what was written into it is gone from that path. */
int session_dir_gone(const struct session *s);
/* <dir>/NAME, malloc'd (NULL when out of memory). */
char *session_path(const struct session *s, const char *name);
/* Creates <dir>/events.log (0600, must not exist) and writes `header` (one
 * event line, may be NULL) first. Without this call events are only handed
 * to the caller. */
int session_open_events(struct session *s, const char *header, size_t len, char **cause);
/* The program never ran: removes events.log, app.log, control and the
 * directory if this session created it (files the caller added must be
 * removed first). The session must still be freed. */
void session_abandon(struct session *s);

/* ---- the application ---- */
/* SIGINT, SIGQUIT (they reach the app from the terminal) and SIGPIPE are
 * ignored by ntop; SIGTERM and SIGHUP are forwarded to the application (its
 * process group in captured mode), also when they arrive before it was
 * spawned. Process-wide: call once, before session_spawn. */
void session_signals_install(void);
/* Creates the event socket and starts the program. -1 with "cannot run
 * 'prog': reason" when it could not be started (nothing ran; `ntop record`
 * exits 127). */
int session_spawn(struct session *s, const struct session_spawn_opts *o, char **cause);
/* Something the user should know about the session (the socket had to go
 * outside the directory), or NULL. */
const char *session_note(const struct session *s);
pid_t session_pid(const struct session *s);
/* Sends sig to the application (its whole process group in captured mode,
 * like a Ctrl-C would). 0, or -1 when it already exited. */
int session_signal(struct session *s, int sig);
/* SIGTERM now and SIGKILL if it is still there after grace_ms (sent by a
 * later session_poll_exit, so keep polling). */
void session_terminate(struct session *s, int grace_ms);
/* Reaps without blocking: 1 once the application has exited (status ready),
 * 0 while it runs. */
int session_poll_exit(struct session *s);
/* Blocks until the application has exited. */
void session_wait(struct session *s);
/* Raw wait status (valid once exited); see session_exit_code. */
int session_status(const struct session *s);
/* A shell's view of a wait status: the exit code, 128+N for signal N, 1 otherwise. */
int session_exit_code(int status);

/* ---- reading ---- */
/* The descriptors worth polling for POLLIN (the event socket's epoll set,
 * captured output); returns how many were filled (0..2, at most max). */
int session_fds(const struct session *s, struct pollfd *p, int max);
/* Accepts new connections and reads what they hold now (up to 1 MiB per
 * call, connections taking turns): each message is one event line (a
 * missing '\n' is added, a message over 64 KiB cut), appended to events.log
 * and handed to fn (may be NULL), whole, in arrival order. Returns the
 * number of lines, or -1 once the events are over: the application has
 * exited (it is reaped here when it has) and no connection was open for a
 * quarter of a second (its children that still run keep theirs open); the
 * socket is then closed and removed. */
int session_read_events(struct session *s, session_line_fn fn, void *arg);
/* The first write error on events.log (errno), 0 when none. */
int session_events_error(const struct session *s);
/* Captured mode: reads at most cap bytes of the application's output (raw
 * bytes, not lines) and appends them to app.log. Returns the count, 0 when
 * nothing is there now, -1 at end of output (or when not capturing). */
long session_read_output(struct session *s, char *buf, size_t cap);
/* Stops reading without disturbing the application: a detached process
 * (which ntop does not wait for) keeps accepting and copying events to
 * events.log and output to app.log until the application has exited, its
 * connections closed and the output pipe too; it then merges the
 * events-<pid>.log files and removes the socket. The session then reads
 * nothing; session_poll_exit still works. */
int session_detach(struct session *s, char **cause);
/* Writes the recorder's `end` line (status= and signal= of the program
 * when it was reaped), fsyncs and closes events.log. -1 when fsync fails. */
int session_finish_events(struct session *s, char **cause);
/* Processes whose hook could not reach the socket (another mount namespace,
 * the socket already gone) write events-<pid>.log in the trace directory:
 * their new complete lines go to events.log and to fn (call it as often as
 * the socket is read, so they show live; the directory is scanned at most
 * every 250 ms); `final` (once the program ended) reads them all and
 * removes the files. Returns the lines passed on. */
int session_poll_pid_logs(struct session *s, session_line_fn fn, void *arg, int final);

/* ---- live control (doc/control.md) ---- */
/* Replaces <dir>/control atomically (temporary file, rename, 0600) with
 * generation gen, which must be above the last one written. The hook in
 * every process of the app applies it within ~100 ms and answers with a
 * `control gen=N kernels=M` event line. An empty list switches probing off
 * (and, from the first file on, NTOP_PROBES no longer applies). */
int session_write_control(struct session *s, uint64_t gen, const struct control_entry *e, int n, char **cause);
/* The same with text the caller formatted (control_format()); its gen is not
 * checked here. */
int session_write_control_text(struct session *s, const char *text, size_t len, char **cause);
/* Last generation session_write_control wrote (0: none). */
uint64_t session_control_gen(const struct session *s);

/* Closes descriptors and frees; the application is neither signalled nor
 * waited for (call session_wait or session_detach first). */
void session_free(struct session *s);

#endif
