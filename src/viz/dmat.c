/* DMAT model (dmat.h): record decoding, the streaming passes (pass 1: block
 * origins, extent and touched pages; pass 2: the fine histogram; binning
 * views finer than it), the collapsed page axis, viewport arithmetic,
 * colour scale and readouts. Every record read goes through dm_walk, which
 * takes the records in the order they are stored (slot-major: record k of
 * every unit, then k + 1; unit-major otherwise), from memory or in chunks
 * from the file, so no pass needs more than O(blocks) state of its own. */
#include "viz/dmat.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"
#include "viz/timeline.h"

#define DM_MIN_WIDTH 4.0 /* axis units: zooming stops at a few cycles / ns */
#define DM_EMPTY UINT64_MAX

/* The last grid dmat_bin made from the records (dmat.h). */
struct dmat_bin_cache {
	struct dmat_view v;
	int cols, rows;
	uint32_t *grid;
};

/* ---- heap accounting (the bounded-memory promise is checked by tests) ---- */

static void *dm_alloc(struct dmat *m, size_t n)
{
	void *p = calloc(1, n ? n : 1);
	if (p) {
		m->mem_bytes += n;
		if (m->mem_bytes > m->mem_peak)
			m->mem_peak = m->mem_bytes;
	}
	return p;
}

static void dm_release(struct dmat *m, void *p, size_t n)
{
	if (p)
		m->mem_bytes -= n;
	free(p);
}

/* ---- fields ---- */

static int dm_field(const struct probe_map *pm, const char *name, int type)
{
	for (int i = 0; i < pm->n_fields; i++)
		if (strcmp(pm->fields[i].name, name) == 0 && (!type || (int)pm->fields[i].type == type))
			return (int)pm->fields[i].offset;
	return -1;
}

static int dm_clock_field(const struct probe_map *pm, int *bytes)
{
	int o = dm_field(pm, "clock", PROBE_U64);
	*bytes = 8;
	if (o < 0) {
		o = dm_field(pm, "clock", PROBE_U32);
		*bytes = 4;
	}
	return o;
}

void dmat_map_problem(const struct result *r, int i, char *buf, size_t len)
{
	const struct probe_map *pm = &r->maps[i].map;
	int cb;
	if (!pm->n_fields)
		snprintf(buf, len, "map %s has no field names (NEUTRINO schema)", pm->name);
	else if (dm_field(pm, "addr", PROBE_U64) < 0)
		snprintf(buf, len, "map %s has no addr:u64 field", pm->name);
	else if (dm_clock_field(pm, &cb) < 0 && dm_field(pm, "gtime", PROBE_U64) < 0)
		snprintf(buf, len, "map %s has neither clock:u32/u64 nor gtime:u64", pm->name);
	else if (!pm->rec_size || !pm->cap)
		snprintf(buf, len, "map %s has empty records", pm->name);
	else
		buf[0] = 0;
}

int dmat_find_map(const struct result *r)
{
	int found = -1;
	char why[160];
	for (int i = 0; i < r->n_maps; i++) {
		dmat_map_problem(r, i, why, sizeof why);
		if (why[0])
			continue;
		if (strcmp(r->maps[i].map.name, "dmat") == 0)
			return i;
		if (found < 0)
			found = i;
	}
	return found;
}

void dmat_opts_init(struct dmat_opts *o)
{
	memset(o, 0, sizeof *o);
	o->page_size = DMAT_PAGE_DEFAULT;
	o->time = DMAT_TIME_SM;
	o->gap_keep = DMAT_GAP_KEEP_DEFAULT;
	o->alloc_filter = DMAT_NONE;
}

/* ---- decoding and the walk ---- */

struct dm_rec {
	uint64_t t;     /* axis units (pass 1: 0 in SM time, raw gtime in global time) */
	uint64_t addr;
	uint64_t gtime;
	uint64_t clock; /* raw SM clock, 0 without one */
	uint64_t block; /* index among the blocks with records */
	uint32_t kind, size;
	int kept;       /* passes the kind and allocation filters */
};

typedef void (*dm_visit)(void *ctx, const struct dm_rec *x);

static uint64_t dm_clock(const struct dmat *m, const uint8_t *rec)
{
	return m->clock_bytes == 8 ? result_rec_u64(rec + m->off_clock) : result_rec_u32(rec + m->off_clock);
}

/* Signed distance a - ref, modulo the clock's width. */
static int64_t dm_diff(const struct dmat *m, uint64_t a, uint64_t ref)
{
	return m->clock_bytes == 8 ? (int64_t)(a - ref) : (int64_t)(int32_t)(uint32_t)(a - ref);
}

static int dm_in_alloc(const struct dmat_alloc *a, uint64_t addr)
{
	return addr >= a->base && addr - a->base < a->size;
}

static void dm_decode(const struct dmat *m, const uint8_t *rec, struct dm_rec *x)
{
	x->addr = result_rec_u64(rec + m->off_addr);
	x->gtime = m->off_gtime >= 0 ? result_rec_u64(rec + m->off_gtime) * m->gtimer_ns : 0;
	x->clock = m->off_clock >= 0 ? dm_clock(m, rec) : 0;
	x->kind = DMAT_KIND_OTHER;
	x->size = 0;
	if (m->off_access >= 0) {
		uint32_t v = result_rec_u32(rec + m->off_access);
		x->size = v & 0x3ffff;
		x->kind = (v >> 18) & 7;
	} else if (m->off_sizekind >= 0) {
		uint32_t v = result_rec_u32(rec + m->off_sizekind);
		x->size = v & 0xffffff;
		x->kind = v >> 24;
	} else {
		if (m->off_size >= 0)
			x->size = result_rec_u32(rec + m->off_size);
		if (m->off_kind >= 0)
			x->kind = result_rec_u32(rec + m->off_kind);
	}
	if (x->kind >= DMAT_N_KINDS)
		x->kind = DMAT_KIND_OTHER;
	x->kept = (m->kinds >> x->kind) & 1;
	if (x->kept && m->site_filter) {
		uint32_t site = m->off_access >= 0 ? result_rec_u32(rec + m->off_access) >> 21 : DMAT_SITES;
		x->kept = site < DMAT_SITES && (m->sites[site / 8] >> (site % 8) & 1);
	}
	if (x->kept && m->alloc_filter >= 0)
		x->kept = dm_in_alloc(&m->allocs[m->alloc_filter], x->addr);
}

static const struct result_map *dm_map(const struct dmat *m)
{
	return &m->r->maps[m->map_index];
}

