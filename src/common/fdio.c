#include "common/fdio.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int fdio_write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w == 0)
			errno = 0;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

char *fdio_read_file(const char *path, size_t max, size_t *len)
{
	FILE *f = path ? fopen(path, "rbe") : NULL;
	if (!f)
		return NULL;
	char *buf = NULL;
	long size = -1;
	if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0 && (size_t)size < max &&
	    fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)size + 1)) != NULL &&
	    fread(buf, 1, (size_t)size, f) == (size_t)size) {
		buf[size] = 0;
		*len = (size_t)size;
	} else {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}
