/* The newer of NEUTRINO's probe layouts: what its Python DSL compiler emits
 * (neutrino/language, `toml.dumps` of neutrino.common.dump):
 *
 *   regs = 5                        probe registers %NR0 .. %NR5 (u64)
 *   CALLBACK = "block_sched_callback.py"   analysis script (also `callback`)
 *   dynamic = true                  a map is sized at run time
 *   [probe.NAME]                    one per probe (the compiler merges probes
 *   level = "warp" | "thread"        of one level and position)
 *   pos = "kernel" | "ld.global:st.global"   (also `position`)
 *   before = "..."  after = "..."
 *   [map.NAME]                      the map
 *   level = "warp"  type = "array"  size = 16 (bytes per record)
 *   cap = 1 | "dynamic"
 *   [map.NAME.regs]                 the record's fields, in SAVE's order
 *   start = ["u64", "None"]         [type, initial value (unused)]
 *
 * Snippets save with `SAVE [ NAME ] { %NR0, %NR1, ADDR }`, often without the
 * final ';'. NEUTRINO's engine stores the u64 fields first, then the u32
 * fields (each value converted with cvt.u32.u64), so the record is laid out
 * that way here too and the statement is rewritten into SAVE.u64/SAVE.u32.
 * The %NR registers start at 0 (the DSL declares them `= 0`; NEUTRINO
 * leaves them undefined). Everything else means what probe_neutrino.c says
 * (substring positions, no_pred, run-time sized maps, blocks). */
#include "engine/probe/probe_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"

#define DSL_MAX_REGS 256 /* %NR registers: the compiler numbers one per temporary */

static const char *const top_keys[] = { "regs", "CALLBACK", "callback", "dynamic", "probe", "map", "author",
					"description", NULL };
static const char *const probe_keys[] = { "level", "pos", "position", "before", "after", "no_pred", "register",
					  NULL };
static const char *const map_keys[] = { "level", "type", "size", "cap", "regs", NULL };

/* The map as SAVE [ NAME ] names its values: value i goes to field_of[i]. */
struct dsl_map {
	int n;
	int field_of[PROBE_MAX_FIELDS];
	int n_u32;
};

int probe_neutrino_dsl_is(const struct toml_node *root)
{
	const struct toml_node *pr = toml_get(root, "probe"), *map = toml_get(root, "map");
	return (pr && pr->type == TOML_TABLE) || (map && map->type == TOML_TABLE) || toml_get(root, "regs");
}

/* An integer written as one or as a decimal string (its README writes "16"). */
static int get_count(const struct probe_src *src, const struct toml_node *t, const char *key, long max, long *out)
{
	const struct toml_node *n = toml_get(t, key);
	char *end = NULL;
	if (!n)
		return probe_err(src, t, "missing key '%s'", key);
	if (n->type == TOML_INT)
		*out = n->v.i > max ? -1 : (long)n->v.i;
	else if (n->type == TOML_STRING)
		*out = strtol(n->v.s, &end, 10);
	if ((n->type != TOML_INT && n->type != TOML_STRING) || (end && (*end || end == n->v.s)) || *out < 0 ||
	    *out > max)
		return probe_err(src, n, "%s must be a number from 0 to %ld", key, max);
	return 0;
}

static int level_of(const struct probe_src *src, const struct toml_node *t, enum probe_level *out)
{
	const struct toml_node *level;
	if (probe_get_string(src, t, "level", 1, &level) < 0)
		return -1;
	if (strcmp(level->v.s, "warp") == 0)
		*out = PROBE_LEVEL_WARP;
	else if (strcmp(level->v.s, "thread") == 0)
		*out = PROBE_LEVEL_THREAD;
	else
		return probe_err(src, level, "level must be \"warp\" or \"thread\", not \"%s\"", level->v.s);
	return 0;
}

/* regs = N: %NR0 .. %NRN, set to 0 by a first entry hook. */
static int load_regs(const struct probe_src *src, const struct toml_node *root, struct probe *p)
{
	const struct toml_node *regs = toml_get(root, "regs");
	long n;
	if (!regs)
		return 0;
	if (get_count(src, root, "regs", DSL_MAX_REGS, &n) < 0)
		return -1;
	struct strbuf sb;
	strbuf_init(&sb);
	for (long i = 0; i <= n; i++)
		strbuf_printf(&sb, "mov.u64 %%NR%ld, 0;\n", i);
	char *init = strbuf_finish(&sb, NULL);
	char decl[64];
	snprintf(decl, sizeof decl, ".reg .b64 %%NR<%ld>;\n", n + 1);
	p->decls = strdup(decl);
	struct probe_hook *h = init && p->decls ? probe_add_hook_text(src, p, "regs", PROBE_TP_ENTRY, 0, init,
								     regs->line, 1, regs)
						: NULL;
	free(init);
	return h ? 0 : probe_err(src, regs, "out of memory");
}

