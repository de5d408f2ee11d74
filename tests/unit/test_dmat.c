/* The DMAT model (viz/dmat.h) on synthetic dmat results with known answers:
 * linear, strided, gather (seeded shuffle), scatter and random patterns
 * binned to exact cell counts; 32-bit clocks wrapping inside a block; the
 * collapsed page axis and allocations; unused slots past each unit's count
 * (filled with garbage) never counted; the log colour scale at its ends;
 * global-timer time; viewport; cursor readout; and 10M records binned with
 * the model's memory independent of the record count. */
#include <math.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"
#include "trace/result.h"
#include "viz/dmat.h"
#include "viz/lines.h"
#include "viz/theme.h"

#define BASE 0x7f0000000000ull
#define PAGE 4096ull

/* ---- synthetic results ---- */

static void syn_field(struct probe_map *pm, const char *name, enum probe_type t)
{
	struct probe_field *f = &pm->fields[pm->n_fields++];
	snprintf(f->name, sizeof f->name, "%s", name);
	f->type = t;
	f->offset = pm->rec_size;
	pm->rec_size += t;
}

/* blocks x threads, thread map "dmat" {addr:u64, clock:u32, sizekind:u32}
 * (or {addr:u64, gtime:u64} with gtime), every slot filled with garbage. */
static struct result *syn_result(uint32_t blocks, uint32_t threads, uint32_t cap, int gtime)
{
	struct result *r = calloc(1, sizeof *r);
	r->pid = 77;
	r->seq = 1;
	r->kernel = strdup("_Z4dmatPf");
	r->probes = strdup("dmat");
	r->grid[0] = blocks;
	r->grid[1] = r->grid[2] = 1;
	r->block[0] = threads;
	r->block[1] = r->block[2] = 1;
	r->device_sms = 132;
	r->sm_clock_khz = 1980000;
	r->n_maps = 1;
	r->maps = calloc(1, sizeof *r->maps);
	struct result_map *m = &r->maps[0];
	snprintf(m->map.name, sizeof m->map.name, "dmat");
	m->map.level = PROBE_LEVEL_THREAD;
	m->map.cap = cap;
	m->stored = m->map.cap;
	m->slot_major = cap > 1; /* as the hook writes thread maps (test_render_dmat: unit-major) */
	syn_field(&m->map, "addr", PROBE_U64);
	if (gtime) {
		syn_field(&m->map, "gtime", PROBE_U64);
	} else {
		syn_field(&m->map, "clock", PROBE_U32);
		syn_field(&m->map, "sizekind", PROBE_U32);
	}
	m->units = (uint64_t)blocks * threads;
	m->counts = calloc(m->units, 4);
	size_t bytes = m->units * cap * m->map.rec_size;
	m->records = malloc(bytes);
	memset(m->records, 0xa5, bytes); /* garbage: must never be read */
	return r;
}

/* Record i of unit u; the unit's count grows to cover it. */
static void syn_put(struct result *r, uint64_t u, uint32_t i, uint64_t addr, uint64_t t, uint32_t size,
		    uint32_t kind)
{
	struct result_map *m = &r->maps[0];
	uint8_t *rec = (uint8_t *)result_map_record(m, u, i);
	memcpy(rec, &addr, 8);
	if (m->map.rec_size == 16 && m->map.fields[1].type == PROBE_U64) {
		memcpy(rec + 8, &t, 8);
	} else {
		uint32_t c = (uint32_t)t, sk = size | kind << 24;
		memcpy(rec + 8, &c, 4);
		memcpy(rec + 12, &sk, 4);
	}
	if (m->counts[u] < (i + 1) * m->map.rec_size)
		m->counts[u] = (i + 1) * m->map.rec_size;
}

static void syn_finish(struct result *r)
{
	struct result_map *m = &r->maps[0];
	uint64_t written = 0, attempted = 0;
	for (uint64_t u = 0; u < m->units; u++) {
		uint64_t n = m->counts[u] / m->map.rec_size;
		if (!result_map_unit_kept(m, u))
			continue;
		attempted += n;
		written += n < m->map.cap ? n : m->map.cap;
	}
	m->records_written = written;
	m->records_dropped = attempted - written;
}

static char tmpdir[] = "/tmp/ntop-test-dmat-XXXXXX";

static char *twin_path(void)
{
	static char p[64];
	snprintf(p, sizeof p, "%s/twin.ntr", tmpdir);
	return p;
}

static int grids_equal(const struct dmat *a, const struct dmat *b, const struct dmat_view *v, int cols, int rows)
{
	uint32_t *ga = calloc((size_t)cols * rows, 4), *gb = calloc((size_t)cols * rows, 4);
	int ok = dmat_bin(a, v, cols, rows, ga, NULL) == 0 && dmat_bin(b, v, cols, rows, gb, NULL) == 0 &&
		 memcmp(ga, gb, (size_t)cols * rows * 4) == 0;
	free(ga);
	free(gb);
	return ok;
}

/* The same model streamed from a file (dmat_open): every total, the axis,
 * the histogram and the binned grids agree with the in-memory one; a
 * model with a tiny histogram re-reads the file for fine views, exactly. */
static void twin_check(const struct result *r, const struct dmat_opts *o, const struct dmat *m)
{
	char *cause = NULL;
	CHECKF(result_write(tmpdir, "twin.ntr", r, &cause) == 0, "%s", cause);
	struct dmat *f = NULL;
	CHECKF(dmat_open(twin_path(), m->map_index, o, &f, &cause) == 0, "%s", cause);
	free(cause);
	if (!f)
		return;
	CHECK(f->st && f->r->maps[f->map_index].records == NULL);
	CHECKF(f->records == m->records && f->accesses == m->accesses && f->dropped == m->dropped &&
	      f->unsampled == m->unsampled && f->bytes == m->bytes && f->blocks_seen == m->blocks_seen &&
	      f->g0 == m->g0 && f->span == m->span && f->addr_min == m->addr_min && f->addr_max == m->addr_max &&
	      f->n_rows == m->n_rows && f->n_runs == m->n_runs && f->time == m->time,
	      "file model: %llu records %llu accesses %llu dropped %llu unsampled %llu blocks %g span; memory: %llu %llu %llu %llu %llu %g",
	      (unsigned long long)f->records, (unsigned long long)f->accesses, (unsigned long long)f->dropped,
	      (unsigned long long)f->unsampled, (unsigned long long)f->blocks_seen, f->span,
	      (unsigned long long)m->records, (unsigned long long)m->accesses, (unsigned long long)m->dropped,
	      (unsigned long long)m->unsampled, (unsigned long long)m->blocks_seen, m->span);
	CHECK(memcmp(f->by_kind, m->by_kind, sizeof f->by_kind) == 0);
	CHECK(memcmp(f->runs, m->runs, m->n_runs * sizeof *m->runs) == 0);
	CHECK(f->hist_cols == m->hist_cols && f->hist_rows == m->hist_rows &&
	      (!m->hist || memcmp(f->hist, m->hist, (size_t)m->hist_cols * m->hist_rows * 4) == 0));
	struct dmat_view v;
	dmat_view_fit(m, &v);
	CHECK(grids_equal(m, f, &v, 7, 5));
	CHECK(grids_equal(m, f, &v, 64, (int)m->n_rows + 1));
	struct dmat_opts o2 = *o;
	o2.hist_cols = o2.hist_rows = 2;
	struct dmat *g = NULL;
	CHECK(dmat_open(twin_path(), m->map_index, &o2, &g, NULL) == 0);
	if (g && m->hist_bw == 1 && m->hist_rh == 1) {
		CHECK(g->hist_cols <= 2 && g->hist_rows <= 2);
		int rows = (int)m->n_rows + 1;
		CHECK(m->span <= 2 || m->n_rows <= 2 || !dmat_bin_fast(g, &v, 64, rows));
		CHECK(grids_equal(m, g, &v, 64, rows)); /* exact, re-read from the file */
	}
	dmat_free(g);
	dmat_free(f);
	unlink(twin_path());
}

