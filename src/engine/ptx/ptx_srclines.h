/* The source lines of one kernel, from its PTX's `.file` and `.loc`: what
 * the UI's region picker lists (regions by line range, class and loop). */
#ifndef NTOP_PTX_SRCLINES_H
#define NTOP_PTX_SRCLINES_H
#include <stddef.h>

#include "engine/probe/probe.h"

struct ptx_srcline {
	char *file;       /* as .file wrote it (often an absolute path) */
	int line;
	int insns;        /* instructions of the kernel's body on it */
	unsigned classes; /* bit 1 << enum probe_class: the classes among them */
	int in_loop;      /* one of them lies in a loop (@loop:FILE:LINE finds it) */
};

struct ptx_srclines {
	struct ptx_srcline *v; /* by file (its .file number), then line */
	int n;
	int insns_without;     /* instructions with no line information */
};

/* The lines of `kernel`'s own body (code inlined into it counts on the
 * line it came from). n == 0 when the PTX has no line information. -1 with
 * *cause when the text does not parse or lacks the kernel. */
int ptx_srclines_read(const char *ptx, size_t len, const char *kernel, struct ptx_srclines *out, char **cause);
void ptx_srclines_done(struct ptx_srclines *s);
/* Is the opcode one of class c's (the regions probe's `@tensor` ...)? */
int ptx_class_has(enum probe_class c, const char *opcode);

#endif
