/* ntop record: run a program with the hook and keep what it reports.
 *
 * Order matters for the user: everything that can fail on our side (options,
 * hook present, probes verified, trace directory created) fails before the
 * application starts, so a typo never costs a long run. Then the program is
 * spawned (argv, no shell) with the hook first on LD_LIBRARY_PATH and the
 * write end of a pipe as NTOP_EVENT_FD; every line arriving on the pipe goes
 * to events.log and into a live trace model for the closing summary. Ctrl-C
 * and Ctrl-\ reach the application from the terminal; ntop ignores them and
 * keeps recording until the application is gone. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/timeutil.h"
#include "hook/hook_env.h"
#include "trace/events.h"
#include "trace/trace_dir.h"

extern char **environ;

#define REC_EVENT_FD 223          /* high, so the app's own fds never collide */
#define REC_DRAIN_NS 2000000000ull /* children may hold the pipe after the app exits */
#define REC_LINE_MAX (1u << 20)    /* a "line" this long without '\n' is flushed as is */

struct rec_opts {
	const char **probes;
	int n_probes;
	const char **kernels;
	int n_kernels;
	const char *out;
	const char *every, *limit;
	char **prog; /* NULL-terminated argv of the program */
};

struct rec_session {
	char *dir;          /* absolute trace directory */
	int created_dir;
	char **copies;      /* absolute paths of the probe copies */
	int n_copies;
	char *probes_dir;   /* dir/probes when created */
	char *log_path;
	int log_fd;
	struct trace_dir *model;
	struct strbuf line; /* bytes of a line not yet complete */
};

static volatile sig_atomic_t rec_child_pid;
static volatile sig_atomic_t rec_pending_sig;

static void record_help(void)
{
	printf("Usage: ntop record [-p PROBE]... [-k PATTERN]... [-o DIR] [--every N] [--limit N]\n"
	       "                   [--] PROGRAM [ARGS...]\n"
	       "\n"
	       "Runs PROGRAM with ntop's driver hook and records every GPU module, kernel and\n"
	       "launch it makes into a trace directory. With -p, matching kernels run an\n"
	       "instrumented copy and each probed launch leaves a result file.\n"
	       "\n"
	       "Options:\n"
	       "  -p, --probe PROBE     probe to apply: a built-in name (see 'ntop probes') or a\n"
	       "                        .toml file; repeatable. Verified before PROGRAM starts.\n"
	       "  -k, --kernel PATTERN  probe only kernels matching PATTERN: a substring of the\n"
	       "                        mangled or demangled name, or a glob with * ? [ ];\n"
	       "                        repeatable (default: every kernel with PTX)\n"
	       "  -o, --output DIR      trace directory (default ./ntop-trace/DATE-TIME_PID);\n"
	       "                        must not exist or be empty\n"
	       "      --every N         probe every Nth launch of a matching kernel (default 1)\n"
	       "      --limit N         at most N probed launches per kernel (default 100)\n"
	       "  -h, --help            this text\n"
	       "\n"
	       "Ctrl-C goes to PROGRAM; ntop keeps recording until it exits, then prints a\n"
	       "summary and exits with PROGRAM's status (128+N if signal N killed it; 127 if\n"
	       "it could not be started; 2 for ntop's own usage errors).\n"
	       "\n"
	       "Environment: NTOP_HOOK_DIR (directory holding the hook's libcuda.so.1),\n"
	       "NTOP_PROBES_DIR (built-in probes), and the hook's NTOP_TIME_LAUNCHES,\n"
	       "NTOP_MAP_BUDGET, NTOP_LOG, NTOP_KEEP_PTX (see doc/hook.md).\n"
	       "\n"
	       "Examples:\n"
	       "  ntop record ./app                       # list and time kernels only\n"
	       "  ntop record -p block_sched -k sgemm -- ./bench --size 4096\n"
	       "  ntop record -p ./mem.toml --every 10 --limit 5 -o trace1 python train.py\n"
	       "  ntop report trace1\n");
}

/* ---- options ---- */

