/* The trace directory's descriptor (hook_dir.h). */
#include "hook/hook_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cause.h"
#include "common/safefs.h"
#include "hook/hook_env.h"
#include "hook/hook_signals.h"
#include "hook/hook_state.h"

static struct {
	pthread_mutex_t lock;
	int fd;          /* cached, -1 none */
	int have_id;     /* dev/ino known: NTOP_TRACE_DIR_ID, else the first open */
	dev_t dev;
	ino_t ino;
} hd = { PTHREAD_MUTEX_INITIALIZER, -1, 0, 0, 0 };

static int dir_is(int fd)
{
	struct stat st;
	return fd >= 0 && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) && st.st_dev == hd.dev && st.st_ino == hd.ino;
}

/* Under hd.lock: the cached descriptor, reopened when the app took it. */
static int dir_cached(char **cause)
{
	if (hd.have_id && dir_is(hd.fd))
		return hd.fd;
	hd.fd = -1; /* closed or reused by the application: not ours to close */
	const char *path = hook.cfg.trace_dir;
	if (!path)
		return cause_set(cause, "NTOP_TRACE_DIR is not set");
	int fd = safefs_open_dir(path, 0, cause);
	if (fd < 0)
		return -1;
	struct stat st;
	unsigned long long dev, ino;
	const char *id = getenv(NTOP_ENV_TRACE_DIR_ID);
	if (!hd.have_id && id && sscanf(id, "%llu:%llu", &dev, &ino) == 2) {
		hd.dev = (dev_t)dev;
		hd.ino = (ino_t)ino;
		hd.have_id = 1;
	}
	if (!hd.have_id && fstat(fd, &st) == 0) {
		hd.dev = st.st_dev;
		hd.ino = st.st_ino;
		hd.have_id = 1;
	}
	if (!dir_is(fd)) {
		close(fd);
		return cause_set(cause, "%s is not the trace directory ntop made (moved or replaced)", path);
	}
	hd.fd = fd;
	return fd;
}

int hook_dir_open(char **cause)
{
	pthread_mutex_lock(&hd.lock);
	int fd = dir_cached(cause);
	int d = fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 3) : -1;
	if (fd >= 0 && d < 0)
		cause_set(cause, "%s: %s", hook.cfg.trace_dir, strerror(errno));
	pthread_mutex_unlock(&hd.lock);
	return d;
}

int hook_dir_sub(const char *name, char **cause)
{
	int dfd = hook_dir_open(cause);
	if (dfd < 0)
		return -1;
	int fd = safefs_subdir(dfd, name, cause);
	close(dfd);
	if (fd < 0)
		cause_wrap(cause, "%s", hook.cfg.trace_dir);
	return fd;
}

int hook_dir_kernel_file(unsigned kid, const char *name, const char *text, size_t len, char **cause)
{
	char sub[64];
	snprintf(sub, sizeof sub, "%d-%u", hook.pid, kid);
	int kfd = hook_dir_sub("kernels", cause);
	int dfd = kfd >= 0 ? safefs_subdir(kfd, sub, cause) : -1;
	struct hook_io_signals sig; /* maybe an application thread: no SIGXFSZ for the app */
	hook_io_signals_begin(&sig);
	int rc = dfd >= 0 ? safefs_replace(dfd, name, text, len, cause) : -1;
	hook_io_signals_end(&sig);
	if (dfd >= 0)
		close(dfd);
	if (kfd >= 0)
		close(kfd);
	return rc;
}

void hook_dir_fork_child(void)
{
	pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
	hd.lock = fresh;
}
