/* Offline assembly with ptxas. The PTX goes to a file in a private mkdtemp
 * directory; ptxas is spawned with an argv (no shell, so kernel names and
 * paths are never interpreted) and its stdout+stderr go to a log file in the
 * same directory (a file, not a pipe: no deadlock on a chatty ptxas). */
#include "engine/ptx/assemble.h"
#include "engine/ptx/ptxas_locate.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cause.h"
#include "common/fdio.h"

extern char **environ;

/* Copies the first word after ".target" (up to ',' or space). */
static int assemble_target_word(const char *ptx, char *out, size_t out_len)
{
	const char *p = ptx;
	while ((p = strstr(p, ".target")) != NULL) {
		/* must start a statement: beginning of text or after whitespace */
		if (p == ptx || p[-1] == '\n' || p[-1] == ' ' || p[-1] == '\t')
			break;
		p += 7;
	}
	if (!p)
		return -1;
	p += 7;
	while (*p == ' ' || *p == '\t')
		p++;
	size_t n = strcspn(p, ", \t\r\n;/");
	if (n == 0 || n >= out_len)
		return -1;
	memcpy(out, p, n);
	out[n] = 0;
	return 0;
}

int assemble_pick_arch(const char *ptx, int sm, char *arch, size_t arch_len)
{
	char target[32];
	int have = ptx && assemble_target_word(ptx, target, sizeof target) == 0;
	if (have) {
		size_t n = strlen(target);
		int specific = n > 3 && strncmp(target, "sm_", 3) == 0 &&
			       (target[n - 1] == 'a' || target[n - 1] == 'f');
		if (specific || sm <= 0) {
			if (n >= arch_len)
				return -1;
			memcpy(arch, target, n + 1);
			return 0;
		}
	}
	if (sm <= 0)
		return -1;
	int w = snprintf(arch, arch_len, "sm_%d", sm);
	return w < 0 || (size_t)w >= arch_len ? -1 : 0;
}

static int assemble_write_file(const char *path, const char *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	if (fdio_write_all(fd, data, len) < 0) {
		close(fd);
		return -1;
	}
	return close(fd);
}

/* Nothing held, no registers known; the caller's want_cubin stays. */
static void assemble_info_clear(struct assemble_info *info)
{
	info->registers = -1;
	info->log = info->cubin = NULL;
	info->cubin_len = 0;
}

/* Does the text declare an .extern .func (a call ptxas alone cannot resolve)? */
static int assemble_has_extern_func(const char *ptx, size_t len)
{
	static const char pat[] = ".extern";
	for (const char *p = ptx, *end = ptx + len; p < end;) {
		const char *hit = memmem(p, (size_t)(end - p), pat, sizeof pat - 1);
		if (!hit)
			return 0;
		const char *q = hit + sizeof pat - 1;
		while (q < end && (*q == ' ' || *q == '\t'))
			q++;
		if (end - q >= 5 && !memcmp(q, ".func", 5))
			return 1;
		p = q;
	}
	return 0;
}

/* Registers of the (first) entry function from ptxas -v output:
 * "ptxas info    : Used 12 registers, used 0 barriers, 360 bytes cmem[0]". */
static int assemble_parse_registers(const char *log)
{
	const char *from = strstr(log, "Compiling entry function");
	const char *p = strstr(from ? from : log, "Used ");
	if (!p && from)
		p = strstr(log, "Used ");
	if (!p)
		return -1;
	char *end = NULL;
	long n = strtol(p + 5, &end, 10);
	if (end == p + 5 || strncmp(end, " register", 9) != 0 || n < 0 || n > 65535)
		return -1;
	return (int)n;
}

/* Spawns ptxas and waits; returns its exit status, or -1 with a cause. */
static int assemble_spawn(char *const argv[], const char *log_path, char **cause)
{
	posix_spawn_file_actions_t fa;
	if (posix_spawn_file_actions_init(&fa) != 0)
		return cause_set(cause, "posix_spawn_file_actions_init failed");
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	pid_t pid;
	int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0)
		return cause_set(cause, "cannot run %s: %s", argv[0], strerror(rc));
	int status = 0;
	pid_t w;
	while ((w = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
		;
	if (w < 0) /* the app reaped our child (SIGCHLD ignored): judge by the output */
		return 0;
	if (WIFSIGNALED(status))
		return cause_set(cause, "%s killed by signal %d", argv[0], WTERMSIG(status));
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void assemble_cleanup_dir(const char *dir, const char *const *files, int n)
{
	char path[4200];
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, files[i]);
		unlink(path);
	}
	rmdir(dir);
}

