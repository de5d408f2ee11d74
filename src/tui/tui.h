/* The terminal UI's shared state and entry points. tui.c owns the loop:
 * poll() on the terminal and the application's descriptors with a timer,
 * keys to the top view, model updates from event lines, a redraw at most
 * TUI_FPS times a second and only when something changed. The state below
 * is usable without a terminal (tui_create / tui_key / tui_draw), which is
 * how the unit tests drive the views; tui_run adds the terminal (term.c).
 *
 * Two modes: `ntop view DIR` feeds DIR/events.log once; live mode feeds the
 * lines an application's hook writes, through `struct tui_app` (the launcher
 * glue in src/cli/cmd_view.c implements it on top of the session library). */
#ifndef NTOP_TUI_H
#define NTOP_TUI_H
#include <stddef.h>
#include <stdint.h>

#include "common/strbuf.h"
#include "trace/trace_dir.h"
#include "tui/ktable.h"
#include "tui/export_job.h"
#include "tui/layout.h"
#include "tui/msglog.h"
#include "tui/rcache.h"
#include "tui/settings.h"
#include "tui/view.h"
#include "viz/cellgrid.h"
#include "viz/theme.h"

#define TUI_FPS 20
#define TUI_MAX_VIEWS 8

struct pollfd;

/* State of the application in live mode. */
struct tui_app_state {
	int running;        /* not yet exited */
	int pid;            /* the launched process */
	int exited, status; /* exit status when exited */
	int signaled, sig;  /* killed by signal sig */
	int detached;
	int attached;       /* a viewer of a session someone else records (ntop attach) */
};

/* A launched application, implemented by the launcher (src/cli). Every
 * function gets `ctx`. */
struct tui_app {
	void *ctx;
	/* descriptors to poll for reading (event lines, app output); returns count */
	int (*fds)(void *ctx, struct pollfd *p, int max);
	/* reads whatever is ready without blocking: event lines go to
	 * tui_feed_line, application output to tui_app_output. Also reaps the
	 * application. Returns 1 when something happened. */
	int (*pump)(void *ctx, struct tui *t);
	void (*state)(void *ctx, struct tui_app_state *st);
	/* replaces the control file (doc/control.md) with `text` atomically;
	 * -1 with a cause */
	int (*control)(void *ctx, const char *text, char **cause);
	/* SIGTERM now, SIGKILL if still there after a grace period */
	void (*kill)(void *ctx);
	/* stop reading: the application keeps running, its events are discarded */
	void (*detach)(void *ctx);
};

/* A probe the picker offers. */
struct tui_probe {
	char *name;        /* from the file ("block_sched") */
	char *path;        /* absolute */
	char *origin;      /* "built-in", "-p", "~/.config/ntop/probes" */
};

enum tui_probe_mode { PMODE_NEXT, PMODE_EVERY, PMODE_NTH };

/* A probe request for one kernel (by mangled name), live mode. */
struct tui_request {
	char *name;         /* mangled kernel name */
	char *probes;       /* comma-separated absolute paths */
	char *label;        /* probe names for display */
	enum tui_probe_mode mode;
	unsigned n;         /* PMODE_NTH */
	int results_at;     /* results of the kernel when requested: "requested" until more arrive */
	int failed;         /* an instrument failure or a decline came after the request */
};

/* The start screen (`ntop` alone on a terminal): the machine's GPUs and
 * the user's sessions, filled by the launcher (src/cli); the view sets
 * `next` to what ntop should run when the UI ends (attach, view, a new
 * program). */
struct tui_gpu {
	int index;
	char name[96];
	int util;                  /* %, -1 unknown */
	uint64_t mem_used, mem_total;
	int procs, ours;           /* compute processes, and those of the user's running sessions */
};

struct tui_session {
	const char *dir, *argv;
	int running;
	uint64_t start_ns;
};

struct tui_start {
	void *ctx;
	/* the GPUs now: how many (<= max), -1 with why (no NVML) */
	int (*gpus)(void *ctx, struct tui_gpu *out, int max, char *why, size_t n);
	/* the user's sessions, newest first (<= max); valid until the next call */
	int (*sessions)(void *ctx, struct tui_session *out, int max);
	char **next;               /* argv (NULL-terminated, malloc'd) to run after the UI, or NULL */
};

struct tui_opts {
	const char *trace_dir;     /* view mode: the directory; live: the session directory */
	const char *const *more_dirs; /* view mode: further traces of the job, read as one */
	int n_more_dirs;
	const char *title;         /* shown in the title bar */
	const char *theme;         /* --theme (NULL: the saved setting) */
	const char *themes_dir;    /* may be NULL */
	const char *config_dir;    /* NULL: settings_dir() */
	int no_color, no_mouse, ascii;
	long max_frames;           /* quit after this many frames; 0 never */
	struct tui_app *app;       /* live mode; NULL for a recorded trace */
	struct tui_probe *probes;  /* for the picker */
	int n_probes;
	const char *const *notes;  /* lines for the log pane at start (skipped probe files...) */
	struct tui_start *start;   /* the start screen instead of a trace (ntop alone) */
	int n_notes;
};

