/* ntop ls: the user's sessions (sessions.h), newest first: whether ntop
 * is still recording, when it started, the program, and from the trace its
 * processes, GPUs and probed launches. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/sessions.h"
#include "trace/trace_dir.h"

#define LS_BIG (256u << 20) /* events.log past this: its counts are not read */

static void ls_help(void)
{
	printf("Usage: ntop ls [--all]\n"
	       "\n"
	       "Lists your ntop sessions (every 'ntop record' and 'ntop PROGRAM' registers\n"
	       "its trace directory in $XDG_STATE_HOME/ntop/sessions): running or ended,\n"
	       "start, processes, GPUs, probed launches, the program and the directory.\n"
	       "The newest 20 unless --all. 'ntop attach DIR' follows a running one.\n");
}

struct ls_counts {
	int procs, gpus;
	long probed;
	int known;
};

static struct ls_counts ls_count(const char *dir)
{
	struct ls_counts c = {0, 0, 0, 0};
	char path[4200];
	struct stat st;
	snprintf(path, sizeof path, "%s/events.log", dir);
	struct trace_dir *td = NULL;
	char *cause = NULL;
	if (stat(path, &st) < 0 || (uint64_t)st.st_size > LS_BIG || trace_dir_load(dir, &td, &cause) < 0) {
		free(cause);
		return c;
	}
	uint32_t gpus = 0;
	c.procs = td->n_procs;
	for (int i = 0; i < td->n_devices; i++)
		if (td->devices[i].ordinal >= 0 && td->devices[i].ordinal < 32)
			gpus |= 1u << td->devices[i].ordinal;
	c.gpus = __builtin_popcount(gpus);
	for (int i = 0; i < td->n_results; i++)
		c.probed += td->results[i].file != NULL;
	c.known = 1;
	trace_dir_free(td);
	return c;
}

int cmd_ls(int argc, char **argv)
{
	int all = 0;
	for (int i = 1; i < argc; i++) {
		if (cli_is_help(argv[i])) {
			ls_help();
			return 0;
		}
		if (!strcmp(argv[i], "--all"))
			all = 1;
		else
			return cli_usage("ls", "unknown argument '%s'", argv[i]);
	}
	struct sess_entry *v = NULL;
	int n = 0;
	char *cause = NULL;
	if (sessions_list(&v, &n, &cause) < 0) {
		cli_err("%s", cause);
		free(cause);
		return 1;
	}
	if (!n)
		printf("no sessions yet ('ntop record PROGRAM' or 'ntop PROGRAM' starts one)\n");
	else
		printf("%-8s %-16s %6s %5s %7s  %-28s %s\n", "STATE", "STARTED", "PROCS", "GPUS", "PROBED", "PROGRAM",
		       "DIRECTORY");
	for (int i = 0; i < n && (all || i < 20); i++) {
		char when[32] = "?";
		time_t t = (time_t)(v[i].start_ns / 1000000000ull);
		struct tm tm;
		if (localtime_r(&t, &tm))
			strftime(when, sizeof when, "%Y-%m-%d %H:%M", &tm);
		struct ls_counts c = ls_count(v[i].dir);
		char procs[16] = "-", gpus[16] = "-", probed[24] = "-";
		if (c.known) {
			snprintf(procs, sizeof procs, "%d", c.procs);
			snprintf(gpus, sizeof gpus, "%d", c.gpus);
			snprintf(probed, sizeof probed, "%ld", c.probed);
		}
		printf("%-8s %-16s %6s %5s %7s  %-28.28s %s\n", v[i].running ? "running" : "ended", when, procs, gpus,
		       probed, v[i].argv ? v[i].argv : "?", v[i].dir);
	}
	if (!all && n > 20)
		printf("(%d more: ntop ls --all)\n", n - 20);
	sessions_free(v, n);
	return 0;
}
