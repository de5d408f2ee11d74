/* What the loader audit module's files share (rtld_audit.c: rules and
 * redirected opens; rtld_bind.c: bindings sent to the front; rtld_front.c:
 * the front's wrappers). */
#ifndef NTOP_RTLD_AUDIT_H
#define NTOP_RTLD_AUDIT_H

/* The last component of a path. */
const char *audit_base(const char *name);
/* Does the file named match an fnmatch pattern (its last component, or for
 * a development link "lib*.so", the file it resolves to)? */
int audit_name_matches(const char *pattern, const char *name);

/* rtld_bind.c: a "PATTERN>HOOK" rule (one is kept), and whether there is one. */
void audit_bind_rule(const char *pattern, const char *hook);
int audit_binding(void);

/* rtld_front.c: the hook library the wrappers open; the wrapper for a call
 * (its real address stored for the fallback), NULL for a name not hooked. */
void audit_front_hook(const char *hook);
void *audit_front_bind(const char *name, void *real);

#endif
