/* A probe snippet read the way ptxas reads it. The verifier checks, and the
 * instrumenter pastes, the same token stream: each statement's canonical
 * text (tokens joined with single spaces where ptxas needs one), so what was
 * verified is byte for byte what ptxas assembles. Whitespace is any of
 * space, tab, newline, carriage return, form feed and vertical tab; // and
 * block comments separate tokens; a .part is joined to the word before it
 * even across whitespace (ptxas reads `st .global` as `st.global`). Bytes
 * ptxas would read in ways the checks do not model (#, quotes, backslash,
 * control characters, non-ASCII) are refused. */
#ifndef NTOP_SNIPPET_H
#define NTOP_SNIPPET_H
#include <stddef.h>

#include "engine/probe/probe.h"

enum snippet_tok_kind {
	SNIP_WORD,  /* identifier or %register with the .parts joined to it: "mov.u32", "%tid.x" */
	SNIP_DOT,   /* a .word that starts a statement or follows no word: ".reg", ".b32" */
	SNIP_NUM,   /* starts with a digit: "42", "0x10", "0f3F800000" */
	SNIP_PUNCT, /* one of , [ ] { } ( ) + - | ! @ : < > */
};

struct snippet_tok {
	enum snippet_tok_kind kind;
	size_t off, len;      /* in the statement's text */
	struct probe_pos pos; /* where it starts in the probe file */
};

struct snippet_stmt {
	char *text;           /* canonical, without the ';' */
	struct snippet_tok *toks;
	int n_toks;
	struct probe_pos pos; /* of the first token */
	int terminated;       /* ended with ';' (not the end of the snippet) */
};

struct snippet {
	struct snippet_stmt *stmts; /* empty statements are left out */
	int n;
};

/* Reads hook h's snippet. On a byte or comment it refuses: -1, *bad = its
 * position, the reason in why (why_len bytes); also -1 (why "out of
 * memory") when allocation fails. */
int snippet_read(const struct probe_hook *h, struct snippet *out, struct probe_pos *bad, char *why, size_t why_len);
void snippet_free(struct snippet *s);

/* Is token i of st (in range) exactly s? */
int snippet_tok_is(const struct snippet_stmt *st, int i, const char *s);

/* ---- probe registers ---- */

#define SNIPPET_REG_NAME_MAX 64
#define SNIPPET_REG_RANGE_MAX 100000

struct snippet_reg {
	char name[SNIPPET_REG_NAME_MAX]; /* with '%', without "<N>" */
	long count;                      /* 0: the register `name`; N: name0 .. name<N-1> */
	char type[32];                   /* ".b32", ".v2 .f32" */
};

/* Parses a `.reg` statement, appending its registers to *regs (malloc'd,
 * *n entries). Names must be %[A-Za-z_$][A-Za-z0-9_$]*, not %ntop_* (the
 * engine's) and not a special register. -1: *bad is the offending token,
 * *why a sentence in why_buf. */
int snippet_decl_parse(const struct snippet_stmt *st, struct snippet_reg **regs, int *n, int *bad, char *why_buf,
		       size_t why_len);
/* Is s (len bytes) a name a probe register may have? -1 with why when not. */
int snippet_reg_check(const char *s, size_t len, char *why, size_t why_len);
/* Appends a register (name: len bytes, checked) to *regs; -1 out of memory. */
int snippet_reg_add(struct snippet_reg **regs, int *n, const char *name, size_t len, long count, const char *type);
/* The declared register that register token tok (len bytes, '%' first, no
 * .part) names, or NULL: a range's bare name and numbers out of range or
 * with a leading zero are not its registers. */
const struct snippet_reg *snippet_reg_find(const struct snippet_reg *regs, int n, const char *tok, size_t len);

#endif
