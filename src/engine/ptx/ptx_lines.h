/* Source positions of PTX statements, from `.file` and `.loc`
 * (ptx_lines.c). A position with line 0 means the PTX has no line
 * information there: callers then name the PTX line instead. */
#ifndef NTOP_PTX_LINES_H
#define NTOP_PTX_LINES_H
#include <stddef.h>

#include "engine/ptx/ptx.h"

struct ptx_loc {
	int file, line, col;          /* .loc FILE LINE COL; line 0: none */
	int at_file, at_line, at_col; /* inlined_at FILE LINE COL; at_line 0: not inlined */
};

struct ptx_file {
	int id;     /* the number .loc refers to */
	char *name; /* as written (often an absolute path) */
};

struct ptx_files {
	struct ptx_file *f;
	int n;
};

/* Parses one `.loc` directive; -1 when text is not one. */
int ptx_loc_parse(const char *text, struct ptx_loc *loc);
int ptx_stmt_is_loc(const struct ptx_stmt *s);
/* The module's .file table (empty without line information). */
int ptx_files_read(const struct ptx_module *m, struct ptx_files *out, char **cause);
const char *ptx_file_name(const struct ptx_files *files, int id);
void ptx_files_done(struct ptx_files *files);
/* The position in force at each statement of f (malloc'd, n_body long). */
struct ptx_loc *ptx_func_locs(const struct ptx_func *f);
/* Is loc, or the place it was inlined at, in lines first..last of a file
 * whose name ends in `file` at a path boundary ("attn.py" matches
 * "/src/attn.py", not "myattn.py")? */
int ptx_loc_in(const struct ptx_files *files, const struct ptx_loc *loc, const char *file, int first, int last);
/* "attn.py:48", "attn.py:48 (inlined at main.cu:12)", or "ptx:LINE"
 * without line information. */
void ptx_loc_format(const struct ptx_files *files, const struct ptx_loc *loc, int ptx_line, char *out, size_t n);

#endif
