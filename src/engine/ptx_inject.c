/* The instrumenter (see ptx_inject.h). One pass over the kernel body builds a
 * new statement array: original statements are moved over unchanged, and the
 * code we add goes in as extra statements (kind PTX_DIRECTIVE, one per
 * inserted chunk of lines, insn fields empty) so ptx_emit writes them from
 * their text like any other statement.
 *
 * Registers: ours are %ntop_*; each probe's own registers (every `.reg` in
 * its snippets) are renamed to %ntop_p<k>_<name> and declared once in the
 * prologue, so a probe can never clash with the kernel, with another probe,
 * or with itself when its snippet is inserted at many sites, and a register
 * set at entry is still there at exit (block_sched's start clock).
 *
 * Cost (the probed kernel should run as fast as the original): nothing is
 * computed at entry but the entry snippets, so an entry clock reads first.
 * Map addresses are computed where they are stored (exit sites, SAVEs),
 * once per site: only thread_linear differs within a block, the rest is
 * block-uniform and ptxas keeps it in uniform registers. Entry and exit
 * snippets run exactly once per thread in a fixed order, so a map whose
 * SAVEs all sit there has its cursor known here: no cursor register, the
 * count is a constant, a record past cap is dropped at instrumentation
 * time. Only SAVEs at instruction tracepoints need a live cursor and record
 * address. A SAVE goes out in as few (vector) stores as alignment allows.
 *
 * Warp maps store only from lane 0 (thread_linear % 32 == 0): lane 0 exists
 * in every warp, even the partial last warp of a block whose size is not a
 * multiple of 32, and reaches exactly one kernel exit, so a warp-level
 * entry/exit probe writes exactly one record per warp. At exits the warp
 * maps' snippets and stores sit behind one branch that only lane 0 takes
 * (our own code: the kernel's reconvergence is untouched; ptxas turns it
 * into an early EXIT of the other lanes). Instruction tracepoints on warp
 * maps record what lane 0 executes. Every lane keeps its own cursor; only
 * lane 0's reaches memory. */
#include "engine/ptx_inject.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"
#include "common/strbuf.h"

#define INJECT_SAVE_MAX 32 /* values in one SAVE statement */

/* ---- snippets, prepared once per probe ---------------------------------- */

struct snip_save {
	int size;        /* 4 or 8 bytes per value */
	int n_vals;
	char *vals[INJECT_SAVE_MAX];
	uint32_t off;    /* bytes from the snippet's record start */
};

struct snip_line {
	char *text;             /* renamed instruction, without ';' (NULL for SAVE) */
	struct snip_save *save;
	int first_save, last_save;
};

struct snip {
	struct snip_line *lines;
	int n;
	uint32_t save_bytes; /* S: bytes all SAVEs of one execution write */
	int uses_addr;
};

struct rename {
	char *name;  /* as declared, with '%' and without "<N>" */
	int range;   /* declared as name<N>: uses are name followed by digits */
};

struct iprobe {
	const struct probe *p;
	int index;          /* in probes[] */
	int map;            /* map number, -1 without a map */
	struct rename *ren;
	int n_ren;
	struct snip *snips; /* one per hook */
};

/* ---- kernel registers --------------------------------------------------- */

struct kreg {
	const char *name; /* points into the kernel's .reg text (not terminated) */
	size_t len;
	int range;
	int bits;
};

/* Per map: how its cursor (bytes the unit tried to save so far) is known.
 * Entry and exit snippets run exactly once per thread, in a fixed order, so
 * a map whose SAVEs all sit in them has a cursor known at instrumentation
 * time everywhere (no register). A SAVE at an instruction tracepoint makes
 * the cursor dynamic: %ntop_cur<i> and the unit's record address
 * %ntop_rec<i> then live from the entry to the exits. */
struct imap {
	int pr;              /* iprobe index */
	int warp;            /* warp map: lane 0 stores */
	int dynamic;
	uint32_t cap_bytes;  /* cap * rec_size */
	uint32_t entry_bytes; /* cursor after the entry snippets (saturated) */
};

struct inj {
	struct ptx_func *kernel;
	struct iprobe *pr;
	int n_pr;
	int n_maps;
	struct imap maps[ENGINE_MAX_MAPS];
	int any_warp, any_dyn_warp;
	int has_exit_work;
	struct strbuf decls;             /* renamed probe .reg lines */
	struct kreg *regs;
	int n_regs;
	struct ptx_stmt *out;
	unsigned char *mine; /* out[i] was made here (freed on failure) */
	int n_out, cap_out;
	int skip_n, lane_n;  /* label counters */
	int sites;
	/* exit code, rendered once and reused at every exit: the part every
	 * thread runs, and the part only lane 0 of each warp runs (warp maps) */
	char *exit_all, *exit_lane0;
	char **cause;
};

static int is_ident(int c)
{
	return isalnum(c) || c == '_' || c == '$';
}

static const char *skip_ws(const char *s)
{
	while (*s && isspace((unsigned char)*s))
		s++;
	return s;
}

static char *dup_trim(const char *s, size_t n)
{
	while (n && isspace((unsigned char)*s)) {
		s++;
		n--;
	}
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	char *r = malloc(n + 1);
	if (r) {
		memcpy(r, s, n);
		r[n] = 0;
	}
	return r;
}

/* Copy of a snippet with // and block comments blanked out. */
static char *strip_comments(const char *s)
{
	size_t n = strlen(s);
	char *r = malloc(n + 1);
	if (!r)
		return NULL;
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		if (s[i] == '/' && s[i + 1] == '/') {
			while (i < n && s[i] != '\n')
				i++;
		} else if (s[i] == '/' && s[i + 1] == '*') {
			i += 2;
			while (i < n && !(s[i] == '*' && s[i + 1] == '/'))
				i++;
			i = i < n ? i + 2 : n;
			r[o++] = ' ';
		} else {
			r[o++] = s[i++];
		}
	}
	r[o] = 0;
	return r;
}

/* ---- probe register renaming ------------------------------------------- */

static int rename_add(struct iprobe *ip, const char *name, size_t len, int range)
{
	for (int i = 0; i < ip->n_ren; i++)
		if (strlen(ip->ren[i].name) == len && !memcmp(ip->ren[i].name, name, len))
			return 0; /* declared in two snippets: one register */
	struct rename *r = realloc(ip->ren, (size_t)(ip->n_ren + 1) * sizeof *r);
	if (!r)
		return -1;
	ip->ren = r;
	r[ip->n_ren].name = dup_trim(name, len);
	r[ip->n_ren].range = range;
	if (!r[ip->n_ren].name)
		return -1;
	ip->n_ren++;
	return 1;
}

/* Is %token (len bytes, with '%') one of the probe's registers? */
static int rename_match(const struct iprobe *ip, const char *tok, size_t len)
{
	for (int i = 0; i < ip->n_ren; i++) {
		size_t n = strlen(ip->ren[i].name);
		if (len < n || memcmp(tok, ip->ren[i].name, n))
			continue;
		if (len == n) /* a range's bare name appears only in its declaration */
			return 1;
		if (len > n && ip->ren[i].range) {
			size_t k = n;
			while (k < len && isdigit((unsigned char)tok[k]))
				k++;
			if (k == len)
				return 1;
		}
	}
	return 0;
}

/* Appends text with the probe's registers renamed. */
static void rename_text(struct strbuf *sb, const struct iprobe *ip, const char *s)
{
	while (*s) {
		if (*s == '%' && (s[1] == '_' || isalpha((unsigned char)s[1]) || s[1] == '$')) {
			size_t n = 1;
			while (is_ident((unsigned char)s[n]))
				n++;
			if (rename_match(ip, s, n)) {
				strbuf_printf(sb, "%%ntop_p%d_", ip->index);
				strbuf_append(sb, s + 1, n - 1);
			} else {
				strbuf_append(sb, s, n);
			}
			s += n;
		} else {
			strbuf_append(sb, s, 1);
			s++;
		}
	}
}

