/* Launching an application with the hook and keeping what it reports
 * (session.h). The event pipe's write end becomes fd 223 in the child (high,
 * so the app's own descriptors never collide) and NTOP_EVENT_FD names it;
 * every process of the app inherits it, so the pipe reaches EOF only when
 * the app and all its children are gone. Reads are non-blocking throughout:
 * `ntop record` and the UI run their own poll loops. */
#include "cli/session.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/cause.h"
#include "common/fdio.h"
#include "common/strbuf.h"
#include "common/timeutil.h"
#include "hook/hook_env.h"

extern char **environ;

#define SESSION_EVENT_FD 223
#define SESSION_LINE_MAX (1u << 20)  /* a "line" this long without '\n' is passed on as is */
#define SESSION_READ_MAX (1u << 20)  /* bytes per session_read_events call: keep the caller responsive */

struct session {
	char *dir;               /* absolute */
	int created_dir;
	char *events_path;       /* set once events.log was created */
	int events_fd;
	int events_err;          /* first write error (errno) */
	char *app_log_path;
	int app_log_fd;
	int wrote_control;
	uint64_t control_gen;
	int ev_rfd, out_rfd;     /* read ends, non-blocking; -1 when closed */
	struct strbuf line;      /* bytes of an event line not yet complete */
	pid_t pid;               /* 0 before spawn */
	int own_group;           /* captured: the app leads process group pid */
	int exited, status;
	uint64_t kill_at_ns;     /* session_terminate: SIGKILL deadline (monotonic), 0 none */
	struct session_pidlog *pidlogs; /* events-<pid>.log files being followed */
	int n_pidlogs;
};

/* A process's own events file (its hook could not reach the pipe), read
 * up to `off` so far: complete lines only. */
struct session_pidlog {
	char name[64];
	uint64_t off;
};

/* Where forwarded signals go: pid, -pgid, or 0 (none yet: remembered). */
static volatile sig_atomic_t session_fwd_target;
static volatile sig_atomic_t session_pending_sig;

/* ---- directory ---- */

static int session_mkdir_parents(char *path)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		int rc = mkdir(path, 0755);
		int err = errno;
		*p = '/';
		if (rc < 0 && err != EEXIST) {
			errno = err;
			return -1;
		}
	}
	return 0;
}

static int session_dir_empty(const char *path)
{
	DIR *d = opendir(path);
	if (!d)
		return 0;
	int empty = 1;
	struct dirent *e;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			empty = 0;
	closedir(d);
	return empty;
}

static char *session_default_dir(void)
{
	char stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
	char *d;
	return asprintf(&d, "ntop-trace/%s_%d", stamp, (int)getpid()) < 0 ? NULL : d;
}

