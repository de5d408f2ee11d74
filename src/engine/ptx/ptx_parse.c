/* PTX module parser (PTX ISA 8.x/9.x from nvcc 12-13, Triton, Numba): splits
 * the module into directives (.version, .target, .address_size, .file,
 * .section debug blocks, .alias, .pragma...), module variables (with their
 * initialisers) and functions (.entry/.func, declarations included), and
 * hands function bodies to ptx_body.c. Unknown module-level directives are
 * kept as text up to their ';'. What is skipped: comments only. */
#include "engine/ptx/ptx_int.h"

#include "common/cause.h"

#include <stdlib.h>
#include <string.h>

struct ptx_parser {
	struct ptx_lex lx;
	struct ptx_module *m;
	int cap;
	int lazy;          /* record body positions instead of parsing bodies */
	size_t *body_pos;  /* lazy: per item, offset just after the body's '{' */
};

void ptx_func_free(struct ptx_func *f)
{
	if (!f)
		return;
	free(f->name);
	free(f->prefix);
	for (int i = 0; i < f->n_params; i++)
		free(f->params[i]);
	free(f->params);
	free(f->suffix);
	for (int i = 0; i < f->n_body; i++)
		ptx_stmt_clear(&f->body[i]);
	free(f->body);
	free(f);
}

void ptx_top_clear(struct ptx_top *t)
{
	free(t->text);
	free(t->name);
	free(t->space);
	ptx_func_free(t->func);
	memset(t, 0, sizeof *t);
}

void ptx_free(struct ptx_module *m)
{
	if (!m)
		return;
	for (int i = 0; i < m->n_items; i++)
		ptx_top_clear(&m->items[i]);
	free(m->items);
	free(m->target);
	free(m);
}

static struct ptx_top *ptx_parser_push(struct ptx_parser *ps, int line)
{
	struct ptx_module *m = ps->m;
	if (m->n_items == ps->cap) {
		int nc = ps->cap ? ps->cap * 2 : 64;
		struct ptx_top *it = realloc(m->items, (size_t)nc * sizeof *it);
		if (!it)
			return NULL;
		m->items = it;
		if (ps->lazy) {
			size_t *bp = realloc(ps->body_pos, (size_t)nc * sizeof *bp);
			if (!bp)
				return NULL;
			ps->body_pos = bp;
		}
		ps->cap = nc;
	}
	struct ptx_top *t = &m->items[m->n_items];
	memset(t, 0, sizeof *t);
	if (ps->lazy)
		ps->body_pos[m->n_items] = 0;
	m->n_items++;
	t->line = line;
	return t;
}

static const char *const ptx_spaces[] = {
	".global", ".const", ".shared", ".local", ".tex", ".texref", ".surfref",
	".samplerref", ".param", NULL,
};

static int ptx_is_space_word(const struct ptx_lex *lx, size_t p)
{
	for (int i = 0; ptx_spaces[i]; i++)
		if (ptx_lex_is_word(lx, p, ptx_spaces[i]))
			return i + 1;
	return 0;
}

/* Reads the values .version/.target/.address_size carry. */
static int ptx_parse_header_dir(struct ptx_parser *ps, const char *text)
{
	struct ptx_module *m = ps->m;
	if (!strncmp(text, ".version", 8)) {
		char *e;
		m->ver_major = (int)strtol(text + 8, &e, 10);
		m->ver_minor = *e == '.' ? (int)strtol(e + 1, NULL, 10) : 0;
	} else if (!strncmp(text, ".target", 7)) {
		free(m->target);
		m->target = ptx_dup_fold(text + 7, strlen(text + 7));
		if (!m->target)
			return -1;
	} else if (!strncmp(text, ".address_size", 13)) {
		m->address_size = (int)strtol(text + 13, NULL, 10);
	}
	return 0;
}

/* A module-level directive at pos: line-terminated ones, .section blocks,
 * and the rest up to ';'. */
