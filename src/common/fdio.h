/* Whole writes to a file descriptor: write(2) may take fewer bytes than
 * asked (pipes, signals), so callers that want all of them loop. */
#ifndef NTOP_FDIO_H
#define NTOP_FDIO_H
#include <stddef.h>

/* 0 when all n bytes went out; -1 when write failed (errno says why) or
 * took nothing (errno 0), with an unknown part written. EINTR retries. */
int fdio_write_all(int fd, const void *buf, size_t n);

#endif
