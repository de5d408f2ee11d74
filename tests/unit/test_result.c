/* Result files: round trip with random data, derived counts, truncation at
 * every offset, every byte corrupted, wrong magic/version, highly
 * compressible maps near zstd's ratio limit. All failures must be clean.
 * The streaming reader (result_stream_open, passes) against result_read on
 * the same files: every layout (sampled too, multi-chunk), and the same
 * verdict on every truncation and every corrupted byte. Version 4 (fewer
 * slots stored than the cap): round trips in both layouts with 0..cap
 * slots, sampled too, what the writer refuses, corrupt descriptors and
 * counts, and the streaming reader on all of it. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zstd.h>

#include "testlib.h"
#include "trace/result.h"

static char dir[] = "/tmp/ntop-test-result-XXXXXX";

static uint64_t rng = 88172645463325252ull;
static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)rng;
}

static void set_field(struct probe_map *m, int i, const char *name, enum probe_type t, uint32_t off)
{
	snprintf(m->fields[i].name, sizeof m->fields[i].name, "%s", name);
	m->fields[i].type = t;
	m->fields[i].offset = off;
}

/* Two maps: a warp map with named fields and a thread map without names. */
static struct result *make_result(uint64_t warp_units, uint64_t thread_units)
{
	struct result *r = calloc(1, sizeof *r);
	r->pid = 1234;
	r->seq = 77;
	r->kernel_id = 5;
	r->kernel = strdup("_Z6vecaddPKfS0_Pfi");
	r->probes = strdup("block_sched,dmat");
	r->grid[0] = 4; r->grid[1] = 2; r->grid[2] = 1;
	r->block[0] = 64; r->block[1] = 1; r->block[2] = 1;
	r->smem = 1024;
	r->device_sms = 132;
	r->device_cc = 90;
	r->sm_clock_khz = 1980000;
	r->wall_ns = 1745552787265925120ull;
	r->duration_ns = 59392;
	r->n_maps = 2;
	r->maps = calloc(2, sizeof *r->maps);

	struct result_map *w = &r->maps[0];
	snprintf(w->map.name, sizeof w->map.name, "block_sched");
	w->map.level = PROBE_LEVEL_WARP;
	w->map.cap = 1;
	w->stored = w->map.cap;
	w->map.rec_size = 16;
	w->map.n_fields = 3;
	set_field(&w->map, 0, "start", PROBE_U64, 0);
	set_field(&w->map, 1, "elapsed", PROBE_U32, 8);
	set_field(&w->map, 2, "smid", PROBE_U32, 12);
	w->units = warp_units;

	struct result_map *t = &r->maps[1];
	snprintf(t->map.name, sizeof t->map.name, "mem");
	t->map.level = PROBE_LEVEL_THREAD;
	t->map.cap = 3;
	t->stored = t->map.cap;
	t->map.rec_size = 8;
	t->units = thread_units;
	t->slot_major = 1; /* as the hook writes thread maps with cap > 1 */
	for (int k = 0; k < 2; k++) {
		struct result_map *m = &r->maps[k];
		size_t rb = (size_t)(m->units * m->map.cap * m->map.rec_size);
		m->counts = calloc(m->units + 1, 4);
		m->records = calloc(rb + 1, 1);
		for (uint64_t u = 0; u < m->units; u++)
			m->counts[u] = rnd() % (m->map.rec_size * (m->map.cap + 2) + 1);
		for (size_t b = 0; b < rb; b++)
			m->records[b] = (uint8_t)rnd();
	}
	return r;
}

static int same_map(const struct result_map *a, const struct result_map *b)
{
	size_t rb = (size_t)(a->units * a->stored * a->map.rec_size);
	return strcmp(a->map.name, b->map.name) == 0 && a->map.level == b->map.level &&
	       a->map.cap == b->map.cap && a->map.rec_size == b->map.rec_size && a->stored == b->stored &&
	       a->map.n_fields == b->map.n_fields && a->units == b->units &&
	       a->slot_major == b->slot_major &&
	       memcmp(a->map.fields, b->map.fields, sizeof a->map.fields) == 0 &&
	       memcmp(a->counts, b->counts, (size_t)a->units * 4) == 0 &&
	       memcmp(a->records, b->records, rb) == 0;
}

static char *path_of(const char *name)
{
	char *p;
	if (asprintf(&p, "%s/%s", dir, name) < 0)
		abort();
	return p;
}

static void write_bytes(const char *path, const uint8_t *b, size_t n)
{
	FILE *f = fopen(path, "wb");
	fwrite(b, 1, n, f);
	fclose(f);
}

static uint8_t *load(const char *name, size_t *n)
{
	char *p = path_of(name);
	uint8_t *b = (uint8_t *)testlib_slurp(p, n);
	free(p);
	return b;
}

static void test_round_trip(void)
{
	struct result *r = make_result(8 * 2, 64 * 8);
	char *cause = NULL;
	CHECKF(result_write(dir, "1234-77.ntr", r, &cause) == 0, "%s", cause);
	char *path = path_of("1234-77.ntr");
	struct stat st;
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
	struct result *g = NULL;
	CHECKF(result_read(path, &g, &cause) == 0, "%s", cause);
	if (g) {
		CHECK(g->pid == 1234 && g->seq == 77 && g->kernel_id == 5);
		CHECK(strcmp(g->kernel, r->kernel) == 0 && strcmp(g->probes, r->probes) == 0);
		CHECK(memcmp(g->grid, r->grid, sizeof r->grid) == 0);
		CHECK(memcmp(g->block, r->block, sizeof r->block) == 0);
		CHECK(g->smem == 1024 && g->device_sms == 132 && g->device_cc == 90);
		CHECK(g->sm_clock_khz == 1980000 && g->wall_ns == r->wall_ns && g->duration_ns == 59392);
		CHECK_EQ_INT(g->n_maps, 2);
		for (int k = 0; k < 2 && g->n_maps == 2; k++) {
			CHECKF(same_map(&r->maps[k], &g->maps[k]), "map %d differs", k);
			/* derived counts, recomputed independently */
			const struct result_map *m = &r->maps[k];
			uint64_t w = 0, a = 0, capb = m->map.cap * m->map.rec_size;
			for (uint64_t u = 0; u < m->units; u++) {
				a += m->counts[u] / m->map.rec_size;
				w += (m->counts[u] < capb ? m->counts[u] : capb) / m->map.rec_size;
			}
			CHECK(g->maps[k].records_written == w);
			CHECK(g->maps[k].records_dropped == a - w);
			CHECK(a > w); /* the random counts overflow cap sometimes */
		}
	}
	result_free(g);
	free(path);
	result_free(r);
	free(cause);
}

/* One thread map, cap 3, 5 units: record (u, k) holds bytes u*16 + k. */
static struct result *make_layout(int slot_major)
{
	struct result *r = calloc(1, sizeof *r);
	r->kernel = strdup("k");
	r->probes = strdup("p");
	r->n_maps = 1;
	r->maps = calloc(1, sizeof *r->maps);
	struct result_map *m = &r->maps[0];
	snprintf(m->map.name, sizeof m->map.name, "lay");
	m->map.level = PROBE_LEVEL_THREAD;
	m->map.cap = 3;
	m->stored = m->map.cap;
	m->map.rec_size = 4;
	m->units = 5;
	m->slot_major = slot_major;
	m->counts = calloc(5, 4);
	m->records = calloc(5 * 3, 4);
	for (uint32_t u = 0; u < 5; u++) {
		m->counts[u] = 12;
		for (uint32_t k = 0; k < 3; k++) {
			uint64_t i = slot_major ? k * 5 + u : u * 3 + k; /* written by hand, not by the accessor */
			memset(m->records + i * 4, (int)(u * 16 + k), 4);
		}
	}
	return r;
}