static int ptx_parse_directive(struct ptx_parser *ps, size_t *pos, struct ptx_top *t, char **cause)
{
	struct ptx_lex *lx = &ps->lx;
	size_t p = *pos, end;
	t->kind = PTX_TOP_DIRECTIVE;
	if (ptx_lex_is_word(lx, p, ".version") || ptx_lex_is_word(lx, p, ".target") ||
	    ptx_lex_is_word(lx, p, ".address_size") || ptx_lex_is_word(lx, p, ".file") ||
	    ptx_lex_is_word(lx, p, ".loc")) {
		end = ptx_lex_line_end(lx, p);
	} else if (ptx_lex_is_word(lx, p, ".section")) {
		end = ptx_lex_line_end(lx, p);
		size_t b = ptx_lex_skip_ws(lx, end);
		if (b < lx->len && lx->buf[b] == '{') {
			if (ptx_lex_match(lx, b, &end, cause) < 0)
				return -1;
			end++;
		}
	} else {
		if (ptx_lex_stmt_end(lx, p, &end, cause) < 0)
			return -1;
		end++;
	}
	t->text = ptx_dup_trim(lx->buf + p, end - p);
	if (!t->text || ptx_parse_header_dir(ps, t->text) < 0)
		return cause_set(cause, "out of memory");
	*pos = end;
	return 0;
}

/* The declared name of a variable: the last plain identifier before the
 * first '[', '<', '=' or ';' outside parentheses (".attribute(...)"). */
static int ptx_var_name(struct ptx_lex *lx, size_t p, size_t end, struct ptx_top *t)
{
	size_t ns = 0, ne = 0;
	while (p < end) {
		char c = lx->buf[p];
		if (c == '[' || c == '<' || c == '=' || c == ';')
			break;
		if (c == '(') {
			size_t close;
			if (ptx_lex_match(lx, p, &close, NULL) < 0)
				break;
			p = close + 1;
		} else if (c == '.' || (c >= '0' && c <= '9')) {
			p = ptx_lex_ident_end(lx, p + 1);
		} else if (ptx_is_ident_start((unsigned char)c)) {
			ns = p;
			p = ne = ptx_lex_ident_end(lx, p);
		} else {
			p++;
		}
	}
	if (ne == ns)
		return -1;
	t->name = strndup(lx->buf + ns, ne - ns);
	return t->name ? 0 : -2;
}

static int ptx_parse_var(struct ptx_parser *ps, size_t *pos, size_t space_at, struct ptx_top *t, char **cause)
{
	struct ptx_lex *lx = &ps->lx;
	size_t p = *pos, end;
	t->kind = PTX_TOP_VAR;
	if (ptx_lex_stmt_end(lx, p, &end, cause) < 0)
		return -1;
	int r = ptx_var_name(lx, p, end, t);
	if (r == -1)
		return cause_set(cause, "line %d: variable declaration without a name", t->line);
	size_t se = ptx_lex_ident_end(lx, space_at + 1);
	t->space = strndup(lx->buf + space_at, se - space_at);
	t->text = ptx_dup_trim(lx->buf + p, end + 1 - p);
	if (r < 0 || !t->space || !t->text)
		return cause_set(cause, "out of memory");
	*pos = end + 1;
	return 0;
}

/* Splits "(a, b, c)" at buf[open..close] into trimmed, folded parameters. */
static int ptx_parse_params(struct ptx_lex *lx, size_t open, size_t close, struct ptx_func *f, char **cause)
{
	size_t p = open + 1;
	f->has_param_list = 1;
	if (ptx_lex_skip_ws(lx, p) == close)
		return 0;
	while (p <= close) {
		size_t e = p;
		int depth = 0;
		for (; e < close; e++) {
			char c = lx->buf[e];
			depth += (c == '(' || c == '[' || c == '{') - (c == ')' || c == ']' || c == '}');
			if (c == ',' && depth == 0)
				break;
		}
		char *prm = ptx_dup_fold(lx->buf + p, e - p);
		if (!prm)
			return cause_set(cause, "out of memory");
		if (!*prm) {
			free(prm);
			return cause_set(cause, "line %d: empty parameter in the list of %s",
					 ptx_lex_line(lx, p), f->name);
		}
		char **np = realloc(f->params, (size_t)(f->n_params + 1) * sizeof *np);
		if (!np) {
			free(prm);
			return cause_set(cause, "out of memory");
		}
		f->params = np;
		f->params[f->n_params++] = prm;
		p = e + 1;
	}
	return 0;
}

