/* AMDGPU code objects: ELF64 little endian, e_machine EM_AMDGPU (224),
 * OS/ABI ELFOSABI_AMDGPU_HSA (64), ABI version 1..4 = code object v3..v6.
 * e_flags: bits 0-7 the processor (EF_AMDGPU_MACH_*), bits 8-9 xnack and
 * 10-11 sramecc (v4+: 0 unsupported, 1 any, 2 off, 3 on; v3: bit 8 xnack
 * on, bit 9 sramecc on), bits 24-31 the generic version (v6).
 * Each kernel is an STT_FUNC symbol NAME (its code) and an STT_OBJECT
 * NAME.kd of 64 bytes in .rodata (its descriptor, amdgpu_kd.h); the
 * metadata is a msgpack map in a note named "AMDGPU" of type
 * NT_AMDGPU_METADATA (32). Code object v2 (YAML metadata in an "AMD" note)
 * is refused by name. */
#ifndef NTOP_AMDGPU_ELF_H
#define NTOP_AMDGPU_ELF_H
#include <stddef.h>
#include <stdint.h>

#include "engine/amdgpu/amdgpu_target.h"

#define AMDGPU_EM 224
#define AMDGPU_OSABI_HSA 64
#define AMDGPU_NT_METADATA 32

struct amdgpu_elf_kernel {
	char *name;           /* the function symbol's name (mangled) */
	uint64_t kd_addr;     /* descriptor's virtual address */
	size_t kd_off;        /* its file offset (64 bytes there) */
	uint64_t code_addr;   /* function symbol's address, 0 when absent */
	uint64_t code_size;   /* function symbol's size (bytes) */
	size_t code_off;      /* file offset of the code */
};

struct amdgpu_elf {
	const uint8_t *p;
	size_t size;
	uint32_t flags;       /* e_flags */
	int co_version;       /* 3..6 */
	int generic_version;  /* v6 generic targets, else 0 */
	struct amdgpu_target target;
	enum amdgpu_family family;
	const uint8_t *meta;  /* msgpack bytes of the metadata note */
	size_t meta_len;
	size_t meta_off;      /* file offset of meta */
	struct amdgpu_elf_kernel *kernels;
	int n_kernels;
};

/* 1 when p starts an AMDGPU ELF64 header. */
int amdgpu_elf_is(const uint8_t *p, size_t avail);
/* Reads header, metadata note and kernel symbols; p must outlive e. */
int amdgpu_elf_open(const uint8_t *p, size_t size, struct amdgpu_elf *e, char **cause);
void amdgpu_elf_done(struct amdgpu_elf *e);
/* The kernel whose name (or descriptor symbol without ".kd") is `name`. */
const struct amdgpu_elf_kernel *amdgpu_elf_kernel(const struct amdgpu_elf *e, const char *name);
/* File offset of a virtual address inside a section with file contents
 * holding `len` bytes from there; (size_t)-1 when none does. */
size_t amdgpu_elf_addr_offset(const struct amdgpu_elf *e, uint64_t addr, uint64_t len);

/* Value of symbol `name` in any ELF64 (an assembler's relocatable output
 * too, which amdgpu_elf_open refuses for lack of metadata): 0 found, 1
 * absent, -1 malformed. */
int amdgpu_elf_symbol(const uint8_t *p, size_t size, const char *name, uint64_t *value, char **cause);

#endif
