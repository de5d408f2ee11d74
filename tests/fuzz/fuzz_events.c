/* Fuzz harness for the events.log reader: the bytes, split into lines the
 * way trace_dir_load splits them (lines over TRACE_LINE_MAX skipped, a cut
 * last line not applied), fed to a trace model, which is then asked what
 * `ntop report` asks of it (incomplete reasons, kernels, processes).
 * Seeds: examples/session/events.log, tests/corpus/events. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "trace/events.h"
#include "trace/trace_dir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct trace_dir *td = trace_dir_create(NULL);
	if (!td)
		return 0;
	const char *s = (const char *)data;
	size_t start = 0;
	for (size_t i = 0; i < size; i++) {
		if (s[i] != '\n')
			continue;
		struct event ev;
		if (event_parse(s + start, i + 1 - start, &ev) == 0)
			event_done(&ev);
		trace_dir_feed(td, s + start, i + 1 - start);
		start = i + 1;
	}
	struct strbuf why;
	strbuf_init(&why);
	int n = trace_dir_incomplete(td, &why);
	if (n < 0 || (n > 0 && (!why.data || !strchr(why.data, '\n'))))
		abort(); /* every reason is a line */
	strbuf_done(&why);
	for (int i = 0; i < td->n_kernels; i++) {
		const struct td_kernel *k = &td->kernels[i];
		if (trace_dir_kernel(td, k->pid, k->kid) != k)
			abort(); /* the index finds every kernel */
		for (int r = 0; r < k->n_results; r++)
			if (k->results[r] < 0 || k->results[r] >= td->n_results)
				abort();
		(void)td_kernel_mean_ns(k);
	}
	for (int i = 0; i < td->n_procs; i++) {
		(void)td_process_results_lost(&td->procs[i]);
		(void)trace_dir_device(td, td->procs[i].pid);
	}
	trace_dir_free(td);
	return 0;
}