static struct dmat *mk(const struct result *r, uint64_t page, uint64_t gap_keep)
{
	struct dmat_opts o;
	dmat_opts_init(&o);
	o.page_size = page;
	o.gap_keep = gap_keep;
	struct dmat *m = NULL;
	char *cause = NULL;
	CHECKF(dmat_create(r, dmat_find_map(r), &o, &m, &cause) == 0, "%s", cause);
	free(cause);
	if (m)
		twin_check(r, &o, m);
	return m;
}

static uint32_t *bin(const struct dmat *m, const struct dmat_view *v, int cols, int rows, uint32_t *mx)
{
	uint32_t *g = malloc((size_t)cols * rows * sizeof *g);
	CHECK(dmat_bin(m, v, cols, rows, g, mx) == 0);
	return g;
}

static uint64_t grid_sum(const uint32_t *g, size_t n)
{
	uint64_t s = 0;
	for (size_t i = 0; i < n; i++)
		s += g[i];
	return s;
}

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void shuffle(uint32_t *p, uint32_t n, uint64_t seed)
{
	for (uint32_t i = 0; i < n; i++)
		p[i] = i;
	for (uint32_t i = n - 1; i > 0; i--) {
		uint32_t j = (uint32_t)(rng_next(&seed) % (i + 1)), t = p[i];
		p[i] = p[j];
		p[j] = t;
	}
}

/* ---- patterns ---- */

/* 4 blocks x 128 threads, iteration k reads page k (32 B per thread) at
 * block clock + 10 + 100k; block 3's clock wraps 2^32 between iterations. */
static void test_linear(void)
{
	struct result *r = syn_result(4, 128, 8, 0);
	uint64_t off[4] = {5000, 123456789, 4000000000u, 0xffffffffull - 150};
	for (uint32_t b = 0; b < 4; b++)
		for (uint32_t t = 0; t < 128; t++)
			for (uint32_t k = 0; k < 4; k++)
				syn_put(r, b * 128 + t, k, BASE + k * PAGE + t * 32, off[b] + 10 + k * 100 + t % 3, 4,
					DMAT_KIND_LOAD);
	syn_finish(r);
	struct dmat *m = mk(r, 0, 0);
	CHECK_EQ_INT(m->page_size, 4096);
	CHECK_EQ_INT(m->time, DMAT_TIME_SM);
	CHECK_EQ_INT(m->records, 2048);
	CHECK_EQ_INT(m->accesses, 2048);
	CHECK_EQ_INT(m->by_kind[DMAT_KIND_LOAD], 2048);
	CHECK_EQ_INT(m->bytes, 2048 * 4);
	CHECK_EQ_INT(m->n_runs, 1);
	CHECK_EQ_INT(m->n_rows, 4);
	CHECK_EQ_INT((uint64_t)m->span, 303); /* 3 * 100 + 2 + 1, wrap or not */
	CHECK_EQ_INT(m->addr_min, BASE);
	CHECK_EQ_INT(m->addr_max, BASE + 3 * PAGE + 127 * 32);
	struct dmat_view v;
	dmat_view_fit(m, &v);
	uint32_t mx = 0, *g = bin(m, &v, 4, 4, &mx);
	/* time 0..2 -> col 0, 100..102 -> 1, 200..202 -> 2, 300..302 -> 3; row = page */
	for (int row = 0; row < 4; row++)
		for (int col = 0; col < 4; col++)
			CHECKF(g[row * 4 + col] == (row == col ? 512u : 0u), "cell %d,%d = %u", col, row, g[row * 4 + col]);
	CHECK_EQ_INT(mx, 512);
	/* finer: one column per cycle shows the t % 3 skew: 43, 43, 42 threads x 4 blocks */
	free(g);
	g = bin(m, &v, 303, 4, NULL);
	CHECK_EQ_INT(g[0 * 303 + 0], 43 * 4);
	CHECK_EQ_INT(g[0 * 303 + 2], 42 * 4);
	CHECK_EQ_INT(g[3 * 303 + 301], 43 * 4);
	CHECK_EQ_INT(g[1 * 303 + 0], 0);
	CHECK_EQ_INT(grid_sum(g, 303 * 4), 2048);
	free(g);
	dmat_free(m);
	result_free(r);
}

/* One access per thread, 2 pages apart: small gaps stay as empty rows in one
 * run; with gap_keep below a page every page is its own run. */
