/* The site table of a result file (version 6, header flag bit 0), right
 * after the kernel and probe names: the probed kernel's source files,
 * functions, regions and sites (engine.h), so a record that saved SITE
 * names its instruction and source line without the PTX at hand.
 *   u32 n_files,   n_files strings
 *   u32 n_funcs,   n_funcs strings
 *   u32 n_regions, n_regions x (string name, string spec)
 *   u32 n_sites,   n_sites x (u32 kind, region, func, ptx_line, file,
 *                  line, col, at_file, at_line; string opcode)
 * Indexes that name nothing are 0xffffffff; every index is checked
 * against its table when read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"
#include "common/strbuf.h"
#include "trace/result_parse.h"

#define SITES_MAX (1u << 20)
#define NAMES_MAX (1u << 16)
#define NONE 0xffffffffu

static uint32_t idx(int v)
{
	return v < 0 ? NONE : (uint32_t)v;
}

void result_put_sites(struct strbuf *sb, const struct engine_sites *t)
{
	result_put_u32(sb, (uint32_t)t->n_files);
	for (int i = 0; i < t->n_files; i++)
		result_put_str(sb, t->files[i]);
	result_put_u32(sb, (uint32_t)t->n_funcs);
	for (int i = 0; i < t->n_funcs; i++)
		result_put_str(sb, t->funcs[i]);
	result_put_u32(sb, (uint32_t)t->n_regions);
	for (int i = 0; i < t->n_regions; i++) {
		result_put_str(sb, t->regions[i].name);
		result_put_str(sb, t->regions[i].spec);
	}
	result_put_u32(sb, (uint32_t)t->n);
	for (int i = 0; i < t->n; i++) {
		const struct engine_site *s = &t->s[i];
		uint32_t v[9] = { (uint32_t)s->kind, idx(s->region), idx(s->func), (uint32_t)s->ptx_line, idx(s->file),
				  (uint32_t)s->line, (uint32_t)s->col, idx(s->at_file), (uint32_t)s->at_line };
		for (int k = 0; k < 9; k++)
			result_put_u32(sb, v[k]);
		result_put_str(sb, s->opcode);
	}
}

static int rd_count(struct result_rd *r, uint32_t *n, uint32_t max, const char *what)
{
	if (result_rd_u32(r, n, what) < 0)
		return -1;
	if (*n > max)
		return cause_set(r->cause, "byte %llu: %u %s is implausible", (unsigned long long)r->off - 4, *n, what);
	return 0;
}

static int rd_names(struct result_rd *r, char ***out, int *n_out, const char *what)
{
	uint32_t n = 0;
	if (rd_count(r, &n, NAMES_MAX, what) < 0)
		return -1;
	*out = calloc(n ? n : 1, sizeof **out);
	if (!*out)
		return cause_set(r->cause, "out of memory");
	for (uint32_t i = 0; i < n; i++) {
		if (result_rd_str(r, &(*out)[i], what) < 0)
			return -1;
		*n_out = (int)i + 1;
	}
	return 0;
}

/* A string into a fixed buffer, cut to fit. */
static int rd_fixed(struct result_rd *r, char *dst, size_t cap, const char *what)
{
	char *s = NULL;
	if (result_rd_str(r, &s, what) < 0)
		return -1;
	snprintf(dst, cap, "%s", s);
	free(s);
	return 0;
}

static int rd_regions(struct result_rd *r, struct engine_sites *t)
{
	uint32_t n = 0;
	if (rd_count(r, &n, PROBE_MAX_REGIONS, "regions") < 0)
		return -1;
	t->regions = calloc(n ? n : 1, sizeof *t->regions);
	if (!t->regions)
		return cause_set(r->cause, "out of memory");
	for (uint32_t i = 0; i < n; i++) {
		if (rd_fixed(r, t->regions[i].name, sizeof t->regions[i].name, "region name") < 0 ||
		    rd_fixed(r, t->regions[i].spec, sizeof t->regions[i].spec, "region spec") < 0)
			return -1;
		t->n_regions = (int)i + 1;
	}
	return 0;
}

/* An index into a table of n, or NONE where allowed; -1 as the int. */
static int rd_index(struct result_rd *r, uint32_t v, int n, int none_ok, const char *what, int *out)
{
	if (v == NONE && none_ok) {
		*out = -1;
		return 0;
	}
	if (v >= (uint32_t)n)
		return cause_set(r->cause, "site table: %s %u out of range (%d)", what, v, n);
	*out = (int)v;
	return 0;
}

static int rd_site(struct result_rd *r, const struct engine_sites *t, struct engine_site *s)
{
	uint32_t v[9];
	for (int k = 0; k < 9; k++)
		if (result_rd_u32(r, &v[k], "site") < 0)
			return -1;
	if (v[0] > ENGINE_SITE_END)
		return cause_set(r->cause, "site table: site kind %u unknown", v[0]);
	s->kind = (enum engine_site_kind)v[0];
	if (rd_index(r, v[1], t->n_regions, 1, "region", &s->region) < 0 ||
	    rd_index(r, v[2], t->n_funcs, 0, "function", &s->func) < 0 ||
	    rd_index(r, v[4], t->n_files, 1, "file", &s->file) < 0 ||
	    rd_index(r, v[7], t->n_files, 1, "file", &s->at_file) < 0)
		return -1;
	if ((s->kind == ENGINE_SITE_INSN) != (s->region < 0))
		return cause_set(r->cause, "site table: a %s site %s a region", s->kind ? "region" : "instruction",
				 s->kind ? "without" : "with");
	if (v[3] > 0x7fffffffu || v[5] > 0x7fffffffu || v[6] > 0x7fffffffu || v[8] > 0x7fffffffu)
		return cause_set(r->cause, "site table: a line number past 2^31");
	s->ptx_line = (int)v[3];
	s->line = s->file >= 0 ? (int)v[5] : 0;
	s->col = (int)v[6];
	s->at_line = s->at_file >= 0 ? (int)v[8] : 0;
	return rd_fixed(r, s->opcode, sizeof s->opcode, "opcode");
}

int result_rd_sites(struct result_rd *r, struct engine_sites *t)
{
	uint32_t n = 0;
	if (rd_names(r, &t->files, &t->n_files, "file names") < 0 ||
	    rd_names(r, &t->funcs, &t->n_funcs, "function names") < 0 || rd_regions(r, t) < 0 ||
	    rd_count(r, &n, SITES_MAX, "sites") < 0)
		return cause_wrap(r->cause, "site table");
	t->s = calloc(n ? n : 1, sizeof *t->s);
	if (!t->s)
		return cause_set(r->cause, "out of memory");
	for (uint32_t i = 0; i < n; i++) {
		if (rd_site(r, t, &t->s[i]) < 0)
			return -1;
		t->n = (int)i + 1;
	}
	return 0;
}
