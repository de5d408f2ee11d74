/* Reassembly of a disassembled AMDGPU function, optionally with text
 * inserted before instructions, through llvm-mc-19 (-filetype=obj). Branch
 * targets stay labels, so inserted code moves them; each s_getpc_b64 unit
 * is emitted as its original words (its literal adds would otherwise be
 * re-encoded as inline constants) and its literals recomputed for where the
 * code now sits, so it still reaches the same absolute address. With
 * nothing inserted and the same base the bytes come out identical: the null
 * round trip the tests run over the corpus and rocRAND. */
#ifndef NTOP_AMDGPU_ASM_H
#define NTOP_AMDGPU_ASM_H
#include <stddef.h>
#include <stdint.h>

#include "engine/amdgpu/amdgpu_disasm.h"
#include "engine/amdgpu/amdgpu_target.h"

/* How the function's own instructions are emitted:
 *  WORDS  their original words (.long), except branches to labels, which
 *         are re-encoded so inserted code moves them: what instrumentation
 *         uses, so the app's instructions are never re-encoded;
 *  TEXT   everything from objdump's text (the tests' check that the text
 *         the engine reads re-encodes to the same instruction). */
enum amdgpu_asm_mode { AMDGPU_ASM_WORDS, AMDGPU_ASM_TEXT };

/* Code inserted into a function. A branch to instruction i lands on its
 * label, ahead of before[i], so inserted code runs however i is reached;
 * the prologue sits ahead of instruction 0's label and runs once. */
struct amdgpu_asm_ins {
	const char *prologue;        /* NULL: none */
	const char *const *before;   /* NULL, or one entry (may be NULL) per instruction */
	const char *const *replace;  /* NULL, or per instruction: text emitted instead of it
					(a hint such as s_clause that inserted code would break) */
};

/* The assembly text llvm-mc gets for instructions [0, n) of f with ins
 * (may be NULL) inserted. malloc'd. */
char *amdgpu_asm_text(const struct amdgpu_func *f, int n, const struct amdgpu_asm_ins *ins,
		      enum amdgpu_asm_mode mode);
/* Assembles that text for processor `proc`, as code to be placed at
 * address `base`: *code gets the bytes (malloc'd). */
int amdgpu_asm_func(const struct amdgpu_func *f, int n, const struct amdgpu_asm_ins *ins, enum amdgpu_asm_mode mode,
		    const char *proc, uint64_t base, uint8_t **code, size_t *len, char **cause);
/* Assembles n independent blocks of text back to back in one llvm-mc run
 * (position-independent code only: no branches): *code gets all bytes,
 * off[i] where block i starts (off[n] = *len). off has n + 1 entries. */
int amdgpu_asm_blocks(const char *const *texts, int n, const char *proc, uint8_t **code, size_t *len, size_t *off,
		      char **cause);
/* k when the instruction is a SOPP branch (s_branch, s_cbranch_*) to label
 * Lk of its function, else -1. */
int amdgpu_asm_branch_label(const struct amdgpu_insn *in);
/* 0 when every branch of [0, n) targets a label of the function (code may
 * move) and every word decodes; -1 naming the first branch that does not
 * (objdump printed a number) or the first word objdump printed as .long. */
int amdgpu_asm_movable(const struct amdgpu_func *f, int n, char **cause);
/* Compares an instruction re-encoded from its text with the original:
 * NULL when identical, else the name of the listed don't-care field it
 * differs in, else "" (a real difference). Listed fields:
 *  "vopc_cmpx_vdst"  gfx10+ v_cmpx_*_e64: VOP3 bits 0-7 (the hardware
 *                    writes EXEC only; LLVM 15 wrote 0, LLVM 19 writes
 *                    0x7e, exec_lo). */
const char *amdgpu_asm_diff_field(const struct amdgpu_insn *in, const uint8_t *got, enum amdgpu_family f);
/* Instructions of f inside its symbol's [addr, addr+size) (objdump lists
 * the padding after the last function as its instructions). */
int amdgpu_asm_count(const struct amdgpu_func *f, uint64_t size);

#endif
