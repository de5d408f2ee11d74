/* Several traces read as one job, said by ntop report (report_job.h). */
#include "cli/report_job.h"

#include <stdlib.h>

#include "trace/trace_dir.h"

static const char *job_end(const struct td_trace *t, char *buf, size_t n)
{
	if (!t->has_end)
		snprintf(buf, n, "no end line (cut short)");
	else if (t->end_signal > 0)
		snprintf(buf, n, "killed by signal %d", t->end_signal);
	else
		snprintf(buf, n, "status %d", t->end_status);
	return buf;
}

static int job_procs(const struct trace_dir *td, int trace)
{
	int n = 0;
	for (int i = 0; i < td->n_procs; i++)
		n += td->procs[i].trace == trace;
	return n;
}

void report_job_text(const struct trace_dir *td, FILE *out)
{
	fprintf(out, "Job: %d traces read as one\n", td->n_traces);
	for (int i = 0; i < td->n_traces; i++) {
		const struct td_trace *t = &td->traces[i];
		char end[64], rank[32] = "";
		if (t->rank >= 0)
			snprintf(rank, sizeof rank, ", rank %d", t->rank);
		fprintf(out, "  %s: host %s%s, %d process%s, %s\n", t->path, t->host ? t->host : "unknown", rank,
			job_procs(td, i), job_procs(td, i) == 1 ? "" : "es", job_end(t, end, sizeof end));
	}
	fprintf(out, "Times: each host's wall clock; across hosts they agree as well as the hosts' clocks do "
		     "(NTP: about a millisecond, not measured by ntop)\n");
}

void report_job_json(struct cli_json *o, const struct trace_dir *td)
{
	struct cli_json a, e;
	cli_json_key(o, "traces");
	cli_json_array(&a, o->sb);
	for (int i = 0; i < td->n_traces; i++) {
		const struct td_trace *t = &td->traces[i];
		cli_json_item(&a);
		cli_json_object(&e, o->sb);
		cli_json_string(&e, "path", t->path);
		cli_json_string(&e, "host", t->host);
		if (t->rank >= 0)
			cli_json_int(&e, "rank", t->rank);
		else
			cli_json_null(&e, "rank");
		cli_json_string(&e, "argv", t->argv);
		cli_json_bool(&e, "ended", t->has_end);
		cli_json_int(&e, "status", t->end_status);
		cli_json_int(&e, "signal", t->end_signal);
		cli_json_end(&e);
	}
	cli_json_end(&a);
}
