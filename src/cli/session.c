/* Launching an application with the hook and keeping what it reports
 * (session.h). Events arrive on a listening AF_UNIX SOCK_SEQPACKET socket,
 * <dir>/events.sock (0600 in the 0700 directory), named by NTOP_EVENT_SOCK:
 * every process of the app connects to it itself, however it was started
 * (fork, exec, spawn with its fds closed, another working directory), and
 * sends one event line per message, so one process's data can never run
 * into another's. Connections and the listening socket sit in one epoll set,
 * which is the one descriptor callers poll. The events are over once the
 * app has exited and no connection is left (nor made within
 * SESSION_QUIET_NS). Processes that cannot reach the socket write
 * events-<pid>.log in the directory, followed by session_poll_pid_logs.
 * Reads are non-blocking throughout: `ntop record` and the UI run their own
 * poll loops. */
#include "cli/session.h"

#include <dirent.h>
#include <errno.h>
#include <gnu/libc-version.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/cause.h"
#include "common/fdio.h"
#include "common/reallib.h"
#include "common/safefs.h"
#include "common/strbuf.h"
#include "common/timeutil.h"
#include "hook/hook_env.h"
#include "trace/events.h"
#include "trace/trace_dir.h"

extern char **environ;

#define SESSION_SOCK_NAME "events.sock"
#define SESSION_AUDIT_FILE "libntop_audit.so" /* in the hook directory (src/hook/audit/rtld_audit.c) */
#define SESSION_HIP_HOOK "libntop_hip.so" /* the HIP 6/7 hook (src/hook/hip/hook_hip_bind.c) */
#define SESSION_MSG_MAX 65536        /* one message (an event line is at most 4096 bytes); longer: cut */
#define SESSION_READ_MAX (1u << 20)  /* bytes per session_read_events call: keep the caller responsive */
#define SESSION_CONN_BURST 256       /* messages from one connection before the others get a turn */
#define SESSION_QUIET_NS 250000000ull /* after the app exited: how long no connection may be open */
#define SESSION_PIDLOG_EVERY_NS 250000000ull /* events-<pid>.log: directory scans at most this often */

struct session {
	char *dir;               /* absolute */
	int dfd;                 /* the directory, opened once and checked (safefs.h): all below is
				    opened relative to it */
	unsigned long long dir_dev, dir_ino; /* its identity, handed to the hook (NTOP_TRACE_DIR_ID) */
	int created_dir;
	char *events_path;       /* set once events.log was created */
	int events_fd;
	int events_err;          /* first write error (errno) */
	char *app_log_path;
	int app_log_fd;
	int wrote_control;
	uint64_t control_gen;
	int out_rfd;             /* output pipe's read end, non-blocking; -1 when closed */
	int ep;                  /* epoll: the listening socket and every connection; -1 when done */
	int lfd;                 /* listening socket (non-blocking), -1 when closed */
	char *sock_path;         /* absolute, as NTOP_EVENT_SOCK gives it */
	char *sock_dir;          /* mkdtemp'd directory holding it when dir's path was too long */
	char *note;              /* what the user should know about the socket, or NULL */
	int sock_bound;          /* sock_path exists (ours to remove) */
	struct session_conn *conns; /* connected processes */
	int n_conns, cap_conns;
	uint64_t conn_serial;    /* accepted so far: the next connection's order */
	uint64_t quiet_since;    /* monotonic ns since no connection is open (after the exit) */
	int detached;            /* the copier owns the socket now */
	pid_t pid;               /* 0 before spawn */
	int own_group;           /* captured: the app leads process group pid */
	int exited, status;
	uint64_t kill_at_ns;     /* session_terminate: SIGKILL deadline (monotonic), 0 none */
	struct session_pidlog *pidlogs; /* events-<pid>.log files being followed */
	int n_pidlogs;
	uint64_t pidlog_scan_ns; /* last directory scan (monotonic) */
};

/* One process's connection (non-blocking). A process connects again when
 * the application closed its socket: `serial` keeps its connections in
 * order. */
struct session_conn {
	int fd;
	pid_t pid;               /* SO_PEERCRED */
	uint64_t serial;
};

/* A process's own events file (its hook could not reach the socket), read
 * up to `off` so far: complete lines only. */
struct session_pidlog {
	char name[64];
	uint64_t off;
};

static void session_sock_done(struct session *s);
static void session_log_end(struct session *s, int detached);

