/* ELF reading for GPU images, internal to the engine: cubins (e_machine
 * EM_CUDA, 190) and host executables / shared libraries that embed fatbins
 * in a `.nv_fatbin` (linked) or `__nv_relfatbin` (relocatable objects)
 * section. Only ELF64 little endian: the only kind CUDA produces today. */
#ifndef NTOP_ELF_IMAGE_H
#define NTOP_ELF_IMAGE_H
#include <stddef.h>
#include <stdint.h>

#define ELF_IMAGE_EM_CUDA 190

/* 1 when p starts an ELF64 little-endian header (avail bytes readable). */
int elf_image_is_elf64(const uint8_t *p, size_t avail);
/* e_machine of an ELF that elf_image_is_elf64 accepted. */
int elf_image_machine(const uint8_t *p);
/* The ELF's length derived from its own headers (header tables and section
 * contents), for callers that have only a pointer; 0 when the headers are
 * inconsistent. Reads the section header table the ELF header points at. */
size_t elf_image_extent(const uint8_t *p);
/* Finds a section by name: 0 found (*data, *len set), 1 absent, -1 malformed. */
int elf_image_section(const uint8_t *p, size_t size, const char *name, const uint8_t **data, size_t *len,
		      char **cause);
/* A cubin's SM version from e_flags (75, 90, 100), or -1 with a cause. */
int elf_image_cubin_arch(const uint8_t *p, size_t size, char **cause);
/* Appends the cubin's kernel names (functions marked as entries, each in its
 * own `.text.<name>` section) to the growable array (*names, *n, *cap). */
int elf_image_kernel_names(const uint8_t *p, size_t size, char ***names, int *n, int *cap, char **cause);

#endif
