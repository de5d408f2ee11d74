/* Source positions in PTX: `.file ID "NAME"[, mtime, size]` at module
 * scope and `.loc FILE LINE COL[, function_name LABEL, inlined_at FILE
 * LINE COL]` inside bodies (nvcc and NVRTC with -lineinfo or -G, Triton
 * always, Numba with line info). A .loc applies to the statements after it
 * up to the next .loc of the same body, as in the DWARF line table ptxas
 * makes of it. Only the one inlined_at level PTX writes is kept. */
#include "engine/ptx/ptx_lines.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"
#include "engine/ptx/ptx_int.h"

static const char *skip_ws(const char *s)
{
	while (ptx_is_space((unsigned char)*s))
		s++;
	return s;
}

/* A decimal integer in 0..INT32_MAX; NULL when there is none. */
static const char *read_int(const char *s, int *v)
{
	s = skip_ws(s);
	if (*s < '0' || *s > '9')
		return NULL;
	long long x = 0;
	while (*s >= '0' && *s <= '9') {
		x = x * 10 + (*s++ - '0');
		if (x > 0x7fffffff)
			return NULL;
	}
	*v = (int)x;
	return s;
}

/* "FILE LINE COL" */
static const char *read_triple(const char *s, int *file, int *line, int *col)
{
	if (!(s = read_int(s, file)) || !(s = read_int(s, line)))
		return NULL;
	const char *c = read_int(s, col);
	if (!c)
		*col = 0;
	return c ? c : s;
}

int ptx_loc_parse(const char *text, struct ptx_loc *loc)
{
	memset(loc, 0, sizeof *loc);
	const char *s = skip_ws(text);
	if (strncmp(s, ".loc", 4) || !ptx_is_space((unsigned char)s[4]))
		return -1;
	if (!(s = read_triple(s + 4, &loc->file, &loc->line, &loc->col)))
		return -1;
	const char *at = strstr(s, "inlined_at");
	if (at && !read_triple(at + 10, &loc->at_file, &loc->at_line, &loc->at_col))
		loc->at_file = loc->at_line = loc->at_col = 0;
	return 0;
}

/* `.file ID "NAME"...`: the name without quotes (malloc'd) and its id. */
static int file_parse(const char *text, int *id, char **name)
{
	const char *s = skip_ws(text);
	if (strncmp(s, ".file", 5) || !ptx_is_space((unsigned char)s[5]))
		return -1;
	if (!(s = read_int(s + 5, id)))
		return -1;
	s = skip_ws(s);
	if (*s != '"')
		return -1;
	const char *e = strchr(s + 1, '"');
	if (!e)
		return -1;
	*name = strndup(s + 1, (size_t)(e - s - 1));
	return *name ? 0 : -1;
}

int ptx_files_read(const struct ptx_module *m, struct ptx_files *out, char **cause)
{
	memset(out, 0, sizeof *out);
	for (int i = 0; i < m->n_items; i++) {
		const struct ptx_top *t = &m->items[i];
		int id;
		char *name = NULL;
		if (t->kind != PTX_TOP_DIRECTIVE || !t->text || file_parse(t->text, &id, &name) < 0)
			continue;
		struct ptx_file *f = realloc(out->f, (size_t)(out->n + 1) * sizeof *f);
		if (!f) {
			free(name);
			ptx_files_done(out);
			return cause_set(cause, "out of memory");
		}
		out->f = f;
		out->f[out->n].id = id;
		out->f[out->n].name = name;
		out->n++;
	}
	return 0;
}

const char *ptx_file_name(const struct ptx_files *files, int id)
{
	for (int i = 0; files && i < files->n; i++)
		if (files->f[i].id == id)
			return files->f[i].name;
	return NULL;
}

void ptx_files_done(struct ptx_files *files)
{
	for (int i = 0; i < files->n; i++)
		free(files->f[i].name);
	free(files->f);
	memset(files, 0, sizeof *files);
}

int ptx_stmt_is_loc(const struct ptx_stmt *s)
{
	if (s->kind != PTX_DIRECTIVE || !s->text)
		return 0;
	const char *t = skip_ws(s->text);
	return !strncmp(t, ".loc", 4) && ptx_is_space((unsigned char)t[4]);
}

struct ptx_loc *ptx_func_locs(const struct ptx_func *f)
{
	struct ptx_loc *locs = calloc((size_t)(f->n_body ? f->n_body : 1), sizeof *locs);
	if (!locs)
		return NULL;
	struct ptx_loc cur;
	memset(&cur, 0, sizeof cur);
	for (int i = 0; i < f->n_body; i++) {
		struct ptx_loc l;
		if (ptx_stmt_is_loc(&f->body[i]) && ptx_loc_parse(f->body[i].text, &l) == 0)
			cur = l;
		locs[i] = cur;
	}
	return locs;
}

/* Does `name` (a path as .file wrote it) end in `want` at a path boundary? */
static int path_matches(const char *name, const char *want)
{
	size_t n = strlen(name), w = strlen(want);
	if (!w || w > n || strcmp(name + n - w, want))
		return 0;
	return w == n || name[n - w - 1] == '/' || want[0] == '/';
}

int ptx_loc_in(const struct ptx_files *files, const struct ptx_loc *loc, const char *file, int first, int last)
{
	const char *a = loc->line ? ptx_file_name(files, loc->file) : NULL;
	if (a && loc->line >= first && loc->line <= last && path_matches(a, file))
		return 1;
	const char *b = loc->at_line ? ptx_file_name(files, loc->at_file) : NULL;
	return b && loc->at_line >= first && loc->at_line <= last && path_matches(b, file);
}

void ptx_loc_format(const struct ptx_files *files, const struct ptx_loc *loc, int ptx_line, char *out, size_t n)
{
	const char *a = loc->line ? ptx_file_name(files, loc->file) : NULL;
	if (!a) {
		snprintf(out, n, "ptx:%d", ptx_line);
		return;
	}
	const char *base = strrchr(a, '/');
	base = base ? base + 1 : a;
	int w = snprintf(out, n, "%s:%d", base, loc->line);
	const char *b = loc->at_line ? ptx_file_name(files, loc->at_file) : NULL;
	if (b && w > 0 && (size_t)w < n) {
		const char *bb = strrchr(b, '/');
		snprintf(out + w, n - (size_t)w, " (inlined at %s:%d)", bb ? bb + 1 : b, loc->at_line);
	}
}
