/* The GPU side of the Perfetto export: each probed launch's blocks from its
 * block_sched records (export_perfetto_int.h), placed in time by the same
 * model as the timeline view (viz/timeline.h) so both show the same thing. */
#include "cli/export_perfetto_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"
#include "trace/result.h"
#include "viz/block_sched.h"
#include "viz/timeline.h"

static int pf_grow_blocks(struct pf_set *s, uint64_t more)
{
	if (s->n_b + more <= s->cap_b)
		return 0;
	size_t cap = s->cap_b ? s->cap_b : 1024;
	while (cap < s->n_b + more)
		cap *= 2;
	struct pf_block *n = realloc(s->b, cap * sizeof *n);
	if (!n)
		return -1;
	s->b = n;
	s->cap_b = cap;
	return 0;
}

uint64_t pf_cycles_ns(uint64_t cycles, uint32_t khz)
{
	return khz ? (uint64_t)llround((double)cycles * 1e6 / khz) : cycles;
}

/* Block i of the timeline as a slice: global timer start (on AMD GPUs the
 * launch's host time plus the block's global time since the first block),
 * or the launch's host time plus cycles since its SM's first block. */
static void pf_block_of(const struct timeline *tl, const struct tl_lane *ln, uint32_t i, const struct result *r,
			uint64_t tpid, struct pf_block *pb)
{
	const struct bs_block *b = &tl->bs->blocks[i];
	memset(pb, 0, sizeof *pb);
	pb->pid = r->pid;
	pb->tpid = tpid;
	pb->kid = r->kernel_id;
	pb->seq = r->seq;
	pb->smid = b->smid;
	pb->warps = b->warps;
	pb->index = b->index;
	uint64_t gx = r->grid[0] ? r->grid[0] : 1, gy = r->grid[1] ? r->grid[1] : 1;
	pb->xyz[0] = (uint32_t)(b->index % gx);
	pb->xyz[1] = (uint32_t)(b->index / gx % gy);
	pb->xyz[2] = (uint32_t)(b->index / (gx * gy));
	pb->start_cyc = b->start;
	pb->end_cyc = b->end;
	pb->gstart = b->gstart * tl->gtimer_ns;
	pb->dur = pf_cycles_ns(b->end - b->start, r->sm_clock_khz);
	/* AMD's real-time counter does not count from the host clock's epoch:
	 * its blocks keep their aligned offsets from the launch's host time */
	if (tl->time == TL_TIME_GLOBAL && tl->gtimer_ns != 1)
		pb->ts = r->wall_ns + (uint64_t)llround(tl->t_start[i]);
	else if (tl->time == TL_TIME_GLOBAL)
		pb->ts = pb->gstart;
	else
		pb->ts = r->wall_ns + pf_cycles_ns(b->start - ln->origin, r->sm_clock_khz);
}

/* A probed launch not timed by the hook lasts what the result's driver
 * events measured, else its blocks' span (first start to last end). */
static void pf_launch_dur(struct pf_set *s, const struct result *r, const struct timeline *tl)
{
	uint64_t dur = r->duration_ns, t0 = UINT64_MAX, t1 = 0;
	const char *from = "driver events";
	if (!dur && tl->time == TL_TIME_GLOBAL) {
		for (size_t i = s->n_b - tl->n_blocks; i < s->n_b; i++) {
			t0 = s->b[i].ts < t0 ? s->b[i].ts : t0;
			t1 = s->b[i].ts + s->b[i].dur > t1 ? s->b[i].ts + s->b[i].dur : t1;
		}
		dur = t1 > t0 ? t1 - t0 : 0;
		from = "blocks: first start to last end (global timer)";
	}
	for (size_t i = 0; dur && i < s->n_l; i++)
		if (s->l[i].pid == r->pid && s->l[i].seq == r->seq && !s->l[i].has_dur) {
			s->l[i].dur = dur;
			s->l[i].has_dur = 1;
			s->l[i].dur_from = from;
		}
}

void pf_note(struct pf_stats *st, const struct result *r, const char *why)
{
	st->sm_clock = 1;
	if (!st->note[0])
		snprintf(st->note, sizeof st->note, "seq %llu and maybe others: %s%s", (unsigned long long)r->seq, why,
			 r->sm_clock_khz ? "" : " (clock rate unknown: 1 cycle shown as 1 ns)");
}

/* Whether tr's result has block_sched records, from its header alone (a
 * dmat result can be hundreds of MB: not read for nothing). */
static int pf_has_block_sched(const struct td_result *tr)
{
	struct result *r = NULL;
	char *cause = NULL;
	int yes = tr->path && result_read_head(tr->path, &r, &cause) == 0 && block_sched_find_map(r) >= 0;
	free(cause);
	result_free(r);
	return yes;
}

/* One probed launch: 1 added, 0 no block_sched records (skipped), -1 out of memory. */
int pf_launch_blocks(const struct td_result *tr, int occ, int amd, uint64_t tpid, const struct pf_opts *o,
			    struct pf_set *s, struct pf_stats *st)
{
	struct result *r = NULL;
	struct block_sched *bs = NULL;
	struct timeline *tl = NULL;
	char *cause = NULL;
	int rc = 0, map;
	if (!pf_has_block_sched(tr) || result_read(tr->path, &r, &cause) < 0 || (map = block_sched_find_map(r)) < 0 ||
	    block_sched_analyze(r, map, occ, &bs, &cause) < 0)
		goto out;
	enum tl_time want = o->time == 0 ? TL_TIME_SM : TL_TIME_GLOBAL;
	if (timeline_create(bs, want, &(struct tl_device){ r->sm_clock_khz, r->device_sms, amd }, &tl, &cause) < 0)
		goto out;
	if (tl->time == TL_TIME_SM)
		pf_note(st, r, o->time == 0 ? "SM clock asked for" : tl->note);
	rc = -1;
	if (pf_grow_blocks(s, tl->n_blocks) < 0)
		goto out;
	for (uint32_t l = 0; l < tl->n_lanes; l++)
		for (uint32_t i = tl->lanes[l].first; i < tl->lanes[l].first + tl->lanes[l].n; i++)
			pf_block_of(tl, &tl->lanes[l], i, r, tpid, &s->b[s->n_b++]);
	pf_launch_dur(s, r, tl);
	rc = 1;
out:
	free(cause);
	timeline_free(tl);
	block_sched_free(bs);
	result_free(r);
	return rc;
}

void pf_set_free(struct pf_set *s)
{
	free(s->l);
	free(s->b);
	free(s->w);
	free(s->g);
	memset(s, 0, sizeof *s);
}