/* [map.NAME.regs]: fields in SAVE's order, laid out u64 first. */
static int load_fields(const struct probe_src *src, struct probe *p, const struct toml_node *map,
		       struct dsl_map *dm)
{
	struct probe_map *m = &p->map;
	const struct toml_node *regs = toml_get(map, "regs");
	if (!regs || regs->type != TOML_TABLE || regs->n_items == 0 || regs->n_items > PROBE_MAX_FIELDS)
		return probe_err(src, regs ? regs : map, "[map.%s] needs a regs table of 1 to %d fields: "
				 "name = [\"u64\", init]", map->key, PROBE_MAX_FIELDS);
	uint32_t off = 0;
	int reordered = 0;
	dm->n = regs->n_items;
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < regs->n_items; i++) {
			const struct toml_node *f = regs->items[i];
			const struct toml_node *t = f->type == TOML_ARRAY && f->n_items > 0 ? f->items[0] : f;
			int u64 = t->type == TOML_STRING && strcmp(t->v.s, "u64") == 0;
			if (t->type != TOML_STRING || (!u64 && strcmp(t->v.s, "u32")))
				return probe_err(src, f, "field '%s' must be [\"u32\", init] or [\"u64\", init]", f->key);
			if (u64 != (pass == 0))
				continue;
			if (!probe_is_ident(f->key))
				return probe_err_key(src, f, "field name '%s' must be an identifier", f->key);
			struct probe_field *pf = &m->fields[m->n_fields];
			snprintf(pf->name, sizeof pf->name, "%s", f->key);
			pf->type = u64 ? PROBE_U64 : PROBE_U32;
			pf->offset = off;
			off += (uint32_t)pf->type;
			reordered |= m->n_fields != i;
			dm->field_of[i] = m->n_fields++;
			dm->n_u32 += !u64;
		}
	m->rec_size = off;
	if (dm->n_u32 % 2)
		return probe_err(src, regs, "%d u32 fields: NEUTRINO stores u32 values in pairs, make one of them u64",
				 dm->n_u32);
	if (reordered && probe_note(src, p, "map %s: u64 fields stored first, as NEUTRINO does", m->name) < 0)
		return -1;
	return 0;
}

static int load_map(const struct probe_src *src, const struct toml_node *root, struct probe *p,
		    const struct toml_node *maps, struct dsl_map *dm)
{
	struct probe_map *m = &p->map;
	const struct toml_node *t = maps->items[0], *type, *cap, *dyn = toml_get(root, "dynamic");
	long size, n_cap = 1;
	if (maps->n_items != 1)
		return probe_err_key(src, maps->items[1], "a second map: ntop supports one map per probe ([map.%s] "
				     "has one)", t->key);
	if (t->type != TOML_TABLE || !probe_is_ident(t->key))
		return probe_err_key(src, t, "maps are tables [map.NAME] with NAME an identifier");
	if (probe_check_keys(src, t, map_keys, "a NEUTRINO map") < 0 || level_of(src, t, &m->level) < 0 ||
	    probe_get_string(src, t, "type", 1, &type) < 0 || get_count(src, t, "size", PROBE_MAX_REC, &size) < 0)
		return -1;
	if (strcmp(type->v.s, "array"))
		return probe_err(src, type, "type must be \"array\" (NEUTRINO's only map type)");
	if (dyn && dyn->type != TOML_BOOL)
		return probe_err(src, dyn, "dynamic must be true or false");
	cap = toml_get(t, "cap");
	int dynamic = (cap && cap->type == TOML_STRING && strcmp(cap->v.s, "dynamic") == 0) || (dyn && dyn->v.b);
	if (!dynamic && cap && get_count(src, t, "cap", PROBE_MAX_CAP, &n_cap) < 0)
		return -1;
	snprintf(m->name, sizeof m->name, "%s", t->key);
	m->cap = dynamic ? PROBE_NEUTRINO_DYNAMIC_CAP : (uint32_t)(n_cap ? n_cap : 1);
	if (load_fields(src, p, t, dm) < 0)
		return -1;
	if (m->rec_size > (uint32_t)size)
		return probe_err(src, toml_get(t, "size"), "size %ld is smaller than the fields (%u bytes)", size,
				 m->rec_size);
	p->has_map = 1;
	if (dm->n_u32) {
		char decl[PROBE_NAME_MAX + 48];
		snprintf(decl, sizeof decl, ".reg .b32 %%%s_u32_<%d>;\n", m->name, dm->n_u32 + 1);
		size_t have = p->decls ? strlen(p->decls) : 0;
		char *all = realloc(p->decls, have + strlen(decl) + 1);
		if (!all)
			return probe_err(src, t, "out of memory");
		strcpy(all + have, decl);
		p->decls = all;
	}
	if (dynamic)
		return probe_note(src, p, "map %s: sized at run time (\"dynamic\"): ntop keeps %d records per %s and "
				  "counts the rest as dropped", m->name, PROBE_NEUTRINO_DYNAMIC_CAP,
				  m->level == PROBE_LEVEL_WARP ? "warp" : "thread");
	return 0;
}

