/* regions analysis (regions.h). One pass over each warp's records builds
 * its segments; the per-region figures and the gaps come from them. */
#include "viz/regions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"

enum { TAG_BEGIN = 0, TAG_END = 1, TAG_ENTRY = 2, TAG_EXIT = 3 };
#define TAG_HI (1u << 29) /* an entry record holding the clock's high half */

struct rg_layout {
	uint32_t clock_off, tag_off;
};

static int rg_layout_of(const struct probe_map *m, struct rg_layout *l)
{
	int have = 0;
	memset(l, 0, sizeof *l);
	if (m->level != PROBE_LEVEL_WARP)
		return -1;
	for (int i = 0; i < m->n_fields; i++) {
		const struct probe_field *f = &m->fields[i];
		if (f->type == PROBE_U32 && !strcmp(f->name, "clock")) {
			l->clock_off = f->offset;
			have |= 1;
		} else if (f->type == PROBE_U32 && !strcmp(f->name, "tag")) {
			l->tag_off = f->offset;
			have |= 2;
		}
	}
	return have == 3 ? 0 : -1;
}

int regions_find_map(const struct result *r)
{
	struct rg_layout l;
	for (int i = 0; i < r->n_maps; i++)
		if (rg_layout_of(&r->maps[i].map, &l) == 0)
			return i;
	return -1;
}

const char *regions_name(const struct regions *g, uint32_t region, char *buf, size_t len)
{
	if (region < (uint32_t)g->n_regions && g->reg[region].name[0])
		return g->reg[region].name;
	snprintf(buf, len, "region %u", region);
	return buf;
}

/* ---- one warp ------------------------------------------------------------ */

struct rg_build {
	struct regions *g;
	uint64_t cap_segs;
	uint32_t depth[REGIONS_MAX];
	uint64_t open_at[REGIONS_MAX];
	int32_t open_site[REGIONS_MAX];
};

static int push_seg(struct rg_build *b, uint32_t region, uint64_t start, uint64_t end, int32_t s0, int32_t s1)
{
	struct regions *g = b->g;
	if (g->n_segs == b->cap_segs) {
		uint64_t cap = b->cap_segs ? b->cap_segs * 2 : 1024;
		struct rg_seg *s = realloc(g->segs, (size_t)cap * sizeof *s);
		if (!s)
			return -1;
		g->segs = s;
		b->cap_segs = cap;
	}
	g->segs[g->n_segs++] = (struct rg_seg){ start, end, region, s0, s1 };
	return 0;
}

/* A region boundary at time t. */
static int on_edge(struct rg_build *b, uint32_t tag, uint64_t t)
{
	uint32_t region = (tag >> 24) & 63, site = tag & 0xffffff;
	if (region >= REGIONS_MAX) {
		b->g->unmatched++;
		return 0;
	}
	if (tag >> 30 == TAG_BEGIN) {
		if (b->depth[region]++ == 0) {
			b->open_at[region] = t;
			b->open_site[region] = (int32_t)site;
		}
		return 0;
	}
	if (!b->depth[region]) {
		b->g->unmatched++;
		return 0;
	}
	if (--b->depth[region])
		return 0;
	return push_seg(b, region, b->open_at[region], t, b->open_site[region], (int32_t)site);
}

/* Regions still open at the warp's exit (or its last record) end there. */
static int close_open(struct rg_build *b, uint64_t t)
{
	for (uint32_t r = 0; r < REGIONS_MAX; r++)
		if (b->depth[r]) {
			b->depth[r] = 0;
			if (push_seg(b, r, b->open_at[r], t, b->open_site[r], -1) < 0)
				return -1;
		}
	return 0;
}

static int cmp_seg(const void *a, const void *b)
{
	const struct rg_seg *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start ? 1 : (int)x->region - (int)y->region;
}

/* Warp unit u: its n records; 0 when they start with no entry pair
 * (counted as unmatched, no warp made). */