/* ".reg .b32 %a, %b<4>" (without ';'): records names, appends renamed
 * declarations of names not seen before to inj->decls. */
static int decl_collect(struct inj *in, struct iprobe *ip, const char *stmt)
{
	const char *p = stmt + 4;
	const char *names = strchr(p, '%');
	if (!names)
		return cause_set(in->cause, "probe '%s': register declaration without a name: %s",
				 ip->p->name, stmt);
	char *type = dup_trim(p, (size_t)(names - p));
	if (!type)
		return -1;
	for (const char *q = names; *q;) {
		q = skip_ws(q);
		size_t n = strcspn(q, ",");
		size_t nl = strcspn(q, "<,");
		while (nl && isspace((unsigned char)q[nl - 1]))
			nl--;
		int range = nl < n && q[nl] == '<';
		if (nl < 2 || q[0] != '%') {
			free(type);
			return cause_set(in->cause, "probe '%s': bad register declaration: %s",
					 ip->p->name, stmt);
		}
		int fresh = rename_add(ip, q, nl, range);
		if (fresh < 0) {
			free(type);
			return -1;
		}
		if (fresh) {
			char *one = dup_trim(q, n);
			strbuf_printf(&in->decls, ".reg %s ", type);
			if (one)
				rename_text(&in->decls, ip, one);
			strbuf_puts(&in->decls, ";\n");
			free(one);
		}
		q += n;
		if (*q == ',')
			q++;
	}
	free(type);
	return 0;
}

/* Calls fn on each ';'-terminated statement of a comment-free snippet. */
typedef int (*stmt_fn)(struct inj *in, struct iprobe *ip, struct snip *sn, const char *stmt);

static int for_each_stmt(struct inj *in, struct iprobe *ip, struct snip *sn, const char *text,
			 stmt_fn fn)
{
	const char *s = text;
	while (*s) {
		size_t n = strcspn(s, ";");
		char *stmt = dup_trim(s, n);
		if (!stmt)
			return cause_set(in->cause, "out of memory");
		int rc = *stmt ? fn(in, ip, sn, stmt) : 0;
		free(stmt);
		if (rc < 0)
			return -1;
		s += n;
		if (*s == ';')
			s++;
	}
	return 0;
}

static int decl_stmt(struct inj *in, struct iprobe *ip, struct snip *sn, const char *stmt)
{
	(void)sn;
	if (strncmp(stmt, ".reg", 4) == 0 && isspace((unsigned char)stmt[4]))
		return decl_collect(in, ip, stmt);
	return 0;
}

/* "SAVE.u32 {a, b}" -> a snip_save (values renamed). */
static int save_parse(struct inj *in, struct iprobe *ip, struct snip *sn, const char *stmt,
		      struct snip_save *sv)
{
	const char *p = stmt + 4;
	if (!strncmp(p, ".u32", 4) || !strncmp(p, ".b32", 4))
		sv->size = 4;
	else if (!strncmp(p, ".u64", 4) || !strncmp(p, ".b64", 4))
		sv->size = 8;
	else
		return cause_set(in->cause, "probe '%s': SAVE needs .u32 or .u64: %s", ip->p->name, stmt);
	p = skip_ws(p + 4);
	size_t n = strlen(p);
	if (n && *p == '{') {
		if (p[n - 1] != '}')
			return cause_set(in->cause, "probe '%s': SAVE without '}': %s", ip->p->name, stmt);
		p++;
		n -= 2;
	}
	uint32_t off = sn->save_bytes;
	for (size_t i = 0; i <= n;) {
		size_t k = 0;
		while (i + k < n && p[i + k] != ',')
			k++;
		char *v = dup_trim(p + i, k);
		if (!v || !*v || sv->n_vals == INJECT_SAVE_MAX) {
			free(v);
			return cause_set(in->cause, "probe '%s': bad SAVE value list: %s", ip->p->name, stmt);
		}
		struct strbuf sb;
		strbuf_init(&sb);
		rename_text(&sb, ip, v);
		free(v);
		sv->vals[sv->n_vals] = strbuf_finish(&sb, NULL);
		if (!sv->vals[sv->n_vals])
			return cause_set(in->cause, "out of memory");
		sv->n_vals++;
		if (sv->size == 8 && (off % 8 || ip->p->map.rec_size % 8))
			return cause_set(in->cause, "probe '%s': SAVE.u64 value at record byte %u is not 8-aligned",
					 ip->p->name, off % (ip->p->map.rec_size ? ip->p->map.rec_size : 1));
		off += (uint32_t)sv->size;
		i += k + 1;
	}
	sv->off = sn->save_bytes;
	sn->save_bytes = off;
	return 0;
}

static int has_helper(const char *s, const char *word);

static int line_stmt(struct inj *in, struct iprobe *ip, struct snip *sn, const char *stmt)
{
	if (strncmp(stmt, ".reg", 4) == 0 && isspace((unsigned char)stmt[4]))
		return 0; /* hoisted to the prologue */
	struct snip_line *l = realloc(sn->lines, (size_t)(sn->n + 1) * sizeof *l);
	if (!l)
		return cause_set(in->cause, "out of memory");
	sn->lines = l;
	l = &sn->lines[sn->n++];
	memset(l, 0, sizeof *l);
	if (has_helper(stmt, "ADDR"))
		sn->uses_addr = 1;
	if (!strncmp(stmt, "SAVE", 4) && stmt[4] == '.') {
		if (ip->map < 0)
			return cause_set(in->cause, "probe '%s': SAVE without a map", ip->p->name);
		l->save = calloc(1, sizeof *l->save);
		if (!l->save)
			return cause_set(in->cause, "out of memory");
		return save_parse(in, ip, sn, stmt, l->save);
	}
	if (stmt[0] == '@' && strstr(stmt, "SAVE."))
		return cause_set(in->cause, "probe '%s': a SAVE cannot be guarded: %s", ip->p->name, stmt);
	struct strbuf sb;
	strbuf_init(&sb);
	rename_text(&sb, ip, stmt);
	l->text = strbuf_finish(&sb, NULL);
	return l->text ? 0 : cause_set(in->cause, "out of memory");
}

static void snip_mark_saves(struct snip *sn)
{
	int first = -1, last = -1;
	for (int i = 0; i < sn->n; i++)
		if (sn->lines[i].save) {
			if (first < 0)
				first = i;
			last = i;
		}
	if (first >= 0) {
		sn->lines[first].first_save = 1;
		sn->lines[last].last_save = 1;
	}
}

