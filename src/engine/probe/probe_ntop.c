/* ntop's probe schema (doc/probes.md has the full reference and an example):
 *
 *   ntop_probe = 1                  schema version (required, first)
 *   name = "block_sched"            identifier; also the map's name
 *   description = "..."             shown by `ntop probes`
 *   analysis = "block_sched"        built-in analysis for the results (optional)
 *   isa = "ptx" | "gcn"             what the snippets are written in (default ptx)
 *   [map]                           optional: where SAVE writes
 *   level = "warp" | "thread" | "block"
 *   cap = 1                         records per warp/thread/block (default 1)
 *   fields = ["start:u64", "elapsed:u32", ...]   record layout, in order;
 *                                   block maps may fold a field: "end:u64:max"
 *   [[hook]]                        one or more
 *   regions = ["mma=@tensor", ...]  regions (probe.h), for hooks at = "region"
 *   at = "entry" | "exit" | "region" | ["ld.global", "st.global"]
 *   when = "before" | "after"       opcode hooks (required there)
 *        | "begin" | "end"          region hooks: a warp enters / leaves a region
 *   asm = """..."""                 the snippet
 *
 * Everything is explicit and unknown keys are errors, so a typo cannot turn a
 * probe into one that silently records nothing. */
#include "engine/probe/probe_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"

static const char *const top_keys[] = { "ntop_probe", "name", "description", "analysis", "isa", "map", "hook",
					 "regions", NULL };
static const char *const map_keys[] = { "level", "cap", "fields", NULL };
static const char *const hook_keys[] = { "at", "when", "asm", NULL };

/* "name:u32[:max|:add]" -> fold; 0, or -1 after the error. The type's
 * colon is then the last one left in `name:type`. */
static int parse_fold(const struct probe_src *src, const struct toml_node *f, enum probe_level level,
		      struct probe_field *out, size_t *len)
{
	const char *s = f->v.s, *last = strrchr(s, ':');
	out->fold = PROBE_FOLD_NONE;
	*len = strlen(s);
	if (!last || last == strchr(s, ':'))
		return 0;
	if (strcmp(last + 1, "max") == 0)
		out->fold = PROBE_FOLD_MAX;
	else if (strcmp(last + 1, "add") == 0)
		out->fold = PROBE_FOLD_ADD;
	else
		return probe_err(src, f, "field \"%s\": '%s' is not a fold; a block map's field may end in :max or :add",
				 s, last + 1);
	if (level != PROBE_LEVEL_BLOCK)
		return probe_err(src, f, "field \"%s\" folds warps' values (:%s), which only a level = \"block\" map "
				 "does", s, last + 1);
	*len = (size_t)(last - s);
	return 0;
}

/* "name:u32" -> field; offsets are assigned by the caller. */
static int parse_field(const struct probe_src *src, const struct toml_node *f, enum probe_level level,
		       struct probe_field *out)
{
	if (f->type != TOML_STRING)
		return probe_err(src, f, "each field is a string \"name:u32\" or \"name:u64\", not a %s",
				 toml_type_name(f->type));
	size_t len;
	if (parse_fold(src, f, level, out, &len) < 0)
		return -1;
	char spec[PROBE_NAME_MAX + 8];
	if (len >= sizeof spec)
		return probe_err(src, f, "field \"%s\" must read \"name:u32\" or \"name:u64\"", f->v.s);
	memcpy(spec, f->v.s, len);
	spec[len] = 0;
	const char *colon = strrchr(spec, ':');
	size_t nl = colon ? (size_t)(colon - spec) : 0;
	if (!colon || nl == 0 || nl >= PROBE_NAME_MAX)
		return probe_err(src, f, "field \"%s\" must read \"name:u32\" or \"name:u64\"", f->v.s);
	memcpy(out->name, spec, nl);
	out->name[nl] = 0;
	if (!probe_is_ident(out->name))
		return probe_err(src, f, "field name '%s' must be an identifier ([A-Za-z_][A-Za-z0-9_]*)", out->name);
	if (strcmp(colon + 1, "u32") == 0)
		out->type = PROBE_U32;
	else if (strcmp(colon + 1, "u64") == 0)
		out->type = PROBE_U64;
	else
		return probe_err(src, f, "field '%s' has type '%s'; fields are u32 or u64", out->name, colon + 1);
	return 0;
}

/* The same fields, u64 first: the order we suggest when alignment fails. */
static char *aligned_order(const struct probe_map *m)
{
	struct strbuf sb;
	strbuf_init(&sb);
	strbuf_puts(&sb, "[");
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < m->n_fields; i++)
			if ((m->fields[i].type == PROBE_U64) == (pass == 0))
				strbuf_printf(&sb, "%s\"%s:%s\"", sb.len > 1 ? ", " : "", m->fields[i].name,
					      m->fields[i].type == PROBE_U64 ? "u64" : "u32");
	strbuf_puts(&sb, "]");
	return strbuf_finish(&sb, NULL);
}

