/* block_sched on synthetic warp records with answers worked out by hand. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"
#include "viz/block_sched.h"

struct warp_rec {
	uint64_t start;
	uint32_t elapsed, smid;
	uint64_t gstart;
	int missing; /* count 0: the warp saved nothing */
};

/* A result with one warp map; named = ntop fields (24-byte records with
 * gstart), else NEUTRINO's unnamed 16-byte record. */
static struct result *make(int named, uint32_t blocks, uint32_t threads, const struct warp_rec *w)
{
	struct result *r = calloc(1, sizeof *r);
	r->grid[0] = blocks; r->grid[1] = 1; r->grid[2] = 1;
	r->block[0] = threads; r->block[1] = 1; r->block[2] = 1;
	r->device_sms = 4;
	r->n_maps = 1;
	r->maps = calloc(1, sizeof *r->maps);
	struct result_map *m = &r->maps[0];
	snprintf(m->map.name, sizeof m->map.name, "block_sched");
	m->map.level = PROBE_LEVEL_WARP;
	m->map.cap = 1;
	m->stored = m->map.cap;
	m->map.rec_size = named ? 24 : 16;
	if (named) {
		static const struct probe_field f[] = {
			{"start", PROBE_U64, 0, 0}, {"elapsed", PROBE_U32, 8, 0},
			{"smid", PROBE_U32, 12, 0}, {"gstart", PROBE_U64, 16, 0}};
		m->map.n_fields = 4;
		memcpy(m->map.fields, f, sizeof f);
	}
	uint32_t wpb = (threads + 31) / 32;
	m->units = (uint64_t)blocks * wpb;
	m->counts = calloc(m->units, 4);
	m->records = calloc(m->units, m->map.rec_size);
	for (uint64_t u = 0; u < m->units; u++) {
		uint8_t *rec = m->records + u * m->map.rec_size;
		memcpy(rec, &w[u].start, 8);
		memcpy(rec + 8, &w[u].elapsed, 4);
		memcpy(rec + 12, &w[u].smid, 4);
		if (named)
			memcpy(rec + 16, &w[u].gstart, 8);
		m->counts[u] = w[u].missing ? 0 : m->map.rec_size;
	}
	return r;
}

static void free_result(struct result *r)
{
	free(r->maps[0].counts);
	free(r->maps[0].records);
	free(r->maps);
	free(r);
}

/* One SM, one warp per block, blocks numbered out of start order:
 *   A 0..100, B 10..110 -> two slots
 *   C 130..180 replaces A (gap 30), E 185..190 replaces B (gap 75),
 *   D 200..210 replaces C (gap 20)
 * running 100+100+50+5+10 = 265, scheduling 30+75+20 = 125. */
static void test_one_sm(void)
{
	const struct warp_rec w[] = {
		{200, 10, 3, 9200, 0}, /* D */
		{0, 100, 3, 9000, 0},  /* A */
		{185, 5, 3, 9185, 0},  /* E */
		{130, 50, 3, 9130, 0}, /* C */
		{10, 100, 3, 9010, 0}, /* B */
	};
	for (int named = 0; named <= 1; named++) {
		struct result *r = make(named, 5, 32, w);
		CHECK_EQ_INT(block_sched_find_map(r), 0);
		struct block_sched *bs = NULL;
		char *cause = NULL;
		CHECKF(block_sched_analyze(r, 0, 2, &bs, &cause) == 0, "%s", cause);
		if (!bs)
			continue;
		CHECK_EQ_INT(bs->n_blocks, 5);
		CHECK_EQ_INT(bs->n_blocks_recorded, 5);
		CHECK_EQ_INT(bs->n_sms, 1);
		CHECK(bs->mean_running == 265.0);
		CHECK(bs->mean_sched == 125.0);
		CHECK_EQ_INT(bs->max_concurrent, 2);
		CHECK_EQ_INT(bs->sms[0].smid, 3);
		CHECK_EQ_INT(bs->sms[0].max_concurrent, 2);
		CHECK_EQ_INT(bs->warps_expected, 5);
		CHECK_EQ_INT(bs->warps_recorded, 5);
		CHECK_EQ_INT(bs->smid_mismatch_blocks, 0);
		CHECK_EQ_INT(bs->smid_max, 3);
		CHECK_EQ_INT(bs->elapsed_min, 5);
		CHECK_EQ_INT(bs->elapsed_max, 100);
		/* 5 blocks / (2 per SM * 4 SMs) */
		CHECK(bs->waves == 0.625);
		/* sorted by start; slots: A0 B1 C0 E1 D0; grid indices kept */
		static const uint64_t idx[] = {1, 4, 3, 2, 0};
		static const uint32_t slot[] = {0, 1, 0, 1, 0};
		for (int i = 0; i < 5; i++) {
			CHECK_EQ_INT(bs->blocks[i].index, idx[i]);
			CHECK_EQ_INT(bs->blocks[i].slot, slot[i]);
		}
		CHECK_EQ_INT(bs->blocks[0].gstart, named ? 9000 : 0);
		char line[128];
		block_sched_line(bs, line, sizeof line);
		CHECKF(strcmp(line, "No.block:5 Running:265 Scheduling:125 (cycle)") == 0, "%s", line);
		block_sched_free(bs);
		free(cause);
		free_result(r);
	}
}