/* Axis time of a decoded record (once pass 1 set the origins / g0). */
static uint64_t dm_time(const struct dmat *m, const struct dm_rec *x)
{
	if (m->time == DMAT_TIME_GLOBAL)
		return x->gtime >= m->g0 ? x->gtime - m->g0 : 0;
	if (!m->org)
		return 0;
	uint64_t d = x->clock - m->org[x->block];
	return m->clock_bytes == 8 ? d : (uint32_t)d;
}

/* Where record index i sits: unit index ru among the units with records,
 * its block (kb) and place in it (w), and its slot. */
struct dm_pos {
	uint64_t ru, kb, w, slot;
};

static void dm_pos_at(const struct dmat *m, uint64_t i, struct dm_pos *q)
{
	const struct result_map *mp = dm_map(m);
	uint64_t nru = result_map_rec_units(mp);
	if (mp->slot_major) {
		q->slot = i / nru;
		q->ru = i % nru;
	} else {
		q->ru = i / mp->stored;
		q->slot = i % mp->stored;
	}
	q->kb = q->ru / m->units_per_block;
	q->w = q->ru % m->units_per_block;
}

/* Bytes unit (kb, w) tried to save: its records are those whose end is inside. */
static uint64_t dm_count(const struct dmat *m, const struct dm_pos *q)
{
	const struct result_map *mp = dm_map(m);
	return mp->counts[((q->kb << mp->sample_shift) * m->units_per_block) + q->w];
}

/* Visits the valid records among n consecutive ones from index `first`:
 * only whole records inside each unit's count (slots past it hold garbage). */
static void dm_walk_chunk(const struct dmat *m, const uint8_t *rec, uint64_t first, uint64_t n, dm_visit f,
			  void *ctx)
{
	if (!n)
		return;
	const struct result_map *mp = dm_map(m);
	uint64_t nru = result_map_rec_units(mp), stored = mp->stored, rs = mp->map.rec_size;
	uint64_t upb = m->units_per_block;
	struct dm_pos q;
	dm_pos_at(m, first, &q);
	uint64_t count = dm_count(m, &q);
	for (uint64_t i = 0; i < n; i++, rec += rs) {
		if ((q.slot + 1) * rs <= count) {
			struct dm_rec x;
			dm_decode(m, rec, &x);
			x.block = q.kb;
			x.t = dm_time(m, &x);
			f(ctx, &x);
		}
		if (mp->slot_major || ++q.slot == stored) {
			if (!mp->slot_major)
				q.slot = 0;
			if (++q.w == upb) {
				q.w = 0;
				q.kb++;
			}
			if (++q.ru == nru && mp->slot_major) {
				q.ru = q.w = q.kb = 0;
				q.slot++;
			}
			if (i + 1 < n)
				count = dm_count(m, &q);
		}
	}
}

/* Every valid record once, in storage order; *pass_mem (may be NULL) gets
 * the heap a file pass held. -1 only when reading the file failed. */
static int dm_walk(const struct dmat *m, dm_visit f, void *ctx, size_t *pass_mem, char **cause)
{
	const struct result_map *mp = dm_map(m);
	if (!m->st) {
		dm_walk_chunk(m, mp->records, 0, result_map_rec_units(mp) * mp->stored, f, ctx);
		return 0;
	}
	struct result_pass *p = NULL;
	if (result_pass_open(m->st, m->map_index, &p, cause) < 0)
		return -1;
	struct result_chunk c;
	int rc;
	while ((rc = result_pass_next(p, &c, cause)) == 1)
		dm_walk_chunk(m, c.recs, c.first, c.n, f, ctx);
	if (pass_mem)
		*pass_mem = result_pass_mem(p); /* now with zstd's window */
	result_pass_free(p);
	return rc;
}

/* Blocks with records, each with its own time origin. */
static uint64_t dm_n_blocks(const struct dmat *m)
{
	uint64_t nru = result_map_rec_units(dm_map(m));
	return (nru + m->units_per_block - 1) / m->units_per_block;
}

/* ---- pass 1: extent and touched pages ---- */

struct dm_page {
	uint64_t page, count;
};

struct dm_pass1 {
	struct dmat *m;
	struct dm_page *tab;  /* open addressing, page DM_EMPTY = free */
	size_t cap, used;     /* cap: power of two */
	uint64_t gmin, gmax;  /* global time: raw gtime of all / of kept records */
	int64_t *dmin, *dmax; /* [n_blocks] clock distances from the origin's first
				 record (all / kept records); dmin INT64_MAX: none yet */
	int failed;
};

static size_t dm_hash(uint64_t page, size_t cap)
{
	page ^= page >> 33;
	page *= 0xff51afd7ed558ccdull;
	page ^= page >> 33;
	return (size_t)page & (cap - 1);
}

static int dm_tab_grow(struct dm_pass1 *p)
{
	size_t ncap = p->cap ? p->cap * 2 : 1024;
	struct dm_page *nt = dm_alloc(p->m, ncap * sizeof *nt);
	if (!nt)
		return -1;
	for (size_t i = 0; i < ncap; i++)
		nt[i].page = DM_EMPTY;
	for (size_t i = 0; i < p->cap; i++) {
		if (p->tab[i].page == DM_EMPTY)
			continue;
		size_t h = dm_hash(p->tab[i].page, ncap);
		while (nt[h].page != DM_EMPTY)
			h = (h + 1) & (ncap - 1);
		nt[h] = p->tab[i];
	}
	dm_release(p->m, p->tab, p->cap * sizeof *p->tab);
	p->tab = nt;
	p->cap = ncap;
	return 0;
}

static void dm_count_page(struct dm_pass1 *p, uint64_t page)
{
	if ((p->used + 1) * 2 > p->cap && dm_tab_grow(p) < 0) {
		p->failed = 1;
		return;
	}
	size_t h = dm_hash(page, p->cap);
	while (p->tab[h].page != DM_EMPTY && p->tab[h].page != page)
		h = (h + 1) & (p->cap - 1);
	if (p->tab[h].page == DM_EMPTY) {
		p->tab[h].page = page;
		p->used++;
	}
	p->tab[h].count++;
}

/* Block origin: its first record's clock is the reference (a 32-bit clock
 * is unwrapped against it), the origin is the least distance from it. */
static void dm_pass1_origin(struct dm_pass1 *p, const struct dm_rec *x)
{
	uint64_t b = x->block;
	if (p->dmin[b] == INT64_MAX) {
		p->m->org[b] = x->clock;
		p->dmin[b] = 0;
	}
	int64_t d = dm_diff(p->m, x->clock, p->m->org[b]);
	if (d < p->dmin[b])
		p->dmin[b] = d;
	if (x->kept && d > p->dmax[b])
		p->dmax[b] = d;
}

