/* LLVM tool discovery and spawning (see llvm_tool.h). */
#include "engine/amdgpu/llvm_tool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cause.h"
#include "common/fdio.h"

#define LLVM_TOOL_DEBIAN_DIR "/usr/lib/llvm-19/bin"

extern char **environ;

static char *llvm_tool_try(const char *dir, const char *name, const char *suffix)
{
	char *cand = NULL;
	if (asprintf(&cand, "%s/%s%s", dir, name, suffix) < 0)
		return NULL;
	if (access(cand, X_OK) == 0)
		return cand;
	free(cand);
	return NULL;
}

char *llvm_tool_find(const char *name)
{
	const char *env = getenv("NTOP_LLVM_BIN");
	char *hit = NULL;
	if (env && *env)
		return llvm_tool_try(env, name, "");
	if ((hit = llvm_tool_try(LLVM_TOOL_DEBIAN_DIR, name, "")))
		return hit;
	const char *path = getenv("PATH");
	char *copy = path ? strdup(path) : NULL, *save = NULL;
	for (char *d = copy ? strtok_r(copy, ":", &save) : NULL; d && !hit; d = strtok_r(NULL, ":", &save))
		hit = llvm_tool_try(*d ? d : ".", name, "-19");
	free(copy);
	return hit;
}

int llvm_tool_tmpdir(char dir[LLVM_TOOL_DIR_MAX], char **cause)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, LLVM_TOOL_DIR_MAX, "%s/ntop-amdgpu.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		return cause_set(cause, "mkdtemp %s: %s", dir, strerror(errno));
	return 0;
}

void llvm_tool_rmdir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char path[LLVM_TOOL_DIR_MAX + 256];
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

char *llvm_tool_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0, got;
	char *buf = malloc(cap);
	while (buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
		n += got;
		if (n + 1 == cap) {
			char *nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				buf = NULL;
			}
			buf = nb;
			cap *= 2;
		}
	}
	fclose(f);
	if (buf)
		buf[n] = 0;
	if (len)
		*len = n;
	return buf;
}

int llvm_tool_write(const char *path, const void *data, size_t len, char **cause)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || fdio_write_all(fd, data, len) < 0 || close(fd) < 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return cause_set(cause, "cannot write %s: %s", path, strerror(e));
	}
	return 0;
}

static int llvm_tool_fail(char **cause, const char *tool, int status, const char *err_path)
{
	size_t n = 0;
	char *log = llvm_tool_slurp(err_path, &n);
	const char *tail = log ? (n > 1500 ? log + n - 1500 : log) : "";
	cause_set(cause, "%s failed (status %d): %s", tool, status, tail);
	free(log);
	return -1;
}

int llvm_tool_run(const char *name, char *const argv[], const char *out_path, const char *err_path, char **cause)
{
	char *tool = llvm_tool_find(name);
	if (!tool)
		return cause_set(cause, "%s (LLVM 19) not found: install llvm-19/lld-19 (./setup.sh does) or set "
				 "NTOP_LLVM_BIN", name);
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	char *argv0 = argv[0];
	((char **)argv)[0] = tool;
	pid_t pid;
	int rc = posix_spawn(&pid, tool, &fa, NULL, argv, environ);
	((char **)argv)[0] = argv0;
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0) {
		cause_set(cause, "cannot run %s: %s", tool, strerror(rc));
		free(tool);
		return -1;
	}
	int status = 0;
	pid_t w;
	while ((w = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
		;
	free(tool);
	if (w < 0) /* the app reaped our child (SIGCHLD ignored): judge by the output */
		return 0;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	return llvm_tool_fail(cause, name, WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status), err_path);
}
