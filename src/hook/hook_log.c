/* Debug log (hook_log.h): one write() per line, O_APPEND, so processes and
 * threads sharing the file do not interleave within a line. The file is
 * opened for each line and closed after it: an application that closes
 * every descriptor and opens files of its own under the numbers (a daemon)
 * could otherwise get a line between the hook's check that a number still
 * is the log and its write. Lines are rare (a debugging aid). */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/timeutil.h"
#include "hook/hook_env.h"
#include "hook/hook_log.h"
#include "hook/hook_signals.h"
#include "hook/hook_state.h"

static char *log_path;

static int log_open(void)
{
	return open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
}

void hook_log_open(void)
{
	const char *path = getenv(NTOP_ENV_LOG);
	if (!path || !*path || (log_path = strdup(path)) == NULL)
		return;
	int fd = log_open();
	if (fd >= 0)
		close(fd);
	hook.cfg.log_on = fd >= 0; /* each line opens the file again */
}

void hook_logf(const char *func, const char *fmt, ...)
{
	if (!hook.cfg.log_on)
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
	for (size_t i = (size_t)n; i < len; i++)
		if (line[i] == '\n')
			line[i] = ' '; /* a message quoting a tool's output stays one line */
	line[len++] = '\n';
	struct hook_io_signals sig; /* any thread, the application's too */
	hook_io_signals_begin(&sig);
	int fd = log_open();
	if (fd >= 0) {
		ssize_t w = write(fd, line, len);
		(void)w;
		close(fd);
	}
	hook_io_signals_end(&sig);
}
