/* The user's ntop sessions (`ntop ls`, `ntop attach`, the start screen):
 * every `ntop record` and `ntop PROGRAM` registers its trace directory in
 * $XDG_STATE_HOME/ntop/sessions/ (0700, a small file each: the directory,
 * ntop's pid, the start time, the program), so a later login can find the
 * sessions that run and those that ended. Entries whose directory is gone
 * are dropped when listed. */
#ifndef NTOP_SESSIONS_H
#define NTOP_SESSIONS_H
#include <stdint.h>
#include <sys/types.h>

struct sess_entry {
	char *dir;          /* the trace directory, absolute */
	pid_t pid;          /* the recording ntop */
	uint64_t start_ns;  /* wall clock */
	char *argv;         /* the program */
	int running;        /* ntop is still recording it (its pid lives, no end line yet) */
};

/* Best effort: a session that cannot be registered still records. */
int sessions_register(const char *dir, const char *argv, char **cause);
/* Newest first; *n of them. 0, or -1 with *cause. */
int sessions_list(struct sess_entry **out, int *n, char **cause);
void sessions_free(struct sess_entry *v, int n);
/* Is dir a session ntop is recording now (its recorder alive, no end line)? */
int sessions_dir_running(const char *dir, pid_t *recorder);

#endif
