/* Checks a probed code object against what was meant to be written: its
 * kernel, disassembled again by llvm-objdump, is the original kernel's
 * instructions plus exactly the inserted code. The inserted texts are
 * assembled on their own (amdgpu_asm_blocks) and must appear byte for byte
 * where they were inserted; every original instruction must follow, the
 * same bytes (or the replacement asked for, assembled alone), except branches (same instruction, reaching the code inserted
 * ahead of the original target, or the target itself) and s_getpc_b64
 * units (same instructions, still computing the original absolute address).
 * Run by `ntop instrument` on every AMD object it writes, and by the
 * tests. */
#ifndef NTOP_AMDGPU_CHECK_H
#define NTOP_AMDGPU_CHECK_H
#include <stddef.h>
#include <stdint.h>

#include "engine/amdgpu/amdgpu_asm.h"
#include "engine/amdgpu/amdgpu_disasm.h"

struct amdgpu_check_stats {
	int original;   /* original instructions found again */
	int inserted;   /* instructions found in inserted blocks */
	int branches;   /* branches whose target was checked */
	int units;      /* s_getpc_b64 units whose address was checked */
	int replaced;   /* instructions replaced as asked (ins->replace) */
};

/* f (n instructions) is the original kernel, ins what was inserted,
 * obj/len the written object, kernel the function symbol's name. */
int amdgpu_check_probed(const struct amdgpu_func *f, int n, const struct amdgpu_asm_ins *ins, const uint8_t *obj,
			size_t len, const char *proc, const char *kernel, uint64_t code_len,
			struct amdgpu_check_stats *st, char **cause);

/* The same check, keeping what it found: the probed kernel's disassembly
 * (d, its function g) and, per instruction of g, where it came from:
 * AMDGPU_CHECK_ORIGINAL, 0 the prologue, 1 + 2i code inserted before
 * original instruction i, 2 + 2i its replacement. *owner is malloc'd;
 * amdgpu_disasm_done(d) frees the rest. */
#define AMDGPU_CHECK_ORIGINAL (-1)
struct amdgpu_regions {
	struct amdgpu_disasm d;
	const struct amdgpu_func *g;
	int gn;          /* instructions of g that are the kernel's code */
	int *owner;
};
int amdgpu_check_regions(const struct amdgpu_func *f, int n, const struct amdgpu_asm_ins *ins, const uint8_t *obj,
			 size_t len, const char *proc, const char *kernel, uint64_t code_len,
			 struct amdgpu_check_stats *st, struct amdgpu_regions *rg, char **cause);
void amdgpu_regions_done(struct amdgpu_regions *rg);

#endif