static int layout_error(const struct probe_src *src, const struct toml_node *at, const struct probe_map *m,
			const char *what)
{
	char *order = aligned_order(m);
	probe_err(src, at, "%s; u64 fields must sit at 8-byte-aligned offsets: list them first, e.g. fields = %s",
		  what, order ? order : "[...]");
	free(order);
	return -1;
}

/* Fields -> offsets and record size; u64 fields must be 8-byte aligned in
 * every record, so the record size must then be a multiple of 8 too. */
static int load_fields(const struct probe_src *src, const struct toml_node *fields, struct probe_map *m)
{
	if (fields->type != TOML_ARRAY)
		return probe_err(src, fields, "fields must be an array such as [\"start:u64\", \"smid:u32\"]");
	if (fields->n_items == 0 || fields->n_items > PROBE_MAX_FIELDS)
		return probe_err(src, fields, "a map has 1 to %d fields, not %d", PROBE_MAX_FIELDS, fields->n_items);
	uint32_t off = 0;
	int misaligned = -1, has_u64 = 0;
	for (int i = 0; i < fields->n_items; i++) {
		struct probe_field *f = &m->fields[i];
		if (parse_field(src, fields->items[i], m->level, f) < 0)
			return -1;
		for (int j = 0; j < i; j++)
			if (strcmp(m->fields[j].name, f->name) == 0)
				return probe_err(src, fields->items[i], "field '%s' is listed twice", f->name);
		f->offset = off;
		off += (uint32_t)f->type;
		has_u64 |= f->type == PROBE_U64;
		if (f->type == PROBE_U64 && f->offset % 8 && misaligned < 0)
			misaligned = i;
		m->n_fields = i + 1;
	}
	m->rec_size = off;
	if (misaligned >= 0) {
		char what[128];
		snprintf(what, sizeof what, "field '%s' (u64) would start at byte %u of the record",
			 m->fields[misaligned].name, m->fields[misaligned].offset);
		return layout_error(src, fields->items[misaligned], m, what);
	}
	if (has_u64 && off % 8) {
		char what[160];
		snprintf(what, sizeof what, "the record is %u bytes, so the next record's u64 fields would be misaligned"
			 " (add a \"pad:u32\" field)", off);
		return layout_error(src, fields, m, what);
	}
	return 0;
}

static int load_map(const struct probe_src *src, const struct toml_node *t, struct probe *p)
{
	const struct toml_node *level, *cap = toml_get(t, "cap"), *fields = toml_get(t, "fields");
	if (t->type != TOML_TABLE)
		return probe_err(src, t, "map must be a table: [map]");
	if (probe_check_keys(src, t, map_keys, "[map]") < 0 || probe_get_string(src, t, "level", 1, &level) < 0)
		return -1;
	struct probe_map *m = &p->map;
	if (strcmp(level->v.s, "warp") == 0)
		m->level = PROBE_LEVEL_WARP;
	else if (strcmp(level->v.s, "thread") == 0)
		m->level = PROBE_LEVEL_THREAD;
	else if (strcmp(level->v.s, "block") == 0)
		m->level = PROBE_LEVEL_BLOCK;
	else
		return probe_err(src, level, "level must be \"warp\", \"thread\" or \"block\", not \"%s\"",
				 level->v.s);
	if (m->level == PROBE_LEVEL_BLOCK && p->isa == PROBE_ISA_GCN)
		return probe_err(src, level, "level = \"block\" is not supported for AMD probes (isa = \"gcn\") yet: "
				 "use \"warp\"");
	m->cap = 1;
	if (cap && (cap->type != TOML_INT || cap->v.i < 1 || cap->v.i > PROBE_MAX_CAP))
		return probe_err(src, cap, "cap must be an integer from 1 to %u (records per %s)", PROBE_MAX_CAP,
				 level->v.s);
	if (cap)
		m->cap = (uint32_t)cap->v.i;
	if (!fields)
		return probe_err(src, t, "[map] needs fields = [\"name:u32\" or \"name:u64\", ...]");
	if (load_fields(src, fields, m) < 0)
		return -1;
	snprintf(m->name, sizeof m->name, "%s", p->name);
	p->has_map = 1;
	return 0;
}