static int rec_push(const char ***v, int *n, const char *s)
{
	const char **nv = realloc(*v, (size_t)(*n + 1) * sizeof *nv);
	if (!nv)
		return -1;
	nv[(*n)++] = s;
	*v = nv;
	return 0;
}

/* 0 ok, 1 help printed, 2 usage error. */
static int rec_parse(int argc, char **argv, struct rec_opts *o)
{
	int i = 1;
	for (; i < argc; i++) {
		const char *a = argv[i], *v;
		int r;
		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (a[0] != '-' || a[1] == 0)
			break;
		if (cli_is_help(a)) {
			record_help();
			return 1;
		}
		if ((r = cli_opt("record", argc, argv, &i, "-p", "--probe", &v)) != 0) {
			if (r < 0 || rec_push(&o->probes, &o->n_probes, v) < 0)
				return 2;
		} else if ((r = cli_opt("record", argc, argv, &i, "-k", "--kernel", &v)) != 0) {
			if (r < 0 || rec_push(&o->kernels, &o->n_kernels, v) < 0)
				return 2;
		} else if ((r = cli_opt("record", argc, argv, &i, "-o", "--output", &v)) != 0) {
			if (r < 0)
				return 2;
			o->out = v;
		} else if ((r = cli_opt("record", argc, argv, &i, NULL, "--every", &v)) != 0) {
			unsigned long n;
			if (r < 0)
				return 2;
			if (cli_parse_ulong(v, &n) < 0 || n == 0)
				return cli_usage("record", "--every needs a positive integer, not '%s'", v);
			o->every = v;
		} else if ((r = cli_opt("record", argc, argv, &i, NULL, "--limit", &v)) != 0) {
			unsigned long n;
			if (r < 0)
				return 2;
			if (cli_parse_ulong(v, &n) < 0)
				return cli_usage("record", "--limit needs a non-negative integer, not '%s'", v);
			o->limit = v;
		} else {
			return cli_usage("record", "unknown option '%s'", a);
		}
	}
	if (i >= argc)
		return cli_usage("record", "no program to run");
	o->prog = argv + i;
	for (int k = 0; k < o->n_kernels; k++)
		if (strchr(o->kernels[k], '\n') || !o->kernels[k][0])
			return cli_usage("record", "kernel pattern must be non-empty and on one line");
	return 0;
}

/* ---- trace directory ---- */

static int rec_mkdir_parents(char *path)
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

static int rec_dir_empty(const char *path)
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

static char *rec_default_dir(void)
{
	char stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
	char *d;
	return asprintf(&d, "ntop-trace/%s_%d", stamp, (int)getpid()) < 0 ? NULL : d;
}

static int rec_make_dir(struct rec_session *s, const char *want)
{
	char *def = want ? NULL : rec_default_dir();
	s->dir = cli_abspath(want ? want : def);
	free(def);
	if (!s->dir) {
		cli_err("cannot make an absolute path of the trace directory");
		return -1;
	}
	size_t n = strlen(s->dir);
	while (n > 1 && s->dir[n - 1] == '/')
		s->dir[--n] = 0;
	if (rec_mkdir_parents(s->dir) < 0) {
		cli_err("cannot create the parents of %s: %s", s->dir, strerror(errno));
		return -1;
	}
	if (mkdir(s->dir, 0700) == 0) {
		s->created_dir = 1;
		return 0;
	}
	int err = errno;
	struct stat st;
	if (err != EEXIST || stat(s->dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		cli_err("cannot create trace directory %s: %s", s->dir,
			err == EEXIST ? "exists and is not a directory" : strerror(err));
		return -1;
	}
	if (!rec_dir_empty(s->dir)) {
		cli_err("trace directory %s exists and is not empty; choose another with -o", s->dir);
		return -1;
	}
	return 0;
}

static int rec_write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int rec_copy_file(const char *from, const char *to)
{
	int in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -1;
	int out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (out < 0) {
		int e = errno;
		close(in);
		errno = e;
		return -1;
	}
	char buf[65536];
	ssize_t n;
	int rc = 0;
	while ((n = read(in, buf, sizeof buf)) > 0)
		if (rec_write_all(out, buf, (size_t)n) < 0) {
			rc = -1;
			break;
		}
	if (n < 0)
		rc = -1;
	close(in);
	if (close(out) < 0)
		rc = -1;
	return rc;
}

/* Resolves and verifies every probe (before anything is created): fills
 * paths[] and names[] (n_probes entries each). */
static int rec_verify_probes(const struct rec_opts *o, char **paths, char **names)
{
	for (int i = 0; i < o->n_probes; i++) {
		char *cause = NULL;
		struct probe *p = NULL;
		paths[i] = cli_probe_path(o->probes[i], &cause);
		if (!paths[i] || cli_probe_load_verified(paths[i], &p, &cause) < 0) {
			cli_err("probe %s: %s", o->probes[i], cause ? cause : "cannot load");
			free(cause);
			return -1;
		}
		names[i] = strdup(p->name);
		probe_free(p);
	}
	return 0;
}

/* Copies one probe into DIR/probes/, renaming on a clash of base names. */
static char *rec_copy_probe(const struct rec_session *s, const char *path)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	for (int k = 1; k < 100; k++) {
		char *dst;
		int r = k == 1 ? asprintf(&dst, "%s/%s", s->probes_dir, base)
			       : asprintf(&dst, "%s/%d-%s", s->probes_dir, k, base);
		if (r < 0)
			return NULL;
		if (rec_copy_file(path, dst) == 0)
			return dst;
		int e = errno;
		free(dst);
		if (e != EEXIST) {
			cli_err("cannot copy %s into %s: %s", path, s->probes_dir, strerror(e));
			return NULL;
		}
	}
	return NULL;
}

