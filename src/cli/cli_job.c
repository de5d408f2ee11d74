/* Where a recording sits in a multi-node job (cli.h): the host, and the
 * rank the job launcher gave the process (torchrun's RANK, Slurm's
 * SLURM_PROCID, Open MPI's OMPI_COMM_WORLD_RANK, PMI's PMI_RANK), for the
 * `record` line and for -o patterns. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/cause.h"
#include "common/strbuf.h"
#include "trace/events.h"

static const char *const rank_vars[] = { "RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK" };

int cli_job_rank(const char **var)
{
	for (size_t i = 0; i < sizeof rank_vars / sizeof rank_vars[0]; i++) {
		const char *v = getenv(rank_vars[i]);
		char *end;
		long r = v && *v ? strtol(v, &end, 10) : -1;
		if (v && *v && !*end && r >= 0 && r < 1 << 24) {
			if (var)
				*var = rank_vars[i];
			return (int)r;
		}
	}
	return -1;
}

const char *cli_job_host(char *buf, size_t n)
{
	if (gethostname(buf, n) < 0 || !buf[0])
		snprintf(buf, n, "unknown-host");
	buf[n - 1] = 0;
	char *dot = strchr(buf, '.');
	if (dot) /* node1.cluster.example -> node1 */
		*dot = 0;
	return buf;
}

void cli_job_fields(struct strbuf *sb)
{
	char host[256];
	event_add(sb, "host", cli_job_host(host, sizeof host));
	int r = cli_job_rank(NULL);
	if (r >= 0)
		event_add_int(sb, "rank", r);
}

/* %h host, %r rank, %p pid, %% a percent sign. */
int cli_job_expand(const char *pattern, char **out, char **cause)
{
	struct strbuf sb;
	strbuf_init(&sb);
	char host[256];
	for (const char *p = pattern; *p; p++) {
		if (*p != '%') {
			strbuf_printf(&sb, "%c", *p);
			continue;
		}
		switch (*++p) {
		case 'h': strbuf_puts(&sb, cli_job_host(host, sizeof host)); break;
		case 'p': strbuf_printf(&sb, "%d", (int)getpid()); break;
		case '%': strbuf_puts(&sb, "%"); break;
		case 'r': {
			int r = cli_job_rank(NULL);
			if (r < 0) {
				strbuf_done(&sb);
				return cause_set(cause, "-o %s uses %%r, but no rank is set (none of RANK, SLURM_PROCID, "
						 "OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK): run it under torchrun, srun or "
						 "mpirun, or use %%p", pattern);
			}
			strbuf_printf(&sb, "%d", r);
			break;
		}
		default:
			strbuf_done(&sb);
			return cause_set(cause, "-o %s: '%%%c' is not %%h (host), %%r (rank), %%p (pid) or %%%%", pattern,
					 *p ? *p : ' ');
		}
	}
	size_t len;
	*out = strbuf_finish(&sb, &len);
	return *out ? 0 : cause_set(cause, "out of memory");
}
