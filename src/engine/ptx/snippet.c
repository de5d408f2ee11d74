/* Snippet lexer and probe register table (snippet.h). Tokens follow what
 * ptxas 13 accepted when tried: `mov\f.u32` and `mov .u32` assemble as
 * `mov.u32`, `%tid .x` as `%tid.x`, comments separate tokens, `% r1` and
 * `mov. u32` are errors. */
#include "engine/ptx/snippet.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"

static int is_ws(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static int is_alpha(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$';
}

static int is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static int is_ident(int c)
{
	return is_alpha(c) || is_digit(c);
}

/* Where byte off of h's snippet was written. Without a position table
 * (a probe built in memory) lines are counted from snippet_line. */
static struct probe_pos pos_at(const struct probe_hook *h, size_t off)
{
	if (h->snippet_pos && h->snippet_pos_of == h->snippet)
		return h->snippet_pos[off];
	struct probe_pos p = { h->snippet_line, 1 };
	for (size_t i = 0; i < off; i++) {
		if (h->snippet[i] == '\n' && !h->snippet_flat) {
			p.line++;
			p.col = 1;
		} else {
			p.col++;
		}
	}
	return p;
}

/* ---- statements being built ---- */

struct builder {
	struct strbuf text;
	struct snippet_tok *toks;
	int n, cap;
	int failed;
};

static int wordish(enum snippet_tok_kind k)
{
	return k == SNIP_WORD || k == SNIP_DOT || k == SNIP_NUM;
}

/* Does ptxas need a space between the last token and one of kind k
 * starting with c? Only where two words would run together; the others
 * (after a comma or label, before a bracket or sign) are for legibility. */
static int needs_space(const struct builder *b, enum snippet_tok_kind k, char c)
{
	if (b->n == 0)
		return 0;
	const struct snippet_tok *prev = &b->toks[b->n - 1];
	char pc = b->text.data[prev->off];
	if (prev->kind == SNIP_PUNCT)
		return pc == ',' || pc == ':';
	return wordish(k) || (k == SNIP_PUNCT && c && strchr("([{-!@", c));
}

static void builder_tok(struct builder *b, enum snippet_tok_kind k, const char *s, size_t len, struct probe_pos pos)
{
	if (b->n > 0 && k == SNIP_DOT && b->toks[b->n - 1].kind == SNIP_WORD) {
		strbuf_append(&b->text, s, len); /* ptxas joins .parts to the word before */
		b->toks[b->n - 1].len += len;
		return;
	}
	if (b->n == b->cap) {
		int cap = b->cap ? 2 * b->cap : 16;
		struct snippet_tok *t = realloc(b->toks, (size_t)cap * sizeof *t);
		if (!t) {
			b->failed = 1;
			return;
		}
		b->toks = t;
		b->cap = cap;
	}
	if (needs_space(b, k, s[0]))
		strbuf_append(&b->text, " ", 1);
	struct snippet_tok *t = &b->toks[b->n++];
	t->kind = k;
	t->off = b->text.len;
	t->len = len;
	t->pos = pos;
	strbuf_append(&b->text, s, len);
}

/* Ends the statement being built (kept unless empty). */
static int builder_end(struct builder *b, struct snippet *out, int terminated)
{
	if (b->n == 0 || b->failed) {
		strbuf_done(&b->text);
		free(b->toks);
		int failed = b->failed;
		memset(b, 0, sizeof *b);
		return failed ? -1 : 0;
	}
	struct snippet_stmt *v = realloc(out->stmts, (size_t)(out->n + 1) * sizeof *v);
	char *text = strbuf_finish(&b->text, NULL);
	if (!v || !text) {
		if (v)
			out->stmts = v;
		free(text);
		free(b->toks);
		memset(b, 0, sizeof *b);
		return -1;
	}
	out->stmts = v;
	struct snippet_stmt *st = &v[out->n++];
	st->text = text;
	st->toks = b->toks;
	st->n_toks = b->n;
	st->pos = b->toks[0].pos;
	st->terminated = terminated;
	memset(b, 0, sizeof *b);
	return 0;
}

/* ---- the lexer ---- */

/* Length of the token at s[i] and its kind; 0 when s[i] starts none. */
static size_t tok_len(const char *s, size_t i, enum snippet_tok_kind *k)
{
	size_t j = i;
	if (is_alpha(s[i]) || (s[i] == '%' && is_ident(s[i + 1]))) {
		for (j++; is_ident(s[j]); j++)
			;
		*k = SNIP_WORD;
	} else if (s[i] == '.' && is_ident(s[i + 1])) {
		for (j++; is_ident(s[j]) || (s[j] == ':' && s[j + 1] == ':' && is_ident(s[j + 2])); j += s[j] == ':' ? 2 : 1)
			;
		*k = SNIP_DOT;
	} else if (is_digit(s[i])) {
		for (j++; is_ident(s[j]) || (s[j] == '.' && is_digit(s[j + 1])); j++)
			;
		*k = SNIP_NUM;
	} else if (s[i] && strchr(",[]{}()+-|!@:<>", s[i])) {
		j++;
		*k = SNIP_PUNCT;
	}
	return j - i;
}

static void bad_char(char *why, size_t why_len, unsigned char c)
{
	if (c == '#')
		snprintf(why, why_len, "'#' is not allowed in snippets (ptxas has no preprocessor lines in a body)");
	else if (c == '"' || c == '\\')
		snprintf(why, why_len, "'%c' is not allowed in snippets (no strings, no line continuations)", c);
	else if (c >= 0x80)
		snprintf(why, why_len, "byte 0x%02X: snippets are ASCII (ptxas reads nothing else)", c);
	else if (c < 0x20 || c == 0x7F)
		snprintf(why, why_len, "control character U+%04X in a snippet", c);
	else if (c == '%' || c == '.')
		snprintf(why, why_len, "'%c' must be followed by a name (no space inside %%name or .part)", c);
	else
		snprintf(why, why_len, "'%c' is not allowed in snippets (no constant expressions)", c);
}

int snippet_read(const struct probe_hook *h, struct snippet *out, struct probe_pos *bad, char *why, size_t why_len)
{
	const char *s = h->snippet ? h->snippet : "";
	struct builder b;
	memset(&b, 0, sizeof b);
	memset(out, 0, sizeof *out);
	size_t i = 0;
	while (s[i]) {
		enum snippet_tok_kind k = SNIP_PUNCT;
		size_t n;
		if (is_ws((unsigned char)s[i])) {
			i++;
		} else if (s[i] == '/' && s[i + 1] == '/') {
			while (s[i] && s[i] != '\n')
				i++;
		} else if (s[i] == '/' && s[i + 1] == '*') {
			const char *end = strstr(s + i + 2, "*/");
			if (!end) {
				*bad = pos_at(h, i);
				snprintf(why, why_len, "unterminated /* comment");
				goto fail;
			}
			i = (size_t)(end - s) + 2;
		} else if (s[i] == ';') {
			if (builder_end(&b, out, 1) < 0)
				goto oom;
			i++;
		} else if ((n = tok_len(s, i, &k)) > 0) {
			builder_tok(&b, k, s + i, n, pos_at(h, i));
			i += n;
		} else {
			*bad = pos_at(h, i);
			bad_char(why, why_len, (unsigned char)s[i]);
			goto fail;
		}
	}
	if (builder_end(&b, out, 0) < 0)
		goto oom;
	return 0;
oom:
	*bad = pos_at(h, i);
	snprintf(why, why_len, "out of memory");
fail:
	strbuf_done(&b.text);
	free(b.toks);
	snippet_free(out);
	return -1;
}

void snippet_free(struct snippet *s)
{
	for (int i = 0; i < s->n; i++) {
		free(s->stmts[i].text);
		free(s->stmts[i].toks);
	}
	free(s->stmts);
	memset(s, 0, sizeof *s);
}

int snippet_tok_is(const struct snippet_stmt *st, int i, const char *s)
{
	if (i < 0 || i >= st->n_toks)
		return 0;
	const struct snippet_tok *t = &st->toks[i];
	return strlen(s) == t->len && memcmp(st->text + t->off, s, t->len) == 0;
}

/* ---- probe registers ---- */

/* Special registers (PTX ISA 9.0, chapter 10) and the families of them:
 * a probe register of that name would shadow the real one once renamed. */
static int is_special_reg(const char *name)
{
	static const char *const exact[] = { "%tid", "%ntid", "%laneid", "%warpid", "%nwarpid", "%ctaid", "%nctaid",
					     "%smid", "%nsmid", "%gridid", "%is_explicit_cluster", "%clusterid",
					     "%nclusterid", "%cluster_ctaid", "%cluster_nctaid", "%cluster_ctarank",
					     "%cluster_nctarank", "%total_smem_size", "%aggr_smem_size",
					     "%dynamic_smem_size", "%current_graph_exec", NULL };
	static const char *const prefix[] = { "%lanemask_", "%clock", "%pm", "%envreg", "%globaltimer",
					      "%reserved_smem_offset_", NULL };
	for (const char *const *e = exact; *e; e++)
		if (strcmp(name, *e) == 0)
			return 1;
	for (const char *const *p = prefix; *p; p++)
		if (strncmp(name, *p, strlen(*p)) == 0)
			return 1;
	return 0;
}

static int is_reg_type(const char *t, size_t n)
{
	static const char *const types[] = { ".b8", ".b16", ".b32", ".b64", ".b128", ".u8", ".u16", ".u32", ".u64",
					     ".s8", ".s16", ".s32", ".s64", ".f16", ".f16x2", ".bf16", ".bf16x2",
					     ".f32", ".f64", ".pred", NULL };
	for (const char *const *e = types; *e; e++)
		if (strlen(*e) == n && memcmp(t, *e, n) == 0)
			return 1;
	return 0;
}

static int tok_punct(const struct snippet_stmt *st, int i, char c)
{
	return i < st->n_toks && st->toks[i].kind == SNIP_PUNCT && st->text[st->toks[i].off] == c;
}

int snippet_reg_check(const char *s, size_t len, char *why, size_t why_len)
{
	if (len < 2 || s[0] != '%' || !is_alpha(s[1]) || memchr(s, '.', len)) {
		snprintf(why, why_len, "bad register name in .reg: probe registers are written %%name (a letter, '_' or "
			 "'$' after the %%)");
		return -1;
	}
	for (size_t i = 1; i < len; i++)
		if (!is_ident(s[i])) {
			snprintf(why, why_len, "bad register name in .reg");
			return -1;
		}
	if (len >= SNIPPET_REG_NAME_MAX) {
		snprintf(why, why_len, "register name longer than %d characters", SNIPPET_REG_NAME_MAX - 1);
		return -1;
	}
	char name[SNIPPET_REG_NAME_MAX];
	memcpy(name, s, len);
	name[len] = 0;
	if (strncmp(name, "%ntop_", 6) == 0) {
		snprintf(why, why_len, "registers named %%ntop_* are reserved for the engine");
		return -1;
	}
	if (is_special_reg(name)) {
		snprintf(why, why_len, "%s is a special register, not a name for a probe register", name);
		return -1;
	}
	return 0;
}

int snippet_reg_add(struct snippet_reg **regs, int *n, const char *name, size_t len, long count, const char *type)
{
	struct snippet_reg *v = realloc(*regs, (size_t)(*n + 1) * sizeof *v);
	if (!v)
		return -1;
	*regs = v;
	struct snippet_reg *r = &v[(*n)++];
	memset(r, 0, sizeof *r);
	memcpy(r->name, name, len < sizeof r->name ? len : sizeof r->name - 1);
	r->count = count;
	snprintf(r->type, sizeof r->type, "%s", type);
	return 0;
}

/* One name of a .reg list at token *i ("%a" or "%a<4>"): checks it, appends it. */
static int decl_name(const struct snippet_stmt *st, int *i, const char *type, struct snippet_reg **regs, int *n,
		     int *bad, char *why, size_t why_len)
{
	const struct snippet_tok *t = &st->toks[*i];
	const char *s = st->text + t->off;
	long count = 0;
	*bad = *i;
	if (t->kind != SNIP_WORD) {
		snprintf(why, why_len, "bad register name in .reg: probe registers are written %%name");
		return -1;
	}
	if (snippet_reg_check(s, t->len, why, why_len) < 0)
		return -1;
	(*i)++;
	if (tok_punct(st, *i, '<')) {
		char *end = NULL;
		if (*i + 2 < st->n_toks && st->toks[*i + 1].kind == SNIP_NUM)
			count = strtol(st->text + st->toks[*i + 1].off, &end, 10);
		if (!end || end != st->text + st->toks[*i + 1].off + st->toks[*i + 1].len || !tok_punct(st, *i + 2, '>') ||
		    count < 1 || count > SNIPPET_REG_RANGE_MAX) {
			snprintf(why, why_len, "bad register range <N> (N from 1 to %d)", SNIPPET_REG_RANGE_MAX);
			return -1;
		}
		*i += 3;
	}
	if (snippet_reg_add(regs, n, s, t->len, count, type) < 0) {
		snprintf(why, why_len, "out of memory");
		return -1;
	}
	return 0;
}

int snippet_decl_parse(const struct snippet_stmt *st, struct snippet_reg **regs, int *n, int *bad, char *why,
		       size_t why_len)
{
	char type[32] = "";
	int i = 1, scalar = 0;
	for (; i < st->n_toks && st->toks[i].kind == SNIP_DOT; i++) {
		const char *t = st->text + st->toks[i].off;
		size_t tl = st->toks[i].len;
		int vec = (tl == 3 && (!memcmp(t, ".v2", 3) || !memcmp(t, ".v4", 3))) || (tl == 3 && !memcmp(t, ".v8", 3));
		if ((!vec && !is_reg_type(t, tl)) || (!vec && scalar++) || strlen(type) + tl + 2 > sizeof type) {
			*bad = i;
			snprintf(why, why_len, "bad type in .reg: one of .b8-.b128, .u8-.u64, .s8-.s64, .f16, .bf16, .f32, "
				 ".f64, .pred (optionally after .v2/.v4/.v8)");
			return -1;
		}
		if (*type)
			strcat(type, " ");
		strncat(type, t, tl);
	}
	if (!scalar || i >= st->n_toks) {
		*bad = i < st->n_toks ? i : st->n_toks - 1;
		snprintf(why, why_len, !scalar ? ".reg needs a type" : ".reg declares no register");
		return -1;
	}
	for (;;) {
		if (decl_name(st, &i, type, regs, n, bad, why, why_len) < 0)
			return -1;
		if (i == st->n_toks)
			return 0;
		if (!tok_punct(st, i, ',') || i + 1 == st->n_toks) {
			*bad = i;
			snprintf(why, why_len, "unexpected text in .reg");
			return -1;
		}
		i++;
	}
}

const struct snippet_reg *snippet_reg_find(const struct snippet_reg *regs, int n, const char *tok, size_t len)
{
	for (int i = 0; i < n; i++) {
		const struct snippet_reg *r = &regs[i];
		size_t rl = strlen(r->name);
		if (r->count == 0) {
			if (rl == len && memcmp(r->name, tok, len) == 0)
				return r;
			continue;
		}
		if (len <= rl || memcmp(r->name, tok, rl) != 0)
			continue;
		const char *d = tok + rl;
		size_t dl = len - rl;
		if (dl > 9 || (dl > 1 && d[0] == '0'))
			continue;
		long v = 0;
		size_t k = 0;
		for (; k < dl && is_digit(d[k]); k++)
			v = v * 10 + (d[k] - '0');
		if (k == dl && v < r->count)
			return r;
	}
	return NULL;
}