static void dm_pass1_visit(void *ctx, const struct dm_rec *x)
{
	struct dm_pass1 *p = ctx;
	struct dmat *m = p->m;
	m->records++;
	if (m->time == DMAT_TIME_SM) {
		dm_pass1_origin(p, x);
	} else {
		if (p->dmin[x->block] == INT64_MAX)
			p->dmin[x->block] = 0;
		if (x->gtime < p->gmin)
			p->gmin = x->gtime;
		if (x->kept && x->gtime > p->gmax)
			p->gmax = x->gtime;
	}
	if (!x->kept || p->failed)
		return;
	m->accesses++;
	m->by_kind[x->kind]++;
	m->bytes += x->size;
	if (x->addr < m->addr_min)
		m->addr_min = x->addr;
	if (x->addr > m->addr_max)
		m->addr_max = x->addr;
	dm_count_page(p, x->addr / m->page_size);
}

static int dm_cmp_page(const void *a, const void *b)
{
	uint64_t x = ((const struct dm_page *)a)->page, y = ((const struct dm_page *)b)->page;
	return x < y ? -1 : x > y;
}

/* The allocation overlapping page p first (by address), DMAT_NONE. */
static int dm_page_alloc(const struct dmat *m, uint64_t page)
{
	uint64_t lo = page * m->page_size, hi = lo + m->page_size;
	int best = DMAT_NONE;
	for (int i = 0; i < m->n_allocs; i++) {
		const struct dmat_alloc *a = &m->allocs[i];
		uint64_t ab = a->base, ae = a->base + a->size;
		if (a->size && ab < hi && ae > lo && (best < 0 || ab < m->allocs[best].base))
			best = i;
	}
	return best;
}

/* Does sorted page q start a new run after the run ending at page `last`? */
static int dm_breaks(const struct dmat *m, uint64_t last, uint64_t q, int run_alloc, int q_alloc)
{
	uint64_t gap_pages = q - last - 1;
	return gap_pages > m->gap_keep / m->page_size || run_alloc != q_alloc;
}

static int dm_build_runs(struct dmat *m, struct dm_page *pg, size_t n)
{
	uint32_t runs = 0;
	int cur = DMAT_NONE;
	for (size_t i = 0; i < n; i++) {
		int a = dm_page_alloc(m, pg[i].page);
		if (i == 0 || dm_breaks(m, pg[i - 1].page, pg[i].page, cur, a))
			runs++;
		cur = a;
	}
	m->runs = dm_alloc(m, (runs ? runs : 1) * sizeof *m->runs);
	if (!m->runs)
		return -1;
	struct dmat_run *r = NULL;
	for (size_t i = 0; i < n; i++) {
		int a = dm_page_alloc(m, pg[i].page);
		if (!r || dm_breaks(m, pg[i - 1].page, pg[i].page, r->alloc, a)) {
			r = r ? r + 1 : m->runs;
			r->page0 = pg[i].page;
			r->alloc = a;
			r->row0 = m->n_rows;
		}
		m->n_rows += pg[i].page - (r->page0 + r->n_pages) + 1;
		r->n_pages = pg[i].page - r->page0 + 1;
		r->accesses += pg[i].count;
	}
	m->n_runs = runs;
	return 0;
}

/* After the walk: origins, blocks seen and the time extent. */
static void dm_pass1_extent(struct dmat *m, struct dm_pass1 *p)
{
	uint64_t tmax = 0;
	for (uint64_t b = 0; b < m->n_blocks; b++) {
		if (p->dmin[b] == INT64_MAX)
			continue;
		m->blocks_seen++;
		if (m->time != DMAT_TIME_SM)
			continue;
		if (p->dmax[b] != INT64_MIN && (uint64_t)(p->dmax[b] - p->dmin[b]) > tmax)
			tmax = (uint64_t)(p->dmax[b] - p->dmin[b]);
		m->org[b] += (uint64_t)p->dmin[b];
	}
	if (m->time == DMAT_TIME_GLOBAL) {
		m->g0 = p->gmin == UINT64_MAX ? 0 : p->gmin;
		tmax = m->accesses ? p->gmax - m->g0 : 0;
	}
	m->span = m->accesses ? (double)tmax + 1 : 0;
}

static void dm_peak(struct dmat *m, size_t extra)
{
	if (m->mem_bytes + extra > m->mem_peak)
		m->mem_peak = m->mem_bytes + extra;
}

static int dm_pass1(struct dmat *m, char **cause)
{
	struct dm_pass1 p = {m, NULL, 0, 0, UINT64_MAX, 0, NULL, NULL, 0};
	size_t nb = (size_t)m->n_blocks, pass_mem = 0;
	int rc = -1;
	m->addr_min = UINT64_MAX;
	p.dmin = dm_alloc(m, nb * sizeof *p.dmin);
	p.dmax = dm_alloc(m, nb * sizeof *p.dmax);
	if (m->time == DMAT_TIME_SM)
		m->org = dm_alloc(m, nb * sizeof *m->org);
	if (!p.dmin || !p.dmax || (m->time == DMAT_TIME_SM && !m->org) || dm_tab_grow(&p) < 0) {
		cause_set(cause, "out of memory for %zu blocks", nb);
		goto out;
	}
	for (size_t b = 0; b < nb; b++) {
		p.dmin[b] = INT64_MAX;
		p.dmax[b] = INT64_MIN;
	}
	if (dm_walk(m, dm_pass1_visit, &p, &pass_mem, cause) < 0)
		goto out;
	dm_peak(m, pass_mem);
	if (p.failed) {
		cause_set(cause, "out of memory: %zu distinct pages of %llu bytes", p.used,
			  (unsigned long long)m->page_size);
		goto out;
	}
	dm_pass1_extent(m, &p);
	if (!m->accesses)
		m->addr_min = m->addr_max = 0;
	size_t n = 0;
	for (size_t i = 0; i < p.cap; i++)
		if (p.tab[i].page != DM_EMPTY)
			p.tab[n++] = p.tab[i];
	qsort(p.tab, n, sizeof *p.tab, dm_cmp_page);
	if (dm_build_runs(m, p.tab, n) < 0) {
		cause_set(cause, "out of memory for %zu page runs", n);
		goto out;
	}
	rc = 0;
out:
	dm_release(m, p.tab, p.cap * sizeof *p.tab);
	dm_release(m, p.dmin, nb * sizeof *p.dmin);
	dm_release(m, p.dmax, nb * sizeof *p.dmax);
	return rc;
}

/* ---- pass 2: the fine histogram ---- */

