/* ntop report: a trace directory summarised per process and kernel, as text
 * for people, JSON for scripts or CSV (report_csv.c) for tables. Result files
 * are read one at a time and reduced to a few numbers right away
 * (report_results.c); a corrupt one is listed with its reason, never fatal. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/report.h"
#include "cli/report_end.h"
#include "cli/report_job.h"
#include "trace/trace_dir.h"

#define REP_TEXT_LAUNCHES 8 /* per kernel in text; JSON lists all */

static void report_help(void)
{
	printf("Usage: ntop report DIR [--json | --csv | --lines]\n"
	       "\n"
	       "Summarises a trace directory written by 'ntop record': per process and\n"
	       "kernel the launches, launch configuration, mean duration, whether PTX (AMD\n"
	       "kernels: a code object) was available and whether (or why not) it was\n"
	       "probed; for block_sched results the per-launch line 'No.block:N Running:X\n"
	       "Scheduling:Y (cycle)', waves per SM, SMs used, warps recorded/expected and\n"
	       "records dropped (AMD: per CU, CUs, waves); for regions results (-p regions)\n"
	       "a table per launch: per region its segments, the warps that entered it,\n"
	       "cycles per warp (mean, p95) and share of the warps' time, and the time in\n"
	       "no region. Warnings from the\n"
	       "hook and corrupt result files are listed, and how the recording ended: one\n"
	       "INCOMPLETE line per reason it may miss data (a process killed, ntop killed).\n"
	       "\n"
	       "Options:\n"
	       "  --json      one JSON document on stdout (all launches, mangled names too;\n"
	       "              a kernel's \"code\" is \"PTX\" or \"code object\", its keys\n"
	       "              ptx/ptx_reason or code_object/code_object_reason)\n"
	       "  --csv       one CSV line per kernel on stdout: pid, kid, name, demangled,\n"
	       "              launches, grid, block, smem, configs, timed, mean_ns, ptx,\n"
	       "              ptx_reason, instrument, probes, instrument_reason, declined,\n"
	       "              probed_launches, results_ok, records, dropped,\n"
	       "              block_sched_launches, running_cycles, scheduling_cycles,\n"
	       "              waves_per_sm (means over the block_sched launches), code\n"
	       "              (PTX, or code object: what ptx and ptx_reason are about);\n"
	       "              empty fields were never recorded\n"
	       "  --lines     also memory by source line, per kernel probed with dmat (its\n"
	       "              first such launch): accesses, bytes, 32-byte sectors per\n"
	       "              warp-level request, distinct 4 KiB pages (source lines need\n"
	       "              line information in the PTX: nvcc -lineinfo, Triton, Numba)\n"
	       "  -h, --help  this text\n"
	       "\n"
	       "Examples:\n"
	       "  ntop report ntop-trace/20261101-120000_4242\n"
	       "  ntop report trace1 --lines\n"
	       "  ntop report trace1 --json | python3 -m json.tool\n"
	       "  ntop report trace1 --csv > kernels.csv\n");
}

/* ---- text ---- */

/* Trace strings come from other programs: control bytes (escape sequences
 * included) must not reach the terminal. JSON escapes them instead. */
