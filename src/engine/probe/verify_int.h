/* Internals of the verifier (verify.h), shared by its files:
 *
 *   verify.c          the driver: statements, .reg declarations, SAVE and
 *                     helper checks, whole-hook checks
 *   verify_insn.c     instructions: the allow-list, qualifiers, rules 1-7
 *   verify_operand.c  operands: destinations, sources, addresses, literals */
#ifndef NTOP_VERIFY_INT_H
#define NTOP_VERIFY_INT_H
#include <stdint.h>

#include "engine/ptx/snippet.h"
#include "engine/probe/verify.h"

#define VERIFY_MAX_OPS 32
#define VERIFY_SAVE_MAX 32       /* values in one SAVE (the instrumenter's limit) */
#define VERIFY_MAX_OFFSET 4096   /* bytes: the largest constant offset in a load's address */

enum rule {
	RULE_REGS = 1,
	RULE_FLOW,
	RULE_SHARED,
	RULE_CALL,
	RULE_WRITE,
	RULE_WARP,
	RULE_ALLOW,
	RULE_HELPER,
	RULE_SYNTAX,
};

struct vctx {
	const struct probe *p;
	const struct probe_hook *h;
	char **cause;
	struct snippet_reg *regs; /* every hook's .reg declarations */
	int n_regs;
	uint32_t saved;           /* bytes SAVEd so far by the current snippet */
	const struct snippet_stmt *last_save;
	int last_save_tok;
};

/* An operand: tokens [a, b) of its statement. */
struct vop {
	int a, b;
};

struct vinsn {
	const struct snippet_stmt *st;
	int guard;                /* token of the guard's register, -1 when unguarded */
	int op;                   /* token of the opcode */
	char base[32];            /* its first dotted part: "ld" */
	struct vop ops[VERIFY_MAX_OPS];
	int n_ops;
};

/* verify_err.c: the probe file's name for errors, and a rule's title. */
const char *verify_path(const struct vctx *V);
const char *verify_rule_name(enum rule r);
/* "FILE:LINE:COL: rule N (what): detail: statement;" at token tok of st
 * (the statement's start when tok < 0); returns -1. */
int verr(struct vctx *V, const struct snippet_stmt *st, int tok, enum rule r, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* verify_insn.c: one instruction statement, every rule. */
int verify_insn(struct vctx *V, const struct snippet_stmt *st);
/* verify_undeclared_writes: each register st writes that nobody declared
 * (and that may be a probe's: %name, not special, not %ntop_*) becomes
 * declared, typed after the instruction, as a ".reg TYPE %name;\n" line
 * appended to decls; what it cannot type is left to verify_probe. */
struct strbuf;
void verify_implicit_dests(struct vctx *V, const struct snippet_stmt *st, struct strbuf *decls);

/* verify_operand.c */
/* Helper word (ADDR, BYTES, OUT, IN1..IN3, CLOCK, GTIMER, SMID) that token
 * i is, or NULL. */
const char *verify_helper(const struct snippet_stmt *st, int i);
/* The destination operand: each register written is one the probe declared. */
int verify_dest(struct vctx *V, const struct vinsn *in, const struct vop *o);
/* A source operand; an [address] only when addr is set. */
int verify_source(struct vctx *V, const struct vinsn *in, const struct vop *o, int addr);
/* One value of a SAVE list: a register, a helper or a literal. */
int verify_scalar(struct vctx *V, const struct vinsn *in, const struct vop *o);

#endif
