/* Inside the Perfetto export (export_perfetto.h): the slices collected
 * before any is written, since ts counts from the earliest of them and
 * tracks (slots) are given once all are known. Times are absolute ns. */
#ifndef NTOP_EXPORT_PERFETTO_INT_H
#define NTOP_EXPORT_PERFETTO_INT_H
#include <stddef.h>
#include <stdint.h>

#include "cli/export_perfetto.h"
#include "trace/result.h"

struct pf_launch {
	uint32_t pid, kid, lane;
	uint64_t seq;
	uint64_t ts, dur;          /* ns: host time of the launch call; measured duration */
	int has_dur, probed, has_config;
	const char *dur_from;      /* what measured dur: "time event", "driver events", "blocks" */
	uint32_t grid[3], block[3];
	char api[40];
};

/* GPU slices of a process that used several GPUs go to a track process
 * of their own per GPU: tpid = pid + (GPU + 1) * PF_PID_GPU (the model's
 * pids are 32-bit: a job's traces take their upper bits); else tpid = pid. */
#define PF_PID_GPU (1ull << 32)

struct pf_block {
	uint32_t pid, kid, smid, lane, warps;
	uint64_t tpid;             /* the track process (PF_PID_GPU) */
	uint32_t xyz[3];
	uint64_t seq, index;
	uint64_t ts, dur;          /* ns */
	uint64_t start_cyc, end_cyc;
	uint64_t gstart;           /* ns of the global timer (AMD's 100 MHz ticks scaled) */
};

/* A warp of a regions launch: a track (or `lanes` tracks, when its
 * regions cross) with its life and its segments g[seg0 .. seg0 + n_segs). */
struct pf_warp {
	uint32_t pid, kid, smid, warp;
	uint64_t tpid;             /* the track process (PF_PID_GPU) */
	uint64_t seq, block;
	uint64_t ts, dur;          /* ns */
	uint64_t entry_cyc, exit_cyc;
	int truncated;             /* its records passed the cap: it ends at its last one */
	size_t seg0;
	uint32_t n_segs, lanes;
	uint64_t tid0;             /* its first track, given when written */
};

struct pf_rseg {
	uint64_t ts, dur;          /* ns */
	uint64_t start_cyc, end_cyc;
	int lane;                  /* track of its warp; -1 not drawn (PF_WARP_LANES crossing) */
	char name[64];             /* the region */
	char where[64];            /* source line of its begin site, "" unknown */
};

struct pf_set {
	struct pf_launch *l;
	size_t n_l, cap_l;
	struct pf_block *b;
	size_t n_b, cap_b;
	struct pf_warp *w;
	size_t n_w, cap_w;
	struct pf_rseg *g;
	size_t n_g, cap_g;
};

/* export_perfetto_host.c: the launch lines of dir/events.log (those o
 * selects), with the durations of their `time` lines; their pids + base
 * (a job's trace, trace_dir.h). */
int pf_host_read(const char *dir, uint32_t base, const struct pf_opts *o, struct pf_set *s, char **cause);
/* export_perfetto_gpu.c: tr's blocks (occ: blocks per SM, amd: an AMD
 * GPU's trace); 1 added, 0 no block_sched records, -1 out of memory. */
int pf_launch_blocks(const struct td_result *tr, int occ, int amd, uint64_t tpid, const struct pf_opts *o,
		     struct pf_set *s, struct pf_stats *st);
/* export_perfetto_warps.c: tr's warps and region segments (o->lanes picks
 * a block's or an SM's); 1 added, 0 no regions records, -1 out of memory. */
int pf_launch_warps(const struct td_result *tr, uint64_t tpid, const struct pf_opts *o, struct pf_set *s,
		    struct pf_stats *st);
void pf_set_free(struct pf_set *s);
/* ns of `cycles` at the clock rate, or cycles as ns when it is unknown. */
uint64_t pf_cycles_ns(uint64_t cycles, uint32_t khz);
/* A launch placed in SM cycles: st->sm_clock and the note (the first why). */
void pf_note(struct pf_stats *st, const struct result *r, const char *why);

#endif