static int load_at(const struct probe_src *src, const struct toml_node *at, enum probe_tp_kind *kind)
{
	if (at->type == TOML_STRING && strcmp(at->v.s, "entry") == 0)
		*kind = PROBE_TP_ENTRY;
	else if (at->type == TOML_STRING && strcmp(at->v.s, "exit") == 0)
		*kind = PROBE_TP_EXIT;
	else if (at->type == TOML_STRING && strcmp(at->v.s, "region") == 0)
		*kind = PROBE_TP_REGION;
	else if (at->type == TOML_ARRAY && at->n_items > 0)
		*kind = PROBE_TP_INSN;
	else
		return probe_err(src, at, "at must be \"entry\", \"exit\", \"region\" or a list of opcodes such as "
				 "[\"ld.global\", \"st.global\"]");
	return 0;
}

/* AMD patterns may end in '$': the whole mnemonic, not a prefix. */
static int load_opcodes(const struct probe_src *src, const struct toml_node *at, struct probe_hook *h,
			enum probe_isa isa)
{
	for (int i = 0; i < at->n_items; i++) {
		const struct toml_node *op = at->items[i];
		size_t len = op->type == TOML_STRING ? strlen(op->v.s) : 0;
		if (isa == PROBE_ISA_GCN && len > 1 && op->v.s[len - 1] == '$')
			len--;
		if (op->type != TOML_STRING || !probe_is_opcode(op->v.s, len, 1))
			return probe_err(src, op, "opcodes are dotted PTX opcode prefixes such as \"ld.global\" or "
					 "\"cp.async.bulk\" (AMD: mnemonic prefixes such as \"global_load\", or \"s_barrier$\" for "
					 "that mnemonic alone)");
		if (probe_hook_add_opcode(src, h, op, op->v.s, strlen(op->v.s)) < 0)
			return -1;
	}
	return 0;
}

/* `when`: before/after an opcode hook's instruction, begin/end of a region
 * hook's region; *after = 1 for after and end. */
static int load_when(const struct probe_src *src, const struct toml_node *t, enum probe_tp_kind kind,
		     const struct toml_node *when, enum probe_isa isa, int *after)
{
	*after = 0;
	if ((kind == PROBE_TP_ENTRY || kind == PROBE_TP_EXIT) && when)
		return probe_err_key(src, when, "'when' applies to opcode and region hooks only (entry runs before the "
				     "kernel's first instruction, exit before each ret/exit)");
	if (kind == PROBE_TP_INSN && !when)
		return probe_err(src, t, "an opcode hook needs when = \"before\" or \"after\"");
	if (kind == PROBE_TP_REGION) {
		if (isa == PROBE_ISA_GCN)
			return probe_err(src, t, "region hooks are not supported for AMD probes (isa = \"gcn\") yet");
		if (!when || (strcmp(when->v.s, "begin") && strcmp(when->v.s, "end")))
			return probe_err(src, when ? when : t, "a region hook needs when = \"begin\" or \"end\"");
		*after = strcmp(when->v.s, "end") == 0;
		return 0;
	}
	if (when && strcmp(when->v.s, "after") == 0 && isa == PROBE_ISA_GCN)
		return probe_err(src, when, "AMD probes run before the traced instruction: when = \"before\"");
	if (when && strcmp(when->v.s, "after") == 0)
		*after = 1;
	else if (when && strcmp(when->v.s, "before") != 0)
		return probe_err(src, when, "when must be \"before\" or \"after\", not \"%s\"", when->v.s);
	return 0;
}

static int load_hook(const struct probe_src *src, const struct toml_node *t, int index, struct probe *p)
{
	const struct toml_node *at = toml_get(t, "at"), *when, *asm_;
	enum probe_tp_kind kind = PROBE_TP_ENTRY;
	int after = 0;
	if (t->type != TOML_TABLE)
		return probe_err(src, t, "each hook is a table: [[hook]]");
	if (probe_check_keys(src, t, hook_keys, "[[hook]]") < 0 || probe_get_string(src, t, "when", 0, &when) < 0 ||
	    probe_get_string(src, t, "asm", 1, &asm_) < 0)
		return -1;
	if (!at)
		return probe_err(src, t, "missing key 'at' (\"entry\", \"exit\", \"region\" or [\"opcode\", ...])");
	if (load_at(src, at, &kind) < 0)
		return -1;
	if (load_when(src, t, kind, when, p->isa, &after) < 0)
		return -1;
	if (strspn(asm_->v.s, " \t\r\n") == strlen(asm_->v.s))
		return probe_err(src, asm_, "asm is empty");
	char name[PROBE_NAME_MAX];
	snprintf(name, sizeof name, "hook%d", index + 1);
	struct probe_hook *h = probe_add_hook(src, p, name, kind, after, asm_);
	if (!h)
		return -1;
	return kind == PROBE_TP_INSN ? load_opcodes(src, at, h, p->isa) : 0;
}

