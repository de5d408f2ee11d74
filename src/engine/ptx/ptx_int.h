/* Internals shared by the PTX parser files (ptx_lex.c, ptx_parse.c,
 * ptx_body.c, ptx_names.c, ptx_prune.c, ptx_emit.c) and, for ptx_dup_trim
 * and ptx_emit_func_tail, the instrumenter; not part of the engine's API. */
#ifndef NTOP_PTX_INT_H
#define NTOP_PTX_INT_H
#include "engine/ptx/ptx.h"

#include <stddef.h>

/* A comment-free copy of the input: comments become spaces (newlines kept),
 * so every later stage sees statements only and line numbers still hold. */
struct ptx_lex {
	char *buf;       /* NUL-terminated, len bytes */
	size_t len;
	size_t line_pos; /* cache for ptx_lex_line: buf[line_pos] is on line `line` */
	int line;
	int first_line;
};

int ptx_lex_init(struct ptx_lex *lx, const char *text, size_t len, int first_line, char **cause);
void ptx_lex_done(struct ptx_lex *lx);
/* 1-based line of buf[pos]; cheap when called with growing positions. */
int ptx_lex_line(struct ptx_lex *lx, size_t pos);
size_t ptx_lex_skip_ws(const struct ptx_lex *lx, size_t pos);
/* End of an identifier-like run [A-Za-z0-9_$%] starting at pos. */
size_t ptx_lex_ident_end(const struct ptx_lex *lx, size_t pos);
/* End of a line (the '\n' or len). */
size_t ptx_lex_line_end(const struct ptx_lex *lx, size_t pos);
/* buf[pos] is one of "([{": finds its closer, skipping strings and nested
 * brackets of every kind; -1 (with cause) when unbalanced. */
int ptx_lex_match(struct ptx_lex *lx, size_t pos, size_t *close, char **cause);
/* Finds the ';' ending the statement that starts at pos (brackets and strings
 * skipped); -1 with cause at end of text or on a stray closer. */
int ptx_lex_stmt_end(struct ptx_lex *lx, size_t pos, size_t *semi, char **cause);
/* buf[pos] is '{': finds its '}' counting braces only (strings skipped);
 * for skipping function bodies that are never parsed. */
int ptx_lex_skip_block(struct ptx_lex *lx, size_t pos, size_t *close, char **cause);
/* Does buf[pos..] hold the directive word ".word" followed by a non-word char? */
int ptx_lex_is_word(const struct ptx_lex *lx, size_t pos, const char *dotword);

static inline int ptx_is_space(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static inline int ptx_is_ident_start(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' || c == '%';
}

static inline int ptx_is_ident_char(int c)
{
	return ptx_is_ident_start(c) || (c >= '0' && c <= '9');
}

/* malloc'd copies: trimmed, or trimmed with whitespace runs (outside strings)
 * folded to one space. NULL when out of memory. */
char *ptx_dup_trim(const char *s, size_t n);
char *ptx_dup_fold(const char *s, size_t n);

/* Body statements from buf[*pos] up to the '}' closing depth 0 (consumed,
 * *pos after it) or, with until_eof, to the end of the text. */
int ptx_body_parse(struct ptx_lex *lx, size_t *pos, int until_eof,
		   struct ptx_stmt **stmts, int *n, char **cause);

/* Name table over a module's named top items (functions and variables). */
struct ptx_names {
	int *slots;  /* item index + 1, 0 = empty; open addressing */
	int *next;   /* per item: next item with the same name, -1 = none */
	size_t mask;
	const struct ptx_module *m;
};

int ptx_names_init(struct ptx_names *t, const struct ptx_module *m);
void ptx_names_done(struct ptx_names *t);
/* First item named [s, s+n), or -1. */
int ptx_names_find(const struct ptx_names *t, const char *s, size_t n);
/* Calls fn for every identifier in text that could name a module symbol
 * (skips .directives, %registers, numbers and strings). */
void ptx_names_scan(const char *text, void (*fn)(void *ctx, const char *s, size_t n), void *ctx);

/* Called once per reached function before its body is scanned (lazy parsing). */
typedef int (*ptx_load_fn)(void *ctx, int item, char **cause);

/* Marks (mark[i] = 1) every item reachable from the functions named `root`
 * through calls, address-of and variable initialisers; -1 with cause when no
 * function has that name or load fails. */
int ptx_reach(struct ptx_module *m, const char *root, char *mark, ptx_load_fn load, void *ctx, char **cause);
int ptx_prune_with(struct ptx_module *m, const char *kernel, ptx_load_fn load, void *ctx, char **cause);

void ptx_top_clear(struct ptx_top *t);

struct strbuf;
/* A function's head after its prefix: the parameter list and the suffix
 * (ptx_emit.c; the instrumenter writes copies of functions with it). */
void ptx_emit_func_tail(struct strbuf *sb, const struct ptx_func *f);

#endif
