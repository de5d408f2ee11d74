/* The site table (engine.h): one entry per instrumented instruction and
 * per region boundary, with its function, PTX line, opcode and source
 * position, so a record that saves SITE names the line it came from. Built
 * while the bodies are walked; the .file names are copied at the end. */
#include "engine/ptx/ptx_inject_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"

/* Starts the functions' entries for the body named `name`. */
int ptx_inject_sites_func(struct inj *in, const char *name)
{
	struct engine_sites *t = in->out_sites;
	char **f = realloc(t->funcs, (size_t)(t->n_funcs + 1) * sizeof *f);
	if (!f)
		return cause_set(in->cause, "out of memory");
	t->funcs = f;
	if (!(t->funcs[t->n_funcs] = strdup(name)))
		return cause_set(in->cause, "out of memory");
	in->fn.index = t->n_funcs++;
	return 0;
}

/* The index of PTX file id among the .file entries (the table's files are
 * those entries in order); -1 when unknown. */
static int file_index(const struct inj *in, int id)
{
	for (int i = 0; i < in->files.n; i++)
		if (in->files.f[i].id == id)
			return i;
	return -1;
}

int ptx_inject_site_add(struct inj *in, int i, enum engine_site_kind kind, int region)
{
	struct engine_sites *t = in->out_sites;
	struct engine_site *s = realloc(t->s, (size_t)(t->n + 1) * sizeof *s);
	if (!s)
		return cause_set(in->cause, "out of memory");
	t->s = s;
	s = &t->s[t->n];
	memset(s, 0, sizeof *s);
	const struct ptx_stmt *st = &in->fn.f->body[i];
	const struct ptx_loc *loc = &in->fn.locs[i];
	s->kind = kind;
	s->region = region;
	s->func = in->fn.index;
	s->ptx_line = st->line;
	if (st->kind == PTX_INSN && st->insn.opcode)
		snprintf(s->opcode, sizeof s->opcode, "%s", st->insn.opcode);
	s->file = s->at_file = -1;
	if (loc->line && (s->file = file_index(in, loc->file)) >= 0) {
		s->line = loc->line;
		s->col = loc->col;
	}
	if (loc->at_line && (s->at_file = file_index(in, loc->at_file)) >= 0)
		s->at_line = loc->at_line;
	return t->n++;
}

/* The .file names, and the regions (their names and specs) the region
 * records number. */
int ptx_inject_sites_finish(struct inj *in)
{
	struct engine_sites *t = in->out_sites;
	const struct probe *rp = in->rprobe ? in->rprobe->p : NULL;
	if (rp && rp->n_regions) {
		t->regions = malloc((size_t)rp->n_regions * sizeof *t->regions);
		if (!t->regions)
			return cause_set(in->cause, "out of memory");
		memcpy(t->regions, rp->regions, (size_t)rp->n_regions * sizeof *t->regions);
		t->n_regions = rp->n_regions;
	}
	if (!in->files.n)
		return 0;
	t->files = calloc((size_t)in->files.n, sizeof *t->files);
	if (!t->files)
		return cause_set(in->cause, "out of memory");
	for (int i = 0; i < in->files.n; i++)
		if (!(t->files[t->n_files++] = strdup(in->files.f[i].name)))
			return cause_set(in->cause, "out of memory");
	return 0;
}

void engine_sites_done(struct engine_sites *t)
{
	for (int i = 0; i < t->n_funcs; i++)
		free(t->funcs[i]);
	for (int i = 0; i < t->n_files; i++)
		free(t->files[i]);
	free(t->funcs);
	free(t->files);
	free(t->s);
	free(t->regions);
	memset(t, 0, sizeof *t);
}