static void dm_add(uint32_t *c)
{
	if (*c != UINT32_MAX)
		(*c)++;
}

static void dm_hist_visit(void *ctx, const struct dm_rec *x)
{
	struct dmat *m = ctx;
	if (!x->kept)
		return;
	int64_t row = dmat_addr_row(m, x->addr);
	if (row < 0)
		return;
	uint64_t col = x->t >> __builtin_ctzll(m->hist_bw);
	if (col >= m->hist_cols)
		col = m->hist_cols - 1;
	dm_add(&m->hist[((uint64_t)row >> __builtin_ctzll(m->hist_rh)) * m->hist_cols + col]);
}

/* Sizes the histogram: power-of-two bins, as fine as the limits allow. */
static void dm_hist_size(struct dmat *m, const struct dmat_opts *o)
{
	uint64_t cmax = o->hist_cols && o->hist_cols < DMAT_HIST_COLS ? o->hist_cols : DMAT_HIST_COLS;
	uint64_t rmax = o->hist_rows && o->hist_rows < DMAT_HIST_ROWS ? o->hist_rows : DMAT_HIST_ROWS;
	uint64_t span = (uint64_t)m->span, bw = 1, rh = 1;
	while ((span + bw - 1) / bw > cmax)
		bw <<= 1;
	uint64_t cols = (span + bw - 1) / bw;
	while ((m->n_rows + rh - 1) / rh > rmax || (m->n_rows + rh - 1) / rh * cols > DMAT_HIST_CELLS)
		rh <<= 1;
	m->hist_bw = bw;
	m->hist_rh = rh;
	m->hist_cols = (uint32_t)cols;
	m->hist_rows = (uint32_t)((m->n_rows + rh - 1) / rh);
}

static int dm_pass2(struct dmat *m, const struct dmat_opts *o, char **cause)
{
	m->hist_bw = m->hist_rh = 1;
	if (!m->accesses)
		return 0;
	dm_hist_size(m, o);
	m->hist = dm_alloc(m, (size_t)m->hist_cols * m->hist_rows * sizeof *m->hist);
	if (!m->hist)
		return cause_set(cause, "out of memory for a %ux%u histogram", m->hist_cols, m->hist_rows);
	size_t pass_mem = 0;
	if (dm_walk(m, dm_hist_visit, m, &pass_mem, cause) < 0)
		return -1;
	dm_peak(m, pass_mem);
	return 0;
}

/* ---- create ---- */

static void dm_units(struct dmat *m, const char *lane)
{
	if (m->time == DMAT_TIME_SM) {
		m->unit = m->tick_unit = "cycles";
		m->tick_div = 1;
		snprintf(m->axis_label, sizeof m->axis_label,
			 "%s clock cycles since each block's first access (%s clocks are independent)", lane, lane);
		return;
	}
	m->unit = "ns";
	if (m->span < 5e3) {
		m->tick_unit = "ns";
		m->tick_div = 1;
	} else if (m->span < 5e6) {
		m->tick_unit = "\xc2\xb5s";
		m->tick_div = 1e3;
	} else {
		m->tick_unit = "ms";
		m->tick_div = 1e6;
	}
	snprintf(m->axis_label, sizeof m->axis_label, "%s of the global timer since the first access (all %ss aligned)",
		 m->tick_unit, lane);
}

static int dm_layout(struct dmat *m, const struct dmat_opts *o, char **cause)
{
	const struct result_map *mp = &m->r->maps[m->map_index];
	const struct probe_map *pm = &mp->map;
	m->off_addr = dm_field(pm, "addr", PROBE_U64);
	m->off_clock = dm_clock_field(pm, &m->clock_bytes);
	m->off_gtime = dm_field(pm, "gtime", PROBE_U64);
	m->off_sizekind = dm_field(pm, "sizekind", PROBE_U32);
	m->off_access = dm_field(pm, "access", PROBE_U32);
	m->off_size = dm_field(pm, "size", PROBE_U32);
	m->off_kind = dm_field(pm, "kind", PROBE_U32);
	m->time = o->time;
	m->gtimer_ns = o->amd ? 10 : 1;
	if (m->time == DMAT_TIME_GLOBAL && m->off_gtime < 0) {
		m->time = DMAT_TIME_SM;
		snprintf(m->note, sizeof m->note, "no global timer (gtime) in the records: showing %s cycles",
			 o->amd ? "CU" : "SM");
	} else if (m->time == DMAT_TIME_SM && m->off_clock < 0) {
		m->time = DMAT_TIME_GLOBAL;
		snprintf(m->note, sizeof m->note, "no %s clock in the records: showing global timer ns",
			 o->amd ? "CU" : "SM");
	}
	m->units_per_block = result_units_per_block(m->r, pm);
	if (!m->units_per_block)
		m->units_per_block = mp->units ? mp->units : 1; /* unknown block: one origin */
	if (!mp->counts || (!m->st && !mp->records && mp->units))
		return cause_set(cause, "map %s: no records loaded", pm->name);
	if (mp->sample_shift && mp->units_per_block != m->units_per_block)
		return cause_set(cause, "map %s: sampled in blocks of %llu units, the launch has %llu", pm->name,
				 (unsigned long long)mp->units_per_block, (unsigned long long)m->units_per_block);
	m->n_blocks = dm_n_blocks(m);
	return 0;
}

static int dm_copy_allocs(struct dmat *m, const struct dmat_opts *o, char **cause)
{
	if (o->n_allocs < 0 || (o->n_allocs && !o->allocs))
		return cause_set(cause, "bad allocation list");
	if (o->alloc_filter != DMAT_NONE && (o->alloc_filter < 0 || o->alloc_filter >= o->n_allocs))
		return cause_set(cause, "allocation filter %d: there are %d allocations", o->alloc_filter, o->n_allocs);
	m->alloc_filter = o->alloc_filter;
	if (!o->n_allocs)
		return 0;
	m->allocs = dm_alloc(m, (size_t)o->n_allocs * sizeof *m->allocs);
	if (!m->allocs)
		return cause_set(cause, "out of memory");
	m->n_allocs = o->n_allocs;
	for (int i = 0; i < o->n_allocs; i++) {
		m->allocs[i] = o->allocs[i];
		if (o->allocs[i].label) {
			size_t n = strlen(o->allocs[i].label) + 1;
			char *s = dm_alloc(m, n);
			if (!s)
				return cause_set(cause, "out of memory");
			memcpy(s, o->allocs[i].label, n);
			m->allocs[i].label = s;
		}
	}
	return 0;
}