/* Performance directives between the parameter list and the body; a
 * ".pragma "...";" among them keeps its ';'. Stops at '{' or ';'. */
static int ptx_parse_suffix(struct ptx_lex *lx, size_t *pos, struct ptx_func *f, char **cause)
{
	size_t p = *pos, start = p;
	for (;;) {
		if (p >= lx->len)
			return cause_set(cause, "line %d: header of %s has no body or ';'", f->line, f->name);
		char c = lx->buf[p];
		if (c == '{' || c == ';')
			break;
		if (c == '}' || c == ')' || c == ']')
			return cause_set(cause, "line %d: unexpected '%c' in the header of %s",
					 ptx_lex_line(lx, p), c, f->name);
		if (c == '.' && ptx_lex_is_word(lx, p, ".pragma")) {
			size_t semi;
			if (ptx_lex_stmt_end(lx, p, &semi, cause) < 0)
				return -1;
			p = semi + 1;
		} else if (c == '"') {
			for (p++; p < lx->len && lx->buf[p] != '"'; p++)
				p += lx->buf[p] == '\\';
			p++;
		} else {
			p++;
		}
	}
	f->suffix = ptx_dup_fold(lx->buf + start, p - start);
	if (!f->suffix)
		return cause_set(cause, "out of memory");
	*pos = p;
	return 0;
}

/* A function: kw_at is the ".entry"/".func" word, *pos the statement start. */
static int ptx_parse_func(struct ptx_parser *ps, size_t *pos, size_t kw_at, struct ptx_top *t, char **cause)
{
	struct ptx_lex *lx = &ps->lx;
	struct ptx_func *f = calloc(1, sizeof *f);
	if (!f)
		return cause_set(cause, "out of memory");
	t->kind = PTX_TOP_FUNC;
	t->func = f;
	f->line = t->line;
	f->is_entry = lx->buf[kw_at + 1] == 'e';
	size_t p = ptx_lex_skip_ws(lx, kw_at + (f->is_entry ? 6 : 5)), close;
	if (p < lx->len && lx->buf[p] == '(' && !f->is_entry) {
		if (ptx_lex_match(lx, p, &close, cause) < 0)
			return -1;
		p = ptx_lex_skip_ws(lx, close + 1);
	}
	size_t ne = ptx_lex_ident_end(lx, p);
	if (ne == p || !ptx_is_ident_start((unsigned char)lx->buf[p]))
		return cause_set(cause, "line %d: function without a name", ptx_lex_line(lx, p));
	f->name = strndup(lx->buf + p, ne - p);
	t->name = strndup(lx->buf + p, ne - p);
	f->prefix = ptx_dup_fold(lx->buf + *pos, ne - *pos);
	if (!f->name || !t->name || !f->prefix)
		return cause_set(cause, "out of memory");
	p = ptx_lex_skip_ws(lx, ne);
	if (p < lx->len && lx->buf[p] == '(') {
		if (ptx_lex_match(lx, p, &close, cause) < 0 || ptx_parse_params(lx, p, close, f, cause) < 0)
			return -1;
		p = close + 1;
	}
	if (ptx_parse_suffix(lx, &p, f, cause) < 0)
		return -1;
	if (lx->buf[p] == ';') {
		f->is_decl = 1;
		*pos = p + 1;
		return 0;
	}
	p++; /* '{' */
	if (ps->lazy) {
		ps->body_pos[t - ps->m->items] = p;
		if (ptx_lex_skip_block(lx, p - 1, &close, cause) < 0)
			return cause_wrap(cause, "body of %s", f->name);
		*pos = close + 1;
		return 0;
	}
	if (ptx_body_parse(lx, &p, 0, &f->body, &f->n_body, cause) < 0)
		return cause_wrap(cause, "in %s", f->name);
	*pos = p;
	return 0;
}

