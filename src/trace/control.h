/* The live control file (doc/control.md): which kernels run which probes,
 * written by a launcher (the UI) and polled by the hook in every process of
 * the application. Lines use the event-line encoding of events.h:
 *
 *   control version=1 gen=7
 *   probe name=<mangled> probes=/abs/a.toml,/abs/b.toml mode=every [limit=N]
 *   probe name=<mangled> probes=/abs/a.toml mode=nth n=10
 *   probe name=<mangled> probes=/abs/a.toml mode=next
 *   source name=<mangled>
 *
 * Both sides share this file so the writer cannot produce what the reader
 * refuses. Unknown types and keys are ignored; a malformed line is handed to
 * the caller's callback and skipped. */
#ifndef NTOP_CONTROL_H
#define NTOP_CONTROL_H
#include <stddef.h>
#include <stdint.h>
#include "common/strbuf.h"

#define CONTROL_VERSION 1
#define CONTROL_MAX_BYTES (1u << 20) /* the hook reads at most this much */

enum control_mode {
	CONTROL_NEXT,  /* the next launch in each process, once per gen */
	CONTROL_EVERY, /* every launch, up to the limit per (kernel, probe set) */
	CONTROL_NTH,   /* launches 1, n+1, 2n+1... counted from when gen took effect */
};

struct control_entry {
	char *name;             /* mangled kernel name, exact match */
	char *probes;           /* absolute probe paths separated by ',' */
	enum control_mode mode;
	uint64_t n;             /* CONTROL_NTH: every nth launch (>= 1) */
	uint64_t limit;         /* probed launches per (kernel, probe set); 0: NTOP_PROBE_LIMIT */
};

struct control_file {
	uint64_t gen;           /* > 0; a reader applies only a gen above the last it applied */
	struct control_entry *entries;
	int n;
	char **sources;         /* `source` lines: kernels whose PTX the hook saves into the trace */
	int n_sources;
};

/* Called for each malformed line (text without '\n', why it was refused). */
typedef void (*control_bad_fn)(void *arg, const char *line, size_t len, const char *why);

/* Parses a whole control file. Returns -1 with *cause when it has no valid
 * `control` line (no gen, or a version this reader does not know); malformed
 * `probe` lines go to bad() (may be NULL) and are skipped. A later line for
 * the same kernel replaces an earlier one. */
int control_parse(const char *text, size_t len, struct control_file *out, control_bad_fn bad, void *arg,
		  char **cause);
void control_file_done(struct control_file *f);

/* Appends the file's text. -1 with *cause when an entry cannot be carried
 * (empty or relative probe path, a ',' in a path, nth without n). */
int control_format(struct strbuf *sb, uint64_t gen, const struct control_entry *e, int n, char **cause);

/* Appends a `source name=...` line per name (after control_format). */
void control_format_sources(struct strbuf *sb, const char *const *names, int n);

/* Joins probe paths into an entry's `probes` (malloc'd). NULL with *cause
 * when a path is empty, relative or contains ','. */
char *control_join_probes(const char *const *paths, int n, char **cause);

const char *control_mode_name(enum control_mode m);
/* "next", "every", "nth" -> mode; -1 for anything else. */
int control_mode_parse(const char *s, enum control_mode *m);

#endif