static int session_make_dir(struct session *s, const char *want, char **cause)
{
	char *def = want ? NULL : session_default_dir();
	s->dir = cli_abspath(want ? want : def);
	free(def);
	if (!s->dir)
		return cause_set(cause, "cannot make an absolute path of the trace directory");
	size_t n = strlen(s->dir);
	while (n > 1 && s->dir[n - 1] == '/')
		s->dir[--n] = 0;
	if (session_mkdir_parents(s->dir) < 0)
		return cause_set(cause, "cannot create the parents of %s: %s", s->dir, strerror(errno));
	if (mkdir(s->dir, 0700) == 0) {
		s->created_dir = 1;
		return 0;
	}
	int err = errno;
	struct stat st;
	if (err != EEXIST || stat(s->dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return cause_set(cause, "cannot create trace directory %s: %s", s->dir,
				 err == EEXIST ? "exists and is not a directory" : strerror(err));
	if (!session_dir_empty(s->dir))
		return cause_set(cause, "trace directory %s exists and is not empty; choose another", s->dir);
	return 0;
}

int session_create(struct session **out, const char *dir, char **cause)
{
	struct session *s = calloc(1, sizeof *s);
	if (!s)
		return cause_set(cause, "out of memory");
	s->events_fd = s->app_log_fd = s->ev_rfd = s->out_rfd = -1;
	strbuf_init(&s->line);
	if (session_make_dir(s, dir, cause) < 0) {
		session_free(s);
		return -1;
	}
	*out = s;
	return 0;
}

const char *session_dir(const struct session *s)
{
	return s->dir;
}

char *session_path(const struct session *s, const char *name)
{
	char *p;
	return asprintf(&p, "%s/%s", s->dir, name) < 0 ? NULL : p;
}

int session_open_events(struct session *s, const char *header, size_t len, char **cause)
{
	if (s->events_path)
		return cause_set(cause, "events.log is already open");
	s->events_path = session_path(s, "events.log");
	if (!s->events_path)
		return cause_set(cause, "out of memory");
	s->events_fd = open(s->events_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_APPEND, 0600);
	if (s->events_fd < 0) {
		cause_set(cause, "cannot create %s: %s", s->events_path, strerror(errno));
		free(s->events_path);
		s->events_path = NULL;
		return -1;
	}
	if (header && len && fdio_write_all(s->events_fd, header, len) < 0)
		return cause_set(cause, "cannot write %s: %s", s->events_path, strerror(errno));
	return 0;
}

void session_abandon(struct session *s)
{
	if (s->events_path)
		unlink(s->events_path);
	if (s->app_log_path)
		unlink(s->app_log_path);
	if (s->wrote_control) {
		char *c = session_path(s, "control");
		if (c)
			unlink(c);
		free(c);
	}
	if (s->created_dir)
		rmdir(s->dir);
}

/* ---- environment ---- */

static int session_env_ours(const char *e)
{
	static const char *const ours[] = {
		NTOP_ENV_EVENT_FD, NTOP_ENV_EVENT_ID, NTOP_ENV_TRACE_DIR, NTOP_ENV_PROBES, NTOP_ENV_KERNELS, NTOP_ENV_PROBE_EVERY,
		NTOP_ENV_PROBE_LIMIT, NTOP_ENV_CONTROL, NTOP_ENV_MAP_BUDGET, NTOP_ENV_SAMPLE, "LD_LIBRARY_PATH",
		"TRITON_LIBCUDA_PATH"};
	for (size_t i = 0; i < sizeof ours / sizeof ours[0]; i++) {
		size_t n = strlen(ours[i]);
		if (strncmp(e, ours[i], n) == 0 && e[n] == '=')
			return 1;
	}
	return 0;
}

struct session_env {
	char **v;
	int n;
	int failed;
};

static void session_env_push(struct session_env *env, char *s)
{
	char **nv = s ? realloc(env->v, (size_t)(env->n + 2) * sizeof *nv) : NULL;
	if (!nv) {
		free(s);
		env->failed = 1;
		return;
	}
	nv[env->n++] = s;
	nv[env->n] = NULL;
	env->v = nv;
}

static void session_env_set(struct session_env *env, const char *key, const char *val)
{
	char *s;
	session_env_push(env, asprintf(&s, "%s=%s", key, val) < 0 ? NULL : s);
}

static void session_env_join(struct session_env *env, const char *key, char *const *v, int n, const char *sep)
{
	if (n <= 0)
		return;
	char *j = strbuf_join(v, n, sep);
	if (j)
		session_env_set(env, key, j);
	else
		env->failed = 1;
	free(j);
}

static void session_env_free(char **v)
{
	for (char **e = v; e && *e; e++)
		free(*e);
	free(v);
}

/* ntop's environment without our variables, then ours. */
static char **session_env(const struct session *s, const struct session_spawn_opts *o, int event_fd,
			   int pipe_fd)
{
	struct session_env env = { NULL, 0, 0 };
	for (char **e = environ; *e; e++)
		if (!session_env_ours(*e))
			session_env_push(&env, strdup(*e));
	const char *old = getenv("LD_LIBRARY_PATH");
	char *ld;
	if (asprintf(&ld, "%s%s%s", o->hook_dir, old && *old ? ":" : "", old && *old ? old : "") >= 0) {
		session_env_set(&env, "LD_LIBRARY_PATH", ld);
		free(ld);
	}
	char fdnum[16];
	snprintf(fdnum, sizeof fdnum, "%d", event_fd);
	session_env_set(&env, NTOP_ENV_EVENT_FD, fdnum);
	/* The pipe's identity: a process that closed the fd and reused the
	 * number must not get event lines in its own file. */
	struct stat st;
	char id[64];
	if (fstat(pipe_fd, &st) == 0) {
		snprintf(id, sizeof id, "%llu:%llu", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
		session_env_set(&env, NTOP_ENV_EVENT_ID, id);
	}
	session_env_set(&env, NTOP_ENV_TRACE_DIR, s->dir);
	session_env_set(&env, "TRITON_LIBCUDA_PATH", o->hook_dir);
	session_env_join(&env, NTOP_ENV_PROBES, o->probes, o->n_probes, ":");
	session_env_join(&env, NTOP_ENV_KERNELS, o->kernels, o->n_kernels, "\n");
	if (o->every)
		session_env_set(&env, NTOP_ENV_PROBE_EVERY, o->every);
	if (o->limit)
		session_env_set(&env, NTOP_ENV_PROBE_LIMIT, o->limit);
	/* an option replaces what ntop inherited; without one that passes on */
	const char *budget = o->map_budget ? o->map_budget : getenv(NTOP_ENV_MAP_BUDGET);
	const char *sample = o->sample ? o->sample : getenv(NTOP_ENV_SAMPLE);
	if (budget)
		session_env_set(&env, NTOP_ENV_MAP_BUDGET, budget);
	if (sample)
		session_env_set(&env, NTOP_ENV_SAMPLE, sample);
	if (!o->no_control) {
		char *c = session_path(s, "control");
		if (c)
			session_env_set(&env, NTOP_ENV_CONTROL, c);
		else
			env.failed = 1;
		free(c);
	}
	if (env.failed) {
		session_env_free(env.v);
		return NULL;
	}
	return env.v;
}

/* ---- spawning ---- */

static void session_on_signal(int sig)
{
	pid_t to = (pid_t)session_fwd_target;
	if (to != 0)
		kill(to, sig);
	else
		session_pending_sig = sig;
}

void session_signals_install(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
	sigaction(SIGPIPE, &sa, NULL);
	sa.sa_handler = session_on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* A pipe whose ends are not 0-2 (stdio may be closed when ntop starts). */
static int session_pipe(int fds[2])
{
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -1;
	for (int i = 0; i < 2; i++)
		if (fds[i] <= 2) {
			int hi = fcntl(fds[i], F_DUPFD_CLOEXEC, 3);
			if (hi < 0)
				return -1;
			close(fds[i]);
			fds[i] = hi;
		}
	return 0;
}

static void session_close(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static int session_spawn_run(struct session *s, const struct session_spawn_opts *o, int ev_w, int out_w,
			     char **env)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&at);
	if (out_w >= 0) {
		posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
		posix_spawn_file_actions_adddup2(&fa, out_w, 1);
		posix_spawn_file_actions_adddup2(&fa, out_w, 2);
	}
	/* Last: the output pipe's end may sit on the event fd's number. */
	posix_spawn_file_actions_adddup2(&fa, ev_w, ev_w == SESSION_EVENT_FD ? SESSION_EVENT_FD + 1 : SESSION_EVENT_FD);
	sigset_t def, none;
	sigemptyset(&def);
	sigaddset(&def, SIGINT);
	sigaddset(&def, SIGQUIT);
	sigaddset(&def, SIGPIPE);
	sigaddset(&def, SIGTERM);
	sigaddset(&def, SIGHUP);
	sigemptyset(&none);
	posix_spawnattr_setsigdefault(&at, &def);
	posix_spawnattr_setsigmask(&at, &none);
	short flags = POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK;
	if (out_w >= 0) {
		posix_spawnattr_setpgroup(&at, 0);
		flags |= POSIX_SPAWN_SETPGROUP;
	}
	posix_spawnattr_setflags(&at, flags);
	int err = posix_spawnp(&s->pid, o->argv[0], &fa, &at, o->argv, env);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	return err;
}

static int session_open_app_log(struct session *s, char **cause)
{
	s->app_log_path = session_path(s, "app.log");
	if (!s->app_log_path)
		return cause_set(cause, "out of memory");
	s->app_log_fd = open(s->app_log_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_APPEND, 0600);
	if (s->app_log_fd >= 0)
		return 0;
	cause_set(cause, "cannot create %s: %s", s->app_log_path, strerror(errno));
	free(s->app_log_path);
	s->app_log_path = NULL;
	return -1;
}

int session_spawn(struct session *s, const struct session_spawn_opts *o, char **cause)
{
	if (s->pid > 0)
		return cause_set(cause, "the session already runs a program");
	if (!o->argv || !o->argv[0] || !o->hook_dir)
		return cause_set(cause, "no program or hook directory");
	int capture = o->output == SESSION_OUTPUT_CAPTURE;
	int ev[2] = { -1, -1 }, out[2] = { -1, -1 };
	if (session_pipe(ev) < 0 || (capture && session_pipe(out) < 0)) {
		cause_set(cause, "pipe: %s", strerror(errno));
		goto fail;
	}
	if (capture && !s->app_log_path && session_open_app_log(s, cause) < 0)
		goto fail;
	char **env = session_env(s, o, ev[1] == SESSION_EVENT_FD ? SESSION_EVENT_FD + 1 : SESSION_EVENT_FD, ev[1]);
	if (!env) {
		cause_set(cause, "out of memory");
		goto fail;
	}
	int err = session_spawn_run(s, o, ev[1], out[1], env);
	session_env_free(env);
	session_close(&ev[1]);
	session_close(&out[1]);
	if (err) {
		s->pid = 0;
		cause_set(cause, "cannot run '%s': %s", o->argv[0], strerror(err));
		goto fail;
	}
	s->ev_rfd = ev[0];
	s->out_rfd = out[0];
	fcntl(s->ev_rfd, F_SETFL, fcntl(s->ev_rfd, F_GETFL) | O_NONBLOCK);
	if (s->out_rfd >= 0)
		fcntl(s->out_rfd, F_SETFL, fcntl(s->out_rfd, F_GETFL) | O_NONBLOCK);
	s->own_group = capture;
	session_fwd_target = s->own_group ? -s->pid : s->pid;
	if (session_pending_sig)
		kill((pid_t)session_fwd_target, session_pending_sig);
	return 0;
fail:
	for (int i = 0; i < 2; i++) {
		session_close(&ev[i]);
		session_close(&out[i]);
	}
	return -1;
}

pid_t session_pid(const struct session *s)
{
	return s->pid;
}

int session_signal(struct session *s, int sig)
{
	if (s->pid <= 0 || s->exited)
		return -1;
	return kill(s->own_group ? -s->pid : s->pid, sig);
}

void session_terminate(struct session *s, int grace_ms)
{
	if (session_signal(s, SIGTERM) == 0)
		s->kill_at_ns = time_mono_ns() + (uint64_t)(grace_ms > 0 ? grace_ms : 0) * 1000000ull;
}

static void session_reaped(struct session *s, int status)
{
	s->exited = 1;
	s->status = status;
	s->kill_at_ns = 0;
	if (session_fwd_target == (s->own_group ? -s->pid : s->pid))
		session_fwd_target = 0;
}

int session_poll_exit(struct session *s)
{
	if (s->exited)
		return 1;
	if (s->pid <= 0)
		return 0;
	int st = 0;
	pid_t r = waitpid(s->pid, &st, WNOHANG);
	if (r == s->pid || (r < 0 && errno == ECHILD)) {
		session_reaped(s, r == s->pid ? st : 0);
		return 1;
	}
	if (s->kill_at_ns && time_mono_ns() >= s->kill_at_ns) {
		session_signal(s, SIGKILL);
		s->kill_at_ns = 0;
	}
	return 0;
}

void session_wait(struct session *s)
{
	while (s->pid > 0 && !s->exited) {
		int st = 0;
		pid_t r = waitpid(s->pid, &st, 0);
		if (r == s->pid || (r < 0 && errno != EINTR))
			session_reaped(s, r == s->pid ? st : 0);
	}
}

int session_status(const struct session *s)
{
	return s->status;
}

int session_exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

/* ---- reading ---- */

int session_fds(const struct session *s, struct pollfd *p, int max)
{
	int n = 0;
	if (s->ev_rfd >= 0 && n < max)
		p[n++] = (struct pollfd){ s->ev_rfd, POLLIN, 0 };
	if (s->out_rfd >= 0 && n < max)
		p[n++] = (struct pollfd){ s->out_rfd, POLLIN, 0 };
	return n;
}

static void session_log(struct session *s, const char *p, size_t n)
{
	if (s->events_fd >= 0 && !s->events_err && fdio_write_all(s->events_fd, p, n) < 0)
		s->events_err = errno ? errno : EIO;
}

/* Appends bytes from the pipe; complete lines go to the log and to fn. */
static int session_take(struct session *s, const char *buf, size_t n, session_line_fn fn, void *arg)
{
	strbuf_append(&s->line, buf, n);
	if (s->line.failed) { /* out of memory: drop what was pending, go on */
		strbuf_done(&s->line);
		strbuf_init(&s->line);
		return 0;
	}
	size_t done = 0;
	for (size_t i = s->line.len; i > 0 && !done; i--)
		if (s->line.data[i - 1] == '\n')
			done = i;
	if (!done && s->line.len > SESSION_LINE_MAX)
		done = s->line.len;
	if (!done)
		return 0;
	session_log(s, s->line.data, done);
	int lines = 0;
	for (size_t a = 0; a < done; lines++) {
		char *nl = memchr(s->line.data + a, '\n', done - a);
		size_t end = nl ? (size_t)(nl - s->line.data) + 1 : done;
		if (fn)
			fn(arg, s->line.data + a, end - a);
		a = end;
	}
	memmove(s->line.data, s->line.data + done, s->line.len - done);
	s->line.len -= done;
	return lines;
}

/* A cut last line: kept in the log, readers know to distrust it. */
static void session_flush_partial(struct session *s)
{
	if (s->line.len)
		session_log(s, s->line.data, s->line.len);
	s->line.len = 0;
}

int session_read_events(struct session *s, session_line_fn fn, void *arg)
{
	if (s->ev_rfd < 0)
		return -1;
	char buf[65536];
	size_t total = 0;
	int lines = 0;
	while (total < SESSION_READ_MAX) {
		ssize_t n = read(s->ev_rfd, buf, sizeof buf);
		if (n > 0) {
			lines += session_take(s, buf, (size_t)n, fn, arg);
			total += (size_t)n;
		} else if (n < 0 && errno == EINTR) {
			continue;
		} else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			break;
		} else { /* every writer closed the pipe */
			session_close(&s->ev_rfd);
			session_flush_partial(s);
			return -1;
		}
	}
	return lines;
}

int session_events_error(const struct session *s)
{
	return s->events_err;
}

long session_read_output(struct session *s, char *buf, size_t cap)
{
	while (s->out_rfd >= 0) {
		ssize_t n = read(s->out_rfd, buf, cap);
		if (n > 0) {
			if (s->app_log_fd >= 0 && fdio_write_all(s->app_log_fd, buf, (size_t)n) < 0)
				session_close(&s->app_log_fd); /* disk full: the pane still gets the bytes */
			return (long)n;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		session_close(&s->out_rfd);
	}
	return -1;
}

/* The detached copier: plain reads and writes until both pipes close. Runs
 * in a forked child of a possibly threaded ntop, so only async-signal-safe
 * calls. */
static void session_copier(int ev, int ev_log, int out, int out_log)
{
	char buf[65536];
	while (ev >= 0 || out >= 0) {
		struct pollfd p[2] = { { ev, POLLIN, 0 }, { out, POLLIN, 0 } };
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		for (int i = 0; i < 2; i++) {
			int *fd = i ? &out : &ev, log = i ? out_log : ev_log;
			if (*fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			ssize_t n = read(*fd, buf, sizeof buf);
			if (n > 0 && log >= 0)
				fdio_write_all(log, buf, (size_t)n);
			else if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
				close(*fd);
				*fd = -1;
			}
		}
	}
}

int session_detach(struct session *s, char **cause)
{
	if (s->ev_rfd < 0 && s->out_rfd < 0)
		return 0;
	session_flush_partial(s); /* the copier appends the rest of the line */
	if (s->ev_rfd >= 0)
		fcntl(s->ev_rfd, F_SETFL, fcntl(s->ev_rfd, F_GETFL) & ~O_NONBLOCK);
	if (s->out_rfd >= 0)
		fcntl(s->out_rfd, F_SETFL, fcntl(s->out_rfd, F_GETFL) & ~O_NONBLOCK);
	pid_t p = fork();
	if (p < 0)
		return cause_set(cause, "fork: %s", strerror(errno));
	if (p == 0) {
		/* Twice, so the copier is nobody's zombie; its own session, so a
		 * terminal hangup does not end it before the app. */
		if (fork() != 0)
			_exit(0);
		setsid();
		session_copier(s->ev_rfd, s->events_err ? -1 : s->events_fd, s->out_rfd, s->app_log_fd);
		_exit(0);
	}
	while (waitpid(p, NULL, 0) < 0 && errno == EINTR)
		;
	session_close(&s->ev_rfd);
	session_close(&s->out_rfd);
	return 0;
}

static struct session_pidlog *session_pidlog(struct session *s, const char *name)
{
	for (int i = 0; i < s->n_pidlogs; i++)
		if (strcmp(s->pidlogs[i].name, name) == 0)
			return &s->pidlogs[i];
	struct session_pidlog *v = realloc(s->pidlogs, (size_t)(s->n_pidlogs + 1) * sizeof *v);
	if (!v)
		return NULL;
	s->pidlogs = v;
	struct session_pidlog *pl = &v[s->n_pidlogs++];
	snprintf(pl->name, sizeof pl->name, "%s", name);
	pl->off = 0;
	return pl;
}

/* New complete lines of one events-<pid>.log to the log and to fn; with
 * `final`, the file is removed afterwards. Returns the lines passed on. */
static int session_pidlog_read(struct session *s, int dfd, const char *name, session_line_fn fn, void *arg,
			       int final)
{
	struct session_pidlog *pl = session_pidlog(s, name);
	int fd = pl ? openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK) : -1;
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (uint64_t)st.st_size <= pl->off) {
		if (fd >= 0)
			close(fd);
		if (final && fd >= 0)
			unlinkat(dfd, name, 0);
		return 0;
	}
	struct strbuf all;
	strbuf_init(&all);
	char buf[65536];
	ssize_t n;
	for (uint64_t at = pl->off; (n = pread(fd, buf, sizeof buf, (off_t)at)) > 0; at += (uint64_t)n)
		strbuf_append(&all, buf, (size_t)n);
	close(fd);
	int lines = 0;
	size_t start = 0;
	for (size_t i = 0; !all.failed && i < all.len; i++) {
		if (all.data[i] != '\n')
			continue;
		session_log(s, all.data + start, i + 1 - start);
		if (fn)
			fn(arg, all.data + start, i + 1 - start);
		start = i + 1;
		lines++;
	}
	pl->off += start; /* a line still being written is read next time */
	strbuf_done(&all);
	if (final)
		unlinkat(dfd, name, 0);
	return lines;
}

int session_poll_pid_logs(struct session *s, session_line_fn fn, void *arg, int final)
{
	int dfd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return 0;
	}
	int lines = 0;
	for (struct dirent *e; (e = readdir(d)) != NULL;) {
		const char *n = e->d_name;
		size_t len = strlen(n);
		if (strncmp(n, "events-", 7) != 0 || len < 12 || len >= 64 || strcmp(n + len - 4, ".log") != 0 ||
		    strspn(n + 7, "0123456789") != len - 11)
			continue;
		lines += session_pidlog_read(s, dirfd(d), n, fn, arg, final);
	}
	closedir(d);
	return lines;
}

