/* Regular files only, lines bounded (trace_file.h). */
#include "trace/trace_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cause.h"

static const char *file_kind(mode_t m)
{
	return S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device"
		: S_ISSOCK(m) ? "a socket" : S_ISDIR(m) ? "a directory" : "not a plain file";
}

int trace_file_open(int dfd, const char *name, char **cause)
{
	/* O_NONBLOCK: opening a FIFO for reading would wait for a writer */
	int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
	if (fd < 0)
		return cause_set(cause, "%s", errno == ELOOP ? "a symbolic link (not followed in a trace)" : strerror(errno));
	struct stat st;
	int bad = fstat(fd, &st) < 0 ? cause_set(cause, "%s", strerror(errno))
		  : !S_ISREG(st.st_mode) ? cause_set(cause, "not a regular file (%s)", file_kind(st.st_mode)) : 0;
	if (bad) {
		close(fd);
		return -1;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

int trace_lines_read(int fd, void (*fn)(void *arg, const char *line, size_t len), void *arg,
		     struct trace_lines *out)
{
	memset(out, 0, sizeof *out);
	size_t cap = 65536, len = 0;
	char *buf = malloc(cap);
	if (!buf)
		return -1;
	int skipping = 0, rc = 0; /* skipping: inside a line over the bound */
	for (;;) {
		if (len == cap) { /* a line fills the buffer: grow up to the bound */
			if (cap > TRACE_LINE_MAX) {
				skipping = 1;
				len = 0;
			} else {
				char *nb = realloc(buf, cap * 2);
				if (!nb) {
					rc = -1;
					break;
				}
				buf = nb;
				cap *= 2;
			}
		}
		ssize_t n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -1;
			break;
		}
		if (n == 0) {
			out->cut = len > 0 || skipping;
			break;
		}
		size_t end = len + (size_t)n, start = 0;
		for (size_t i = len; i < end; i++) {
			if (buf[i] != '\n')
				continue;
			if (skipping)
				out->too_long++;
			else if (i + 1 - start > TRACE_LINE_MAX)
				out->too_long++;
			else {
				fn(arg, buf + start, i + 1 - start);
				out->lines++;
			}
			skipping = 0;
			start = i + 1;
		}
		memmove(buf, buf + start, end - start);
		len = end - start;
	}
	free(buf);
	return rc;
}