/* "SAVE [ NAME ] { a, b, c }" at q (up to its '}' and a ';' after it) into sb. */
static int save_rewrite(const struct probe_src *src, const struct probe *p, const struct dsl_map *dm,
			const struct toml_node *at, const char *q, struct strbuf *sb, size_t *used)
{
	const char *open = strchr(q, '['), *close = open ? strchr(open, ']') : NULL;
	const char *lb = close ? strchr(close, '{') : NULL, *rb = lb ? strchr(lb, '}') : NULL;
	if (!rb)
		return probe_err(src, at, "SAVE must read SAVE [ MAP ] { values }");
	const char *name = open + 1;
	while (*name == ' ')
		name++;
	size_t nl = (size_t)(close - name);
	while (nl && name[nl - 1] == ' ')
		nl--;
	if (!p->has_map || nl != strlen(p->map.name) || strncmp(name, p->map.name, nl))
		return probe_err(src, at, "SAVE [ %.*s ]: no such map%s%s%s", (int)nl, name,
				 p->has_map ? " (the map is " : "", p->has_map ? p->map.name : "", p->has_map ? ")" : "");
	char *vals[PROBE_MAX_FIELDS];
	int n = 0;
	for (const char *v = lb + 1; v < rb && n <= dm->n; n++) {
		size_t len = strcspn(v, ",}");
		const char *s = v;
		while (s < v + len && isspace((unsigned char)*s))
			s++;
		size_t sl = (size_t)(v + len - s);
		while (sl && isspace((unsigned char)s[sl - 1]))
			sl--;
		if (n < dm->n)
			vals[n] = strndup(s, sl);
		v += len + 1;
	}
	int oom = 0;
	for (int i = 0; i < n && i < dm->n; i++)
		oom |= !vals[i];
	if (n != dm->n || oom) {
		for (int i = 0; i < n && i < dm->n; i++)
			free(vals[i]);
		if (oom)
			return probe_err(src, at, "out of memory");
		return probe_err(src, at, "SAVE [ %s ] saves %d values; the map has %d fields", p->map.name, n, dm->n);
	}
	struct strbuf u64s, u32s;
	strbuf_init(&u64s);
	strbuf_init(&u32s);
	for (int i = 0, k = 1; i < n; i++) {
		int u64 = p->map.fields[dm->field_of[i]].type == PROBE_U64;
		if (!u64)
			strbuf_printf(sb, "cvt.u32.u64 %%%s_u32_%d, %s; ", p->map.name, k, vals[i]);
		if (u64)
			strbuf_printf(&u64s, "%s%s", u64s.len ? ", " : "", vals[i]);
		else
			strbuf_printf(&u32s, "%s%%%s_u32_%d", u32s.len ? ", " : "", p->map.name, k++);
		free(vals[i]);
	}
	if (u64s.len)
		strbuf_printf(sb, "SAVE.u64 {%s}; ", u64s.data);
	if (u32s.len)
		strbuf_printf(sb, "SAVE.u32 {%s};", u32s.data);
	strbuf_done(&u64s);
	strbuf_done(&u32s);
	for (const char *c = q; c <= rb; c++) /* keep the statement's line breaks */
		if (*c == '\n')
			strbuf_puts(sb, "\n");
	const char *end = rb + 1;
	end += strspn(end, " \t");
	*used = (size_t)(end + (*end == ';') - q);
	return 0;
}

