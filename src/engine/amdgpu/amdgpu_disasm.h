/* Disassembly of an AMDGPU code object into functions of instructions,
 * through llvm-objdump-19 -d --symbolize-operands (which names branch
 * targets L0, L1, ... inside each function). Each instruction keeps its
 * address, its encoding (from objdump's hex words) and its text; PC-relative
 * address computations (s_getpc_b64 then s_add_u32/s_addc_u32 with 32-bit
 * literals on the same register pair) are found and marked as one unit with
 * the absolute address they compute, so moved code can recompute them. */
#ifndef NTOP_AMDGPU_DISASM_H
#define NTOP_AMDGPU_DISASM_H
#include <stddef.h>
#include <stdint.h>

#define AMDGPU_INSN_MAX 32 /* bytes: the longest encodings are 20 (gfx10 MIMG NSA) */

enum amdgpu_getpc_role { AMDGPU_GETPC_NONE, AMDGPU_GETPC_GET, AMDGPU_GETPC_LO, AMDGPU_GETPC_HI };

struct amdgpu_insn {
	uint64_t addr;
	uint32_t size;                   /* bytes */
	uint8_t bytes[AMDGPU_INSN_MAX];
	char *text;                      /* "s_cbranch_execnz L0" (labels as objdump named them) */
	int label;                       /* k when objdump put label Lk before this instruction, else -1 */
	enum amdgpu_getpc_role getpc;    /* part of an s_getpc_b64 unit */
	int unit;                        /* the unit's index in the function (getpc != NONE) */
	uint64_t target;                 /* LO/HI: absolute address the unit computes */
};

struct amdgpu_func {
	char *name;
	uint64_t addr;
	struct amdgpu_insn *v;
	int n, cap;
	int units;                       /* s_getpc_b64 units */
};

struct amdgpu_disasm {
	char mcpu[24];
	struct amdgpu_func *f;
	int n, cap;
};

/* Disassembles every function of the code object (`proc` for --mcpu). */
int amdgpu_disasm_object(const uint8_t *co, size_t size, const char *proc, struct amdgpu_disasm *d,
			 char **cause);
void amdgpu_disasm_done(struct amdgpu_disasm *d);
const struct amdgpu_func *amdgpu_disasm_func(const struct amdgpu_disasm *d, const char *name);
/* Parses objdump's text (exposed for tests and the fuzzer). */
int amdgpu_disasm_parse(char *text, struct amdgpu_disasm *d, char **cause);

#endif
