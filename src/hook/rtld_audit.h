/* What the loader audit module's two files (rtld_audit.c: rules and
 * redirected opens; rtld_bind.c: bindings sent to a front) share. */
#ifndef NTOP_RTLD_AUDIT_H
#define NTOP_RTLD_AUDIT_H

/* The last component of a path. */
const char *audit_base(const char *name);
/* Does the file named match an fnmatch pattern (its last component, or for
 * a development link "lib*.so", the file it resolves to)? */
int audit_name_matches(const char *pattern, const char *name);

/* rtld_bind.c: a "PATTERN>FRONT" rule (one is kept), and whether there is one. */
void audit_bind_rule(const char *pattern, const char *front);
int audit_binding(void);

#endif
