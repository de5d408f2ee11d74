/* `ntop export --format perfetto`: block scheduling and warps' regions as
 * Chrome trace-event JSON, the format ui.perfetto.dev and chrome://tracing open (the "JSON
 * Array/Object Format" of Google's Trace Event Format document), for one
 * probed launch or for the whole trace.
 *
 * Per process of the app (pid = the app's pid; a process that used several
 * GPUs has its blocks and warps in a process of their own per GPU, pid =
 * the app's pid + (GPU + 1) * 2^22, named "app (pid N, GPU 1: NAME)"):
 *  - one track per kernel (tid = kid * 1000, + 1.. for launches of that
 *    kernel overlapping an earlier one): a "kernel" slice from its first to
 *    its last logged launch, and inside it a "launch" slice per launch line
 *    of events.log (the first launch, a changed configuration, every probed
 *    launch: the hook logs no others), lasting the launch's measured time
 *    (its `time` event or the result's driver events), 0 when not measured;
 *  - one track per SM and residency slot (tid = 10^9 + smid * 1000 +
 *    slot, named "SM 12" and "SM 12 slot 2"): a slice per recorded block of
 *    every probed block_sched launch, named "block N" (its linear index),
 *    with its index, x/y/z, SM, warps, kernel, launch seq, and its start and
 *    end in SM cycles (and global-timer start) in args. Slots are given so
 *    no two blocks on a track overlap;
 *  - one track per warp of every probed regions launch (tid = 2 * 10^9 +
 *    a running index, named "warp 3.1 SM 5 seq 7"): a "warp" slice over its
 *    life, and inside it a slice per region segment named for the region,
 *    with its cycles and source line in args (regions that cross rather
 *    than nest take further tracks of the warp, "... (2)"). Regions are SM
 *    cycles from each SM's first warp entry at the launch's host time.
 * Times: the GPU's global timer (ns from the epoch, like the hook's
 * CLOCK_REALTIME host times: one axis, two clocks) when the records have it
 * and the clock rate is known; else SM cycles from each SM's first block,
 * placed at the launch's host time (converted with the clock rate, or 1
 * cycle shown as 1 ns when that is unknown; otherData.note says so). ts and
 * dur are microseconds from the earliest event (otherData.origin_ns). */
#ifndef NTOP_EXPORT_PERFETTO_H
#define NTOP_EXPORT_PERFETTO_H
#include <stdint.h>
#include <stdio.h>

#include "cli/cli_progress.h"
#include "trace/trace_dir.h"

/* Warp and region slices written at most (about 250 bytes of JSON each);
 * the warps past it are counted in pf_stats.warps_cut. */
#define PF_WARP_SLICES_MAX 2000000u

struct pf_opts {
	int one;              /* only launch (pid, kid, seq) */
	uint32_t pid, kid;
	uint64_t seq;
	int time;             /* -1 auto (global when possible), 0 SM clock, 1 global */
	long long lanes;      /* warps: of block N (N + 1), of SM N (-(N + 1)), or all (0) */
};

struct pf_stats {
	uint64_t launches;    /* launch slices */
	uint64_t probed;      /* launches whose blocks were written */
	uint64_t blocks;      /* block slices */
	uint32_t sm_tracks;   /* (SM, slot) tracks */
	uint64_t skipped;     /* probed launches without block_sched or regions records, or unreadable */
	uint64_t warps;       /* warps written (a track each, more where regions cross) */
	uint64_t region_slices;
	uint64_t region_slices_dropped; /* crossing more than PF_WARP_LANES tracks take */
	uint64_t warps_cut;   /* past PF_WARP_SLICES_MAX: not written */
	int sm_clock;         /* some launch fell back to SM cycles */
	char note[256];       /* why, "" otherwise (holds a timeline note and more) */
};

/* Writes the JSON to f. Returns -1 with *cause when nothing can be written
 * (out of memory, a write error); launches whose results cannot be read are
 * counted in st->skipped and named in otherData.skipped. */
int export_perfetto_write(FILE *f, const struct trace_dir *td, const struct pf_opts *o, struct pf_stats *st,
			  struct cli_progress *pr, char **cause);

#endif
