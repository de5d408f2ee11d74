/* How a trace ended, said by ntop report (report_end.h). */
#include "cli/report_end.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "trace/trace_dir.h"

typedef int (*end_lines_fn)(const struct trace_dir *td, struct strbuf *lines);

/* Each line fn gives, as "PREFIX: line". */
static void text_lines(FILE *out, const char *prefix, end_lines_fn fn, const struct trace_dir *td)
{
	struct strbuf why;
	strbuf_init(&why);
	fn(td, &why);
	for (char *l = why.data; l && *l;) {
		char *nl = strchr(l, '\n');
		fprintf(out, "%s: %.*s\n", prefix, (int)(nl ? nl - l : (long)strlen(l)), l);
		l = nl ? nl + 1 : NULL;
	}
	strbuf_done(&why);
}

/* The lines fn gives as an array of strings under key. */
static void json_lines(struct cli_json *o, const char *key, end_lines_fn fn, const struct trace_dir *td)
{
	struct strbuf why;
	strbuf_init(&why);
	fn(td, &why);
	struct cli_json a;
	cli_json_key(o, key);
	cli_json_array(&a, o->sb);
	for (char *l = why.data; l && *l;) {
		char *nl = strchr(l, '\n');
		if (nl)
			*nl = 0;
		cli_json_item(&a);
		cli_json_str(o->sb, l);
		l = nl ? nl + 1 : NULL;
	}
	cli_json_end(&a);
	strbuf_done(&why);
}

void report_end_text(const struct trace_dir *td, FILE *out)
{
	if (td->has_end && td->end_signal > 0)
		fprintf(out, "Ended: ntop finished the recording; the program was killed by signal %d (%s)\n",
			td->end_signal, strsignal(td->end_signal));
	else if (td->has_end && td->end_status >= 0)
		fprintf(out, "Ended: ntop finished the recording; the program exited with status %d\n", td->end_status);
	else if (td->has_end)
		fprintf(out, "Ended: ntop finished the recording\n");
	else if (td->record_argv)
		fprintf(out, "Ended: no end line from ntop: the recording was cut short (ntop killed, or still "
			     "running) or made by an ntop that wrote none\n");
	text_lines(out, "INCOMPLETE", trace_dir_incomplete, td);
	text_lines(out, "Left early", trace_dir_left_early, td);
}

void report_end_json(struct cli_json *o, const struct trace_dir *td)
{
	if (td->has_end) {
		struct cli_json e;
		cli_json_key(o, "end");
		cli_json_object(&e, o->sb);
		if (td->end_status >= 0)
			cli_json_int(&e, "status", td->end_status);
		else
			cli_json_null(&e, "status");
		if (td->end_signal > 0)
			cli_json_int(&e, "signal", td->end_signal);
		else
			cli_json_null(&e, "signal");
		cli_json_end(&e);
	} else {
		cli_json_null(o, "end");
	}
	json_lines(o, "incomplete", trace_dir_incomplete, td);
	json_lines(o, "left_early", trace_dir_left_early, td);
}
