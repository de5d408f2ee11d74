/* How a recorded trace ended, for `ntop report` (text and JSON): ntop's
 * `end` line (the program's exit status or the signal that killed it) and
 * every reason the trace may be incomplete (trace_dir_incomplete), so a
 * recording cut short is never read as a whole one. */
#ifndef NTOP_REPORT_END_H
#define NTOP_REPORT_END_H
#include <stdio.h>

#include "cli/cli.h"

struct trace_dir;

/* "Ended: ..." and one "INCOMPLETE: ..." line per reason. */
void report_end_text(const struct trace_dir *td, FILE *out);
/* Members "end" (null without an end line) and "incomplete" (reasons). */
void report_end_json(struct cli_json *o, const struct trace_dir *td);

#endif
