/* The session library (src/cli/session.h) without a GPU or the hook: bash
 * scripts stand in for the application and send event lines to
 * NTOP_EVENT_SOCK through bin/ev_send ($EV), one connection per ev_send as
 * the hook makes one per process. Checks the directory rules, captured
 * output and app.log, the environment, the process group, the event socket
 * (0600, many concurrent writers whose lines stay whole and in order, a
 * message without '\n', a writer still connected after the app exited, a
 * directory whose path is too long for a socket, removed at the end),
 * control files (atomic, 0600, generations), terminate with a grace
 * period, detach (the copier keeps accepting and keeps the logs complete)
 * and a failed spawn. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/session.h"
#include "common/strbuf.h"
#include "common/timeutil.h"
#include "testlib.h"

static char tmpdir[] = "/tmp/ntop-session-XXXXXX";

struct collected {
	struct strbuf events, output;
	int lines;
};

static void on_line(void *arg, const char *line, size_t len)
{
	struct collected *c = arg;
	CHECKF(len > 0 && line[len - 1] == '\n', "line without newline: %.*s", (int)len, line);
	strbuf_append(&c->events, line, len);
	c->lines++;
}

/* Runs the loop a UI would until both pipes closed and the app exited. */
static void pump_all(struct session *s, struct collected *c, int timeout_ms)
{
	uint64_t until = time_mono_ns() + (uint64_t)timeout_ms * 1000000ull;
	int ev_open = 1, out_open = 1;
	while ((ev_open || out_open || !session_poll_exit(s)) && time_mono_ns() < until) {
		struct pollfd p[4];
		int n = session_fds(s, p, 4);
		poll(p, (nfds_t)n, 50);
		if (ev_open && session_read_events(s, on_line, c) < 0)
			ev_open = 0;
		char buf[256];
		long k;
		while (out_open && (k = session_read_output(s, buf, sizeof buf)) != 0) {
			if (k < 0)
				out_open = 0;
			else
				strbuf_append(&c->output, buf, (size_t)k);
		}
	}
	CHECKF(!ev_open && !out_open && session_poll_exit(s), "pump timed out (events %d, output %d)", ev_open,
	       out_open);
}

static char *slurp_path(const struct session *s, const char *name)
{
	char *p = session_path(s, name);
	char *text = p ? testlib_slurp(p, NULL) : NULL;
	free(p);
	return text ? text : strdup("");
}

static int mode_of(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (int)(st.st_mode & 0777) : -1;
}

