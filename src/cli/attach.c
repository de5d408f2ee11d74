/* A viewer that follows a recording (attach.h). */
#include "cli/attach.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/sessions.h"
#include "common/cause.h"
#include "common/safefs.h"
#include "common/strbuf.h"
#include "trace/control.h"
#include "trace/trace_dir.h"

#define ATTACH_READ_MAX (1u << 20) /* bytes of events.log read per pump: the UI stays live */

struct attach {
	int dfd;             /* the trace directory, checked */
	int events_fd, app_fd;
	struct strbuf part;  /* an events.log line not finished yet */
	struct strbuf out;   /* an app.log line not finished yet */
	pid_t recorder;
	struct tui *t;
};

/* Complete lines of buf (with what came before) go to fn; the rest waits. */
static void attach_lines(struct strbuf *part, const char *buf, size_t n, struct tui *t, int app)
{
	strbuf_append(part, buf, n);
	size_t a = 0;
	for (size_t i = 0; i < part->len; i++)
		if (part->data[i] == '\n') {
			if (app)
				tui_app_output(t, 0, part->data + a, i - a);
			else
				tui_feed_line(t, part->data + a, i - a + 1);
			a = i + 1;
		}
	if (a) {
		memmove(part->data, part->data + a, part->len - a);
		part->len -= a;
	}
}

static int attach_read(int fd, struct strbuf *part, struct tui *t, int app)
{
	char buf[65536];
	size_t total = 0;
	ssize_t k;
	while (fd >= 0 && total < ATTACH_READ_MAX && (k = read(fd, buf, sizeof buf)) > 0) {
		attach_lines(part, buf, (size_t)k, t, app);
		total += (size_t)k;
	}
	return total > 0;
}

static int attach_fds(void *ctx, struct pollfd *p, int max)
{
	(void)ctx, (void)p, (void)max;
	return 0; /* files: read on the loop's tick */
}

static int attach_pump(void *ctx, struct tui *t)
{
	struct attach *a = ctx;
	a->t = t;
	if (a->app_fd < 0)
		a->app_fd = openat(a->dfd, "app.log", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	int any = attach_read(a->events_fd, &a->part, t, 0);
	any |= attach_read(a->app_fd, &a->out, t, 1);
	return any;
}

/* The program: the process ntop started (its parent is the recorder). */
static int attach_app_pid(const struct trace_dir *td, pid_t recorder)
{
	for (int i = 0; i < td->n_procs; i++)
		if (td->procs[i].ppid == (uint32_t)recorder)
			return (int)td->procs[i].pid;
	return td->n_procs ? (int)td->procs[0].pid : (int)recorder;
}

static void attach_state(void *ctx, struct tui_app_state *st)
{
	struct attach *a = ctx;
	const struct trace_dir *td = a->t ? a->t->td : NULL;
	memset(st, 0, sizeof *st);
	st->attached = st->detached = 1; /* quitting the viewer never stops the program */
	st->pid = td ? attach_app_pid(td, a->recorder) : (int)a->recorder;
	st->running = !(td && td->has_end) && a->recorder > 0 && kill(a->recorder, 0) == 0;
	if (td && td->has_end) {
		st->signaled = td->end_signal > 0;
		st->sig = td->end_signal;
		st->exited = !st->signaled;
		st->status = td->end_status;
	}
}

static int attach_control(void *ctx, const char *text, char **cause)
{
	struct attach *a = ctx;
	return safefs_replace(a->dfd, "control", text, strlen(text), cause);
}

/* The requests other viewers (or ntop PROGRAM) made, so ours add to them. */
static void attach_requests(struct attach *a, struct tui *t)
{
	int fd = openat(a->dfd, "control", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	char *buf = malloc(CONTROL_MAX_BYTES);
	ssize_t n = buf ? read(fd, buf, CONTROL_MAX_BYTES) : -1;
	close(fd);
	if (n > 0 && tui_requests_load(t, buf, (size_t)n) > 0)
		tui_msg(t, 0, "%d probe request%s already in the session's control file", t->n_reqs,
			t->n_reqs == 1 ? "" : "s");
	free(buf);
}

int attach_run(const char *dir, struct tui_opts *o)
{
	struct attach a = { -1, -1, -1, {0}, {0}, 0, NULL };
	char *cause = NULL;
	strbuf_init(&a.part);
	strbuf_init(&a.out);
	a.dfd = safefs_open_dir(dir, 0, &cause);
	if (a.dfd < 0) {
		cli_err("cannot attach to %s: %s", dir, cause ? cause : "?");
		free(cause);
		return CLI_EXIT_USAGE;
	}
	a.events_fd = openat(a.dfd, "events.log", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (a.events_fd < 0) {
		cli_err("cannot attach to %s: events.log: %s", dir, strerror(errno));
		close(a.dfd);
		return CLI_EXIT_USAGE;
	}
	sessions_dir_running(dir, &a.recorder);
	struct tui_app app = { &a, attach_fds, attach_pump, attach_state, attach_control, NULL, NULL };
	o->app = &app;
	o->trace_dir = dir;
	struct tui *t = NULL;
	int rc = 0;
	if (tui_create(o, &t, &cause) < 0) {
		cli_err("%s", cause ? cause : "cannot start the UI");
		rc = CLI_EXIT_USAGE;
	} else {
		a.t = t;
		attach_requests(&a, t);
		if (tui_run(t, &cause) < 0) {
			cli_err("%s", cause ? cause : "the UI failed");
			rc = CLI_EXIT_USAGE;
		}
	}
	free(cause);
	tui_free(t);
	strbuf_done(&a.part);
	strbuf_done(&a.out);
	close(a.events_fd);
	if (a.app_fd >= 0)
		close(a.app_fd);
	close(a.dfd);
	return rc;
}