/* Where forwarded signals go: pid, -pgid, or 0 (none yet: remembered). */
static volatile sig_atomic_t session_fwd_target;
static volatile sig_atomic_t session_pending_sig;

/* ---- directory ---- */

static void session_close(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}


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
	if (mkdir(s->dir, 0700) == 0)
		s->created_dir = 1;
	else if (errno != EEXIST)
		return cause_set(cause, "cannot create trace directory %s: %s", s->dir, strerror(errno));
	/* an existing one only when it is empty, ours, no link and closed to
	 * others: a directory another user prepared could hold their control
	 * file, or links the hook would write through */
	s->dfd = safefs_open_dir(s->dir, !s->created_dir, cause);
	if (s->dfd < 0)
		return cause_wrap(cause, "trace directory");
	struct stat st;
	if (fstat(s->dfd, &st) < 0)
		return cause_set(cause, "trace directory %s: %s", s->dir, strerror(errno));
	s->dir_dev = (unsigned long long)st.st_dev;
	s->dir_ino = (unsigned long long)st.st_ino;
	return 0;
}

/* SIGXFSZ's disposition when ntop started: 1 default (the app gets it back). */
static int session_xfsz_default = -1;

/* A file past `ulimit -f` must not kill ntop (no summary, the app's status
 * lost): ignored, a write fails with EFBIG and is reported like a full
 * disk. The application gets the disposition ntop was started with. */
static void session_ignore_xfsz(void)
{
	struct sigaction sa, old;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_IGN;
	if (sigaction(SIGXFSZ, &sa, &old) == 0 && session_xfsz_default < 0)
		session_xfsz_default = old.sa_handler == SIG_DFL;
}