static int dm_new(const struct result *r, int map_index, const struct dmat_opts *o, struct dmat **out,
		  char **cause)
{
	*out = NULL;
	if (map_index < 0 || map_index >= r->n_maps)
		return cause_set(cause, "no DMAT map (need fields addr:u64 and clock or gtime)");
	char why[160];
	dmat_map_problem(r, map_index, why, sizeof why);
	if (why[0])
		return cause_set(cause, "%s", why);
	uint64_t ps = o->page_size ? o->page_size : DMAT_PAGE_DEFAULT;
	if (ps < DMAT_PAGE_MIN || ps > DMAT_PAGE_MAX || (ps & (ps - 1)))
		return cause_set(cause, "page size %llu: must be a power of two from %u to %u bytes",
				 (unsigned long long)ps, DMAT_PAGE_MIN, DMAT_PAGE_MAX);
	struct dmat *m = calloc(1, sizeof *m);
	if (!m)
		return cause_set(cause, "out of memory");
	m->mem_bytes = m->mem_peak = sizeof *m;
	m->r = r;
	m->map_index = map_index;
	m->page_size = ps;
	m->gap_keep = o->gap_keep ? o->gap_keep : DMAT_GAP_KEEP_DEFAULT;
	m->kinds = o->kinds ? o->kinds : UINT32_MAX;
	if (o->sites) {
		m->site_filter = 1;
		memcpy(m->sites, o->sites, sizeof m->sites);
	}
	m->dropped = r->maps[map_index].records_dropped;
	m->unsampled = r->maps[map_index].records_unsampled;
	m->unsampled_unknown = r->maps[map_index].unsampled_unknown;
	m->sample_shift = r->maps[map_index].sample_shift;
	*out = m;
	return 0;
}

static int dm_build(struct dmat *m, const struct dmat_opts *o, char **cause)
{
	if (dm_copy_allocs(m, o, cause) < 0 || dm_layout(m, o, cause) < 0 || dm_pass1(m, cause) < 0)
		return -1;
	dm_units(m, o->amd ? "CU" : "SM");
	return dm_pass2(m, o, cause);
}

int dmat_create(const struct result *r, int map_index, const struct dmat_opts *o, struct dmat **out,
		char **cause)
{
	struct dmat *m = NULL;
	if (dm_new(r, map_index, o, &m, cause) < 0)
		return -1;
	if (dm_build(m, o, cause) < 0) {
		dmat_free(m);
		return -1;
	}
	*out = m;
	return 0;
}

int dmat_open(const char *path, int map_index, const struct dmat_opts *o, struct dmat **out, char **cause)
{
	*out = NULL;
	struct result_stream *st = NULL;
	if (result_stream_open(path, &st, cause) < 0)
		return -1;
	const struct result *r = result_stream_result(st);
	struct dmat *m = NULL;
	if (dm_new(r, map_index < 0 ? dmat_find_map(r) : map_index, o, &m, cause) < 0) {
		result_stream_close(st);
		return cause_wrap(cause, "%s", path);
	}
	m->st = st;
	m->cache = calloc(1, sizeof *m->cache); /* NULL: no cache, still correct */
	m->mem_bytes += result_stream_mem(st);
	dm_peak(m, 0);
	if (dm_build(m, o, cause) < 0) {
		dmat_free(m);
		return cause_wrap(cause, "%s", path);
	}
	*out = m;
	return 0;
}

void dmat_free(struct dmat *m)
{
	if (!m)
		return;
	for (int i = 0; i < m->n_allocs; i++)
		free((char *)m->allocs[i].label);
	free(m->allocs);
	free(m->runs);
	free(m->org);
	free(m->hist);
	if (m->cache)
		free(m->cache->grid);
	free(m->cache);
	result_stream_close(m->st);
	free(m);
}

/* ---- lookups ---- */

int dmat_row_run(const struct dmat *m, uint64_t row)
{
	if (!m->n_runs || row >= m->n_rows)
		return -1;
	uint32_t lo = 0, hi = m->n_runs; /* last run with row0 <= row */
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (m->runs[mid].row0 <= row)
			lo = mid;
		else
			hi = mid;
	}
	return (int)lo;
}

int64_t dmat_addr_row(const struct dmat *m, uint64_t addr)
{
	uint64_t page = addr / m->page_size;
	if (!m->n_runs || page < m->runs[0].page0)
		return -1;
	uint32_t lo = 0, hi = m->n_runs;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (m->runs[mid].page0 <= page)
			lo = mid;
		else
			hi = mid;
	}
	const struct dmat_run *r = &m->runs[lo];
	if (page - r->page0 >= r->n_pages)
		return -1;
	return (int64_t)(r->row0 + (page - r->page0));
}

uint64_t dmat_row_addr(const struct dmat *m, uint64_t row)
{
	if (!m->n_runs)
		return 0;
	if (row >= m->n_rows) {
		const struct dmat_run *r = &m->runs[m->n_runs - 1];
		return (r->page0 + r->n_pages) * m->page_size;
	}
	const struct dmat_run *r = &m->runs[dmat_row_run(m, row)];
	return (r->page0 + (row - r->row0)) * m->page_size;
}

int dmat_alloc_of(const struct dmat *m, uint64_t addr)
{
	for (int i = 0; i < m->n_allocs; i++)
		if (dm_in_alloc(&m->allocs[i], addr))
			return i;
	return DMAT_NONE;
}

/* ---- viewport ---- */

void dmat_view_fit(const struct dmat *m, struct dmat_view *v)
{
	v->t0 = 0;
	v->t1 = m->span > DM_MIN_WIDTH ? m->span : DM_MIN_WIDTH;
	v->y0 = 0;
	v->y1 = m->n_rows ? (double)m->n_rows : 1;
}

static void dm_clamp_axis(double *a, double *b, double lo, double hi, double min_w)
{
	double w = *b - *a;
	if (hi - lo < min_w)
		hi = lo + min_w;
	if (!(w >= min_w))
		w = min_w;
	if (w > hi - lo)
		w = hi - lo;
	if (*a < lo)
		*a = lo;
	if (*a + w > hi)
		*a = hi - w;
	*b = *a + w;
}

void dmat_view_clamp(const struct dmat *m, struct dmat_view *v)
{
	dm_clamp_axis(&v->t0, &v->t1, 0, m->span, DM_MIN_WIDTH);
	dm_clamp_axis(&v->y0, &v->y1, 0, m->n_rows ? (double)m->n_rows : 1, 1);
}

void dmat_view_zoom(const struct dmat *m, struct dmat_view *v, double factor, double at)
{
	if (!(factor > 0))
		return;
	v->t0 = at - (at - v->t0) / factor;
	v->t1 = at + (v->t1 - at) / factor;
	dmat_view_clamp(m, v);
}

