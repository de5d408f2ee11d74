/* PTX lexing helpers: the comment-free working copy and the bracket, string
 * and statement scanners the parser is built from. Strings ("...", with
 * backslash escapes) are kept verbatim; they appear in .file, .pragma and
 * debug sections. */
#include "engine/ptx/ptx_int.h"

#include "common/cause.h"

#include <stdlib.h>
#include <string.h>

/* Line of byte `pos` of t, counted from scratch: error paths only. */
static int ptx_lex_count_lines(const char *t, size_t pos, int first)
{
	for (size_t i = 0; i < pos; i++)
		first += t[i] == '\n';
	return first;
}

/* Copies text, turning // and block comments into spaces; checks strings and
 * block comments end and that there is no NUL byte. The common bytes take a
 * tight loop: only '"', '/' and NUL need a look. */
static int ptx_lex_blank(struct ptx_lex *lx, const char *t, size_t len, char **cause)
{
	char *b = lx->buf;
	memcpy(b, t, len);
	b[len] = '\0';
	size_t i = 0;
	for (;;) {
		i += strcspn(b + i, "\"/"); /* stops at NUL too: b[len] is one */
		if (i >= len)
			return 0;
		size_t start = i;
		if (b[i] == '\0') {
			return cause_set(cause, "line %d: NUL byte in PTX text",
					 ptx_lex_count_lines(t, i, lx->first_line));
		} else if (b[i] == '"') {
			for (i++; i < len && b[i] != '"' && b[i] != '\n' && b[i] != '\0'; i++)
				if (b[i] == '\\' && i + 1 < len && b[i + 1] != '\n')
					i++;
			if (i >= len || b[i] != '"')
				return cause_set(cause, "line %d: unterminated string",
						 ptx_lex_count_lines(t, start, lx->first_line));
			i++;
		} else if (i + 1 < len && b[i + 1] == '/') {
			for (; i < len && b[i] != '\n'; i++)
				b[i] = ' ';
		} else if (i + 1 < len && b[i + 1] == '*') {
			b[i++] = ' ';
			b[i++] = ' ';
			while (i < len && !(b[i] == '*' && i + 1 < len && b[i + 1] == '/')) {
				if (b[i] != '\n')
					b[i] = ' ';
				i++;
			}
			if (i >= len)
				return cause_set(cause, "line %d: unterminated /* comment",
						 ptx_lex_count_lines(t, start, lx->first_line));
			b[i++] = ' ';
			b[i++] = ' ';
		} else {
			i++;
		}
	}
}

int ptx_lex_init(struct ptx_lex *lx, const char *text, size_t len, int first_line, char **cause)
{
	memset(lx, 0, sizeof *lx);
	lx->buf = malloc(len + 1);
	if (!lx->buf)
		return cause_set(cause, "out of memory for %zu bytes of PTX", len);
	lx->len = len;
	lx->line = first_line;
	lx->first_line = first_line;
	if (ptx_lex_blank(lx, text, len, cause) < 0) {
		ptx_lex_done(lx);
		return -1;
	}
	return 0;
}

void ptx_lex_done(struct ptx_lex *lx)
{
	free(lx->buf);
	lx->buf = NULL;
}

int ptx_lex_line(struct ptx_lex *lx, size_t pos)
{
	if (pos > lx->len)
		pos = lx->len;
	if (pos < lx->line_pos) {
		lx->line_pos = 0;
		lx->line = lx->first_line;
	}
	const char *b = lx->buf;
	for (size_t i = lx->line_pos; i < pos; i++) {
		const char *nl = memchr(b + i, '\n', pos - i);
		if (!nl)
			break;
		lx->line++;
		i = (size_t)(nl - b);
	}
	lx->line_pos = pos;
	return lx->line;
}

size_t ptx_lex_skip_ws(const struct ptx_lex *lx, size_t pos)
{
	while (pos < lx->len && ptx_is_space((unsigned char)lx->buf[pos]))
		pos++;
	return pos;
}

size_t ptx_lex_ident_end(const struct ptx_lex *lx, size_t pos)
{
	while (pos < lx->len && ptx_is_ident_char((unsigned char)lx->buf[pos]))
		pos++;
	return pos;
}

size_t ptx_lex_line_end(const struct ptx_lex *lx, size_t pos)
{
	const char *nl = memchr(lx->buf + pos, '\n', lx->len - pos);
	return nl ? (size_t)(nl - lx->buf) : lx->len;
}

/* Strings were checked while blanking, so the closing quote exists. */
static size_t ptx_lex_string_end(const struct ptx_lex *lx, size_t pos)
{
	for (pos++; pos < lx->len && lx->buf[pos] != '"'; pos++)
		if (lx->buf[pos] == '\\')
			pos++;
	return pos < lx->len ? pos + 1 : lx->len;
}

enum ptx_walk_stop { PTX_STOP_CLOSE, PTX_STOP_SEMI };

