/* The trace directory as the hook uses it (NTOP_TRACE_DIR): opened once,
 * never through a link, used only while it is the caller's and closed to
 * others (safefs.h) and, when the launcher said which (NTOP_TRACE_DIR_ID),
 * while it is that one. Every file the hook makes below it (events-<pid>.log,
 * results/, kernels/) is opened relative to a descriptor from here. The
 * application may close the hook's descriptor: each use checks it still is
 * the directory and reopens it by path (the same identity) when not. */
#ifndef NTOP_HOOK_DIR_H
#define NTOP_HOOK_DIR_H
#include <stddef.h>

/* A descriptor of the trace directory for the caller to close; -1 with
 * *cause (why it is refused, or that NTOP_TRACE_DIR is not set). */
int hook_dir_open(char **cause);
/* A descriptor of its subdirectory `name`, made 0700 when missing. */
int hook_dir_sub(const char *name, char **cause);
/* Writes kernels/<pid>-<kid>/NAME (made 0700 when missing) atomically;
 * -1 with *cause. Never a kernel name in a path. */
int hook_dir_kernel_file(unsigned kid, const char *name, const char *text, size_t len, char **cause);
/* In a fork child: the lock is the child's own. */
void hook_dir_fork_child(void);

#endif
