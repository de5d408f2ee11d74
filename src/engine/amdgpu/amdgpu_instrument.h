/* Probing one kernel of an AMDGPU code object, end to end: disassemble
 * (llvm-objdump-19), inject (amdgpu_inject.c), write the probed object
 * (amdgpu_write.c, llvm-mc-19), and check it (amdgpu_check.c: the written
 * kernel disassembles to the original plus exactly the inserted code).
 * What `ntop instrument` runs on AMD inputs; the HIP stand-in runs the same
 * at a kernel's first probed launch. */
#ifndef NTOP_AMDGPU_INSTRUMENT_H
#define NTOP_AMDGPU_INSTRUMENT_H
#include <stddef.h>
#include <stdint.h>

#include "engine/amdgpu/amdgpu_check.h"
#include "engine/amdgpu/amdgpu_inject.h"
#include "engine/amdgpu/amdgpu_write.h"

struct amdgpu_instrumented {
	struct amdgpu_written obj;        /* the probed code object */
	struct amdgpu_inject inj;         /* arguments, maps, registers, statistics */
	struct amdgpu_check_stats check;
	struct amdgpu_regions regions;    /* the probed kernel disassembled, each instruction's origin */
	char proc[32];                    /* as the LLVM tools were told ("gfx1100+w64") */
	int n_insns;                      /* the kernel's instructions */
	double ms_disasm, ms_inject, ms_write, ms_check;
};

/* co/size: one code object; kernel: its symbol name (amdgpu_co_kernel
 * also takes the metadata .name). */
int amdgpu_instrument(const uint8_t *co, size_t size, const char *kernel, struct probe *const *probes, int n_probes,
		      struct amdgpu_instrumented *out, char **cause);
void amdgpu_instrumented_done(struct amdgpu_instrumented *out);

#endif
