/* The regions model (src/viz/regions.c) on hand-made records whose answer
 * is known: segments per warp (nested begins from a call, an end without a
 * begin, a region open at the exit), the 32-bit clock unwrapped across its
 * wrap, per-region totals, means, p95 and shares, gaps, a warp truncated
 * at the cap, and a result with no regions map. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"
#include "viz/regions.h"

#define CAP 16

static struct result_map *mk_map(struct result *r, uint64_t warps)
{
	struct result_map *m = &r->maps[0];
	snprintf(m->map.name, sizeof m->map.name, "regions");
	m->map.level = PROBE_LEVEL_WARP;
	m->map.cap = CAP;
	m->map.rec_size = 8;
	m->map.n_fields = 2;
	snprintf(m->map.fields[0].name, sizeof m->map.fields[0].name, "clock");
	m->map.fields[0].type = PROBE_U32;
	snprintf(m->map.fields[1].name, sizeof m->map.fields[1].name, "tag");
	m->map.fields[1].type = PROBE_U32;
	m->map.fields[1].offset = 4;
	m->units = warps;
	m->stored = CAP;
	m->counts = calloc(warps, 4);
	m->records = calloc(warps * CAP, 8);
	return m;
}

/* Appends a record to warp u. */
static void rec(struct result_map *m, uint64_t u, uint32_t clock, uint32_t tag)
{
	uint32_t k = m->counts[u] / 8;
	if (k < CAP) {
		memcpy(m->records + (u * CAP + k) * 8, &clock, 4);
		memcpy(m->records + (u * CAP + k) * 8 + 4, &tag, 4);
	}
	m->counts[u] += 8;
}

static void entry(struct result_map *m, uint64_t u, uint64_t t, uint32_t sm)
{
	rec(m, u, (uint32_t)t, 0x80000000u | sm);
	rec(m, u, (uint32_t)(t >> 32), 0xA0000000u);
}

static uint32_t edge(int end, uint32_t region, uint32_t site)
{
	return (end ? 0x40000000u : 0) | region << 24 | site;
}

