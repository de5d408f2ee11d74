/* The warps of the Perfetto export (export_perfetto_int.h): each probed
 * launch with regions records gives a track per warp, a slice over the
 * warp's life and inside it a slice per region segment (viz/regions.h).
 * A warp's segments that overlap without nesting (two regions crossing)
 * go on extra tracks of that warp, since a track's slices must nest.
 * Times are SM cycles from the first warp entry of each SM, placed at the
 * launch's host time, as the timeline's SM-clock mode. */
#include "cli/export_perfetto_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/result.h"
#include "viz/regions.h"

#define PF_WARP_LANES 8  /* tracks per warp for crossing regions */
#define PF_WARP_DEPTH 64 /* nesting per track */

static int pf_grow(void **v, size_t *cap, size_t n, size_t more, size_t size)
{
	if (n + more <= *cap)
		return 0;
	size_t c = *cap ? *cap : 1024;
	while (c < n + more)
		c *= 2;
	void *p = realloc(*v, c * size);
	if (!p)
		return -1;
	*v = p;
	*cap = c;
	return 0;
}

/* "attn.py:48" or "ptx:123": where the segment's begin site is. */
static void pf_where(const struct result *r, int32_t site, char *buf, size_t n)
{
	buf[0] = 0;
	if (site < 0 || site >= r->sites.n)
		return;
	const struct engine_site *e = &r->sites.s[site];
	if (e->line > 0 && e->file >= 0 && e->file < r->sites.n_files) {
		const char *f = r->sites.files[e->file], *b = strrchr(f, '/');
		snprintf(buf, n, "%s:%d", b ? b + 1 : f, e->line);
	} else {
		snprintf(buf, n, "ptx:%d", e->ptx_line);
	}
}

/* Gives each of a warp's segments (sorted by start) the lowest track on
 * which it nests in or follows what is there; -1 when none of the
 * PF_WARP_LANES does. Returns the tracks used. */
static uint32_t pf_nest(struct pf_rseg *g, uint32_t n, uint64_t *dropped)
{
	uint64_t ends[PF_WARP_LANES][PF_WARP_DEPTH];
	int depth[PF_WARP_LANES] = {0};
	uint32_t lanes = 1;
	for (uint32_t i = 0; i < n; i++) {
		g[i].lane = -1;
		for (uint32_t l = 0; l < PF_WARP_LANES && g[i].lane < 0; l++) {
			while (depth[l] && ends[l][depth[l] - 1] <= g[i].start_cyc)
				depth[l]--;
			if (depth[l] == PF_WARP_DEPTH || (depth[l] && ends[l][depth[l] - 1] < g[i].end_cyc))
				continue;
			ends[l][depth[l]++] = g[i].end_cyc;
			g[i].lane = (int)l;
			lanes = l + 1 > lanes ? l + 1 : lanes;
		}
		*dropped += g[i].lane < 0;
	}
	return lanes;
}

/* Warp w of g as a pf_warp and its segments; 0, or -1 out of memory. */
static int pf_warp_add(struct pf_set *s, const struct result *r, const struct regions *g, const struct rg_warp *w,
		       uint64_t origin, struct pf_stats *st)
{
	if (pf_grow((void **)&s->w, &s->cap_w, s->n_w, 1, sizeof *s->w) < 0 ||
	    pf_grow((void **)&s->g, &s->cap_g, s->n_g, w->n_segs, sizeof *s->g) < 0)
		return -1;
	struct pf_warp *pw = &s->w[s->n_w++];
	*pw = (struct pf_warp){.pid = r->pid, .kid = r->kernel_id, .smid = w->smid, .warp = w->warp, .seq = r->seq,
			       .block = w->block, .entry_cyc = w->entry, .exit_cyc = w->exit, .truncated = w->truncated,
			       .seg0 = s->n_g, .n_segs = w->n_segs};
	pw->ts = r->wall_ns + pf_cycles_ns(w->entry - origin, r->sm_clock_khz);
	pw->dur = pf_cycles_ns(w->exit - w->entry, r->sm_clock_khz);
	for (uint32_t i = 0; i < w->n_segs; i++) {
		const struct rg_seg *x = &g->segs[w->first_seg + i];
		struct pf_rseg *o = &s->g[s->n_g++];
		char buf[32];
		snprintf(o->name, sizeof o->name, "%s", regions_name(g, x->region, buf, sizeof buf));
		pf_where(r, x->begin_site, o->where, sizeof o->where);
		o->start_cyc = x->start;
		o->end_cyc = x->end;
		o->ts = r->wall_ns + pf_cycles_ns(x->start - origin, r->sm_clock_khz);
		o->dur = pf_cycles_ns(x->end - x->start, r->sm_clock_khz);
	}
	pw->lanes = pf_nest(s->g + pw->seg0, pw->n_segs, &st->region_slices_dropped);
	st->warps++;
	st->region_slices += pw->n_segs;
	return 0;
}

