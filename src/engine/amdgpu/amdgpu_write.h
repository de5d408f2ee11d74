/* Writing a probed AMDGPU code object. The original object is kept byte
 * for byte (every other kernel, data, relocations and the old copy of the
 * probed kernel's code stay where they were, so PC-relative references from
 * the new code still reach them) and grows at its end by one loadable
 * segment holding, in this order:
 *   the program header table (one PT_LOAD more; PT_PHDR points here),
 *   the note section (the metadata note rewritten with the probe's
 *   arguments and register counts; PT_NOTE and the note section header
 *   point here),
 *   the kernel's new code (256-aligned, in a new section ".ntop.text"),
 * then, outside any segment, the section name table (one name more) and the
 * section header table. The descriptor is patched in place (its code entry
 * now reaches the new code), and the kernel's function symbol in .symtab and
 * .dynsym moves to the new code, so disassemblers list the probed body under
 * the kernel's name. */
#ifndef NTOP_AMDGPU_WRITE_H
#define NTOP_AMDGPU_WRITE_H
#include <stddef.h>
#include <stdint.h>

#include "engine/amdgpu/amdgpu_asm.h"
#include "engine/amdgpu/amdgpu_co.h"

#define AMDGPU_WRITE_SECTION ".ntop.text"

struct amdgpu_write {
	const struct amdgpu_co *co;          /* the original, opened */
	const struct amdgpu_co_kernel *k;    /* the kernel whose code is replaced */
	const struct amdgpu_func *f;         /* its disassembly */
	int n;                               /* its instructions (amdgpu_asm_count) */
	const struct amdgpu_asm_ins *ins;    /* code inserted (may be NULL) */
	const struct amdgpu_kd *kd;          /* descriptor to write; the code entry is set here */
	const uint8_t *meta;                 /* the metadata note's new msgpack */
	size_t meta_len;
};

struct amdgpu_written {
	uint8_t *elf;                        /* the new code object (malloc'd) */
	size_t len;
	uint64_t code_addr;                  /* the kernel's new code */
	size_t code_len;
};

/* Builds the probed object and opens it again to check that its
 * descriptor and metadata agree (amdgpu_co_check_kernel). Refused by name:
 * objects that are not linked (ET_DYN), whose metadata note is not in a
 * PT_NOTE segment, or whose dynamic relocations patch the kernel's code. */
int amdgpu_write_object(const struct amdgpu_write *w, struct amdgpu_written *out, char **cause);
void amdgpu_written_done(struct amdgpu_written *out);

#endif
