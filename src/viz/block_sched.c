/* block_sched analysis (block_sched.h).
 *
 * Per SM the replay walks blocks in start order and keeps the end times of the
 * resident blocks in a min-heap. A block that starts at or after the earliest
 * end took that block's place: the gap between the two is scheduling time
 * (the SM had a free slot and nothing ran in it). A block that starts before
 * every resident block ended needed a slot of its own. NEUTRINO's script did
 * the same with a list scanned in block-index order and only warp 0's times;
 * sorting by start and using whole-block extents makes the split independent
 * of the order the hardware happened to number blocks. */
#include "viz/block_sched.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"

struct bs_layout {
	uint32_t start_off, el_off, smid_off, gstart_off;
	int start_size, el_size, has_gstart;
};

static const struct probe_field *bs_field(const struct probe_map *m, const char *a, const char *b)
{
	for (int i = 0; i < m->n_fields; i++)
		if (strcmp(m->fields[i].name, a) == 0 || (b && strcmp(m->fields[i].name, b) == 0))
			return &m->fields[i];
	return NULL;
}

static int bs_layout_of(const struct probe_map *m, struct bs_layout *l)
{
	memset(l, 0, sizeof *l);
	if (m->n_fields == 0) {
		/* NEUTRINO's warp:16 record: u64 lstart, u32 elapse, u32 smid */
		if (m->rec_size != 16 || m->level != PROBE_LEVEL_WARP)
			return -1;
		*l = (struct bs_layout){0, 8, 12, 0, 8, 4, 0};
		return 0;
	}
	const struct probe_field *s = bs_field(m, "start", "lstart");
	const struct probe_field *e = bs_field(m, "elapsed", "elapse");
	const struct probe_field *id = bs_field(m, "smid", "cuid"); /* cuid: NEUTRINO's DSL */
	const struct probe_field *g = bs_field(m, "gstart", NULL);
	if (!s || !e || !id || id->type != PROBE_U32)
		return -1;
	l->start_off = s->offset;
	l->start_size = (int)s->type;
	l->el_off = e->offset;
	l->el_size = (int)e->type;
	l->smid_off = id->offset;
	if (g && g->type == PROBE_U64) {
		l->has_gstart = 1;
		l->gstart_off = g->offset;
	}
	return 0;
}

int block_sched_find_map(const struct result *r)
{
	struct bs_layout l;
	for (int i = 0; i < r->n_maps; i++)
		if (bs_layout_of(&r->maps[i].map, &l) == 0)
			return i;
	return -1;
}

static uint64_t bs_get(const uint8_t *rec, uint32_t off, int size)
{
	uint64_t v = 0;
	memcpy(&v, rec + off, (size_t)size); /* little-endian host and device */
	return v;
}

/* ---- per-block extents ---- */

struct bs_ctx {
	const struct result_map *m;
	struct bs_layout l;
	uint64_t upb; /* units per block */
};

/* Folds block b's records into *blk (and the record extremes into *bs);
 * returns warps (units) that recorded. */
static uint32_t bs_fold_block(const struct bs_ctx *c, uint64_t b, struct bs_block *blk,
			      struct block_sched *bs)
{
	const struct result_map *m = c->m;
	uint64_t cap_bytes = (uint64_t)m->map.cap * m->map.rec_size;
	uint32_t warps = 0;
	int first = 1;
	for (uint64_t u = b * c->upb; u < (b + 1) * c->upb; u++) {
		uint64_t cnt = m->counts[u] < cap_bytes ? m->counts[u] : cap_bytes;
		uint64_t n = cnt / m->map.rec_size;
		warps += n > 0;
		for (uint64_t k = 0; k < n; k++) {
			const uint8_t *rec = result_map_record(m, u, (uint32_t)k);
			uint64_t s = bs_get(rec, c->l.start_off, c->l.start_size);
			uint64_t el = bs_get(rec, c->l.el_off, c->l.el_size);
			uint64_t e = s + el < s ? UINT64_MAX : s + el;
			uint32_t sm = (uint32_t)bs_get(rec, c->l.smid_off, 4);
			uint64_t g = c->l.has_gstart ? bs_get(rec, c->l.gstart_off, 8) : 0;
			if (sm > bs->smid_max)
				bs->smid_max = sm;
			if (el < bs->elapsed_min)
				bs->elapsed_min = el;
			if (el > bs->elapsed_max)
				bs->elapsed_max = el;
			if (first) {
				blk->start = s;
				blk->end = e;
				blk->smid = sm;
				blk->gstart = g;
				first = 0;
				continue;
			}
			if (s < blk->start) {
				blk->start = s;
				blk->gstart = g;
			}
			if (e > blk->end)
				blk->end = e;
			if (sm != blk->smid)
				blk->smid_mismatch = 1;
		}
	}
	blk->index = b;
	blk->warps = warps;
	return warps;
}