/* The hook reads the copies: the trace keeps exactly what was probed. */
static int rec_copy_probes(struct rec_session *s, const struct rec_opts *o, char **paths)
{
	if (!o->n_probes)
		return 0;
	if (asprintf(&s->probes_dir, "%s/probes", s->dir) < 0) {
		s->probes_dir = NULL;
		return -1;
	}
	if (mkdir(s->probes_dir, 0700) < 0) {
		cli_err("cannot create %s: %s", s->probes_dir, strerror(errno));
		free(s->probes_dir);
		s->probes_dir = NULL;
		return -1;
	}
	s->copies = calloc((size_t)o->n_probes, sizeof *s->copies);
	for (int i = 0; s->copies && i < o->n_probes; i++) {
		char *dst = rec_copy_probe(s, paths[i]);
		if (!dst)
			return -1;
		s->copies[s->n_copies++] = dst;
		if (strchr(dst, ':')) {
			cli_err("probe path %s contains ':', which NTOP_PROBES cannot carry", dst);
			return -1;
		}
	}
	return s->copies ? 0 : -1;
}

/* Removes what this session created (the program never ran). */
static void rec_cleanup(struct rec_session *s)
{
	for (int i = 0; i < s->n_copies; i++)
		unlink(s->copies[i]);
	if (s->probes_dir)
		rmdir(s->probes_dir);
	if (s->log_path)
		unlink(s->log_path);
	if (s->created_dir)
		rmdir(s->dir);
}

/* ---- environment ---- */

static int rec_env_drop(const char *e)
{
	static const char *const ours[] = {
		NTOP_ENV_EVENT_FD, NTOP_ENV_TRACE_DIR, NTOP_ENV_PROBES, NTOP_ENV_KERNELS,
		NTOP_ENV_PROBE_EVERY, NTOP_ENV_PROBE_LIMIT, "LD_LIBRARY_PATH", "TRITON_LIBCUDA_PATH"};
	for (size_t i = 0; i < sizeof ours / sizeof ours[0]; i++) {
		size_t n = strlen(ours[i]);
		if (strncmp(e, ours[i], n) == 0 && e[n] == '=')
			return 1;
	}
	return 0;
}

static void rec_env_add(char ***env, int *n, const char *key, const char *val)
{
	char *s;
	if (asprintf(&s, "%s=%s", key, val) < 0)
		return;
	char **ne = realloc(*env, (size_t)(*n + 2) * sizeof *ne);
	if (!ne) {
		free(s);
		return;
	}
	ne[(*n)++] = s;
	ne[*n] = NULL;
	*env = ne;
}