static int ptx_parse_top(struct ptx_parser *ps, size_t *pos, char **cause)
{
	struct ptx_lex *lx = &ps->lx;
	size_t p = *pos;
	int line = ptx_lex_line(lx, p);
	if (lx->buf[p] != '.')
		return cause_set(cause, "line %d: unexpected '%c' at module scope", line, lx->buf[p]);
	struct ptx_top *t = ptx_parser_push(ps, line);
	if (!t)
		return cause_set(cause, "out of memory");
	/* linkage and other attributes come first: .visible .extern .weak .common */
	size_t w = p;
	while (ptx_lex_is_word(lx, w, ".visible") || ptx_lex_is_word(lx, w, ".extern") ||
	       ptx_lex_is_word(lx, w, ".weak") || ptx_lex_is_word(lx, w, ".common"))
		w = ptx_lex_skip_ws(lx, ptx_lex_ident_end(lx, w + 1));
	if (ptx_lex_is_word(lx, w, ".entry") || ptx_lex_is_word(lx, w, ".func"))
		return ptx_parse_func(ps, pos, w, t, cause);
	if (ptx_is_space_word(lx, w))
		return ptx_parse_var(ps, pos, w, t, cause);
	return ptx_parse_directive(ps, pos, t, cause);
}

static int ptx_parse_run(struct ptx_parser *ps, const char *text, size_t len, char **cause)
{
	if (ptx_lex_init(&ps->lx, text, len, 1, cause) < 0)
		return -1;
	ps->m = calloc(1, sizeof *ps->m);
	if (!ps->m)
		return cause_set(cause, "out of memory");
	size_t pos = 0;
	for (;;) {
		pos = ptx_lex_skip_ws(&ps->lx, pos);
		if (pos >= ps->lx.len)
			return 0;
		if (ptx_parse_top(ps, &pos, cause) < 0)
			return -1;
	}
}

int ptx_parse(const char *text, size_t len, struct ptx_module **out, char **cause)
{
	struct ptx_parser ps;
	memset(&ps, 0, sizeof ps);
	*out = NULL;
	int r = ptx_parse_run(&ps, text, len, cause);
	ptx_lex_done(&ps.lx);
	if (r < 0) {
		ptx_free(ps.m);
		return -1;
	}
	*out = ps.m;
	return 0;
}

/* Parses the body of item idx on first reach (ptx_reach's loader). */
static int ptx_parse_lazy_body(void *ctx, int idx, char **cause)
{
	struct ptx_parser *ps = ctx;
	size_t p = ps->body_pos[idx];
	struct ptx_func *f = ps->m->items[idx].func;
	if (!p || !f || f->body)
		return 0;
	if (ptx_body_parse(&ps->lx, &p, 0, &f->body, &f->n_body, cause) < 0)
		return cause_wrap(cause, "in %s", f->name);
	return 0;
}

int ptx_parse_kernel(const char *text, size_t len, const char *kernel,
		     struct ptx_module **out, char **cause)
{
	struct ptx_parser ps;
	memset(&ps, 0, sizeof ps);
	ps.lazy = 1;
	*out = NULL;
	int r = ptx_parse_run(&ps, text, len, cause);
	if (r == 0)
		r = ptx_prune_with(ps.m, kernel, ptx_parse_lazy_body, &ps, cause);
	ptx_lex_done(&ps.lx);
	free(ps.body_pos);
	if (r < 0) {
		ptx_free(ps.m);
		return -1;
	}
	*out = ps.m;
	return 0;
}
