/* Debug log (hook_log.h): one write() per line, O_APPEND, so processes and
 * threads sharing the file do not interleave within a line. Written only
 * while the descriptor still is the file opened (an application that closed
 * it and opened a file of its own under the number gets no line; the log
 * is opened again). */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/timeutil.h"
#include "hook/hook_env.h"
#include "hook/hook_log.h"
#include "hook/hook_signals.h"
#include "hook/hook_state.h"

static char *log_path;
static dev_t log_dev;      /* what hook.cfg.log_fd was when opened */
static ino_t log_ino;

static int log_open(void)
{
	int fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	struct stat st;
	if (fd >= 0 && fstat(fd, &st) < 0) {
		close(fd);
		return -1;
	}
	if (fd >= 0) {
		log_dev = st.st_dev;
		log_ino = st.st_ino;
	}
	return fd;
}

void hook_log_open(void)
{
	const char *path = getenv(NTOP_ENV_LOG);
	if (path && *path && (log_path = strdup(path)) != NULL)
		hook.cfg.log_fd = log_open();
}

/* The log's descriptor if it still is the log; reopened (once, by the
 * thread that finds it gone) if not. */
static int log_fd(void)
{
	int fd = __atomic_load_n(&hook.cfg.log_fd, __ATOMIC_ACQUIRE);
	struct stat st;
	if (fd < 0 || (fstat(fd, &st) == 0 && st.st_dev == log_dev && st.st_ino == log_ino))
		return fd;
	static int reopening;
	if (__atomic_exchange_n(&reopening, 1, __ATOMIC_ACQ_REL))
		return -1; /* another thread is at it: this line is dropped */
	int nfd = log_open();
	__atomic_store_n(&hook.cfg.log_fd, nfd, __ATOMIC_RELEASE);
	__atomic_store_n(&reopening, 0, __ATOMIC_RELEASE);
	return nfd;
}

void hook_logf(const char *func, const char *fmt, ...)
{
	if (hook.cfg.log_fd < 0)
		return;
	int fd = log_fd();
	if (fd < 0)
		return;
	char line[1024];
	uint64_t t = time_mono_ns();
	int n = snprintf(line, sizeof line, "%llu.%06llu %d %s: ", (unsigned long long)(t / 1000000000u),
			 (unsigned long long)(t % 1000000000u / 1000u), hook.pid, func);
	if (n < 0 || (size_t)n >= sizeof line)
		return;
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (m < 0)
		return;
	size_t len = (size_t)n + ((size_t)m < sizeof line - (size_t)n - 1 ? (size_t)m : sizeof line - (size_t)n - 2);
	line[len++] = '\n';
	struct hook_io_signals sig; /* any thread, the application's too */
	hook_io_signals_begin(&sig);
	ssize_t w = write(fd, line, len);
	hook_io_signals_end(&sig);
	(void)w;
}
