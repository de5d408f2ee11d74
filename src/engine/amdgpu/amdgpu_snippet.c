/* GCN snippet reading (see amdgpu_snippet.h). Operands are split at
 * commas outside brackets, braces and parentheses (s[0:1], {a, b},
 * hwreg(HW_REG_HW_ID, 8, 4)); what follows the last operand after a blank
 * outside them is its modifiers. */
#include "engine/amdgpu/amdgpu_snippet.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"
#include "common/strbuf.h"

#define SNIP_MAX_REGS 256

static int snip_err(const struct amdgpu_snip *s, int line, char **cause, const char *what, const char *text)
{
	return cause_set(cause, "%s:%d: syntax: %s%s%s", s->p->path ? s->p->path : "<string>", line, what,
			 text ? ": " : "", text ? text : "");
}

/* Comment-free, blank-collapsed copy of one line (empty when nothing). */
static char *snip_clean(const char *line, size_t len)
{
	struct strbuf sb;
	strbuf_init(&sb);
	int space = 0;
	for (size_t i = 0; i < len; i++) {
		char c = line[i];
		if (c == ';' || (c == '/' && i + 1 < len && line[i + 1] == '/'))
			break;
		if (c == ' ' || c == '\t' || c == '\r') {
			space = sb.len > 0;
			continue;
		}
		if (space)
			strbuf_append(&sb, " ", 1);
		space = 0;
		strbuf_append(&sb, &c, 1);
	}
	return strbuf_finish(&sb, NULL);
}

/* Splits "op a, b[, ...] mods" (in place in st->buf). */
static int snip_split(struct amdgpu_stmt *st)
{
	char *p = st->buf;
	st->mnemonic = p;
	st->mods = "";
	p += strcspn(p, " ");
	if (!*p)
		return 0;
	*p++ = 0;
	int depth = 0;
	char *start = p;
	for (;; p++) {
		if (*p == '[' || *p == '(' || *p == '{')
			depth++;
		else if (*p == ']' || *p == ')' || *p == '}')
			depth--;
		int end = !*p, blank = *p == ' ' && depth == 0 && p > start && p[-1] != ',';
		if ((*p == ',' && depth == 0) || end || blank) {
			if (st->n_ops == AMDGPU_SNIP_OPS)
				return -1;
			char *next = p + 1;
			if (blank) { /* modifiers follow the last operand */
				st->mods = next;
				next = NULL;
			}
			*p = 0;
			while (*start == ' ')
				start++;
			st->ops[st->n_ops++] = start;
			if (end || !next)
				break;
			start = next;
		}
	}
	return depth == 0 ? 0 : -1;
}

/* "{a, b}" of a SAVE: the values become its operands. */
static int snip_save_values(struct amdgpu_stmt *st)
{
	if (st->n_ops != 1 || st->ops[0][0] != '{' || st->ops[0][strlen(st->ops[0]) - 1] != '}' || st->mods[0])
		return -1;
	char *list = st->ops[0] + 1;
	list[strlen(list) - 1] = 0;
	st->n_ops = 0;
	for (char *v = list; v;) {
		char *comma = strchr(v, ',');
		if (comma)
			*comma = 0;
		while (*v == ' ')
			v++;
		size_t n = strlen(v);
		while (n && v[n - 1] == ' ')
			v[--n] = 0;
		if (!n || st->n_ops == AMDGPU_SNIP_OPS)
			return -1;
		st->ops[st->n_ops++] = v;
		v = comma ? comma + 1 : NULL;
	}
	return 0;
}

static int snip_ident(const char *p, size_t n)
{
	if (n < 2 || p[0] != '%' || !(isalpha((unsigned char)p[1]) || p[1] == '_'))
		return 0;
	for (size_t i = 2; i < n; i++)
		if (!isalnum((unsigned char)p[i]) && p[i] != '_')
			return 0;
	return 1;
}

/* ".sgpr %a, %b:2" */
static int snip_decl(struct amdgpu_snip *s, const char *text, int line, char **cause)
{
	int vector = text[1] == 'v';
	for (const char *p = text + 6; *p;) {
		while (*p == ' ')
			p++;
		size_t n = strcspn(p, " ,:");
		int count = 1;
		const char *q = p + n;
		if (*q == ':') {
			count = q[1] - '0';
			if ((count != 1 && count != 2) || (q[2] && q[2] != ',' && q[2] != ' '))
				return snip_err(s, line, cause, "a probe register is 1 or 2 registers wide (%x or %x:2)", text);
			q += 2;
		}
		if (!snip_ident(p, n) || n >= AMDGPU_SNIP_NAME)
			return snip_err(s, line, cause, "probe registers are written %name", text);
		if (n > 6 && strncmp(p, "%ntop_", 6) == 0)
			return snip_err(s, line, cause, "registers named %ntop_* are reserved for the engine", text);
		for (int i = 0; i < s->n_regs; i++)
			if (strlen(s->regs[i].name) == n && strncmp(s->regs[i].name, p, n) == 0)
				return snip_err(s, line, cause, "this register is declared twice", text);
		if (s->n_regs == SNIP_MAX_REGS)
			return snip_err(s, line, cause, "too many probe registers", text);
		struct amdgpu_sreg *r = &s->regs[s->n_regs++];
		memcpy(r->name, p, n);
		r->name[n] = 0;
		r->vector = vector;
		r->count = count;
		r->line = line;
		while (*q == ' ')
			q++;
		if (*q && *q != ',')
			return snip_err(s, line, cause, "unexpected text in the declaration", text);
		p = *q ? q + 1 : q;
	}
	return 0;
}

