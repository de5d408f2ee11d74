/* TOML reader: a recursive-descent parser over the whole text that builds the
 * node tree of toml.h. Position tracking (line, col) is done byte by byte in
 * tp_next so that every node and every error can name where it was written.
 * The table (re)definition rules follow TOML 1.0 section "Table":
 *  - [a.b] may define a table that an earlier [a.b.c] created implicitly,
 *    but no table is defined twice by headers;
 *  - tables made by dotted keys (a.b = 1) cannot be reopened by a [header],
 *    though a header may define sub-tables beneath them;
 *  - inline tables and static arrays are sealed. */
#include "common/hexdigit.h"
#include "common/toml.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"
#include "common/strbuf.h"

struct tp {
	const char *s;
	size_t len, pos;
	int line, col;   /* of s[pos] */
	const char *path;
	char **cause;
	int depth;       /* open arrays / inline tables */
	int nodes;       /* allocated so far, against TOML_MAX_NODES */
	struct toml_node *root, *cur;
};

struct keypart {
	char *s;
	int line, col;
};

__attribute__((format(printf, 4, 5)))
static int tp_err(struct tp *P, int line, int col, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return cause_set(P->cause, "%s:%d:%d: %s", P->path, line, col, msg);
}

static int tp_peek(const struct tp *P, size_t k)
{
	return P->pos + k < P->len ? (unsigned char)P->s[P->pos + k] : 0;
}

static int tp_eof(const struct tp *P)
{
	return P->pos >= P->len;
}

/* Consumes one byte; columns advance once per UTF-8 code point. */
static void tp_next(struct tp *P)
{
	unsigned char c = (unsigned char)P->s[P->pos++];
	if (c == '\n') {
		P->line++;
		P->col = 1;
	} else if ((c & 0xC0) != 0x80) {
		P->col++;
	}
}

static void tp_skip(struct tp *P, int n)
{
	while (n-- > 0 && !tp_eof(P))
		tp_next(P);
}

static int tp_at_newline(const struct tp *P)
{
	return tp_peek(P, 0) == '\n' || (tp_peek(P, 0) == '\r' && tp_peek(P, 1) == '\n');
}

static void tp_eat_newline(struct tp *P)
{
	if (tp_peek(P, 0) == '\r')
		tp_next(P);
	tp_next(P);
}

static void tp_skip_ws(struct tp *P)
{
	while (tp_peek(P, 0) == ' ' || tp_peek(P, 0) == '\t')
		tp_next(P);
}

static int is_control(int c)
{
	return (c < 0x20 && c != '\t') || c == 0x7F;
}

static int tp_skip_comment(struct tp *P)
{
	if (tp_peek(P, 0) != '#')
		return 0;
	while (!tp_eof(P) && !tp_at_newline(P)) {
		if (is_control(tp_peek(P, 0)))
			return tp_err(P, P->line, P->col, "control character U+%04X in a comment", tp_peek(P, 0));
		tp_next(P);
	}
	return 0;
}

/* Whitespace, comments and newlines: the filler allowed inside arrays. */
static int tp_skip_filler(struct tp *P)
{
	for (;;) {
		tp_skip_ws(P);
		if (tp_skip_comment(P) < 0)
			return -1;
		if (!tp_at_newline(P))
			return 0;
		tp_eat_newline(P);
	}
}

/* --- nodes ------------------------------------------------------------ */

static struct toml_node *node_new(struct tp *P, enum toml_type type, int line, int col)
{
	if (++P->nodes > TOML_MAX_NODES) {
		tp_err(P, line, col, "more than %d values in one document", TOML_MAX_NODES);
		return NULL;
	}
	struct toml_node *n = calloc(1, sizeof *n);
	if (!n) {
		tp_err(P, line, col, "out of memory");
		return NULL;
	}
	n->type = type;
	n->line = line;
	n->col = col;
	return n;
}

void toml_free(struct toml_node *n)
{
	if (!n)
		return;
	for (int i = 0; i < n->n_items; i++)
		toml_free(n->items[i]);
	free(n->items);
	free(n->key);
	if (n->type == TOML_STRING) {
		free(n->v.s);
		free(n->str_pos);
	}
	free(n);
}