/* A 1-D launch of `blocks` blocks of `threads` threads. */
static void layout_1d(struct result *r, uint32_t threads, uint32_t blocks)
{
	r->block[0] = threads;
	r->block[1] = r->block[2] = 1;
	r->grid[0] = blocks;
	r->grid[1] = r->grid[2] = 1;
}

/* Does every record read back where it was put (u*16 + k)? */
static int layout_ok(const struct result *g)
{
	if (!g || g->n_maps != 1)
		return 0;
	for (uint32_t u = 0; u < 5; u++)
		for (uint32_t k = 0; k < 3; k++)
			if (result_map_record(&g->maps[0], u, k)[3] != u * 16 + k)
				return 0;
	return 1;
}

/* Block sampling of a warp map, the first blocks kept: 5 blocks of 2
 * warps, cap 2, 1 in 2 = blocks 0-2 (units 0-5, at their own index), the
 * hook's form (their counts only); version 7, flag bit 2; read back with
 * NULL past unit 5 and the records of the others unknown. */
static void test_prefix_sampled(void)
{
	struct result *r = make_layout(0);
	layout_1d(r, 64, 5);
	struct result_map *m = &r->maps[0];
	m->map.level = PROBE_LEVEL_WARP;
	m->units = 10;
	m->map.cap = 2;
	m->stored = 2;
	m->sample_shift = 1;
	m->sample_prefix = 1;
	m->counts_kept_only = 1;
	m->rec_units = 6;
	m->units_per_block = 2;
	free(m->counts);
	free(m->records);
	m->counts = calloc(6, 4);
	m->records = calloc(6 * 2, 4);
	for (uint32_t u = 0; u < 6; u++) {
		m->counts[u] = 4 * (1 + u % 2);
		for (uint32_t k = 0; k < 2; k++)
			memset(m->records + (u * 2 + k) * 4, (int)(u * 16 + k), 4);
	}
	char *cause = NULL;
	struct result *g = NULL;
	CHECKF(result_write(dir, "pre.ntr", r, &cause) == 0, "%s", cause);
	char *p = path_of("pre.ntr");
	CHECKF(result_read(p, &g, &cause) == 0, "%s", cause);
	const struct result_map *gm = g ? &g->maps[0] : NULL;
	CHECK(g && g->version == 7 && gm->sample_prefix && gm->rec_units == 6 && gm->unsampled_unknown);
	int ok = gm != NULL;
	for (uint32_t u = 0; gm && u < 10; u++)
		for (uint32_t k = 0; k < 2; k++) {
			const uint8_t *x = result_map_record(gm, u, k);
			ok &= u >= 6 ? x == NULL : x && x[0] == u * 16 + k;
		}
	CHECK(ok);
	CHECK(gm && gm->counts[5] == 8 && gm->counts[6] == 0 && gm->records_written == 9 && gm->records_dropped == 0);
	result_free(g);
	unlink(p);
	free(p);
	free(cause);
	result_free(r);
}

/* Block sampling: 5 blocks of 2 threads, cap 2, 1 block in 2 kept (blocks
 * 0, 2, 4): records for 6 units only, counts for all 10; the file is
 * version 3, reads back with NULL for the other blocks' units and the
 * arithmetic derived. */
static void test_sampled_layout(void)
{
	struct result *r = make_layout(1);
	layout_1d(r, 2, 5);
	struct result_map *m = &r->maps[0];
	m->units = 10;
	m->map.cap = 2;
	m->stored = m->map.cap;
	m->sample_shift = 1;
	free(m->counts);
	free(m->records);
	m->counts = calloc(10, 4);
	m->records = calloc(6 * 2, 4);
	for (uint32_t u = 0; u < 10; u++) {
		m->counts[u] = 4 * (u % 4); /* 0..3 records tried: 3 drops one past cap 2 */
		uint32_t b = u / 2;
		if (b % 2)
			continue;
		for (uint32_t k = 0; k < 2; k++) /* slot-major over the 6 kept units, by hand */
			memset(m->records + (k * 6 + (b / 2) * 2 + u % 2) * 4, (int)(u * 16 + k), 4);
	}
	char *cause = NULL;
	struct result *g = NULL;
	CHECKF(result_write(dir, "smp.ntr", r, &cause) == 0, "%s", cause);
	char *p = path_of("smp.ntr");
	CHECKF(result_read(p, &g, &cause) == 0, "%s", cause);
	const struct result_map *gm = g ? &g->maps[0] : NULL;
	CHECK(gm && gm->sample_shift == 1 && gm->rec_units == 6 && gm->units_per_block == 2);
	int ok = gm != NULL;
	for (uint32_t u = 0; gm && u < 10; u++)
		for (uint32_t k = 0; k < 2; k++) {
			const uint8_t *x = result_map_record(gm, u, k);
			ok &= (u / 2) % 2 ? x == NULL : x && x[0] == u * 16 + k;
		}
	CHECK(ok);
	/* kept units 0,1,4,5,8,9 tried 0,1,0,1,0,1 records; the others 2,3,2,3 */
	CHECK(gm && gm->records_written == 3 && gm->records_dropped == 0 && gm->records_unsampled == 10);
	size_t n;
	uint8_t *b = load("smp.ntr", &n);
	CHECK(b && b[8] == 3);
	size_t flags = 104 + 4 + 1 + 4 + 1 + 20;
	if (b && n > flags + 4) {
		CHECK(b[flags] == 1 && b[flags + 1] == 1); /* slot-major, shift 1 in bits 8-12 */
		b[flags + 1] = 2; /* shift 2: 2 blocks kept, the records size disagrees */
		result_free(g);
		g = NULL;
		CHECK(result_read_mem(b, n, &g, &cause) < 0 && strstr(cause, "sizes disagree"));
	}
	free(b);
	result_free(g);
	g = NULL;

	/* The hook's form (engine.h): the blocks not kept stored no counts, so
	 * only the 6 kept units' counts are written (flag bit 1); read back,
	 * they are spread over every unit, 0 for the others, and the records
	 * the other blocks tried are unknown, not 0. */
	uint32_t *all = m->counts, kept[6];
	for (uint32_t i = 0; i < 6; i++)
		kept[i] = all[(i / 2) * 4 + i % 2];
	m->counts = kept;
	m->counts_kept_only = 1;
	m->rec_units = 6;
	m->units_per_block = 2;
	CHECKF(result_write(dir, "smp.ntr", r, &cause) == 0, "%s", cause);
	m->counts = all;
	CHECKF(result_read(p, &g, &cause) == 0, "%s", cause);
	gm = g ? &g->maps[0] : NULL;
	CHECK(gm && gm->unsampled_unknown && !gm->counts_kept_only && gm->records_unsampled == 0);
	CHECK(gm && gm->records_written == 3 && gm->records_dropped == 0);
	ok = gm != NULL;
	for (uint32_t u = 0; gm && u < 10; u++) {
		ok &= gm->counts[u] == ((u / 2) % 2 ? 0 : all[u]);
		for (uint32_t k = 0; k < 2; k++) {
			const uint8_t *x = result_map_record(gm, u, k);
			ok &= (u / 2) % 2 ? x == NULL : x && x[0] == u * 16 + k;
		}
	}
	CHECK(ok);
	result_free(g);
	g = NULL;
	b = load("smp.ntr", &n);
	if (b && n > flags + 4) {
		CHECK(b[flags] == (1 | 2) && b[flags + 1] == 1); /* slot-major, kept counts, shift 1 */
		CHECK(b[flags + 12] == 24); /* counts_bytes: 6 units x 4 */
		b[flags + 12] = 40;         /* every unit's: disagrees with the flag */
		CHECK(result_read_mem(b, n, &g, &cause) < 0 && g == NULL && strstr(cause, "sizes disagree"));
	}
	free(b);
	unlink(p);
	free(p);
	result_free(r);
	free(cause);
}

