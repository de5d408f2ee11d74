/* Shared by the probe loaders (probe.c, probe_neutrino.c, probe_ntop.c):
 * error helpers that point at a TOML node, typed getters, and the builders
 * that fill struct probe. Not for use outside src/engine/probe*.c. */
#ifndef NTOP_PROBE_INTERNAL_H
#define NTOP_PROBE_INTERNAL_H
#include "engine/probe.h"
#include "engine/toml.h"

/* Where errors point: the file name as given to the loader. */
struct probe_src {
	const char *path;
	char **cause;
};

/* "FILE:LINE:COL: message" at the value (or, for _key, the key) of node n. */
int probe_err(const struct probe_src *src, const struct toml_node *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int probe_err_key(const struct probe_src *src, const struct toml_node *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Fails on any key of table t not in the NULL-terminated `known` list, with a
 * "did you mean" hint for near misses. `where` names the table in messages. */
int probe_check_key(const struct probe_src *src, const struct toml_node *n, const char *const *known,
		    const char *where);
int probe_check_keys(const struct probe_src *src, const struct toml_node *t, const char *const *known,
		     const char *where);
/* Member `key` of t as a string: *out = NULL when absent and not required. */
int probe_get_string(const struct probe_src *src, const struct toml_node *t, const char *key, int required,
		     const struct toml_node **out);

/* Identifiers become PTX names: [A-Za-z_][A-Za-z0-9_]*, shorter than PROBE_NAME_MAX. */
int probe_is_ident(const char *s);
/* Dotted opcode prefix: non-empty parts of [A-Za-z0-9_] (and "::" inside a
 * part when allow_colons, e.g. "ld.shared::cta"). */
int probe_is_opcode(const char *s, size_t len, int allow_colons);

/* Appends a hook whose snippet is string node `snippet`; returns it or NULL. */
struct probe_hook *probe_add_hook(const struct probe_src *src, struct probe *p, const char *name,
				  enum probe_tp_kind kind, int after, const struct toml_node *snippet);
int probe_hook_add_opcode(const struct probe_src *src, struct probe_hook *h, const struct toml_node *at,
			  const char *op, size_t len);
int probe_set_string(const struct probe_src *src, char **dst, const char *s, const struct toml_node *at);

int probe_load_neutrino(const struct probe_src *src, const struct toml_node *root, struct probe *p);
int probe_load_ntop(const struct probe_src *src, const struct toml_node *root, struct probe *p);

#endif
