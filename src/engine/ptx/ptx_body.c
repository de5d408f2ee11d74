/* Function bodies: splits the statements between a function's braces into
 * instructions, labels, directives and nested scopes, and instructions into
 * guard, opcode and operands. Line-terminated directives (.loc, .file) have
 * no ';'. "name : .callprototype ...;" is kept whole as one directive. */
#include "engine/ptx/ptx_int.h"

#include "common/cause.h"

#include <stdlib.h>
#include <string.h>

void ptx_stmt_clear(struct ptx_stmt *s)
{
	free(s->text);
	free(s->insn.pred);
	free(s->insn.opcode);
	for (int i = 0; i < s->insn.n_ops; i++)
		free(s->insn.ops[i].text);
	free(s->insn.ops);
	memset(s, 0, sizeof *s);
}

static int ptx_insn_add_op(struct ptx_insn *in, const char *s, size_t n)
{
	struct ptx_operand *ops = realloc(in->ops, (size_t)(in->n_ops + 1) * sizeof *ops);
	if (!ops)
		return -1;
	in->ops = ops;
	struct ptx_operand *op = &ops[in->n_ops];
	memset(op, 0, sizeof *op);
	op->text = ptx_dup_trim(s, n);
	if (!op->text)
		return -1;
	in->n_ops++;
	op->is_addr = op->text[0] == '[';
	op->is_vec = op->text[0] == '{';
	return 0;
}

/* Splits "a, [b+1], {c, d}, (e, f)" at top-level commas. */
static int ptx_insn_split_ops(struct ptx_insn *in, const char *s, size_t n, char **cause)
{
	size_t i = 0;
	while (i < n && ptx_is_space((unsigned char)s[i]))
		i++;
	if (i == n)
		return 0;
	int depth = 0;
	size_t start = 0;
	for (i = 0; i <= n; i++) {
		char c = i < n ? s[i] : ',';
		if (c == '(' || c == '[' || c == '{')
			depth++;
		else if ((c == ')' || c == ']' || c == '}') && depth > 0)
			depth--;
		if (c != ',' || (depth > 0 && i < n))
			continue;
		size_t a = start, b = i;
		while (a < b && ptx_is_space((unsigned char)s[a]))
			a++;
		if (a == b)
			return cause_set(cause, "empty operand in \"%.*s\"", (int)n, s);
		if (ptx_insn_add_op(in, s + start, i - start) < 0)
			return cause_set(cause, "out of memory");
		start = i + 1;
	}
	return 0;
}

static int ptx_is_opcode_char(int c)
{
	return (ptx_is_ident_char(c) && c != '%') || c == '.' || c == ':';
}

int ptx_insn_parse(const char *text, struct ptx_insn *insn, char **cause)
{
	memset(insn, 0, sizeof *insn);
	const char *p = text;
	while (ptx_is_space((unsigned char)*p))
		p++;
	if (*p == '@') {
		p++;
		while (ptx_is_space((unsigned char)*p))
			p++;
		const char *g = p;
		if (*p == '!')
			p++;
		while (ptx_is_space((unsigned char)*p))
			p++;
		const char *r = p;
		while (ptx_is_ident_char((unsigned char)*p))
			p++;
		if (p == r)
			return cause_set(cause, "guard '@' without a predicate in \"%s\"", text);
		size_t rn = (size_t)(p - r);
		insn->pred = malloc(rn + 2);
		if (!insn->pred)
			return cause_set(cause, "out of memory");
		size_t o = 0;
		if (*g == '!')
			insn->pred[o++] = '!';
		memcpy(insn->pred + o, r, rn);
		insn->pred[o + rn] = '\0';
		while (ptx_is_space((unsigned char)*p))
			p++;
	}
	const char *op = p;
	if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_'))
		goto bad_opcode;
	while (ptx_is_opcode_char((unsigned char)*p))
		p++;
	if (p[-1] == '.' || p[-1] == ':')
		goto bad_opcode;
	insn->opcode = ptx_dup_trim(op, (size_t)(p - op));
	if (!insn->opcode)
		goto oom;
	const char *end = strrchr(p, ';');
	if (!end)
		end = p + strlen(p);
	for (const char *q = end; *q; q++)
		if (*q != ';' && !ptx_is_space((unsigned char)*q))
			return cause_set(cause, "text after ';' in \"%s\"", text);
	if (p < end && !ptx_is_space((unsigned char)*p) && *p != '{' && *p != '[' && *p != '(' && *p != '-')
		goto bad_opcode;
	if (ptx_insn_split_ops(insn, p, (size_t)(end - p), cause) < 0)
		return -1;
	return 0;
bad_opcode:
	return cause_set(cause, "expected an opcode in \"%s\"", text);
oom:
	return cause_set(cause, "out of memory");
}

static int ptx_body_push(struct ptx_stmt **stmts, int *n, int *cap, struct ptx_stmt **out)
{
	if (*n == *cap) {
		int nc = *cap ? *cap * 2 : 16;
		struct ptx_stmt *s = realloc(*stmts, (size_t)nc * sizeof *s);
		if (!s)
			return -1;
		*stmts = s;
		*cap = nc;
	}
	*out = &(*stmts)[(*n)++];
	memset(*out, 0, sizeof **out);
	return 0;
}

