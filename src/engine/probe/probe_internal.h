/* Shared by the probe loaders (probe.c, probe_neutrino.c, probe_ntop.c):
 * error helpers that point at a TOML node, typed getters, and the builders
 * that fill struct probe. Not for use outside src/engine/probe*.c. */
#ifndef NTOP_PROBE_INTERNAL_H
#define NTOP_PROBE_INTERNAL_H
#include "engine/probe/probe.h"
#include "common/toml.h"

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
/* The same with the snippet's text and TOML line given (errors point at `at`). */
struct probe_hook *probe_add_hook_text(const struct probe_src *src, struct probe *p, const char *name,
				       enum probe_tp_kind kind, int after, const char *text, int line, int flat,
				       const struct toml_node *at);
/* Appends a line to p->notes. */
int probe_note(const struct probe_src *src, struct probe *p, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int probe_hook_add_opcode(const struct probe_src *src, struct probe_hook *h, const struct toml_node *at,
			  const char *op, size_t len);
int probe_set_string(const struct probe_src *src, char **dst, const char *s, const struct toml_node *at);

int probe_load_neutrino(const struct probe_src *src, const struct toml_node *root, struct probe *p);
int probe_load_ntop(const struct probe_src *src, const struct toml_node *root, struct probe *p);

/* probe_neutrino.c: what NEUTRINO's two layouts share. */
#define PROBE_NEUTRINO_DYNAMIC_CAP 64 /* records per unit for its run-time sized maps */
/* The hooks of one NEUTRINO probe section at position `pos` ("kernel" and/or
 * opcodes joined by ':'), with its before/after snippets (either NULL). */
int probe_neutrino_hooks(const struct probe_src *src, struct probe *p, const char *name,
			 const struct toml_node *pos, const struct toml_node *const snip[2], int no_pred);
/* The analysis a NEUTRINO analysis script stands for (only block_sched's). */
int probe_neutrino_analysis(const struct probe_src *src, struct probe *p, const struct toml_node *script);
/* After the sections: registers written but never declared become the probe's. */
int probe_neutrino_finish(const struct probe_src *src, const struct toml_node *root, struct probe *p);
/* probe_neutrino_dsl.c: the layout NEUTRINO's DSL compiler emits ([probe.*], [map.*], regs). */
int probe_neutrino_dsl_is(const struct toml_node *root);
int probe_load_neutrino_dsl(const struct probe_src *src, const struct toml_node *root, struct probe *p);

#endif