int session_create(struct session **out, const char *dir, char **cause)
{
	session_ignore_xfsz();
	struct session *s = calloc(1, sizeof *s);
	if (!s)
		return cause_set(cause, "out of memory");
	s->events_fd = s->app_log_fd = s->out_rfd = s->ep = s->lfd = s->dfd = -1;
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

int session_dir_gone(const struct session *s)
{
	struct stat st, at;
	if (s->dfd < 0 || fstat(s->dfd, &st) < 0 || st.st_nlink == 0)
		return 1; /* removed (a directory keeps a link while it has a name) */
	/* moved, or another directory put in its place */
	return stat(s->dir, &at) < 0 || at.st_dev != st.st_dev || at.st_ino != st.st_ino;
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
	s->events_fd = safefs_create(s->dfd, "events.log", O_WRONLY | O_APPEND);
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
		unlinkat(s->dfd, "events.log", 0);
	if (s->app_log_path)
		unlinkat(s->dfd, "app.log", 0);
	if (s->wrote_control)
		unlinkat(s->dfd, "control", 0);
	session_sock_done(s);
	if (s->created_dir)
		rmdir(s->dir);
}

/* ---- environment ---- */

static int session_env_ours(const char *e)
{
	static const char *const ours[] = {
		NTOP_ENV_EVENT_SOCK, NTOP_ENV_EVENT_FD, NTOP_ENV_EVENT_ID, NTOP_ENV_TRACE_DIR, NTOP_ENV_TRACE_DIR_ID, NTOP_ENV_PROBES,
		NTOP_ENV_KERNELS, NTOP_ENV_PROBE_EVERY, NTOP_ENV_PROBE_LIMIT, NTOP_ENV_CONTROL, NTOP_ENV_MAP_BUDGET,
		NTOP_ENV_SAMPLE, NTOP_ENV_PROBE_ASYNC, NTOP_ENV_REAL_LIBNVRTC, NTOP_ENV_REAL_LIBNVJITLINK,
		NTOP_ENV_REAL_LIBAMDHIP64, NTOP_ENV_AUDIT_MAP,
		"LD_LIBRARY_PATH", "LD_AUDIT", "TRITON_LIBCUDA_PATH"};
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

/* Where the application is sent to ntop's stand-ins: LD_LIBRARY_PATH (opens
 * by name) and, unless no_audit, the loader audit module's rules (opens by
 * any path, src/hook/audit/rtld_audit.c). */
struct session_redirect {
	struct strbuf ld;    /* LD_LIBRARY_PATH */
	struct strbuf rules; /* NTOP_AUDIT_MAP: "PATTERN=STAND-IN" lines */
};

static void session_redirect_rule(struct session_redirect *r, const char *pattern, const char *hook_dir,
				  const char *sub, const char *file)
{
	strbuf_printf(&r->rules, "%s%s=%s%s%s/%s", r->rules.len ? "\n" : "", pattern, hook_dir, *sub ? "/" : "", sub,
		      file);
}

/* The driver stand-in's directory first, then each other stand-in's (the
 * JIT compilers', the HIP runtime's) whose real library ntop found (a
 * stand-in with nothing to forward to would break the app), with that
 * library's path for the stand-in; then what ntop inherited. The driver
 * stand-in takes every libcuda.so.* (one ABI whatever the file's version);
 * the others their own major only (libnvrtc.so.12 and libamdhip64.so.6 are
 * other libraries). */
static void session_redirects(struct session_env *env, struct session_redirect *r, const char *hook_dir)
{
	static const struct {
		const struct reallib_spec *spec;
		const char *dir;
	} jits[] = { { &reallib_nvrtc, "nvrtc" }, { &reallib_nvjitlink, "nvjitlink" }, { &reallib_amdhip64, "hip" } };
	strbuf_puts(&r->ld, hook_dir);
	session_redirect_rule(r, "libcuda.so.*", hook_dir, "", "libcuda.so.1");
	for (size_t i = 0; i < sizeof jits / sizeof jits[0]; i++) {
		const char *file = jits[i].spec->file;
		char real[4096], stand_in[4096], pattern[256];
		snprintf(stand_in, sizeof stand_in, "%s/%s/%s", hook_dir, jits[i].dir, file);
		if (access(stand_in, R_OK) != 0 || reallib_find(jits[i].spec, real, sizeof real) < 0)
			continue;
		strbuf_printf(&r->ld, ":%s/%s", hook_dir, jits[i].dir);
		session_env_set(env, jits[i].spec->env, real);
		session_redirect_rule(r, file, hook_dir, jits[i].dir, file);
		snprintf(pattern, sizeof pattern, "%s.*", file);
		session_redirect_rule(r, pattern, hook_dir, jits[i].dir, file);
	}
	const char *old = getenv("LD_LIBRARY_PATH");
	if (old && *old)
		strbuf_printf(&r->ld, ":%s", old);
}

/* Does this glibc report bindings to la_symbind without switching every
 * PLT call of the program to its profiling trampolines? 2.35 and later
 * (BZ #15533); before, binding ROCm 6/7's calls would slow every call the
 * program makes through its PLT, ROCm or not. */
static int session_glibc_binds(void)
{
	unsigned major = 0, minor = 0;
	return sscanf(gnu_get_libc_version(), "%u.%u", &major, &minor) == 2 && (major > 2 || (major == 2 && minor >= 35));
}

/* LD_AUDIT: the user's list, then ntop's audit module (a path with ':' or
 * a newline cannot be listed and is left out, as is a missing module). The
 * audit module also binds ROCm 6/7 runtimes' hooked calls to the HIP hook
 * (src/hook/audit/rtld_bind.c) when the hook is built. */
static void session_env_audit(struct session_env *env, struct session_redirect *r, const char *hook_dir,
			      int no_audit)
{
	const char *user = getenv("LD_AUDIT");
	char module[4096], hip[4096];
	int n = snprintf(module, sizeof module, "%s/%s", hook_dir, SESSION_AUDIT_FILE);
	int m = snprintf(hip, sizeof hip, "%s/%s", hook_dir, SESSION_HIP_HOOK);
	int usable = !no_audit && n > 0 && (size_t)n < sizeof module && !strpbrk(hook_dir, ":\n") &&
		     access(module, R_OK) == 0;
	if (usable && user && *user) {
		char *v;
		session_env_push(env, asprintf(&v, "LD_AUDIT=%s:%s", user, module) < 0 ? NULL : v);
	} else if (usable) {
		session_env_set(env, "LD_AUDIT", module);
	} else if (user) {
		session_env_set(env, "LD_AUDIT", user);
	}
	if (usable && m > 0 && (size_t)m < sizeof hip && access(hip, R_OK) == 0 && session_glibc_binds())
		strbuf_printf(&r->rules, "%s%s>%s", r->rules.len ? "\n" : "", REALLIB_AMDHIP64_BOUND, hip);
	char *rules = usable ? strbuf_finish(&r->rules, NULL) : NULL;
	if (rules)
		session_env_set(env, NTOP_ENV_AUDIT_MAP, rules);
	else if (usable)
		env->failed = 1;
	free(rules);
}

static void session_env_redirect(struct session_env *env, const char *hook_dir, int no_audit)
{
	struct session_redirect r;
	strbuf_init(&r.ld);
	strbuf_init(&r.rules);
	session_redirects(env, &r, hook_dir);
	char *v = strbuf_finish(&r.ld, NULL);
	if (v)
		session_env_set(env, "LD_LIBRARY_PATH", v);
	else
		env->failed = 1;
	free(v);
	session_env_audit(env, &r, hook_dir, no_audit);
	strbuf_done(&r.rules);
}

/* ntop's environment without our variables, then ours. */
static char **session_env(const struct session *s, const struct session_spawn_opts *o)
{
	struct session_env env = { NULL, 0, 0 };
	for (char **e = environ; *e; e++)
		if (!session_env_ours(*e))
			session_env_push(&env, strdup(*e));
	session_env_redirect(&env, o->hook_dir, o->no_audit);
	session_env_set(&env, NTOP_ENV_EVENT_SOCK, s->sock_path);
	session_env_set(&env, NTOP_ENV_TRACE_DIR, s->dir);
	char id[64];
	snprintf(id, sizeof id, "%llu:%llu", s->dir_dev, s->dir_ino);
	session_env_set(&env, NTOP_ENV_TRACE_DIR_ID, id);
	session_env_set(&env, "TRITON_LIBCUDA_PATH", o->hook_dir);
	/* CuPy loads kernels it compiled before from ~/.cupy/kernel_cache as
	 * cubins: without PTX they cannot be probed. In memory its cache starts
	 * empty, so every kernel goes through NVRTC (and ntop's stand-in)
	 * again; the disk cache is left as it is. A value the user set wins. */
	if (!getenv("CUPY_CACHE_IN_MEMORY"))
		session_env_set(&env, "CUPY_CACHE_IN_MEMORY", "1");
	session_env_join(&env, NTOP_ENV_PROBES, o->probes, o->n_probes, ":");
	session_env_join(&env, NTOP_ENV_KERNELS, o->kernels, o->n_kernels, "\n");
	if (o->every)
		session_env_set(&env, NTOP_ENV_PROBE_EVERY, o->every);
	if (o->limit)
		session_env_set(&env, NTOP_ENV_PROBE_LIMIT, o->limit);
	/* an option replaces what ntop inherited; without one that passes on */
	const char *budget = o->map_budget ? o->map_budget : getenv(NTOP_ENV_MAP_BUDGET);
	const char *sample = o->sample ? o->sample : getenv(NTOP_ENV_SAMPLE);
	const char *async = o->wait_build ? "0" : getenv(NTOP_ENV_PROBE_ASYNC);
	if (async)
		session_env_set(&env, NTOP_ENV_PROBE_ASYNC, async);
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

/* ---- the event socket ---- */

/* <dir>/events.sock, or, when that path does not fit sun_path, the same
 * name in a 0700 directory of its own (mkdtemp) under $XDG_RUNTIME_DIR or
 * /tmp; then s->note says so. */
static int session_sock_place(struct session *s, char **cause)
{
	struct sockaddr_un sa;
	free(s->sock_path);
	free(s->note);
	s->note = NULL;
	s->sock_path = session_path(s, SESSION_SOCK_NAME);
	if (!s->sock_path)
		return cause_set(cause, "out of memory");
	if (strlen(s->sock_path) < sizeof sa.sun_path)
		return 0;
	free(s->sock_path);
	s->sock_path = NULL;
	const char *rt = getenv("XDG_RUNTIME_DIR");
	const char *bases[] = { rt && rt[0] == '/' ? rt : NULL, "/tmp" };
	for (size_t i = 0; i < sizeof bases / sizeof bases[0]; i++) {
		char *d = NULL;
		if (!bases[i] || asprintf(&d, "%s/ntop-XXXXXX", bases[i]) < 0)
			continue;
		if (strlen(d) + sizeof "/" SESSION_SOCK_NAME > sizeof sa.sun_path || !mkdtemp(d)) {
			free(d);
			continue;
		}
		if (asprintf(&s->sock_path, "%s/%s", d, SESSION_SOCK_NAME) < 0) {
			s->sock_path = NULL;
			rmdir(d);
			free(d);
			return cause_set(cause, "out of memory");
		}
		s->sock_dir = d;
		if (asprintf(&s->note, "the trace directory's path is too long for a socket; events come through %s",
			     s->sock_path) < 0)
			s->note = NULL;
		return 0;
	}
	return cause_set(cause, "no place for the event socket: %s is too long and no directory could be made "
				"under $XDG_RUNTIME_DIR or /tmp", s->dir);
}

/* The listening socket (0600, backlog SOMAXCONN) in a new epoll set. */
static int session_listen(struct session *s, char **cause)
{
	if (s->lfd >= 0)
		return 0;
	if (session_sock_place(s, cause) < 0)
		return -1;
	struct sockaddr_un sa;
	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	strcpy(sa.sun_path, s->sock_path);
	s->lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s->lfd < 0)
		return cause_set(cause, "socket: %s", strerror(errno));
	mode_t old = umask(0177); /* ntop is single-threaded here: the file is made 0600 */
	int rc = bind(s->lfd, (struct sockaddr *)&sa, sizeof sa);
	int err = errno;
	umask(old);
	if (rc < 0) {
		session_close(&s->lfd);
		return cause_set(cause, "cannot create the event socket %s: %s", s->sock_path, strerror(err));
	}
	s->sock_bound = 1;
	if (listen(s->lfd, SOMAXCONN) < 0)
		return cause_set(cause, "listen on %s: %s", s->sock_path, strerror(errno));
	s->ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = s->lfd };
	if (s->ep < 0 || epoll_ctl(s->ep, EPOLL_CTL_ADD, s->lfd, &ev) < 0)
		return cause_set(cause, "epoll: %s", strerror(errno));
	return 0;
}

/* Closes the connections, the listening socket and the epoll set; removes
 * the socket file (and its own directory) unless the copier of a detached
 * session uses them. */
static void session_sock_done(struct session *s)
{
	for (int i = 0; i < s->n_conns; i++)
		close(s->conns[i].fd);
	s->n_conns = 0;
	session_close(&s->lfd);
	session_close(&s->ep);
	if (s->sock_bound && !s->detached)
		unlink(s->sock_path);
	s->sock_bound = 0;
	if (s->sock_dir && !s->detached)
		rmdir(s->sock_dir);
	free(s->sock_dir);
	s->sock_dir = NULL;
}

/* The next connection waiting on lfd: its fd (non-blocking), -2 when it
 * was refused (another user's process) or went before it was accepted, -1
 * when none waits (or no descriptor is left: it waits for the next turn). */
static int session_accept_one(int lfd, pid_t *pid)
{
	int fd;
	while ((fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) < 0 && errno == EINTR)
		;
	if (fd < 0)
		return errno == ECONNABORTED || errno == EPROTO || errno == EPERM ? -2 : -1;
	struct ucred cr;
	socklen_t len = sizeof cr;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0 || (cr.uid != geteuid() && cr.uid != 0)) {
		close(fd);
		return -2;
	}
	*pid = cr.pid;
	return fd;
}