static void test_strided(void)
{
	struct result *r = syn_result(1, 128, 1, 0);
	for (uint32_t t = 0; t < 128; t++)
		syn_put(r, t, 0, BASE + (uint64_t)t * 2 * PAGE, 1000 + t, 8, DMAT_KIND_STORE);
	syn_finish(r);
	struct dmat *m = mk(r, 0, 0);
	CHECK_EQ_INT(m->n_runs, 1);
	CHECK_EQ_INT(m->n_rows, 255);
	CHECK_EQ_INT(dmat_addr_row(m, BASE + 2 * PAGE + 5), 2);
	CHECK_EQ_INT(dmat_addr_row(m, BASE + PAGE), 1); /* a kept gap row */
	struct dmat_view v;
	dmat_view_fit(m, &v);
	uint32_t *g = bin(m, &v, 128, 255, NULL);
	for (int row = 0; row < 255; row++)
		for (int col = 0; col < 128; col++)
			if (g[row * 128 + col] != (row % 2 == 0 && row / 2 == col ? 1u : 0u))
				CHECKF(0, "strided cell %d,%d = %u", col, row, g[row * 128 + col]);
	free(g);
	dmat_free(m);
	m = mk(r, 0, 1);
	CHECK_EQ_INT(m->n_runs, 128);
	CHECK_EQ_INT(m->n_rows, 128);
	CHECK_EQ_INT(m->runs[5].page0, (BASE / PAGE) + 10);
	CHECK_EQ_INT(m->runs[5].row0, 5);
	CHECK_EQ_INT(dmat_addr_row(m, BASE + PAGE), -1); /* collapsed */
	CHECK_EQ_INT(dmat_row_addr(m, 7), BASE + 14 * PAGE);
	dmat_view_fit(m, &v);
	g = bin(m, &v, 128, 128, NULL);
	int diag = 1;
	for (int i = 0; i < 128 * 128; i++)
		diag &= g[i] == (i / 128 == i % 128 ? 1u : 0u);
	CHECK(diag);
	/* fewer rows than pages: two pages per row, each page counted once */
	free(g);
	g = bin(m, &v, 1, 64, NULL);
	for (int i = 0; i < 64; i++)
		CHECK_EQ_INT(g[i], 2);
	free(g);
	dmat_free(m);
	result_free(r);
}

/* gather (loads) and scatter (stores) through a seeded permutation: thread g
 * of warp w touches page perm[g] at time 50 w; kind filters pick one. */
static void test_gather_scatter(void)
{
	enum { N = 256 };
	uint32_t perm[N];
	shuffle(perm, N, 0x9e3779b97f4a7c15ull);
	struct result *r = syn_result(1, N, 2, 0);
	for (uint32_t g = 0; g < N; g++) {
		syn_put(r, g, 0, BASE + (uint64_t)perm[g] * PAGE + 4 * g % 64, 777 + (g / 32) * 50, 4, DMAT_KIND_LOAD);
		syn_put(r, g, 1, BASE + (uint64_t)perm[N - 1 - g] * PAGE, 777 + (g / 32) * 50 + 25, 4, DMAT_KIND_STORE);
	}
	syn_finish(r);
	struct dmat *m = mk(r, 0, 0);
	CHECK_EQ_INT(m->n_rows, N);
	CHECK_EQ_INT(m->by_kind[DMAT_KIND_LOAD], N);
	CHECK_EQ_INT(m->by_kind[DMAT_KIND_STORE], N);
	CHECK_EQ_INT((uint64_t)m->span, 7 * 50 + 25 + 1);
	struct dmat_view v = {0, 400, 0, N};
	uint32_t *g = bin(m, &v, 16, N, NULL); /* 25 cycles per column: loads in even, stores in odd */
	int ok = 1;
	for (uint32_t t = 0; t < N; t++) {
		ok &= g[perm[t] * 16 + (t / 32) * 2] == 1;
		ok &= g[perm[N - 1 - t] * 16 + (t / 32) * 2 + 1] == 1;
	}
	CHECK(ok);
	CHECK_EQ_INT(grid_sum(g, 16 * N), 2 * N);
	free(g);
	dmat_free(m);
	/* stores only */
	struct dmat_opts o;
	dmat_opts_init(&o);
	o.kinds = 1u << DMAT_KIND_STORE;
	char *cause = NULL;
	CHECK(dmat_create(r, 0, &o, &m, &cause) == 0);
	CHECK_EQ_INT(m->accesses, N);
	CHECK_EQ_INT(m->records, 2 * N);
	CHECK_EQ_INT((uint64_t)m->span, 7 * 50 + 25 + 1); /* block origin: its first access of any kind */
	g = bin(m, &v, 16, N, NULL);
	ok = 1;
	for (uint32_t t = 0; t < N; t++)
		ok &= g[perm[N - 1 - t] * 16 + (t / 32) * 2 + 1] == 1 && g[perm[t] * 16 + (t / 32) * 2] == 0;
	CHECK(ok);
	free(g);
	dmat_free(m);
	result_free(r);
}

/* Random addresses in 64 pages and random times over 3 blocks, checked
 * against a binning written out here. */
static void test_random(void)
{
	enum { B = 3, T = 64, K = 16, PAGES = 64, COLS = 10, ROWS = 64 };
	struct result *r = syn_result(B, T, K, 0);
	static uint32_t want[ROWS][COLS];
	uint64_t s = 12345, tmax = 0;
	static uint64_t pg[B][T][K], tm[B][T][K];
	for (int b = 0; b < B; b++)
		for (int t = 0; t < T; t++)
			for (int k = 0; k < K; k++) {
				pg[b][t][k] = rng_next(&s) % PAGES;
				tm[b][t][k] = rng_next(&s) % 1000;
			}
	tm[0][0][0] = tm[1][5][3] = tm[2][63][15] = 0; /* each block's origin is 0 */
	for (int b = 0; b < B; b++)
		for (int t = 0; t < T; t++)
			for (int k = 0; k < K; k++) {
				syn_put(r, (uint64_t)b * T + t, k, BASE + pg[b][t][k] * PAGE + rng_next(&s) % PAGE,
					tm[b][t][k] + 99999ull * (b + 1), 4, DMAT_KIND_LOAD);
				if (tm[b][t][k] > tmax)
					tmax = tm[b][t][k];
			}
	syn_finish(r);
	struct dmat *m = mk(r, 0, 0);
	CHECK_EQ_INT(m->n_rows, PAGES); /* 3072 random picks of 64 pages touch them all */
	CHECK_EQ_INT((uint64_t)m->span, tmax + 1);
	struct dmat_view v;
	dmat_view_fit(m, &v);
	for (int b = 0; b < B; b++)
		for (int t = 0; t < T; t++)
			for (int k = 0; k < K; k++)
				want[pg[b][t][k]][(int)floor(tm[b][t][k] * (double)COLS / (tmax + 1))]++;
	uint32_t *g = bin(m, &v, COLS, ROWS, NULL);
	CHECK(memcmp(g, want, sizeof want) == 0);
	free(g);
	dmat_free(m);
	result_free(r);
}

/* ---- axis, allocations, slots ---- */

