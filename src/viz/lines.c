/* Memory by source line (lines.h). One streaming pass: each record goes to
 * its site's line; in a slot-major thread map the lanes of a warp that
 * saved their k-th record come one after the other, so the records of
 * one (warp, slot) are gathered and, per site among them, counted as one
 * request and the distinct 32-byte sectors it touched. */
#include "viz/lines.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"

#define SECTOR 32u
#define WIDE 128u /* a lane's access wider than this (a bulk copy): its sectors counted, not merged */

struct lane {
	int line, site;
	uint64_t addr;
	uint32_t size;
};

struct ln_ctx {
	const struct result_map *m;
	uint32_t off_addr, off_access;
	int *site_line;       /* per site: its line, -1 none */
	int n_sites;
	struct lines *L;
	uint64_t tpb, wpb;    /* threads, warps per block */
	uint64_t g_warp;      /* the (warp, slot) being gathered */
	uint32_t g_slot;
	struct lane lanes[32];
	int n_lanes;
	int failed;
};

int lines_find_map(const struct result *r)
{
	for (int i = 0; i < r->n_maps; i++) {
		int have = 0;
		for (int f = 0; f < r->maps[i].map.n_fields; f++) {
			const struct probe_field *x = &r->maps[i].map.fields[f];
			have |= (!strcmp(x->name, "addr") && x->type == PROBE_U64) ? 1 : 0;
			have |= (!strcmp(x->name, "access") && x->type == PROBE_U32) ? 2 : 0;
		}
		if (have == 3)
			return i;
	}
	return -1;
}

/* ---- lines ------------------------------------------------------------------ */

static void site_where(const struct engine_sites *t, int i, char *buf, size_t n)
{
	const struct engine_site *s = &t->s[i];
	if (s->line <= 0 || s->file < 0) {
		snprintf(buf, n, "ptx:%d", s->ptx_line);
		return;
	}
	const char *f = t->files[s->file], *b = strrchr(f, '/');
	snprintf(buf, n, "%s:%d", b ? b + 1 : f, s->line);
}

/* Is site i a store (of dmat's kinds: st, atom/red, bulk stores)? A line's
 * loads and stores are counted apart: a request is one instruction's. */
static int site_stores(const struct engine_sites *t, int i)
{
	const char *op = t->s[i].opcode;
	return !strncmp(op, "st.", 3) || !strncmp(op, "atom", 4) || !strncmp(op, "red", 3) ||
	       !strncmp(op, "cp.reduce", 9) || !strncmp(op, "cp.async.bulk.global", 20);
}

/* One line per distinct source line (or PTX line) and direction (its
 * loads, its stores) of the table's sites. */
static int ln_lines(struct ln_ctx *c, const struct engine_sites *t)
{
	c->n_sites = t->n;
	c->site_line = malloc((size_t)(t->n ? t->n : 1) * sizeof *c->site_line);
	c->L->v = calloc((size_t)(t->n ? t->n : 1), sizeof *c->L->v);
	if (!c->site_line || !c->L->v)
		return -1;
	for (int i = 0; i < t->n; i++) {
		char where[192];
		site_where(t, i, where, sizeof where);
		int k = 0, st = site_stores(t, i);
		while (k < c->L->n && (strcmp(c->L->v[k].where, where) || c->L->v[k].stores != st))
			k++;
		if (k == c->L->n) {
			snprintf(c->L->v[k].where, sizeof c->L->v[k].where, "%s", where);
			c->L->v[k].site = i;
			c->L->v[k].stores = st;
			c->L->n++;
		}
		c->L->v[k].n_sites++;
		c->site_line[i] = k;
	}
	return 0;
}

void lines_site_mask(const struct result *r, const struct ln_line *l, uint8_t *mask, size_t bits)
{
	memset(mask, 0, (bits + 7) / 8);
	for (int i = 0; i < r->sites.n && (size_t)i < bits; i++) {
		char where[192];
		site_where(&r->sites, i, where, sizeof where);
		if (!strcmp(where, l->where) && site_stores(&r->sites, i) == l->stores)
			mask[i / 8] |= (uint8_t)(1u << (i % 8));
	}
}

/* Adds a page to line l's set (open addressing, grown at half full). */
static int page_add(struct ln_line *l, uint64_t page)
{
	if (l->set_n >= LINES_PAGES_MAX)
		return 0;
	if (l->set_n * 2 >= l->set_cap) {
		uint32_t cap = l->set_cap ? l->set_cap * 2 : 64;
		uint64_t *s = calloc(cap, sizeof *s);
		if (!s)
			return -1;
		for (uint32_t i = 0; i < l->set_cap; i++)
			for (uint32_t h = (uint32_t)(l->set[i] * 0x9E3779B97F4A7C15ull >> 40) & (cap - 1); l->set[i];
			     h = (h + 1) & (cap - 1))
				if (!s[h]) {
					s[h] = l->set[i];
					break;
				}
		free(l->set);
		l->set = s;
		l->set_cap = cap;
	}
	uint64_t key = page + 1; /* 0 marks an empty slot */
	for (uint32_t h = (uint32_t)(key * 0x9E3779B97F4A7C15ull >> 40) & (l->set_cap - 1);; h = (h + 1) & (l->set_cap - 1)) {
		if (l->set[h] == key)
			return 0;
		if (!l->set[h]) {
			l->set[h] = key;
			l->set_n++;
			return 0;
		}
	}
}

