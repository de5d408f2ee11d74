/* Probed launches read for ntop report (report.h). */
#include "cli/report.h"

#include <stdlib.h>
#include <string.h>

#include "trace/result.h"
#include "viz/block_sched.h"
#include "viz/lines.h"
#include "viz/regions.h"

static void rep_analyze(struct rep_result *rr, const struct td_kernel *k)
{
	const struct td_result *tr = rr->tr;
	if (!tr->file) {
		rr->error = strdup("no result: the launch did not finish or its results were not written");
		return;
	}
	if (!tr->path) {
		rr->error = strdup("result path points outside the trace directory");
		return;
	}
	struct result *r = NULL;
	char *cause = NULL;
	if (result_read(tr->path, &r, &cause) < 0) {
		rr->error = cause ? cause : strdup("unreadable");
		return;
	}
	rr->read_ok = 1;
	rr->n_maps = r->n_maps;
	rr->device_sms = r->device_sms;
	for (int i = 0; i < r->n_maps; i++) {
		rr->records += r->maps[i].records_written;
		rr->dropped += r->maps[i].records_dropped;
		rr->unsampled += r->maps[i].records_unsampled;
		rr->unsampled_unknown |= r->maps[i].unsampled_unknown;
		if (r->maps[i].sample_shift > rr->sample_shift) {
			rr->sample_shift = r->maps[i].sample_shift;
			rr->kept_first = result_map_kept_first(&r->maps[i]);
		}
	}
	int mi = block_sched_find_map(r);
	struct block_sched *bs = NULL;
	int occ = tr->occ > 0 ? tr->occ : k->occ;
	if (mi >= 0 && block_sched_analyze(r, mi, occ, &bs, &cause) < 0) {
		rr->error = cause;
		cause = NULL;
	}
	if (bs) {
		rr->has_bs = 1;
		block_sched_line(bs, rr->bs_line, sizeof rr->bs_line);
		rr->bs_blocks = bs->n_blocks;
		rr->bs_running = bs->mean_running;
		rr->bs_sched = bs->mean_sched;
		rr->bs_waves = bs->waves;
		rr->bs_sms = bs->n_sms;
		rr->bs_max_conc = bs->max_concurrent;
		rr->bs_warps_rec = bs->warps_recorded;
		rr->bs_warps_exp = bs->warps_expected;
		rr->bs_dropped = bs->records_dropped;
		rr->bs_mismatch = bs->smid_mismatch_blocks;
		rr->bs_smid_max = bs->smid_max;
		rr->bs_el_min = bs->elapsed_min;
		rr->bs_el_max = bs->elapsed_max;
	}
	block_sched_free(bs);
	int gi = regions_find_map(r);
	if (gi >= 0 && regions_analyze(r, gi, &rr->rg, &cause) < 0 && !rr->error) {
		rr->error = cause;
		cause = NULL;
	}
	if ((rr->lines_map = lines_find_map(r)) >= 0 && r->sites.n)
		rr->lines_path = strdup(tr->path);
	free(cause);
	result_free(r);
}

struct rep_result *rep_results(const struct trace_dir *td, const struct td_kernel *k)
{
	struct rep_result *rr = calloc((size_t)k->n_results + 1, sizeof *rr);
	for (int i = 0; rr && i < k->n_results; i++) {
		rr[i].tr = &td->results[k->results[i]];
		rep_analyze(&rr[i], k);
	}
	return rr;
}

void rep_results_free(struct rep_result *rr, int n)
{
	for (int i = 0; rr && i < n; i++) {
		free(rr[i].error);
		regions_free(rr[i].rg);
		free(rr[i].lines_path);
	}
	free(rr);
}