void dmat_view_zoom_rows(const struct dmat *m, struct dmat_view *v, double factor, double at)
{
	if (!(factor > 0))
		return;
	v->y0 = at - (at - v->y0) / factor;
	v->y1 = at + (v->y1 - at) / factor;
	dmat_view_clamp(m, v);
}

void dmat_view_pan(const struct dmat *m, struct dmat_view *v, double frac)
{
	double d = (v->t1 - v->t0) * frac;
	v->t0 += d;
	v->t1 += d;
	dmat_view_clamp(m, v);
}

void dmat_view_scroll(const struct dmat *m, struct dmat_view *v, double frac)
{
	double d = (v->y1 - v->y0) * frac;
	v->y0 += d;
	v->y1 += d;
	dmat_view_clamp(m, v);
}

int dmat_view_alloc(const struct dmat *m, struct dmat_view *v, int a)
{
	int first = -1, last = -1;
	for (uint32_t i = 0; i < m->n_runs; i++)
		if (m->runs[i].alloc == a) {
			if (first < 0)
				first = (int)i;
			last = (int)i;
		}
	if (first < 0)
		return -1;
	dmat_view_fit(m, v);
	v->y0 = (double)m->runs[first].row0;
	v->y1 = (double)(m->runs[last].row0 + m->runs[last].n_pages);
	return 0;
}

/* ---- binning ---- */

struct dm_bin {
	const struct dmat *m;
	const struct dmat_view *v;
	int cols, rows, zoomed;
	double tw, yh;       /* window width (axis units) and height (rows) */
	uint32_t *out;
};

static void dm_bin_visit(void *ctx, const struct dm_rec *x)
{
	struct dm_bin *b = ctx;
	if (!x->kept)
		return;
	double t = (double)x->t;
	if (t < b->v->t0 || t >= b->v->t1)
		return;
	int col = (int)floor((t - b->v->t0) * b->cols / b->tw);
	if (col >= b->cols)
		col = b->cols - 1;
	int64_t row = dmat_addr_row(b->m, x->addr);
	if (row < 0)
		return;
	double p = (double)row;
	if (!b->zoomed) {
		double c = p + 0.5;
		if (c < b->v->y0 || c >= b->v->y1)
			return;
		int r = (int)floor((c - b->v->y0) * b->rows / b->yh);
		dm_add(&b->out[(size_t)(r < b->rows ? r : b->rows - 1) * b->cols + col]);
		return;
	}
	if (p + 1 <= b->v->y0 || p >= b->v->y1)
		return;
	int ra = (int)floor((p - b->v->y0) * b->rows / b->yh);
	int rb = (int)ceil((p + 1 - b->v->y0) * b->rows / b->yh) - 1;
	ra = ra < 0 ? 0 : ra;
	rb = rb >= b->rows ? b->rows - 1 : rb;
	for (int r = ra; r <= rb; r++)
		dm_add(&b->out[(size_t)r * b->cols + col]);
}

int dmat_bin_fast(const struct dmat *m, const struct dmat_view *v, int cols, int rows)
{
	if (!m->hist || cols <= 0 || rows <= 0)
		return 1;
	double cw = (v->t1 - v->t0) / cols, rh = (v->y1 - v->y0) / rows;
	int zoomed = rows > v->y1 - v->y0;
	return (m->hist_bw == 1 || cw >= (double)m->hist_bw) && (m->hist_rh == 1 || (!zoomed && rh >= (double)m->hist_rh));
}

/* Where one histogram bin goes on one output axis: cells a..b, each with
 * weight 1 (fill: a page zoomed over several output rows), or cell a with
 * weight wa and cell b (if >= 0) with wb. a < 0: outside the view. */
struct dm_split {
	int a, b, fill;
	double wa, wb;
};

/* Output cell of point x on an axis whose view [v0, v0 + vw) has n cells
 * (dm_bin_visit's arithmetic, so that one-wide bins are exact); -1 outside. */
static int dm_cell_of(double x, double v0, double vw, int n)
{
	if (x < v0 || x >= v0 + vw)
		return -1;
	int c = (int)floor((x - v0) * n / vw);
	return c < n ? c : n - 1;
}

/* Points first + k (k < npts) that fall in [lo, hi). */
static double dm_points_in(double first, uint64_t npts, double lo, double hi)
{
	double a = ceil(lo - first), b = ceil(hi - first), n = (double)npts;
	a = a < 0 ? 0 : a > n ? n : a;
	b = b < 0 ? 0 : b > n ? n : b;
	return b > a ? b - a : 0;
}

/* A bin of npts integer points from `first`, on an axis whose cells are
 * at least npts wide: at most two cells, shared by how many points fall in
 * each (the records of a wide bin are assumed spread evenly over it). */
static void dm_split_points(double first, uint64_t npts, double v0, double vw, int n, struct dm_split *s)
{
	s->fill = 0;
	s->a = s->b = -1;
	s->wa = 1;
	s->wb = 0;
	double last = first + (double)(npts - 1);
	if (npts <= 1 || last < v0 || first >= v0 + vw) {
		s->a = npts ? dm_cell_of(first, v0, vw, n) : -1;
		return;
	}
	int ca = first < v0 ? 0 : dm_cell_of(first, v0, vw, n);
	int cb = last >= v0 + vw ? n - 1 : dm_cell_of(last, v0, vw, n);
	double w = vw / n;
	double ina = dm_points_in(first, npts, v0 + ca * w, ca == n - 1 ? v0 + vw : v0 + (ca + 1) * w);
	s->a = ca;
	s->wa = ina / (double)npts;
	if (cb != ca) {
		s->b = cb;
		s->wb = dm_points_in(first, npts, v0 + cb * w, cb == n - 1 ? v0 + vw : v0 + (cb + 1) * w) / (double)npts;
	}
}

/* Histogram row j on the output rows; time column i on the output columns. */
static void dm_split_row(const struct dmat *m, const struct dm_bin *b, uint64_t j, struct dm_split *s)
{
	uint64_t r0 = j * m->hist_rh, n = m->n_rows - r0 < m->hist_rh ? m->n_rows - r0 : m->hist_rh;
	if (!b->zoomed) {
		dm_split_points((double)r0 + 0.5, n, b->v->y0, b->yh, b->rows, s);
		return;
	}
	/* zoomed past one row per page: only with one-page bins (dmat_bin_fast) */
	double p = (double)r0;
	s->fill = 1;
	s->a = -1;
	if (p + 1 <= b->v->y0 || p >= b->v->y1)
		return;
	int ra = (int)floor((p - b->v->y0) * b->rows / b->yh);
	int rb = (int)ceil((p + 1 - b->v->y0) * b->rows / b->yh) - 1;
	s->a = ra < 0 ? 0 : ra;
	s->b = rb >= b->rows ? b->rows - 1 : rb;
}