/* One cleaned line: a declaration or a statement. */
static int snip_line(struct amdgpu_snip *s, struct amdgpu_shook *hk, char *text, int line, char **cause)
{
	if (!strncmp(text, ".sgpr ", 6) || !strncmp(text, ".vgpr ", 6)) {
		int r = snip_decl(s, text, line, cause);
		free(text);
		return r;
	}
	struct amdgpu_stmt *v = realloc(hk->v, (size_t)(hk->n + 1) * sizeof *v);
	if (!v) {
		free(text);
		return cause_set(cause, "out of memory reading a snippet");
	}
	hk->v = v;
	struct amdgpu_stmt *st = &v[hk->n++];
	memset(st, 0, sizeof *st);
	st->line = line;
	st->text = text;
	st->buf = strdup(text);
	if (!st->buf)
		return cause_set(cause, "out of memory reading a snippet");
	if (text[0] == '.')
		return snip_err(s, line, cause, "only .sgpr and .vgpr declarations are allowed in snippets", text);
	if (strchr(text, ':') && !strchr(text, ' ') && text[strlen(text) - 1] == ':')
		return cause_set(cause, "%s:%d: rule 2 (no control flow): label definitions are not allowed "
				 "(snippets cannot branch): %s", s->p->path ? s->p->path : "<string>", line, text);
	if (snip_split(st) < 0)
		return snip_err(s, line, cause, "cannot read this instruction's operands", text);
	if (!strncmp(st->mnemonic, "SAVE", 4)) {
		st->kind = AMDGPU_STMT_SAVE;
		if (snip_save_values(st) < 0)
			return snip_err(s, line, cause, "SAVE takes one list of 1 to 32 values: SAVE.u32 {a, b, ...}", text);
	}
	return 0;
}

static int snip_hook(struct amdgpu_snip *s, struct amdgpu_shook *hk, char **cause)
{
	const struct probe_hook *h = hk->h;
	const char *t = h->snippet;
	for (int off = 0; *t; off++) {
		size_t len = strcspn(t, "\n");
		char *text = snip_clean(t, len);
		int line = h->snippet_line + (h->snippet_flat ? 0 : off);
		if (!text)
			return cause_set(cause, "out of memory reading a snippet");
		if (!text[0])
			free(text);
		else if (snip_line(s, hk, text, line, cause) < 0)
			return -1;
		t += len + (t[len] == '\n');
	}
	return 0;
}

int amdgpu_snip_parse(const struct probe *p, struct amdgpu_snip *s, char **cause)
{
	memset(s, 0, sizeof *s);
	s->p = p;
	s->regs = calloc(SNIP_MAX_REGS, sizeof *s->regs);
	s->hooks = calloc((size_t)(p->n_hooks ? p->n_hooks : 1), sizeof *s->hooks);
	if (!s->regs || !s->hooks) {
		amdgpu_snip_done(s);
		return cause_set(cause, "out of memory reading a probe");
	}
	for (int i = 0; i < p->n_hooks; i++) {
		s->hooks[i].h = &p->hooks[i];
		s->n_hooks++;
		if (snip_hook(s, &s->hooks[i], cause) < 0) {
			amdgpu_snip_done(s);
			return -1;
		}
	}
	return 0;
}

void amdgpu_snip_done(struct amdgpu_snip *s)
{
	for (int i = 0; i < s->n_hooks; i++) {
		for (int k = 0; k < s->hooks[i].n; k++) {
			free(s->hooks[i].v[k].text);
			free(s->hooks[i].v[k].buf);
		}
		free(s->hooks[i].v);
	}
	free(s->hooks);
	free(s->regs);
	memset(s, 0, sizeof *s);
}

const struct amdgpu_sreg *amdgpu_snip_ref(const struct amdgpu_snip *s, const char *op, int *part)
{
	size_t n = strcspn(op, ".");
	*part = 0;
	if (op[n] == '.') {
		if (!strcmp(op + n, ".lo"))
			*part = 1;
		else if (!strcmp(op + n, ".hi"))
			*part = 2;
		else
			return NULL;
	} else if (op[n]) {
		return NULL;
	}
	for (int i = 0; i < s->n_regs; i++)
		if (strlen(s->regs[i].name) == n && strncmp(s->regs[i].name, op, n) == 0)
			return *part && s->regs[i].count != 2 ? NULL : &s->regs[i];
	return NULL;
}

int amdgpu_snip_dest_width(const char *mnemonic)
{
	for (const char *p = strchr(mnemonic, '_'); p; p = strchr(p + 1, '_')) {
		const char *w = p + 1;
		if ((w[0] == 'b' || w[0] == 'u' || w[0] == 'i' || w[0] == 'f') && isdigit((unsigned char)w[1])) {
			int bits = atoi(w + 1);
			return bits == 64 ? 2 : 1;
		}
	}
	return 1;
}