static void session_accept(struct session *s)
{
	pid_t pid = 0;
	for (int fd; (fd = session_accept_one(s->lfd, &pid)) != -1;) {
		if (fd < 0)
			continue;
		if (s->n_conns == s->cap_conns) {
			int cap = s->cap_conns ? s->cap_conns * 2 : 16;
			struct session_conn *v = realloc(s->conns, (size_t)cap * sizeof *v);
			if (!v) {
				close(fd); /* its hook falls back to events-<pid>.log */
				continue;
			}
			s->conns = v;
			s->cap_conns = cap;
		}
		struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };
		if (epoll_ctl(s->ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
			close(fd);
			continue;
		}
		s->conns[s->n_conns++] = (struct session_conn){ fd, pid, s->conn_serial++ };
	}
}

static struct session_conn *session_conn_find(struct session *s, int fd)
{
	for (int i = 0; i < s->n_conns; i++)
		if (s->conns[i].fd == fd)
			return &s->conns[i];
	return NULL;
}

static void session_conn_close(struct session *s, int fd)
{
	struct session_conn *c = session_conn_find(s, fd);
	if (c)
		*c = s->conns[--s->n_conns];
	epoll_ctl(s->ep, EPOLL_CTL_DEL, fd, NULL);
	close(fd);
	s->quiet_since = 0;
}