/* Two SMs, 48-thread blocks (2 warps each, the second partial):
 *   block 0 on SM 1: warps (0,50) (5,60)          -> 0..65
 *   block 1 on SM 1: warps (70,10) (72,20)        -> 70..92, gap 5 after block 0
 *   block 2 on SM 2: warps (1000,40) (990,30)     -> 990..1040
 *   block 3 on SM 2: warp 0 only (1100,10)        -> 1100..1110, gap 60
 *   block 4: no records at all
 *   block 5 on SM 2 / SM 1: warps disagree         -> 2000..2001 on SM 2 (first warp), gap 890
 * SM 1: running 65+22 = 87, sched 5; SM 2: running 50+10+1 = 61, sched 60+890 = 950.
 * means: running (87+61)/2 = 74, sched (5+950)/2 = 477.5 */
static void test_two_sms(void)
{
	const struct warp_rec w[] = {
		{0, 50, 1, 0, 0},     {5, 60, 1, 0, 0},
		{70, 10, 1, 0, 0},    {72, 20, 1, 0, 0},
		{1000, 40, 2, 0, 0},  {990, 30, 2, 0, 0},
		{1100, 10, 2, 0, 0},  {0, 0, 0, 0, 1},
		{0, 0, 0, 0, 1},      {0, 0, 0, 0, 1},
		{2000, 1, 2, 0, 0},   {2000, 1, 1, 0, 0},
	};
	struct result *r = make(1, 6, 48, w);
	struct block_sched *bs = NULL;
	char *cause = NULL;
	CHECKF(block_sched_analyze(r, 0, 0, &bs, &cause) == 0, "%s", cause);
	if (bs) {
		CHECK_EQ_INT(bs->n_blocks, 6);
		CHECK_EQ_INT(bs->n_blocks_recorded, 5);
		CHECK_EQ_INT(bs->warps_expected, 12);
		CHECK_EQ_INT(bs->warps_recorded, 9);
		CHECK_EQ_INT(bs->n_sms, 2);
		CHECK(bs->mean_running == 74.0);
		CHECK(bs->mean_sched == 477.5);
		CHECK_EQ_INT(bs->smid_mismatch_blocks, 1);
		CHECK_EQ_INT(bs->smid_max, 2);
		CHECK_EQ_INT(bs->elapsed_min, 1); /* the missing warps' zeros do not count */
		CHECK(bs->waves < 0); /* occupancy unknown */
		CHECK_EQ_INT(bs->max_concurrent, 1);
		CHECK(bs->sms[0].smid == 1 && bs->sms[0].blocks == 2 && bs->sms[0].running == 87);
		CHECK(bs->sms[1].smid == 2 && bs->sms[1].blocks == 3 && bs->sms[1].sched == 950);
		CHECK(bs->blocks[bs->sms[1].first].start == 990 && bs->blocks[bs->sms[1].first].end == 1040);
		char line[128];
		block_sched_line(bs, line, sizeof line);
		CHECKF(strcmp(line, "No.block:6 Running:74 Scheduling:477 (cycle)") == 0, "%s", line);
	}
	block_sched_free(bs);
	free(cause);
	free_result(r);
}

