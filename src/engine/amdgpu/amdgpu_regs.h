/* Registers an AMDGPU kernel uses (read from its disassembly) and registers
 * for probe code above them. Allocation rules:
 *  - SGPRs start above everything the kernel touches: the highest SGPR in
 *    its text, its metadata's count (which covers callees), and the user
 *    and system SGPRs the hardware loads at launch; 64-bit values need an
 *    even first register. The addressable limit is 102 on gfx8/gfx9 less
 *    what VCC, FLAT_SCRATCH and XNACK_MASK take from the top, 106 on gfx10+.
 *  - VGPRs start above the highest VGPR in the text, the metadata's count
 *    (without AGPRs) and the workitem id VGPRs; pairs are even-aligned on
 *    gfx90a/gfx94. There, AGPRs sit from accum_offset on: probe VGPRs
 *    reaching it move accum_offset up (the AGPRs' numbering is relative to
 *    it, so the kernel's code is unchanged) within the 512-entry file.
 * Refusals are named: no free SGPRs, no free VGPRs, no kernarg pointer. */
#ifndef NTOP_AMDGPU_REGS_H
#define NTOP_AMDGPU_REGS_H

#include "engine/amdgpu/amdgpu_co.h"
#include "engine/amdgpu/amdgpu_disasm.h"

struct amdgpu_regs {
	int sgpr_max, vgpr_max, agpr_max; /* highest index in the text, -1 when none */
	int vcc, flat_scratch, xnack_mask; /* the text names them */
	int calls;                         /* s_swappc_b64 / s_call: callees' registers are not in the text */
};

struct amdgpu_alloc {
	int sgpr, vgpr;               /* first register given to the probe */
	int n_sgpr, n_vgpr;
	unsigned kd_sgprs, kd_vgprs;  /* counts the descriptor must then allow */
	unsigned accum_offset;        /* gfx90a/gfx94: new accum_offset (0 elsewhere) */
	int kernarg_sgpr;             /* the kernarg segment pointer pair */
};

/* Highest registers of instructions [0, n). */
void amdgpu_regs_scan(const struct amdgpu_func *f, int n, struct amdgpu_regs *r);
/* n_sgpr SGPRs and n_vgpr VGPRs for probe code in kernel k. */
int amdgpu_regs_alloc(const struct amdgpu_co *co, const struct amdgpu_co_kernel *k, const struct amdgpu_regs *used,
		      int n_sgpr, int n_vgpr, struct amdgpu_alloc *a, char **cause);
/* Writes the allocation into a descriptor (granules, accum_offset). */
void amdgpu_regs_apply(const struct amdgpu_co *co, const struct amdgpu_alloc *a, struct amdgpu_kd *kd);

#endif