/* Both layouts round-trip with their flag; a file whose flag word is 0
 * (every file written before the flag existed) reads as unit-major; an
 * unknown flag bit is refused, not guessed at. */
static void test_layouts(void)
{
	char *cause = NULL;
	for (int sm = 0; sm < 2; sm++) {
		struct result *r = make_layout(sm);
		struct result *g = NULL;
		CHECK(layout_ok(r));
		CHECKF(result_write(dir, "lay.ntr", r, &cause) == 0, "%s", cause);
		char *p = path_of("lay.ntr");
		CHECKF(result_read(p, &g, &cause) == 0, "%s", cause);
		CHECKF(g && g->maps[0].slot_major == sm && layout_ok(g), "layout %d did not round-trip", sm);
		result_free(g);
		size_t n;
		uint8_t *b = load("lay.ntr", &n);
		size_t flags = 104 + 4 + 1 + 4 + 1 + 20; /* header, "k", "p", descriptor offset 20 */
		CHECK(b && n > flags + 4 && b[flags] == sm && b[flags + 1] == 0);
		/* slot-major maps need a version-2 reader; others stay version 1 */
		CHECK(b && b[8] == (sm ? 2 : 1) && b[9] == 0);
		if (b && sm) {
			b[flags] = 0; /* the old layout: same bytes, read unit-major */
			CHECK(result_read_mem(b, n, &g, &cause) == 0 && !g->maps[0].slot_major && !layout_ok(g) &&
			      result_map_record(&g->maps[0], 1, 0)[0] == 3 * 16 /* index 3: slot-major (3, 0) */);
			result_free(g);
			b[flags] = 8;
			CHECK(result_read_mem(b, n, &g, &cause) < 0 && g == NULL && strstr(cause, "flags"));
			b[flags] = 4; /* the first blocks kept, in a map that is not sampled */
			CHECK(result_read_mem(b, n, &g, &cause) < 0 && g == NULL && strstr(cause, "not sampled"));
			b[flags] = 2; /* kept units' counts only, in a map that is not sampled */
			CHECK(result_read_mem(b, n, &g, &cause) < 0 && g == NULL && strstr(cause, "not sampled"));
		}
		free(b);
		unlink(p);
		free(p);
		result_free(r);
	}
	/* an old file, byte for byte as the version-1 writer made it before the
	 * flag (the word was "reserved" and always 0): unit-major */
	struct result *r = make_layout(0), *g = NULL;
	CHECKF(result_write(dir, "old.ntr", r, &cause) == 0, "%s", cause);
	char *p = path_of("old.ntr");
	CHECK(result_read(p, &g, &cause) == 0 && g->maps[0].slot_major == 0 && layout_ok(g));
	result_free(g);
	unlink(p);
	free(p);
	result_free(r);
	free(cause);
}

static void test_empty_and_errors(void)
{
	struct result *r = make_result(0, 0);
	char *cause = NULL;
	CHECKF(result_write(dir, "empty.ntr", r, &cause) == 0, "%s", cause);
	char *p = path_of("empty.ntr");
	struct result *g = NULL;
	CHECKF(result_read(p, &g, &cause) == 0, "%s", cause);
	CHECK(g && g->n_maps == 2 && g->maps[0].units == 0 && g->maps[1].records_written == 0);
	result_free(g);
	free(p);

	struct result *s = make_result(4, 8);
	CHECKF(result_write(dir, "small.ntr", s, &cause) == 0, "%s", cause);
	result_free(s);

	/* nonexistent dir: clean error */
	CHECK(result_write("/nonexistent/dir", "x.ntr", r, &cause) < 0);
	CHECK(cause && strstr(cause, "/nonexistent/dir"));
	/* inconsistent struct refused */
	r->maps[0].units = 5;
	free(r->maps[0].counts);
	r->maps[0].counts = NULL;
	CHECK(result_write(dir, "bad.ntr", r, &cause) < 0);
	r->maps[0].units = 0;
	result_free(r);

	CHECK(result_read("/nonexistent/x.ntr", &g, &cause) < 0 && g == NULL);
	CHECK(cause && strstr(cause, "/nonexistent/x.ntr"));
	free(cause);
}

static void test_truncation(void)
{
	size_t n;
	uint8_t *b = load("small.ntr", &n);
	CHECK(b && n > 200);
	char *p = path_of("trunc.ntr");
	int accepted = 0;
	for (size_t cut = 0; b && cut < n; cut++) {
		/* a copy of exactly `cut` bytes, so ASan sees any overread */
		uint8_t *c = malloc(cut ? cut : 1);
		memcpy(c, b, cut);
		struct result *g = NULL;
		char *cause = NULL;
		if (result_read_mem(c, cut, &g, &cause) == 0)
			accepted++;
		CHECK(cause || g);
		result_free(g);
		free(cause);
		free(c);
	}
	CHECK_EQ_INT(accepted, 0);
	write_bytes(p, b, n / 2);
	struct result *h = NULL;
	char *why = NULL;
	CHECK(result_read(p, &h, &why) < 0 && strstr(why, "truncated") && strstr(why, "trunc.ntr"));
	free(why);
	/* trailing garbage */
	uint8_t *longer = malloc(n + 3);
	memcpy(longer, b, n);
	memcpy(longer + n, "xyz", 3);
	write_bytes(p, longer, n + 3);
	struct result *g = NULL;
	char *cause = NULL;
	CHECK(result_read(p, &g, &cause) < 0 && strstr(cause, "trailing"));
	free(cause);
	free(longer);
	free(p);
	free(b);
}

/* Flips every byte in turn (several patterns): the reader must either fail
 * cleanly or return something, never touch memory it should not (ASan). A
 * flipped record byte is not detected by sizes, but the zstd checksum is. */
static void test_corruption(void)
{
	size_t n;
	uint8_t *b = load("small.ntr", &n);
	static const uint8_t xors[] = {0x01, 0x80, 0xff};
	int accepted = 0, runs = 0;
	for (size_t i = 0; b && i < n; i++) {
		for (size_t x = 0; x < sizeof xors; x++) {
			b[i] ^= xors[x];
			struct result *g = NULL;
			char *cause = NULL;
			int rc = result_read_mem(b, n, &g, &cause);
			runs++;
			if (rc == 0)
				accepted++;
			else
				CHECK(cause != NULL && g == NULL);
			result_free(g);
			free(cause);
			b[i] ^= xors[x];
		}
	}
	/* only header fields the reader does not interpret may change unnoticed:
	 * pid..flags (bytes 24..103) and the probe/kernel name text */
	CHECKF(accepted < runs / 2, "%d of %d corruptions accepted", accepted, runs);
	CHECK(runs > 600);
	free(b);
}