static void test_dirs(void)
{
	char path[256], *cause = NULL;
	struct session *s = NULL;
	snprintf(path, sizeof path, "%s/a/b/trace", tmpdir);
	CHECK(session_create(&s, path, &cause) == 0);
	if (!s)
		return;
	CHECK(strcmp(session_dir(s), path) == 0);
	CHECK_EQ_INT(mode_of(path), 0700);
	session_free(s);
	/* an existing empty directory is fine, a non-empty one is not */
	CHECK(session_create(&s, path, &cause) == 0);
	session_free(s);
	snprintf(path, sizeof path, "%s/a", tmpdir);
	s = NULL;
	CHECK(session_create(&s, path, &cause) < 0);
	CHECKF(cause && strstr(cause, "not empty"), "%s", cause ? cause : "(null)");
	CHECK(s == NULL);
	free(cause);
	cause = NULL;
	/* an empty one another user could write into, or a link to one: refused */
	snprintf(path, sizeof path, "%s/open", tmpdir);
	CHECK(mkdir(path, 0700) == 0 && chmod(path, 0777) == 0);
	CHECK(session_create(&s, path, &cause) < 0);
	CHECKF(cause && strstr(cause, "writable by everyone"), "%s", cause ? cause : "(null)");
	free(cause);
	cause = NULL;
	char link[256];
	snprintf(path, sizeof path, "%s/empty", tmpdir);
	snprintf(link, sizeof link, "%s/link", tmpdir);
	CHECK(mkdir(path, 0700) == 0 && symlink(path, link) == 0);
	CHECK(session_create(&s, link, &cause) < 0);
	CHECKF(cause && strstr(cause, "symbolic link"), "%s", cause ? cause : "(null)");
	free(cause);
	cause = NULL;
	/* a link planted as `control` is replaced, never written through */
	char victim[256];
	snprintf(victim, sizeof victim, "%s/victim", tmpdir);
	FILE *f = fopen(victim, "w");
	if (f) {
		fputs("victim\n", f);
		fclose(f);
	}
	CHECK(session_create(&s, path, &cause) == 0);
	if (!s)
		return;
	char *ctl = session_path(s, "control");
	CHECK(ctl && symlink(victim, ctl) == 0);
	CHECKF(session_write_control_text(s, "control version=1 gen=1\n", 24, &cause) == 0, "%s", cause);
	char *v = testlib_slurp(victim, NULL), *c = ctl ? testlib_slurp(ctl, NULL) : NULL;
	CHECKF(v && strcmp(v, "victim\n") == 0, "the victim was written through the link: %s", v ? v : "?");
	struct stat st;
	CHECK(ctl && lstat(ctl, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0600);
	CHECK(c && strcmp(c, "control version=1 gen=1\n") == 0);
	free(v);
	free(c);
	free(ctl);
	session_abandon(s);
	session_free(s);
	free(cause);
}

static const char *capture_script =
	"echo out-line; echo err-line >&2\n"
	"read -r x; echo \"stdin=[$x]\"\n"
	"echo \"control=$NTOP_CONTROL\"\n"
	"echo \"ld=${LD_LIBRARY_PATH%%:*}\"\n"
	"echo \"triton=$TRITON_LIBCUDA_PATH probes=$NTOP_PROBES kernels=$NTOP_KERNELS\"\n"
	"read -r _ _ _ _ pgrp _ < /proc/$$/stat; echo \"group=$(( pgrp == $$ ))\"\n"
	"echo \"fd=${NTOP_EVENT_FD:-none} sock=$NTOP_EVENT_SOCK\"\n"
	"\"$EV\" \"hello t=1 pid=$$ exe=x hook=t\"\n"
	"sleep 0.2\n"
	"\"$EV\" \"kernel t=2 pid=$$ kid=1 name=k ptx=1\"\n"
	"exit 5\n";

static void test_capture(void)
{
	char path[256], *cause = NULL;
	struct session *s = NULL;
	snprintf(path, sizeof path, "%s/cap", tmpdir);
	CHECK(session_create(&s, path, &cause) == 0);
	if (!s)
		return;
	const char *header = "record t=0 pid=0 argv=bash\n";
	CHECK(session_open_events(s, header, strlen(header), &cause) == 0);
	char *argv[] = { "bash", "-c", (char *)capture_script, NULL };
	char *probes[] = { "/p/a.toml", "/p/b.toml" }, *kernels[] = { "sgemm", "fill*" };
	struct session_spawn_opts o = { .argv = argv, .hook_dir = "/the/hook", .probes = probes, .n_probes = 2,
					.kernels = kernels, .n_kernels = 2, .output = SESSION_OUTPUT_CAPTURE };
	CHECK(session_spawn(s, &o, &cause) == 0);
	CHECK(session_pid(s) > 0);
	struct collected c;
	memset(&c, 0, sizeof c);
	strbuf_init(&c.events);
	strbuf_init(&c.output);
	pump_all(s, &c, 5000);
	CHECK_EQ_INT(session_exit_code(session_status(s)), 5);
	CHECK_EQ_INT(c.lines, 2);
	strbuf_puts(&c.events, "");
	strbuf_puts(&c.output, "");
	char *want_ev;
	CHECK(asprintf(&want_ev, "hello t=1 pid=%d exe=x hook=t\nkernel t=2 pid=%d kid=1 name=k ptx=1\n",
		       (int)session_pid(s), (int)session_pid(s)) > 0);
	CHECKF(strcmp(c.events.data, want_ev) == 0, "events: %s", c.events.data);
	CHECK(session_finish_events(s, &cause) == 0);
	char *log = slurp_path(s, "events.log");
	/* what was read, then the recorder's end line with the program's status */
	char *want_end;
	CHECK(asprintf(&want_end, " pid=%d status=5\n", (int)getpid()) > 0);
	size_t hl = strlen(header), wl = strlen(want_ev);
	CHECKF(strncmp(log, header, hl) == 0 && strncmp(log + hl, want_ev, wl) == 0 &&
	       strncmp(log + hl + wl, "end t=", 6) == 0 && strlen(log) > strlen(want_end) &&
	       strcmp(log + strlen(log) - strlen(want_end), want_end) == 0, "log: %s", log);
	free(want_end);
	char *app = slurp_path(s, "app.log");
	CHECKF(strcmp(app, c.output.data) == 0, "app.log differs from what was read: %s", app);
	char want[512];
	snprintf(want, sizeof want, "control=%s/control\n", path);
	CHECKF(strstr(c.output.data, want) != NULL, "%s", c.output.data);
	CHECKF(strstr(c.output.data, "out-line\n") && strstr(c.output.data, "err-line\n"), "%s", c.output.data);
	CHECKF(strstr(c.output.data, "stdin=[]\n"), "stdin not /dev/null: %s", c.output.data);
	CHECKF(strstr(c.output.data, "ld=/the/hook\n"), "%s", c.output.data);
	CHECKF(strstr(c.output.data, "triton=/the/hook probes=/p/a.toml:/p/b.toml kernels=sgemm\nfill*\n"), "%s",
	       c.output.data);
	CHECKF(strstr(c.output.data, "group=1\n"), "not its own process group: %s", c.output.data);
	snprintf(want, sizeof want, "fd=none sock=%s/events.sock\n", path);
	CHECKF(strstr(c.output.data, want), "event socket: %s", c.output.data);
	snprintf(want, sizeof want, "%s/events.sock", path);
	CHECKF(access(want, F_OK) != 0, "%s left behind", want);
	snprintf(want, sizeof want, "%s/app.log", path);
	CHECK_EQ_INT(mode_of(want), 0600);
	free(want_ev);
	free(log);
	free(app);
	strbuf_done(&c.events);
	strbuf_done(&c.output);
	session_free(s);
}

static void test_control(void)
{
	char path[256], file[300], *cause = NULL;
	struct session *s = NULL;
	snprintf(path, sizeof path, "%s/ctl", tmpdir);
	CHECK(session_create(&s, path, &cause) == 0);
	if (!s)
		return;
	struct control_entry e[2] = { { "_Z4fillPfi", "/p/bs.toml", CONTROL_EVERY, 1, 0 },
				      { "_Z3fooV", "/p/bs.toml,/p/x.toml", CONTROL_NTH, 3, 0 } };
	CHECK_EQ_INT(session_control_gen(s), 0);
	CHECK(session_write_control(s, 1, e, 2, &cause) == 0);
	CHECK_EQ_INT(session_control_gen(s), 1);
	snprintf(file, sizeof file, "%s/control", path);
	CHECK_EQ_INT(mode_of(file), 0600);
	char *text = testlib_slurp(file, NULL);
	struct control_file f;
	CHECK(text && control_parse(text, strlen(text), &f, NULL, NULL, &cause) == 0);
	CHECK(f.gen == 1 && f.n == 2 && f.entries[1].mode == CONTROL_NTH && f.entries[1].n == 3);
	control_file_done(&f);
	free(text);
	CHECK(session_write_control(s, 1, NULL, 0, &cause) < 0); /* not above the last one */
	CHECK(session_write_control(s, 2, NULL, 0, &cause) == 0);
	text = testlib_slurp(file, NULL);
	CHECKF(text && strcmp(text, "control version=1 gen=2\n") == 0, "%s", text ? text : "(null)");
	free(text);
	struct control_entry bad = { "k", "relative.toml", CONTROL_EVERY, 1, 0 };
	CHECK(session_write_control(s, 3, &bad, 1, &cause) < 0);
	CHECK_EQ_INT(session_control_gen(s), 2);
	CHECK(session_write_control_text(s, "control gen=7\n", 14, &cause) == 0);
	text = testlib_slurp(file, NULL);
	CHECK(text && strcmp(text, "control gen=7\n") == 0);
	free(text);
	/* nothing but the control file is left behind */
	char cmd[400];
	snprintf(cmd, sizeof cmd, "test \"$(ls -A '%s')\" = control", path);
	CHECK(system(cmd) == 0);
	session_abandon(s);
	CHECK(access(path, F_OK) != 0);
	session_free(s);
	free(cause);
}

static const char *channel_script =
	"echo \"mode=$(stat -c %a \"$NTOP_EVENT_SOCK\")\"\n"
	"for i in 1 2 3 4 5 6 7 8; do\n"
	"  (for j in $(seq 1 200); do echo \"w t=$j pid=$i n=$j\"; done | \"$EV\") &\n"
	"done\n"
	"wait\n"
	"printf 'nonl t=1 pid=99' | \"$EV\"\n"
	"(cd / && \"$EV\" 'cwd t=1 pid=98')\n"
	"{ sleep 0.4; echo 'late t=1 pid=97'; } | \"$EV\" &\n"
	"exit 0\n";

/* Many writers at once (each line whole, each writer's lines in order), a
 * message without '\n', another working directory, and a writer that is
 * still connected when the app exits: the events are over only when it is
 * done. */
static void test_channel(void)
{
	char path[256], *cause = NULL;
	struct session *s = NULL;
	snprintf(path, sizeof path, "%s/chan", tmpdir);
	CHECK(session_create(&s, path, &cause) == 0);
	if (!s)
		return;
	CHECK(session_open_events(s, NULL, 0, &cause) == 0);
	char *argv[] = { "bash", "-c", (char *)channel_script, NULL };
	struct session_spawn_opts o = { .argv = argv, .hook_dir = "/h", .output = SESSION_OUTPUT_CAPTURE };
	CHECK(session_spawn(s, &o, &cause) == 0);
	CHECK(session_note(s) == NULL);
	struct collected c;
	memset(&c, 0, sizeof c);
	strbuf_init(&c.events);
	strbuf_init(&c.output);
	pump_all(s, &c, 20000);
	strbuf_puts(&c.events, "");
	strbuf_puts(&c.output, "");
	CHECK_EQ_INT(c.lines, 8 * 200 + 3);
	CHECKF(strstr(c.output.data, "mode=600\n"), "socket mode: %s", c.output.data);
	int last[9] = { 0 }, bad = 0;
	for (const char *l = c.events.data; l && *l;) {
		int t, pid, n;
		if (sscanf(l, "w t=%d pid=%d n=%d\n", &t, &pid, &n) == 3) {
			if (pid < 1 || pid > 8 || n != last[pid] + 1 || t != n)
				bad++;
			else
				last[pid] = n;
		} else if (strncmp(l, "nonl t=1 pid=99\n", 16) != 0 && strncmp(l, "cwd t=1 pid=98\n", 15) != 0 &&
			   strncmp(l, "late t=1 pid=97\n", 16) != 0) {
			bad++;
		}
		const char *nl = strchr(l, '\n');
		l = nl ? nl + 1 : NULL;
	}
	CHECKF(bad == 0, "%d lines cut, mixed or out of order", bad);
	for (int i = 1; i <= 8; i++)
		CHECKF(last[i] == 200, "writer %d: %d of 200 lines", i, last[i]);
	CHECKF(strstr(c.events.data, "late t=1 pid=97\n"), "the line of a writer still connected at the exit is lost");
	CHECK(session_finish_events(s, &cause) == 0);
	char *log = slurp_path(s, "events.log");
	size_t el = strlen(c.events.data);
	const char *end_nl = strlen(log) >= el ? strchr(log + el, '\n') : NULL;
	CHECKF(strncmp(log, c.events.data, el) == 0 && strncmp(log + el, "end t=", 6) == 0 && end_nl && !end_nl[1],
	       "events.log differs from what was read (then one end line)");
	char sock[300];
	snprintf(sock, sizeof sock, "%s/events.sock", path);
	CHECKF(access(sock, F_OK) != 0, "%s left behind", sock);
	free(log);
	strbuf_done(&c.events);
	strbuf_done(&c.output);
	session_free(s);
	free(cause);
}

/* A directory whose path cannot hold a socket: the socket goes to a 0700
 * directory of its own, the session says so, and both are removed. */
static void test_long_dir(void)
{
	char path[400], *cause = NULL;
	struct session *s = NULL;
	snprintf(path, sizeof path, "%s/%0150d", tmpdir, 7);
	CHECK(session_create(&s, path, &cause) == 0);
	if (!s)
		return;
	char *argv[] = { "bash", "-c", "\"$EV\" \"hello t=1 pid=$$ sock=$NTOP_EVENT_SOCK\"", NULL };
	struct session_spawn_opts o = { .argv = argv, .hook_dir = "/h", .output = SESSION_OUTPUT_CAPTURE };
	CHECK(session_spawn(s, &o, &cause) == 0);
	const char *note = session_note(s);
	const char *at = note ? strstr(note, "through ") : NULL;
	CHECKF(at && strstr(note, "too long"), "note: %s", note ? note : "(null)");
	char sock[300] = "", dir[300] = "";
	if (at) {
		snprintf(sock, sizeof sock, "%s", at + 8);
		snprintf(dir, sizeof dir, "%s", sock);
		char *slash = strrchr(dir, '/');
		if (slash)
			*slash = 0;
		CHECKF(strstr(dir, "/ntop-") != NULL, "socket directory %s", dir);
		CHECK_EQ_INT(mode_of(dir), 0700);
		CHECK_EQ_INT(mode_of(sock), 0600);
	}
	struct collected c;
	memset(&c, 0, sizeof c);
	strbuf_init(&c.events);
	strbuf_init(&c.output);
	pump_all(s, &c, 5000);
	strbuf_puts(&c.events, "");
	CHECK_EQ_INT(c.lines, 1);
	CHECKF(sock[0] && strstr(c.events.data, sock), "events: %s", c.events.data);
	session_free(s);
	CHECKF(dir[0] && access(dir, F_OK) != 0, "%s left behind", dir);
	strbuf_done(&c.events);
	strbuf_done(&c.output);
	free(cause);
}

static void test_terminate(void)
{
	char path[256], *cause = NULL;
	struct session *s = NULL;
	snprintf(path, sizeof path, "%s/term", tmpdir);
	CHECK(session_create(&s, path, &cause) == 0);
	if (!s)
		return;
	char *argv[] = { "bash", "-c", "trap '' TERM; \"$EV\" ready; while :; do sleep 0.05; done",
			 NULL };
	struct session_spawn_opts o = { .argv = argv, .hook_dir = "/h", .output = SESSION_OUTPUT_CAPTURE };
	CHECK(session_spawn(s, &o, &cause) == 0);
	struct collected c;
	memset(&c, 0, sizeof c);
	strbuf_init(&c.events);
	uint64_t t0 = time_mono_ns();
	while (c.lines == 0 && time_mono_ns() - t0 < 5000000000ull) {
		struct pollfd p[2];
		poll(p, (nfds_t)session_fds(s, p, 2), 50);
		session_read_events(s, on_line, &c);
	}
	CHECK_EQ_INT(c.lines, 1);
	t0 = time_mono_ns();
	session_terminate(s, 300);
	while (!session_poll_exit(s) && time_mono_ns() - t0 < 5000000000ull) {
		struct timespec ts = { 0, 10000000 };
		nanosleep(&ts, NULL);
	}
	double waited = (double)(time_mono_ns() - t0) / 1e9;
	CHECK(session_poll_exit(s));
	CHECKF(WIFSIGNALED(session_status(s)) && WTERMSIG(session_status(s)) == SIGKILL, "status %d",
	       session_status(s));
	CHECKF(waited >= 0.3 && waited < 3, "killed after %.2f s, grace 0.3 s", waited);
	CHECK_EQ_INT(session_exit_code(session_status(s)), 128 + SIGKILL);
	CHECK(session_signal(s, SIGTERM) < 0);
	strbuf_done(&c.events);
	session_free(s);
}

static void test_detach(void)
{
	char path[256], *cause = NULL;
	struct session *s = NULL;
	snprintf(path, sizeof path, "%s/det", tmpdir);
	CHECK(session_create(&s, path, &cause) == 0);
	if (!s)
		return;
	CHECK(session_open_events(s, NULL, 0, &cause) == 0);
	char *argv[] = { "bash", "-c",
			 "{ echo 'a t=1'; sleep 0.3; echo 'b t=2'; echo 'c t=3'; } | \"$EV\"; \"$EV\" 'd t=4';"
			 "echo out-after; exit 0",
			 NULL };
	struct session_spawn_opts o = { .argv = argv, .hook_dir = "/h", .output = SESSION_OUTPUT_CAPTURE };
	CHECK(session_spawn(s, &o, &cause) == 0);
	struct collected c;
	memset(&c, 0, sizeof c);
	strbuf_init(&c.events);
	uint64_t t0 = time_mono_ns();
	while (c.lines == 0 && time_mono_ns() - t0 < 5000000000ull) {
		struct pollfd p[2];
		poll(p, (nfds_t)session_fds(s, p, 2), 50);
		session_read_events(s, on_line, &c);
	}
	CHECK_EQ_INT(c.lines, 1);
	CHECK(session_detach(s, &cause) == 0);
	struct pollfd p[2];
	CHECK_EQ_INT(session_fds(s, p, 2), 0);
	CHECK(session_read_events(s, on_line, &c) < 0);
	session_wait(s);
	CHECK_EQ_INT(session_exit_code(session_status(s)), 0);
	/* the copier finishes once the app is gone and its connections and
	 * output closed: it removes the socket last */
	char *log = NULL, *app = NULL, *sock = session_path(s, "events.sock");
	for (int i = 0; i < 300; i++) {
		free(log);
		free(app);
		log = slurp_path(s, "events.log");
		app = slurp_path(s, "app.log");
		if (strstr(app, "out-after") && strstr(log, "d t=4\n") && access(sock, F_OK) != 0)
			break;
		struct timespec ts = { 0, 10000000 };
		nanosleep(&ts, NULL);
	}
	/* b and c came on the connection open at the detach, d on a new one;
	 * the copier's end line last (no status: the app is not its child) */
	const char *lines = "a t=1\nb t=2\nc t=3\nd t=4\nend t=", *tail = " detached=1\n";
	size_t ll = strlen(log), tl = strlen(tail);
	CHECKF(strncmp(log, lines, strlen(lines)) == 0 && ll > tl && strcmp(log + ll - tl, tail) == 0 &&
	       !strstr(log, "status="), "events.log after detach: %s", log);
	CHECKF(access(sock, F_OK) != 0, "the copier left %s", sock);
	free(sock);
	CHECKF(strcmp(app, "out-after\n") == 0, "app.log after detach: %s", app);
	free(log);
	free(app);
	strbuf_done(&c.events);
	session_free(s);
	free(cause);
}

static void test_spawn_fails(void)
{
	char path[256], *cause = NULL;
	struct session *s = NULL;
	snprintf(path, sizeof path, "%s/fail", tmpdir);
	CHECK(session_create(&s, path, &cause) == 0);
	if (!s)
		return;
	CHECK(session_open_events(s, "x\n", 2, &cause) == 0);
	char *argv[] = { "/nonexistent/program", NULL };
	struct session_spawn_opts o = { .argv = argv, .hook_dir = "/h", .output = SESSION_OUTPUT_CAPTURE };
	CHECK(session_spawn(s, &o, &cause) < 0);
	CHECKF(cause && strstr(cause, "cannot run '/nonexistent/program': No such file or directory"), "%s",
	       cause ? cause : "(null)");
	CHECK(session_poll_exit(s) == 0);
	session_abandon(s);
	CHECK(access(path, F_OK) != 0);
	session_free(s);
	free(cause);
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	setenv("EV", NTOP_BINARY_DIR "/bin/ev_send", 1);
	test_dirs();
	test_capture();
	test_control();
	test_channel();
	test_long_dir();
	test_terminate();
	test_detach();
	test_spawn_fails();
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return testlib_report();
}
