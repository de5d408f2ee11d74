/* ntop report: a trace directory summarised per process and kernel, as text
 * for people or JSON for scripts. Result files are read one at a time and
 * reduced to a few numbers right away (a DMAT result can be hundreds of MB);
 * a corrupt one is listed with its reason, never fatal. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "trace/result.h"
#include "trace/trace_dir.h"
#include "viz/block_sched.h"

#define REP_TEXT_LAUNCHES 8 /* per kernel in text; JSON lists all */

struct rep_result {
	const struct td_result *tr;
	int read_ok;
	char *error;        /* why the file could not be used */
	int n_maps;
	uint64_t records, dropped;
	int has_bs;
	char bs_line[128];
	uint64_t bs_blocks, bs_warps_rec, bs_warps_exp, bs_dropped, bs_mismatch;
	double bs_running, bs_sched, bs_waves;
	uint32_t bs_sms, bs_max_conc, bs_smid_max;
	uint64_t bs_el_min, bs_el_max;
	uint32_t device_sms;
};

static void report_help(void)
{
	printf("Usage: ntop report DIR [--json]\n"
	       "\n"
	       "Summarises a trace directory written by 'ntop record': per process and\n"
	       "kernel the launches, launch configuration, mean duration, whether PTX was\n"
	       "available and whether (or why not) it was probed; for block_sched results\n"
	       "the per-launch line 'No.block:N Running:X Scheduling:Y (cycle)', waves per\n"
	       "SM, SMs used, warps recorded/expected and records dropped. Warnings from the\n"
	       "hook and corrupt result files are listed.\n"
	       "\n"
	       "Options:\n"
	       "  --json      one JSON document on stdout (all launches, mangled names too)\n"
	       "  -h, --help  this text\n"
	       "\n"
	       "Examples:\n"
	       "  ntop report ntop-trace/20261101-120000_4242\n"
	       "  ntop report trace1 --json | python3 -m json.tool\n");
}

/* ---- reading results ---- */

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
	free(cause);
	result_free(r);
}

static struct rep_result *rep_results(const struct trace_dir *td, const struct td_kernel *k)
{
	struct rep_result *rr = calloc((size_t)k->n_results + 1, sizeof *rr);
	for (int i = 0; rr && i < k->n_results; i++) {
		rr[i].tr = &td->results[k->results[i]];
		rep_analyze(&rr[i], k);
	}
	return rr;
}

static void rep_results_free(struct rep_result *rr, int n)
{
	for (int i = 0; rr && i < n; i++)
		free(rr[i].error);
	free(rr);
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
	printf("      PTX: %s%s%s", k->has_ptx ? "yes" : "no", k->has_ptx ? "" : " (",
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
		printf(", %d probed launch%s", k->n_results, k->n_results == 1 ? "" : "es");
	} else if (k->n_results) {
		printf("yes, %d probed launch%s", k->n_results, k->n_results == 1 ? "" : "es");
	} else {
		printf("no%s", k->has_ptx ? "" : " (needs PTX)");
	}
	if (k->declined)
		printf("; %llu declined (%s)", (unsigned long long)k->declined,
		       k->declined_reason ? k->declined_reason : "no reason given");
	printf("\n");
}

static void rep_text_result(const struct rep_result *rr)
{
	const struct td_result *tr = rr->tr;
	rep_tame(rr->error);
	printf("      seq %llu: ", (unsigned long long)tr->seq);
	if (rr->has_bs) {
		printf("%s", rr->bs_line);
		if (rr->bs_waves >= 0)
			printf("  waves/SM %.2f", rr->bs_waves);
		printf("  SMs %u  warps %llu/%llu  dropped %llu", rr->bs_sms,
		       (unsigned long long)rr->bs_warps_rec, (unsigned long long)rr->bs_warps_exp,
		       (unsigned long long)rr->bs_dropped);
		if (rr->bs_mismatch)
			printf("  (%llu blocks moved SM?)", (unsigned long long)rr->bs_mismatch);
		printf("\n");
	} else if (rr->read_ok && !rr->error) {
		printf("%d map%s, %llu records, %llu dropped (%s)\n", rr->n_maps, rr->n_maps == 1 ? "" : "s",
		       (unsigned long long)rr->records, (unsigned long long)rr->dropped, tr->file);
	} else {
		printf("%s\n", rr->error ? rr->error : "?");
	}
}

static void rep_text_kernel(const struct trace_dir *td, const struct td_kernel *k)
{
	printf("  [%u] %s\n", k->kid, k->demangled ? k->demangled : "(name not recorded)");
	if (k->name && k->demangled && strcmp(k->name, k->demangled) != 0)
		printf("      %s\n", k->name);
	printf("      launches %llu", (unsigned long long)k->launches);
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
			rep_text_result(&rr[i]);
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
	rep_results_free(rr, k->n_results);
}