/* One message into buf (SESSION_MSG_MAX + 1 bytes, longer ones cut), ending
 * in '\n' (added when missing): its length, 0 at the end of the connection
 * (or on an error), -1 when nothing waits. */
static ssize_t session_recv_msg(int fd, char *buf)
{
	ssize_t n;
	while ((n = recv(fd, buf, SESSION_MSG_MAX, MSG_DONTWAIT)) < 0 && errno == EINTR)
		;
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? -1 : 0;
	if (n > 0 && buf[n - 1] != '\n')
		buf[n++] = '\n';
	return n;
}

static int session_take(struct session *s, const char *buf, size_t n, session_line_fn fn, void *arg);

/* Up to `max` messages of one connection to the log and fn; the
 * connection is closed at its end. Returns the lines; *bytes grows. */
static int session_conn_drain(struct session *s, int fd, int max, char *buf, session_line_fn fn, void *arg,
			      size_t *bytes)
{
	int lines = 0;
	for (int k = 0; k < max; k++) {
		ssize_t m = session_recv_msg(fd, buf);
		if (m < 0)
			break;
		if (m == 0) { /* its process ended (or closed it) */
			session_conn_close(s, fd);
			break;
		}
		lines += session_take(s, buf, (size_t)m, fn, arg);
		*bytes += (size_t)m;
	}
	return lines;
}

