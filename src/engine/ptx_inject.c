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
 * Warp maps store only from lane 0 (%laneid == 0): lane 0 exists in every
 * warp, even the partial last warp of a block whose size is not a multiple
 * of 32, and reaches exactly one kernel exit, so a warp-level entry/exit probe
 * writes exactly one record per warp. Instruction tracepoints on warp maps
 * record what lane 0 executes. Every lane keeps its own cursor; only lane 0's
 * reaches memory. */
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
	/* rendered once (they do not depend on the site): */
	char *head;      /* bounds check and record address (first SAVE only) */
	char *store[INJECT_SAVE_MAX]; /* guarded store of value v */
	char *tail;      /* cursor update (last SAVE only) */
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

struct inj {
	struct ptx_func *kernel;
	struct iprobe *pr;
	int n_pr;
	int n_maps;
	int map_pr[ENGINE_MAX_MAPS];     /* iprobe index per map */
	uint32_t cap_bytes[ENGINE_MAX_MAPS];
	int any_warp, any_thread;
	int has_exit_work;
	struct strbuf decls;             /* renamed probe .reg lines */
	struct kreg *regs;
	int n_regs;
	struct ptx_stmt *out;
	unsigned char *mine; /* out[i] was made here (freed on failure) */
	int n_out, cap_out;
	int skip_n;
	int sites;
	char *exit_text;                 /* rendered exit code, reused at every exit */
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
static int save_render(struct inj *in, const struct iprobe *ip, struct snip *sn);

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
			else if (sn->save_bytes > in->cap_bytes[ip->map])
				rc = cause_set(in->cause, "probe '%s' hook '%s': SAVEs write %u bytes, more than the map holds per %s (%u)",
					       p->name, p->hooks[h].name, sn->save_bytes,
					       p->map.level == PROBE_LEVEL_WARP ? "warp" : "thread",
					       in->cap_bytes[ip->map]);
			else
				rc = save_render(in, ip, sn);
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
			for (int v = 0; sv && v < sv->n_vals; v++) {
				free(sv->vals[v]);
				free(sv->store[v]);
			}
			if (sv) {
				free(sv->head);
				free(sv->tail);
			}
			free(sn->lines[i].save);
		}
		free(sn->lines);
	}
	free(ip->snips);
}

/* ---- helpers at a site -------------------------------------------------- */

struct site {
	const struct ptx_insn *insn; /* NULL at kernel entry/exit */
	int addr_ready;              /* %ntop_addr holds ADDR */
};

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

/* Renders the site-independent parts of a snippet's SAVEs. */
static int save_render(struct inj *in, const struct iprobe *ip, struct snip *sn)
{
	int map = ip->map;
	uint32_t cap = in->cap_bytes[map < 0 ? 0 : map], s = sn->save_bytes;
	for (int i = 0; i < sn->n; i++) {
		struct snip_save *sv = sn->lines[i].save;
		if (!sv)
			continue;
		struct strbuf sb;
		if (sn->lines[i].first_save) {
			strbuf_init(&sb);
			/* saturate instead of wrapping, so a huge count never looks small */
			strbuf_printf(&sb, "min.u32 %%ntop_end, %%ntop_cur%d, %u;\n", map, UINT32_MAX - s);
			strbuf_printf(&sb, "add.u32 %%ntop_end, %%ntop_end, %u;\n", s);
			strbuf_printf(&sb, "setp.le.u32 %%ntop_ok, %%ntop_cur%d, %u;\n", map, cap - s);
			if (ip->p->map.level == PROBE_LEVEL_WARP)
				strbuf_puts(&sb, "and.pred %ntop_ok, %ntop_ok, %ntop_lane0;\n");
			strbuf_printf(&sb, "cvt.u64.u32 %%ntop_sa, %%ntop_cur%d;\n", map);
			strbuf_printf(&sb, "add.u64 %%ntop_sa, %%ntop_rec%d, %%ntop_sa;\n", map);
			if (!(sv->head = strbuf_finish(&sb, NULL)))
				return cause_set(in->cause, "out of memory");
		}
		uint32_t off = sv->off;
		int bits = sv->size * 8;
		for (int v = 0; v < sv->n_vals; v++, off += (uint32_t)sv->size) {
			strbuf_init(&sb);
			strbuf_printf(&sb, ";\n@%%ntop_ok st.global.b%d [%%ntop_sa", bits);
			if (off)
				strbuf_printf(&sb, "+%u", off);
			strbuf_printf(&sb, "], %%ntop_sv%d;\n", bits);
			if (!(sv->store[v] = strbuf_finish(&sb, NULL)))
				return cause_set(in->cause, "out of memory");
		}
		if (sn->lines[i].last_save) {
			strbuf_init(&sb);
			strbuf_printf(&sb, "mov.u32 %%ntop_cur%d, %%ntop_end;\n", map);
			if (!(sv->tail = strbuf_finish(&sb, NULL)))
				return cause_set(in->cause, "out of memory");
		}
	}
	return 0;
}