static char *rec_join(char *const *v, int n, const char *sep)
{
	struct strbuf sb;
	strbuf_init(&sb);
	strbuf_puts(&sb, "");
	for (int i = 0; i < n; i++) {
		if (i)
			strbuf_puts(&sb, sep);
		strbuf_puts(&sb, v[i]);
	}
	return strbuf_finish(&sb, NULL);
}

static char **rec_env(const struct rec_session *s, const struct rec_opts *o, const char *hook_dir, int fd)
{
	char **env = NULL;
	int n = 0;
	for (char **e = environ; *e; e++)
		if (!rec_env_drop(*e)) {
			char **ne = realloc(env, (size_t)(n + 2) * sizeof *ne);
			if (!ne)
				break;
			env = ne;
			env[n++] = strdup(*e);
			env[n] = NULL;
		}
	const char *old = getenv("LD_LIBRARY_PATH");
	char *ld;
	if (asprintf(&ld, "%s%s%s", hook_dir, old && *old ? ":" : "", old && *old ? old : "") >= 0) {
		rec_env_add(&env, &n, "LD_LIBRARY_PATH", ld);
		free(ld);
	}
	char fdnum[16];
	snprintf(fdnum, sizeof fdnum, "%d", fd);
	rec_env_add(&env, &n, NTOP_ENV_EVENT_FD, fdnum);
	rec_env_add(&env, &n, NTOP_ENV_TRACE_DIR, s->dir);
	rec_env_add(&env, &n, "TRITON_LIBCUDA_PATH", hook_dir);
	if (s->n_copies) {
		char *p = rec_join(s->copies, s->n_copies, ":");
		if (p)
			rec_env_add(&env, &n, NTOP_ENV_PROBES, p);
		free(p);
	}
	if (o->n_kernels) {
		char *k = rec_join((char *const *)o->kernels, o->n_kernels, "\n");
		if (k)
			rec_env_add(&env, &n, NTOP_ENV_KERNELS, k);
		free(k);
	}
	if (o->every)
		rec_env_add(&env, &n, NTOP_ENV_PROBE_EVERY, o->every);
	if (o->limit)
		rec_env_add(&env, &n, NTOP_ENV_PROBE_LIMIT, o->limit);
	return env;
}

static void rec_env_free(char **env)
{
	for (char **e = env; e && *e; e++)
		free(*e);
	free(env);
}

/* ---- events.log ---- */

static int rec_open_log(struct rec_session *s, const struct rec_opts *o, char **probe_names)
{
	if (asprintf(&s->log_path, "%s/events.log", s->dir) < 0)
		return -1;
	s->log_fd = open(s->log_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_APPEND, 0600);
	if (s->log_fd < 0) {
		cli_err("cannot create %s: %s", s->log_path, strerror(errno));
		free(s->log_path);
		s->log_path = NULL;
		return -1;
	}
	int argc = 0;
	while (o->prog[argc])
		argc++;
	struct strbuf sb;
	strbuf_init(&sb);
	event_begin(&sb, "record", time_wall_ns(), (int)getpid());
	char *argv = rec_join(o->prog, argc, " ");
	event_add(&sb, "argv", argv);
	free(argv);
	event_add(&sb, "version", NTOP_VERSION);
	char cwd[4096];
	event_add(&sb, "cwd", getcwd(cwd, sizeof cwd) ? cwd : "");
	char *pn = rec_join(probe_names, o->n_probes, ",");
	event_add(&sb, "probes", pn);
	free(pn);
	char *kn = rec_join((char *const *)o->kernels, o->n_kernels, "\n");
	event_add(&sb, "kernels", kn);
	free(kn);
	event_end(&sb);
	size_t len;
	char *line = strbuf_finish(&sb, &len);
	int rc = line && rec_write_all(s->log_fd, line, len) == 0 ? 0 : -1;
	if (line)
		trace_dir_feed(s->model, line, len);
	free(line);
	if (rc < 0)
		cli_err("cannot write %s: %s", s->log_path, strerror(errno));
	return rc;
}