int session_finish_events(struct session *s, char **cause)
{
	session_flush_partial(s);
	if (s->events_fd < 0)
		return 0;
	int rc = 0;
	if (fsync(s->events_fd) < 0 && !s->events_err)
		rc = cause_set(cause, "fsync %s: %s", s->events_path, strerror(errno));
	session_close(&s->events_fd);
	return rc;
}

/* ---- live control ---- */

int session_write_control_text(struct session *s, const char *text, size_t len, char **cause)
{
	char *tmp = NULL, *dst = session_path(s, "control");
	if (!dst || asprintf(&tmp, "%s/.control-%d.tmp", s->dir, (int)getpid()) < 0) {
		free(dst);
		return cause_set(cause, "out of memory");
	}
	int rc = 0;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		rc = cause_set(cause, "cannot create %s: %s", tmp, strerror(errno));
	else if (fdio_write_all(fd, text, len) < 0)
		rc = cause_set(cause, "cannot write %s: %s", tmp, strerror(errno));
	if (fd >= 0 && close(fd) < 0 && rc == 0)
		rc = cause_set(cause, "cannot write %s: %s", tmp, strerror(errno));
	/* rename: a poller sees the old file or the new one, never half of one */
	if (rc == 0 && rename(tmp, dst) < 0)
		rc = cause_set(cause, "cannot rename %s to %s: %s", tmp, dst, strerror(errno));
	if (rc < 0)
		unlink(tmp);
	else
		s->wrote_control = 1;
	free(tmp);
	free(dst);
	return rc;
}

int session_write_control(struct session *s, uint64_t gen, const struct control_entry *e, int n, char **cause)
{
	if (gen <= s->control_gen)
		return cause_set(cause, "control generation %llu is not above the last one written (%llu)",
				 (unsigned long long)gen, (unsigned long long)s->control_gen);
	struct strbuf sb;
	strbuf_init(&sb);
	if (control_format(&sb, gen, e, n, cause) < 0) {
		strbuf_done(&sb);
		return -1;
	}
	int rc = session_write_control_text(s, sb.data, sb.len, cause);
	strbuf_done(&sb);
	if (rc == 0)
		s->control_gen = gen;
	return rc;
}

uint64_t session_control_gen(const struct session *s)
{
	return s->control_gen;
}

void session_free(struct session *s)
{
	if (!s)
		return;
	session_close(&s->ev_rfd);
	session_close(&s->out_rfd);
	session_close(&s->events_fd);
	session_close(&s->app_log_fd);
	if (s->pid > 0 && session_fwd_target == (s->own_group ? -s->pid : s->pid))
		session_fwd_target = 0;
	strbuf_done(&s->line);
	free(s->pidlogs);
	free(s->events_path);
	free(s->app_log_path);
	free(s->dir);
	free(s);
}