static void dm_split_col(const struct dmat *m, const struct dm_bin *b, uint64_t i, struct dm_split *s)
{
	uint64_t t0 = i * m->hist_bw, span = (uint64_t)m->span;
	uint64_t n = span - t0 < m->hist_bw ? span - t0 : m->hist_bw;
	dm_split_points((double)t0, n, b->v->t0, b->tw, b->cols, s);
}

static void dm_put(const struct dm_bin *b, double *acc, int row, int col, uint32_t v, double w)
{
	size_t k = (size_t)row * b->cols + col;
	if (!acc) {
		uint64_t x = (uint64_t)b->out[k] + v;
		b->out[k] = x > UINT32_MAX ? UINT32_MAX : (uint32_t)x;
	} else {
		acc[k] += v * w;
	}
}

/* One histogram cell into the output: rows by sr, columns by sc. */
static void dm_put_cell(const struct dm_bin *b, double *acc, const struct dm_split *sr, const struct dm_split *sc,
			uint32_t v)
{
	if (sr->fill) {
		for (int r = sr->a; r <= sr->b; r++) {
			dm_put(b, acc, r, sc->a, v, sc->wa);
			if (sc->b >= 0)
				dm_put(b, acc, r, sc->b, v, sc->wb);
		}
		return;
	}
	dm_put(b, acc, sr->a, sc->a, v, sr->wa * sc->wa);
	if (sc->b >= 0)
		dm_put(b, acc, sr->a, sc->b, v, sr->wa * sc->wb);
	if (sr->b >= 0) {
		dm_put(b, acc, sr->b, sc->a, v, sr->wb * sc->wa);
		if (sc->b >= 0)
			dm_put(b, acc, sr->b, sc->b, v, sr->wb * sc->wb);
	}
}

/* dmat_bin from the histogram. One-wide bins land whole in the cell the
 * records would (exact); wider ones are shared, summed in doubles. */
static int dm_bin_hist(const struct dm_bin *b)
{
	const struct dmat *m = b->m;
	int exact = m->hist_bw == 1 && m->hist_rh == 1;
	size_t cells = (size_t)b->cols * b->rows;
	double *acc = exact ? NULL : calloc(cells, sizeof *acc);
	struct dm_split *sc = malloc(m->hist_cols * sizeof *sc);
	int rc = -1;
	if ((!exact && !acc) || !sc)
		goto out;
	for (uint32_t i = 0; i < m->hist_cols; i++)
		dm_split_col(m, b, i, &sc[i]);
	for (uint32_t j = 0; j < m->hist_rows; j++) {
		struct dm_split sr;
		dm_split_row(m, b, j, &sr);
		if (sr.a < 0)
			continue;
		const uint32_t *h = m->hist + (size_t)j * m->hist_cols;
		for (uint32_t i = 0; i < m->hist_cols; i++)
			if (h[i] && sc[i].a >= 0)
				dm_put_cell(b, acc, &sr, &sc[i], h[i]);
	}
	for (size_t k = 0; acc && k < cells; k++)
		b->out[k] = acc[k] >= UINT32_MAX ? UINT32_MAX : (uint32_t)llround(acc[k]);
	rc = 0;
out:
	free(acc);
	free(sc);
	return rc;
}

/* The slow path: one pass over the records, unless the same view was just
 * binned that way (a UI redraws the same view on every key). */
static int dm_bin_records(const struct dm_bin *b)
{
	struct dmat_bin_cache *c = b->m->cache;
	size_t n = (size_t)b->cols * b->rows;
	if (c && c->cols == b->cols && c->rows == b->rows && memcmp(&c->v, b->v, sizeof c->v) == 0) {
		memcpy(b->out, c->grid, n * sizeof *b->out);
		return 0;
	}
	if (dm_walk(b->m, dm_bin_visit, (void *)b, NULL, NULL) < 0)
		return -1;
	uint32_t *g = c ? realloc(c->grid, n * sizeof *g) : NULL;
	if (c && g) {
		memcpy(g, b->out, n * sizeof *g);
		c->grid = g;
		c->v = *b->v;
		c->cols = b->cols;
		c->rows = b->rows;
	} else if (c) {
		c->cols = 0;
	}
	return 0;
}

int dmat_bin(const struct dmat *m, const struct dmat_view *v, int cols, int rows, uint32_t *out,
	     uint32_t *max_out)
{
	if (cols <= 0 || rows <= 0 || !(v->t1 > v->t0) || !(v->y1 > v->y0))
		return -1;
	size_t cells = (size_t)cols * rows;
	memset(out, 0, cells * sizeof *out);
	struct dm_bin b = {m, v, cols, rows, rows > v->y1 - v->y0, v->t1 - v->t0, v->y1 - v->y0, out};
	int rc = 0;
	if (m->accesses && dmat_bin_fast(m, v, cols, rows))
		rc = dm_bin_hist(&b);
	else if (m->accesses)
		rc = dm_bin_records(&b);
	if (rc < 0)
		memset(out, 0, cells * sizeof *out);
	if (max_out) {
		uint32_t mx = 0;
		for (size_t i = 0; i < cells; i++)
			if (out[i] > mx)
				mx = out[i];
		*max_out = mx;
	}
	return rc;
}

int dmat_cell_at(const struct dmat *m, const struct dmat_view *v, int cols, int rows, const uint32_t *grid,
		 int col, int row, struct dmat_cell *c)
{
	memset(c, 0, sizeof *c);
	if (col < 0 || row < 0 || col >= cols || row >= rows)
		return -1;
	double w = (v->t1 - v->t0) / cols, h = (v->y1 - v->y0) / rows;
	c->t0 = v->t0 + col * w;
	c->t1 = c->t0 + w;
	double ya = v->y0 + row * h, yb = ya + h;
	int zoomed = rows > v->y1 - v->y0;
	double a = zoomed ? floor(ya) : ceil(ya - 0.5), e = zoomed ? ceil(yb) : ceil(yb - 0.5);
	if (a < 0)
		a = 0;
	if (e > (double)m->n_rows)
		e = (double)m->n_rows;
	c->alloc = DMAT_NONE;
	c->count = grid ? grid[(size_t)row * cols + col] : 0;
	if (!(e > a))
		return 0;
	c->row0 = (uint64_t)a;
	c->row1 = (uint64_t)e;
	c->pages = c->row1 - c->row0;
	c->addr0 = dmat_row_addr(m, c->row0);
	c->addr1 = dmat_row_addr(m, c->row1 - 1) + m->page_size;
	int r0 = dmat_row_run(m, c->row0), r1 = dmat_row_run(m, c->row1 - 1);
	c->runs = r0 >= 0 && r1 >= r0 ? (uint32_t)(r1 - r0 + 1) : 0;
	c->alloc = r0 >= 0 ? m->runs[r0].alloc : DMAT_NONE;
	return 0;
}

