/* One AMDGPU code object opened whole: ELF, metadata and every kernel's
 * descriptor, paired by name. This is what instrumentation works on and
 * what the tests hold against LLVM's own tools. */
#ifndef NTOP_AMDGPU_CO_H
#define NTOP_AMDGPU_CO_H
#include <stddef.h>
#include <stdint.h>

#include "engine/amdgpu/amdgpu_elf.h"
#include "engine/amdgpu/amdgpu_kd.h"
#include "engine/amdgpu/amdgpu_meta.h"

struct amdgpu_co_kernel {
	const struct amdgpu_elf_kernel *sym;     /* symbols and file offsets */
	const struct amdgpu_meta_kernel *meta;   /* metadata entry */
	struct amdgpu_kd kd;                     /* decoded descriptor */
};

struct amdgpu_co {
	struct amdgpu_elf elf;
	struct amdgpu_meta meta;
	struct amdgpu_co_kernel *k;
	int n;
};

/* Opens and pairs: every metadata kernel must have its descriptor symbol
 * (and the other way round). p must outlive co. */
int amdgpu_co_open(const uint8_t *p, size_t size, struct amdgpu_co *co, char **cause);
void amdgpu_co_done(struct amdgpu_co *co);
const struct amdgpu_co_kernel *amdgpu_co_kernel(const struct amdgpu_co *co, const char *name);
/* The processor as the LLVM tools should be told (amdgpu_target_tool_args):
 * its name, with "+w64" on gfx10+ when a kernel runs in wave64. */
void amdgpu_co_proc(const struct amdgpu_co *co, char buf[32]);
/* Checks that descriptor and metadata agree: kernarg size, LDS and
 * scratch sizes, wave size, the code entry, and register granules (the
 * descriptor's allocation holds the metadata's counts, and is the one
 * the assembler would compute from them). 0, or -1 with a cause naming the
 * first disagreement. */
int amdgpu_co_check_kernel(const struct amdgpu_co *co, const struct amdgpu_co_kernel *k, char **cause);

#endif
