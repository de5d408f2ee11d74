/* NEUTRINO's probe schema (seed 003, open-neutrino tools/ directory):
 *
 *   author = "..."  description = "..."  analyze_hook = "block_sched.py"
 *   [section]                       one probe section per table
 *   position = "kernel" | "ld.global:st.global"   (colon-separated opcode prefixes)
 *   datamodel = "thread:BYTES" | "warp:BYTES" [":CAP"]   the probe's map (optional)
 *   before = "..."  after = "..."   snippets
 *
 * Mapping: position "kernel" turns before/after into entry/exit hooks; opcode
 * positions into instruction hooks (after = 1 for `after`). The map takes the
 * section's name. analyze_hook "block_sched.py" selects our built-in analysis;
 * other analysis scripts are Python we do not run, so they are ignored.
 * Unknown keys are errors: a typo must not silently drop a snippet. */
#include "engine/probe_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const top_keys[] = { "author", "description", "analyze_hook", NULL };
static const char *const section_keys[] = { "position", "datamodel", "before", "after", NULL };

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

/* "thread:8", "warp:16", "warp:16:4" (level:bytes per record[:records]). */
static int parse_datamodel(const struct probe_src *src, const struct toml_node *dm, const char *section,
			   struct probe_map *m)
{
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
	long cap = c2 ? parse_count(c2 + 1, strlen(c2 + 1), PROBE_MAX_CAP) : 1;
	if (rec <= 0 || cap <= 0)
		goto bad;
	if (rec % 4)
		return probe_err(src, dm, "datamodel record size %ld is not a multiple of 4 (SAVE writes u32/u64)", rec);
	snprintf(m->name, sizeof m->name, "%s", section);
	m->rec_size = (uint32_t)rec;
	m->cap = (uint32_t)cap;
	m->n_fields = 0;
	return 0;
bad:
	return probe_err(src, dm,
			 "datamodel must read \"thread:BYTES\" or \"warp:BYTES\", optionally \":CAP\" "
			 "(BYTES 4..%u, CAP 1..%u), not \"%s\"",
			 PROBE_MAX_REC, PROBE_MAX_CAP, s);
}

/* Adds the before/after hooks of one section at its position. */
static int add_section_hooks(const struct probe_src *src, struct probe *p, const struct toml_node *sec,
			     const struct toml_node *pos, const struct toml_node *snip[2])
{
	int is_kernel = strcmp(pos->v.s, "kernel") == 0;
	for (int after = 0; after < 2; after++) {
		if (!snip[after])
			continue;
		enum probe_tp_kind kind = !is_kernel ? PROBE_TP_INSN : after ? PROBE_TP_EXIT : PROBE_TP_ENTRY;
		struct probe_hook *h = probe_add_hook(src, p, sec->key, kind, is_kernel ? 0 : after, snip[after]);
		if (!h)
			return -1;
		for (const char *op = pos->v.s; !is_kernel && *op;) {
			size_t len = strcspn(op, ":");
			if (!probe_is_opcode(op, len, 0))
				return probe_err(src, pos,
						 "position must be \"kernel\" or opcodes joined by ':' such as "
						 "\"ld.global:st.global\", not \"%s\"",
						 pos->v.s);
			if (probe_hook_add_opcode(src, h, pos, op, len) < 0)
				return -1;
			op += len;
			if (*op == ':' && !*++op)
				return probe_err(src, pos, "position \"%s\" ends with ':'", pos->v.s);
		}
	}
	return 0;
}

static int load_section(const struct probe_src *src, struct probe *p, const struct toml_node *sec)
{
	const struct toml_node *pos, *dm, *snip[2];
	if (!probe_is_ident(sec->key))
		return probe_err_key(src, sec, "probe section name '%s' must be an identifier ([A-Za-z_][A-Za-z0-9_]*, "
				     "under %d characters)", sec->key, PROBE_NAME_MAX);
	if (probe_check_keys(src, sec, section_keys, "a NEUTRINO probe section") < 0 ||
	    probe_get_string(src, sec, "position", 1, &pos) < 0 ||
	    probe_get_string(src, sec, "datamodel", 0, &dm) < 0 ||
	    probe_get_string(src, sec, "before", 0, &snip[0]) < 0 ||
	    probe_get_string(src, sec, "after", 0, &snip[1]) < 0)
		return -1;
	if (!snip[0] && !snip[1])
		return probe_err(src, sec, "section [%s] has neither 'before' nor 'after'", sec->key);
	if (!pos->v.s[0])
		return probe_err(src, pos, "position is empty");
	if (dm) {
		if (p->has_map)
			return probe_err(src, dm, "a second datamodel: ntop supports one map per probe ([%s] has one)",
					 p->map.name);
		if (parse_datamodel(src, dm, sec->key, &p->map) < 0)
			return -1;
		p->has_map = 1;
	}
	return add_section_hooks(src, p, sec, pos, snip);
}

static int load_top_strings(const struct probe_src *src, const struct toml_node *root, struct probe *p)
{
	const struct toml_node *author, *desc, *hook;
	if (probe_get_string(src, root, "author", 0, &author) < 0 ||
	    probe_get_string(src, root, "description", 0, &desc) < 0 ||
	    probe_get_string(src, root, "analyze_hook", 0, &hook) < 0)
		return -1;
	if (desc && probe_set_string(src, &p->description, desc->v.s, desc) < 0)
		return -1;
	if (hook && strcmp(hook->v.s, "block_sched.py") == 0 &&
	    probe_set_string(src, &p->analysis, "block_sched", hook) < 0)
		return -1;
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
	if (load_top_strings(src, root, p) < 0)
		return -1;
	if (p->n_hooks == 0)
		return probe_err(src, root, "no probe sections: a NEUTRINO probe needs at least one [section] with "
				 "position and before/after (or write ntop_probe = 1 for ntop's schema)");
	return 0;
}