static int rg_warp(struct rg_build *b, const struct result_map *m, const struct rg_layout *l, uint64_t u,
		   uint32_t n, int truncated)
{
	struct regions *g = b->g;
	const uint8_t *r0 = result_map_record(m, u, 0), *r1 = n > 1 ? result_map_record(m, u, 1) : NULL;
	if (!r0 || !r1 || result_rec_u32(r0 + l->tag_off) >> 30 != TAG_ENTRY || !(result_rec_u32(r1 + l->tag_off) & TAG_HI)) {
		g->unmatched += n;
		return 0;
	}
	struct rg_warp *w = &g->warps[g->n_warps++];
	memset(w, 0, sizeof *w);
	w->block = u / g->warps_per_block;
	w->warp = (uint32_t)(u % g->warps_per_block);
	w->smid = result_rec_u32(r0 + l->tag_off) & 0xffffff;
	w->entry = (uint64_t)result_rec_u32(r1 + l->clock_off) << 32 | result_rec_u32(r0 + l->clock_off);
	w->first_seg = g->n_segs;
	w->truncated = truncated;
	memset(b->depth, 0, sizeof b->depth);
	uint64_t t = w->entry;
	for (uint32_t k = 2; k < n; k++) {
		const uint8_t *rec = result_map_record(m, u, k);
		uint32_t tag = rec ? result_rec_u32(rec + l->tag_off) : 0;
		if (!rec)
			break;
		t += (uint32_t)(result_rec_u32(rec + l->clock_off) - (uint32_t)t);
		if (tag >> 30 == TAG_EXIT) {
			w->exit = t;
			break;
		}
		if (tag >> 30 == TAG_ENTRY || on_edge(b, tag, t) < 0) {
			if (tag >> 30 == TAG_ENTRY)
				g->unmatched++;
			else
				return -1;
		}
	}
	if (!w->exit)
		w->exit = t;
	if (close_open(b, w->exit) < 0)
		return -1;
	w->n_segs = (uint32_t)(g->n_segs - w->first_seg);
	qsort(g->segs + w->first_seg, w->n_segs, sizeof *g->segs, cmp_seg);
	g->warps_truncated += truncated;
	return 0;
}

/* ---- figures --------------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Cycles of warp w covered by any region (its segments are sorted by start). */
static uint64_t covered(const struct regions *g, const struct rg_warp *w)
{
	uint64_t sum = 0, end = w->entry;
	for (uint32_t i = 0; i < w->n_segs; i++) {
		const struct rg_seg *s = &g->segs[w->first_seg + i];
		uint64_t a = s->start > end ? s->start : end;
		if (s->end > a) {
			sum += s->end - a;
			end = s->end;
		}
	}
	return sum;
}

static int rg_figures(struct regions *g)
{
	uint64_t *per = calloc(g->n_warps ? g->n_warps : 1, sizeof *per);
	if (!per)
		return -1;
	for (int r = 0; r < g->n_regions; r++) {
		struct rg_region *reg = &g->reg[r];
		uint64_t n = 0, in_complete = 0;
		for (uint64_t i = 0; i < g->n_warps; i++) {
			const struct rg_warp *w = &g->warps[i];
			uint64_t t = 0, segs = 0;
			for (uint32_t k = 0; k < w->n_segs; k++)
				if (g->segs[w->first_seg + k].region == (uint32_t)r) {
					t += g->segs[w->first_seg + k].end - g->segs[w->first_seg + k].start;
					segs++;
				}
			reg->segments += segs;
			reg->total += t;
			in_complete += w->truncated ? 0 : t;
			if (segs)
				per[n++] = t;
		}
		reg->warps = n;
		reg->mean = n ? (double)reg->total / (double)n : 0;
		qsort(per, (size_t)n, sizeof *per, cmp_u64);
		reg->p95 = n ? per[(n * 95 + 99) / 100 - 1] : 0;
		reg->share = g->life ? (double)in_complete / (double)g->life : -1;
	}
	free(per);
	return 0;
}

