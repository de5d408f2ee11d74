/* Exports in a child process (export_job.h). */
#include "tui/export_job.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cause.h"
#include "common/fdio.h"
#include "common/timeutil.h"

struct export_job {
	pid_t pid;
	int fd;                 /* read end of the child's pipe, -1 after EOF */
	char *path;
	uint64_t started;       /* mono ns */
	char stage[32];         /* the child's last stage */
	char said[512];         /* a partial line from the child */
	size_t n_said;
	char *error;            /* the child's error line */
	int ended, failed;
};

static int job_child_fd = -1; /* the child's end of the pipe (in the child) */

static void job_say(const char *kind, const char *text)
{
	char line[600];
	int n = snprintf(line, sizeof line, "%s %s", kind, text);
	if (n < 0 || job_child_fd < 0)
		return;
	if ((size_t)n >= sizeof line - 1)
		n = (int)sizeof line - 2;
	for (int i = 0; i < n; i++)
		if (line[i] == '\n')
			line[i] = ' ';
	line[n++] = '\n';
	fdio_write_all(job_child_fd, line, (size_t)n);
}

void export_job_stage(const char *stage)
{
	job_say("stage", stage);
}

/* The child: away from the terminal and the UI's signal handlers, run fn,
 * report, _exit. */
static void job_child(int wfd, export_job_fn fn, void *arg)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGWINCH};
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		signal(sigs[i], SIG_DFL);
	int nul = open("/dev/null", O_RDWR);
	for (int fd = 0; fd < 3 && nul >= 0; fd++)
		dup2(nul, fd);
	if (dup2(wfd, 3) == 3)
		wfd = 3;
	if (wfd == 3 && close_range(4, ~0u, 0) < 0) /* the app's pipes and sockets, the UI's files */
		for (int fd = 4; fd < 1024; fd++)
			close(fd);
	job_child_fd = wfd;
	char *cause = NULL;
	export_job_stage("drawing");
	int rc = fn(arg, &cause);
	if (rc < 0)
		job_say("error", cause ? cause : "failed");
	_exit(rc < 0 ? 1 : 0);
}

int export_job_start(struct export_job **out, const char *path, export_job_fn fn, void *arg, char **cause)
{
	*out = NULL;
	struct export_job *j = calloc(1, sizeof *j);
	int p[2];
	if (!j || !(j->path = strdup(path))) {
		free(j);
		return cause_set(cause, "out of memory");
	}
	if (pipe2(p, O_CLOEXEC) < 0) {
		cause_set(cause, "cannot start the export: %s", strerror(errno));
		goto fail;
	}
	j->pid = fork();
	if (j->pid < 0) {
		cause_set(cause, "cannot start the export: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		goto fail;
	}
	if (j->pid == 0) {
		close(p[0]);
		job_child(p[1], fn, arg);
	}
	close(p[1]);
	fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) | O_NONBLOCK);
	j->fd = p[0];
	j->started = time_mono_ns();
	*out = j;
	return 0;
fail:
	free(j->path);
	free(j);
	return -1;
}

int export_job_fd(const struct export_job *j)
{
	return j->fd;
}

const char *export_job_path(const struct export_job *j)
{
	return j->path;
}

static void job_line(struct export_job *j, char *line)
{
	if (!strncmp(line, "stage ", 6))
		snprintf(j->stage, sizeof j->stage, "%s", line + 6);
	else if (!strncmp(line, "error ", 6) && !j->error)
		j->error = strdup(line + 6);
}

/* Takes complete lines out of the bytes read; 1 at EOF. */
static int job_read(struct export_job *j)
{
	for (;;) {
		ssize_t n = read(j->fd, j->said + j->n_said, sizeof j->said - 1 - j->n_said);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return 0; /* EAGAIN: nothing more now */
		if (n == 0)
			return 1;
		j->n_said += (size_t)n;
		j->said[j->n_said] = 0;
		char *nl;
		while ((nl = strchr(j->said, '\n')) != NULL) {
			*nl = 0;
			job_line(j, j->said);
			j->n_said -= (size_t)(nl + 1 - j->said);
			memmove(j->said, nl + 1, j->n_said + 1);
		}
		if (j->n_said == sizeof j->said - 1)
			j->n_said = 0; /* no line is this long */
	}
}

static void job_reap(struct export_job *j)
{
	int st = 0;
	while (waitpid(j->pid, &st, 0) < 0 && errno == EINTR)
		;
	j->ended = 1;
	j->failed = !WIFEXITED(st) || WEXITSTATUS(st) != 0;
	if (!j->failed || j->error)
		return;
	char buf[160];
	if (WIFSIGNALED(st))
		snprintf(buf, sizeof buf, "the export process was killed by signal %d (%s)", WTERMSIG(st),
			 strsignal(WTERMSIG(st)));
	else
		snprintf(buf, sizeof buf, "the export process ended with status %d", WEXITSTATUS(st));
	j->error = strdup(buf);
}

int export_job_poll(struct export_job *j, int block, int *failed, char **cause)
{
	if (!j->ended) {
		if (block)
			fcntl(j->fd, F_SETFL, fcntl(j->fd, F_GETFL) & ~O_NONBLOCK);
		if (!job_read(j))
			return 0;
		close(j->fd);
		j->fd = -1;
		job_reap(j);
	}
	*failed = j->failed;
	*cause = j->failed && j->error ? strdup(j->error) : NULL;
	return 1;
}

/* Bytes in PATH.tmp* (the image being written), 0 when none. */
static unsigned long long job_bytes(const struct export_job *j)
{
	char *pat;
	glob_t g;
	unsigned long long sum = 0;
	if (asprintf(&pat, "%s.tmp*", j->path) < 0)
		return 0;
	if (glob(pat, GLOB_NOSORT, NULL, &g) == 0) {
		struct stat st;
		for (size_t i = 0; i < g.gl_pathc; i++)
			if (stat(g.gl_pathv[i], &st) == 0)
				sum += (unsigned long long)st.st_size;
		globfree(&g);
	}
	free(pat);
	return sum;
}

int export_job_progress_due(const struct export_job *j, uint64_t now_ns)
{
	return !j->ended && now_ns >= j->started + EXPORT_JOB_QUIET_NS;
}

void export_job_progress(const struct export_job *j, uint64_t now_ns, char *buf, size_t len)
{
	buf[0] = 0;
	if (!export_job_progress_due(j, now_ns))
		return;
	const char *name = strrchr(j->path, '/') ? strrchr(j->path, '/') + 1 : j->path;
	unsigned secs = (unsigned)((now_ns - j->started) / 1000000000ull);
	unsigned long long b = strcmp(j->stage, "writing") ? 0 : job_bytes(j);
	if (b >= 1024 * 1024)
		snprintf(buf, len, "writing %s: %.1f MiB, %u s", name, (double)b / (1024 * 1024), secs);
	else if (b)
		snprintf(buf, len, "writing %s: %llu KiB, %u s", name, (b + 1023) / 1024, secs);
	else
		snprintf(buf, len, "writing %s: %s, %u s", name, j->stage[0] ? j->stage : "starting", secs);
}

void export_job_free(struct export_job *j)
{
	if (!j)
		return;
	if (j->fd >= 0)
		close(j->fd);
	free(j->path);
	free(j->error);
	free(j);
}