/* Appends bytes from the pipe; complete lines go to the log and the model. */
static void rec_take(struct rec_session *s, const char *buf, size_t n, int *write_failed)
{
	strbuf_append(&s->line, buf, n);
	if (s->line.failed)
		return;
	char *last_nl = NULL;
	for (size_t i = s->line.len; i > 0; i--)
		if (s->line.data[i - 1] == '\n') {
			last_nl = s->line.data + i - 1;
			break;
		}
	size_t done = last_nl ? (size_t)(last_nl - s->line.data) + 1 : 0;
	if (!done && s->line.len > REC_LINE_MAX)
		done = s->line.len;
	if (!done)
		return;
	if (!*write_failed && rec_write_all(s->log_fd, s->line.data, done) < 0) {
		cli_err("writing %s failed: %s (still waiting for the program)", s->log_path, strerror(errno));
		*write_failed = 1;
	}
	for (size_t a = 0; a < done;) {
		char *nl = memchr(s->line.data + a, '\n', done - a);
		size_t end = nl ? (size_t)(nl - s->line.data) + 1 : done;
		trace_dir_feed(s->model, s->line.data + a, end - a);
		a = end;
	}
	memmove(s->line.data, s->line.data + done, s->line.len - done);
	s->line.len -= done;
}

/* ---- running ---- */

static void rec_on_signal(int sig)
{
	if (rec_child_pid > 0)
		kill((pid_t)rec_child_pid, sig);
	else
		rec_pending_sig = sig;
}

static void rec_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
	sigaction(SIGPIPE, &sa, NULL);
	sa.sa_handler = rec_on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

static int rec_spawn(char **prog, char **env, int wfd, pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&at);
	int target = wfd == REC_EVENT_FD ? REC_EVENT_FD + 1 : REC_EVENT_FD;
	posix_spawn_file_actions_adddup2(&fa, wfd, target);
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
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
	int err = posix_spawnp(pid, prog[0], &fa, &at, prog, env);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	return err;
}

/* Copies the pipe until EOF, or until REC_DRAIN_NS after the program exited. */
static int rec_pump(struct rec_session *s, int rfd, pid_t pid, int *status)
{
	int exited = 0, write_failed = 0;
	uint64_t deadline = 0;
	char buf[65536];
	for (;;) {
		int timeout = 200;
		if (exited) {
			uint64_t now = time_mono_ns();
			if (now >= deadline)
				break;
			if ((deadline - now) / 1000000 < 200)
				timeout = (int)((deadline - now) / 1000000) + 1;
		}
		struct pollfd pfd = {rfd, POLLIN, 0};
		int pr = poll(&pfd, 1, timeout);
		if (pr > 0) {
			ssize_t n = read(rfd, buf, sizeof buf);
			if (n > 0)
				rec_take(s, buf, (size_t)n, &write_failed);
			else if (n == 0 || (errno != EINTR && errno != EAGAIN))
				break; /* every writer closed the pipe */
		}
		if (!exited && waitpid(pid, status, WNOHANG) == pid) {
			exited = 1;
			deadline = time_mono_ns() + REC_DRAIN_NS;
		}
	}
	while (!exited) {
		pid_t r = waitpid(pid, status, 0);
		if (r == pid || (r < 0 && errno != EINTR))
			exited = 1;
	}
	if (s->line.len) /* a cut last line: kept, readers know to distrust it */
		rec_write_all(s->log_fd, s->line.data, s->line.len);
	return write_failed ? -1 : 0;
}

static void rec_summary(const struct rec_session *s)
{
	const struct trace_dir *td = s->model;
	uint64_t launches = 0;
	int with_ptx = 0, results = 0;
	for (int i = 0; i < td->n_kernels; i++) {
		launches += td->kernels[i].launches;
		with_ptx += td->kernels[i].has_ptx;
	}
	for (int i = 0; i < td->n_results; i++)
		results += td->results[i].file != NULL;
	fprintf(stderr, "ntop: %d kernel%s (%d with PTX), %llu launch%s, %d probed, %d result%s written, "
			"%d warning%s\n",
		td->n_kernels, td->n_kernels == 1 ? "" : "s", with_ptx, (unsigned long long)launches,
		launches == 1 ? "" : "es", td->n_results, results, results == 1 ? "" : "s",
		td->n_warnings, td->n_warnings == 1 ? "" : "s");
	if (td->lost_events)
		fprintf(stderr, "ntop: the hook dropped %llu events (buffer full)\n",
			(unsigned long long)td->lost_events);
	if (td->n_procs == 0)
		fprintf(stderr, "ntop: the hook was not loaded: the program made no CUDA driver calls "
				"through libcuda.so.1\n");
	fprintf(stderr, "ntop: trace in %s\nntop: next: ntop report %s\n", s->dir, s->dir);
}