/* Rewrites every SAVE [ NAME ] statement of h's snippet. */
static int hook_saves(const struct probe_src *src, const struct probe *p, const struct dsl_map *dm,
		      struct probe_hook *h, const struct toml_node *at)
{
	struct strbuf sb;
	strbuf_init(&sb);
	const char *s = h->snippet;
	for (const char *q = s; *q;) {
		const char *k = q + strspn(q, " \t\r\n");
		size_t used = 0;
		if (strncmp(k, "SAVE", 4) == 0 && k[4 + strspn(k + 4, " ")] == '[') {
			strbuf_append(&sb, q, (size_t)(k - q));
			if (save_rewrite(src, p, dm, at, k, &sb, &used) < 0) {
				strbuf_done(&sb);
				return -1;
			}
			q = k + used;
			continue;
		}
		used = strcspn(k, ";");
		used += k[used] == ';';
		strbuf_append(&sb, q, (size_t)(k + used - q));
		q = k + used;
	}
	char *text = strbuf_finish(&sb, NULL);
	if (!text)
		return probe_err(src, at, "out of memory");
	free(h->snippet);
	h->snippet = text;
	return 0;
}

static int load_probe(const struct probe_src *src, struct probe *p, const struct toml_node *t,
		      const struct dsl_map *dm)
{
	const struct toml_node *pos, *alias, *snip[2], *no_pred = toml_get(t, "no_pred");
	enum probe_level level = PROBE_LEVEL_THREAD; /* set by level_of; gcc -O2 cannot tell */
	if (t->type != TOML_TABLE || !probe_is_ident(t->key))
		return probe_err_key(src, t, "probes are tables [probe.NAME] with NAME an identifier");
	if (probe_check_keys(src, t, probe_keys, "a NEUTRINO probe") < 0 || level_of(src, t, &level) < 0 ||
	    probe_get_string(src, t, "pos", 0, &pos) < 0 || probe_get_string(src, t, "position", 0, &alias) < 0 ||
	    probe_get_string(src, t, "before", 0, &snip[0]) < 0 || probe_get_string(src, t, "after", 0, &snip[1]) < 0)
		return -1;
	if (!pos && !(pos = alias))
		return probe_err(src, t, "[probe.%s] needs pos (\"kernel\" or opcodes joined by ':')", t->key);
	if (!snip[0] && !snip[1])
		return probe_err(src, t, "[probe.%s] has neither 'before' nor 'after'", t->key);
	if (no_pred && no_pred->type != TOML_BOOL)
		return probe_err(src, no_pred, "no_pred must be true or false");
	if (p->has_map && level != p->map.level)
		return probe_err(src, toml_get(t, "level"), "level \"%s\" differs from map %s's: ntop keeps one map "
				 "per probe, and its level decides who stores", level == PROBE_LEVEL_WARP ? "warp" :
				 "thread", p->map.name);
	int first = p->n_hooks;
	if (probe_neutrino_hooks(src, p, t->key, pos, snip, no_pred && no_pred->v.b) < 0)
		return -1;
	for (int i = first; i < p->n_hooks; i++)
		if (hook_saves(src, p, dm, &p->hooks[i], snip[p->hooks[i].kind == PROBE_TP_EXIT ||
							     p->hooks[i].after]) < 0)
			return -1;
	return 0;
}

int probe_load_neutrino_dsl(const struct probe_src *src, const struct toml_node *root, struct probe *p)
{
	const struct toml_node *probes = toml_get(root, "probe"), *maps = toml_get(root, "map"), *cb, *cb2, *desc;
	struct dsl_map dm;
	memset(&dm, 0, sizeof dm);
	if (probe_check_keys(src, root, top_keys, "a NEUTRINO probe ([probe.NAME], [map.NAME], regs)") < 0 ||
	    probe_get_string(src, root, "CALLBACK", 0, &cb) < 0 || probe_get_string(src, root, "callback", 0, &cb2) < 0 ||
	    probe_get_string(src, root, "description", 0, &desc) < 0 || load_regs(src, root, p) < 0)
		return -1;
	if (maps && (maps->type != TOML_TABLE || maps->n_items == 0))
		return probe_err_key(src, maps, "map holds the map as a table [map.NAME]");
	if (maps && load_map(src, root, p, maps, &dm) < 0)
		return -1;
	if (!probes || probes->type != TOML_TABLE || probes->n_items == 0)
		return probe_err(src, probes ? probes : root, "no probes: add a [probe.NAME] with level, pos and "
				 "before/after");
	for (int i = 0; i < probes->n_items; i++)
		if (load_probe(src, p, probes->items[i], &dm) < 0)
			return -1;
	if (desc && probe_set_string(src, &p->description, desc->v.s, desc) < 0)
		return -1;
	if ((cb || (cb = cb2)) && probe_neutrino_analysis(src, p, cb) < 0)
		return -1;
	return probe_neutrino_finish(src, root, p);
}