static void test_collapse_allocs(void)
{
	struct result *r = syn_result(1, 32, 4, 0);
	uint64_t a = BASE, b = BASE + (1ull << 30), c = BASE + (8ull << 30);
	for (uint32_t t = 0; t < 32; t++) {
		syn_put(r, t, 0, a + t * 256, 10, 4, DMAT_KIND_LOAD);          /* 2 pages of A */
		syn_put(r, t, 1, b + t * 1024, 20, 4, DMAT_KIND_LOAD);         /* 8 pages of B */
		syn_put(r, t, 2, c + t * 4, 30, 4, DMAT_KIND_STORE);           /* 1 page of C */
		syn_put(r, t, 3, c + PAGE + t * 4, 40, 4, DMAT_KIND_ATOMIC);   /* next page: D */
	}
	syn_finish(r);
	struct dmat *m = mk(r, 0, 0);
	CHECK_EQ_INT(m->n_runs, 3); /* C and D pages are adjacent: one run without allocations */
	CHECK_EQ_INT(m->n_rows, 2 + 8 + 2);
	CHECK_EQ_INT(m->runs[1].row0, 2);
	CHECK_EQ_INT(m->runs[2].row0, 10);
	CHECK_EQ_INT(m->runs[1].accesses, 32);
	CHECK_EQ_INT(m->runs[2].accesses, 64);
	CHECK_EQ_INT(dmat_addr_row(m, b + 3 * PAGE), 5);
	CHECK_EQ_INT(dmat_addr_row(m, b + 9 * PAGE), -1);
	CHECK_EQ_INT(dmat_row_run(m, 9), 1);
	CHECK_EQ_INT(dmat_row_run(m, 12), -1);
	dmat_free(m);

	struct dmat_alloc al[] = {
		{c + PAGE, PAGE, "D"}, {a, 1 << 20, "A"}, {b, 64 << 10, "B"}, {c, PAGE, "C"},
	};
	struct dmat_opts o;
	dmat_opts_init(&o);
	o.allocs = al;
	o.n_allocs = 4;
	char *cause = NULL;
	CHECK(dmat_create(r, 0, &o, &m, &cause) == 0);
	CHECK_EQ_INT(m->n_runs, 4); /* split at the C/D boundary */
	CHECK_EQ_INT(m->runs[0].alloc, 1);
	CHECK_EQ_INT(m->runs[1].alloc, 2);
	CHECK_EQ_INT(m->runs[2].alloc, 3);
	CHECK_EQ_INT(m->runs[3].alloc, 0);
	CHECK(strcmp(m->allocs[1].label, "A") == 0 && m->allocs[1].label != al[1].label);
	CHECK_EQ_INT(dmat_alloc_of(m, b + 100), 2);
	CHECK_EQ_INT(dmat_alloc_of(m, b + (64 << 10)), DMAT_NONE);
	struct dmat_view v;
	CHECK(dmat_view_alloc(m, &v, 2) == 0);
	CHECK(v.y0 == 2 && v.y1 == 10);
	CHECK(dmat_view_alloc(m, &v, 99) == -1);
	/* cursor readout on row 3 (B + 1 page), at a cell holding loads */
	dmat_view_fit(m, &v);
	uint32_t *g = bin(m, &v, 4, 12, NULL);
	struct dmat_cell cell;
	CHECK(dmat_cell_at(m, &v, 4, 12, g, 0, 3, &cell) == 0);
	CHECK_EQ_INT(cell.row0, 3);
	CHECK_EQ_INT(cell.row1, 4);
	CHECK_EQ_INT(cell.addr0, b + PAGE);
	CHECK_EQ_INT(cell.addr1, b + 2 * PAGE);
	CHECK_EQ_INT(cell.alloc, 2);
	CHECK_EQ_INT(cell.count, 0); /* B is read at t = 10 (column 1 of 4 over 31 cycles) */
	CHECK(dmat_cell_at(m, &v, 4, 12, g, 1, 3, &cell) == 0);
	CHECK_EQ_INT(cell.count, 4); /* 4 threads x 1 KiB per page */
	char buf[256];
	dmat_cell_text(m, &cell, buf, sizeof buf);
	CHECKF(strstr(buf, "0x7f0040001000-0x7f0040001fff (1 page, B+0x1000)  4 accesses") != NULL, "%s", buf);
	CHECK(dmat_cell_at(m, &v, 4, 12, g, 4, 0, &cell) == -1);
	/* two rows per cell across the A/B boundary: spans a gap */
	free(g);
	g = bin(m, &v, 1, 6, NULL);
	CHECK(dmat_cell_at(m, &v, 1, 6, g, 0, 0, &cell) == 0);
	CHECK_EQ_INT(cell.pages, 2);
	CHECK_EQ_INT(cell.runs, 1);
	CHECK_EQ_INT(cell.count, 32);
	CHECK(dmat_cell_at(m, &v, 1, 6, g, 0, 4, &cell) == 0);
	CHECK_EQ_INT(cell.runs, 1); /* rows 8-9: B's last two pages */
	CHECK(dmat_cell_at(m, &v, 1, 6, g, 0, 5, &cell) == 0);
	CHECK_EQ_INT(cell.runs, 2); /* rows 10-11: C and D */
	CHECK_EQ_INT(cell.count, 64);
	dmat_cell_text(m, &cell, buf, sizeof buf);
	CHECKF(strstr(buf, "(2 pages, spans a gap, C+0x0)") != NULL, "%s", buf);
	free(g);
	dmat_free(m);

	/* per-allocation filter: only B's accesses and pages */
	o.alloc_filter = 2;
	CHECK(dmat_create(r, 0, &o, &m, &cause) == 0);
	CHECK_EQ_INT(m->accesses, 32);
	CHECK_EQ_INT(m->n_runs, 1);
	CHECK_EQ_INT(m->n_rows, 8);
	dmat_free(m);
	o.alloc_filter = 4;
	CHECK(dmat_create(r, 0, &o, &m, &cause) == -1);
	CHECKF(cause && strstr(cause, "4 allocations"), "%s", cause);
	free(cause);
	cause = NULL;
	o.alloc_filter = DMAT_NONE;
	o.page_size = 3000;
	CHECK(dmat_create(r, 0, &o, &m, &cause) == -1);
	CHECKF(cause && strstr(cause, "power of two"), "%s", cause);
	free(cause);
	result_free(r);
}

/* Counts below cap leave garbage slots; counts above cap were dropped; a
 * count that is not a whole number of records keeps only whole ones. */