static void test_magic_version(void)
{
	size_t n;
	uint8_t *b = load("1234-77.ntr", &n);
	char *p = path_of("mv.ntr");
	struct result *g = NULL;
	char *cause = NULL;
	b[0] = 'X';
	write_bytes(p, b, n);
	CHECK(result_read(p, &g, &cause) < 0 && strstr(cause, "magic"));
	b[0] = 'N';
	b[8] = 6;
	write_bytes(p, b, n);
	CHECK(result_read(p, &g, &cause) < 0 && strstr(cause, "version 6"));
	b[8] = 0;
	write_bytes(p, b, n);
	CHECK(result_read(p, &g, &cause) < 0 && strstr(cause, "version 0"));
	b[8] = 1;
	/* a forged huge header size */
	b[12] = 0xff; b[13] = 0xff; b[14] = 0xff; b[15] = 0x7f;
	write_bytes(p, b, n);
	CHECK(result_read(p, &g, &cause) < 0 && strstr(cause, "header size"));
	write_bytes(p, (const uint8_t *)"NTOPRES", 7);
	CHECK(result_read(p, &g, &cause) < 0);
	free(cause);
	free(p);
	free(b);
}

/* AMD waves of 64 lanes: version 5 carries the warp size after the fixed
 * header; warp maps count ceil(threads / 64) units per block; 32-lane
 * files stay at the version that describes them and read back as 32. */
static void test_warp_size(void)
{
	struct result *r = make_result(8 * 1, 64 * 8); /* 8 blocks of 64 work-items: one wave each */
	r->warp_size = 64;
	char *cause = NULL, *path = path_of("wave64.ntr");
	CHECKF(result_write(dir, "wave64.ntr", r, &cause) == 0, "%s", cause);
	struct result *g = NULL;
	CHECKF(result_read(path, &g, &cause) == 0, "%s", cause);
	if (g) {
		CHECK_EQ_INT(g->version, 5);
		CHECK_EQ_INT(g->warp_size, 64);
		CHECK_EQ_INT(result_units_per_block(g, &g->maps[0].map), 1);
		CHECK(same_map(&r->maps[0], &g->maps[0]) && same_map(&r->maps[1], &g->maps[1]));
	}
	result_free(g);
	g = NULL;
	struct result *h = NULL;
	CHECKF(result_read_head(path, &h, &cause) == 0 && h->warp_size == 64, "%s", cause ? cause : "warp size");
	result_free(h);
	size_t n;
	uint8_t *b = load("wave64.ntr", &n);
	uint32_t hdr, warp;
	memcpy(&hdr, b + 12, 4);
	memcpy(&warp, b + hdr - 4, 4);
	CHECK_EQ_INT(hdr, 108);
	CHECK_EQ_INT(warp, 64);
	warp = 48;
	memcpy(b + hdr - 4, &warp, 4);
	write_bytes(path, b, n);
	CHECK(result_read(path, &g, &cause) < 0 && strstr(cause, "warp size 48"));
	free(b);
	r->warp_size = 32;
	CHECKF(result_write(dir, "wave32.ntr", r, &cause) == 0, "%s", cause);
	free(path);
	path = path_of("wave32.ntr");
	CHECKF(result_read(path, &g, &cause) == 0, "%s", cause);
	CHECK(g && g->version < 5 && g->warp_size == 32);
	result_free(g);
	free(cause);
	free(path);
	result_free(r);
}

/* A site table (version 6): written after the names, read back entry by
 * entry, by the streaming reader too; a bad index, kind or region is
 * refused, and every truncation fails cleanly. */
static void test_sites(void)
{
	struct result *r = make_result(8 * 2, 64 * 8);
	struct engine_sites *t = &r->sites;
	t->n_files = 2;
	t->files = calloc(2, sizeof *t->files);
	t->files[0] = strdup("/src/attn.py");
	t->files[1] = strdup("/usr/include/x.h");
	t->n_funcs = 2;
	t->funcs = calloc(2, sizeof *t->funcs);
	t->funcs[0] = strdup("_Z3attnv");
	t->funcs[1] = strdup("_Z6helperv");
	t->n_regions = 1;
	t->regions = calloc(1, sizeof *t->regions);
	snprintf(t->regions[0].name, sizeof t->regions[0].name, "load");
	snprintf(t->regions[0].spec, sizeof t->regions[0].spec, "attn.py:40-55");
	t->n = 3;
	t->s = calloc(3, sizeof *t->s);
	t->s[0] = (struct engine_site){ ENGINE_SITE_INSN, -1, 0, 120, "ld.global.f32", 0, 42, 7, 1, 9 };
	t->s[1] = (struct engine_site){ ENGINE_SITE_BEGIN, 0, 1, 33, "st.global.u32", -1, 0, 0, -1, 0 };
	t->s[2] = (struct engine_site){ ENGINE_SITE_END, 0, 0, 130, "bra.uni", 0, 55, 1, -1, 0 };
	char *cause = NULL, *path = path_of("sites.ntr");
	CHECKF(result_write(dir, "sites.ntr", r, &cause) == 0, "%s", cause);
	struct result *g = NULL;
	CHECKF(result_read(path, &g, &cause) == 0, "%s", cause);
	if (g) {
		CHECK_EQ_INT(g->version, 6);
		CHECK(g->sites.n == 3 && g->sites.n_files == 2 && g->sites.n_funcs == 2 && g->sites.n_regions == 1);
		CHECK(!strcmp(g->sites.files[1], "/usr/include/x.h") && !strcmp(g->sites.funcs[1], "_Z6helperv"));
		CHECK(!strcmp(g->sites.regions[0].spec, "attn.py:40-55"));
		for (int i = 0; i < 3 && g->sites.n == 3; i++)
			CHECKF(!memcmp(&g->sites.s[i], &t->s[i], sizeof t->s[i]), "site %d differs", i);
		CHECK(same_map(&r->maps[0], &g->maps[0]) && same_map(&r->maps[1], &g->maps[1]));
	}
	result_free(g);
	g = NULL;
	CHECKF(result_read_head(path, &g, &cause) == 0 && g->sites.n == 3, "%s", cause ? cause : "no sites");
	result_free(g);
	g = NULL;
	size_t n;
	uint8_t *b = load("sites.ntr", &n);
	for (size_t cut = 0; b && cut < n; cut += 7) {
		free(cause);
		cause = NULL;
		CHECKF(result_read_mem(b, cut, &g, &cause) < 0, "truncated at %zu read", cut);
	}
	/* site 0's file index (the 5th word after its kind) past the table */
	const char *op = "ld.global.f32";
	uint8_t *at = b ? memmem(b, n, op, strlen(op)) : NULL;
	if (at) {
		uint8_t *file = at - 4 - 9 * 4 + 4 * 4;
		uint32_t bad = 9, kind = 3;
		memcpy(file, &bad, 4);
		CHECK(result_read_mem(b, n, &g, &cause) < 0 && strstr(cause, "file 9 out of range"));
		bad = 0;
		memcpy(file, &bad, 4);
		memcpy(at - 4 - 9 * 4, &kind, 4);
		CHECK(result_read_mem(b, n, &g, &cause) < 0 && strstr(cause, "site kind 3 unknown"));
	}
	free(b);
	free(cause);
	free(path);
	result_free(r);
}