/* A connection is readable: first whatever is left on the same process's
 * older connections (closed by the application, so their lines came
 * first), then a burst of its own. */
static int session_conn_read(struct session *s, int fd, char *buf, session_line_fn fn, void *arg, size_t *bytes)
{
	struct session_conn *c = session_conn_find(s, fd);
	if (!c)
		return 0;
	pid_t pid = c->pid;
	uint64_t serial = c->serial;
	int lines = 0;
	for (int i = 0; i < s->n_conns; i++) {
		struct session_conn *o = &s->conns[i];
		if (o->pid != pid || o->serial >= serial)
			continue;
		int n_before = s->n_conns;
		lines += session_conn_drain(s, o->fd, INT32_MAX, buf, fn, arg, bytes);
		if (s->n_conns < n_before)
			i = -1; /* closed (the array moved): look again */
	}
	if (session_conn_find(s, fd))
		lines += session_conn_drain(s, fd, SESSION_CONN_BURST, buf, fn, arg, bytes);
	return lines;
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

static int session_spawn_run(struct session *s, const struct session_spawn_opts *o, int out_w, char **env)
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
	sigset_t def, none;
	sigemptyset(&def);
	sigaddset(&def, SIGINT);
	sigaddset(&def, SIGQUIT);
	sigaddset(&def, SIGPIPE);
	sigaddset(&def, SIGTERM);
	sigaddset(&def, SIGHUP);
	if (session_xfsz_default == 1)
		sigaddset(&def, SIGXFSZ);
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
	s->app_log_fd = safefs_create(s->dfd, "app.log", O_WRONLY | O_APPEND);
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
	int out[2] = { -1, -1 };
	if (session_listen(s, cause) < 0)
		goto fail;
	if (capture && session_pipe(out) < 0) {
		cause_set(cause, "pipe: %s", strerror(errno));
		goto fail;
	}
	if (capture && !s->app_log_path && session_open_app_log(s, cause) < 0)
		goto fail;
	char **env = session_env(s, o);
	if (!env) {
		cause_set(cause, "out of memory");
		goto fail;
	}
	int err = session_spawn_run(s, o, out[1], env);
	session_env_free(env);
	session_close(&out[1]);
	if (err) {
		s->pid = 0;
		cause_set(cause, "cannot run '%s': %s", o->argv[0], strerror(err));
		goto fail;
	}
	/* A descriptor per connected process: as many as ntop may have (only
	 * now, so the application starts with the limits it would have had). */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	s->out_rfd = out[0];
	if (s->out_rfd >= 0)
		fcntl(s->out_rfd, F_SETFL, fcntl(s->out_rfd, F_GETFL) | O_NONBLOCK);
	s->own_group = capture;
	session_fwd_target = s->own_group ? -s->pid : s->pid;
	if (session_pending_sig)
		kill((pid_t)session_fwd_target, session_pending_sig);
	return 0;
fail:
	session_close(&out[0]);
	session_close(&out[1]);
	session_sock_done(s);
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
	if (s->ep >= 0 && n < max)
		p[n++] = (struct pollfd){ s->ep, POLLIN, 0 };
	if (s->out_rfd >= 0 && n < max)
		p[n++] = (struct pollfd){ s->out_rfd, POLLIN, 0 };
	return n;
}