static void rep_text_process(const struct trace_dir *td, const struct td_process *p)
{
	printf("\nProcess %u %s", p->pid, p->exe ? p->exe : "(no hello from the hook)");
	if (p->hook_version)
		printf(" (hook %s)", p->hook_version);
	if (p->exited)
		printf(", exited");
	printf("\n");
	for (int i = 0; i < td->n_devices; i++) {
		const struct td_device *d = &td->devices[i];
		if (d->pid == p->pid)
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
		printf("LOST: the hook dropped %llu events (its buffer overflowed); counts are low\n",
		       (unsigned long long)td->lost_events);
	for (int i = 0; i < td->n_procs; i++)
		rep_text_process(td, &td->procs[i]);
	if (td->n_procs == 0)
		printf("\nNo CUDA process was recorded (the hook never loaded).\n");
	if (td->n_warnings) {
		printf("\nWarnings (%d):\n", td->n_warnings);
		for (int i = 0; i < td->n_warnings; i++)
			printf("  [%u] %s\n", td->warnings[i].pid, td->warnings[i].msg);
	}
}

/* ---- JSON ---- */

static void js_key(struct strbuf *sb, int *first, const char *key)
{
	strbuf_printf(sb, "%s\"%s\":", *first ? "" : ",", key);
	*first = 0;
}

static void js_num(struct strbuf *sb, double v)
{
	if (v != v || v > 1e300 || v < -1e300)
		strbuf_puts(sb, "null");
	else
		strbuf_printf(sb, "%.6g", v);
}

static void js_dims(struct strbuf *sb, const uint32_t d[3])
{
	strbuf_printf(sb, "[%u,%u,%u]", d[0], d[1], d[2]);
}

static void js_result(struct strbuf *sb, const struct rep_result *rr, const struct td_kernel *k)
{
	const struct td_result *tr = rr->tr;
	int f = 1;
	strbuf_puts(sb, "{");
	js_key(sb, &f, "seq");
	strbuf_printf(sb, "%llu", (unsigned long long)tr->seq);
	js_key(sb, &f, "kernel");
	cli_json_str(sb, k->name);
	js_key(sb, &f, "file");
	cli_json_str(sb, tr->file);
	js_key(sb, &f, "ok");
	strbuf_puts(sb, rr->read_ok && !rr->error ? "true" : "false");
	js_key(sb, &f, "error");
	cli_json_str(sb, rr->error);
	js_key(sb, &f, "grid");
	if (tr->has_config)
		js_dims(sb, tr->config.grid);
	else
		strbuf_puts(sb, "null");
	js_key(sb, &f, "block");
	if (tr->has_config)
		js_dims(sb, tr->config.block);
	else
		strbuf_puts(sb, "null");
	js_key(sb, &f, "occupancy_blocks_per_sm");
	strbuf_printf(sb, "%d", tr->occ);
	js_key(sb, &f, "device_sms");
	strbuf_printf(sb, "%u", rr->device_sms);
	js_key(sb, &f, "maps");
	strbuf_printf(sb, "%d", rr->n_maps);
	js_key(sb, &f, "records");
	strbuf_printf(sb, "%llu", (unsigned long long)rr->records);
	js_key(sb, &f, "records_dropped");
	strbuf_printf(sb, "%llu", (unsigned long long)rr->dropped);
	js_key(sb, &f, "block_sched");
	if (!rr->has_bs) {
		strbuf_puts(sb, "null}");
		return;
	}
	int g = 1;
	strbuf_puts(sb, "{");
	js_key(sb, &g, "line");
	cli_json_str(sb, rr->bs_line);
	js_key(sb, &g, "blocks");
	strbuf_printf(sb, "%llu", (unsigned long long)rr->bs_blocks);
	js_key(sb, &g, "running_cycles");
	js_num(sb, rr->bs_running);
	js_key(sb, &g, "scheduling_cycles");
	js_num(sb, rr->bs_sched);
	js_key(sb, &g, "waves_per_sm");
	if (rr->bs_waves >= 0)
		js_num(sb, rr->bs_waves);
	else
		strbuf_puts(sb, "null");
	js_key(sb, &g, "sms_used");
	strbuf_printf(sb, "%u", rr->bs_sms);
	js_key(sb, &g, "max_concurrent_blocks");
	strbuf_printf(sb, "%u", rr->bs_max_conc);
	js_key(sb, &g, "warps_recorded");
	strbuf_printf(sb, "%llu", (unsigned long long)rr->bs_warps_rec);
	js_key(sb, &g, "warps_expected");
	strbuf_printf(sb, "%llu", (unsigned long long)rr->bs_warps_exp);
	js_key(sb, &g, "records_dropped");
	strbuf_printf(sb, "%llu", (unsigned long long)rr->bs_dropped);
	js_key(sb, &g, "smid_mismatch_blocks");
	strbuf_printf(sb, "%llu", (unsigned long long)rr->bs_mismatch);
	js_key(sb, &g, "smid_max");
	strbuf_printf(sb, "%u", rr->bs_smid_max);
	js_key(sb, &g, "elapsed_min");
	strbuf_printf(sb, "%llu", (unsigned long long)rr->bs_el_min);
	js_key(sb, &g, "elapsed_max");
	strbuf_printf(sb, "%llu", (unsigned long long)rr->bs_el_max);
	strbuf_puts(sb, "}}");
}

static void js_kernel_probe(struct strbuf *sb, int *f, const struct td_kernel *k)
{
	js_key(sb, f, "instrument");
	if (!k->instrument_status) {
		strbuf_puts(sb, "null");
	} else {
		int g = 1;
		strbuf_puts(sb, "{");
		js_key(sb, &g, "status");
		cli_json_str(sb, k->instrument_status);
		js_key(sb, &g, "reason");
		cli_json_str(sb, k->instrument_reason);
		js_key(sb, &g, "probes");
		cli_json_str(sb, k->instrument_probes);
		js_key(sb, &g, "regs_orig");
		strbuf_printf(sb, "%d", k->regs_orig);
		js_key(sb, &g, "regs_probed");
		strbuf_printf(sb, "%d", k->regs_probed);
		js_key(sb, &g, "sites");
		strbuf_printf(sb, "%d", k->sites);
		js_key(sb, &g, "ms_jit");
		js_num(sb, k->ms_jit);
		strbuf_puts(sb, "}");
	}
	js_key(sb, f, "declined");
	strbuf_printf(sb, "%llu", (unsigned long long)k->declined);
	js_key(sb, f, "declined_reason");
	cli_json_str(sb, k->declined_reason);
}

static void js_kernel(struct strbuf *sb, const struct trace_dir *td, const struct td_kernel *k)
{
	int f = 1;
	strbuf_puts(sb, "{");
	js_key(sb, &f, "kid");
	strbuf_printf(sb, "%u", k->kid);
	js_key(sb, &f, "mid");
	strbuf_printf(sb, "%u", k->mid);
	js_key(sb, &f, "name");
	cli_json_str(sb, k->name);
	js_key(sb, &f, "demangled");
	cli_json_str(sb, k->demangled);
	js_key(sb, &f, "launches");
	strbuf_printf(sb, "%llu", (unsigned long long)k->launches);
	js_key(sb, &f, "grid");
	if (k->has_config)
		js_dims(sb, k->last.grid);
	else
		strbuf_puts(sb, "null");
	js_key(sb, &f, "block");
	if (k->has_config)
		js_dims(sb, k->last.block);
	else
		strbuf_puts(sb, "null");
	js_key(sb, &f, "smem");
	strbuf_printf(sb, "%u", k->last.smem);
	js_key(sb, &f, "configs");
	strbuf_printf(sb, "%d", k->n_configs);
	js_key(sb, &f, "config_varied");
	strbuf_puts(sb, k->n_configs > 1 ? "true" : "false");
	js_key(sb, &f, "timed");
	strbuf_printf(sb, "%llu", (unsigned long long)k->timed);
	js_key(sb, &f, "mean_ns");
	if (k->timed)
		js_num(sb, td_kernel_mean_ns(k));
	else
		strbuf_puts(sb, "null");
	js_key(sb, &f, "ptx");
	strbuf_puts(sb, k->has_ptx ? "true" : "false");
	js_key(sb, &f, "ptx_reason");
	cli_json_str(sb, k->ptx_reason);
	js_kernel_probe(sb, &f, k);
	js_key(sb, &f, "graph_nodes");
	strbuf_printf(sb, "%llu", (unsigned long long)k->graph_nodes);
	js_key(sb, &f, "probed_launches");
	strbuf_puts(sb, "[");
	struct rep_result *rr = rep_results(td, k);
	for (int i = 0; rr && i < k->n_results; i++) {
		if (i)
			strbuf_puts(sb, ",");
		js_result(sb, &rr[i], k);
	}
	rep_results_free(rr, k->n_results);
	strbuf_puts(sb, "]}");
}

static void js_process(struct strbuf *sb, const struct trace_dir *td, const struct td_process *p)
{
	int f = 1;
	strbuf_puts(sb, "{");
	js_key(sb, &f, "pid");
	strbuf_printf(sb, "%u", p->pid);
	js_key(sb, &f, "ppid");
	strbuf_printf(sb, "%u", p->ppid);
	js_key(sb, &f, "exe");
	cli_json_str(sb, p->exe);
	js_key(sb, &f, "hook");
	cli_json_str(sb, p->hook_version);
	js_key(sb, &f, "driver");
	cli_json_str(sb, p->driver);
	js_key(sb, &f, "exited");
	strbuf_puts(sb, p->exited ? "true" : "false");
	js_key(sb, &f, "devices");
	strbuf_puts(sb, "[");
	int first = 1;
	for (int i = 0; i < td->n_devices; i++) {
		const struct td_device *d = &td->devices[i];
		if (d->pid != p->pid)
			continue;
		strbuf_printf(sb, "%s{\"ordinal\":%d,\"name\":", first ? "" : ",", d->ordinal);
		cli_json_str(sb, d->name);
		strbuf_printf(sb, ",\"cc\":%d,\"sms\":%d,\"clock_khz\":%d}", d->cc, d->sms, d->clock_khz);
		first = 0;
	}
	strbuf_puts(sb, "]");
	js_key(sb, &f, "kernels");
	strbuf_puts(sb, "[");
	first = 1;
	for (int i = 0; i < td->n_kernels; i++) {
		if (td->kernels[i].pid != p->pid)
			continue;
		if (!first)
			strbuf_puts(sb, ",");
		js_kernel(sb, td, &td->kernels[i]);
		first = 0;
	}
	strbuf_puts(sb, "]}");
}

static int rep_json(const struct trace_dir *td)
{
	struct strbuf sb;
	strbuf_init(&sb);
	int f = 1;
	strbuf_puts(&sb, "{");
	js_key(&sb, &f, "trace");
	cli_json_str(&sb, td->path);
	js_key(&sb, &f, "ntop_version");
	cli_json_str(&sb, NTOP_VERSION);
	js_key(&sb, &f, "record");
	if (td->record_argv) {
		strbuf_puts(&sb, "{\"argv\":");
		cli_json_str(&sb, td->record_argv);
		strbuf_puts(&sb, ",\"version\":");
		cli_json_str(&sb, td->record_version);
		strbuf_printf(&sb, ",\"t_ns\":%llu,\"pid\":%u}", (unsigned long long)td->record_t_ns, td->record_pid);
	} else {
		strbuf_puts(&sb, "null");
	}
	strbuf_printf(&sb, ",\"lines\":%llu,\"malformed_lines\":%llu,\"unknown_lines\":%llu,"
			   "\"truncated_last_line\":%s,\"lost_events\":%llu",
		      (unsigned long long)td->lines, (unsigned long long)td->malformed_lines,
		      (unsigned long long)td->unknown_lines, td->truncated_last_line ? "true" : "false",
		      (unsigned long long)td->lost_events);
	strbuf_puts(&sb, ",\"warnings\":[");
	for (int i = 0; i < td->n_warnings; i++) {
		strbuf_printf(&sb, "%s{\"pid\":%u,\"t_ns\":%llu,\"msg\":", i ? "," : "", td->warnings[i].pid,
			      (unsigned long long)td->warnings[i].t_ns);
		cli_json_str(&sb, td->warnings[i].msg);
		strbuf_puts(&sb, "}");
	}
	strbuf_puts(&sb, "],\"processes\":[");
	for (int i = 0; i < td->n_procs; i++) {
		if (i)
			strbuf_puts(&sb, ",");
		js_process(&sb, td, &td->procs[i]);
	}
	strbuf_puts(&sb, "]}\n");
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
	const char *dir = NULL;
	int json = 0;
	for (int i = 1; i < argc; i++) {
		if (cli_is_help(argv[i])) {
			report_help();
			return 0;
		}
		if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (argv[i][0] == '-' && argv[i][1])
			return cli_usage("report", "unknown option '%s'", argv[i]);
		else if (dir)
			return cli_usage("report", "one trace directory at a time ('%s' and '%s')", dir, argv[i]);
		else
			dir = argv[i];
	}
	if (!dir)
		return cli_usage("report", "which trace directory? (ntop record prints it)");
	struct trace_dir *td = NULL;
	char *cause = NULL;
	if (trace_dir_load(dir, &td, &cause) < 0) {
		cli_err("%s", cause ? cause : "cannot read the trace");
		free(cause);
		return 1;
	}
	int rc = 0;
	if (json)
		rc = rep_json(td);
	else
		rep_text(td);
	trace_dir_free(td);
	return rc;
}
