/* NEUTRINO's probe files (seed 003; open-neutrino's tools/ and example/),
 * in the older of its two layouts, plus what both layouts share (the newer
 * one, emitted by its DSL compiler, is probe_neutrino_dsl.c):
 *
 *   author = "..."  description = "..."  analyze_hook = "block_sched.py"
 *   dynamic = true                  maps sized at run time (datamodel ...:count)
 *   [section]                       one probe section per table
 *   position = "kernel" | "ld.global:st.global"   (opcodes joined by ':')
 *   datamodel = "thread:BYTES" | "warp:BYTES" [":CAP" | ":count"]   the map
 *   no_pred = true                  ignore the traced instruction's guard
 *   before = "..."  after = "..."   snippets
 *
 * What a file means is what NEUTRINO's engine made of it, except where that
 * was a bug its own comments name, and then what the file meant:
 *  - position "kernel": before at entry, after before every ret and exit
 *    (NEUTRINO: ret only);
 *  - opcode positions match as substrings of the opcode, on dotted parts:
 *    "mma.sync.aligned" also takes "wmma.mma.sync.aligned..." (its
 *    tensorop_count says so), where ntop's own schema matches prefixes;
 *  - a snippet at a guarded instruction runs when the guard holds (NEUTRINO
 *    prefixed every snippet line with it), unless no_pred;
 *  - `after` a branch, ret, exit or trap runs just before it (after it,
 *    nothing runs; NEUTRINO's program_progress says as much);
 *  - maps sized at run time (cap "count"/"dynamic": NEUTRINO runs the kernel
 *    once more to count) keep PROBE_NEUTRINO_DYNAMIC_CAP records per unit
 *    and count the rest as dropped;
 *  - `{ }` blocks (its DSL's `cuid()` emits one) are flattened;
 *  - a register a snippet writes but nothing declares (program_progress's
 *    %lclock; ptxas refused it) is declared as the probe's own.
 * What the loader decides is kept in p->notes. analyze_hook / CALLBACK
 * block_sched.py selects our built-in analysis; other scripts are Python we
 * do not run. Unknown keys are errors: a typo must not silently drop a
 * snippet. */
#include "engine/probe/probe_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/probe/verify.h"

static const char *const top_keys[] = { "author", "description", "analyze_hook", "dynamic", NULL };
static const char *const section_keys[] = { "position", "datamodel", "before", "after", "no_pred", "registers",
					    NULL };

/* Decimal number that fits the bound; -1 when it is not one. */
static long parse_count(const char *s, size_t len, long max)
{
	long v = 0;
	if (len == 0 || len > 9)
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v > max ? -1 : v;
}

/* "thread:8", "warp:16", "warp:16:4", "thread:16:count" (level:bytes per record[:records]). */
static int parse_datamodel(const struct probe_src *src, struct probe *p, const struct toml_node *dm,
			   const char *section)
{
	struct probe_map *m = &p->map;
	const char *s = dm->v.s;
	const char *c1 = strchr(s, ':');
	const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	if (!c1)
		goto bad;
	if ((size_t)(c1 - s) == 6 && strncmp(s, "thread", 6) == 0)
		m->level = PROBE_LEVEL_THREAD;
	else if ((size_t)(c1 - s) == 4 && strncmp(s, "warp", 4) == 0)
		m->level = PROBE_LEVEL_WARP;
	else
		goto bad;
	const char *bytes = c1 + 1;
	long rec = parse_count(bytes, c2 ? (size_t)(c2 - bytes) : strlen(bytes), PROBE_MAX_REC);
	int counted = c2 && strcmp(c2 + 1, "count") == 0;
	long cap = counted ? PROBE_NEUTRINO_DYNAMIC_CAP : c2 ? parse_count(c2 + 1, strlen(c2 + 1), PROBE_MAX_CAP) : 1;
	if (rec <= 0 || cap <= 0)
		goto bad;
	if (rec % 4)
		return probe_err(src, dm, "datamodel record size %ld is not a multiple of 4 (SAVE writes u32/u64)", rec);
	snprintf(m->name, sizeof m->name, "%s", section);
	m->rec_size = (uint32_t)rec;
	m->cap = (uint32_t)cap;
	m->n_fields = 0;
	if (counted)
		return probe_note(src, p, "map %s: records counted at run time (\"count\"): ntop keeps %d per %s and "
				  "counts the rest as dropped", section, PROBE_NEUTRINO_DYNAMIC_CAP,
				  m->level == PROBE_LEVEL_WARP ? "warp" : "thread");
	return 0;
bad:
	return probe_err(src, dm,
			 "datamodel must read \"thread:BYTES\" or \"warp:BYTES\", optionally \":CAP\" or \":count\" "
			 "(BYTES 4..%u, CAP 1..%u), not \"%s\"",
			 PROBE_MAX_REC, PROBE_MAX_CAP, s);
}