/* All-zero records compress at zstd's maximum ratio: must still read back. */
static void test_compressible(void)
{
	struct result *r = make_result(0, 0);
	struct result_map *m = &r->maps[1];
	m->units = 4u << 20; /* 4M threads * 3 * 8 bytes = 96 MiB of records */
	free(m->counts);
	free(m->records);
	m->counts = calloc(m->units, 4);
	m->records = calloc(m->units * 24, 1);
	char *cause = NULL;
	CHECKF(result_write(dir, "zeros.ntr", r, &cause) == 0, "%s", cause);
	char *p = path_of("zeros.ntr");
	struct stat st;
	CHECK(stat(p, &st) == 0 && st.st_size < (1 << 20));
	struct result *g = NULL;
	CHECKF(result_read(p, &g, &cause) == 0, "%s", cause);
	CHECK(g && g->maps[1].units == m->units && g->maps[1].records_written == 0);
	result_free(g);
	result_free(r);
	free(p);
	free(cause);
}

/* ---- a file built byte by byte, as doc/trace-format.md lays it out ---- */

/* A map whose sizes agree (2^32 units of 4 + 12 bytes = 64 GiB) and a
 * 17-byte zstd frame that claims that much: the reader must refuse it
 * without trying to allocate 64 GiB. Then the same layout, honest and
 * small, must read back: the layout in the doc is the one the reader uses. */
static void test_forged_size(void)
{
	for (int honest = 0; honest <= 1; honest++) {
		uint8_t xb[512] = {0};
		struct testlib_bytes x = { xb, 0 };
		uint64_t units = honest ? 1 : 1ull << 32;
		uint64_t total = units * 16;
		memcpy(x.b, "NTOPRES", 8);
		x.n = 8;
		testlib_u32(&x, 1);
		testlib_u32(&x, 104);
		testlib_u64(&x, 0); /* file_bytes, patched below */
		while (x.n < 96)
			testlib_u32(&x, 1); /* pid .. duration: any value */
		testlib_u32(&x, 1); /* n_maps */
		testlib_u32(&x, 0);
		testlib_str(&x, "k");
		testlib_str(&x, "p");
		testlib_u32(&x, 56 + 4 + 1);
		testlib_u32(&x, PROBE_LEVEL_THREAD);
		testlib_u32(&x, 1);
		testlib_u32(&x, 12);
		testlib_u32(&x, 0);
		testlib_u32(&x, 0);
		testlib_u64(&x, units);
		testlib_u64(&x, units * 4);
		testlib_u64(&x, units * 12);
		testlib_u64(&x, 17);
		testlib_str(&x, "m");
		/* zstd frame: magic, single-segment header with an 8-byte size,
		 * one last RLE block */
		testlib_u32(&x, 0xFD2FB528u);
		x.b[x.n++] = 0xE0;
		testlib_u64(&x, total);
		uint32_t bh = 1u | 1u << 1 | (uint32_t)total << 3;
		x.b[x.n++] = (uint8_t)bh;
		x.b[x.n++] = (uint8_t)(bh >> 8);
		x.b[x.n++] = (uint8_t)(bh >> 16);
		x.b[x.n++] = 0x00; /* the repeated byte */
		for (int i = 0; i < 8; i++)
			x.b[16 + i] = (uint8_t)((uint64_t)x.n >> (8 * i));
		struct result *g = NULL;
		char *cause = NULL;
		int rc = result_read_mem(x.b, x.n, &g, &cause);
		if (honest) {
			CHECKF(rc == 0, "%s", cause);
			CHECK(g && g->maps[0].units == 1 && g->maps[0].counts[0] == 0 && g->maps[0].records_written == 0);
		} else {
			CHECKF(rc < 0 && cause && strstr(cause, "refused as a decompression bomb"), "%s", cause);
		}
		result_free(g);
		free(cause);
	}
}

/* ---- streaming reader ---- */

struct each_ctx {
	const struct result_map *want; /* the same map read by result_read */
	uint64_t next, seen, bad;
};

static void each_check(void *ctx, uint64_t unit, uint32_t slot, const uint8_t *rec)
{
	struct each_ctx *e = ctx;
	uint64_t u = 0;
	uint32_t k = 0;
	result_map_rec_pos(e->want, e->next++, &u, &k); /* file order */
	const uint8_t *w = result_map_record(e->want, unit, slot);
	if (u != unit || k != slot || !w || memcmp(w, rec, e->want->map.rec_size) != 0)
		e->bad++;
	e->seen++;
}

/* Opens path both ways: 0 when both accept it and agree on everything,
 * 1 when both refuse it, -1 when they disagree (or the stream is wrong). */
static int stream_vs_read(const char *path)
{
	struct result *g = NULL;
	struct result_stream *s = NULL;
	char *c1 = NULL, *c2 = NULL;
	int rr = result_read(path, &g, &c1);
	int rs = result_stream_open(path, &s, &c2);
	const struct result *h = s ? result_stream_result(s) : NULL;
	for (int i = 0; rs == 0 && i < h->n_maps; i++) {
		struct each_ctx e = {g ? &g->maps[i] : NULL, 0, 0, 0};
		if (!g) {
			/* result_read refused: the stream must too, at the latest in a pass */
			struct result_pass *p = NULL;
			struct result_chunk ch;
			int k = result_pass_open(s, i, &p, &c2);
			while (k == 0 && (k = result_pass_next(p, &ch, &c2)) == 1)
				k = 0;
			result_pass_free(p);
			rs = k < 0 ? -1 : 0;
			continue;
		}
		rs = result_stream_each(s, i, each_check, &e, &c2);
		const struct result_map *a = &g->maps[i], *b = &h->maps[i];
		if (rs == 0 && (e.bad || e.seen != result_map_rec_units(a) * a->stored || b->records || a->stored != b->stored ||
				memcmp(a->counts, b->counts, (size_t)a->units * 4) || a->units != b->units ||
				a->slot_major != b->slot_major || a->sample_shift != b->sample_shift ||
				a->rec_units != b->rec_units || a->records_written != b->records_written ||
				a->records_dropped != b->records_dropped ||
				a->records_unsampled != b->records_unsampled || strcmp(a->map.name, b->map.name)))
			rs = 2;
	}
	if (rr == 0 && rs == 0 && (h->n_maps != g->n_maps || h->seq != g->seq || strcmp(h->kernel, g->kernel) ||
				   memcmp(h->grid, g->grid, sizeof h->grid)))
		rs = 2;
	if (rs < 0)
		CHECK(c2 != NULL); /* a clean error */
	int out = rr == 0 && rs == 0 ? 0 : rr < 0 && rs < 0 ? 1 : -1;
	result_free(g);
	result_stream_close(s);
	free(c1);
	free(c2);
	return out;
}

/* A thread map big enough for several chunks (2 MiB each), in either
 * layout, optionally block-sampled, storing `stored` of its `cap` slots
 * (units hold at most that many records); plus a warp map. */