static void rg_lives(struct regions *g)
{
	for (uint64_t i = 0; i < g->n_warps; i++) {
		const struct rg_warp *w = &g->warps[i];
		if (w->truncated || w->exit < w->entry)
			continue;
		g->life += w->exit - w->entry;
		g->gaps += w->exit - w->entry - covered(g, w);
	}
}

static void rg_names(struct regions *g, const struct result *r)
{
	uint32_t most = 0;
	for (uint64_t i = 0; i < g->n_segs; i++)
		if (g->segs[i].region + 1 > most)
			most = g->segs[i].region + 1;
	g->n_regions = r->sites.n_regions > (int)most ? r->sites.n_regions : (int)most;
	for (int i = 0; i < g->n_regions && i < r->sites.n_regions; i++) {
		snprintf(g->reg[i].name, sizeof g->reg[i].name, "%s", r->sites.regions[i].name);
		snprintf(g->reg[i].spec, sizeof g->reg[i].spec, "%s", r->sites.regions[i].spec);
	}
}

int regions_analyze(const struct result *r, int map_index, struct regions **out, char **cause)
{
	struct rg_layout l;
	*out = NULL;
	if (map_index < 0 || map_index >= r->n_maps || rg_layout_of(&r->maps[map_index].map, &l) < 0)
		return cause_set(cause, "no regions map (per warp, fields clock:u32 and tag:u32) in this result");
	const struct result_map *m = &r->maps[map_index];
	struct regions *g = calloc(1, sizeof *g);
	if (!g || !(g->warps = calloc(m->units ? (size_t)m->units : 1, sizeof *g->warps))) {
		free(g);
		return cause_set(cause, "out of memory");
	}
	g->warps_per_block = (uint32_t)result_units_per_block(r, &m->map);
	if (!g->warps_per_block)
		g->warps_per_block = 1;
	uint64_t cap_bytes = (uint64_t)m->map.cap * m->map.rec_size;
	struct rg_build b = { .g = g };
	for (uint64_t u = 0; u < m->units; u++) {
		uint64_t cnt = m->counts[u] < cap_bytes ? m->counts[u] : cap_bytes;
		uint32_t n = (uint32_t)(cnt / m->map.rec_size);
		if (!n || !result_map_unit_kept(m, u))
			continue;
		if (rg_warp(&b, m, &l, u, n, m->counts[u] > cap_bytes) < 0) {
			regions_free(g);
			return cause_set(cause, "out of memory");
		}
	}
	g->records_dropped = m->records_dropped;
	rg_names(g, r);
	rg_lives(g);
	if (rg_figures(g) < 0) {
		regions_free(g);
		return cause_set(cause, "out of memory");
	}
	*out = g;
	return 0;
}

uint64_t regions_lanes(const struct regions *g, long long by, uint64_t *idx, uint64_t max)
{
	uint32_t sm = 0;
	if (by == 0) { /* the SM that ran block 0 (the first warp recorded) */
		sm = g->n_warps ? g->warps[0].smid : 0;
		by = -(long long)sm - 1;
	}
	uint64_t n = 0;
	for (uint64_t i = 0; i < g->n_warps; i++) {
		const struct rg_warp *w = &g->warps[i];
		int in = by > 0 ? w->block == (uint64_t)(by - 1) : w->smid == (uint32_t)(-by - 1);
		if (in && n < max)
			idx[n] = i;
		n += in;
	}
	return n;
}

void regions_span(const struct regions *g, const uint64_t *idx, uint64_t n, uint64_t *t0, uint64_t *t1)
{
	*t0 = UINT64_MAX;
	*t1 = 0;
	for (uint64_t i = 0; i < n; i++) {
		const struct rg_warp *w = &g->warps[idx[i]];
		*t0 = w->entry < *t0 ? w->entry : *t0;
		*t1 = w->exit > *t1 ? w->exit : *t1;
	}
	if (*t0 > *t1)
		*t0 = *t1 = 0;
}

void regions_free(struct regions *g)
{
	if (!g)
		return;
	free(g->warps);
	free(g->segs);
	free(g);
}