/* Walks from pos, tracking brackets, until the stop condition holds (its
 * position in *at): the closer of the bracket at pos, or a ';' at depth 0.
 * Returns -1 at the end of the text, -2 on an unmatched closer (*bad). */
static int ptx_lex_walk(struct ptx_lex *lx, size_t pos, enum ptx_walk_stop stop, size_t *at, size_t *bad)
{
	char stack[64];
	int depth = 0, deep = 0; /* deep counts levels past the stack */
	const char *b = lx->buf;
	while (pos < lx->len) {
		char c = b[pos];
		switch (c) {
		case '"':
			pos = ptx_lex_string_end(lx, pos);
			continue;
		case ';':
			if (stop == PTX_STOP_SEMI && depth + deep == 0) {
				*at = pos;
				return 0;
			}
			break;
		case '(':
		case '[':
		case '{':
			if (depth < (int)sizeof stack)
				stack[depth++] = c == '(' ? ')' : c == '[' ? ']' : '}';
			else
				deep++;
			break;
		case ')':
		case ']':
		case '}':
			if (stop == PTX_STOP_CLOSE && depth + deep == 1) {
				*at = pos;
				return 0;
			}
			if (deep) {
				deep--;
			} else if (depth == 0 || stack[depth - 1] != c) {
				*bad = pos;
				return -2;
			} else {
				depth--;
			}
			break;
		default:
			break;
		}
		pos++;
	}
	return -1;
}

int ptx_lex_match(struct ptx_lex *lx, size_t pos, size_t *close, char **cause)
{
	size_t bad = pos;
	char open = lx->buf[pos];
	int r = ptx_lex_walk(lx, pos, PTX_STOP_CLOSE, close, &bad);
	if (r == 0) {
		char want = open == '(' ? ')' : open == '[' ? ']' : '}';
		if (lx->buf[*close] == want)
			return 0;
		bad = *close;
	}
	if (r == -1)
		return cause_set(cause, "line %d: unterminated '%c' (no matching closer before end of text)",
				 ptx_lex_line(lx, pos), open);
	return cause_set(cause, "line %d: '%c' closes '%c' opened on line %d",
			 ptx_lex_line(lx, bad), lx->buf[bad], open, ptx_lex_line(lx, pos));
}

int ptx_lex_stmt_end(struct ptx_lex *lx, size_t pos, size_t *semi, char **cause)
{
	size_t bad = pos;
	int r = ptx_lex_walk(lx, pos, PTX_STOP_SEMI, semi, &bad);
	if (r == 0)
		return 0;
	if (r == -1)
		return cause_set(cause, "line %d: statement does not end with ';' before end of text",
				 ptx_lex_line(lx, pos));
	return cause_set(cause, "line %d: statement starting on line %d does not end with ';' before '%c'",
			 ptx_lex_line(lx, bad), ptx_lex_line(lx, pos), lx->buf[bad]);
}

int ptx_lex_skip_block(struct ptx_lex *lx, size_t pos, size_t *close, char **cause)
{
	const char *b = lx->buf;
	size_t p = pos + 1;
	long depth = 1;
	for (;;) {
		p += strcspn(b + p, "{}\"");
		if (p >= lx->len)
			return cause_set(cause, "line %d: unterminated '{' (no matching '}' before end of text)",
					 ptx_lex_line(lx, pos));
		if (b[p] == '"') {
			p = ptx_lex_string_end(lx, p);
			continue;
		}
		depth += b[p] == '{' ? 1 : -1;
		if (depth == 0) {
			*close = p;
			return 0;
		}
		p++;
	}
}

int ptx_lex_is_word(const struct ptx_lex *lx, size_t pos, const char *dotword)
{
	size_t n = strlen(dotword);
	if (pos + n > lx->len || memcmp(lx->buf + pos, dotword, n) != 0)
		return 0;
	return pos + n == lx->len || !ptx_is_ident_char((unsigned char)lx->buf[pos + n]);
}

char *ptx_dup_trim(const char *s, size_t n)
{
	while (n && ptx_is_space((unsigned char)*s))
		s++, n--;
	while (n && ptx_is_space((unsigned char)s[n - 1]))
		n--;
	char *d = malloc(n + 1);
	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

char *ptx_dup_fold(const char *s, size_t n)
{
	char *d = ptx_dup_trim(s, n);
	if (!d)
		return NULL;
	size_t o = 0;
	int quoted = 0;
	for (size_t i = 0; d[i]; i++) {
		char c = d[i];
		if (c == '"' && (i == 0 || d[i - 1] != '\\'))
			quoted = !quoted;
		if (!quoted && ptx_is_space((unsigned char)c)) {
			if (o && d[o - 1] == ' ')
				continue;
			c = ' ';
		}
		d[o++] = c;
	}
	d[o] = '\0';
	return d;
}
