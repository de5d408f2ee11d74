/* Several trace directories read as one job (trace_dir.h): the traces of
 * a multi-node run, one per rank. Each trace's processes get ids of their
 * own (pid + index << TD_PID_SHIFT) and remember their trace, so hosts'
 * pids never meet; how each trace ended is kept apart and summed up. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace_dir.h"

int trace_dir_begin_trace(struct trace_dir *td, const char *path)
{
	struct td_trace *t = realloc(td->traces, (size_t)(td->n_traces + 1) * sizeof *t);
	if (!t)
		return -1;
	td->traces = t;
	t = &td->traces[td->n_traces];
	memset(t, 0, sizeof *t);
	t->rank = -1;
	t->end_status = -1;
	if (path && !(t->path = strdup(path)))
		return -1;
	td->feeding = td->n_traces++;
	return 0;
}

void trace_dir_end_job(struct trace_dir *td)
{
	if (td->n_traces < 2)
		return;
	td->has_end = 1;
	td->end_status = 0;
	td->end_signal = 0;
	for (int i = 0; i < td->n_traces; i++) {
		const struct td_trace *t = &td->traces[i];
		td->has_end &= t->has_end;
		if (!td->end_signal && t->end_signal > 0)
			td->end_signal = t->end_signal;
		if (!td->end_status && t->end_status != 0)
			td->end_status = t->end_status;
	}
}

void trace_dir_free_traces(struct trace_dir *td)
{
	for (int i = 0; i < td->n_traces; i++) {
		free(td->traces[i].path);
		free(td->traces[i].host);
		free(td->traces[i].argv);
	}
	free(td->traces);
	td->traces = NULL;
	td->n_traces = 0;
}

uint32_t td_os_pid(uint32_t pid)
{
	return pid & ((1u << TD_PID_SHIFT) - 1);
}

const char *td_process_label(const struct trace_dir *td, uint32_t pid, char *buf, size_t n)
{
	const struct td_process *p = trace_dir_process(td, pid);
	const struct td_trace *t = p && td->n_traces > 1 && p->trace < td->n_traces ? &td->traces[p->trace] : NULL;
	if (!t) {
		snprintf(buf, n, "%u", td_os_pid(pid));
		return buf;
	}
	int o = snprintf(buf, n, "%u on %s", td_os_pid(pid), t->host ? t->host : "an unknown host");
	if (t->rank >= 0 && o > 0 && (size_t)o < n)
		snprintf(buf + o, n - (size_t)o, " (rank %d)", t->rank);
	return buf;
}
