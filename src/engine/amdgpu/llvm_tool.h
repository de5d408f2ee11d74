/* Running LLVM 19's command-line tools (llvm-objdump, llvm-mc, ld.lld) from
 * the AMDGPU path: found in $NTOP_LLVM_BIN, else Debian's
 * /usr/lib/llvm-19/bin, else as NAME-19 on PATH. Spawned with argv (no
 * shell), in a private mkdtemp directory the caller owns. */
#ifndef NTOP_LLVM_TOOL_H
#define NTOP_LLVM_TOOL_H
#include <stddef.h>

#define LLVM_TOOL_DIR_MAX 4096

/* Full path of tool `name` ("llvm-mc"), malloc'd; NULL when none exists. */
char *llvm_tool_find(const char *name);
/* A fresh private directory under $TMPDIR (or /tmp) into dir. */
int llvm_tool_tmpdir(char dir[LLVM_TOOL_DIR_MAX], char **cause);
/* Removes the directory and the files in it (one level). */
void llvm_tool_rmdir(const char *dir);
/* Runs argv[0] (found with llvm_tool_find) with stdout to out_path and
 * stderr to err_path; 0 when it exited 0, else -1 with a cause holding the
 * tail of its stderr. */
int llvm_tool_run(const char *name, char *const argv[], const char *out_path, const char *err_path, char **cause);
/* Whole file, NUL-terminated (malloc'd); NULL when unreadable. */
char *llvm_tool_slurp(const char *path, size_t *len);
int llvm_tool_write(const char *path, const void *data, size_t len, char **cause);

#endif