/* ---- requests and sectors ------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The lanes gathered for one (warp, slot): a request per site among them. */
static void flush_group(struct ln_ctx *c)
{
	for (int i = 0; i < c->n_lanes; i++) {
		if (c->lanes[i].site < 0)
			continue;
		int site = c->lanes[i].site, wide = 0, n = 0;
		uint64_t sec[64], wide_sectors = 0;
		for (int j = i; j < c->n_lanes; j++) {
			struct lane *x = &c->lanes[j];
			if (x->site != site)
				continue;
			uint64_t first = x->addr / SECTOR, last = (x->addr + (x->size ? x->size : 1) - 1) / SECTOR;
			if (x->size > WIDE || n + 2 > 64) {
				wide = 1;
				wide_sectors += last - first + 1;
			} else {
				for (uint64_t s = first; s <= last; s++)
					sec[n++] = s;
			}
			x->site = -1;
		}
		qsort(sec, (size_t)n, sizeof *sec, cmp_u64);
		uint64_t distinct = 0;
		for (int k = 0; k < n; k++)
			distinct += !k || sec[k] != sec[k - 1];
		struct ln_line *l = &c->L->v[c->site_line[site]];
		l->requests++;
		l->sectors += distinct + (wide ? wide_sectors : 0);
	}
	c->n_lanes = 0;
}

static void on_record(void *ctx, uint64_t unit, uint32_t slot, const uint8_t *rec)
{
	struct ln_ctx *c = ctx;
	const struct result_map *m = c->m;
	uint64_t cap_bytes = (uint64_t)m->map.cap * m->map.rec_size;
	uint64_t cnt = m->counts[unit] < cap_bytes ? m->counts[unit] : cap_bytes;
	if (c->failed || (uint64_t)slot >= cnt / m->map.rec_size)
		return;
	uint32_t acc = result_rec_u32(rec + c->off_access), site = acc >> 21;
	uint64_t addr = result_rec_u64(rec + c->off_addr), warp = unit / c->tpb * c->wpb + unit % c->tpb / 32;
	c->L->records++;
	if (site >= (uint32_t)c->n_sites) {
		c->L->unattributed++;
		return;
	}
	struct ln_line *l = &c->L->v[c->site_line[site]];
	uint32_t size = acc & 0x3ffff;
	l->accesses++;
	l->bytes += size;
	l->kinds |= 1u << ((acc >> 18) & 7);
	for (uint64_t p = addr / LINES_PAGE, e = (addr + (size ? size : 1) - 1) / LINES_PAGE, k = 0; p <= e && k < 64;
	     p++, k++)
		if (page_add(l, p) < 0)
			c->failed = 1;
	if (!c->L->coalescing)
		return;
	if (c->n_lanes && (warp != c->g_warp || slot != c->g_slot || c->n_lanes == 32))
		flush_group(c);
	c->g_warp = warp;
	c->g_slot = slot;
	c->lanes[c->n_lanes++] = (struct lane){ c->site_line[site], (int)site, addr, size };
}

static int cmp_line(const void *a, const void *b)
{
	const struct ln_line *x = a, *y = b;
	return x->accesses < y->accesses ? 1 : x->accesses > y->accesses ? -1 : x->site - y->site;
}

int lines_analyze(const struct result_stream *s, int map, struct lines **out, char **cause)
{
	const struct result *r = result_stream_result(s);
	*out = NULL;
	if (map < 0 || map >= r->n_maps || lines_find_map(r) < 0)
		return cause_set(cause, "no dmat map with sites (a field access:u32) in this result: recorded before "
				 "sites were, or not by -p dmat");
	struct lines *L = calloc(1, sizeof *L);
	struct ln_ctx c = { .m = &r->maps[map], .L = L };
	for (int f = 0; f < c.m->map.n_fields; f++) {
		if (!strcmp(c.m->map.fields[f].name, "addr"))
			c.off_addr = c.m->map.fields[f].offset;
		if (!strcmp(c.m->map.fields[f].name, "access"))
			c.off_access = c.m->map.fields[f].offset;
	}
	c.tpb = (uint64_t)r->block[0] * r->block[1] * r->block[2];
	c.tpb = c.tpb ? c.tpb : 1;
	c.wpb = (c.tpb + 31) / 32;
	int rc = !L || ln_lines(&c, &r->sites) < 0 ? cause_set(cause, "out of memory") : 0;
	if (L) {
		L->has_sites = r->sites.n > 0;
		L->coalescing = c.m->map.level == PROBE_LEVEL_THREAD && (c.m->slot_major || c.m->stored <= 1);
	}
	if (rc == 0 && result_stream_each(s, map, on_record, &c, cause) < 0)
		rc = -1;
	if (rc == 0 && c.failed)
		rc = cause_set(cause, "out of memory");
	if (rc == 0 && c.n_lanes)
		flush_group(&c);
	free(c.site_line);
	for (int i = 0; L && i < L->n; i++) {
		L->v[i].pages = L->v[i].set_n;
		free(L->v[i].set);
		L->v[i].set = NULL;
	}
	if (rc < 0) {
		lines_free(L);
		return -1;
	}
	qsort(L->v, (size_t)L->n, sizeof *L->v, cmp_line);
	*out = L;
	return 0;
}

void lines_free(struct lines *l)
{
	if (!l)
		return;
	for (int i = 0; i < l->n; i++)
		free(l->v[i].set);
	free(l->v);
	free(l);
}

const char *lines_kinds_text(uint32_t kinds, char *buf, size_t n)
{
	static const char *const names[] = { "?", "load", "store", "atomic", "async load", "async store" };
	buf[0] = 0;
	for (int k = 0; k < 6; k++)
		if (kinds & (1u << k)) {
			size_t l = strlen(buf);
			snprintf(buf + l, n - l, "%s%s", l ? "+" : "", names[k]);
		}
	return buf;
}