static void rep_tame(char *s)
{
	for (; s && *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

static void rep_tame_model(struct trace_dir *td)
{
	rep_tame(td->path);
	rep_tame(td->record_argv);
	rep_tame(td->record_version);
	for (int i = 0; i < td->n_procs; i++) {
		rep_tame(td->procs[i].exe);
		rep_tame(td->procs[i].hook_version);
		rep_tame(td->procs[i].driver);
	}
	for (int i = 0; i < td->n_devices; i++)
		rep_tame(td->devices[i].name);
	for (int i = 0; i < td->n_kernels; i++) {
		struct td_kernel *k = &td->kernels[i];
		char *v[] = {k->name, k->demangled, k->ptx_reason, k->instrument_status,
			     k->instrument_reason, k->instrument_probes, k->declined_reason};
		for (size_t j = 0; j < sizeof v / sizeof v[0]; j++)
			rep_tame(v[j]);
	}
	for (int i = 0; i < td->n_results; i++)
		rep_tame(td->results[i].file);
	for (int i = 0; i < td->n_warnings; i++)
		rep_tame(td->warnings[i].msg);
}

static void rep_duration(char *buf, size_t len, double ns)
{
	if (ns >= 1e9)
		snprintf(buf, len, "%.2f s", ns / 1e9);
	else if (ns >= 1e6)
		snprintf(buf, len, "%.2f ms", ns / 1e6);
	else if (ns >= 1e3)
		snprintf(buf, len, "%.1f us", ns / 1e3);
	else
		snprintf(buf, len, "%.0f ns", ns);
}

static void rep_text_probe_status(const struct td_kernel *k)
{
	printf("      %s: %s%s%s", td_kernel_code_word(k), k->has_ptx ? "yes" : "no",
	       k->has_ptx ? "" : " (",
	       k->has_ptx ? "" : (k->ptx_reason ? k->ptx_reason : "reason unknown"));
	if (!k->has_ptx)
		printf(")");
	printf("; probed: ");
	if (k->instrument_status) {
		printf("%s", strcmp(k->instrument_status, "ok") == 0 ? "yes" : k->instrument_status);
		if (k->instrument_probes && *k->instrument_probes)
			printf(" (%s)", k->instrument_probes);
		if (k->instrument_reason && *k->instrument_reason)
			printf(": %s", k->instrument_reason);
		if (k->regs_orig >= 0 && k->regs_probed >= 0)
			printf(", registers %d -> %d", k->regs_orig, k->regs_probed);
		if (k->occ_orig >= 0 && k->occ_probed >= 0)
			printf(", blocks per SM %d -> %d", k->occ_orig, k->occ_probed);
		printf(", %d probed launch%s", k->n_results, k->n_results == 1 ? "" : "es");
	} else if (k->n_results) {
		printf("yes, %d probed launch%s", k->n_results, k->n_results == 1 ? "" : "es");
	} else {
		printf("no%s%s%s", k->has_ptx ? "" : " (needs ", k->has_ptx ? "" : td_kernel_code_word(k),
		       k->has_ptx ? "" : ")");
	}
	if (k->declined)
		printf("; %llu declined (%s)", (unsigned long long)k->declined,
		       k->declined_reason ? k->declined_reason : "no reason given");
	if (k->deferred)
		printf("; %llu ran unprobed while the probed copy was built", (unsigned long long)k->deferred);
	printf("\n");
}

/* amd: an AMD kernel's lanes are compute units and its warps are waves;
 * gpus: the process used several GPUs (each launch says which). */
static void rep_text_result(const struct rep_result *rr, int amd, int gpus)
{
	const char *lane = amd ? "CU" : "SM";
	const struct td_result *tr = rr->tr;
	rep_tame(rr->error);
	printf("      seq %llu", (unsigned long long)tr->seq);
	if (gpus && td_result_dev(tr) >= 0)
		printf(" on GPU %d", td_result_dev(tr));
	printf(": ");
	if (rr->has_bs) {
		printf("%s", rr->bs_line);
		if (rr->bs_waves >= 0)
			printf("  waves/%s %.2f", lane, rr->bs_waves);
		printf("  %ss %u  %s %llu/%llu  dropped %llu", lane, rr->bs_sms, amd ? "waves" : "warps",
		       (unsigned long long)rr->bs_warps_rec, (unsigned long long)rr->bs_warps_exp,
		       (unsigned long long)rr->bs_dropped);
		if (rr->bs_mismatch)
			printf("  (%llu blocks moved %s?)", (unsigned long long)rr->bs_mismatch, lane);
		printf("\n");
	} else if (rr->read_ok && !rr->error) {
		printf("%d map%s, %llu records, %llu dropped", rr->n_maps, rr->n_maps == 1 ? "" : "s",
		       (unsigned long long)rr->records, (unsigned long long)rr->dropped);
		if (rr->sample_shift && rr->kept_first)
			printf(", 1 block in %llu kept, the first %llu (the others' records not counted)",
			       1ull << rr->sample_shift, (unsigned long long)rr->kept_first);
		else if (rr->sample_shift && rr->unsampled_unknown)
			printf(", 1 block in %llu kept (the others' records not counted)", 1ull << rr->sample_shift);
		else if (rr->sample_shift)
			printf(", 1 block in %llu kept (%llu records of the others not kept)",
			       1ull << rr->sample_shift, (unsigned long long)rr->unsampled);
		printf(" (%s)\n", tr->file);
	} else {
		printf("%s\n", rr->error ? rr->error : "?");
	}
	if (rr->rg)
		rep_text_regions(rr->rg);
}

static int rep_lines; /* --lines */

static void rep_text_kernel(const struct trace_dir *td, const struct td_kernel *k)
{
	printf("  [%u] %s\n", k->kid, k->demangled ? k->demangled : "(name not recorded)");
	if (k->name && k->demangled && strcmp(k->name, k->demangled) != 0)
		printf("      %s\n", k->name);
	printf("      launches %llu", (unsigned long long)k->launches);
	if (td_kernel_n_devs(k) > 1 || (k->devs && td_process_n_devices(td, k->pid) > 1)) {
		char devs[256];
		printf(" on GPU%s %s", td_kernel_n_devs(k) > 1 ? "s" : "", td_kernel_devs_text(k, 1, devs, sizeof devs));
	}
	if (k->has_config) {
		printf("  grid %u,%u,%u  block %u,%u,%u", k->last.grid[0], k->last.grid[1], k->last.grid[2],
		       k->last.block[0], k->last.block[1], k->last.block[2]);
		if (k->last.smem)
			printf("  smem %u", k->last.smem);
		if (k->n_configs > 1)
			printf(" (last; varied: %d configs)", k->n_configs);
	}
	if (k->timed) {
		char d[32];
		rep_duration(d, sizeof d, td_kernel_mean_ns(k));
		printf("  mean %s over %llu timed", d, (unsigned long long)k->timed);
	} else {
		printf("  not timed");
	}
	if (k->graph_nodes)
		printf("  in graphs: %llu", (unsigned long long)k->graph_nodes);
	printf("\n");
	rep_text_probe_status(k);
	struct rep_result *rr = rep_results(td, k);
	int shown = 0, n_bs = 0;
	double run = 0, sched = 0;
	for (int i = 0; rr && i < k->n_results; i++) {
		/* failures are always listed: a corrupt file must not hide in "... more" */
		if (shown < REP_TEXT_LAUNCHES || rr[i].error) {
			rep_text_result(&rr[i], k->amd, td_process_n_devices(td, k->pid) > 1);
			shown++;
		}
		if (rr[i].has_bs) {
			n_bs++;
			run += rr[i].bs_running;
			sched += rr[i].bs_sched;
		}
	}
	if (k->n_results > shown)
		printf("      ... %d more probed launches (ntop report --json lists all)\n", k->n_results - shown);
	if (n_bs > 1)
		printf("      block_sched mean of %d launches: Running:%.0f Scheduling:%.0f (cycle)\n", n_bs,
		       run / n_bs, sched / n_bs);
	for (int i = 0; rep_lines && rr && i < k->n_results; i++)
		if (rr[i].lines_path) {
			printf("      seq %llu:\n", (unsigned long long)rr[i].tr->seq);
			rep_text_lines(rr[i].lines_path, rr[i].lines_map, 30);
			break;
		}
	rep_results_free(rr, k->n_results);
}

static void rep_text_process(const struct trace_dir *td, const struct td_process *p)
{
	char who[320];
	printf("\nProcess %s %s", td_process_label(td, p->pid, who, sizeof who), p->exe ? p->exe : "(no hello from the hook)");
	if (p->hook_version)
		printf(" (hook %s)", p->hook_version);
	if (p->exited)
		printf(", exited");
	printf("\n");
	if (p->results_written || p->results_pending_max || td_process_results_lost(p))
		printf("  results: %llu written, %llu lost, at most %llu waiting to be written at once\n",
		       (unsigned long long)p->results_written, (unsigned long long)td_process_results_lost(p),
		       (unsigned long long)p->results_pending_max);
	if (p->map_pooled_max || p->map_given)
		printf("  GPU memory for maps: at most %.1f MiB pooled, %.1f MiB given back when the app's allocations "
		       "ran out\n",
		       p->map_pooled_max / 1048576.0, p->map_given / 1048576.0);
	for (int i = 0; i < td->n_devices; i++) {
		const struct td_device *d = &td->devices[i];
		if (d->pid != p->pid)
			continue;
		if (d->arch)
			printf("  device %d: %s, %s, %d CUs\n", d->ordinal, d->name ? d->name : "?", d->arch, d->sms);
		else
			printf("  device %d: %s, sm_%d, %d SMs\n", d->ordinal, d->name ? d->name : "?", d->cc, d->sms);
	}
	int n = 0;
	for (int i = 0; i < td->n_kernels; i++)
		n += td->kernels[i].pid == p->pid;
	printf("  %d kernel%s%s\n", n, n == 1 ? "" : "s", n ? ":" : "");
	for (int i = 0; i < td->n_kernels; i++)
		if (td->kernels[i].pid == p->pid)
			rep_text_kernel(td, &td->kernels[i]);
}

static void rep_text(struct trace_dir *td)
{
	rep_tame_model(td);
	if (td->n_traces > 1)
		report_job_text(td, stdout);
	else
		printf("Trace %s\n", td->path);
	if (td->record_argv) {
		char when[64] = "";
		time_t t = (time_t)(td->record_t_ns / 1000000000ull);
		struct tm tm;
		if (localtime_r(&t, &tm))
			strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
		printf("Recorded: %s (%s, ntop %s)\n", td->record_argv, when,
		       td->record_version ? td->record_version : "?");
	}
	printf("Events: %llu lines", (unsigned long long)td->lines);
	if (td->malformed_lines)
		printf(", %llu malformed", (unsigned long long)td->malformed_lines);
	if (td->truncated_last_line)
		printf(", last line cut short (recorder killed?)");
	printf("\n");
	if (td->lost_events)
		printf("LOST: %llu events never reached the trace (the hook's buffer overflowed, a write failed, or "
		       "the reader stopped reading); counts are low\n",
		       (unsigned long long)td->lost_events);
	report_end_text(td, stdout);
	for (int i = 0; i < td->n_procs; i++)
		rep_text_process(td, &td->procs[i]);
	if (td->n_procs == 0)
		printf("\nNo CUDA process was recorded (the hook never loaded).\n");
	if (td->n_warnings) {
		printf("\nWarnings (%d):\n", td->n_warnings);
		for (int i = 0; i < td->n_warnings; i++)
			printf("  [%u] %s\n", td_os_pid(td->warnings[i].pid), td->warnings[i].msg);
	}
}

/* ---- JSON ---- */

/* [x,y,z], or null when the launch configuration was not recorded. */
static void js_dims(struct cli_json *j, const char *key, int have, const uint32_t d[3])
{
	cli_json_key(j, key);
	if (have)
		strbuf_printf(j->sb, "[%u,%u,%u]", d[0], d[1], d[2]);
	else
		strbuf_puts(j->sb, "null");
}

static void js_block_sched(struct strbuf *sb, const struct rep_result *rr)
{
	struct cli_json o;
	cli_json_object(&o, sb);
	cli_json_string(&o, "line", rr->bs_line);
	cli_json_u64(&o, "blocks", rr->bs_blocks);
	cli_json_number(&o, "running_cycles", rr->bs_running);
	cli_json_number(&o, "scheduling_cycles", rr->bs_sched);
	cli_json_number_if(&o, "waves_per_sm", rr->bs_waves >= 0, rr->bs_waves);
	cli_json_u64(&o, "sms_used", rr->bs_sms);
	cli_json_u64(&o, "max_concurrent_blocks", rr->bs_max_conc);
	cli_json_u64(&o, "warps_recorded", rr->bs_warps_rec);
	cli_json_u64(&o, "warps_expected", rr->bs_warps_exp);
	cli_json_u64(&o, "records_dropped", rr->bs_dropped);
	cli_json_u64(&o, "smid_mismatch_blocks", rr->bs_mismatch);
	cli_json_u64(&o, "smid_max", rr->bs_smid_max);
	cli_json_u64(&o, "elapsed_min", rr->bs_el_min);
	cli_json_u64(&o, "elapsed_max", rr->bs_el_max);
	cli_json_end(&o);
}

static void js_result(struct strbuf *sb, const struct rep_result *rr, const struct td_kernel *k)
{
	const struct td_result *tr = rr->tr;
	struct cli_json o;
	cli_json_object(&o, sb);
	cli_json_u64(&o, "seq", tr->seq);
	cli_json_string(&o, "kernel", k->name);
	cli_json_string(&o, "file", tr->file);
	cli_json_bool(&o, "ok", rr->read_ok && !rr->error);
	cli_json_string(&o, "error", rr->error);
	js_dims(&o, "grid", tr->has_config, tr->config.grid);
	js_dims(&o, "block", tr->has_config, tr->config.block);
	cli_json_int(&o, "occupancy_blocks_per_sm", tr->occ);
	cli_json_number_if(&o, "device", td_result_dev(tr) >= 0, td_result_dev(tr));
	cli_json_u64(&o, "device_sms", rr->device_sms);
	cli_json_int(&o, "maps", rr->n_maps);
	cli_json_u64(&o, "records", rr->records);
	cli_json_u64(&o, "records_dropped", rr->dropped);
	cli_json_u64(&o, "sampled_one_block_in", 1ull << rr->sample_shift);
	if (rr->unsampled_unknown) /* the skipped blocks stored no counts */
		cli_json_string(&o, "records_not_sampled", NULL);
	else
		cli_json_u64(&o, "records_not_sampled", rr->unsampled);
	if (rr->has_bs) {
		cli_json_key(&o, "block_sched");
		js_block_sched(sb, rr);
	} else {
		cli_json_null(&o, "block_sched");
	}
	if (rr->rg) {
		cli_json_key(&o, "regions");
		rep_json_regions(sb, rr->rg);
	} else {
		cli_json_null(&o, "regions");
	}
	cli_json_end(&o);
}

static void js_instrument(struct strbuf *sb, const struct td_kernel *k)
{
	struct cli_json o;
	cli_json_object(&o, sb);
	cli_json_string(&o, "status", k->instrument_status);
	cli_json_string(&o, "reason", k->instrument_reason);
	cli_json_string(&o, "probes", k->instrument_probes);
	cli_json_int(&o, "regs_orig", k->regs_orig);
	cli_json_int(&o, "regs_probed", k->regs_probed);
	cli_json_int(&o, "occ_orig", k->occ_orig);
	cli_json_int(&o, "occ_probed", k->occ_probed);
	cli_json_string(&o, "addr", k->addr_at_exit < 0 ? NULL : k->addr_at_exit ? "exit" : "entry");
	cli_json_int(&o, "sites", k->sites);
	cli_json_number(&o, "ms_jit", k->ms_jit);
	cli_json_string(&o, "jit", k->instrument_jit);
	cli_json_end(&o);
}

static void js_kernel_probe(struct cli_json *o, const struct td_kernel *k)
{
	if (k->instrument_status) {
		cli_json_key(o, "instrument");
		js_instrument(o->sb, k);
	} else {
		cli_json_null(o, "instrument");
	}
	cli_json_u64(o, "declined", k->declined);
	cli_json_u64(o, "deferred", k->deferred);
	cli_json_string(o, "declined_reason", k->declined_reason);
}

static void js_kernel_results(struct strbuf *sb, const struct trace_dir *td, const struct td_kernel *k)
{
	struct cli_json a;
	cli_json_array(&a, sb);
	struct rep_result *rr = rep_results(td, k);
	for (int i = 0; rr && i < k->n_results; i++) {
		cli_json_item(&a);
		js_result(sb, &rr[i], k);
	}
	rep_results_free(rr, k->n_results);
	cli_json_end(&a);
}

/* "devices": [{"ordinal": 0, "launches": 40}, ...]: the GPUs it ran on
 * (launches null where no stats line counted them). */
static void js_kernel_devices(struct cli_json *o, const struct td_kernel *k)
{
	struct cli_json a, d;
	cli_json_key(o, "devices");
	cli_json_array(&a, o->sb);
	for (int i = 0; i < TD_DEVICES; i++) {
		if (!(k->devs >> i & 1))
			continue;
		cli_json_item(&a);
		cli_json_object(&d, o->sb);
		cli_json_int(&d, "ordinal", i);
		cli_json_number_if(&d, "launches", k->dev_launches[i] != 0, (double)k->dev_launches[i]);
		cli_json_end(&d);
	}
	cli_json_end(&a);
}

static void js_kernel(struct strbuf *sb, const struct trace_dir *td, const struct td_kernel *k)
{
	struct cli_json o;
	cli_json_object(&o, sb);
	cli_json_u64(&o, "kid", k->kid);
	cli_json_u64(&o, "mid", k->mid);
	cli_json_string(&o, "name", k->name);
	cli_json_string(&o, "demangled", k->demangled);
	cli_json_u64(&o, "launches", k->launches);
	js_dims(&o, "grid", k->has_config, k->last.grid);
	js_dims(&o, "block", k->has_config, k->last.block);
	cli_json_u64(&o, "smem", k->last.smem);
	cli_json_int(&o, "configs", k->n_configs);
	cli_json_bool(&o, "config_varied", k->n_configs > 1);
	js_kernel_devices(&o, k);
	cli_json_u64(&o, "timed", k->timed);
	cli_json_number_if(&o, "mean_ns", k->timed != 0, td_kernel_mean_ns(k));
	/* AMD kernels have code objects, not PTX: their keys say so */
	cli_json_string(&o, "code", td_kernel_code_word(k));
	cli_json_bool(&o, k->amd ? "code_object" : "ptx", k->has_ptx);
	cli_json_string(&o, k->amd ? "code_object_reason" : "ptx_reason", k->ptx_reason);
	js_kernel_probe(&o, k);
	cli_json_u64(&o, "graph_nodes", k->graph_nodes);
	cli_json_key(&o, "probed_launches");
	js_kernel_results(sb, td, k);
	cli_json_end(&o);
}

static void js_device(struct strbuf *sb, const struct td_device *d)
{
	struct cli_json o;
	cli_json_object(&o, sb);
	cli_json_int(&o, "ordinal", d->ordinal);
	cli_json_string(&o, "name", d->name);
	cli_json_int(&o, "cc", d->cc);
	if (d->arch)
		cli_json_string(&o, "arch", d->arch);
	cli_json_int(&o, "sms", d->sms);
	cli_json_int(&o, "clock_khz", d->clock_khz);
	cli_json_end(&o);
}

static void js_process(struct strbuf *sb, const struct trace_dir *td, const struct td_process *p)
{
	struct cli_json o, a;
	cli_json_object(&o, sb);
	cli_json_u64(&o, "pid", td_os_pid(p->pid));
	cli_json_u64(&o, "ppid", td_os_pid(p->ppid));
	if (td->n_traces > 1) {
		const struct td_trace *t = &td->traces[p->trace];
		cli_json_string(&o, "host", t->host);
		cli_json_int(&o, "trace", p->trace);
		cli_json_number_if(&o, "rank", t->rank >= 0, t->rank);
	}
	cli_json_string(&o, "exe", p->exe);
	cli_json_string(&o, "hook", p->hook_version);
	cli_json_string(&o, "driver", p->driver);
	cli_json_bool(&o, "exited", p->exited);
	cli_json_u64(&o, "results_written", p->results_written);
	cli_json_u64(&o, "results_lost", td_process_results_lost(p));
	cli_json_u64(&o, "results_waiting_max", p->results_pending_max);
	cli_json_u64(&o, "map_bytes_pooled_max", p->map_pooled_max);
	cli_json_u64(&o, "map_bytes_given_back", p->map_given);
	cli_json_key(&o, "devices");
	cli_json_array(&a, sb);
	for (int i = 0; i < td->n_devices; i++)
		if (td->devices[i].pid == p->pid) {
			cli_json_item(&a);
			js_device(sb, &td->devices[i]);
		}
	cli_json_end(&a);
	cli_json_key(&o, "kernels");
	cli_json_array(&a, sb);
	for (int i = 0; i < td->n_kernels; i++)
		if (td->kernels[i].pid == p->pid) {
			cli_json_item(&a);
			js_kernel(sb, td, &td->kernels[i]);
		}
	cli_json_end(&a);
	cli_json_end(&o);
}

static void js_record(struct strbuf *sb, const struct trace_dir *td)
{
	struct cli_json o;
	cli_json_object(&o, sb);
	cli_json_string(&o, "argv", td->record_argv);
	cli_json_string(&o, "version", td->record_version);
	cli_json_u64(&o, "t_ns", td->record_t_ns);
	cli_json_u64(&o, "pid", td->record_pid);
	cli_json_end(&o);
}

static void js_warning(struct strbuf *sb, const struct td_warning *w)
{
	struct cli_json o;
	cli_json_object(&o, sb);
	cli_json_u64(&o, "pid", w->pid);
	cli_json_u64(&o, "t_ns", w->t_ns);
	cli_json_string(&o, "msg", w->msg);
	cli_json_end(&o);
}

static void js_trace(struct strbuf *sb, const struct trace_dir *td)
{
	struct cli_json o, a;
	cli_json_object(&o, sb);
	cli_json_string(&o, "trace", td->path);
	cli_json_string(&o, "ntop_version", NTOP_VERSION);
	if (td->record_argv) {
		cli_json_key(&o, "record");
		js_record(sb, td);
	} else {
		cli_json_null(&o, "record");
	}
	cli_json_u64(&o, "lines", td->lines);
	cli_json_u64(&o, "malformed_lines", td->malformed_lines);
	cli_json_u64(&o, "unknown_lines", td->unknown_lines);
	cli_json_bool(&o, "truncated_last_line", td->truncated_last_line);
	cli_json_u64(&o, "lost_events", td->lost_events);
	report_end_json(&o, td);
	if (td->n_traces > 1)
		report_job_json(&o, td);
	cli_json_key(&o, "warnings");
	cli_json_array(&a, sb);
	for (int i = 0; i < td->n_warnings; i++) {
		cli_json_item(&a);
		js_warning(sb, &td->warnings[i]);
	}
	cli_json_end(&a);
	cli_json_key(&o, "processes");
	cli_json_array(&a, sb);
	for (int i = 0; i < td->n_procs; i++) {
		cli_json_item(&a);
		js_process(sb, td, &td->procs[i]);
	}
	cli_json_end(&a);
	cli_json_end(&o);
}

static int rep_json(const struct trace_dir *td)
{
	struct strbuf sb;
	strbuf_init(&sb);
	js_trace(&sb, td);
	strbuf_puts(&sb, "\n");
	size_t len;
	char *out = strbuf_finish(&sb, &len);
	if (!out) {
		cli_err("out of memory");
		return 1;
	}
	fwrite(out, 1, len, stdout);
	free(out);
	return 0;
}

int cmd_report(int argc, char **argv)
{
	char **dirs = calloc((size_t)argc, sizeof *dirs);
	int n_dirs = 0;
	if (!dirs)
		return 1;
	int json = 0, csv = 0;
	for (int i = 1; i < argc; i++) {
		if (cli_is_help(argv[i])) {
			free(dirs);
			report_help();
			return 0;
		}
		if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (strcmp(argv[i], "--csv") == 0)
			csv = 1;
		else if (strcmp(argv[i], "--lines") == 0)
			rep_lines = 1;
		else if (argv[i][0] == '-' && argv[i][1]) {
			free(dirs);
			return cli_usage("report", "unknown option '%s'", argv[i]);
		} else {
			dirs[n_dirs++] = argv[i];
		}
	}
	if (!n_dirs || json + csv + rep_lines > 1) {
		free(dirs);
		return !n_dirs ? cli_usage("report", "which trace directory? (ntop record prints it)")
			       : cli_usage("report", "one of --json, --csv and --lines");
	}
	struct trace_dir *td = NULL;
	char *cause = NULL;
	int loaded = trace_dir_load_job(dirs, n_dirs, &td, &cause);
	if (loaded < 0) {
		if (n_dirs == 1)
			cli_err("%s is not a trace directory: %s", dirs[0], cause ? cause : "cannot read it");
		else /* the cause names the one that is not */
			cli_err("not a trace directory: %s", cause ? cause : "cannot read it");
		free(cause);
		free(dirs);
		return CLI_EXIT_USAGE;
	}
	free(dirs);
	int rc = 0;
	if (json)
		rc = rep_json(td);
	else if (csv)
		rc = report_csv(stdout, td) < 0 ? (cli_err("writing the CSV failed"), 1) : 0;
	else
		rep_text(td);
	trace_dir_free(td);
	return rc;
}