/* Blanks the braces of `{ }` blocks (those that open a statement), keeping
 * lines where they are: snippets are straight-line code, so a block only
 * scopes its .reg names, which probe registers do not need. */
static void flatten_blocks(char *s)
{
	int at_start = 1;
	for (char *q = s; *q; q++) {
		if (q[0] == '/' && q[1] == '/') {
			q += strcspn(q, "\n");
			if (!*q)
				break;
		} else if (q[0] == '/' && q[1] == '*') {
			char *end = strstr(q + 2, "*/");
			if (!end)
				break;
			q = end + 1;
		} else if (*q == ';') {
			at_start = 1;
		} else if (at_start && (*q == '{' || *q == '}')) {
			*q = ' ';
		} else if (*q != ' ' && *q != '\t' && *q != '\n' && *q != '\r') {
			at_start = 0;
		}
	}
}

static int is_transfer_opcode(const char *op, size_t len)
{
	static const char *const jumps[] = { "bra", "brx", "ret", "exit", "trap", NULL };
	size_t first = strcspn(op, ".:");
	if (first > len)
		first = len;
	for (const char *const *j = jumps; *j; j++)
		if (strlen(*j) == first && strncmp(op, *j, first) == 0)
			return 1;
	return 0;
}

/* The opcodes of a position (everything but "kernel") on hook h. */
static int add_opcodes(const struct probe_src *src, struct probe *p, struct probe_hook *h,
		       const struct toml_node *pos)
{
	for (const char *op = pos->v.s; *op;) {
		size_t len = strcspn(op, ":");
		if (!(len == 6 && strncmp(op, "kernel", 6) == 0)) {
			if (!probe_is_opcode(op, len, 0))
				return probe_err(src, pos,
						 "position must be \"kernel\" or opcodes joined by ':' such as "
						 "\"ld.global:st.global\", not \"%s\"",
						 pos->v.s);
			if (probe_hook_add_opcode(src, h, pos, op, len) < 0)
				return -1;
			if (h->after && is_transfer_opcode(op, len) &&
			    probe_note(src, p, "hook %s: nothing runs after '%.*s'; its `after` snippet runs just before "
				       "it", h->name, (int)len, op) < 0)
				return -1;
		}
		op += len;
		if (*op == ':' && !*++op)
			return probe_err(src, pos, "position \"%s\" ends with ':'", pos->v.s);
	}
	return 0;
}

/* Does the position name "kernel", and anything else? */
static void position_kinds(const char *pos, int *kernel, int *insn)
{
	*kernel = *insn = 0;
	for (const char *op = pos; *op;) {
		size_t len = strcspn(op, ":");
		if (len == 6 && strncmp(op, "kernel", 6) == 0)
			*kernel = 1;
		else if (len)
			*insn = 1;
		op += len + (op[len] == ':');
	}
}

int probe_neutrino_hooks(const struct probe_src *src, struct probe *p, const char *name,
			 const struct toml_node *pos, const struct toml_node *const snip[2], int no_pred)
{
	int kernel, insn;
	position_kinds(pos->v.s, &kernel, &insn);
	if (!pos->v.s[0])
		return probe_err(src, pos, "position is empty");
	for (int after = 0; after < 2; after++) {
		if (!snip[after])
			continue;
		for (int k = 0; k < 2; k++) {
			if (!(k == 0 ? kernel : insn))
				continue;
			enum probe_tp_kind kind = k == 1 ? PROBE_TP_INSN : after ? PROBE_TP_EXIT : PROBE_TP_ENTRY;
			struct probe_hook *h = probe_add_hook(src, p, name, kind, k == 1 ? after : 0, snip[after]);
			if (!h)
				return -1;
			flatten_blocks(h->snippet);
			if (k == 1) {
				h->anywhere = 1;
				h->no_pred = no_pred;
				h->after_jump_before = after;
				if (add_opcodes(src, p, h, pos) < 0)
					return -1;
			}
		}
	}
	return 0;
}