static int node_append(struct tp *P, struct toml_node *parent, struct toml_node *child)
{
	if (parent->type == TOML_TABLE && parent->n_items >= TOML_MAX_TABLE_KEYS)
		return tp_err(P, child->key_line, child->key_col, "too many keys in one table (limit %d)",
			      TOML_MAX_TABLE_KEYS);
	if (parent->n_items == parent->cap_items) {
		int cap = parent->cap_items ? parent->cap_items * 2 : 8;
		struct toml_node **items = realloc(parent->items, (size_t)cap * sizeof *items);
		if (!items)
			return tp_err(P, child->line, child->col, "out of memory");
		parent->items = items;
		parent->cap_items = cap;
	}
	parent->items[parent->n_items++] = child;
	return 0;
}

static struct toml_node *table_find(const struct toml_node *t, const char *key)
{
	for (int i = 0; i < t->n_items; i++)
		if (strcmp(t->items[i]->key, key) == 0)
			return t->items[i];
	return NULL;
}

/* Adds `child` to table `t` under the key part (taking the key string). */
static int table_add(struct tp *P, struct toml_node *t, struct keypart *k, struct toml_node *child)
{
	child->key = k->s;
	child->key_line = k->line;
	child->key_col = k->col;
	k->s = NULL;
	return node_append(P, t, child);
}

const struct toml_node *toml_get(const struct toml_node *t, const char *key)
{
	if (!t || t->type != TOML_TABLE)
		return NULL;
	return table_find(t, key);
}

const char *toml_type_name(enum toml_type t)
{
	switch (t) {
	case TOML_TABLE: return "table";
	case TOML_ARRAY: return "array";
	case TOML_STRING: return "string";
	case TOML_INT: return "integer";
	case TOML_FLOAT: return "float";
	case TOML_BOOL: return "boolean";
	}
	return "?";
}

/* --- strings ---------------------------------------------------------- */