static int iprobe_prepare(struct inj *in, struct iprobe *ip)
{
	const struct probe *p = ip->p;
	ip->snips = calloc((size_t)(p->n_hooks ? p->n_hooks : 1), sizeof *ip->snips);
	if (!ip->snips)
		return cause_set(in->cause, "out of memory");
	char **clean = calloc((size_t)(p->n_hooks ? p->n_hooks : 1), sizeof *clean);
	if (!clean)
		return cause_set(in->cause, "out of memory");
	int rc = 0;
	for (int h = 0; h < p->n_hooks && rc == 0; h++) {
		clean[h] = strip_comments(p->hooks[h].snippet ? p->hooks[h].snippet : "");
		rc = clean[h] ? for_each_stmt(in, ip, NULL, clean[h], decl_stmt)
			      : cause_set(in->cause, "out of memory");
	}
	for (int h = 0; h < p->n_hooks && rc == 0; h++) {
		struct snip *sn = &ip->snips[h];
		rc = for_each_stmt(in, ip, sn, clean[h], line_stmt);
		if (rc < 0)
			cause_wrap(in->cause, "hook '%s'", p->hooks[h].name);
		snip_mark_saves(sn);
		if (rc == 0 && sn->save_bytes) {
			uint32_t rs = p->map.rec_size;
			if (!rs || sn->save_bytes % rs)
				rc = cause_set(in->cause, "probe '%s' hook '%s': SAVEs write %u bytes, not whole %u-byte records",
					       p->name, p->hooks[h].name, sn->save_bytes, rs);
			else if (sn->save_bytes > in->maps[ip->map].cap_bytes)
				rc = cause_set(in->cause, "probe '%s' hook '%s': SAVEs write %u bytes, more than the map holds per %s (%u)",
					       p->name, p->hooks[h].name, sn->save_bytes,
					       p->map.level == PROBE_LEVEL_WARP ? "warp" : "thread",
					       in->maps[ip->map].cap_bytes);
			else if (p->hooks[h].kind == PROBE_TP_INSN)
				in->maps[ip->map].dynamic = 1;
		}
	}
	for (int h = 0; h < p->n_hooks; h++)
		free(clean[h]);
	free(clean);
	return rc;
}

static void iprobe_free(struct iprobe *ip)
{
	for (int i = 0; i < ip->n_ren; i++)
		free(ip->ren[i].name);
	free(ip->ren);
	for (int h = 0; ip->snips && h < ip->p->n_hooks; h++) {
		struct snip *sn = &ip->snips[h];
		for (int i = 0; i < sn->n; i++) {
			free(sn->lines[i].text);
			struct snip_save *sv = sn->lines[i].save;
			for (int v = 0; sv && v < sv->n_vals; v++)
				free(sv->vals[v]);
			free(sn->lines[i].save);
		}
		free(sn->lines);
	}
	free(ip->snips);
}

/* ---- helpers at a site -------------------------------------------------- */

enum site_kind { SITE_ENTRY, SITE_INSN, SITE_EXIT };

/* What the straight-line code emitted so far at this site already holds,
 * so a quantity is computed once per site (ptxas does not merge repeated
 * special-register reads). */
enum {
	HAVE_TL = 1,     /* %ntop_tl = thread_linear */
	HAVE_GRID = 2,   /* %ntop_bl = block_linear, %ntop_nb = blocks */
	HAVE_UNIT_T = 4, /* %ntop_pt = units per block, %ntop_ut = unit in block (thread maps) */
	HAVE_UNIT_W = 8, /* %ntop_pw, %ntop_uw: the same for warp maps */
};

struct site {
	const struct ptx_insn *insn; /* NULL at kernel entry/exit */
	enum site_kind kind;
	int lane0_only;              /* inside the exit's lane-0 branch */
	unsigned have;               /* HAVE_* */
	int sa_map;                  /* %ntop_sa holds this map's unit record start (-1: none) */
	uint32_t cur[ENGINE_MAX_MAPS]; /* bytes: cursors known here (entry, static exits) */
};

static struct site site_at(enum site_kind kind, const struct ptx_insn *insn)
{
	struct site st;
	memset(&st, 0, sizeof st);
	st.kind = kind;
	st.insn = insn;
	st.sa_map = -1;
	return st;
}

static int helper_at(const char *s, size_t i, const char *word)
{
	size_t n = strlen(word);
	if (strncmp(s + i, word, n) || is_ident((unsigned char)s[i + n]))
		return 0;
	return i == 0 || !(is_ident((unsigned char)s[i - 1]) || s[i - 1] == '%' || s[i - 1] == '.');
}

static int has_helper(const char *s, const char *word)
{
	for (const char *p = strstr(s, word); p; p = strstr(p + 1, word))
		if (helper_at(s, (size_t)(p - s), word))
			return 1;
	return 0;
}

static int type_bytes(const char *t)
{
	static const struct { const char *name; int bytes; } types[] = {
		{ "b8", 1 }, { "u8", 1 }, { "s8", 1 },
		{ "b16", 2 }, { "u16", 2 }, { "s16", 2 }, { "f16", 2 }, { "bf16", 2 },
		{ "b32", 4 }, { "u32", 4 }, { "s32", 4 }, { "f32", 4 }, { "f16x2", 4 },
		{ "bf16x2", 4 }, { "tf32", 4 },
		{ "b64", 8 }, { "u64", 8 }, { "s64", 8 }, { "f64", 8 },
		{ "b128", 16 },
	};
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
		if (!strcmp(t, types[i].name))
			return types[i].bytes;
	return 0;
}

int ptx_inject_bytes(const struct ptx_insn *insn, char *text, size_t text_len, char **cause)
{
	const char *op = insn->opcode ? insn->opcode : "";
	if (ptx_opcode_matches(op, "cp.async")) {
		/* cp-size (cp.async) or size (cp.async.bulk): first plain operand after an address */
		int seen_addr = 0;
		for (int i = 0; i < insn->n_ops; i++) {
			if (insn->ops[i].is_addr)
				seen_addr = 1;
			else if (seen_addr && !insn->ops[i].is_vec) {
				snprintf(text, text_len, "%s", insn->ops[i].text);
				return 0;
			}
		}
		return cause_set(cause, "BYTES: no size operand in '%s'", op);
	}
	int bytes = 0, vec = 1;
	char part[32];
	for (const char *p = op; *p;) {
		size_t n = strcspn(p, ".");
		if (n < sizeof part) {
			memcpy(part, p, n);
			part[n] = 0;
			if (part[0] == 'v' && (!strcmp(part, "v2") || !strcmp(part, "v4") || !strcmp(part, "v8")))
				vec = atoi(part + 1);
			else if (type_bytes(part))
				bytes = type_bytes(part);
		}
		p += n;
		if (*p == '.')
			p++;
	}
	if (!bytes)
		return cause_set(cause, "BYTES: no data type in '%s'", op);
	snprintf(text, text_len, "%d", bytes * vec);
	return 0;
}

/* Which operand holds the traced instruction's memory address. For cp.async
 * the global side: the source for global->shared copies, the destination for
 * shared->global bulk copies. */
static const struct ptx_operand *addr_operand(const struct ptx_insn *insn)
{
	int want = 0;
	if (ptx_opcode_matches(insn->opcode, "cp.async")) {
		const char *g = strstr(insn->opcode, ".global");
		const char *s = strstr(insn->opcode, ".shared");
		want = g && s && s < g ? 1 : 0;
	}
	for (int i = 0; i < insn->n_ops; i++)
		if (insn->ops[i].is_addr && want-- == 0)
			return &insn->ops[i];
	return NULL;
}

static int kreg_bits(const struct inj *in, const char *name, size_t len)
{
	for (int i = 0; i < in->n_regs; i++) {
		const struct kreg *r = &in->regs[i];
		if (len < r->len || memcmp(name, r->name, r->len))
			continue;
		if (len == r->len && !r->range)
			return r->bits;
		size_t k = r->len;
		while (r->range && k < len && isdigit((unsigned char)name[k]))
			k++;
		if (r->range && k == len && len > r->len)
			return r->bits;
	}
	return 0;
}

