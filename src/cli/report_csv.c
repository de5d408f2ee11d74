/* ntop report --csv: one line per kernel, for spreadsheets and scripts that
 * want a table rather than the nested JSON. Empty fields are values that
 * were never recorded (a kernel never timed has no mean), not zeros. */
#include "cli/report.h"

#include <inttypes.h>
#include <string.h>

static const char rcsv_header[] =
	"pid,kid,name,demangled,launches,grid,block,smem,configs,timed,mean_ns,ptx,ptx_reason,"
	"instrument,probes,instrument_reason,declined,probed_launches,results_ok,records,dropped,"
	"block_sched_launches,running_cycles,scheduling_cycles,waves_per_sm,code,gpus,host,rank\n";

/* A text field: quoted when it holds a comma, quote or line break (RFC
 * 4180); control bytes become '?' so a terminal showing it stays sane. */
static void rcsv_str(FILE *f, const char *s)
{
	fputc(',', f);
	if (!s)
		return;
	int quote = strpbrk(s, ",\"\r\n") != NULL;
	if (quote)
		fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"')
			fputs("\"\"", f);
		else
			fputc(c < 0x20 || c == 0x7f ? '?' : c, f);
	}
	if (quote)
		fputc('"', f);
}

static void rcsv_dims(FILE *f, int have, const uint32_t d[3])
{
	if (have)
		fprintf(f, ",%ux%ux%u", d[0], d[1], d[2]);
	else
		fputc(',', f);
}

/* Totals over the kernel's probed launches. */
static void rcsv_results(FILE *f, const struct trace_dir *td, const struct td_kernel *k)
{
	struct rep_result *rr = rep_results(td, k);
	uint64_t records = 0, dropped = 0;
	int ok = 0, n_bs = 0, n_waves = 0;
	double run = 0, sched = 0, waves = 0;
	for (int i = 0; rr && i < k->n_results; i++) {
		ok += rr[i].read_ok && !rr[i].error;
		records += rr[i].records;
		dropped += rr[i].dropped;
		if (!rr[i].has_bs)
			continue;
		n_bs++;
		run += rr[i].bs_running;
		sched += rr[i].bs_sched;
		if (rr[i].bs_waves >= 0) {
			n_waves++;
			waves += rr[i].bs_waves;
		}
	}
	rep_results_free(rr, k->n_results);
	fprintf(f, ",%d,%d,%" PRIu64 ",%" PRIu64 ",%d", k->n_results, ok, records, dropped, n_bs);
	if (n_bs)
		fprintf(f, ",%.1f,%.1f", run / n_bs, sched / n_bs);
	else
		fputs(",,", f);
	if (n_waves)
		fprintf(f, ",%.3f", waves / n_waves);
	else
		fputc(',', f);
}

/* gpus: "0:40;1:60", launches per device ordinal ("0;1" where not counted). */
static void rcsv_gpus(FILE *f, const struct td_kernel *k)
{
	fputc(',', f);
	for (int d = 0, n = 0; d < TD_DEVICES; d++) {
		if (!(k->devs >> d & 1))
			continue;
		fprintf(f, "%s%d", n++ ? ";" : "", d);
		if (k->dev_launches[d])
			fprintf(f, ":%" PRIu64, k->dev_launches[d]);
	}
}

/* host, rank: the kernel's trace in a job of several (empty for one trace
 * or where the recording did not say). */
static void rcsv_job(FILE *f, const struct trace_dir *td, const struct td_kernel *k)
{
	const struct td_process *p = trace_dir_process(td, k->pid);
	const struct td_trace *t = td->n_traces > 1 && p ? &td->traces[p->trace] : NULL;
	rcsv_str(f, t ? t->host : NULL);
	if (t && t->rank >= 0)
		fprintf(f, ",%d", t->rank);
	else
		fputc(',', f);
}

static void rcsv_kernel(FILE *f, const struct trace_dir *td, const struct td_kernel *k)
{
	fprintf(f, "%u,%u", td_os_pid(k->pid), k->kid);
	rcsv_str(f, k->name);
	rcsv_str(f, k->demangled);
	fprintf(f, ",%" PRIu64, k->launches);
	rcsv_dims(f, k->has_config, k->last.grid);
	rcsv_dims(f, k->has_config, k->last.block);
	if (k->has_config)
		fprintf(f, ",%u", k->last.smem);
	else
		fputc(',', f);
	fprintf(f, ",%d,%" PRIu64, k->n_configs, k->timed);
	if (k->timed)
		fprintf(f, ",%.0f", td_kernel_mean_ns(k));
	else
		fputc(',', f);
	fprintf(f, ",%d", k->has_ptx);
	rcsv_str(f, k->ptx_reason);
	rcsv_str(f, k->instrument_status);
	rcsv_str(f, k->instrument_probes);
	rcsv_str(f, k->instrument_reason);
	fprintf(f, ",%" PRIu64, k->declined);
	rcsv_results(f, td, k);
	/* what the ptx columns are about: PTX, or an AMD code object */
	rcsv_str(f, td_kernel_code_word(k));
	rcsv_gpus(f, k);
	rcsv_job(f, td, k);
	fputc('\n', f);
}

int report_csv(FILE *f, const struct trace_dir *td)
{
	fputs(rcsv_header, f);
	for (int i = 0; i < td->n_kernels; i++)
		rcsv_kernel(f, td, &td->kernels[i]);
	return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}