static void session_log(struct session *s, const char *p, size_t n)
{
	if (s->events_fd >= 0 && !s->events_err && fdio_write_all(s->events_fd, p, n) < 0)
		s->events_err = errno ? errno : EIO;
}

/* One message (a line, as a rule; it ends in '\n') to the log, and each
 * line in it to fn. */
static int session_take(struct session *s, const char *buf, size_t n, session_line_fn fn, void *arg)
{
	session_log(s, buf, n);
	int lines = 0;
	for (size_t a = 0; a < n; lines++) {
		const char *nl = memchr(buf + a, '\n', n - a);
		size_t end = nl ? (size_t)(nl - buf) + 1 : n;
		if (fn)
			fn(arg, buf + a, end - a);
		a = end;
	}
	return lines;
}

int session_read_events(struct session *s, session_line_fn fn, void *arg)
{
	if (s->ep < 0)
		return -1;
	char buf[SESSION_MSG_MAX + 1];
	size_t total = 0;
	int lines = 0;
	while (total < SESSION_READ_MAX) {
		struct epoll_event ev[32];
		int n = epoll_wait(s->ep, ev, 32, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (int i = 0; i < n; i++) {
			int fd = ev[i].data.fd;
			if (fd == s->lfd)
				session_accept(s);
			else /* a burst per connection, then the others' turn */
				lines += session_conn_read(s, fd, buf, fn, arg, &total);
		}
	}
	/* Over once the app has exited and no connection was open for a
	 * while (a child may still be starting). */
	if (!s->exited)
		session_poll_exit(s);
	if (!s->exited || s->n_conns > 0) {
		s->quiet_since = 0;
		return lines;
	}
	uint64_t now = time_mono_ns();
	if (!s->quiet_since)
		s->quiet_since = now;
	if (lines > 0 || now - s->quiet_since < SESSION_QUIET_NS)
		return lines;
	session_sock_done(s);
	return -1;
}

int session_events_error(const struct session *s)
{
	return s->events_err;
}

const char *session_note(const struct session *s)
{
	return s->note;
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

/* The detached copier (a grandchild of ntop, in its own session): accepts
 * and reads connections into events.log and copies the output into app.log
 * until the app has exited (its pidfd, else kill(pid, 0) every second), no
 * connection is left and the output pipe closed; then the processes that
 * wrote events-<pid>.log are merged and the socket removed. Its own epoll
 * set (ntop's is shared with the parent), the session's connection code
 * (malloc after fork: ntop is single-threaded, and glibc's malloc is
 * usable after fork anyway). */
static void session_copier(struct session *s, int pidfd)
{
	int ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		return;
	close(s->ep); /* shared with ntop: the copier's own set from here on */
	s->ep = ep;
	int fds[3] = { s->lfd, s->out_rfd, pidfd };
	for (int i = 0; i < 3 + s->n_conns; i++) {
		int fd = i < 3 ? fds[i] : s->conns[i - 3].fd;
		struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };
		if (fd >= 0)
			epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
	}
	int out = s->out_rfd, gone = s->exited;
	uint64_t quiet = 0;
	char buf[SESSION_MSG_MAX + 1];
	for (;;) {
		if (!gone && pidfd < 0)
			gone = kill(s->pid, 0) < 0 && errno == ESRCH;
		int idle = gone && s->n_conns == 0 && out < 0;
		if (!idle)
			quiet = 0;
		else if (!quiet)
			quiet = time_mono_ns();
		else if (time_mono_ns() - quiet >= SESSION_QUIET_NS)
			break;
		struct epoll_event ev[32];
		int n = epoll_wait(ep, ev, 32, idle ? 50 : pidfd < 0 && !gone ? 1000 : -1);
		if (n < 0 && errno != EINTR)
			break;
		for (int i = 0; i < n; i++) {
			int fd = ev[i].data.fd;
			size_t bytes = 0;
			if (fd == s->lfd) {
				session_accept(s);
			} else if (fd == pidfd) {
				gone = 1;
				epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
			} else if (fd == out) {
				ssize_t k = read(out, buf, sizeof buf);
				if (k > 0 && s->app_log_fd >= 0)
					fdio_write_all(s->app_log_fd, buf, (size_t)k);
				else if (k == 0 || (k < 0 && errno != EINTR && errno != EAGAIN)) {
					epoll_ctl(ep, EPOLL_CTL_DEL, out, NULL);
					close(out);
					out = -1;
				}
			} else {
				session_conn_read(s, fd, buf, NULL, NULL, &bytes);
			}
		}
	}
	session_poll_pid_logs(s, NULL, NULL, 1);
	session_log_end(s, 1);
	session_sock_done(s);
}

int session_detach(struct session *s, char **cause)
{
	if (s->ep < 0 && s->out_rfd < 0)
		return 0;
	int pidfd = -1;
#ifdef SYS_pidfd_open
	if (s->pid > 0 && !s->exited)
		pidfd = (int)syscall(SYS_pidfd_open, s->pid, 0);
#endif
	pid_t p = fork();
	if (p < 0) {
		if (pidfd >= 0)
			close(pidfd);
		return cause_set(cause, "fork: %s", strerror(errno));
	}
	if (p == 0) {
		/* Twice, so the copier is nobody's zombie; its own session, so a
		 * terminal hangup does not end it before the app. */
		if (fork() != 0)
			_exit(0);
		setsid();
		session_copier(s, pidfd);
		_exit(0);
	}
	while (waitpid(p, NULL, 0) < 0 && errno == EINTR)
		;
	if (pidfd >= 0)
		close(pidfd);
	s->detached = 1; /* the socket is the copier's now: closed here, not removed */
	session_sock_done(s);
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
	/* processes on the socket leave no such files, as a rule: look now
	 * and then, not at every read */
	uint64_t now = time_mono_ns();
	if (!final && s->pidlog_scan_ns && now - s->pidlog_scan_ns < SESSION_PIDLOG_EVERY_NS)
		return 0;
	s->pidlog_scan_ns = now;
	int dfd = dup(s->dfd);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return 0;
	}
	rewinddir(d); /* the descriptor's position is shared with s->dfd's */
	int lines = 0;
	for (struct dirent *e; (e = readdir(d)) != NULL;) {
		if (trace_pidlog_name(e->d_name))
			lines += session_pidlog_read(s, dirfd(d), e->d_name, fn, arg, final);
	}
	closedir(d);
	return lines;
}