static int load_header(const struct probe_src *src, const struct toml_node *root, struct probe *p)
{
	const struct toml_node *ver = toml_get(root, "ntop_probe"), *name, *desc, *analysis, *isa;
	if (ver->type != TOML_INT || ver->v.i != 1)
		return probe_err(src, ver, "ntop_probe must be 1 (the only schema version this ntop reads)");
	if (probe_check_keys(src, root, top_keys, "an ntop probe") < 0 ||
	    probe_get_string(src, root, "name", 1, &name) < 0 ||
	    probe_get_string(src, root, "description", 0, &desc) < 0 ||
	    probe_get_string(src, root, "analysis", 0, &analysis) < 0 ||
	    probe_get_string(src, root, "isa", 0, &isa) < 0)
		return -1;
	if (isa && strcmp(isa->v.s, "gcn") == 0)
		p->isa = PROBE_ISA_GCN;
	else if (isa && strcmp(isa->v.s, "ptx") != 0)
		return probe_err(src, isa, "isa must be \"ptx\" (NVIDIA) or \"gcn\" (AMD), not \"%s\"", isa->v.s);
	if (!probe_is_ident(name->v.s))
		return probe_err(src, name, "name must be an identifier ([A-Za-z_][A-Za-z0-9_]*, under %d characters)",
				 PROBE_NAME_MAX);
	snprintf(p->name, sizeof p->name, "%s", name->v.s);
	if (analysis && !probe_is_ident(analysis->v.s))
		return probe_err(src, analysis, "analysis names a built-in analysis such as \"block_sched\"");
	if (desc && probe_set_string(src, &p->description, desc->v.s, desc) < 0)
		return -1;
	if (analysis && probe_set_string(src, &p->analysis, analysis->v.s, analysis) < 0)
		return -1;
	return 0;
}

/* regions = ["NAME=SPEC", ...]: each checked where it was written. */
static int load_regions(const struct probe_src *src, const struct toml_node *t, struct probe *p)
{
	if (t->type != TOML_ARRAY || t->n_items == 0)
		return probe_err(src, t, "regions is a list of \"NAME=SPEC\" strings, e.g. [\"mma=@tensor\", "
				 "\"load=attn.py:40-55\"]");
	if (t->n_items > PROBE_MAX_REGIONS)
		return probe_err(src, t, "%d regions: at most %d", t->n_items, PROBE_MAX_REGIONS);
	const char *specs[PROBE_MAX_REGIONS];
	for (int i = 0; i < t->n_items; i++) {
		const struct toml_node *r = t->items[i];
		struct probe_region one;
		char why[PROBE_REGION_SPEC_MAX + 128];
		if (r->type != TOML_STRING)
			return probe_err(src, r, "each region is a string \"NAME=SPEC\"");
		if (probe_region_parse(r->v.s, &one, why, sizeof why) < 0)
			return probe_err(src, r, "region %s", why);
		specs[i] = r->v.s;
	}
	char *cause = NULL;
	if (probe_set_regions(p, specs, t->n_items, &cause) < 0) {
		probe_err(src, t, "%s", cause ? cause : "out of memory");
		free(cause);
		return -1;
	}
	return 0;
}

/* Region hooks and regions come together. */
static int check_regions(const struct probe_src *src, const struct toml_node *root, const struct probe *p)
{
	int hooks = 0;
	for (int i = 0; i < p->n_hooks; i++)
		hooks += p->hooks[i].kind == PROBE_TP_REGION;
	if (hooks && !p->n_regions)
		return probe_err(src, root, "hooks at = \"region\" need regions = [\"NAME=SPEC\", ...] (or ntop record -r)");
	if (!hooks && p->n_regions)
		return probe_err(src, toml_get(root, "regions"), "regions are recorded by hooks at = \"region\", and "
				 "this probe has none");
	return 0;
}

int probe_load_ntop(const struct probe_src *src, const struct toml_node *root, struct probe *p)
{
	if (load_header(src, root, p) < 0)
		return -1;
	const struct toml_node *regions = toml_get(root, "regions");
	if (regions && load_regions(src, regions, p) < 0)
		return -1;
	const struct toml_node *map = toml_get(root, "map"), *hooks = toml_get(root, "hook");
	if (map && load_map(src, map, p) < 0)
		return -1;
	if (!hooks)
		return probe_err(src, root, "no hooks: add at least one [[hook]] with at and asm");
	if (hooks->type != TOML_ARRAY || hooks->n_items == 0)
		return probe_err_key(src, hooks, "hook must be an array of tables: write each as [[hook]]");
	for (int i = 0; i < hooks->n_items; i++)
		if (load_hook(src, hooks->items[i], i, p) < 0)
			return -1;
	return check_regions(src, root, p);
}