static int emit_save(struct inj *in, struct strbuf *sb, const struct snip_save *sv,
		     const struct site *st)
{
	if (sv->head)
		strbuf_puts(sb, sv->head);
	for (int v = 0; v < sv->n_vals; v++) {
		strbuf_puts(sb, sv->size == 8 ? "mov.b64 %ntop_sv64, " : "mov.b32 %ntop_sv32, ");
		if (expand_helpers(in, sb, sv->vals[v], st) < 0)
			return -1;
		strbuf_puts(sb, sv->store[v]);
	}
	if (sv->tail)
		strbuf_puts(sb, sv->tail);
	return 0;
}

static int emit_snip(struct inj *in, struct strbuf *sb, const struct iprobe *ip, int hook,
		     const struct site *st)
{
	const struct snip *sn = &ip->snips[hook];
	for (int i = 0; i < sn->n; i++) {
		const struct snip_line *l = &sn->lines[i];
		int rc;
		if (l->save) {
			rc = emit_save(in, sb, l->save, st);
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

static void emit_prologue_maps(struct inj *in, struct strbuf *sb)
{
	strbuf_puts(sb,
		"mov.u32 %ntop_w0, %ctaid.x;\n"
		"mov.u32 %ntop_w1, %ctaid.y;\n"
		"mov.u32 %ntop_w2, %ctaid.z;\n"
		"mov.u32 %ntop_w3, %nctaid.x;\n"
		"mov.u32 %ntop_w4, %nctaid.y;\n"
		"mov.u32 %ntop_w5, %nctaid.z;\n"
		"cvt.u64.u32 %ntop_d0, %ntop_w2;\n"
		"cvt.u64.u32 %ntop_d1, %ntop_w4;\n"
		"cvt.u64.u32 %ntop_d2, %ntop_w1;\n"
		"mad.lo.u64 %ntop_d0, %ntop_d0, %ntop_d1, %ntop_d2;\n"
		"cvt.u64.u32 %ntop_d1, %ntop_w3;\n"
		"cvt.u64.u32 %ntop_d2, %ntop_w0;\n"
		"mad.lo.u64 %ntop_bl, %ntop_d0, %ntop_d1, %ntop_d2;\n" /* block_linear */
		"cvt.u64.u32 %ntop_d2, %ntop_w4;\n"
		"mul.lo.u64 %ntop_blocks, %ntop_d1, %ntop_d2;\n"
		"cvt.u64.u32 %ntop_d2, %ntop_w5;\n"
		"mul.lo.u64 %ntop_blocks, %ntop_blocks, %ntop_d2;\n"
		"mov.u32 %ntop_w0, %tid.x;\n"
		"mov.u32 %ntop_w1, %tid.y;\n"
		"mov.u32 %ntop_w2, %tid.z;\n"
		"mov.u32 %ntop_w3, %ntid.x;\n"
		"mov.u32 %ntop_w4, %ntid.y;\n"
		"mov.u32 %ntop_w5, %ntid.z;\n"
		"mad.lo.u32 %ntop_w6, %ntop_w2, %ntop_w4, %ntop_w1;\n"
		"mad.lo.u32 %ntop_w6, %ntop_w6, %ntop_w3, %ntop_w0;\n" /* thread_linear (<= 1024) */
		"mul.lo.u32 %ntop_w7, %ntop_w3, %ntop_w4;\n"
		"mul.lo.u32 %ntop_w7, %ntop_w7, %ntop_w5;\n"           /* threads per block */
		"cvt.u64.u32 %ntop_tl, %ntop_w6;\n"
		"cvt.u64.u32 %ntop_thr, %ntop_w7;\n");
	if (in->any_thread)
		strbuf_puts(sb,
			"mad.lo.u64 %ntop_unit_t, %ntop_bl, %ntop_thr, %ntop_tl;\n"
			"mul.lo.u64 %ntop_units_t, %ntop_blocks, %ntop_thr;\n");
	if (in->any_warp)
		strbuf_puts(sb, /* ceil(threads/32) warps per block: the last may be partial */
			"add.u64 %ntop_d0, %ntop_thr, 31;\n"
			"shr.u64 %ntop_d0, %ntop_d0, 5;\n"
			"shr.u64 %ntop_d1, %ntop_tl, 5;\n"
			"mad.lo.u64 %ntop_unit_w, %ntop_bl, %ntop_d0, %ntop_d1;\n"
			"mul.lo.u64 %ntop_units_w, %ntop_blocks, %ntop_d0;\n"
			"mov.u32 %ntop_w0, %laneid;\n"
			"setp.eq.u32 %ntop_lane0, %ntop_w0, 0;\n");
	for (int i = 0; i < in->n_maps; i++) {
		const char *u = in->pr[in->map_pr[i]].p->map.level == PROBE_LEVEL_WARP ? "w" : "t";
		strbuf_printf(sb, "ld.param.u64 %%ntop_d0, [ntop_map%d];\n", i);
		strbuf_puts(sb, "cvta.to.global.u64 %ntop_d0, %ntop_d0;\n");
		strbuf_printf(sb, "mad.lo.u64 %%ntop_cnt%d, %%ntop_unit_%s, 4, %%ntop_d0;\n", i, u);
		strbuf_printf(sb, "shl.b64 %%ntop_d1, %%ntop_units_%s, 2;\n", u);
		strbuf_puts(sb, "add.u64 %ntop_d1, %ntop_d1, 15;\n"
				"and.b64 %ntop_d1, %ntop_d1, -16;\n"
				"add.u64 %ntop_d0, %ntop_d0, %ntop_d1;\n");
		strbuf_printf(sb, "mad.lo.u64 %%ntop_rec%d, %%ntop_unit_%s, %u, %%ntop_d0;\n", i, u,
			      in->cap_bytes[i]);
		strbuf_printf(sb, "mov.u32 %%ntop_cur%d, 0;\n", i);
	}
}

static int emit_prologue(struct inj *in)
{
	struct strbuf sb;
	strbuf_init(&sb);
	strbuf_puts(&sb,
		".reg .b32 %ntop_w<8>;\n"
		".reg .b64 %ntop_d<3>;\n"
		".reg .b64 %ntop_bl, %ntop_blocks, %ntop_tl, %ntop_thr;\n"
		".reg .b64 %ntop_unit_t, %ntop_units_t, %ntop_unit_w, %ntop_units_w;\n"
		".reg .b64 %ntop_sa, %ntop_addr, %ntop_sv64;\n"
		".reg .b32 %ntop_end, %ntop_sv32;\n"
		".reg .pred %ntop_ok, %ntop_lane0;\n");
	for (int i = 0; i < in->n_maps; i++)
		strbuf_printf(&sb, ".reg .b64 %%ntop_cnt%d, %%ntop_rec%d;\n.reg .b32 %%ntop_cur%d;\n", i, i, i);
	if (in->decls.data)
		strbuf_append(&sb, in->decls.data, in->decls.len);
	if (in->decls.failed)
		sb.failed = 1;
	if (in->n_maps)
		emit_prologue_maps(in, &sb);
	struct site st = { NULL, 0 };
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
	return out_flush(in, &sb);
}

/* Exit snippets, then each map's count store. The same at every exit
 * (no site helpers there), so rendered once. */
static int emit_exit_render(struct inj *in, struct strbuf *sb)
{
	struct site st = { NULL, 0 };
	for (int k = 0; k < in->n_pr; k++)
		for (int h = 0; h < in->pr[k].p->n_hooks; h++)
			if (in->pr[k].p->hooks[h].kind == PROBE_TP_EXIT &&
			    emit_snip(in, sb, &in->pr[k], h, &st) < 0)
				return -1;
	for (int i = 0; i < in->n_maps; i++) {
		int warp = in->pr[in->map_pr[i]].p->map.level == PROBE_LEVEL_WARP;
		strbuf_printf(sb, "%sst.global.u32 [%%ntop_cnt%d], %%ntop_cur%d;\n",
			      warp ? "@%ntop_lane0 " : "", i, i);
	}
	return 0;
}

static int emit_exit(struct inj *in, struct strbuf *sb)
{
	if (!in->exit_text) {
		struct strbuf r;
		strbuf_init(&r);
		if (emit_exit_render(in, &r) < 0) {
			strbuf_done(&r);
			return -1;
		}
		in->exit_text = strbuf_finish(&r, NULL);
		if (!in->exit_text)
			return cause_set(in->cause, "out of memory");
	}
	strbuf_puts(sb, in->exit_text);
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
	struct site st = { x, 1 };
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
		in->map_pr[in->n_maps] = k;
		in->cap_bytes[in->n_maps] = (uint32_t)capb;
		if (p->map.level == PROBE_LEVEL_WARP)
			in->any_warp = 1;
		else
			in->any_thread = 1;
		in->n_maps++;
	}
	in->has_exit_work = in->n_maps > 0;
	for (int k = 0; k < in->n_pr; k++) {
		for (int h = 0; h < in->pr[k].p->n_hooks; h++)
			if (in->pr[k].p->hooks[h].kind == PROBE_TP_EXIT)
				in->has_exit_work = 1;
		if (iprobe_prepare(in, &in->pr[k]) < 0)
			return -1;
	}
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
	free(in->exit_text);
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
	memcpy(res->map_probe, in.map_pr, sizeof res->map_probe);
	res->sites = in.sites;
	res->sites_in_funcs = count_func_sites(&in, m);
	rc = 0;
done:
	inj_done(&in, rc < 0);
	return rc;
}