/* The recorder's last line: it finished, and how the program ended (a
 * trace without one was cut short: ntop killed, or still running). The
 * copier of a detached session writes it without a status (the program
 * is not its child). */
static void session_log_end(struct session *s, int detached)
{
	struct strbuf sb;
	strbuf_init(&sb);
	event_begin(&sb, "end", time_wall_ns(), (int)getpid());
	if (s->exited) {
		event_add_int(&sb, "status", session_exit_code(s->status));
		if (WIFSIGNALED(s->status))
			event_add_int(&sb, "signal", WTERMSIG(s->status));
	}
	if (detached)
		event_add_int(&sb, "detached", 1);
	event_end(&sb);
	if (!sb.failed)
		session_log(s, sb.data, sb.len);
	strbuf_done(&sb);
}

int session_finish_events(struct session *s, char **cause)
{
	if (s->events_fd < 0)
		return 0;
	session_log_end(s, 0);
	int rc = 0;
	if (fsync(s->events_fd) < 0 && !s->events_err)
		rc = cause_set(cause, "fsync %s: %s", s->events_path, strerror(errno));
	session_close(&s->events_fd);
	return rc;
}

/* ---- live control ---- */

int session_write_control_text(struct session *s, const char *text, size_t len, char **cause)
{
	/* a temporary made O_EXCL, then renameat: a poller sees the old file or
	 * the new one, never half of one, and a link planted as `control` is
	 * replaced, not written through */
	if (safefs_replace(s->dfd, "control", text, len, cause) < 0)
		return cause_wrap(cause, "%s", s->dir);
	s->wrote_control = 1;
	return 0;
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
	session_sock_done(s);
	session_close(&s->out_rfd);
	session_close(&s->events_fd);
	session_close(&s->app_log_fd);
	session_close(&s->dfd);
	if (s->pid > 0 && session_fwd_target == (s->own_group ? -s->pid : s->pid))
		session_fwd_target = 0;
	free(s->conns);
	free(s->sock_path);
	free(s->note);
	free(s->pidlogs);
	free(s->events_path);
	free(s->app_log_path);
	free(s->dir);
	free(s);
}
