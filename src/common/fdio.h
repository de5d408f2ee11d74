/* Whole writes to a file descriptor: write(2) may take fewer bytes than
 * asked (pipes, signals), so callers that want all of them loop. And whole
 * reads of a file someone else (a driver, a linker) has just read. */
#ifndef NTOP_FDIO_H
#define NTOP_FDIO_H
#include <stddef.h>

/* 0 when all n bytes went out; -1 when write failed (errno says why) or
 * took nothing (errno 0), with an unknown part written. EINTR retries. */
int fdio_write_all(int fd, const void *buf, size_t n);

/* The whole file at path, malloc'd with a NUL after its *len bytes; NULL
 * when it cannot be opened or read, or holds `max` bytes or more. */
char *fdio_read_file(const char *path, size_t max, size_t *len);

#endif