struct tui {
	struct tui_opts o;
	struct trace_dir *td;
	struct msglog *log;
	struct rcache rc;
	struct ktable kt;
	struct settings set;
	char *settings_path;
	struct theme theme;
	int utf8, mono;            /* glyphs; no colours (selection by reverse video) */
	int show_log;
	struct view *stack[TUI_MAX_VIEWS];
	int depth;
	struct layout_screen lay;
	int mouse_x, mouse_y;      /* last mouse event, screen cells */
	char status[1024];         /* transient message, "" none */
	int status_keep;           /* cells of its head kept when the middle is cut */
	int status_err;
	uint64_t status_until;     /* mono ns */
	int dirty;                 /* redraw */
	int quit;
	int quit_sig;              /* SIGTERM/SIGHUP that ended the UI, 0 none */
	uint64_t model_gen;        /* bumped when the model changed */
	struct strbuf partial;     /* live: bytes of an unfinished event line */
	struct tui_request *reqs;
	int n_reqs;
	char **sources;            /* kernels whose PTX the region picker asked for (`source` lines) */
	int n_sources;
	uint64_t control_gen;      /* last generation written */
	uint64_t frames;
	struct tui_app_state app_state;
	int app_announced;         /* the exit was logged */
	int named_upto;            /* kernels below this index were checked for a name */
	int unnamed;               /* some kernel still waits for a name to inherit */
	struct export_job *job;    /* the export being written, NULL none */
};

/* ---- lifecycle (no terminal) ---- */
/* Loads the settings and the theme and, in view mode, DIR/events.log; the
 * kernel list is the first view. -1 with a cause. */
int tui_create(const struct tui_opts *o, struct tui **out, char **cause);
void tui_free(struct tui *t);
/* Sends one key (TK_* or a character) to the top view and the global keys. */
void tui_key(struct tui *t, int key);
/* Draws everything into g (g's size is the screen size). */
void tui_draw(struct tui *t, struct cellgrid *g);
/* Runs the terminal UI until the user quits; returns the exit code. */
int tui_run(struct tui *t, char **cause);

/* ---- for views and the launcher ---- */
/* One event line (with or without '\n'): the model, the log pane. */
void tui_feed_line(struct tui *t, const char *line, size_t len);
/* Bytes from the hook's pipe: complete lines are fed, the rest kept. */
void tui_feed_bytes(struct tui *t, const char *buf, size_t n);
/* One line of the application's output (stderr: err = 1). */
void tui_app_output(struct tui *t, int err, const char *line, size_t len);
/* A status line message, also kept in the log pane. */
void tui_msg(struct tui *t, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A message about a file: the log gets `what PATH`, the status line the
 * path shortened (./ or ~/), and when even that does not fit, `what` and the
 * path's end (its file name) around an ellipsis. */
void tui_msg_path(struct tui *t, int err, const char *what, const char *path);
/* Writes path in a child process (export_job.h) with fn(arg): the status
 * line shows progress after a second, then where it went (or why not).
 * -1 (said on the status line) when an export still runs or none starts. */
int tui_export(struct tui *t, const char *path, export_job_fn fn, void *arg);
/* The path an export of kernel k's launch seq goes to (path_fn: which
 * export), in the directory export_dir picks; a fallback is noted in the
 * log. NULL (said on the status line) when there is none. */
char *tui_export_path(struct tui *t, const struct td_kernel *k, uint64_t seq,
		      char *(*path_fn)(const char *dir, const struct td_kernel *k, uint64_t seq));
/* Reads the running export's news without blocking (block: until it
 * ends); 1 when the screen changed. */
int tui_export_poll(struct tui *t, int block);
/* A status line message only (feedback on a key: sort order, axis...). */
void tui_flash(struct tui *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int tui_push(struct tui *t, const struct view_ops *ops, void *arg);
void tui_pop(struct tui *t);
struct ktable_ctx tui_kctx(struct tui *t);
/* The kernel's display name (demangled or mangled by the setting). */
const char *tui_kernel_name(const struct tui *t, const struct td_kernel *k);
/* Live mode: the kernel's request, NULL none. */
struct tui_request *tui_request_find(struct tui *t, const char *mangled);
/* Requests of a control file already there (a viewer attaching to a
 * session): its generation becomes the last written. Returns how many,
 * -1 when the text is no control file. */
int tui_requests_load(struct tui *t, const char *text, size_t len);
/* Sets (probes != NULL) or clears the request for k and rewrites the control file. */
int tui_request_set(struct tui *t, const struct td_kernel *k, const char *probes, const char *label,
		    enum tui_probe_mode mode, unsigned n);
/* Asks the application for k's PTX (a `source` line in the control file,
 * kept from then on): the region picker lists its source lines. */
int tui_request_source(struct tui *t, const struct td_kernel *k);
/* Asks what to do about a running application (quit / Ctrl-C). */
void tui_ask_quit(struct tui *t);
/* Colours of the row/selection: background of a selected row (reverse in mono). */
struct rgb tui_sel_bg(const struct tui *t);
/* Whether plots must tell things apart by glyphs, not colour: no colours
 * on this terminal (NO_COLOR, --no-color, monochrome) or a mono theme. */
int tui_mono(const struct tui *t);

#endif
