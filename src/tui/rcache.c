/* Probed launch summaries (rcache.h). */
#include "tui/rcache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/result.h"
#include "viz/block_sched.h"
#include "viz/dmat.h"
#include "viz/lines.h"
#include "viz/regions.h"

void rcache_init(struct rcache *c)
{
	memset(c, 0, sizeof *c);
}

void rcache_done(struct rcache *c)
{
	free(c->s);
	memset(c, 0, sizeof *c);
}

static int rcache_grow(struct rcache *c, int n)
{
	if (n <= c->n)
		return 0;
	struct rsum *ns = realloc(c->s, (size_t)n * sizeof *ns);
	if (!ns)
		return -1;
	memset(ns + c->n, 0, (size_t)(n - c->n) * sizeof *ns);
	c->s = ns;
	c->n = n;
	return 0;
}

static void rcache_maps(const struct result *r, char *buf, size_t len)
{
	size_t o = (size_t)snprintf(buf, len, "probes %s; maps:", r->probes && *r->probes ? r->probes : "?");
	for (int m = 0; m < r->n_maps && o < len; m++)
		o += (size_t)snprintf(buf + o, len - o, " %s", r->maps[m].map.name);
	if (!r->n_maps && o < len)
		snprintf(buf + o, len - o, " none");
}

/* From the header: the blocks block sampling kept (first, so that a
 * narrow row still says it), the regions' names and what the cap cut. */
static void rcache_regions(const struct result *r, const struct result_map *mp, char *buf, size_t len)
{
	uint64_t blocks = (uint64_t)r->grid[0] * r->grid[1] * r->grid[2];
	uint64_t kept = result_map_kept_first(mp);
	size_t o = (size_t)snprintf(buf, len, "regions");
	if (kept)
		o += (size_t)snprintf(buf + o, len - o, " (blocks 0-%llu of %llu)", (unsigned long long)kept - 1,
				      (unsigned long long)blocks);
	else if (mp->sample_shift)
		o += (size_t)snprintf(buf + o, len - o, " (1 block in %llu)", 1ull << mp->sample_shift);
	for (int i = 0; i < r->sites.n_regions && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s %s", i ? "," : "", r->sites.regions[i].name);
	if (!r->sites.n_regions && o < len)
		o += (size_t)snprintf(buf + o, len - o, " (no site table)");
	if (o < len)
		snprintf(buf + o, len - o, ": %llu records, %llu dropped", (unsigned long long)mp->records_written,
			 (unsigned long long)mp->records_dropped);
}

static void rcache_read(struct rsum *s, const struct trace_dir *td, const struct td_result *tr)
{
	struct result *r = NULL;
	struct block_sched *bs = NULL;
	char *cause = NULL;
	if (!tr->path) {
		s->state = RSUM_ERROR;
		snprintf(s->line, sizeof s->line, "result path %s is outside the trace", tr->file);
		return;
	}
	/* header and counts only: a dmat launch's records can be gigabytes;
	 * the block_sched analysis (small maps) reads the records */
	if (result_read_head(tr->path, &r, &cause) < 0)
		goto fail;
	if (block_sched_find_map(r) >= 0) {
		result_free(r);
		r = NULL;
		if (result_read(tr->path, &r, &cause) < 0)
			goto fail;
	}
	s->duration_ns = r->duration_ns;
	for (int m = 0; m < r->n_maps; m++) {
		s->records += r->maps[m].records_written;
		s->dropped += r->maps[m].records_dropped;
	}
	int map = block_sched_find_map(r), dm = dmat_find_map(r), rg = regions_find_map(r);
	s->has_dmat = dm >= 0;
	s->has_regions = rg >= 0;
	s->has_lines = lines_find_map(r) >= 0 && r->sites.n > 0;
	if (map < 0 && rg >= 0) {
		rcache_regions(r, &r->maps[rg], s->line, sizeof s->line);
	} else if (map < 0 && dm >= 0) {
		const struct result_map *mp = &r->maps[dm];
		int n = snprintf(s->line, sizeof s->line, "dmat: %llu memory accesses recorded, %llu dropped",
				 (unsigned long long)mp->records_written, (unsigned long long)mp->records_dropped);
		if (mp->sample_shift && mp->unsampled_unknown && n > 0 && (size_t)n < sizeof s->line)
			snprintf(s->line + n, sizeof s->line - (size_t)n, ", 1 block in %llu sampled (the others not counted)",
				 1ull << mp->sample_shift);
		else if (mp->sample_shift && n > 0 && (size_t)n < sizeof s->line)
			snprintf(s->line + n, sizeof s->line - (size_t)n, ", 1 block in %llu sampled (%llu not kept)",
				 1ull << mp->sample_shift, (unsigned long long)mp->records_unsampled);
	} else if (map < 0) {
		rcache_maps(r, s->line, sizeof s->line);
	} else {
		const struct td_kernel *k = trace_dir_kernel(td, tr->pid, tr->kid);
		int occ = tr->occ > 0 ? tr->occ : k ? k->occ : 0;
		if (block_sched_analyze(r, map, occ, &bs, &cause) < 0)
			goto fail;
		s->has_bs = 1;
		block_sched_line(bs, s->line, sizeof s->line);
	}
	s->state = RSUM_OK;
	block_sched_free(bs);
	result_free(r);
	return;
fail:
	s->state = RSUM_ERROR;
	snprintf(s->line, sizeof s->line, "%s", cause ? cause : "unreadable");
	free(cause);
	block_sched_free(bs);
	result_free(r);
}

const struct rsum *rcache_get(struct rcache *c, const struct trace_dir *td, int i, int load)
{
	static const struct rsum pending = {.state = RSUM_PENDING, .line = "waiting for the result"};
	if (i < 0 || i >= td->n_results || rcache_grow(c, td->n_results) < 0)
		return &pending;
	struct rsum *s = &c->s[i];
	const struct td_result *tr = &td->results[i];
	if (s->state == RSUM_PENDING && tr->file && load)
		rcache_read(s, td, tr);
	if (s->state == RSUM_PENDING && !tr->file)
		snprintf(s->line, sizeof s->line, "waiting for the result");
	return s;
}

int rcache_idle(struct rcache *c, const struct trace_dir *td)
{
	if (rcache_grow(c, td->n_results) < 0)
		return 0;
	for (int i = c->scan; i < td->n_results; i++) {
		const struct td_result *tr = &td->results[i];
		if (c->s[i].state == RSUM_PENDING && tr->file && tr->bytes <= RCACHE_IDLE_BYTES) {
			rcache_read(&c->s[i], td, tr);
			c->scan = i + 1;
			return 1;
		}
	}
	c->scan = td->n_results;
	return 0;
}

void rcache_rescan(struct rcache *c)
{
	c->scan = 0;
}

double rcache_kernel_mean(const struct rcache *c, const struct trace_dir *td, const struct td_kernel *k, int *n)
{
	double sum = 0;
	int cnt = 0;
	for (int j = 0; j < k->n_results; j++) {
		int i = k->results[j];
		if (i < c->n && i < td->n_results && c->s[i].state == RSUM_OK && c->s[i].duration_ns) {
			sum += (double)c->s[i].duration_ns;
			cnt++;
		}
	}
	*n = cnt;
	return cnt ? sum / cnt : 0;
}
