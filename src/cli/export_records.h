/* `ntop export --view records`: one probed launch's map records as CSV, for
 * scripts and accuracy checks (tests/gpu/check_dmat.py). Streams: one line
 * per record written as it is read, so memory does not grow with the map. */
#ifndef NTOP_EXPORT_RECORDS_H
#define NTOP_EXPORT_RECORDS_H
#include <stdint.h>
#include <stdio.h>

#include "cli/cli_progress.h"
#include "trace/result.h"

struct export_records_stats {
	uint64_t records;     /* lines written (records inside the units' counts) */
	uint64_t units;       /* units with at least one record */
	uint64_t dropped;     /* records the written units tried to save past the cap */
	uint64_t unsampled;   /* units whose block was not sampled (no records kept) */
};

/* Index of the map called `name` (NULL: the first map); -1 when there is none. */
int export_records_find_map(const struct result *r, const char *name);

/* Writes the header `block,thread,unit,slot,<fields>` and one line per
 * record of map `map`: block = block_linear, thread = thread_linear in the
 * block (for warp maps, the warp's first thread), unit = unit index, slot =
 * record index within the unit. Only the first min(count, cap*rec_size) /
 * rec_size records of each unit are written; units of blocks that were not
 * sampled are skipped. Fields named addr, address or ending in _addr /
 * _address are written as 0x hex, others in decimal; a map without field
 * names (NEUTRINO schema) gets one `raw` column of the record's bytes in hex.
 * Returns -1 with *cause on a map that does not fit its launch or a write
 * error. pr (may be NULL) hears how many units are done. */
int export_records_write(FILE *f, const struct result *r, int map, struct export_records_stats *st,
			 struct cli_progress *pr, char **cause);

#endif