/* Emits the computation of ADDR into %ntop_addr. */
static int emit_addr(struct inj *in, struct strbuf *sb, const struct ptx_insn *insn)
{
	const struct ptx_operand *op = addr_operand(insn);
	if (!op || !op->text)
		return cause_set(in->cause, "ADDR: '%s' has no memory operand", insn->opcode);
	char inner[256];
	size_t o = 0;
	for (const char *p = op->text; *p && o + 1 < sizeof inner; p++)
		if (*p != '[' && *p != ']' && !isspace((unsigned char)*p))
			inner[o++] = *p;
	inner[o] = 0;
	size_t bn = 1;
	while (inner[bn] && inner[bn] != '+' && inner[bn] != '-')
		bn++;
	if (!inner[0] || strchr(inner, ',') || strchr(inner, '{'))
		return cause_set(in->cause, "ADDR: cannot use memory operand %s of '%s'", op->text, insn->opcode);
	const char *off = inner[bn] == '+' ? inner + bn + 1 : inner[bn] == '-' ? inner + bn : NULL;
	if (off && !*off)
		return cause_set(in->cause, "ADDR: bad offset in %s", op->text);
	inner[bn] = 0;
	if (inner[0] == '%') {
		int bits = kreg_bits(in, inner, bn);
		if (bits == 32 || bits == 64) {
			strbuf_puts(sb, bits == 32 ? "cvt.u64.u32 %ntop_addr, " : "mov.b64 %ntop_addr, ");
			strbuf_puts(sb, inner);
			strbuf_puts(sb, ";\n");
		} else {
			return cause_set(in->cause, "ADDR: address register %s of '%s' is not a declared 32/64-bit register",
					 inner, insn->opcode);
		}
	} else {
		strbuf_puts(sb, "mov.u64 %ntop_addr, ");
		strbuf_puts(sb, inner);
		strbuf_puts(sb, ";\n");
	}
	if (off) {
		strbuf_puts(sb, "add.s64 %ntop_addr, %ntop_addr, ");
		strbuf_puts(sb, off);
		strbuf_puts(sb, ";\n");
	}
	return 0;
}

/* Appends snippet text with helpers replaced for this site. */
static int expand_helpers(struct inj *in, struct strbuf *sb, const char *s, const struct site *st)
{
	static const char *const ops[] = { "OUT", "IN1", "IN2", "IN3" };
	size_t i = 0, n = strlen(s);
	while (i < n) {
		if (!isupper((unsigned char)s[i]) || (i && (is_ident((unsigned char)s[i - 1]) ||
							 s[i - 1] == '%' || s[i - 1] == '.'))) {
			/* copy up to the next word that could be a helper */
			size_t k = i + 1;
			while (k < n && !(isupper((unsigned char)s[k]) && !is_ident((unsigned char)s[k - 1]) &&
					  s[k - 1] != '%' && s[k - 1] != '.'))
				k++;
			strbuf_append(sb, s + i, k - i);
			i = k;
			continue;
		}
		size_t k = i;
		while (k < n && is_ident((unsigned char)s[k]))
			k++;
		char word[16];
		size_t wl = k - i < sizeof word ? k - i : sizeof word - 1;
		memcpy(word, s + i, wl);
		word[wl] = 0;
		const char *rep = NULL;
		char bytes[64];
		if (!strcmp(word, "CLOCK"))
			rep = "%clock64";
		else if (!strcmp(word, "GTIMER"))
			rep = "%globaltimer";
		else if (!strcmp(word, "SMID"))
			rep = "%smid";
		else if (!strcmp(word, "ADDR") || !strcmp(word, "BYTES") || !strcmp(word, "OUT") ||
			 (!strncmp(word, "IN", 2) && word[2] >= '1' && word[2] <= '3' && !word[3])) {
			if (!st->insn)
				return cause_set(in->cause, "%s is only defined at instruction tracepoints", word);
			if (!strcmp(word, "ADDR")) {
				rep = "%ntop_addr";
			} else if (!strcmp(word, "BYTES")) {
				if (ptx_inject_bytes(st->insn, bytes, sizeof bytes, in->cause) < 0)
					return -1;
				rep = bytes;
			} else {
				int idx = 0;
				while (strcmp(ops[idx], word))
					idx++;
				if (idx >= st->insn->n_ops)
					return cause_set(in->cause, "%s: '%s' has only %d operands", word,
							 st->insn->opcode, st->insn->n_ops);
				rep = st->insn->ops[idx].text;
			}
		}
		if (rep)
			strbuf_puts(sb, rep);
		else
			strbuf_append(sb, s + i, k - i);
		i = k;
	}
	return 0;
}

/* ---- map addresses ------------------------------------------------------ */

/* thread_linear (< 1024, so 32-bit) into %ntop_tl. */
static void emit_thread_linear(struct strbuf *sb, struct site *st)
{
	if (st->have & HAVE_TL)
		return;
	st->have |= HAVE_TL;
	strbuf_puts(sb,
		"mov.u32 %ntop_w0, %tid.x;\n"
		"mov.u32 %ntop_w1, %tid.y;\n"
		"mov.u32 %ntop_w2, %tid.z;\n"
		"mov.u32 %ntop_w3, %ntid.x;\n"
		"mov.u32 %ntop_w4, %ntid.y;\n"
		"mad.lo.u32 %ntop_tl, %ntop_w2, %ntop_w4, %ntop_w1;\n"
		"mad.lo.u32 %ntop_tl, %ntop_tl, %ntop_w3, %ntop_w0;\n");
}

/* pred = this thread is lane 0 of its warp. Warps are cut from consecutive
 * thread_linear values, so lane = thread_linear % 32 (no %laneid read). */
static void emit_lane0(struct strbuf *sb, struct site *st, const char *pred)
{
	emit_thread_linear(sb, st);
	strbuf_printf(sb, "and.b32 %%ntop_w0, %%ntop_tl, 31;\nsetp.eq.u32 %s, %%ntop_w0, 0;\n", pred);
}

/* block_linear and blocks. The y/z grid extents are <= 65535, so
 * ctaid.z * nctaid.y + ctaid.y and nctaid.y * nctaid.z fit 32 bits; the
 * products with the x extent (< 2^31) need 64. */
static void emit_grid(struct strbuf *sb, struct site *st)
{
	if (st->have & HAVE_GRID)
		return;
	st->have |= HAVE_GRID;
	strbuf_puts(sb,
		"mov.u32 %ntop_w0, %ctaid.y;\n"
		"mov.u32 %ntop_w1, %ctaid.z;\n"
		"mov.u32 %ntop_w2, %nctaid.y;\n"
		"mov.u32 %ntop_w3, %nctaid.z;\n"
		"mov.u32 %ntop_w4, %nctaid.x;\n"
		"mov.u32 %ntop_w5, %ctaid.x;\n"
		"mad.lo.u32 %ntop_w0, %ntop_w1, %ntop_w2, %ntop_w0;\n"
		"mul.lo.u32 %ntop_w2, %ntop_w2, %ntop_w3;\n"
		"cvt.u64.u32 %ntop_d0, %ntop_w0;\n"
		"cvt.u64.u32 %ntop_d1, %ntop_w4;\n"
		"cvt.u64.u32 %ntop_d2, %ntop_w5;\n"
		"mad.lo.u64 %ntop_bl, %ntop_d0, %ntop_d1, %ntop_d2;\n"
		"cvt.u64.u32 %ntop_d0, %ntop_w2;\n"
		"mul.lo.u64 %ntop_nb, %ntop_d0, %ntop_d1;\n");
}

/* Units per block and this thread's unit in its block, both 32-bit
 * (<= 1024 threads): one per thread, or ceil(threads/32) warps, the last
 * possibly partial. */