enum { BIG_BLOCKS = 6144 };
static struct result *make_big(int slot_major, uint32_t shift, uint32_t cap, uint32_t stored)
{
	struct result *r = make_result(64 * 4 / 32 * 2, 0);
	r->grid[0] = BIG_BLOCKS;
	r->grid[1] = 1;
	r->block[0] = 64;
	struct result_map *w = &r->maps[0];
	w->units = BIG_BLOCKS * 2;
	free(w->counts);
	free(w->records);
	w->counts = calloc(w->units, 4);
	w->records = calloc(w->units, 16);
	for (uint64_t u = 0; u < w->units; u++) {
		w->counts[u] = 16 * (u % 3);
		memset(w->records + u * 16, (int)u, 16);
	}
	struct result_map *m = &r->maps[1];
	m->units = BIG_BLOCKS * 64;
	m->map.cap = cap;
	m->stored = stored;
	m->map.rec_size = 4;
	m->slot_major = slot_major;
	m->sample_shift = shift;
	uint64_t blocks = BIG_BLOCKS, kept = (blocks + (1u << shift) - 1) >> shift;
	free(m->counts);
	free(m->records);
	m->counts = calloc(m->units, 4);
	m->records = malloc(kept * 64 * stored * 4 + 1);
	for (uint64_t u = 0; u < m->units; u++) /* past the cap (dropped) only when every slot is stored */
		m->counts[u] = rnd() % (stored == cap ? 4 * cap + 8 : 4 * stored + 4);
	for (uint64_t i = 0; i < kept * 64 * stored; i++) {
		uint32_t v = rnd();
		memcpy(m->records + i * 4, &v, 4);
	}
	return r;
}

/* The streaming reader hands out what result_read reads, in file order,
 * in every layout, with every slot stored or fewer (version 4, none at
 * all included; unit-major 3 of 4 spans 3 chunks, which start mid-unit);
 * the header, counts and derived totals agree. */
static void test_stream_layouts(void)
{
	static const int lay[][4] = {{0, 0, 3, 3}, {1, 0, 3, 3}, {1, 2, 3, 3}, {0, 3, 3, 3}, {1, 12, 3, 3},
				     {0, 0, 4, 3}, {1, 0, 4, 3}, {0, 0, 4, 1}, {1, 2, 4, 1}, {0, 3, 4, 2},
				     {1, 0, 4, 0}};
	for (size_t i = 0; i < sizeof lay / sizeof lay[0]; i++) {
		uint32_t cap = (uint32_t)lay[i][2], stored = (uint32_t)lay[i][3];
		struct result *r = make_big(lay[i][0], (uint32_t)lay[i][1], cap, stored);
		char *cause = NULL;
		CHECKF(result_write(dir, "big.ntr", r, &cause) == 0, "%s", cause);
		char *p = path_of("big.ntr");
		CHECKF(stream_vs_read(p) == 0, "layout %zu: streaming reader disagrees", i);
		struct result *h = NULL;
		CHECK(result_read_head(p, &h, &cause) == 0 && h && h->maps[1].records == NULL &&
		      h->maps[1].counts[7] == r->maps[1].counts[7] && h->maps[1].stored == stored &&
		      h->version == (stored < cap ? 4u : lay[i][1] ? 3u : lay[i][0] ? 2u : 1u));
		result_free(h);
		unlink(p);
		free(p);
		free(cause);
		result_free(r);
	}
	/* sampled maps as the hook writes them: the kept units' counts only */
	static const int kept_lay[][4] = {{1, 2, 3, 3}, {1, 12, 3, 3}, {1, 2, 4, 1}};
	for (size_t i = 0; i < sizeof kept_lay / sizeof kept_lay[0]; i++) {
		struct result *r = make_big(1, (uint32_t)kept_lay[i][1], (uint32_t)kept_lay[i][2], (uint32_t)kept_lay[i][3]);
		struct result_map *m = &r->maps[1];
		m->units_per_block = 64;
		m->rec_units = ((BIG_BLOCKS + (1u << m->sample_shift) - 1) >> m->sample_shift) * 64;
		for (uint64_t k = 0; k < m->rec_units; k++)
			m->counts[k] = m->counts[result_map_unit_at(m, k)];
		m->counts_kept_only = 1;
		char *cause = NULL;
		CHECKF(result_write(dir, "big.ntr", r, &cause) == 0, "%s", cause);
		char *p = path_of("big.ntr");
		CHECKF(stream_vs_read(p) == 0, "kept counts %zu: streaming reader disagrees", i);
		struct result *h = NULL;
		CHECK(result_read_head(p, &h, &cause) == 0 && h && h->maps[1].unsampled_unknown &&
		      h->maps[1].counts[0] == m->counts[0] && h->maps[1].counts[64] == 0);
		result_free(h);
		unlink(p);
		free(p);
		free(cause);
		result_free(r);
	}
	/* the small files of the other tests too, empty maps included */
	char *p = path_of("small.ntr");
	CHECK(stream_vs_read(p) == 0);
	free(p);
	struct result_stream *s = NULL;
	char *cause = NULL;
	CHECK(result_stream_open("/nonexistent/x.ntr", &s, &cause) < 0 && s == NULL && strstr(cause, "x.ntr"));
	free(cause);
}

/* ---- version 4: fewer record slots stored than the cap ---- */

/* make_layout's map (5 units, cap 3) storing its first `stored` slots:
 * unit u holds u % (stored + 1) records, record (u, k) bytes u*16 + k,
 * put by hand at stride `stored` (unit-major) or 5 (slot-major). */
static struct result *make_stored(int slot_major, uint32_t stored)
{
	struct result *r = make_layout(slot_major);
	struct result_map *m = &r->maps[0];
	m->stored = stored;
	memset(m->records, 0xee, 5 * 3 * 4);
	for (uint32_t u = 0; u < 5; u++) {
		m->counts[u] = 4 * (u % (stored + 1));
		for (uint32_t k = 0; k < stored; k++) {
			uint64_t i = slot_major ? k * 5 + u : u * stored + k;
			memset(m->records + i * 4, (int)(u * 16 + k), 4);
		}
	}
	return r;
}

/* Offsets in a file of make_layout's single map ("k", "p", map "lay", no
 * fields): its descriptor and its frame. */
#define LAY_DESC (104 + 4 + 1 + 4 + 1)
#define LAY_FRAME (LAY_DESC + 56 + 4 + 3)

static uint64_t get_u64(const uint8_t *b)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | b[i];
	return v;
}

static void put_u64(uint8_t *b, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
}

/* Every slot where make_stored put it, NULL past `stored`; every index of
 * the record area holds the (unit, slot) result_map_rec_pos names, at the
 * index the layout gives. */
static int stored_ok(const struct result_map *m, uint32_t stored)
{
	int ok = m->stored == stored;
	for (uint32_t u = 0; ok && u < 5; u++)
		for (uint32_t k = 0; k < 3; k++) {
			const uint8_t *x = result_map_record(m, u, k);
			ok &= k < stored ? x && x[0] == u * 16 + k && x[3] == u * 16 + k : x == NULL;
		}
	for (uint64_t i = 0; ok && i < 5 * stored; i++) {
		uint64_t u = 0;
		uint32_t k = 0;
		result_map_rec_pos(m, i, &u, &k);
		ok &= u < 5 && k < stored && m->records[i * 4] == u * 16 + k &&
		      (m->slot_major ? i == k * 5 + u : i == u * stored + k);
	}
	return ok;
}

/* Round trip in both layouts with 0 to 3 of the 3 slots stored: the file
 * holds exactly the stored slots, is version 4 when fewer than the cap
 * (otherwise what it was), and reads back with every record where it was
 * put; the streaming reader agrees. */
