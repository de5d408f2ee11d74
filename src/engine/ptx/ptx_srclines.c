/* A kernel's source lines (ptx_srclines.h). */
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"
#include "engine/ptx/ptx.h"
#include "engine/ptx/ptx_lines.h"
#include "engine/ptx/ptx_srclines.h"

struct srcl_key {
	int file, line;
};

/* Index of (file, line) in s (sorted by .file order, then line), added when new. */
static int srcl_slot(struct ptx_srclines *s, struct srcl_key *keys, int *cap, const struct ptx_files *files,
		     struct srcl_key k)
{
	int lo = 0, hi = s->n;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		int c = keys[mid].file != k.file ? keys[mid].file - k.file : keys[mid].line - k.line;
		if (c == 0)
			return mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (s->n == *cap)
		return -2; /* the caller grows both arrays */
	const char *name = ptx_file_name(files, k.file);
	char *copy = strdup(name ? name : "?");
	if (!copy)
		return -1;
	memmove(&keys[lo + 1], &keys[lo], (size_t)(s->n - lo) * sizeof *keys);
	memmove(&s->v[lo + 1], &s->v[lo], (size_t)(s->n - lo) * sizeof *s->v);
	keys[lo] = k;
	memset(&s->v[lo], 0, sizeof s->v[lo]);
	s->v[lo].file = copy;
	s->v[lo].line = k.line;
	s->n++;
	return lo;
}

static int srcl_grow(struct ptx_srclines *s, struct srcl_key **keys, int *cap)
{
	int c = *cap ? *cap * 2 : 64;
	struct srcl_key *k = realloc(*keys, (size_t)c * sizeof *k);
	if (k)
		*keys = k;
	struct ptx_srcline *v = k ? realloc(s->v, (size_t)c * sizeof *v) : NULL;
	if (!v)
		return -1;
	s->v = v;
	*cap = c;
	return 0;
}

static unsigned srcl_classes(const char *op)
{
	unsigned m = 0;
	for (int c = PROBE_CLASS_TENSOR; c <= PROBE_CLASS_ASYNC; c++)
		if (ptx_class_has((enum probe_class)c, op))
			m |= 1u << c;
	return m;
}

/* in_loop[i]: statement i lies between a label and a later branch back to it. */
static char *srcl_loops(const struct ptx_func *f)
{
	char *in = calloc((size_t)f->n_body + 1, 1);
	for (int b = 0; in && b < f->n_body; b++) {
		int l = ptx_branch_target(f, b);
		if (l >= 0 && l < b)
			memset(in + l, 1, (size_t)(b - l + 1));
	}
	return in;
}

static int srcl_collect(const struct ptx_func *f, const struct ptx_files *files, struct ptx_srclines *out)
{
	struct ptx_loc *locs = ptx_func_locs(f);
	char *loops = srcl_loops(f);
	struct srcl_key *keys = NULL;
	int cap = 0, rc = locs && loops ? 0 : -1;
	for (int i = 0; rc == 0 && i < f->n_body; i++) {
		if (f->body[i].kind != PTX_INSN)
			continue;
		if (!locs[i].line) {
			out->insns_without++;
			continue;
		}
		struct srcl_key k = { locs[i].file, locs[i].line };
		int at = srcl_slot(out, keys, &cap, files, k);
		if (at == -2)
			at = srcl_grow(out, &keys, &cap) < 0 ? -1 : srcl_slot(out, keys, &cap, files, k);
		if (at < 0) {
			rc = -1;
			break;
		}
		struct ptx_srcline *s = &out->v[at];
		s->insns++;
		s->classes |= f->body[i].insn.opcode ? srcl_classes(f->body[i].insn.opcode) : 0;
		s->in_loop |= loops[i];
	}
	free(keys);
	free(loops);
	free(locs);
	return rc;
}

int ptx_srclines_read(const char *ptx, size_t len, const char *kernel, struct ptx_srclines *out, char **cause)
{
	memset(out, 0, sizeof *out);
	struct ptx_module *m = NULL;
	if (ptx_parse_kernel(ptx, len, kernel, &m, cause) < 0)
		return -1;
	struct ptx_func *f = ptx_find_func(m, kernel);
	struct ptx_files files;
	int rc = -1;
	if (!f || !f->is_entry)
		cause_set(cause, "the PTX does not define kernel %s", kernel);
	else if (ptx_files_read(m, &files, cause) == 0) {
		rc = srcl_collect(f, &files, out);
		if (rc < 0)
			cause_set(cause, "out of memory");
		ptx_files_done(&files);
	}
	ptx_free(m);
	if (rc < 0)
		ptx_srclines_done(out);
	return rc;
}

void ptx_srclines_done(struct ptx_srclines *s)
{
	for (int i = 0; i < s->n; i++)
		free(s->v[i].file);
	free(s->v);
	memset(s, 0, sizeof *s);
}