static void test_model(void)
{
	struct result r;
	memset(&r, 0, sizeof r);
	r.block[0] = 64; /* 2 warps a block, 2 blocks */
	r.block[1] = r.block[2] = 1;
	r.grid[0] = 2;
	r.grid[1] = r.grid[2] = 1;
	struct result_map maps[1];
	memset(maps, 0, sizeof maps);
	r.maps = maps;
	r.n_maps = 1;
	struct probe_region names[2] = { { .name = "load", .spec = "k.cu:20-21" }, { .name = "mma", .spec = "@tensor" } };
	r.sites.regions = names;
	r.sites.n_regions = 2;
	struct result_map *m = mk_map(&r, 4);
	/* warp 0: load 100-300 with a nested begin/end (a call) inside, mma
	 * 300-700, exit at 1000: life 1000, covered 600, gap 400 */
	entry(m, 0, 5000, 3);
	rec(m, 0, 5100, edge(0, 0, 1));
	rec(m, 0, 5150, edge(0, 0, 9));
	rec(m, 0, 5200, edge(1, 0, 9));
	rec(m, 0, 5300, edge(1, 0, 2));
	rec(m, 0, 5300, edge(0, 1, 3));
	rec(m, 0, 5700, edge(1, 1, 4));
	rec(m, 0, 6000, 0xC0000000u);
	/* warp 1: entry just below 2^32 (the clock wraps), load 50 cycles
	 * across the wrap, an end without a begin, mma open at the exit */
	uint64_t t0 = 0xFFFFFF00ull;
	entry(m, 1, t0, 4);
	rec(m, 1, (uint32_t)(t0 + 0xE0), edge(0, 0, 1));
	rec(m, 1, (uint32_t)(t0 + 0x112), edge(1, 0, 2));
	rec(m, 1, (uint32_t)(t0 + 0x120), edge(1, 1, 4));
	rec(m, 1, (uint32_t)(t0 + 0x130), edge(0, 1, 3));
	rec(m, 1, (uint32_t)(t0 + 0x200), 0xC0000000u);
	/* warp 2 (block 1): more records than the cap, its mma segments
	 * repeating, no exit kept */
	entry(m, 2, 100, 5);
	for (int i = 0; i < 10; i++) {
		rec(m, 2, 200 + 100 * (uint32_t)i, edge(0, 1, 3));
		rec(m, 2, 250 + 100 * (uint32_t)i, edge(1, 1, 4));
	}
	rec(m, 2, 2000, 0xC0000000u);
	/* warp 3: no records */
	result_map_derive_counts(m);
	struct regions *g = NULL;
	char *cause = NULL;
	CHECK_EQ_INT(regions_find_map(&r), 0);
	CHECKF(regions_analyze(&r, 0, &g, &cause) == 0, "%s", cause ? cause : "");
	if (g) {
		CHECK_EQ_INT(g->n_warps, 3);
		CHECK_EQ_INT(g->n_regions, 2);
		CHECK(!strcmp(g->reg[0].name, "load") && !strcmp(g->reg[1].spec, "@tensor"));
		const struct rg_warp *w0 = &g->warps[0], *w1 = &g->warps[1], *w2 = &g->warps[2];
		CHECK(w0->block == 0 && w0->warp == 0 && w0->smid == 3 && w0->entry == 5000 && w0->exit == 6000);
		CHECK_EQ_INT(w0->n_segs, 2);
		const struct rg_seg *s = &g->segs[w0->first_seg];
		CHECK(s[0].region == 0 && s[0].start == 5100 && s[0].end == 5300 && s[0].begin_site == 1 &&
		      s[0].end_site == 2);
		CHECK(s[1].region == 1 && s[1].start == 5300 && s[1].end == 5700);
		CHECK(w1->entry == t0 && w1->exit == t0 + 0x200 && w1->n_segs == 2);
		s = &g->segs[w1->first_seg];
		CHECK(s[0].start == t0 + 0xE0 && s[0].end == t0 + 0x112); /* across the wrap */
		CHECK(s[1].region == 1 && s[1].start == t0 + 0x130 && s[1].end == t0 + 0x200 && s[1].end_site == -1);
		CHECK_EQ_INT(g->unmatched, 1);
		CHECK(w2->truncated && w2->block == 1 && w2->warp == 0);
		CHECK_EQ_INT(w2->n_segs, 7); /* (16 - 2) / 2 pairs kept */
		CHECK_EQ_INT(g->warps_truncated, 1);
		CHECK_EQ_INT(g->records_dropped, 7);
		/* complete warps: 1000 + 0x200 cycles of life */
		CHECK_EQ_INT(g->life, 1000 + 0x200);
		CHECK_EQ_INT(g->gaps, 400 + (0x200 - 0x32 - 0xD0));
		CHECK_EQ_INT(g->reg[0].segments, 2);
		CHECK_EQ_INT(g->reg[0].warps, 2);
		CHECK_EQ_INT(g->reg[0].total, 200 + 0x32);
		CHECK_EQ_INT(g->reg[1].segments, 9);
		CHECK_EQ_INT(g->reg[1].total, 400 + 0xD0 + 7 * 50);
		CHECK_EQ_INT(g->reg[1].p95, 400);
		CHECKF(g->reg[0].share > 0.165 && g->reg[0].share < 0.166, "share %f", g->reg[0].share); /* 250 / 1512 */
		char buf[32];
		CHECK(!strcmp(regions_name(g, 5, buf, sizeof buf), "region 5"));
	}
	regions_free(g);
	free(m->counts);
	free(m->records);
	/* a result without the map */
	m->map.fields[1].type = PROBE_U64;
	CHECK_EQ_INT(regions_find_map(&r), -1);
	CHECK(regions_analyze(&r, 0, &g, &cause) < 0 && strstr(cause, "no regions map"));
	free(cause);
}

int main(void)
{
	test_model();
	return testlib_report();
}