static void test_unused_slots(void)
{
	struct result *r = syn_result(2, 32, 8, 0);
	for (uint32_t u = 0; u < 64; u++)
		for (uint32_t i = 0; i < u % 5; i++)
			syn_put(r, u, i, BASE + i * PAGE, 100 + i, 4, DMAT_KIND_LOAD);
	struct result_map *mp = &r->maps[0];
	mp->counts[7] = 16 + 9;      /* 1.56 records: 1 */
	mp->counts[8] = 100 * 16;    /* 100 attempted, 8 kept */
	for (uint32_t i = 0; i < 8; i++)
		syn_put(r, 8, i, BASE + i * PAGE, 100 + i, 4, DMAT_KIND_LOAD);
	mp->counts[8] = 100 * 16;
	syn_finish(r);
	uint64_t want = 0;
	for (uint32_t u = 0; u < 64; u++)
		want += u == 7 ? 1 : u == 8 ? 8 : u % 5;
	struct dmat *m = mk(r, 0, 0);
	CHECK_EQ_INT(m->records, want);
	CHECK_EQ_INT(m->accesses, want);
	CHECK_EQ_INT(m->dropped, 92);
	CHECK_EQ_INT(m->addr_max, BASE + 7 * PAGE);
	CHECK_EQ_INT(m->n_rows, 8);
	CHECK_EQ_INT(m->by_kind[DMAT_KIND_OTHER], 0); /* garbage kind 0xa5 never seen */
	struct dmat_view v;
	dmat_view_fit(m, &v);
	uint32_t *g = bin(m, &v, 8, 8, NULL);
	CHECK_EQ_INT(grid_sum(g, 64), want);
	free(g);
	char buf[256];
	dmat_header(m, buf, sizeof buf);
	CHECKF(strstr(buf, "92 dropped past cap 8") && strstr(buf, "ld 100%") && strstr(buf, "8 pages of 4 KiB in 1 range"),
	       "%s", buf);
	dmat_free(m);
	/* nothing recorded at all */
	memset(mp->counts, 0, 64 * 4);
	syn_finish(r);
	m = mk(r, 0, 0);
	CHECK_EQ_INT(m->accesses, 0);
	CHECK_EQ_INT(m->n_rows, 0);
	dmat_view_fit(m, &v);
	g = bin(m, &v, 4, 4, NULL);
	CHECK_EQ_INT(grid_sum(g, 16), 0);
	free(g);
	dmat_free(m);
	result_free(r);
}

static void test_colour(void)
{
	struct theme th;
	CHECK(theme_builtin("dark", &th) == 0);
	CHECK(dmat_scale(0, 1000) == 0);
	CHECK(dmat_scale(1, 1000) == 0);
	CHECK(dmat_scale(1000, 1000) == 1);
	CHECK(fabs(dmat_scale(10, 100) - 0.5) < 1e-12);
	CHECK(fabs(dmat_scale(1000, 1000000) - 0.5) < 1e-12);
	CHECK(dmat_scale(1, 1) == 1);
	CHECK(dmat_scale(5000, 1000) == 1);
	CHECK(rgb_eq(dmat_color(&th, 0, 50), th.c[THEME_BG]));
	CHECK(rgb_eq(dmat_color(&th, 1, 50), th.c[THEME_BAR_START]));
	CHECK(rgb_eq(dmat_color(&th, 50, 50), th.c[THEME_BAR_END]));
	CHECK(rgb_eq(dmat_color(&th, 7, 49), theme_gradient(&th, 0.5)));
	CHECK(strcmp(dmat_kind_name(DMAT_KIND_ATOMIC), "atomic") == 0);
	char b[32];
	dmat_fmt_bytes(4096, b, sizeof b);
	CHECK(strcmp(b, "4 KiB") == 0);
	dmat_fmt_bytes(1536, b, sizeof b);
	CHECK(strcmp(b, "1.5 KiB") == 0);
	dmat_fmt_addr(0x7f0000001000ull, b, sizeof b);
	CHECK(strcmp(b, "0x7f0000001000") == 0);
}

/* Two blocks of 32 threads: page 0 at 1 ms (block 0) and 1.005 ms (block
 * 1), page 1 2 us later, in gtime units of `tick` ns. */
static struct result *global_result(uint64_t tick)
{
	struct result *r = syn_result(2, 32, 2, 1);
	for (uint32_t u = 0; u < 64; u++) {
		syn_put(r, u, 0, BASE + u * 64, (1000000 + (u / 32) * 5000) / tick, 0, 0);
		syn_put(r, u, 1, BASE + PAGE + u * 64, (1000000 + (u / 32) * 5000 + 2000) / tick, 0, 0);
	}
	syn_finish(r);
	return r;
}

/* gtime records: ns since the earliest access across blocks (no per-block origin). */
static void test_global_time(void)
{
	struct result *r = global_result(1);
	struct dmat_opts o;
	dmat_opts_init(&o);
	o.time = DMAT_TIME_GLOBAL;
	struct dmat *m = NULL;
	char *cause = NULL;
	CHECK(dmat_create(r, 0, &o, &m, &cause) == 0);
	CHECK_EQ_INT(m->time, DMAT_TIME_GLOBAL);
	CHECK_EQ_INT(m->g0, 1000000);
	CHECK_EQ_INT((uint64_t)m->span, 7001);
	CHECK(strcmp(m->tick_unit, "\xc2\xb5s") == 0);
	CHECK(m->note[0] == 0);
	CHECK_EQ_INT(m->by_kind[DMAT_KIND_OTHER], 128);
	struct dmat_view v = {0, 8000, 0, 2};
	uint32_t *g = bin(m, &v, 8, 2, NULL); /* 1 us per column */
	CHECK_EQ_INT(g[0], 32);      /* block 0 reads page 0 at 0 */
	CHECK_EQ_INT(g[8 + 2], 32);  /* and page 1 at 2 us */
	CHECK_EQ_INT(g[5], 32);      /* block 1 at 5 us */
	CHECK_EQ_INT(g[8 + 7], 32);
	CHECK_EQ_INT(grid_sum(g, 16), 128);
	free(g);
	char buf[64];
	dmat_fmt_tick(m, 2500, 500, buf, sizeof buf);
	CHECKF(strcmp(buf, "2.5") == 0, "%s", buf);
	dmat_free(m);
	/* SM time asked, no clock field: falls back and says so */
	o.time = DMAT_TIME_SM;
	CHECK(dmat_create(r, 0, &o, &m, &cause) == 0);
	CHECK_EQ_INT(m->time, DMAT_TIME_GLOBAL);
	CHECK(strstr(m->note, "no SM clock") != NULL);
	dmat_free(m);
	result_free(r);
	/* global asked, clock only */
	r = syn_result(1, 32, 1, 0);
	syn_put(r, 0, 0, BASE, 5, 4, 1);
	syn_finish(r);
	o.time = DMAT_TIME_GLOBAL;
	CHECK(dmat_create(r, 0, &o, &m, &cause) == 0);
	CHECK_EQ_INT(m->time, DMAT_TIME_SM);
	CHECK(strstr(m->note, "no global timer") != NULL);
	dmat_free(m);
	/* maps that are not DMAT */
	snprintf(r->maps[0].map.fields[0].name, PROBE_NAME_MAX, "address");
	CHECK_EQ_INT(dmat_find_map(r), -1);
	char why[160];
	dmat_map_problem(r, 0, why, sizeof why);
	CHECK(strstr(why, "no addr:u64") != NULL);
	CHECK(dmat_create(r, 0, &o, &m, &cause) == -1);
	free(cause);
	result_free(r);
}