static void test_errors(void)
{
	const struct warp_rec w[4] = {{0, 1, 0, 0, 0}, {0, 1, 0, 0, 0}, {0, 1, 0, 0, 0}, {0, 1, 0, 0, 0}};
	struct result *r = make(1, 4, 32, w);
	struct block_sched *bs = NULL;
	char *cause = NULL;
	/* launch shape that does not match the map */
	r->grid[0] = 5;
	CHECK(block_sched_analyze(r, 0, 0, &bs, &cause) < 0 && bs == NULL);
	CHECK(cause && strstr(cause, "units"));
	r->grid[0] = 0;
	CHECK(block_sched_analyze(r, 0, 0, &bs, &cause) < 0);
	r->grid[0] = 4;
	CHECK(block_sched_analyze(r, 1, 0, &bs, &cause) < 0);
	/* NEUTRINO's DSL names the SM field cuid */
	char smid_name[PROBE_NAME_MAX];
	snprintf(smid_name, sizeof smid_name, "%s", r->maps[0].map.fields[2].name);
	snprintf(r->maps[0].map.fields[2].name, PROBE_NAME_MAX, "cuid");
	CHECKF(block_sched_find_map(r) == 0, "field %s renamed cuid", smid_name);
	/* a map without the fields */
	snprintf(r->maps[0].map.fields[2].name, PROBE_NAME_MAX, "sm");
	CHECK_EQ_INT(block_sched_find_map(r), -1);
	CHECK(block_sched_analyze(r, 0, 0, &bs, &cause) < 0 && strstr(cause, "fields"));
	/* an unnamed thread-level 16-byte map is not NEUTRINO's block_sched */
	r->maps[0].map.n_fields = 0;
	r->maps[0].map.rec_size = 16;
	r->maps[0].map.level = PROBE_LEVEL_THREAD;
	CHECK_EQ_INT(block_sched_find_map(r), -1);
	free(cause);
	free_result(r);
}

/* Records past cap are counted as dropped; a warp with two records spans
 * both. The same with cap 8 of which 2 slots stored (format v4: the
 * records at stride 2, as the hook compacts a warp map), and a second warp
 * whose one record (40, 90) sits at index 2 only at that stride. */
static void test_cap(void)
{
	for (uint32_t cap = 2; cap <= 8; cap += 6) {
		const struct warp_rec w[2] = {{100, 10, 0, 0, 0}, {0, 0, 0, 0, 1}};
		struct result *r = make(1, 1, 64, w);
		struct result_map *m = &r->maps[0];
		/* give warp 0 two records: (100,10) and (50,5) */
		m->map.cap = cap;
		m->stored = 2;
		uint8_t *rec = calloc(4, 24);
		memcpy(rec, m->records, 24);
		uint64_t s = 50;
		uint32_t e = 5;
		memcpy(rec + 24, &s, 8);
		memcpy(rec + 32, &e, 4);
		free(m->records);
		m->records = rec;
		m->counts[0] = 48;
		m->counts[1] = 0;
		m->records_dropped = 7;
		struct block_sched *bs = NULL;
		char *cause = NULL;
		CHECKF(block_sched_analyze(r, 0, 1, &bs, &cause) == 0, "%s", cause);
		if (bs) {
			CHECK(bs->blocks[0].start == 50 && bs->blocks[0].end == 110);
			CHECK_EQ_INT(bs->records_dropped, 7);
			CHECK_EQ_INT(bs->warps_recorded, 1);
			CHECK(bs->waves == 0.25);
		}
		block_sched_free(bs);
		bs = NULL;
		s = 40;
		e = 90;
		memcpy(rec + 2 * 24, &s, 8);
		memcpy(rec + 2 * 24 + 8, &e, 4);
		m->counts[1] = 24;
		CHECKF(block_sched_analyze(r, 0, 1, &bs, &cause) == 0, "%s", cause);
		if (bs) {
			CHECK(bs->blocks[0].start == 40 && bs->blocks[0].end == 130);
			CHECK_EQ_INT(bs->warps_recorded, 2);
		}
		block_sched_free(bs);
		free(cause);
		free_result(r);
	}
}

/* AMD waves of 64 lanes: a 64-work-item block is one wave, so 3 blocks
 * are 3 units (a 32-lane reading would want 6 and refuse the map). */
static void test_wave64(void)
{
	const struct warp_rec w[] = { { 0, 100, 1, 0, 0 }, { 10, 50, 2, 0, 0 }, { 120, 30, 1, 0, 0 } };
	struct result *r = make(1, 3, 32, w);
	r->block[0] = 64;
	r->warp_size = 64;
	struct block_sched *bs = NULL;
	char *cause = NULL;
	CHECKF(block_sched_analyze(r, 0, 2, &bs, &cause) == 0, "%s", cause);
	if (bs) {
		CHECK_EQ_INT(bs->n_blocks, 3);
		CHECK_EQ_INT(bs->warps_expected, 3);
		CHECK_EQ_INT(bs->warps_recorded, 3);
		CHECK_EQ_INT(bs->n_sms, 2);
	}
	block_sched_free(bs);
	free(cause);
	free_result(r);
}

int main(void)
{
	test_wave64();
	test_one_sm();
	test_two_sms();
	test_errors();
	test_cap();
	return testlib_report();
}
