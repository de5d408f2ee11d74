/* Inside the Perfetto export (export_perfetto.h): the slices collected
 * before any is written, since ts counts from the earliest of them and
 * tracks (slots) are given once all are known. Times are absolute ns. */
#ifndef NTOP_EXPORT_PERFETTO_INT_H
#define NTOP_EXPORT_PERFETTO_INT_H
#include <stddef.h>
#include <stdint.h>

#include "cli/export_perfetto.h"

struct pf_launch {
	uint32_t pid, kid, lane;
	uint64_t seq;
	uint64_t ts, dur;          /* ns: host time of the launch call; measured duration */
	int has_dur, probed, has_config;
	const char *dur_from;      /* what measured dur: "time event", "driver events", "blocks" */
	uint32_t grid[3], block[3];
	char api[40];
};

struct pf_block {
	uint32_t pid, kid, smid, lane, warps;
	uint32_t xyz[3];
	uint64_t seq, index;
	uint64_t ts, dur;          /* ns */
	uint64_t start_cyc, end_cyc;
	uint64_t gstart;           /* ns of the global timer (AMD's 100 MHz ticks scaled) */
};

struct pf_set {
	struct pf_launch *l;
	size_t n_l, cap_l;
	struct pf_block *b;
	size_t n_b, cap_b;
};

/* export_perfetto_host.c: the launch lines of dir/events.log (those o
 * selects), with the durations of their `time` lines. */
int pf_host_read(const char *dir, const struct pf_opts *o, struct pf_set *s, char **cause);
/* export_perfetto_gpu.c: the blocks of every probed launch o selects;
 * launches without block_sched records are counted in st->skipped. */
int pf_gpu_read(const struct trace_dir *td, const struct pf_opts *o, struct pf_set *s, struct pf_stats *st,
		char **cause);
void pf_set_free(struct pf_set *s);

#endif
