/* The session registry (sessions.h). */
#include "cli/sessions.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cause.h"
#include "common/safefs.h"
#include "common/timeutil.h"
#include "tui/settings.h"

#define SESSIONS_MAX 500 /* entries listed (the newest) */

static char *sessions_dir(char **cause)
{
	char *state = settings_state_dir(), *d = NULL;
	if (!state || asprintf(&d, "%s/sessions", state) < 0 || settings_mkdirs(d) < 0) {
		cause_set(cause, "no session registry (%s): %s", d ? d : "$XDG_STATE_HOME or $HOME unset",
			  d ? strerror(errno) : "");
		free(state);
		free(d);
		return NULL;
	}
	free(state);
	chmod(d, 0700);
	return d;
}

int sessions_register(const char *dir, const char *argv, char **cause)
{
	char *reg = sessions_dir(cause);
	if (!reg)
		return -1;
	int dfd = safefs_open_dir(reg, 0, cause);
	free(reg);
	if (dfd < 0)
		return -1;
	char name[64], *text = NULL;
	uint64_t now = time_wall_ns();
	snprintf(name, sizeof name, "%llu-%d", (unsigned long long)now, (int)getpid());
	int n = asprintf(&text, "dir=%s\npid=%d\nstart=%llu\nargv=%s\n", dir, (int)getpid(), (unsigned long long)now,
			 argv ? argv : "");
	int rc = n < 0 ? cause_set(cause, "out of memory") : safefs_replace(dfd, name, text, (size_t)n, cause);
	free(text);
	close(dfd);
	return rc;
}

/* Does events.log end with ntop's `end` line? (only its last 4 KiB read) */
static int sessions_ended(const char *dir)
{
	char path[4200], buf[4097];
	snprintf(path, sizeof path, "%s/events.log", dir);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return 1;
	off_t size = lseek(fd, 0, SEEK_END), from = size > 4096 ? size - 4096 : 0;
	ssize_t got = pread(fd, buf, (size_t)(size - from), from);
	close(fd);
	if (got < 0)
		return 1;
	buf[got] = 0;
	return strncmp(buf, "end ", 4) == 0 || strstr(buf, "\nend ") != NULL;
}

/* Is pid an ntop process? (a recycled pid is someone else's) */
static int sessions_is_ntop(pid_t pid)
{
	char path[64], comm[64] = "";
	snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return kill(pid, 0) == 0; /* no /proc: alive is all we know */
	if (!fgets(comm, sizeof comm, f))
		comm[0] = 0;
	fclose(f);
	comm[strcspn(comm, "\n")] = 0;
	return strcmp(comm, "ntop") == 0;
}

int sessions_dir_running(const char *dir, pid_t *recorder)
{
	char path[4200], line[512];
	snprintf(path, sizeof path, "%s/events.log", dir);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	long pid = 0;
	if (fgets(line, sizeof line, f) && !strncmp(line, "record ", 7)) {
		char *p = strstr(line, " pid=");
		pid = p ? strtol(p + 5, NULL, 10) : 0;
	}
	fclose(f);
	if (recorder)
		*recorder = (pid_t)pid;
	return pid > 0 && sessions_is_ntop((pid_t)pid) && !sessions_ended(dir);
}

static int sessions_read(const char *reg, const char *name, struct sess_entry *e)
{
	char path[4200], line[8192];
	snprintf(path, sizeof path, "%s/%s", reg, name);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	memset(e, 0, sizeof *e);
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = 0;
		if (!strncmp(line, "dir=", 4))
			e->dir = strdup(line + 4);
		else if (!strncmp(line, "pid=", 4))
			e->pid = (pid_t)strtol(line + 4, NULL, 10);
		else if (!strncmp(line, "start=", 6))
			e->start_ns = strtoull(line + 6, NULL, 10);
		else if (!strncmp(line, "argv=", 5))
			e->argv = strdup(line + 5);
	}
	fclose(f);
	struct stat st;
	if (!e->dir || stat(e->dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		unlink(path); /* its directory is gone */
		free(e->dir);
		free(e->argv);
		return -1;
	}
	pid_t rec = 0;
	e->running = sessions_dir_running(e->dir, &rec) && rec == e->pid;
	return 0;
}

static int sessions_cmp(const void *a, const void *b)
{
	const struct sess_entry *x = a, *y = b;
	return x->start_ns < y->start_ns ? 1 : x->start_ns > y->start_ns ? -1 : 0;
}

int sessions_list(struct sess_entry **out, int *n, char **cause)
{
	*out = NULL;
	*n = 0;
	char *reg = sessions_dir(cause);
	if (!reg)
		return -1;
	DIR *d = opendir(reg);
	if (!d) {
		cause_set(cause, "%s: %s", reg, strerror(errno));
		free(reg);
		return -1;
	}
	struct sess_entry *v = NULL;
	int cap = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		if (*n == cap) {
			struct sess_entry *nv = realloc(v, (size_t)(cap ? cap * 2 : 32) * sizeof *nv);
			if (!nv)
				break;
			v = nv;
			cap = cap ? cap * 2 : 32;
		}
		if (sessions_read(reg, de->d_name, &v[*n]) == 0)
			(*n)++;
	}
	closedir(d);
	free(reg);
	if (*n)
		qsort(v, (size_t)*n, sizeof *v, sessions_cmp);
	for (int i = SESSIONS_MAX; i < *n; i++) {
		free(v[i].dir);
		free(v[i].argv);
	}
	if (*n > SESSIONS_MAX)
		*n = SESSIONS_MAX;
	*out = v;
	return 0;
}

void sessions_free(struct sess_entry *v, int n)
{
	for (int i = 0; i < n; i++) {
		free(v[i].dir);
		free(v[i].argv);
	}
	free(v);
}
