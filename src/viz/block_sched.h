/* block_sched analysis (NEUTRINO seed 003, done per SM with a heap): from a
 * probed launch's warp records (start, elapsed, smid per warp) rebuild each
 * block's residency on its SM, then replay the dispatch per SM to split the
 * SM's time into running and scheduling cycles. Pure model, no I/O: the
 * report command and the timeline view both read it.
 *
 * Records are recognised by field names (start or lstart: u64 SM clock,
 * elapsed or elapse: u32/u64 cycles, smid: u32, optional gstart: u64 global
 * timer ns), or, for NEUTRINO's schema that names no fields, by the 16-byte
 * record {u64 lstart; u32 elapse; u32 smid}. */
#ifndef NTOP_BLOCK_SCHED_H
#define NTOP_BLOCK_SCHED_H
#include <stddef.h>
#include <stdint.h>

#include "trace/result.h"

struct bs_block {
	uint64_t start;     /* cycles (SM clock): earliest warp start */
	uint64_t end;       /* cycles: latest warp start + elapsed */
	uint64_t gstart;    /* ns (global timer) of the earliest warp, 0 if not recorded */
	uint32_t smid;      /* of its first recorded warp */
	uint32_t slot;      /* residency slot on its SM chosen by the replay (timeline lane) */
	uint64_t index;     /* linear block index in the grid */
	uint32_t warps;     /* warps that left a record */
	int smid_mismatch;  /* its warps reported different SMs */
};

struct bs_sm {
	uint32_t smid;
	uint32_t blocks;
	uint32_t max_concurrent; /* most blocks resident at once in the replay */
	uint64_t running;   /* cycles: sum of its blocks' end - start */
	uint64_t sched;     /* cycles: gaps between a block's end and its successor's start */
	uint32_t first;     /* index of its first block in block_sched.blocks */
};

struct block_sched {
	uint64_t n_blocks;          /* blocks in the grid */
	uint64_t n_blocks_recorded; /* blocks with at least one warp record */
	uint64_t warps_expected, warps_recorded;
	uint64_t records_dropped;   /* from the map: saves past its cap */
	uint64_t smid_mismatch_blocks;
	uint32_t n_sms;             /* SMs that ran at least one recorded block */
	uint32_t smid_max;          /* highest %smid in any record (sanity: < device SMs) */
	uint64_t elapsed_min, elapsed_max; /* cycles: shortest/longest warp record */
	uint32_t max_concurrent;    /* max over SMs */
	double mean_running;        /* cycles per SM, mean over n_sms */
	double mean_sched;          /* cycles per SM, mean over n_sms */
	double waves;               /* blocks / (occupancy * device SMs); < 0 unknown */
	/* blocks sorted by (smid, start); sms sorted by smid, each pointing at its run */
	struct bs_block *blocks;
	struct bs_sm *sms;
};

/* Index of the first map with block_sched records, or -1. */
int block_sched_find_map(const struct result *r);
/* Analyses map `map_index` of r. occ_blocks_per_sm (0 = unknown) gives the
 * waves figure together with r->device_sms. */
int block_sched_analyze(const struct result *r, int map_index, int occ_blocks_per_sm,
			struct block_sched **out, char **cause);
void block_sched_free(struct block_sched *bs);
/* NEUTRINO's summary: "No.block:N Running:X Scheduling:Y (cycle)". */
void block_sched_line(const struct block_sched *bs, char *buf, size_t len);

#endif