/* AMD GPUs: gtime holds 100 MHz ticks (10 ns), the clock is a CU's. */
static void test_amd_time(void)
{
	struct result *r = global_result(10);
	struct dmat_opts o;
	dmat_opts_init(&o);
	o.time = DMAT_TIME_GLOBAL;
	o.amd = 1;
	struct dmat *m = NULL;
	char *cause = NULL;
	CHECK(dmat_create(r, 0, &o, &m, &cause) == 0);
	/* test_global_time's accesses in ticks: the same ns after scaling */
	CHECK_EQ_INT(m->g0, 1000000);
	CHECK_EQ_INT((uint64_t)m->span, 7001);
	CHECKF(strstr(m->axis_label, "all CUs aligned") != NULL, "%s", m->axis_label);
	struct dmat_view v = {0, 8000, 0, 2};
	uint32_t *g = bin(m, &v, 8, 2, NULL);
	CHECK_EQ_INT(g[5], 32); /* block 1 at 5 us */
	free(g);
	dmat_free(m);
	o.time = DMAT_TIME_SM;
	CHECK(dmat_create(r, 0, &o, &m, &cause) == 0);
	CHECKF(strstr(m->note, "no CU clock") != NULL, "%s", m->note);
	dmat_free(m);
	result_free(r);
	r = syn_result(1, 32, 1, 0);
	syn_put(r, 0, 0, BASE, 5, 4, 1);
	syn_finish(r);
	CHECK(dmat_create(r, 0, &o, &m, &cause) == 0);
	CHECKF(strstr(m->axis_label, "CU clock cycles") && !strstr(m->axis_label, "SM"), "%s", m->axis_label);
	dmat_free(m);
	free(cause);
	result_free(r);
}

static void test_view(void)
{
	struct result *r = syn_result(1, 32, 1, 0);
	for (uint32_t t = 0; t < 32; t++)
		syn_put(r, t, 0, BASE + t * PAGE, t * 100, 4, 1);
	syn_finish(r);
	struct dmat *m = mk(r, 0, 0);
	struct dmat_view v;
	dmat_view_fit(m, &v);
	CHECK(v.t0 == 0 && v.t1 == 3101 && v.y0 == 0 && v.y1 == 32);
	dmat_view_zoom(m, &v, 2, 0);
	CHECK(v.t0 == 0 && fabs(v.t1 - 1550.5) < 1e-9);
	dmat_view_pan(m, &v, 10); /* clamped at the end */
	CHECK(fabs(v.t1 - 3101) < 1e-9 && fabs(v.t0 - 1550.5) < 1e-9);
	dmat_view_zoom(m, &v, 1e9, 2000); /* at least 4 units */
	CHECK(fabs(v.t1 - v.t0 - 4) < 1e-9);
	dmat_view_zoom(m, &v, 1e-9, 2000); /* out: everything */
	CHECK(v.t0 == 0 && v.t1 == 3101);
	dmat_view_zoom_rows(m, &v, 4, 16);
	CHECK(v.y0 == 12 && v.y1 == 20);
	dmat_view_scroll(m, &v, -10);
	CHECK(v.y0 == 0 && v.y1 == 8);
	/* zoomed past one row per page: page 2 fills output rows 8..11 of 32 */
	uint32_t *g = bin(m, &v, 1, 32, NULL);
	for (int i = 0; i < 32; i++)
		CHECK_EQ_INT(g[i], 1);
	free(g);
	v.y0 = 2;
	v.y1 = 3;
	g = bin(m, &v, 1, 3, NULL);
	CHECK(g[0] == 1 && g[1] == 1 && g[2] == 1);
	free(g);
	uint32_t tmp;
	CHECK(dmat_bin(m, &v, 0, 3, &tmp, NULL) == -1);
	dmat_free(m);
	result_free(r);
}

/* 1M and then 10M records by the same threads over the same 256 pages and
 * the same times: the model's heap must not grow with the records (only
 * with units, blocks, pages and histogram cells). */
static struct result *bounded_result(uint32_t cap)
{
	enum { B = 125, T = 125 };
	struct result *r = syn_result(B, T, cap, 0);
	struct result_map *mp = &r->maps[0];
	uint64_t s = 99;
	for (uint64_t u = 0; u < mp->units; u++) {
		for (uint32_t i = 0; i < cap; i++) {
			uint8_t *rec = (uint8_t *)result_map_record(mp, u, i);
			uint64_t a = BASE + (rng_next(&s) & (256 * PAGE - 1));
			uint32_t c = (uint32_t)((u % T) * 7 + (i % 16) * 40), sk = 4 | 1u << 24;
			memcpy(rec, &a, 8);
			memcpy(rec + 8, &c, 4);
			memcpy(rec + 12, &sk, 4);
		}
		mp->counts[u] = cap * 16;
	}
	syn_finish(r);
	return r;
}

static size_t bounded_check(const struct dmat *m, uint64_t *acc)
{
	if (!m)
		return 0;
	struct dmat_view v;
	dmat_view_fit(m, &v);
	uint32_t *g = bin(m, &v, 1600, 256, NULL);
	*acc = grid_sum(g, 1600 * 256);
	CHECK_EQ_INT(*acc, m->accesses);
	CHECK_EQ_INT(m->n_rows, 256);
	free(g);
	return m->mem_peak;
}

static size_t bounded_run(uint32_t cap, uint64_t *acc)
{
	struct result *r = bounded_result(cap);
	struct dmat_opts o;
	dmat_opts_init(&o);
	struct dmat *m = NULL;
	CHECK(dmat_create(r, 0, &o, &m, NULL) == 0);
	size_t peak = bounded_check(m, acc);
	dmat_free(m);
	result_free(r);
	return peak;
}

/* The same through a file: counts, stream and pass buffers counted too. */
static size_t bounded_file(uint32_t cap, uint64_t *acc)
{
	struct result *r = bounded_result(cap);
	char *cause = NULL;
	CHECKF(result_write(tmpdir, "bounded.ntr", r, &cause) == 0, "%s", cause);
	result_free(r);
	char p[64];
	snprintf(p, sizeof p, "%s/bounded.ntr", tmpdir);
	struct dmat_opts o;
	dmat_opts_init(&o);
	struct dmat *m = NULL;
	CHECKF(dmat_open(p, -1, &o, &m, &cause) == 0, "%s", cause);
	free(cause);
	size_t peak = bounded_check(m, acc);
	dmat_free(m);
	unlink(p);
	return peak;
}