static void utf8_put(struct strbuf *sb, uint32_t cp)
{
	char b[4];
	size_t n;
	if (cp < 0x80) {
		b[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		b[0] = (char)(0xC0 | (cp >> 6));
		b[1] = (char)(0x80 | (cp & 0x3F));
		n = 2;
	} else if (cp < 0x10000) {
		b[0] = (char)(0xE0 | (cp >> 12));
		b[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		b[2] = (char)(0x80 | (cp & 0x3F));
		n = 3;
	} else {
		b[0] = (char)(0xF0 | (cp >> 18));
		b[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
		b[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
		b[3] = (char)(0x80 | (cp & 0x3F));
		n = 4;
	}
	strbuf_append(sb, b, n);
}

/* \uXXXX or \UXXXXXXXX; P sits on the 'u'/'U'. (line, col) = the backslash. */
static int parse_unicode_escape(struct tp *P, struct strbuf *sb, int line, int col)
{
	int digits = tp_peek(P, 0) == 'u' ? 4 : 8;
	uint32_t cp = 0;
	tp_next(P);
	for (int i = 0; i < digits; i++) {
		int h = hex_digit(tp_peek(P, 0));
		if (h < 0)
			return tp_err(P, line, col, "\\%c escape needs %d hex digits", digits == 4 ? 'u' : 'U', digits);
		cp = cp * 16 + (uint32_t)h;
		tp_next(P);
	}
	if (cp == 0)
		return tp_err(P, line, col, "\\u0000 (NUL) is not supported in strings");
	if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
		return tp_err(P, line, col, "\\u escape U+%04X is not a Unicode scalar value", (unsigned)cp);
	utf8_put(sb, cp);
	return 0;
}

/* Line-ending backslash in """ strings: P sits after the '\'. Trims the
 * whitespace and newlines up to the next visible character. */
static int skip_line_continuation(struct tp *P, int line, int col)
{
	tp_skip_ws(P);
	if (!tp_at_newline(P))
		return tp_err(P, line, col, "invalid escape: a backslash followed by spaces must end the line");
	while (tp_peek(P, 0) == ' ' || tp_peek(P, 0) == '\t' || tp_at_newline(P)) {
		if (tp_at_newline(P))
			tp_eat_newline(P);
		else
			tp_next(P);
	}
	return 0;
}

static int parse_escape(struct tp *P, struct strbuf *sb, int multiline)
{
	int line = P->line, col = P->col;
	tp_next(P); /* the backslash */
	int e = tp_peek(P, 0);
	const char *simple = "b\bt\tn\nf\fr\r\"\"\\\\";
	if (multiline && (e == ' ' || e == '\t' || tp_at_newline(P)))
		return skip_line_continuation(P, line, col);
	if (e == 'u' || e == 'U')
		return parse_unicode_escape(P, sb, line, col);
	for (const char *q = simple; e && *q; q += 2) {
		if (*q == e) {
			strbuf_append(sb, q + 1, 1);
			tp_next(P);
			return 0;
		}
	}
	if (e >= 0x20 && e < 0x7F)
		return tp_err(P, line, col, "invalid escape sequence '\\%c'", e);
	return tp_err(P, line, col, "invalid escape sequence");
}

/* Handles a run of quote characters inside a multi-line string; returns 1
 * when the run closes the string, 0 when it was content, -1 on error. */
static int ml_quotes(struct tp *P, struct strbuf *sb, char q)
{
	int n = 0;
	while (tp_peek(P, (size_t)n) == q)
		n++;
	if (n < 3) {
		strbuf_append(sb, q == '"' ? "\"\"" : "''", (size_t)n);
		tp_skip(P, n);
		return 0;
	}
	if (n > 5)
		return tp_err(P, P->line, P->col, "too many quotes: at most two may stand before the closing %c%c%c",
			      q, q, q);
	strbuf_append(sb, q == '"' ? "\"\"" : "''", (size_t)(n - 3));
	tp_skip(P, n);
	return 1;
}

/* Positions for the bytes sb gained since `from`: all at (line, col). */
static void pos_fill(struct strbuf *pb, size_t from, size_t to, int line, int col)
{
	struct toml_pos at = { line, col };
	for (size_t i = from; pb && i < to; i++)
		strbuf_append(pb, (const char *)&at, sizeof at);
}

/* Any of the four string kinds; P sits on the opening quote. Sets the node's
 * str_kind and str_line; with pos, also the position of every byte. */
static int parse_string(struct tp *P, char **out, enum toml_str_kind *kind, int *str_line, struct toml_pos **pos)
{
	int line = P->line, col = P->col;
	char q = (char)tp_peek(P, 0);
	int multiline = tp_peek(P, 1) == q && tp_peek(P, 2) == q;
	int escapes = q == '"';
	struct strbuf sb;
	*kind = escapes ? (multiline ? TOML_STR_ML_BASIC : TOML_STR_BASIC)
			: (multiline ? TOML_STR_ML_LITERAL : TOML_STR_LITERAL);
	tp_skip(P, multiline ? 3 : 1);
	if (multiline && tp_at_newline(P))
		tp_eat_newline(P);
	*str_line = P->line;
	strbuf_init(&sb);
	strbuf_append(&sb, "", 0); /* NUL-terminated even when empty */
	struct strbuf pbuf, *pb = pos ? &pbuf : NULL;
	if (pb)
		strbuf_init(pb);
	for (;;) {
		int c = tp_peek(P, 0);
		int at_line = P->line, at_col = P->col;
		size_t from = sb.len;
		if (tp_eof(P)) {
			tp_err(P, line, col, "unterminated string");
			goto fail;
		}
		if (c == q && multiline) {
			int r = ml_quotes(P, &sb, q);
			if (r < 0)
				goto fail;
			if (r == 1) { /* quotes before the closing three are content */
				pos_fill(pb, from, sb.len, at_line, at_col);
				pos_fill(pb, 0, 1, at_line, at_col + (int)(sb.len - from));
				break;
			}
		} else if (c == q) {
			pos_fill(pb, 0, 1, at_line, at_col);
			tp_next(P);
			break;
		} else if (c == '\\' && escapes) {
			if (parse_escape(P, &sb, multiline) < 0)
				goto fail;
		} else if (tp_at_newline(P)) {
			if (!multiline) {
				tp_err(P, P->line, P->col, "newline in a one-line string (use %c%c%c for text over several lines)",
				       q, q, q);
				goto fail;
			}
			strbuf_append(&sb, "\n", 1);
			tp_eat_newline(P);
		} else if (is_control(c)) {
			tp_err(P, P->line, P->col, "control character U+%04X in a string%s", c,
			       escapes ? "; write it as an escape" : "");
			goto fail;
		} else {
			strbuf_append(&sb, P->s + P->pos, 1);
			tp_next(P);
		}
		pos_fill(pb, from, sb.len, at_line, at_col);
	}
	*out = strbuf_finish(&sb, NULL);
	if (pb)
		*pos = (struct toml_pos *)strbuf_finish(pb, NULL);
	if (!*out || (pb && !*pos)) {
		free(*out);
		*out = NULL;
		if (pb) {
			free(*pos);
			*pos = NULL;
		}
		return tp_err(P, line, col, "out of memory");
	}
	return 0;
fail:
	strbuf_done(&sb);
	if (pb)
		strbuf_done(pb);
	return -1;
}

/* --- keys ------------------------------------------------------------- */

static int is_bare(int c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

static void keyparts_free(struct keypart *k, int n)
{
	for (int i = 0; i < n; i++)
		free(k[i].s);
}

static int parse_key_part(struct tp *P, struct keypart *k)
{
	int c = tp_peek(P, 0);
	k->line = P->line;
	k->col = P->col;
	if (c == '"' || c == '\'') {
		enum toml_str_kind kind;
		int sl;
		if (tp_peek(P, 1) == c && tp_peek(P, 2) == c)
			return tp_err(P, k->line, k->col, "a multi-line string cannot be a key");
		return parse_string(P, &k->s, &kind, &sl, NULL);
	}
	if (!is_bare(c)) {
		if (tp_eof(P) || tp_at_newline(P))
			return tp_err(P, k->line, k->col, "expected a key before the end of the line");
		if (c >= 0x20 && c < 0x7F)
			return tp_err(P, k->line, k->col, "expected a key, found '%c'", c);
		return tp_err(P, k->line, k->col, "expected a key");
	}
	size_t start = P->pos;
	while (is_bare(tp_peek(P, 0)))
		tp_next(P);
	k->s = strndup(P->s + start, P->pos - start);
	if (!k->s)
		return tp_err(P, k->line, k->col, "out of memory");
	return 0;
}

/* A possibly dotted key: a.b."c d". On failure nothing needs freeing. */
static int parse_key(struct tp *P, struct keypart *parts, int *n)
{
	*n = 0;
	for (;;) {
		tp_skip_ws(P);
		if (*n == TOML_MAX_DEPTH) {
			keyparts_free(parts, *n);
			return tp_err(P, P->line, P->col, "key has more than %d dotted parts", TOML_MAX_DEPTH);
		}
		if (parse_key_part(P, &parts[*n]) < 0) {
			keyparts_free(parts, *n);
			return -1;
		}
		(*n)++;
		tp_skip_ws(P);
		if (tp_peek(P, 0) != '.')
			return 0;
		tp_next(P);
	}
}

/* --- scalars ---------------------------------------------------------- */

static int is_num_char(int c)
{
	return is_bare(c) || c == '+' || c == '.' || c == ':';
}

/* Copies digits of `tok` (from i) into buf, checking that underscores sit
 * between two digits of the given base; returns the index after them. */
static size_t take_digits(const char *tok, size_t i, int base, char *buf, size_t *bl, int *ok)
{
	int prev_digit = 0;
	size_t start = i;
	for (;; i++) {
		int c = tok[i];
		int d = hex_digit(c);
		if (c == '_') {
			if (!prev_digit || !(tok[i + 1] && hex_digit(tok[i + 1]) >= 0 && hex_digit(tok[i + 1]) < base))
				*ok = 0;
			prev_digit = 0;
			continue;
		}
		if (d < 0 || d >= base)
			break;
		buf[(*bl)++] = (char)c;
		prev_digit = 1;
	}
	if (i == start)
		*ok = 0;
	return i;
}

static int parse_based_int(struct tp *P, const char *tok, int line, int col, struct toml_node *n)
{
	int base = tok[1] == 'x' ? 16 : tok[1] == 'o' ? 8 : 2;
	char buf[128];
	size_t bl = 0;
	int ok = 1;
	size_t end = take_digits(tok, 2, base, buf, &bl, &ok);
	if (!ok || tok[end])
		return tp_err(P, line, col, "invalid number '%s'", tok);
	uint64_t v = 0;
	for (size_t i = 0; i < bl; i++) {
		uint64_t d = (uint64_t)hex_digit(buf[i]);
		if (v > (UINT64_C(0x7FFFFFFFFFFFFFFF) - d) / (uint64_t)base)
			return tp_err(P, line, col, "integer %s is out of range (64-bit signed)", tok);
		v = v * (uint64_t)base + d;
	}
	n->type = TOML_INT;
	n->v.i = (int64_t)v;
	return 0;
}

/* Decimal integer or float, per the TOML grammar (no leading zeros). */
static int parse_decimal(struct tp *P, const char *tok, int line, int col, struct toml_node *n)
{
	char buf[128];
	size_t bl = 0, i = 0;
	int ok = 1, is_float = 0;
	if (tok[i] == '+' || tok[i] == '-')
		buf[bl++] = tok[i++];
	size_t int_start = bl;
	i = take_digits(tok, i, 10, buf, &bl, &ok);
	if (bl - int_start > 1 && buf[int_start] == '0')
		return tp_err(P, line, col, "invalid number '%s' (leading zeros are not allowed)", tok);
	if (tok[i] == '.') {
		is_float = 1;
		buf[bl++] = tok[i++];
		i = take_digits(tok, i, 10, buf, &bl, &ok);
	}
	if (tok[i] == 'e' || tok[i] == 'E') {
		is_float = 1;
		buf[bl++] = tok[i++];
		if (tok[i] == '+' || tok[i] == '-')
			buf[bl++] = tok[i++];
		i = take_digits(tok, i, 10, buf, &bl, &ok);
	}
	buf[bl] = 0;
	if (!ok || tok[i])
		return tp_err(P, line, col, "invalid number '%s'", tok);
	errno = 0;
	if (is_float) {
		n->type = TOML_FLOAT;
		n->v.f = strtod(buf, NULL);
	} else {
		n->type = TOML_INT;
		n->v.i = strtoll(buf, NULL, 10);
	}
	if (errno == ERANGE && !is_float)
		return tp_err(P, line, col, "integer %s is out of range (64-bit signed)", tok);
	return 0;
}

static int looks_like_date(const char *tok)
{
	if (strchr(tok, ':'))
		return 1;
	for (int i = 0; i < 4; i++)
		if (tok[i] < '0' || tok[i] > '9')
			return 0;
	return tok[4] == '-';
}

static int parse_number(struct tp *P, struct toml_node *n)
{
	char tok[100];
	size_t tl = 0;
	int line = P->line, col = P->col;
	while (is_num_char(tp_peek(P, 0))) {
		if (tl + 1 >= sizeof tok)
			return tp_err(P, line, col, "number is too long");
		tok[tl++] = (char)tp_peek(P, 0);
		tp_next(P);
	}
	tok[tl] = 0;
	if (looks_like_date(tok))
		return tp_err(P, line, col, "dates and times are not supported");
	const char *t = tok + (tok[0] == '+' || tok[0] == '-');
	if (strcmp(t, "inf") == 0 || strcmp(t, "nan") == 0) {
		n->type = TOML_FLOAT;
		n->v.f = t[0] == 'i' ? (tok[0] == '-' ? -1.0 / 0.0 : 1.0 / 0.0) : __builtin_nan("");
		return 0;
	}
	if (tok[0] == '0' && (tok[1] == 'x' || tok[1] == 'o' || tok[1] == 'b'))
		return parse_based_int(P, tok, line, col, n);
	if (!(t[0] >= '0' && t[0] <= '9'))
		return tp_err(P, line, col, "expected a value (strings need quotes)");
	return parse_decimal(P, tok, line, col, n);
}

static int parse_bool(struct tp *P, struct toml_node *n)
{
	int line = P->line, col = P->col;
	const char *w = tp_peek(P, 0) == 't' ? "true" : "false";
	size_t wl = strlen(w);
	if (P->len - P->pos < wl || memcmp(P->s + P->pos, w, wl) != 0 || is_num_char(tp_peek(P, wl)))
		return tp_err(P, line, col, "expected a value (strings need quotes)");
	tp_skip(P, (int)wl);
	n->type = TOML_BOOL;
	n->v.b = w[0] == 't';
	return 0;
}

/* --- compound values -------------------------------------------------- */

static int parse_value(struct tp *P, struct toml_node **out);
static int insert_dotted(struct tp *P, struct toml_node *t, struct keypart *parts, int n, struct toml_node *v);

static int parse_array(struct tp *P, struct toml_node *arr)
{
	arr->type = TOML_ARRAY;
	tp_next(P); /* '[' */
	for (;;) {
		if (tp_skip_filler(P) < 0)
			return -1;
		if (tp_peek(P, 0) == ']')
			break;
		struct toml_node *item;
		if (parse_value(P, &item) < 0)
			return -1;
		if (node_append(P, arr, item) < 0) {
			toml_free(item);
			return -1;
		}
		if (tp_skip_filler(P) < 0)
			return -1;
		if (tp_peek(P, 0) == ',') {
			tp_next(P);
			continue;
		}
		if (tp_peek(P, 0) == ']')
			break;
		if (tp_eof(P))
			return tp_err(P, arr->line, arr->col, "unterminated array");
		return tp_err(P, P->line, P->col, "expected ',' or ']' in array");
	}
	tp_next(P);
	arr->sealed = 1;
	return 0;
}

/* key = value, inserted into table t (dotted parts create sub-tables). */
static int parse_keyval(struct tp *P, struct toml_node *t)
{
	struct keypart parts[TOML_MAX_DEPTH];
	int n;
	if (parse_key(P, parts, &n) < 0)
		return -1;
	tp_skip_ws(P);
	if (tp_peek(P, 0) != '=') {
		tp_err(P, P->line, P->col, "expected '=' after key '%s'", parts[n - 1].s);
		keyparts_free(parts, n);
		return -1;
	}
	tp_next(P);
	tp_skip_ws(P);
	struct toml_node *v;
	if (parse_value(P, &v) < 0) {
		keyparts_free(parts, n);
		return -1;
	}
	int r = insert_dotted(P, t, parts, n, v);
	keyparts_free(parts, n);
	return r;
}

static int parse_inline_table(struct tp *P, struct toml_node *t)
{
	t->type = TOML_TABLE;
	tp_next(P); /* '{' */
	tp_skip_ws(P);
	if (tp_peek(P, 0) == '}') {
		tp_next(P);
		t->sealed = 1;
		return 0;
	}
	for (;;) {
		tp_skip_ws(P);
		if (tp_at_newline(P))
			return tp_err(P, P->line, P->col, "inline tables must fit on one line");
		if (parse_keyval(P, t) < 0)
			return -1;
		tp_skip_ws(P);
		if (tp_peek(P, 0) == ',') {
			tp_next(P);
			continue;
		}
		if (tp_peek(P, 0) == '}')
			break;
		if (tp_eof(P) || tp_at_newline(P))
			return tp_err(P, P->line, P->col, "expected ',' or '}' (inline tables must fit on one line)");
		return tp_err(P, P->line, P->col, "expected ',' or '}' in inline table");
	}
	tp_next(P);
	t->sealed = 1;
	return 0;
}

static int parse_value(struct tp *P, struct toml_node **out)
{
	int c = tp_peek(P, 0), r;
	struct toml_node *n = node_new(P, TOML_STRING, P->line, P->col);
	if (!n)
		return -1;
	if (P->depth >= TOML_MAX_DEPTH) {
		free(n);
		return tp_err(P, P->line, P->col, "values nested deeper than %d levels", TOML_MAX_DEPTH);
	}
	P->depth++;
	if (c == '"' || c == '\'')
		r = parse_string(P, &n->v.s, &n->str_kind, &n->str_line, &n->str_pos);
	else if (c == '[')
		r = parse_array(P, n);
	else if (c == '{')
		r = parse_inline_table(P, n);
	else if (c == 't' || c == 'f')
		r = parse_bool(P, n);
	else if ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == 'i' || c == 'n')
		r = parse_number(P, n);
	else if (tp_eof(P) || tp_at_newline(P) || c == '#')
		r = tp_err(P, P->line, P->col, "expected a value");
	else
		r = tp_err(P, P->line, P->col, "expected a value (strings need quotes)");
	P->depth--;
	if (r < 0) {
		toml_free(n);
		return -1;
	}
	*out = n;
	return 0;
}

/* --- tables ----------------------------------------------------------- */

static int not_a_table(struct tp *P, const struct keypart *k, const struct toml_node *have)
{
	return tp_err(P, k->line, k->col, "'%s' is already defined at line %d:%d (%s), not a table", k->s,
		      have->key_line, have->key_col, have->aot ? "array of tables" : toml_type_name(have->type));
}

/* Inserts value v (taking it, freeing on failure) at a dotted key path. */
static int insert_dotted(struct tp *P, struct toml_node *t, struct keypart *parts, int n, struct toml_node *v)
{
	for (int i = 0; i < n - 1; i++) {
		struct toml_node *child = table_find(t, parts[i].s);
		if (!child) {
			child = node_new(P, TOML_TABLE, parts[i].line, parts[i].col);
			if (!child || table_add(P, t, &parts[i], child) < 0) {
				free(child);
				goto fail;
			}
			child->dotted = 1;
		} else if (child->type != TOML_TABLE) {
			not_a_table(P, &parts[i], child);
			goto fail;
		} else if (child->sealed) {
			tp_err(P, parts[i].line, parts[i].col, "inline table '%s' (line %d) cannot be extended",
			       parts[i].s, child->key_line);
			goto fail;
		} else if (!child->dotted) {
			tp_err(P, parts[i].line, parts[i].col,
			       "table '%s' was defined by a [header] (line %d); add keys under that header",
			       parts[i].s, child->line);
			goto fail;
		}
		t = child;
	}
	const struct toml_node *dup = table_find(t, parts[n - 1].s);
	if (dup) {
		tp_err(P, parts[n - 1].line, parts[n - 1].col, "duplicate key '%s' (first defined at line %d:%d)",
		       parts[n - 1].s, dup->key_line, dup->key_col);
		goto fail;
	}
	if (table_add(P, t, &parts[n - 1], v) < 0)
		goto fail;
	return 0;
fail:
	toml_free(v);
	return -1;
}

/* Walks [a.b.c]'s parent parts, creating implicit tables; the last element
 * of an array of tables stands for the array. */
static struct toml_node *header_parent(struct tp *P, struct keypart *parts, int n)
{
	struct toml_node *t = P->root;
	for (int i = 0; i < n - 1; i++) {
		struct toml_node *child = table_find(t, parts[i].s);
		if (!child) {
			child = node_new(P, TOML_TABLE, parts[i].line, parts[i].col);
			if (!child)
				return NULL;
			if (table_add(P, t, &parts[i], child) < 0) {
				free(child);
				return NULL;
			}
			child->implicit = 1;
		} else if (child->type == TOML_ARRAY && child->aot) {
			child = child->items[child->n_items - 1];
		} else if (child->type != TOML_TABLE) {
			not_a_table(P, &parts[i], child);
			return NULL;
		} else if (child->sealed) {
			tp_err(P, parts[i].line, parts[i].col, "inline table '%s' (line %d) cannot be extended",
			       parts[i].s, child->key_line);
			return NULL;
		}
		t = child;
	}
	return t;
}

static int define_table(struct tp *P, struct toml_node *parent, struct keypart *k, int line, int col)
{
	struct toml_node *t = table_find(parent, k->s);
	if (t && t->type == TOML_TABLE && t->implicit && !t->header && !t->sealed) {
		t->implicit = 0;
		t->header = 1;
		t->line = line;
		t->col = col;
		P->cur = t;
		return 0;
	}
	if (t && t->type == TOML_TABLE)
		return tp_err(P, k->line, k->col, "table '%s' is defined twice (first at line %d:%d)", k->s, t->line, t->col);
	if (t)
		return not_a_table(P, k, t);
	t = node_new(P, TOML_TABLE, line, col);
	if (!t)
		return -1;
	if (table_add(P, parent, k, t) < 0) {
		free(t);
		return -1;
	}
	t->header = 1;
	P->cur = t;
	return 0;
}

static int define_aot_item(struct tp *P, struct toml_node *parent, struct keypart *k, int line, int col)
{
	struct toml_node *arr = table_find(parent, k->s);
	if (arr && !(arr->type == TOML_ARRAY && arr->aot))
		return tp_err(P, k->line, k->col, "'%s' is already defined at line %d:%d (%s), not an array of tables",
			      k->s, arr->key_line, arr->key_col, toml_type_name(arr->type));
	if (!arr) {
		arr = node_new(P, TOML_ARRAY, line, col);
		if (!arr)
			return -1;
		if (table_add(P, parent, k, arr) < 0) {
			free(arr);
			return -1;
		}
		arr->aot = 1;
	}
	struct toml_node *t = node_new(P, TOML_TABLE, line, col);
	if (!t)
		return -1;
	if (node_append(P, arr, t) < 0) {
		free(t);
		return -1;
	}
	t->header = 1;
	P->cur = t;
	return 0;
}

static int parse_header(struct tp *P)
{
	int line = P->line, col = P->col;
	int aot = tp_peek(P, 1) == '[';
	struct keypart parts[TOML_MAX_DEPTH];
	int n, r = -1;
	tp_skip(P, aot ? 2 : 1);
	if (parse_key(P, parts, &n) < 0)
		return -1;
	tp_skip_ws(P);
	if (tp_peek(P, 0) != ']' || (aot && tp_peek(P, 1) != ']')) {
		tp_err(P, P->line, P->col, "expected '%s' to close the table header", aot ? "]]" : "]");
		goto out;
	}
	tp_skip(P, aot ? 2 : 1);
	struct toml_node *parent = header_parent(P, parts, n);
	if (!parent)
		goto out;
	r = aot ? define_aot_item(P, parent, &parts[n - 1], line, col)
		: define_table(P, parent, &parts[n - 1], line, col);
out:
	keyparts_free(parts, n);
	return r;
}

/* --- document --------------------------------------------------------- */

static int check_input(struct tp *P)
{
	if (P->len > TOML_MAX_INPUT)
		return tp_err(P, 1, 1, "file is larger than %u bytes", TOML_MAX_INPUT);
	const char *nul = memchr(P->s, 0, P->len);
	if (nul) {
		while (P->s + P->pos < nul)
			tp_next(P);
		return tp_err(P, P->line, P->col, "NUL byte in the file");
	}
	if (P->len >= 3 && memcmp(P->s, "\xEF\xBB\xBF", 3) == 0)
		P->pos = 3;
	return 0;
}

static int end_of_line(struct tp *P, const char *what)
{
	tp_skip_ws(P);
	if (tp_skip_comment(P) < 0)
		return -1;
	if (tp_eof(P))
		return 0;
	if (!tp_at_newline(P))
		return tp_err(P, P->line, P->col, "expected the end of the line after %s", what);
	tp_eat_newline(P);
	return 0;
}

int toml_parse(const char *text, size_t len, const char *path, struct toml_node **out, char **cause)
{
	struct tp P = { .s = text, .len = len, .line = 1, .col = 1, .path = path ? path : "<string>", .cause = cause };
	*out = NULL;
	if (check_input(&P) < 0)
		return -1;
	P.root = node_new(&P, TOML_TABLE, 1, 1);
	if (!P.root)
		return -1;
	P.cur = P.root;
	while (!tp_eof(&P)) {
		tp_skip_ws(&P);
		if (tp_skip_comment(&P) < 0)
			goto fail;
		if (tp_eof(&P))
			break;
		if (tp_at_newline(&P)) {
			tp_eat_newline(&P);
			continue;
		}
		if (tp_peek(&P, 0) == '[') {
			if (parse_header(&P) < 0 || end_of_line(&P, "a table header") < 0)
				goto fail;
		} else if (parse_keyval(&P, P.cur) < 0 || end_of_line(&P, "a value") < 0) {
			goto fail;
		}
	}
	*out = P.root;
	return 0;
fail:
	toml_free(P.root);
	return -1;
}
