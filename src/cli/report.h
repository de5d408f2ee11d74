/* ntop report's reading of probed launches (report_results.c): each result
 * file read once and reduced to a few numbers right away (a DMAT result can
 * be hundreds of MB), a corrupt one kept with its reason. The text, JSON
 * (cmd_report.c) and CSV (report_csv.c) outputs print these. */
#ifndef NTOP_REPORT_H
#define NTOP_REPORT_H
#include <stdint.h>
#include <stdio.h>

#include "trace/trace_dir.h"
#include "viz/regions.h"

struct rep_result {
	const struct td_result *tr;
	int read_ok;
	char *error;        /* why the file could not be used */
	int n_maps;
	uint64_t records, dropped;
	uint64_t unsampled;      /* records of blocks block sampling skipped */
	int unsampled_unknown;   /* those blocks stored no counts (a map's unsampled_unknown) */
	uint32_t sample_shift;   /* largest over the maps: 1 block in 2^this kept */
	uint64_t kept_first;     /* the first this many blocks kept (a map's sample_prefix), else 0 */
	int has_bs;
	char bs_line[128];
	uint64_t bs_blocks, bs_warps_rec, bs_warps_exp, bs_dropped, bs_mismatch;
	double bs_running, bs_sched, bs_waves;
	uint32_t bs_sms, bs_max_conc, bs_smid_max;
	uint64_t bs_el_min, bs_el_max;
	uint32_t device_sms;
	struct regions *rg;      /* a regions launch's analysis, or NULL */
	char *lines_path;        /* a dmat launch with sites: its file, for --lines */
	int lines_map;
};

/* The kernel's probed launches, read and analysed (k->n_results of them);
 * NULL when out of memory. */
struct rep_result *rep_results(const struct trace_dir *td, const struct td_kernel *k);
void rep_results_free(struct rep_result *rr, int n);

/* report_regions.c: a regions launch's table (text, indented), its JSON
 * members, and a dmat launch's memory by source line (--lines). */
void rep_text_regions(const struct regions *g);
struct strbuf;
void rep_json_regions(struct strbuf *sb, const struct regions *g);
int rep_text_lines(const char *path, int map, int top);

/* report_csv.c: one line per kernel (doc/ntop.1 lists the columns). */
int report_csv(FILE *f, const struct trace_dir *td);

#endif
