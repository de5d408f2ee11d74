/* Error reporting across ntop: a failing function returns -1 and, when the
 * caller passed a non-NULL `char **cause`, stores a malloc'd sentence saying
 * why (the caller frees it). Nothing here prints or exits: the hook runs
 * inside the user's application. */
#ifndef NTOP_CAUSE_H
#define NTOP_CAUSE_H

/* Formats into *cause (replacing and freeing any earlier one); returns -1. */
int cause_set(char **cause, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prefixes an existing *cause with "prefix: "; returns -1. */
int cause_wrap(char **cause, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
