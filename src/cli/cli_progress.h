/* Progress of a long write (an export), on the terminal only: after the
 * write has taken a second, one line on stderr redrawn in place at most
 * five times a second, "ntop: writing FILE: 42% (12.3 MB)", and wiped when
 * it ends so the command's own summary follows on a clean line. Nothing at
 * all when stderr is not a terminal (scripts, CI logs) or the write was
 * quick. NTOP_PROGRESS_AFTER_MS sets the second (tests). */
#ifndef NTOP_CLI_PROGRESS_H
#define NTOP_CLI_PROGRESS_H
#include <stdint.h>
#include <stdio.h>

struct cli_progress {
	const char *what;    /* the file, as the user named it */
	FILE *out;           /* what is written: its size gives the bytes */
	uint64_t t0_ns, last_ns, after_ns;
	int tty;             /* stderr is a terminal */
	int width;           /* characters of the line on screen, 0: none */
};

void cli_progress_start(struct cli_progress *p, const char *what, FILE *out);
/* done of total units (records, blocks) written so far. */
void cli_progress_update(struct cli_progress *p, uint64_t done, uint64_t total);
void cli_progress_end(struct cli_progress *p);

#endif
