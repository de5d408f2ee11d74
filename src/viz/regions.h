/* regions analysis: what each warp did inside a kernel, from a launch of
 * the regions probe (probes/regions.toml: per warp, 8-byte records of the
 * SM clock's low 32 bits and a tag) and the launch's site table. Per warp:
 * its entry, exit and SM, and its segments per region (a region's begin
 * and end records paired with depth counting, so a call that enters the
 * same region again nests); per region: segments, cycles per warp (total,
 * mean, p95) and its share of the warps' lives; and the gaps, time a warp
 * spent in no region. Pure model, no I/O: the report, the exports and the
 * warps view read it.
 *
 * Clocks: the entry saves the 64-bit SM clock; every later record's 32
 * bits are unwrapped forward from the record before it (a warp's records
 * follow each other in time, never 2^32 cycles apart). Times are cycles of
 * the warp's SM: warps of one SM share a time line, warps of different SMs
 * do not. A warp whose records passed the cap lost its later records: it
 * is counted as truncated, its open regions end at its last record, and it
 * is left out of the life and gap figures. */
#ifndef NTOP_REGIONS_H
#define NTOP_REGIONS_H
#include <stddef.h>
#include <stdint.h>

#include "trace/result.h"

#define REGIONS_MAX PROBE_MAX_REGIONS

struct rg_seg {
	uint64_t start, end;  /* cycles (unwrapped SM clock) */
	uint32_t region;
	int32_t begin_site;   /* index in the result's site table; -1 unknown */
	int32_t end_site;     /* -1: closed by the warp's exit or its last record */
};

struct rg_warp {
	uint64_t block;       /* linear block index */
	uint32_t warp;        /* warp index in its block */
	uint32_t smid;
	uint64_t entry, exit; /* cycles; exit = the last record's time when truncated */
	uint64_t first_seg;   /* its segments: segs[first_seg .. first_seg + n_segs), by start */
	uint32_t n_segs;
	int truncated;        /* records past the cap were dropped */
};

struct rg_region {
	char name[PROBE_NAME_MAX];
	char spec[PROBE_REGION_SPEC_MAX];
	uint64_t segments;
	uint64_t warps;       /* warps with at least one segment */
	uint64_t total;       /* cycles, summed over warps */
	double mean;          /* cycles per warp that entered it */
	uint64_t p95;         /* cycles per warp, 95th percentile of those warps */
	double share;         /* of the summed lives of complete warps, 0..1; -1 when no
				 warp is complete (all truncated at the cap) */
};

struct regions {
	struct rg_warp *warps;
	uint64_t n_warps;     /* warps with records */
	struct rg_seg *segs;
	uint64_t n_segs;
	struct rg_region reg[REGIONS_MAX];
	int n_regions;
	uint64_t life;        /* cycles: summed exit - entry of complete warps */
	uint64_t gaps;        /* cycles: time complete warps spent in no region */
	uint64_t warps_truncated, records_dropped;
	uint64_t unmatched;   /* ends without a begin, records of unknown kind */
	uint32_t warps_per_block;
};

/* Index of the first map with regions records (fields clock:u32, tag:u32,
 * warp level), or -1. */
int regions_find_map(const struct result *r);
int regions_analyze(const struct result *r, int map_index, struct regions **out, char **cause);
void regions_free(struct regions *g);
/* "load" or "region 3" when the table names none. */
const char *regions_name(const struct regions *g, uint32_t region, char *buf, size_t len);

/* The warps a view shows as lanes: those of block `block` (by > 0: block
 * index + 1), or those on SM `sm` (by < 0: -(smid + 1)), or (by = 0) those
 * on the SM that ran block 0. *idx gets warp indices (into g->warps) in
 * (block, warp) order, at most max; returns how many there are in all. */
uint64_t regions_lanes(const struct regions *g, long long by, uint64_t *idx, uint64_t max);
/* Earliest entry and latest exit of the given warps (cycles). */
void regions_span(const struct regions *g, const uint64_t *idx, uint64_t n, uint64_t *t0, uint64_t *t1);

#endif