/* ---- colour ---- */

double dmat_scale(uint32_t count, uint32_t max)
{
	if (count <= 1 || max <= 1)
		return count && max <= 1 ? 1 : 0;
	if (count >= max)
		return 1;
	return log((double)count) / log((double)max);
}

struct rgb dmat_color(const struct theme *th, uint32_t count, uint32_t max)
{
	if (!count)
		return th->c[THEME_BG];
	return theme_gradient(th, dmat_scale(count, max));
}

/* ---- text ---- */

const char *dmat_kind_name(enum dmat_kind k)
{
	static const char *const names[DMAT_N_KINDS] = {"other", "load", "store", "atomic", "async load", "async store"};
	return (unsigned)k < DMAT_N_KINDS ? names[k] : "other";
}

void dmat_fmt_addr(uint64_t addr, char *buf, size_t len)
{
	snprintf(buf, len, "0x%llx", (unsigned long long)addr);
}

void dmat_row_label(const struct dmat *m, uint64_t row, char *buf, size_t len)
{
	uint64_t addr = dmat_row_addr(m, row);
	int a = dmat_alloc_of(m, addr);
	if (a < 0 || !m->allocs[a].label)
		dmat_fmt_addr(addr, buf, len);
	else if (addr == m->allocs[a].base)
		snprintf(buf, len, "%s", m->allocs[a].label);
	else
		snprintf(buf, len, "%s+0x%llx", m->allocs[a].label, (unsigned long long)(addr - m->allocs[a].base));
}

void dmat_fmt_bytes(uint64_t b, char *buf, size_t len)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	int u = 0;
	double v = (double)b;
	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	if (u == 0 || v == floor(v))
		snprintf(buf, len, "%.0f %s", v, units[u]);
	else
		snprintf(buf, len, "%.1f %s", v, units[u]);
}

void dmat_fmt_tick(const struct dmat *m, double t, double step, char *buf, size_t len)
{
	double v = t / m->tick_div, s = step / m->tick_div;
	if (s >= 1) {
		timeline_fmt_num(v, buf, len);
		return;
	}
	int dec = (int)ceil(-log10(s) - 1e-9);
	snprintf(buf, len, "%.*f", dec > 6 ? 6 : dec, v);
}

static void dm_kind_share(const struct dmat *m, char *buf, size_t len)
{
	static const char *const abbr[DMAT_N_KINDS] = {"other", "ld", "st", "atom", "cp.async", "bulk st"};
	size_t o = 0;
	buf[0] = 0;
	for (int k = 1; k <= DMAT_N_KINDS; k++) {
		int kk = k % DMAT_N_KINDS; /* other last */
		if (!m->by_kind[kk] || o + 1 >= len)
			continue;
		double pct = 100.0 * (double)m->by_kind[kk] / (double)m->accesses;
		o += (size_t)snprintf(buf + o, len - o, "%s%s %.0f%%", o ? " " : "", abbr[kk], pct);
	}
}

void dmat_header(const struct dmat *m, char *buf, size_t len)
{
	char acc[32], bytes[32], kinds[96], drop[96] = "", smp[96] = "";
	timeline_fmt_num((double)m->accesses, acc, sizeof acc);
	dmat_fmt_bytes(m->bytes, bytes, sizeof bytes);
	dm_kind_share(m, kinds, sizeof kinds);
	if (m->dropped) {
		char d[32];
		timeline_fmt_num((double)m->dropped, d, sizeof d);
		snprintf(drop, sizeof drop, "  %s dropped past cap %u", d, m->r->maps[m->map_index].map.cap);
	}
	if (m->sample_shift && m->unsampled_unknown) {
		snprintf(smp, sizeof smp, "  1 block in %llu sampled (the others not counted)", 1ull << m->sample_shift);
	} else if (m->sample_shift) {
		char d[32];
		timeline_fmt_num((double)m->unsampled, d, sizeof d);
		snprintf(smp, sizeof smp, "  1 block in %llu sampled (%s not kept)", 1ull << m->sample_shift, d);
	}
	char pages[32], ps[32];
	timeline_fmt_num((double)m->n_rows, pages, sizeof pages);
	dmat_fmt_bytes(m->page_size, ps, sizeof ps);
	snprintf(buf, len, "%s access%s  %s  %s  %s page%s of %s in %u range%s%s%s", acc, m->accesses == 1 ? "" : "es",
		 m->bytes ? bytes : "size n/a", kinds[0] ? kinds : "-", pages, m->n_rows == 1 ? "" : "s", ps, m->n_runs,
		 m->n_runs == 1 ? "" : "s", drop, smp);
}

void dmat_cell_text(const struct dmat *m, const struct dmat_cell *c, char *buf, size_t len)
{
	char t0[32], t1[32], a0[32], a1[32], where[96] = "";
	double step = c->t1 - c->t0;
	dmat_fmt_tick(m, c->t0, step, t0, sizeof t0);
	dmat_fmt_tick(m, c->t1, step, t1, sizeof t1);
	if (!c->pages) {
		snprintf(buf, len, "t %s-%s %s  no pages  %u accesses", t0, t1, m->tick_unit, c->count);
		return;
	}
	dmat_fmt_addr(c->addr0, a0, sizeof a0);
	dmat_fmt_addr(c->addr1 - 1, a1, sizeof a1);
	if (c->alloc >= 0) {
		const struct dmat_alloc *a = &m->allocs[c->alloc];
		char base[32];
		dmat_fmt_addr(a->base, base, sizeof base);
		snprintf(where, sizeof where, ", %s+0x%llx", a->label ? a->label : base,
			 (unsigned long long)(c->addr0 > a->base ? c->addr0 - a->base : 0));
	}
	snprintf(buf, len, "t %s-%s %s  %s-%s (%llu page%s%s%s)  %u access%s", t0, t1, m->tick_unit, a0, a1,
		 (unsigned long long)c->pages, c->pages == 1 ? "" : "s", c->runs > 1 ? ", spans a gap" : "", where,
		 c->count, c->count == 1 ? "" : "es");
}