static void emit_unit_in_block(struct strbuf *sb, struct site *st, int warp)
{
	unsigned bit = warp ? HAVE_UNIT_W : HAVE_UNIT_T;
	if (st->have & bit)
		return;
	emit_thread_linear(sb, st);
	st->have |= bit;
	strbuf_puts(sb,
		"mov.u32 %ntop_w0, %ntid.x;\n"
		"mov.u32 %ntop_w1, %ntid.y;\n"
		"mov.u32 %ntop_w2, %ntid.z;\n"
		"mul.lo.u32 %ntop_w0, %ntop_w0, %ntop_w1;\n");
	if (warp)
		strbuf_puts(sb,
			"mad.lo.u32 %ntop_pw, %ntop_w0, %ntop_w2, 31;\n"
			"shr.u32 %ntop_pw, %ntop_pw, 5;\n"
			"shr.u32 %ntop_uw, %ntop_tl, 5;\n");
	else
		strbuf_puts(sb,
			"mul.lo.u32 %ntop_pt, %ntop_w0, %ntop_w2;\n"
			"mov.u32 %ntop_ut, %ntop_tl;\n");
}

/* dst = address of this unit's count (rec = 0) or first record (rec = 1)
 * in map i (layout in engine.h), computed where it is needed rather than
 * kept live from the entry. Only the unit in the block differs between the
 * threads of a block: the rest is uniform (ptxas keeps it in uniform
 * registers), and the per-thread part is one mad.wide.u32. */
static void emit_unit_addr(const struct inj *in, struct strbuf *sb, struct site *st, int map,
			   int rec, const char *dst)
{
	const struct imap *m = &in->maps[map];
	const char *u = m->warp ? "w" : "t";
	emit_unit_in_block(sb, st, m->warp);
	emit_grid(sb, st);
	strbuf_printf(sb, "cvt.u64.u32 %%ntop_d1, %%ntop_p%s;\n", u);
	strbuf_puts(sb, "mul.lo.u64 %ntop_d0, %ntop_bl, %ntop_d1;\n"); /* the block's first unit */
	strbuf_printf(sb, "ld.param.u64 %%ntop_d2, [ntop_map%d];\n", map);
	strbuf_puts(sb, "cvta.to.global.u64 %ntop_d2, %ntop_d2;\n");
	if (!rec) {
		strbuf_puts(sb, "mad.lo.u64 %ntop_d0, %ntop_d0, 4, %ntop_d2;\n");
		strbuf_printf(sb, "mad.wide.u32 %s, %%ntop_u%s, 4, %%ntop_d0;\n", dst, u);
		return;
	}
	strbuf_puts(sb,
		"mul.lo.u64 %ntop_d3, %ntop_nb, %ntop_d1;\n" /* units */
		"shl.b64 %ntop_d3, %ntop_d3, 2;\n"
		"add.u64 %ntop_d3, %ntop_d3, 15;\n"
		"and.b64 %ntop_d3, %ntop_d3, -16;\n"
		"add.u64 %ntop_d2, %ntop_d2, %ntop_d3;\n");  /* record area */
	strbuf_printf(sb, "mad.lo.u64 %%ntop_d0, %%ntop_d0, %u, %%ntop_d2;\n", m->cap_bytes);
	strbuf_printf(sb, "mad.wide.u32 %s, %%ntop_u%s, %u, %%ntop_d0;\n", dst, u, m->cap_bytes);
}

/* ---- SAVE --------------------------------------------------------------- */

/* Where one execution of a snippet stores, decided at its first SAVE. */
struct save_state {
	int drop;      /* static cursor past cap: no stores (the count still grows) */
	int pred;      /* stores guarded by %ntop_ok */
	uint32_t base; /* bytes: immediate offset of the snippet's record from %ntop_sa */
};

static uint32_t sat_add(uint32_t a, uint32_t b)
{
	return a > UINT32_MAX - b ? UINT32_MAX : a + b;
}

/* Largest power of two (<= 16) dividing both. */
static uint32_t pow2_align(uint32_t a, uint32_t b)
{
	uint32_t x = a | b | 16;
	return x & -x;
}

static int save_static(const struct inj *in, int map, const struct site *st)
{
	return st->kind == SITE_ENTRY || !in->maps[map].dynamic;
}

/* First SAVE of a snippet: bounds check and record address into %ntop_sa. */
static void save_head(struct inj *in, struct strbuf *sb, const struct iprobe *ip, uint32_t s,
		      struct site *st, struct save_state *ss)
{
	int map = ip->map;
	const struct imap *m = &in->maps[map];
	int need_lane = m->warp && !st->lane0_only;
	memset(ss, 0, sizeof *ss);
	if (save_static(in, map, st)) {
		uint32_t c = st->cur[map];
		if (c > m->cap_bytes - s) {
			ss->drop = 1;
			return;
		}
		if (st->sa_map != map)
			emit_unit_addr(in, sb, st, map, 1, "%ntop_sa");
		st->sa_map = map;
		ss->base = c;
		if (c > (uint32_t)INT32_MAX - s) { /* keep [%ntop_sa+imm] a small immediate */
			strbuf_printf(sb, "add.u64 %%ntop_sa, %%ntop_sa, %u;\n", c);
			st->sa_map = -1;
			ss->base = 0;
		}
		if (need_lane) {
			emit_lane0(sb, st, "%ntop_ok");
			ss->pred = 1;
		}
		return;
	}
	/* saturate instead of wrapping, so a huge count never looks small */
	strbuf_printf(sb, "min.u32 %%ntop_end, %%ntop_cur%d, %u;\n", map, UINT32_MAX - s);
	strbuf_printf(sb, "add.u32 %%ntop_end, %%ntop_end, %u;\n", s);
	strbuf_printf(sb, "setp.le.u32 %%ntop_ok, %%ntop_cur%d, %u;\n", map, m->cap_bytes - s);
	if (need_lane)
		strbuf_puts(sb, "and.pred %ntop_ok, %ntop_ok, %ntop_lane0;\n");
	strbuf_printf(sb, "cvt.u64.u32 %%ntop_sa, %%ntop_cur%d;\n", map);
	strbuf_printf(sb, "add.u64 %%ntop_sa, %%ntop_rec%d, %%ntop_sa;\n", map);
	st->sa_map = -1;
	ss->pred = 1;
}

/* The values of one SAVE, in as few stores as alignment allows: a record
 * start is 16-aligned in the buffer, plus multiples of rec_size, so a value
 * at byte `off` of it is aligned to the powers of two dividing 16, rec_size
 * and off (v2 needs twice the value size, v4 16 bytes). */
static int save_values(struct inj *in, struct strbuf *sb, const struct iprobe *ip,
		       const struct snip_save *sv, const struct site *st, const struct save_state *ss)
{
	int bits = sv->size * 8;
	uint32_t off = ss->base + sv->off;
	for (int v = 0; v < sv->n_vals;) {
		uint32_t a = pow2_align(ip->p->map.rec_size, off);
		int n = 1;
		if (sv->size == 4 && a >= 16 && v + 4 <= sv->n_vals)
			n = 4;
		else if ((uint32_t)sv->size * 2 <= a && v + 2 <= sv->n_vals)
			n = 2;
		for (int k = 0; k < n; k++) {
			strbuf_printf(sb, "mov.b%d %%ntop_%c%d, ", bits, sv->size == 8 ? 'x' : 'v', k);
			if (expand_helpers(in, sb, sv->vals[v + k], st) < 0)
				return -1;
			strbuf_puts(sb, ";\n");
		}
		strbuf_printf(sb, "%sst.global", ss->pred ? "@%ntop_ok " : "");
		if (n > 1)
			strbuf_printf(sb, ".v%d", n);
		strbuf_printf(sb, ".b%d [%%ntop_sa", bits);
		if (off)
			strbuf_printf(sb, "+%u", off);
		strbuf_puts(sb, "], ");
		for (int k = 0; k < n; k++)
			strbuf_printf(sb, "%s%%ntop_%c%d", k ? ", " : n > 1 ? "{" : "",
				      sv->size == 8 ? 'x' : 'v', k);
		strbuf_puts(sb, n > 1 ? "};\n" : ";\n");
		v += n;
		off += (uint32_t)(n * sv->size);
	}
	return 0;
}

