/* `ntop report DIR DIR...`: the traces of a multi-node job (one per rank,
 * `ntop record -o run-%h-r%r`) read as one (trace_dir_load_job): which
 * trace is which host and rank, how each ended, and how times compare
 * across hosts. */
#ifndef NTOP_REPORT_JOB_H
#define NTOP_REPORT_JOB_H
#include <stdio.h>

#include "cli/cli.h"
#include "trace/trace_dir.h"

void report_job_text(const struct trace_dir *td, FILE *out);
/* "traces": [{path, host, rank, argv, ended, status, signal}]. */
void report_job_json(struct cli_json *o, const struct trace_dir *td);

#endif
