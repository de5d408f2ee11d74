/* Reading one section of an ELF64 file without reading the file: the hook
 * asks a process's executable or shared library for its `__nv_relfatbin`
 * (the PTX of -rdc builds), and the file may be a 1 GiB libtorch. */
#ifndef NTOP_ELF_FILE_H
#define NTOP_ELF_FILE_H
#include <stddef.h>
#include <stdint.h>

/* 0 and a malloc'd copy of section `name` (at most `max` bytes), 1 when the
 * file has no such section, -1 with a cause when it cannot be read. */
int elf_file_section(const char *path, const char *name, size_t max, uint8_t **data, size_t *len, char **cause);

#endif