/* One statement at buf[pos] (not whitespace, not a brace) into s; *pos after it. */
static int ptx_body_stmt(struct ptx_lex *lx, size_t *pos, struct ptx_stmt *s, char **cause)
{
	size_t p = *pos, end;
	char c = lx->buf[p];
	s->line = ptx_lex_line(lx, p);
	if (c == '.') {
		s->kind = PTX_DIRECTIVE;
		if (ptx_lex_is_word(lx, p, ".loc") || ptx_lex_is_word(lx, p, ".file")) {
			end = ptx_lex_line_end(lx, p);
			s->text = ptx_dup_trim(lx->buf + p, end - p);
			goto done;
		}
	} else if (c == '@') {
		s->kind = PTX_INSN;
	} else if (ptx_is_ident_start((unsigned char)c)) {
		size_t ie = ptx_lex_ident_end(lx, p);
		size_t q = ptx_lex_skip_ws(lx, ie);
		if (q < lx->len && lx->buf[q] == ':' && lx->buf[q + 1] != ':') {
			size_t r = ptx_lex_skip_ws(lx, q + 1);
			if (!ptx_lex_is_word(lx, r, ".callprototype")) {
				s->kind = PTX_LABEL;
				s->text = malloc(ie - p + 2);
				if (s->text) {
					memcpy(s->text, lx->buf + p, ie - p);
					memcpy(s->text + (ie - p), ":", 2);
				}
				end = q + 1;
				goto done;
			}
			s->kind = PTX_DIRECTIVE;
		} else {
			s->kind = PTX_INSN;
		}
	} else {
		return cause_set(cause, "line %d: unexpected '%c' in function body", s->line, c);
	}
	if (ptx_lex_stmt_end(lx, p, &end, cause) < 0)
		return -1;
	end++;
	s->text = ptx_dup_trim(lx->buf + p, end - p);
	if (s->text && s->kind == PTX_INSN && ptx_insn_parse(s->text, &s->insn, cause) < 0)
		return cause_wrap(cause, "line %d", s->line);
done:
	if (!s->text)
		return cause_set(cause, "out of memory");
	*pos = end;
	return 0;
}

int ptx_body_parse(struct ptx_lex *lx, size_t *pos, int until_eof,
		   struct ptx_stmt **stmts, int *n, char **cause)
{
	int cap = *n, depth = 0;
	size_t p = *pos;
	int open_line = ptx_lex_line(lx, p ? p - 1 : 0);
	for (;;) {
		p = ptx_lex_skip_ws(lx, p);
		if (p >= lx->len) {
			if (until_eof && depth == 0)
				break;
			return cause_set(cause, "line %d: unterminated '{' (body opened on line %d reaches end of text)",
					 ptx_lex_line(lx, p), open_line);
		}
		char c = lx->buf[p];
		if (c == '}' && depth == 0) {
			if (until_eof)
				return cause_set(cause, "line %d: unmatched '}'", ptx_lex_line(lx, p));
			p++;
			break;
		}
		struct ptx_stmt *s;
		if (ptx_body_push(stmts, n, &cap, &s) < 0)
			return cause_set(cause, "out of memory");
		if (c == '{' || c == '}') {
			s->kind = c == '{' ? PTX_OPEN : PTX_CLOSE;
			s->line = ptx_lex_line(lx, p);
			s->text = strdup(c == '{' ? "{" : "}");
			if (!s->text)
				return cause_set(cause, "out of memory");
			depth += c == '{' ? 1 : -1;
			p++;
			continue;
		}
		if (ptx_body_stmt(lx, &p, s, cause) < 0)
			return -1;
	}
	*pos = p;
	return 0;
}

int ptx_parse_stmts(const char *text, size_t len, int first_line,
		    struct ptx_stmt **stmts, int *n, char **cause)
{
	struct ptx_lex lx;
	if (ptx_lex_init(&lx, text, len, first_line, cause) < 0)
		return -1;
	size_t pos = 0;
	int r = ptx_body_parse(&lx, &pos, 1, stmts, n, cause);
	ptx_lex_done(&lx);
	return r;
}

static int ptx_label_named(const struct ptx_stmt *s, const char *name)
{
	size_t n = strlen(name);
	return s->kind == PTX_LABEL && !strncmp(s->text, name, n) && (s->text[n] == ':' || s->text[n] == 0);
}

int ptx_branch_target(const struct ptx_func *f, int i)
{
	const struct ptx_insn *x = &f->body[i].insn;
	if (f->body[i].kind != PTX_INSN || !x->opcode || !ptx_opcode_matches(x->opcode, "bra") || x->n_ops < 1)
		return -1;
	for (int l = 0; l < f->n_body; l++)
		if (ptx_label_named(&f->body[l], x->ops[x->n_ops - 1].text))
			return l;
	return -1;
}