static int bs_cmp(const void *a, const void *b)
{
	const struct bs_block *x = a, *y = b;
	if (x->smid != y->smid)
		return x->smid < y->smid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* ---- per-SM replay with a min-heap of (end, slot) ---- */

struct bs_heap {
	uint64_t *end;
	uint32_t *slot;
	uint32_t n;
};

static void bs_heap_swap(struct bs_heap *h, uint32_t i, uint32_t j)
{
	uint64_t e = h->end[i];
	uint32_t s = h->slot[i];
	h->end[i] = h->end[j];
	h->slot[i] = h->slot[j];
	h->end[j] = e;
	h->slot[j] = s;
}

static void bs_heap_down(struct bs_heap *h, uint32_t i)
{
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < h->n && h->end[l] < h->end[m])
			m = l;
		if (r < h->n && h->end[r] < h->end[m])
			m = r;
		if (m == i)
			return;
		bs_heap_swap(h, i, m);
		i = m;
	}
}

static void bs_heap_push(struct bs_heap *h, uint64_t end, uint32_t slot)
{
	uint32_t i = h->n++;
	h->end[i] = end;
	h->slot[i] = slot;
	while (i > 0 && h->end[(i - 1) / 2] > h->end[i]) {
		bs_heap_swap(h, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static void bs_replay_sm(struct bs_block *blk, uint32_t n, struct bs_heap *h, struct bs_sm *sm)
{
	h->n = 0;
	uint32_t slots = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct bs_block *b = &blk[i];
		sm->running += b->end - b->start;
		if (h->n && h->end[0] <= b->start) {
			sm->sched += b->start - h->end[0];
			b->slot = h->slot[0];
			h->end[0] = b->end; /* the block takes over the freed slot */
			bs_heap_down(h, 0);
		} else {
			b->slot = slots++;
			bs_heap_push(h, b->end, b->slot);
		}
		if (h->n > sm->max_concurrent)
			sm->max_concurrent = h->n;
	}
	sm->blocks = n;
}

static int bs_replay(struct block_sched *bs, uint64_t n)
{
	struct bs_heap h = {malloc((size_t)n * sizeof *h.end), malloc((size_t)n * sizeof *h.slot), 0};
	if (n && (!h.end || !h.slot)) {
		free(h.end);
		free(h.slot);
		return -1;
	}
	uint64_t run = 0, sched = 0;
	for (uint64_t i = 0; i < n;) {
		uint64_t j = i;
		while (j < n && bs->blocks[j].smid == bs->blocks[i].smid)
			j++;
		struct bs_sm *sm = &bs->sms[bs->n_sms++];
		sm->smid = bs->blocks[i].smid;
		sm->first = (uint32_t)i;
		bs_replay_sm(&bs->blocks[i], (uint32_t)(j - i), &h, sm);
		run += sm->running;
		sched += sm->sched;
		if (sm->max_concurrent > bs->max_concurrent)
			bs->max_concurrent = sm->max_concurrent;
		i = j;
	}
	if (bs->n_sms) {
		bs->mean_running = (double)run / bs->n_sms;
		bs->mean_sched = (double)sched / bs->n_sms;
	}
	free(h.end);
	free(h.slot);
	return 0;
}

/* ---- entry point ---- */

static int bs_dims(const uint32_t d[3], uint64_t *out)
{
	uint64_t v = (uint64_t)d[0] * d[1];
	if (d[2] && v > UINT64_MAX / d[2])
		return -1;
	*out = v * d[2];
	return 0;
}

static int bs_check_shape(const struct result *r, const struct result_map *m, struct bs_ctx *c,
			  uint64_t *blocks, char **cause)
{
	uint64_t threads = 0;
	if (bs_dims(r->grid, blocks) < 0 || bs_dims(r->block, &threads) < 0 || !*blocks || !threads)
		return cause_set(cause, "bad launch shape %ux%ux%u blocks of %ux%ux%u threads",
				 r->grid[0], r->grid[1], r->grid[2], r->block[0], r->block[1], r->block[2]);
	c->upb = result_units_per_block(r, &m->map);
	if (*blocks > UINT64_MAX / c->upb || m->units != *blocks * c->upb)
		return cause_set(cause, "map %s holds %llu units, a launch of %llu blocks needs %llu per block",
				 m->map.name, (unsigned long long)m->units, (unsigned long long)*blocks,
				 (unsigned long long)c->upb);
	if (*blocks > UINT32_MAX)
		return cause_set(cause, "%llu blocks: too many to analyse", (unsigned long long)*blocks);
	return 0;
}

int block_sched_analyze(const struct result *r, int map_index, int occ_blocks_per_sm,
			struct block_sched **out, char **cause)
{
	*out = NULL;
	if (map_index < 0 || map_index >= r->n_maps)
		return cause_set(cause, "no map %d in the result", map_index);
	struct bs_ctx c = {&r->maps[map_index], {0}, 0};
	if (bs_layout_of(&c.m->map, &c.l) < 0)
		return cause_set(cause, "map %s has no start/elapsed/smid fields", c.m->map.name);
	uint64_t blocks = 0;
	if (bs_check_shape(r, c.m, &c, &blocks, cause) < 0)
		return -1;
	struct block_sched *bs = calloc(1, sizeof *bs);
	if (!bs || !(bs->blocks = calloc((size_t)blocks, sizeof *bs->blocks)))
		goto oom;
	bs->n_blocks = blocks;
	bs->warps_expected = c.m->units;
	bs->records_dropped = c.m->records_dropped;
	bs->elapsed_min = UINT64_MAX;
	uint64_t n = 0;
	for (uint64_t b = 0; b < blocks; b++) {
		struct bs_block *blk = &bs->blocks[n];
		memset(blk, 0, sizeof *blk);
		uint32_t w = bs_fold_block(&c, b, blk, bs);
		bs->warps_recorded += w;
		if (!w)
			continue; /* no warp of this block left a record */
		bs->smid_mismatch_blocks += (uint64_t)blk->smid_mismatch;
		n++;
	}
	bs->n_blocks_recorded = n;
	if (!n)
		bs->elapsed_min = 0;
	qsort(bs->blocks, (size_t)n, sizeof *bs->blocks, bs_cmp);
	bs->sms = calloc(n ? (size_t)n : 1, sizeof *bs->sms);
	if (!bs->sms || bs_replay(bs, n) < 0)
		goto oom;
	bs->waves = occ_blocks_per_sm > 0 && r->device_sms > 0
			    ? (double)blocks / ((double)occ_blocks_per_sm * r->device_sms)
			    : -1.0;
	*out = bs;
	return 0;
oom:
	block_sched_free(bs);
	return cause_set(cause, "out of memory for %llu blocks", (unsigned long long)blocks);
}

void block_sched_free(struct block_sched *bs)
{
	if (!bs)
		return;
	free(bs->blocks);
	free(bs->sms);
	free(bs);
}

void block_sched_line(const struct block_sched *bs, char *buf, size_t len)
{
	snprintf(buf, len, "No.block:%llu Running:%llu Scheduling:%llu (cycle)",
		 (unsigned long long)bs->n_blocks, (unsigned long long)bs->mean_running,
		 (unsigned long long)bs->mean_sched);
}