/* Keeps the tail of the log in a cause: ptxas errors name line numbers. */
static void assemble_fail_cause(char **cause, int status, const char *log)
{
	size_t n = strlen(log);
	const char *tail = n > 1500 ? log + n - 1500 : log;
	cause_set(cause, "ptxas failed (status %d): %s", status, tail);
}

int assemble_ptxas(const char *ptx, size_t len, const char *arch, const char *out_path,
		   struct assemble_info *info, char **cause)
{
	char *ptxas = ptxas_locate();
	if (!ptxas) {
		if (info)
			assemble_info_clear(info);
		return cause_set(cause, "no ptxas found (" PTXAS_LOCATE_PLACES ")");
	}
	int rc = assemble_ptxas_with(ptxas, ptx, len, arch, out_path, info, cause);
	free(ptxas);
	return rc;
}

int assemble_ptxas_with(const char *ptxas, const char *ptx, size_t len, const char *arch, const char *out_path,
			struct assemble_info *info, char **cause)
{
	static const char *const files[] = { "in.ptx", "out.cubin", "log.txt" };
	if (info)
		assemble_info_clear(info);
	if (!ptx || !arch || !*arch)
		return cause_set(cause, "assemble: no PTX or no arch");
	const char *tmp = getenv("TMPDIR");
	char dir[4096];
	snprintf(dir, sizeof dir, "%s/ntop-ptxas-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		return cause_set(cause, "mkdtemp %s: %s", dir, strerror(errno));
	char in[4200], out[4200], logp[4200], arch_opt[64];
	snprintf(in, sizeof in, "%s/in.ptx", dir);
	snprintf(out, sizeof out, "%s/out.cubin", dir);
	snprintf(logp, sizeof logp, "%s/log.txt", dir);
	snprintf(arch_opt, sizeof arch_opt, "-arch=%s", arch);
	char *log = NULL;
	int ret = -1;
	if (assemble_write_file(in, ptx, len) < 0) {
		cause_set(cause, "cannot write %s: %s", in, strerror(errno));
		goto done;
	}
	/* calls to .extern functions resolve at link time: assemble relocatable
	 * code, as a cuLink user of this PTX would */
	int reloc = assemble_has_extern_func(ptx, len);
	char *argv[] = { (char *)ptxas, arch_opt, "-v", "-o", out_path ? (char *)out_path : out, in,
			 reloc ? "-c" : NULL, NULL };
	int status = assemble_spawn(argv, logp, cause);
	if (status < 0)
		goto done;
	size_t log_len = 0;
	log = fdio_read_file(logp, SIZE_MAX, &log_len);
	if (!log && !(log = strdup(""))) {
		cause_set(cause, "out of memory");
		goto done;
	}
	struct stat st;
	if (status == 0 && stat(out_path ? out_path : out, &st) != 0)
		status = -1; /* status unknown (reaped elsewhere) and no cubin */
	if (status != 0) {
		assemble_fail_cause(cause, status, log);
		goto done;
	}
	if (info && info->want_cubin && !out_path &&
	    (!(info->cubin = fdio_read_file(out, SIZE_MAX, &info->cubin_len)) || info->cubin_len == 0)) {
		cause_set(cause, "cannot read ptxas's cubin %s", out);
		goto done;
	}
	if (info) {
		info->registers = assemble_parse_registers(log);
		info->log = log;
		log = NULL;
	}
	ret = 0;
done:
	free(log);
	assemble_cleanup_dir(dir, files, 3);
	return ret;
}

void assemble_info_done(struct assemble_info *info)
{
	if (!info)
		return;
	free(info->log);
	free(info->cubin);
	assemble_info_clear(info);
}