static void test_stored_round_trip(void)
{
	char *cause = NULL;
	char *p = path_of("v4.ntr");
	for (int sm = 0; sm < 2; sm++)
		for (uint32_t st = 0; st <= 3; st++) {
			struct result *r = make_stored(sm, st), *g = NULL;
			CHECK(stored_ok(&r->maps[0], st)); /* the hand layout is the accessor's */
			CHECK(result_map_most_records(&r->maps[0]) == st);
			CHECKF(result_write(dir, "v4.ntr", r, &cause) == 0, "%s", cause);
			CHECKF(result_read(p, &g, &cause) == 0, "%s", cause);
			const struct result_map *gm = g ? &g->maps[0] : NULL;
			uint64_t written = 0;
			for (uint32_t u = 0; u < 5; u++)
				written += u % (st + 1);
			CHECKF(g && g->version == (st < 3 ? 4u : sm ? 2u : 1u) && stored_ok(gm, st) &&
			       gm->records_written == written && gm->records_dropped == 0,
			       "layout %d, %u stored: did not round-trip", sm, st);
			CHECK(stream_vs_read(p) == 0);
			size_t n;
			uint8_t *b = load("v4.ntr", &n);
			CHECK(b && get_u64(b + LAY_DESC + 40) == 5 * st * 4 && get_u64(b + LAY_DESC + 32) == 5 * 4);
			free(b);
			result_free(g);
			result_free(r);
		}
	unlink(p);
	free(p);
	free(cause);
}

/* Block sampling with fewer slots stored: 5 blocks of 2 threads, cap 2,
 * blocks 0, 2 and 4 kept (6 units), 1 slot stored. The units of blocks not
 * kept tried 5 records each (they bound nothing); the file is version 4
 * and holds 6 records. */
static void test_stored_sampled(void)
{
	char *cause = NULL;
	char *p = path_of("v4s.ntr");
	for (int sm = 0; sm < 2; sm++) {
		struct result *r = make_layout(sm), *g = NULL;
		layout_1d(r, 2, 5);
		struct result_map *m = &r->maps[0];
		m->units = 10;
		m->map.cap = 2;
		m->stored = 1;
		m->sample_shift = 1;
		m->units_per_block = 2; /* for result_map_record on this struct */
		m->rec_units = 6;
		free(m->counts);
		free(m->records);
		m->counts = calloc(10, 4);
		m->records = calloc(6, 4);
		for (uint32_t u = 0; u < 10; u++) {
			uint32_t b = u / 2;
			m->counts[u] = b % 2 ? 4 * 5 : 4 * (u % 2); /* kept: 0 or 1 record */
			if (b % 2 == 0) /* at ru = (b / 2) * 2 + u % 2 in either layout (1 slot) */
				memset(m->records + ((b / 2) * 2 + u % 2) * 4, (int)(u * 16), 4);
		}
		CHECK(result_map_most_records(m) == 1);
		CHECKF(result_write(dir, "v4s.ntr", r, &cause) == 0, "%s", cause);
		CHECKF(result_read(p, &g, &cause) == 0, "%s", cause);
		const struct result_map *gm = g ? &g->maps[0] : NULL;
		CHECK(g && g->version == 4 && gm->stored == 1 && gm->rec_units == 6 && gm->sample_shift == 1);
		int ok = gm != NULL;
		for (uint32_t u = 0; gm && u < 10; u++) {
			const uint8_t *x = result_map_record(gm, u, 0);
			ok &= (u / 2) % 2 ? x == NULL : x && x[0] == u * 16;
			ok &= result_map_record(gm, u, 1) == NULL;
		}
		CHECKF(ok, "layout %d: sampled v4 records not where they were put", sm);
		CHECK(gm && gm->records_written == 3 && gm->records_dropped == 0 && gm->records_unsampled == 20);
		CHECK(stream_vs_read(p) == 0);
		size_t n;
		uint8_t *b = load("v4s.ntr", &n);
		CHECK(b && get_u64(b + LAY_DESC + 40) == 6 * 4);
		free(b);
		result_free(g);
		/* a kept unit with 2 records: the writer refuses to lose one */
		m->counts[4] = 8;
		CHECK(result_write(dir, "v4s.ntr", r, &cause) < 0 && strstr(cause, "unit 4 holds more records (2)"));
		result_free(r);
	}
	unlink(p);
	free(p);
	free(cause);
}

/* The writer refuses what the reader would: more slots than the cap, and a
 * unit holding more records than are stored (a caller that left stored 0
 * while its units wrote records loses nothing silently). */
static void test_stored_write_refused(void)
{
	char *cause = NULL;
	struct result *r = make_stored(1, 2);
	r->maps[0].stored = 4;
	CHECK(result_write(dir, "v4.ntr", r, &cause) < 0 && strstr(cause, "bad sizes"));
	r->maps[0].stored = 1; /* unit 2 holds 2 */
	CHECK(result_write(dir, "v4.ntr", r, &cause) < 0 &&
	      strstr(cause, "unit 2 holds more records (2) than are stored (1)"));
	r->maps[0].stored = 0; /* unit 1 holds 1 */
	CHECK(result_write(dir, "v4.ntr", r, &cause) < 0 && strstr(cause, "unit 1 holds more records (1)"));
	/* a count past the cap is records dropped, not more records held */
	r->maps[0].stored = 3;
	r->maps[0].counts[0] = 4 * 9;
	CHECKF(result_write(dir, "v4.ntr", r, &cause) == 0, "%s", cause);
	char *p = path_of("v4.ntr");
	unlink(p);
	free(p);
	result_free(r);
	free(cause);
}

/* File b (make_layout's single map) with its frame's content changed by
 * `edit` and compressed again (with a checksum), frame and file sizes
 * patched: a file the writer would not make but whose sizes agree. */
static uint8_t *reframe(const uint8_t *b, size_t n, void (*edit)(uint8_t *content, size_t len), size_t *out_n)
{
	size_t fb = (size_t)get_u64(b + LAY_DESC + 48);
	if (LAY_FRAME + fb != n)
		return NULL;
	size_t len = (size_t)ZSTD_getFrameContentSize(b + LAY_FRAME, fb);
	uint8_t *content = malloc(len + 1);
	if (ZSTD_decompress(content, len, b + LAY_FRAME, fb) != len) {
		free(content);
		return NULL;
	}
	edit(content, len);
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
	size_t bound = ZSTD_compressBound(len);
	uint8_t *out = malloc(LAY_FRAME + bound);
	memcpy(out, b, LAY_FRAME);
	size_t z = ZSTD_compress2(cc, out + LAY_FRAME, bound, content, len);
	ZSTD_freeCCtx(cc);
	free(content);
	if (ZSTD_isError(z)) {
		free(out);
		return NULL;
	}
	put_u64(out + LAY_DESC + 48, z);
	put_u64(out + 16, LAY_FRAME + z);
	*out_n = LAY_FRAME + z;
	return out;
}

static void edit_nothing(uint8_t *content, size_t len)
{
	(void)content;
	(void)len;
}

static void edit_count_unit2(uint8_t *content, size_t len)
{
	if (len >= 12)
		content[8] = 3 * 4; /* unit 2 (counts[2], bytes 8..11): 3 records */
}

/* Corrupt version-4 files, refused by both readers with the cause: record
 * bytes that are not whole slots, more slots than the cap, a unit holding
 * more records than the file stores. The version says what the record bytes
 * mean: a v4 file read as v3 is refused, a whole v2 file read as v4 stores
 * every slot. */
