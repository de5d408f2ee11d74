/* Opening and reading files of a trace that may come from anywhere (a
 * trace copied from another machine, or prepared by someone else): only
 * regular files are read, opened without blocking and without following a
 * link as their last component, so a FIFO or a device named events.log or
 * <pid>-<seq>.ntr cannot hang a reader; lines are read with a bound on
 * their length, so a file without newlines cannot take all memory. */
#ifndef NTOP_TRACE_FILE_H
#define NTOP_TRACE_FILE_H
#include <stddef.h>
#include <stdint.h>

#define TRACE_LINE_MAX (1u << 20) /* bytes: event lines are at most 4 KiB, a record header a few */

/* Opens name relative to dfd (AT_FDCWD: a path) for reading if it is a
 * regular file; -1 with *cause ("not a regular file (a FIFO)", ...). */
int trace_file_open(int dfd, const char *name, char **cause);

struct trace_lines {
	uint64_t lines;      /* complete lines passed to fn */
	uint64_t too_long;   /* lines over TRACE_LINE_MAX, skipped */
	int cut;             /* the file ended inside a line (not passed on) */
};

/* Passes every complete line of fd (with its '\n') to fn; -1 on a read
 * error (errno set). */
int trace_lines_read(int fd, void (*fn)(void *arg, const char *line, size_t len), void *arg,
		     struct trace_lines *out);

#endif