static int load_section(const struct probe_src *src, struct probe *p, const struct toml_node *sec)
{
	const struct toml_node *pos, *dm, *snip[2], *no_pred = toml_get(sec, "no_pred");
	if (!probe_is_ident(sec->key))
		return probe_err_key(src, sec, "probe section name '%s' must be an identifier ([A-Za-z_][A-Za-z0-9_]*, "
				     "under %d characters)", sec->key, PROBE_NAME_MAX);
	if (probe_check_keys(src, sec, section_keys, "a NEUTRINO probe section") < 0 ||
	    probe_get_string(src, sec, "position", 1, &pos) < 0 ||
	    probe_get_string(src, sec, "datamodel", 0, &dm) < 0 ||
	    probe_get_string(src, sec, "before", 0, &snip[0]) < 0 ||
	    probe_get_string(src, sec, "after", 0, &snip[1]) < 0)
		return -1;
	if (no_pred && no_pred->type != TOML_BOOL)
		return probe_err(src, no_pred, "no_pred must be true or false");
	if (!snip[0] && !snip[1])
		return probe_err(src, sec, "section [%s] has neither 'before' nor 'after'", sec->key);
	if (dm) {
		if (p->has_map)
			return probe_err(src, dm, "a second datamodel: ntop supports one map per probe ([%s] has one)",
					 p->map.name);
		if (parse_datamodel(src, p, dm, sec->key) < 0)
			return -1;
		p->has_map = 1;
	}
	return probe_neutrino_hooks(src, p, sec->key, pos, snip, no_pred && no_pred->v.b);
}

int probe_neutrino_analysis(const struct probe_src *src, struct probe *p, const struct toml_node *script)
{
	if (strcmp(script->v.s, "block_sched.py") && strcmp(script->v.s, "block_sched_callback.py"))
		return 0;
	return probe_set_string(src, &p->analysis, "block_sched", script);
}

static int load_top(const struct probe_src *src, const struct toml_node *root, struct probe *p)
{
	const struct toml_node *author, *desc, *hook, *dynamic = toml_get(root, "dynamic");
	if (probe_get_string(src, root, "author", 0, &author) < 0 ||
	    probe_get_string(src, root, "description", 0, &desc) < 0 ||
	    probe_get_string(src, root, "analyze_hook", 0, &hook) < 0)
		return -1;
	if (dynamic && dynamic->type != TOML_BOOL)
		return probe_err(src, dynamic, "dynamic must be true or false");
	if (desc && probe_set_string(src, &p->description, desc->v.s, desc) < 0)
		return -1;
	return hook ? probe_neutrino_analysis(src, p, hook) : 0;
}

int probe_neutrino_finish(const struct probe_src *src, const struct toml_node *root, struct probe *p)
{
	char *implicit = NULL;
	if (p->n_hooks == 0)
		return probe_err(src, root, "no probe sections: a NEUTRINO probe needs at least one [section] with "
				 "position and before/after (or write ntop_probe = 1 for ntop's schema)");
	if (verify_undeclared_writes(p, &implicit, src->cause) < 0)
		return -1;
	if (!implicit)
		return 0;
	for (const char *q = implicit; *q; q += strcspn(q, "\n") + 1) {
		const char *type = q + 5, *name = strchr(type, ' ') + 1; /* ".reg .b64 %x;" */
		if (probe_note(src, p, "%.*s is written but never declared: ntop declares it as the probe's own "
			       "%.*s register", (int)strcspn(name, ";"), name, (int)(name - 1 - type), type) < 0) {
			free(implicit);
			return -1;
		}
	}
	size_t have = p->decls ? strlen(p->decls) : 0;
	char *all = realloc(p->decls, have + strlen(implicit) + 1);
	if (!all) {
		free(implicit);
		return probe_err(src, root, "out of memory");
	}
	strcpy(all + have, implicit);
	p->decls = all;
	free(implicit);
	return 0;
}

int probe_load_neutrino(const struct probe_src *src, const struct toml_node *root, struct probe *p)
{
	for (int i = 0; i < root->n_items; i++) {
		const struct toml_node *n = root->items[i];
		if (n->type == TOML_TABLE) {
			if (load_section(src, p, n) < 0)
				return -1;
			continue;
		}
		if (n->type == TOML_ARRAY && n->aot)
			return probe_err_key(src, n, "[[%s]]: NEUTRINO probe sections are plain [tables]", n->key);
		if (probe_check_key(src, n, top_keys, "a NEUTRINO probe (probe sections are [tables])") < 0)
			return -1;
	}
	if (load_top(src, root, p) < 0)
		return -1;
	return probe_neutrino_finish(src, root, p);
}