static int emit_save(struct inj *in, struct strbuf *sb, const struct iprobe *ip, const struct snip *sn,
		     const struct snip_line *l, struct site *st, struct save_state *ss)
{
	int map = ip->map;
	if (l->first_save)
		save_head(in, sb, ip, sn->save_bytes, st, ss);
	if (!ss->drop && save_values(in, sb, ip, l->save, st, ss) < 0)
		return -1;
	if (!l->last_save)
		return 0;
	if (save_static(in, map, st))
		st->cur[map] = sat_add(st->cur[map], sn->save_bytes);
	else
		strbuf_printf(sb, "mov.u32 %%ntop_cur%d, %%ntop_end;\n", map);
	return 0;
}

static int emit_snip(struct inj *in, struct strbuf *sb, const struct iprobe *ip, int hook,
		     struct site *st)
{
	const struct snip *sn = &ip->snips[hook];
	struct save_state ss = { 0, 0, 0 };
	for (int i = 0; i < sn->n; i++) {
		const struct snip_line *l = &sn->lines[i];
		int rc;
		if (l->save) {
			rc = emit_save(in, sb, ip, sn, l, st, &ss);
		} else {
			rc = expand_helpers(in, sb, l->text, st);
			strbuf_puts(sb, ";\n");
		}
		if (rc < 0)
			return cause_wrap(in->cause, "probe '%s' hook '%s'", ip->p->name,
					  ip->p->hooks[hook].name);
	}
	return 0;
}

/* ---- output body -------------------------------------------------------- */

static int out_push_owned(struct inj *in, const struct ptx_stmt *s, int mine)
{
	if (in->n_out == in->cap_out) {
		int cap = in->cap_out ? in->cap_out * 2 : 64;
		struct ptx_stmt *o = realloc(in->out, (size_t)cap * sizeof *o);
		if (!o)
			return cause_set(in->cause, "out of memory");
		in->out = o;
		unsigned char *mn = realloc(in->mine, (size_t)cap);
		if (!mn)
			return cause_set(in->cause, "out of memory");
		in->mine = mn;
		in->cap_out = cap;
	}
	in->mine[in->n_out] = (unsigned char)mine;
	in->out[in->n_out++] = *s;
	return 0;
}

static int out_push(struct inj *in, const struct ptx_stmt *s)
{
	return out_push_owned(in, s, 0);
}

/* Moves sb into the new body as one statement: lines after the first get
 * the tab ptx_emit puts before each statement, so the output reads evenly.
 * One statement per chunk keeps a site to a single allocation. */
static int out_flush(struct inj *in, struct strbuf *sb)
{
	if (sb->failed) {
		strbuf_done(sb);
		return cause_set(in->cause, "out of memory");
	}
	if (sb->len == 0) {
		strbuf_done(sb);
		return 0;
	}
	size_t lines = 0;
	for (size_t i = 0; i < sb->len; i++)
		lines += sb->data[i] == '\n';
	char *text = malloc(sb->len + lines + 1);
	if (!text) {
		strbuf_done(sb);
		return cause_set(in->cause, "out of memory");
	}
	size_t o = 0;
	for (size_t i = 0; i < sb->len; i++) {
		if (sb->data[i] != '\n') {
			text[o++] = sb->data[i];
		} else if (i + 1 < sb->len) {
			text[o++] = '\n';
			text[o++] = '\t';
		}
	}
	text[o] = 0;
	strbuf_done(sb);
	struct ptx_stmt s;
	memset(&s, 0, sizeof s);
	s.kind = PTX_DIRECTIVE;
	s.text = text;
	if (out_push_owned(in, &s, 1) < 0) {
		free(text);
		return -1;
	}
	return 0;
}

/* Registers, then the entry snippets first (so an entry clock reads as
 * early as possible), then what dynamic-cursor maps keep live. */
static int emit_prologue(struct inj *in)
{
	struct strbuf sb;
	strbuf_init(&sb);
	strbuf_puts(&sb,
		".reg .b32 %ntop_w<7>;\n"
		".reg .b64 %ntop_d<4>;\n"
		".reg .b32 %ntop_tl, %ntop_end, %ntop_v<4>;\n"
		".reg .b64 %ntop_sa, %ntop_ca, %ntop_addr, %ntop_x<2>;\n"
		".reg .b64 %ntop_bl, %ntop_nb;\n"
		".reg .b32 %ntop_pt, %ntop_ut, %ntop_pw, %ntop_uw;\n"
		".reg .pred %ntop_ok, %ntop_lane0;\n");
	for (int i = 0; i < in->n_maps; i++)
		if (in->maps[i].dynamic)
			strbuf_printf(&sb, ".reg .b64 %%ntop_rec%d;\n.reg .b32 %%ntop_cur%d;\n", i, i);
	if (in->decls.data)
		strbuf_append(&sb, in->decls.data, in->decls.len);
	if (in->decls.failed)
		sb.failed = 1;
	struct site st = site_at(SITE_ENTRY, NULL);
	int any = 0;
	for (int k = 0; k < in->n_pr; k++)
		for (int h = 0; h < in->pr[k].p->n_hooks; h++)
			if (in->pr[k].p->hooks[h].kind == PROBE_TP_ENTRY) {
				any = 1;
				if (emit_snip(in, &sb, &in->pr[k], h, &st) < 0) {
					strbuf_done(&sb);
					return -1;
				}
			}
	in->sites += any;
	for (int i = 0; i < in->n_maps; i++) {
		in->maps[i].entry_bytes = st.cur[i];
		if (!in->maps[i].dynamic)
			continue;
		char rec[32];
		snprintf(rec, sizeof rec, "%%ntop_rec%d", i);
		emit_unit_addr(in, &sb, &st, i, 1, rec);
		strbuf_printf(&sb, "mov.u32 %%ntop_cur%d, %u;\n", i, st.cur[i]);
	}
	if (in->any_dyn_warp)
		emit_lane0(&sb, &st, "%ntop_lane0");
	return out_flush(in, &sb);
}

/* Bytes a unit has tried to save when it leaves: the entry's and every
 * exit snippet's (static cursors only). */
static uint32_t exit_count(const struct inj *in, int map)
{
	uint32_t c = in->maps[map].entry_bytes;
	const struct probe *p = in->pr[in->maps[map].pr].p;
	for (int h = 0; h < p->n_hooks; h++)
		if (p->hooks[h].kind == PROBE_TP_EXIT)
			c = sat_add(c, in->pr[in->maps[map].pr].snips[h].save_bytes);
	return c;
}

static void emit_count_store(struct inj *in, struct strbuf *sb, struct site *st, int map)
{
	emit_unit_addr(in, sb, st, map, 0, "%ntop_ca");
	if (in->maps[map].dynamic)
		strbuf_printf(sb, "st.global.u32 [%%ntop_ca], %%ntop_cur%d;\n", map);
	else
		strbuf_printf(sb, "st.global.u32 [%%ntop_ca], %u;\n", exit_count(in, map));
}

/* The exit code of the probes whose map is (warp = 1) or is not (0) a warp
 * map: their exit snippets and those maps' count stores. A static count is
 * stored first: its address is then dead before the record address is
 * computed (fewer registers live at once than the other order). */