static void test_bounded_memory(void)
{
	uint64_t a1 = 0, a10 = 0;
	size_t p1 = bounded_run(64, &a1);    /* 15625 threads x 64 = 1M */
	size_t p10 = bounded_run(640, &a10); /* 10M */
	CHECK_EQ_INT(a1, 1000000);
	CHECK_EQ_INT(a10, 10000000);
	CHECKF(p1 > 0 && p10 == p1, "model heap %zu bytes at 1M records, %zu at 10M", p1, p10);
	/* 125 blocks, 256 pages, a 1469 x 256 histogram (1.5 MB) */
	CHECKF(p10 < 1600 * 1024, "model heap %zu bytes for 256 pages", p10);
	p1 = bounded_file(16, &a1);
	p10 = bounded_file(160, &a10);
	CHECK_EQ_INT(a1, 250000);
	CHECK_EQ_INT(a10, 2500000);
	/* + 62.5 KB of counts, 2 MiB chunk, zstd's window: never the 40 MB of records */
	CHECKF(p10 <= p1 + 4096 && p10 < 8 * 1024 * 1024, "model heap %zu bytes at 250k records from a file, %zu at 2.5M",
	       p1, p10);
}

/* Block sampling: 4 blocks of 32 threads, 1 in 2 kept (0 and 2); only their
 * records are drawn, the others counted as not sampled; the same from a file. */
static void test_sampled(void)
{
	struct result *r = syn_result(4, 32, 2, 0);
	struct result_map *mp = &r->maps[0];
	mp->sample_shift = 1;
	mp->units_per_block = 32;
	mp->rec_units = 64;
	for (uint64_t u = 0; u < 128; u++) {
		if (!result_map_unit_kept(mp, u)) {
			mp->counts[u] = 5 * 16;
			continue;
		}
		for (uint32_t i = 0; i < 2; i++)
			syn_put(r, u, i, BASE + (u / 32) * PAGE + u * 8, 1000 * u + 10 * i, 4, DMAT_KIND_LOAD);
	}
	mp->records_unsampled = 64 * 5;
	syn_finish(r);
	struct dmat *m = mk(r, 0, 0);
	CHECK_EQ_INT(m->records, 128);
	CHECK_EQ_INT(m->accesses, 128);
	CHECK_EQ_INT(m->n_blocks, 2);
	CHECK_EQ_INT(m->blocks_seen, 2);
	CHECK_EQ_INT(m->n_rows, 3); /* pages 0 and 2, the gap kept */
	CHECK_EQ_INT((uint64_t)m->span, 31 * 1000 + 10 + 1);
	CHECK_EQ_INT(m->unsampled, 320);
	dmat_free(m);
	result_free(r);
}

/* A copy of r whose map stores only the slots its units filled, as the
 * hook writes it (format v4): each kept unit's records copied through
 * result_map_record into a buffer of stride `stored`. */
static struct result *stored_copy(const struct result *r)
{
	struct result *c = calloc(1, sizeof *c);
	*c = *r;
	c->kernel = strdup(r->kernel);
	c->probes = strdup(r->probes);
	c->maps = calloc(1, sizeof *c->maps);
	const struct result_map *a = &r->maps[0];
	struct result_map *b = &c->maps[0];
	*b = *a;
	b->stored = result_map_most_records(a);
	b->counts = malloc(a->units * 4);
	memcpy(b->counts, a->counts, a->units * 4);
	uint64_t nru = result_map_rec_units(a), rs = a->map.rec_size;
	b->records = malloc(nru * b->stored * rs + 1);
	for (uint64_t ru = 0; ru < nru; ru++) {
		uint64_t u = result_map_unit_at(a, ru);
		for (uint32_t k = 0; k < b->stored; k++)
			memcpy((uint8_t *)result_map_record(b, u, k), result_map_record(a, u, k), rs);
	}
	return c;
}

/* Maps storing fewer slots than the cap (format v4), slot-major and
 * unit-major, block-sampled or not: the model of the compacted copy (and of
 * its file, by mk's twin check) is the model of the whole map. */
static void test_stored(void)
{
	for (int lay = 0; lay < 4; lay++) {
		int unit_major = lay & 1, sampled = lay >> 1;
		struct result *r = syn_result(4, 32, 8, 0);
		struct result_map *mp = &r->maps[0];
		mp->slot_major = !unit_major;
		if (sampled) {
			mp->sample_shift = 1;
			mp->units_per_block = 32;
			mp->rec_units = 64;
		}
		uint64_t want = 0;
		for (uint64_t u = 0; u < 128; u++) {
			if (!result_map_unit_kept(mp, u)) {
				mp->counts[u] = 7 * 16; /* more than stored: no matter, not kept */
				continue;
			}
			for (uint32_t i = 0; i < u % 4; i++)
				syn_put(r, u, i, BASE + (u % 8) * PAGE + i * 64, 100 * (u % 32) + 7 * i, 4,
					i % 2 ? DMAT_KIND_STORE : DMAT_KIND_LOAD);
			want += u % 4;
		}
		if (sampled)
			mp->records_unsampled = 64 * 7;
		syn_finish(r);
		struct result *c = stored_copy(r);
		CHECKF(c->maps[0].stored == 3, "layout %d: %u stored", lay, c->maps[0].stored);
		struct dmat *a = mk(r, 0, 0), *b = mk(c, 0, 0);
		CHECKF(a && b && a->records == want && b->records == want && b->accesses == a->accesses &&
		       b->unsampled == a->unsampled && b->n_rows == a->n_rows && b->span == a->span &&
		       b->blocks_seen == a->blocks_seen && memcmp(a->by_kind, b->by_kind, sizeof a->by_kind) == 0,
		       "layout %d: the compacted map's model differs", lay);
		if (a && b) {
			struct dmat_view v;
			dmat_view_fit(a, &v);
			CHECK(grids_equal(a, b, &v, 16, (int)a->n_rows + 1));
		}
		/* the file is version 4 and stores 3 slots a unit */
		char *cause = NULL;
		CHECKF(result_write(tmpdir, "twin.ntr", c, &cause) == 0, "%s", cause);
		struct result *h = NULL;
		CHECKF(result_read_head(twin_path(), &h, &cause) == 0, "%s", cause);
		CHECK(h && h->version == 4 && h->maps[0].stored == 3);
		result_free(h);
		free(cause);
		unlink(twin_path());
		dmat_free(a);
		dmat_free(b);
		result_free(c);
		result_free(r);
	}
}

/* A histogram coarser than the records: views at least as coarse as its
 * bins come from it (aligned ones exactly, others within rounding), finer
 * ones are binned from the records exactly. */