static void test_stored_corrupt(void)
{
	char *cause = NULL;
	char *p = path_of("v4c.ntr");
	struct result *r = make_stored(0, 2), *g = NULL;
	CHECKF(result_write(dir, "v4c.ntr", r, &cause) == 0, "%s", cause);
	size_t n, m = 0;
	uint8_t *b = load("v4c.ntr", &n);
	CHECK(b && b[8] == 4 && get_u64(b + LAY_DESC + 40) == 5 * 2 * 4);
	if (b) {
		/* the frame made again unchanged reads back: the helper is sound */
		uint8_t *c = reframe(b, n, edit_nothing, &m);
		CHECK(c && result_read_mem(c, m, &g, &cause) == 0 && stored_ok(&g->maps[0], 2));
		result_free(g);
		g = NULL;
		free(c);
		c = reframe(b, n, edit_count_unit2, &m);
		CHECK(c && result_read_mem(c, m, &g, &cause) < 0 && g == NULL &&
		      strstr(cause, "unit 2 holds more records (3) than the file stores per unit (2)"));
		if (c) {
			write_bytes(p, c, m);
			CHECK(stream_vs_read(p) == 1);
		}
		free(c);
		/* record sizes that are no stored slots (refused before the frame) */
		b[LAY_DESC + 40] = 5 * 2 * 4 - 4;
		CHECK(result_read_mem(b, n, &g, &cause) < 0 && strstr(cause, "not whole slots of 5 units of 4 bytes"));
		write_bytes(p, b, n);
		CHECK(stream_vs_read(p) == 1);
		b[LAY_DESC + 40] = 5 * 4 * 4;
		CHECK(result_read_mem(b, n, &g, &cause) < 0 &&
		      strstr(cause, "store 4 slots per unit, more than its cap 3"));
		write_bytes(p, b, n);
		CHECK(stream_vs_read(p) == 1);
		b[LAY_DESC + 40] = 5 * 2 * 4;
		CHECK(result_read_mem(b, n, &g, &cause) == 0);
		result_free(g);
		g = NULL;
		b[8] = 3; /* to a v3 reader the record bytes are 3 slots a unit */
		CHECK(result_read_mem(b, n, &g, &cause) < 0 && strstr(cause, "sizes disagree"));
	}
	free(b);
	result_free(r);
	/* a whole file (version 2, every slot) read as version 4: every slot stored */
	r = make_layout(1);
	CHECKF(result_write(dir, "v4c.ntr", r, &cause) == 0, "%s", cause);
	b = load("v4c.ntr", &n);
	CHECK(b && b[8] == 2);
	if (b) {
		b[8] = 4;
		CHECK(result_read_mem(b, n, &g, &cause) == 0 && g->maps[0].stored == 3 && layout_ok(g));
		result_free(g);
	}
	free(b);
	result_free(r);
	unlink(p);
	free(p);
	free(cause);
}

/* Every truncation and every flipped byte of file `name`: the streaming
 * reader refuses exactly what result_read refuses (the frame's end and
 * checksum at the end of a pass), with a clean error. */
static void test_stream_corrupt(const char *name)
{
	size_t n;
	uint8_t *b = load(name, &n);
	CHECKF(b && n > 200, "%s", name);
	char *p = path_of("trunc.ntr");
	int disagree = 0, refused = 0;
	for (size_t cut = 0; b && cut < n; cut++) {
		write_bytes(p, b, cut);
		int k = stream_vs_read(p);
		disagree += k < 0;
		refused += k == 1;
	}
	CHECK_EQ_INT(disagree, 0);
	CHECK_EQ_INT(refused, (int64_t)n);
	static const uint8_t xors[] = {0x01, 0x80, 0xff};
	int runs = 0;
	refused = 0;
	for (size_t i = 0; b && i < n; i++)
		for (size_t x = 0; x < sizeof xors; x++) {
			b[i] ^= xors[x];
			write_bytes(p, b, n);
			int k = stream_vs_read(p);
			CHECKF(k >= 0, "%s: byte %zu ^ 0x%x: the readers disagree", name, i, xors[x]);
			refused += k == 1;
			runs++;
			b[i] ^= xors[x];
		}
	CHECKF(refused > runs / 2, "%s: %d of %d corruptions refused", name, refused, runs);
	unlink(p);
	free(p);
	free(b);
}

/* small.ntr's maps with the thread map storing 2 of its 3 slots (version 4). */
static void write_small_v4(void)
{
	struct result *r = make_result(4, 8);
	struct result_map *m = &r->maps[1];
	m->stored = 2;
	for (uint64_t u = 0; u < m->units; u++)
		m->counts[u] %= 3 * m->map.rec_size; /* at most 2 records */
	char *cause = NULL;
	CHECKF(result_write(dir, "small4.ntr", r, &cause) == 0, "%s", cause);
	size_t n;
	uint8_t *b = load("small4.ntr", &n);
	CHECK(b && b[8] == 4);
	free(b);
	free(cause);
	result_free(r);
}

static void cleanup(void)
{
	static const char *names[] = {"1234-77.ntr", "empty.ntr", "trunc.ntr",
				      "mv.ntr", "zeros.ntr", "small.ntr", "small4.ntr", "wave64.ntr", "wave32.ntr",
				      "sites.ntr"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		char *p = path_of(names[i]);
		unlink(p);
		free(p);
	}
	CHECKF(rmdir(dir) == 0, "leftover files in %s", dir);
}

/* The per-unit passes (most records, derived counts) walk units in runs
 * instead of dividing per unit: they must agree with the plain definition
 * on every shape of map, sampled or not, with power-of-two record sizes
 * and others, counts past the cap and counts that are no whole records. */
static void test_unit_walk(void)
{
	static const uint32_t rec_sizes[] = { 16, 24, 4, 12 };
	uint64_t seed = 12345;
	for (int t = 0; t < 400; t++) {
		struct result_map m;
		memset(&m, 0, sizeof m);
		m.map.rec_size = rec_sizes[t % 4];
		m.map.cap = 1 + (uint32_t)(t % 5);
		uint64_t upb = 1 + (uint64_t)(t % 7), blocks = 1 + (uint64_t)(t % 37);
		m.units = upb * blocks;
		m.units_per_block = upb;
		m.sample_shift = (uint32_t)(t % 4);
		uint32_t counts[7 * 37];
		m.counts = counts;
		for (uint64_t u = 0; u < m.units; u++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			uint32_t r = (uint32_t)(seed >> 33);
			counts[u] = r % 4 == 0 ? 0 : (r % 7) * m.map.rec_size + (r % 13 == 0 ? r % m.map.rec_size : 0);
		}
		uint64_t cap_b = (uint64_t)m.map.cap * m.map.rec_size, most = 0, att = 0, wr = 0, uns = 0;
		for (uint64_t u = 0; u < m.units; u++) {
			uint64_t c = counts[u], n = (c < cap_b ? c : cap_b) / m.map.rec_size;
			if (!result_map_unit_kept(&m, u)) {
				uns += c / m.map.rec_size;
				continue;
			}
			att += c / m.map.rec_size;
			wr += n;
			most = n > most ? n : most;
		}
		result_map_derive_counts(&m);
		CHECK(result_map_most_records(&m) == most);
		CHECK(m.records_written == wr && m.records_dropped == att - wr && m.records_unsampled == uns);
	}
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	test_round_trip();
	test_unit_walk();
	test_layouts();
	test_sampled_layout();
	test_prefix_sampled();
	test_empty_and_errors();
	test_truncation();
	test_corruption();
	test_magic_version();
	test_warp_size();
	test_sites();
	test_compressible();
	test_forged_size();
	test_stream_layouts();
	test_stream_corrupt("small.ntr");
	test_stored_round_trip();
	test_stored_sampled();
	test_stored_write_refused();
	test_stored_corrupt();
	write_small_v4();
	test_stream_corrupt("small4.ntr");
	cleanup();
	return testlib_report();
}