static int emit_exit_group(struct inj *in, struct strbuf *sb, struct site *st, int warp)
{
	for (int i = 0; i < in->n_maps; i++)
		if (in->maps[i].warp == warp && !in->maps[i].dynamic)
			emit_count_store(in, sb, st, i);
	for (int k = 0; k < in->n_pr; k++) {
		const struct iprobe *ip = &in->pr[k];
		if ((ip->map >= 0 && in->maps[ip->map].warp) != warp)
			continue;
		for (int h = 0; h < ip->p->n_hooks; h++)
			if (ip->p->hooks[h].kind == PROBE_TP_EXIT && emit_snip(in, sb, ip, h, st) < 0)
				return -1;
	}
	for (int i = 0; i < in->n_maps; i++)
		if (in->maps[i].warp == warp && in->maps[i].dynamic)
			emit_count_store(in, sb, st, i);
	return 0;
}

/* Renders the exit code once: the same at every exit (no site helpers).
 * The lane-0 part runs after the other, so it reuses what that computed. */
static int emit_exit_render(struct inj *in)
{
	struct site st = site_at(SITE_EXIT, NULL);
	for (int i = 0; i < in->n_maps; i++)
		st.cur[i] = in->maps[i].entry_bytes;
	struct strbuf all, lane;
	strbuf_init(&all);
	strbuf_init(&lane);
	int rc = emit_exit_group(in, &all, &st, 0);
	if (rc == 0 && in->any_warp) {
		emit_lane0(&all, &st, "%ntop_lane0");
		st.lane0_only = 1;
		rc = emit_exit_group(in, &lane, &st, 1);
	}
	in->exit_all = strbuf_finish(&all, NULL);
	in->exit_lane0 = strbuf_finish(&lane, NULL);
	if (rc == 0 && (!in->exit_all || !in->exit_lane0))
		rc = cause_set(in->cause, "out of memory");
	return rc;
}

/* Exit code before a ret/exit (or the closing brace). Warp-map exit
 * snippets and stores run in lane 0 only, behind a branch around our own
 * code: nothing else in the warp needs them, and the other lanes' issue
 * slots and registers are spared (ptxas turns it into an early EXIT). */
static int emit_exit(struct inj *in, struct strbuf *sb)
{
	if (!in->exit_all && emit_exit_render(in) < 0)
		return -1;
	strbuf_puts(sb, in->exit_all);
	if (in->any_warp) {
		int n = in->lane_n++;
		strbuf_printf(sb, "@!%%ntop_lane0 bra $ntop_lane_%d;\n", n);
		strbuf_puts(sb, in->exit_lane0);
		strbuf_printf(sb, "$ntop_lane_%d:\n", n);
	}
	return 0;
}

/* ---- the body walk ------------------------------------------------------ */

static int is_exit_insn(const struct ptx_insn *x)
{
	return ptx_opcode_matches(x->opcode, "ret") || ptx_opcode_matches(x->opcode, "exit");
}

static int is_transfer(const struct ptx_insn *x)
{
	return is_exit_insn(x) || ptx_opcode_matches(x->opcode, "bra") ||
	       ptx_opcode_matches(x->opcode, "brx") || ptx_opcode_matches(x->opcode, "trap");
}

static int hook_matches(const struct probe_hook *h, const struct ptx_insn *x)
{
	if (h->kind != PROBE_TP_INSN || !x->opcode)
		return 0;
	for (int i = 0; i < h->n_opcodes; i++)
		if (h->opcodes[i] && ptx_opcode_matches(x->opcode, h->opcodes[i]))
			return 1;
	return 0;
}

/* Does hook h of probe k fire on x? Hooks that use ADDR skip .param-space
 * accesses: call arguments and kernel parameters have no memory address
 * (ptxas refuses to take one), and a made-up 0 would pollute a DMAT. */
static int hook_fires(const struct iprobe *ip, int h, const struct ptx_insn *x)
{
	if (!hook_matches(&ip->p->hooks[h], x))
		return 0;
	return !ip->snips[h].uses_addr || !strstr(x->opcode, ".param");
}

/* Per statement: does any hook apply, and does any of them need ADDR. */
static int site_needs(const struct inj *in, const struct ptx_insn *x, int *uses_addr)
{
	int any = 0;
	int after_ok = !is_transfer(x);
	for (int k = 0; k < in->n_pr; k++)
		for (int h = 0; h < in->pr[k].p->n_hooks; h++) {
			const struct probe_hook *hk = &in->pr[k].p->hooks[h];
			if (hook_fires(&in->pr[k], h, x) && (!hk->after || after_ok)) {
				any = 1;
				*uses_addr |= in->pr[k].snips[h].uses_addr;
			}
		}
	return any;
}

static int emit_hooks(struct inj *in, struct strbuf *sb, const struct ptx_insn *x, int after)
{
	struct site st = site_at(SITE_INSN, x);
	for (int k = 0; k < in->n_pr; k++)
		for (int h = 0; h < in->pr[k].p->n_hooks; h++) {
			const struct probe_hook *hk = &in->pr[k].p->hooks[h];
			if (hook_fires(&in->pr[k], h, x) && hk->after == after &&
			    emit_snip(in, sb, &in->pr[k], h, &st) < 0)
				return -1;
		}
	return 0;
}

static void invert_pred(struct strbuf *sb, const char *pred)
{
	const char *p = skip_ws(pred);
	if (*p == '!')
		strbuf_puts(sb, skip_ws(p + 1));
	else
		strbuf_printf(sb, "!%s", p);
}

/* One kernel statement: instrumentation around it (inside a predicate skip
 * when it is guarded, so predicated-off instructions record nothing). */
static int walk_insn(struct inj *in, const struct ptx_stmt *s)
{
	const struct ptx_insn *x = &s->insn;
	int uses_addr = 0;
	int probed = x->opcode && site_needs(in, x, &uses_addr);
	int exit_site = x->opcode && is_exit_insn(x) && in->has_exit_work;
	if (!probed && !exit_site)
		return out_push(in, s);
	struct strbuf sb;
	strbuf_init(&sb);
	int skip = -1;
	if (x->pred && *x->pred) {
		skip = in->skip_n++;
		strbuf_puts(&sb, "@");
		invert_pred(&sb, x->pred);
		strbuf_printf(&sb, " bra $ntop_skip_%d;\n", skip);
	}
	if ((uses_addr && emit_addr(in, &sb, x) < 0) || (probed && emit_hooks(in, &sb, x, 0) < 0) ||
	    (exit_site && emit_exit(in, &sb) < 0) || out_flush(in, &sb) < 0 || out_push(in, s) < 0) {
		strbuf_done(&sb);
		return cause_wrap(in->cause, "line %d", s->line);
	}
	strbuf_init(&sb);
	if ((probed && !is_transfer(x) && emit_hooks(in, &sb, x, 1) < 0)) {
		strbuf_done(&sb);
		return cause_wrap(in->cause, "line %d", s->line);
	}
	if (skip >= 0)
		strbuf_printf(&sb, "$ntop_skip_%d:\n", skip);
	in->sites += probed + exit_site;
	return out_flush(in, &sb);
}

/* Can control reach the closing brace? Not when the last instruction is an
 * unguarded ret/exit/bra (a trailing label may be a branch target). */
static int falls_off_end(const struct ptx_func *f)
{
	for (int i = f->n_body - 1; i >= 0; i--) {
		const struct ptx_stmt *s = &f->body[i];
		if (s->kind == PTX_CLOSE || s->kind == PTX_DIRECTIVE || s->kind == PTX_OPEN)
			continue;
		if (s->kind == PTX_LABEL)
			return 1;
		return !(!s->insn.pred && s->insn.opcode && is_transfer(&s->insn));
	}
	return 1;
}

static int walk_body(struct inj *in)
{
	struct ptx_func *f = in->kernel;
	if (emit_prologue(in) < 0)
		return -1;
	for (int i = 0; i < f->n_body; i++) {
		int rc = f->body[i].kind == PTX_INSN ? walk_insn(in, &f->body[i]) : out_push(in, &f->body[i]);
		if (rc < 0)
			return -1;
	}
	if (in->has_exit_work && falls_off_end(f)) {
		struct strbuf sb;
		strbuf_init(&sb);
		if (emit_exit(in, &sb) < 0) {
			strbuf_done(&sb);
			return cause_wrap(in->cause, "kernel end");
		}
		in->sites++;
		return out_flush(in, &sb);
	}
	return 0;
}