static int pf_lane_wanted(long long by, const struct rg_warp *w)
{
	return !by || (by > 0 ? w->block == (uint64_t)(by - 1) : w->smid == (uint32_t)(-by - 1));
}

/* The earliest entry of each SM's warps (cycles), indexed by smid. */
static uint64_t *pf_sm_origins(const struct regions *g, uint32_t *n_sm)
{
	uint32_t n = 0;
	for (uint64_t i = 0; i < g->n_warps; i++)
		n = g->warps[i].smid + 1 > n ? g->warps[i].smid + 1 : n;
	uint64_t *o = malloc((n ? n : 1) * sizeof *o);
	if (!o)
		return NULL;
	for (uint32_t k = 0; k < n; k++)
		o[k] = UINT64_MAX;
	for (uint64_t i = 0; i < g->n_warps; i++)
		o[g->warps[i].smid] = g->warps[i].entry < o[g->warps[i].smid] ? g->warps[i].entry : o[g->warps[i].smid];
	*n_sm = n;
	return o;
}

/* Warps of the analysed launch; those past the slice budget are counted. */
static int pf_warps_of(struct pf_set *s, const struct result *r, const struct regions *g, const struct pf_opts *o,
		       struct pf_stats *st)
{
	uint32_t n_sm = 0;
	uint64_t *origin = pf_sm_origins(g, &n_sm);
	if (!origin)
		return -1;
	int rc = 0;
	for (uint64_t i = 0; i < g->n_warps && rc == 0; i++) {
		const struct rg_warp *w = &g->warps[i];
		if (!pf_lane_wanted(o->lanes, w))
			continue;
		if (st->region_slices + st->warps + w->n_segs + 1 > PF_WARP_SLICES_MAX) {
			st->warps_cut++;
			continue;
		}
		rc = pf_warp_add(s, r, g, w, origin[w->smid], st);
	}
	free(origin);
	return rc;
}

/* One probed launch's warps: 1 added, 0 no regions records, -1 out of memory. */
int pf_launch_warps(const struct td_result *tr, uint64_t tpid, const struct pf_opts *o, struct pf_set *s,
		    struct pf_stats *st)
{
	struct result *r = NULL;
	struct regions *g = NULL;
	char *cause = NULL;
	int rc = 0;
	if (!tr->path || result_read_head(tr->path, &r, &cause) < 0 || regions_find_map(r) < 0)
		goto out;
	result_free(r);
	r = NULL;
	if (result_read(tr->path, &r, &cause) < 0 || regions_analyze(r, regions_find_map(r), &g, &cause) < 0)
		goto out;
	pf_note(st, r, "regions are SM cycles");
	size_t w0 = s->n_w;
	rc = pf_warps_of(s, r, g, o, st) < 0 ? -1 : 1;
	for (size_t i = w0; i < s->n_w; i++)
		s->w[i].tpid = tpid;
out:
	free(cause);
	regions_free(g);
	result_free(r);
	return rc;
}
