/* GCN snippets (probes with isa = "gcn") read into statements: what the
 * verifier checks and the injector expands. A snippet is AMDGPU assembly
 * as llvm-mc reads it, one statement per line, comments after // or ;,
 * plus:
 *   .sgpr %a, %b:2     probe registers (scalar; :2 a 64-bit pair)
 *   .vgpr %c, %d:2     probe registers (vector, one per lane)
 *   %b, %b.lo, %b.hi   a declared register, or one half of a pair
 *   s_mov_b64 %x, CLOCK     the shader clock (64-bit)
 *   s_mov_b64 %x, GTIMER    the constant-rate real-time counter (64-bit)
 *   s_mov_b32 %x, SMID      the compute unit's id (packed, doc/amdgpu.md)
 *   SAVE.u32 {a, ...} / SAVE.u64 {a, ...}   append values to the record
 *   BYTES              bytes the traced memory instruction moves per lane
 *   ADDR               its 64-bit address per lane (SAVE.u64 only)
 * A declaration in any hook of a probe is seen by all its hooks. Line
 * numbers are the TOML file's. */
#ifndef NTOP_AMDGPU_SNIPPET_H
#define NTOP_AMDGPU_SNIPPET_H
#include "engine/probe/probe.h"

#define AMDGPU_SNIP_OPS 32 /* operands, or a SAVE's values */
#define AMDGPU_SNIP_NAME 64

struct amdgpu_sreg {
	char name[AMDGPU_SNIP_NAME]; /* "%bs_start" */
	int vector;                  /* VGPR (1) or SGPR (0) */
	int count;                   /* 32-bit registers: 1 or 2 */
	int line;
};

enum amdgpu_stmt_kind { AMDGPU_STMT_INSN, AMDGPU_STMT_SAVE };

struct amdgpu_stmt {
	enum amdgpu_stmt_kind kind;
	int line;                    /* in the TOML file */
	char *text;                  /* comment-free, blanks collapsed */
	char *mnemonic;              /* "s_mov_b64", "SAVE.u32" (into buf) */
	char *ops[AMDGPU_SNIP_OPS];  /* operands; SAVE: the values of its list */
	int n_ops;
	char *mods;                  /* what follows the last operand ("clamp", "offset:4"), or "" */
	char *buf;                   /* owns mnemonic, ops and mods */
};

struct amdgpu_shook {
	const struct probe_hook *h;
	struct amdgpu_stmt *v;
	int n;
};

struct amdgpu_snip {
	const struct probe *p;
	struct amdgpu_sreg *regs;
	int n_regs;
	struct amdgpu_shook *hooks;  /* one per hook of the probe, same order */
	int n_hooks;
};

/* Reads every hook; syntax errors name FILE:LINE. */
int amdgpu_snip_parse(const struct probe *p, struct amdgpu_snip *s, char **cause);
void amdgpu_snip_done(struct amdgpu_snip *s);
/* The declared register an operand names ("%x", "%x.lo", "%x.hi"):
 * part 0 whole, 1 low half, 2 high half; NULL when op is no %name or the
 * name is not declared (*declared 0 then, when op starts with '%'). */
const struct amdgpu_sreg *amdgpu_snip_ref(const struct amdgpu_snip *s, const char *op, int *part);
/* Width in 32-bit registers of a mnemonic's result, from its first type
 * word (s_mov_b64: 2; s_bcnt1_i32_b64: 1; v_mad_u64_u32: 2). */
int amdgpu_snip_dest_width(const char *mnemonic);

#endif