/* ---- setup -------------------------------------------------------------- */

static int reg_type_bits(const char *t)
{
	if (!strcmp(t, "pred"))
		return 1;
	return type_bytes(t) * 8;
}

/* Collects the kernel's .reg declarations (for ADDR's register widths) and
 * refuses kernels that already use our %ntop_ prefix. */
static int collect_kernel_regs(struct inj *in)
{
	const struct ptx_func *f = in->kernel;
	for (int i = 0; i < f->n_body; i++) {
		const struct ptx_stmt *s = &f->body[i];
		if (s->kind != PTX_DIRECTIVE || !s->text || strncmp(s->text, ".reg", 4) ||
		    !isspace((unsigned char)s->text[4]))
			continue;
		const char *p = skip_ws(s->text + 4);
		if (!strncmp(p, ".v", 2)) /* vector registers: never addresses */
			continue;
		char type[16] = "";
		size_t tn = strcspn(p + 1, " \t%");
		if (*p == '.' && tn < sizeof type) {
			memcpy(type, p + 1, tn);
			type[tn] = 0;
		}
		int bits = reg_type_bits(type);
		for (const char *q = strchr(p, '%'); q; q = strchr(q + 1, '%')) {
			if (q > p && q[-1] != ',' && !isspace((unsigned char)q[-1]))
				continue;
			size_t n = 1;
			while (is_ident((unsigned char)q[n]))
				n++;
			if (n > 6 && !strncmp(q, "%ntop_", 6))
				return cause_set(in->cause, "kernel already declares %.*s (the %%ntop_ prefix is reserved)",
						 (int)n, q);
			struct kreg *r = realloc(in->regs, (size_t)(in->n_regs + 1) * sizeof *r);
			if (!r)
				return cause_set(in->cause, "out of memory");
			in->regs = r;
			r[in->n_regs++] = (struct kreg){ q, n, q[n] == '<', bits };
		}
	}
	return 0;
}

static int setup_probes(struct inj *in, struct probe *const *probes, int n_probes)
{
	in->pr = calloc((size_t)(n_probes ? n_probes : 1), sizeof *in->pr);
	if (!in->pr)
		return cause_set(in->cause, "out of memory");
	for (int k = 0; k < n_probes; k++) {
		const struct probe *p = probes[k];
		struct iprobe *ip = &in->pr[in->n_pr++];
		ip->p = p;
		ip->index = k;
		ip->map = -1;
		if (!p->has_map)
			continue;
		if (in->n_maps == ENGINE_MAX_MAPS)
			return cause_set(in->cause, "more than %d maps", ENGINE_MAX_MAPS);
		uint64_t capb = (uint64_t)p->map.cap * p->map.rec_size;
		if (capb == 0 || capb > UINT32_MAX)
			return cause_set(in->cause, "probe '%s': map holds %llu bytes per unit (need 1..4 GiB)",
					 p->name, (unsigned long long)capb);
		ip->map = in->n_maps;
		struct imap *m = &in->maps[in->n_maps++];
		m->pr = k;
		m->cap_bytes = (uint32_t)capb;
		m->warp = p->map.level == PROBE_LEVEL_WARP;
		in->any_warp |= m->warp;
	}
	in->has_exit_work = in->n_maps > 0;
	for (int k = 0; k < in->n_pr; k++) {
		for (int h = 0; h < in->pr[k].p->n_hooks; h++)
			if (in->pr[k].p->hooks[h].kind == PROBE_TP_EXIT)
				in->has_exit_work = 1;
		if (iprobe_prepare(in, &in->pr[k]) < 0)
			return -1;
	}
	for (int i = 0; i < in->n_maps; i++)
		in->any_dyn_warp |= in->maps[i].dynamic && in->maps[i].warp;
	return 0;
}

/* Matching sites in .func bodies: reported, not instrumented (a .func
 * cannot see the kernel's registers that hold map addresses and cursors). */
static int count_func_sites(const struct inj *in, const struct ptx_module *m)
{
	int n = 0;
	for (int t = 0; t < m->n_items; t++) {
		const struct ptx_func *f = m->items[t].kind == PTX_TOP_FUNC ? m->items[t].func : NULL;
		if (!f || f->is_entry || f->is_decl)
			continue;
		for (int i = 0; i < f->n_body; i++) {
			const struct ptx_stmt *s = &f->body[i];
			int dummy = 0;
			if (s->kind != PTX_INSN || !s->insn.opcode)
				continue;
			if (site_needs(in, &s->insn, &dummy) ||
			    (in->has_exit_work && ptx_opcode_matches(s->insn.opcode, "exit")))
				n++;
		}
	}
	return n;
}

static int append_params(struct inj *in)
{
	struct ptx_func *f = in->kernel;
	char **params = realloc(f->params, (size_t)(f->n_params + in->n_maps + 1) * sizeof *params);
	if (!params)
		return cause_set(in->cause, "out of memory");
	f->params = params;
	int n0 = f->n_params;
	for (int i = 0; i < in->n_maps; i++) {
		char *p = NULL;
		if (asprintf(&p, ".param .u64 ntop_map%d", i) < 0) {
			while (f->n_params > n0)
				free(f->params[--f->n_params]);
			return cause_set(in->cause, "out of memory");
		}
		f->params[f->n_params++] = p;
	}
	if (in->n_maps)
		f->has_param_list = 1;
	return 0;
}

static void inj_done(struct inj *in, int failed)
{
	for (int k = 0; k < in->n_pr; k++)
		iprobe_free(&in->pr[k]);
	free(in->pr);
	free(in->regs);
	free(in->exit_all);
	free(in->exit_lane0);
	strbuf_done(&in->decls);
	if (failed) {
		for (int i = 0; i < in->n_out; i++)
			if (in->mine[i]) /* ours; originals still belong to the kernel */
				free(in->out[i].text);
		free(in->out);
	}
	free(in->mine);
}

int ptx_inject(struct ptx_module *m, const char *kernel, struct probe *const *probes,
	       int n_probes, struct ptx_inject_result *res, char **cause)
{
	struct inj in;
	memset(&in, 0, sizeof in);
	memset(res, 0, sizeof *res);
	in.cause = cause;
	strbuf_init(&in.decls);
	in.kernel = ptx_find_func(m, kernel);
	if (!in.kernel || !in.kernel->is_entry || in.kernel->is_decl)
		return cause_set(cause, "no kernel body named %s", kernel);
	if (m->address_size == 32)
		return cause_set(cause, "32-bit PTX (.address_size 32) is not supported");
	int rc = -1;
	if (collect_kernel_regs(&in) < 0 || setup_probes(&in, probes, n_probes) < 0)
		goto done;
	if (in.decls.failed) {
		cause_set(cause, "out of memory");
		goto done;
	}
	if (walk_body(&in) < 0)
		goto done;
	res->n_params_orig = in.kernel->n_params;
	if (append_params(&in) < 0)
		goto done;
	free(in.kernel->body);
	in.kernel->body = in.out;
	in.kernel->n_body = in.n_out;
	in.out = NULL;
	res->n_maps = in.n_maps;
	for (int i = 0; i < in.n_maps; i++)
		res->map_probe[i] = in.maps[i].pr;
	res->sites = in.sites;
	res->sites_in_funcs = count_func_sites(&in, m);
	rc = 0;
done:
	inj_done(&in, rc < 0);
	return rc;
}
