/* Summaries of probed launches (one per trace_dir result): the probed
 * duration from the result header, the block_sched summary line and
 * which views the maps make (dmat, regions, source lines). Reading
 * a result decompresses it all, so summaries are made lazily: when a view
 * asks, or one at a time while the UI is idle (rcache_idle), and only files
 * below RCACHE_IDLE_BYTES in the idle pass. */
#ifndef NTOP_TUI_RCACHE_H
#define NTOP_TUI_RCACHE_H
#include <stdint.h>

#include "trace/trace_dir.h"

#define RCACHE_IDLE_BYTES (64u << 20)

enum rsum_state { RSUM_PENDING, RSUM_OK, RSUM_ERROR };

struct rsum {
	enum rsum_state state;
	uint64_t duration_ns;  /* probed launch duration, 0 unknown */
	uint64_t records, dropped;
	int has_bs;            /* a block_sched map is there */
	int has_dmat;          /* a map with DMAT records (viz/dmat.h) is there */
	int has_regions;       /* a regions map (viz/regions.h) is there */
	int has_lines;         /* dmat records with sites and a site table (viz/lines.h) */
	char line[160];        /* block_sched summary, the dmat records, what the maps are, or the error */
};

struct rcache {
	struct rsum *s;
	int n;
	int scan;              /* rcache_idle resumes here */
};

void rcache_init(struct rcache *c);
void rcache_done(struct rcache *c);
/* Summary of td->results[i]; reads the file when `load` and not read yet.
 * A result whose `result` event has not come is RSUM_PENDING. */
const struct rsum *rcache_get(struct rcache *c, const struct trace_dir *td, int i, int load);
/* Reads one small unread result; 1 when it did (the caller redraws). */
int rcache_idle(struct rcache *c, const struct trace_dir *td);
/* A result event came: the idle pass looks at every result again. */
void rcache_rescan(struct rcache *c);
/* Mean probed duration (ns) over k's results read so far; 0 none (*n = count). */
double rcache_kernel_mean(const struct rcache *c, const struct trace_dir *td, const struct td_kernel *k, int *n);

#endif