static void test_hist_paths(void)
{
	struct result *r = syn_result(2, 128, 8, 0);
	uint64_t s = 7;
	for (uint64_t u = 0; u < 256; u++)
		for (uint32_t i = 0; i < 8; i++)
			syn_put(r, u, i, BASE + (rng_next(&s) % 40) * PAGE, (u % 128) * 3 + i * 97 + (u ? 0 : 0), 4, 1);
	syn_finish(r);
	struct dmat_opts o;
	dmat_opts_init(&o);
	struct dmat *a = NULL, *b = NULL;
	CHECK(dmat_create(r, 0, &o, &a, NULL) == 0);
	o.hist_cols = 32;
	o.hist_rows = 8;
	CHECK(dmat_create(r, 0, &o, &b, NULL) == 0);
	CHECK_EQ_INT(a->hist_bw, 1);
	CHECK_EQ_INT((uint64_t)a->span, 127 * 3 + 7 * 97 + 1);
	CHECK_EQ_INT(b->hist_bw, 64); /* 1061 cycles in at most 32 bins */
	CHECK_EQ_INT(b->hist_rh, 8);  /* 40 rows in at most 8 */
	CHECK(a->mem_peak > b->mem_peak);
	struct dmat_view v = {0, 1024, 0, 40};
	CHECK(dmat_bin_fast(b, &v, 16, 5)); /* 64 cycles, 8 rows per cell: aligned */
	CHECK(grids_equal(a, b, &v, 16, 5));
	dmat_view_fit(a, &v);
	CHECK(dmat_bin_fast(b, &v, 10, 4));
	uint32_t *ga = bin(a, &v, 10, 4, NULL), *gb = bin(b, &v, 10, 4, NULL);
	uint64_t diff = 0;
	for (int i = 0; i < 40; i++)
		diff += ga[i] > gb[i] ? ga[i] - gb[i] : gb[i] - ga[i];
	CHECKF(diff < 2048 / 3, "coarse view off by %llu of 2048", (unsigned long long)diff);
	CHECK(llabs((long long)grid_sum(ga, 40) - (long long)grid_sum(gb, 40)) <= 40);
	free(ga);
	free(gb);
	CHECK(!dmat_bin_fast(b, &v, 100, 40));
	CHECK(grids_equal(a, b, &v, 100, 40));
	v.t0 = 100;
	v.t1 = 140;
	CHECK(!dmat_bin_fast(b, &v, 4, 40));
	CHECK(grids_equal(a, b, &v, 4, 40));
	dmat_free(a);
	dmat_free(b);
	result_free(r);
}

/* The heatmap of one source line: a map with an access field (bytes | kind
 * << 18 | site << 21), slot 0 a load of site 5 or 7 (alternating threads),
 * slot 1 a store of site 9; sites 5, 7 and 9 are all on k.cu:10. The line's
 * loads are sites 5 and 7 (lines_site_mask), and the model keeps theirs. */
static void test_site_filter(void)
{
	enum { N = 128 };
	struct result *r = syn_result(1, N, 2, 0);
	snprintf(r->maps[0].map.fields[2].name, sizeof r->maps[0].map.fields[2].name, "access");
	for (uint32_t t = 0; t < N; t++)
		for (uint32_t i = 0; i < 2; i++) {
			uint8_t *rec = (uint8_t *)result_map_record(&r->maps[0], t, i);
			uint64_t addr = BASE + (uint64_t)i * PAGE + 4 * t;
			uint32_t clock = 100 + 10 * i, site = i ? 9 : t % 2 ? 7 : 5;
			uint32_t access = 4 | (i ? DMAT_KIND_STORE : DMAT_KIND_LOAD) << 18 | site << 21;
			memcpy(rec, &addr, 8);
			memcpy(rec + 8, &clock, 4);
			memcpy(rec + 12, &access, 4);
			r->maps[0].counts[t] = 2 * r->maps[0].map.rec_size;
		}
	syn_finish(r);
	struct engine_sites *st = &r->sites;
	st->n = 12;
	st->s = calloc((size_t)st->n, sizeof *st->s);
	st->n_files = 1;
	st->files = calloc(1, sizeof *st->files);
	st->files[0] = strdup("/src/k.cu");
	for (int i = 0; i < st->n; i++) {
		st->s[i] = (struct engine_site){.kind = ENGINE_SITE_INSN, .region = -1, .ptx_line = 40 + i, .file = 0,
						.line = i == 5 || i == 7 || i == 9 ? 10 : 20 + i};
		snprintf(st->s[i].opcode, sizeof st->s[i].opcode, "%s", i == 9 ? "st.global.u32" : "ld.global.u32");
	}
	struct ln_line l = {.stores = 0};
	snprintf(l.where, sizeof l.where, "k.cu:10");
	uint8_t mask[DMAT_SITES / 8];
	lines_site_mask(r, &l, mask, DMAT_SITES);
	int bits = 0;
	for (unsigned i = 0; i < DMAT_SITES; i++)
		bits += mask[i / 8] >> (i % 8) & 1;
	CHECK_EQ_INT(bits, 2);
	CHECK(mask[0] == (1u << 5 | 1u << 7));
	struct dmat_opts o;
	dmat_opts_init(&o);
	o.sites = mask;
	struct dmat *m = NULL;
	char *cause = NULL;
	CHECKF(dmat_create(r, 0, &o, &m, &cause) == 0, "%s", cause);
	free(cause);
	CHECK_EQ_INT(m->records, 2 * N);
	CHECK_EQ_INT(m->accesses, N);
	CHECK_EQ_INT(m->by_kind[DMAT_KIND_LOAD], N);
	CHECK_EQ_INT(m->by_kind[DMAT_KIND_STORE], 0);
	CHECK_EQ_INT(m->addr_max, BASE + 4 * (N - 1));
	dmat_free(m);
	/* the line's stores: site 9 */
	l.stores = 1;
	lines_site_mask(r, &l, mask, DMAT_SITES);
	CHECK(mask[0] == 0 && mask[1] == 1u << 1);
	CHECKF(dmat_create(r, 0, &o, &m, &cause) == 0, "%s", cause);
	CHECK_EQ_INT(m->accesses, N);
	CHECK_EQ_INT(m->by_kind[DMAT_KIND_STORE], N);
	CHECK_EQ_INT(m->addr_min, BASE + PAGE);
	dmat_free(m);
	result_free(r);
}

int main(void)
{
	if (!mkdtemp(tmpdir))
		return 1;
	test_linear();
	test_strided();
	test_gather_scatter();
	test_random();
	test_collapse_allocs();
	test_unused_slots();
	test_colour();
	test_global_time();
	test_amd_time();
	test_view();
	test_bounded_memory();
	test_sampled();
	test_stored();
	test_hist_paths();
	test_site_filter();
	CHECK(rmdir(tmpdir) == 0);
	return testlib_report();
}
