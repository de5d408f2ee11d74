/* Files in directories only their owner controls: a trace directory and
 * what ntop and its hook write below it. Another local user must not be
 * able to hand ntop a directory they can write into (a control file of
 * theirs would pick the probes that run in your app), nor plant a link that
 * makes ntop or the hook write through it. So a directory is opened once,
 * without following a link, and checked (owned by the effective uid, not
 * writable by group or others); everything below is opened relative to
 * that descriptor with O_NOFOLLOW, new files with O_EXCL, replaced files
 * through an O_EXCL temporary and renameat. Nothing here prints: the hook
 * uses it inside the user's application. */
#ifndef NTOP_SAFEFS_H
#define NTOP_SAFEFS_H
#include <stddef.h>

/* Opens directory `path` (its last component may not be a link) and
 * checks it as safefs_check_dir does; with `empty`, it must hold nothing.
 * Returns the descriptor (O_CLOEXEC) or -1 with *cause. */
int safefs_open_dir(const char *path, int empty, char **cause);
/* Checks an open directory: a directory, owned by the effective uid, not
 * writable by group or others, and with `empty` holding no entries.
 * `shown` names it in *cause. */
int safefs_check_dir(int dfd, const char *shown, int empty, char **cause);
/* Subdirectory `name` of dfd: made 0700 when missing, else checked (not a
 * link, the caller's, not group/other-writable). Returns its descriptor. */
int safefs_subdir(int dfd, const char *name, char **cause);
/* Creates dfd/name, which must not exist yet (O_CREAT|O_EXCL|O_NOFOLLOW,
 * mode 0600) with the extra open flags (O_WRONLY, O_APPEND...); -1 with
 * errno as open(2) left it. */
int safefs_create(int dfd, const char *name, int flags);
/* A new file ".<base>.XXXXXX" in dfd (random suffix, O_EXCL, 0600, opened
 * for writing); its name in tmp (cap bytes). -1 with errno. */
int safefs_tmp(int dfd, const char *base, char *tmp, size_t cap);
/* Writes len bytes to dfd/name through a temporary and renameat: readers
 * see the old file or the new one, and a link planted at `name` is
 * replaced, never followed. */
int safefs_replace(int dfd, const char *name, const void *data, size_t len, char **cause);

#endif