static int rec_exit_status(const char *prog, int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);
		cli_err("%s was killed by signal %d (%s)", prog, sig, strsignal(sig));
		return 128 + sig;
	}
	return 1;
}

static int rec_check_hook(char **hook_dir)
{
	*hook_dir = cli_hook_dir();
	char *lib = NULL;
	if (*hook_dir && asprintf(&lib, "%s/libcuda.so.1", *hook_dir) < 0)
		lib = NULL;
	if (!lib || access(lib, R_OK) != 0) {
		cli_err("hook library not found: %s/libcuda.so.1 (build the ntop_hook target or reinstall "
			"ntop; NTOP_HOOK_DIR overrides the location)", *hook_dir ? *hook_dir : "?");
		free(lib);
		return -1;
	}
	free(lib);
	return 0;
}

static int rec_run(struct rec_session *s, const struct rec_opts *o, const char *hook_dir)
{
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		cli_err("pipe: %s", strerror(errno));
		return 1;
	}
	char **env = rec_env(s, o, hook_dir, pfd[1] == REC_EVENT_FD ? REC_EVENT_FD + 1 : REC_EVENT_FD);
	rec_signals();
	pid_t pid;
	int err = rec_spawn(o->prog, env, pfd[1], &pid);
	rec_env_free(env);
	close(pfd[1]);
	if (err) {
		close(pfd[0]);
		cli_err("cannot run '%s': %s", o->prog[0], strerror(err));
		rec_cleanup(s);
		return 127;
	}
	rec_child_pid = pid;
	if (rec_pending_sig)
		kill(pid, rec_pending_sig);
	int status = 0;
	int pump = rec_pump(s, pfd[0], pid, &status);
	close(pfd[0]);
	if (fsync(s->log_fd) < 0 && pump == 0)
		cli_err("fsync %s: %s", s->log_path, strerror(errno));
	rec_summary(s);
	return rec_exit_status(o->prog[0], status);
}

int cmd_record(int argc, char **argv)
{
	struct rec_opts o;
	memset(&o, 0, sizeof o);
	struct rec_session s;
	memset(&s, 0, sizeof s);
	s.log_fd = -1;
	strbuf_init(&s.line);
	char *hook_dir = NULL;
	char **names = NULL, **paths = NULL;
	int rc = rec_parse(argc, argv, &o);
	if (rc)
		goto out;
	rc = 2;
	names = calloc((size_t)o.n_probes + 1, sizeof *names);
	paths = calloc((size_t)o.n_probes + 1, sizeof *paths);
	if (!names || !paths || rec_check_hook(&hook_dir) < 0 || rec_verify_probes(&o, paths, names) < 0)
		goto out;
	if (rec_make_dir(&s, o.out) < 0)
		goto out;
	s.model = trace_dir_create(s.dir);
	if (!s.model || rec_copy_probes(&s, &o, paths) < 0 || rec_open_log(&s, &o, names) < 0) {
		rec_cleanup(&s);
		goto out;
	}
	rc = rec_run(&s, &o, hook_dir);
out:
	if (s.log_fd >= 0)
		close(s.log_fd);
	for (int i = 0; i < o.n_probes; i++) {
		free(names ? names[i] : NULL);
		free(paths ? paths[i] : NULL);
	}
	free(names);
	free(paths);
	for (int i = 0; i < s.n_copies; i++)
		free(s.copies[i]);
	free(s.copies);
	free(s.probes_dir);
	free(s.log_path);
	free(s.dir);
	trace_dir_free(s.model);
	strbuf_done(&s.line);
	free(hook_dir);
	free(o.probes);
	free(o.kernels);
	return rc;
}
