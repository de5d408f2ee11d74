/* Progress lines of long writes (cli_progress.h). */
#include "cli/cli_progress.h"

#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/timeutil.h"

#define PROGRESS_AFTER_NS 1000000000ull /* writes quicker than this say nothing */
#define PROGRESS_EVERY_NS 200000000ull

void cli_progress_start(struct cli_progress *p, const char *what, FILE *out)
{
	p->what = what;
	p->out = out;
	p->t0_ns = p->last_ns = time_mono_ns();
	p->tty = isatty(STDERR_FILENO);
	p->width = 0;
	p->after_ns = PROGRESS_AFTER_NS;
	unsigned long ms;
	const char *env = getenv("NTOP_PROGRESS_AFTER_MS");
	if (env && cli_parse_ulong(env, &ms) == 0)
		p->after_ns = (uint64_t)ms * 1000000ull;
}

/* "12.3 MB" written so far; "" when the output has no position (a pipe). */
static void progress_bytes(FILE *out, char *buf, size_t len)
{
	off_t pos = out ? ftello(out) : -1;
	if (pos < 0) {
		buf[0] = 0;
		return;
	}
	double b = (double)pos;
	if (b >= 1e9)
		snprintf(buf, len, " (%.2f GB)", b / 1e9);
	else if (b >= 1e6)
		snprintf(buf, len, " (%.1f MB)", b / 1e6);
	else
		snprintf(buf, len, " (%.0f kB)", b / 1e3);
}

void cli_progress_update(struct cli_progress *p, uint64_t done, uint64_t total)
{
	if (!p->tty)
		return;
	uint64_t now = time_mono_ns();
	if (now - p->t0_ns < p->after_ns || (p->width && now - p->last_ns < PROGRESS_EVERY_NS))
		return;
	p->last_ns = now;
	char bytes[32];
	progress_bytes(p->out, bytes, sizeof bytes);
	unsigned pct = total ? (unsigned)(done * 100 / total) : 0;
	/* \r and spaces rather than an erase sequence: right on any terminal */
	int n = fprintf(stderr, "\rntop: writing %s: %u%%%s", p->what, pct > 100 ? 100 : pct, bytes);
	if (n > 0 && n - 1 < p->width)
		fprintf(stderr, "%*s", p->width - (n - 1), "");
	if (n > 0 && n - 1 > p->width)
		p->width = n - 1;
	fflush(stderr);
}

void cli_progress_end(struct cli_progress *p)
{
	if (p->width)
		fprintf(stderr, "\r%*s\r", p->width, "");
	p->width = 0;
}
