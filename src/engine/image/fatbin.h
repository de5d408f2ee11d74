/* Fatbin parsing, internal to the engine (image.c is the public face).
 *
 * Layout, measured on CUDA 13.0 nvcc/fatbinary output (all little endian):
 *   wrapper   (.nvFatBinSegment, what __cudaRegisterFatBinary and
 *             cuLibraryLoadData receive): u32 magic 0x466243B1, u32 version
 *             (1, or 2 with a prelinked list), u64 address of the container,
 *             u64 address of the prelinked list (unused here).
 *   container u32 magic 0xBA55ED50, u16 version (1), u16 header size (16),
 *             u64 bytes of entries that follow. A .nv_fatbin section holds
 *             many containers back to back, zero-padded to 8 bytes.
 *   entry     +0x00 u16 kind (1 PTX, 2 ELF), +0x02 u16 version (0x0101),
 *             +0x04 u32 header size (0x40 ELF, 0x50 PTX, 0x70 sm_100+ ELF),
 *             +0x08 u64 payload size padded to 8, +0x10 u32 compressed
 *             payload size (0 when not compressed), +0x14 u32 offset of an
 *             option block inside the header, +0x18 u16 minor, u16 major
 *             (PTX ISA for PTX), +0x1c u32 arch (75, 90, 100), +0x20 u32
 *             name offset, +0x24 u32 name size, +0x28 u64 flags, +0x30 u64
 *             unknown, +0x38 u64 uncompressed size (0 when not compressed).
 *             Flags: 0x1 64-bit, 0x10 Linux host, 0x2000 LZ4 block,
 *             0x8000 zstd frame, 0x100000 arch-specific ("a"), 0x200000
 *             family-specific ("f"). The payload follows the header. */
#ifndef NTOP_FATBIN_H
#define NTOP_FATBIN_H
#include <stddef.h>
#include <stdint.h>

#include "engine/image/image.h"

#define FATBIN_WRAPPER_MAGIC 0x466243B1u
#define FATBIN_MAGIC 0xBA55ED50u
#define FATBIN_WRAPPER_SIZE 24
#define FATBIN_HEADER_SIZE 16
#define FATBIN_ENTRY_MIN_HEADER 0x40
/* Refuse to inflate an entry beyond this (bytes): a corrupt size field must
 * not make the hook allocate gigabytes inside the application. */
#define FATBIN_MAX_ENTRY_SIZE ((size_t)1 << 30)

/* Growable entry array the parser appends to. */
struct fatbin_list {
	struct image_entry *v;
	int n, cap;
	int containers; /* containers seen so far: numbers the next one */
};

int fatbin_is_wrapper(const uint8_t *p, size_t avail);
int fatbin_is_container(const uint8_t *p, size_t avail);
/* Bytes of the container at p as its header states them (header included);
 * 0 when it is no container or the sum overflows. Not checked against any
 * buffer: callers with a size check it themselves. */
size_t fatbin_container_size(const uint8_t *p);
/* Follows a wrapper to its first container. With size 0 the wrapper's
 * address is trusted (a live in-process image) and *len comes from the
 * container header; otherwise the address must lie inside the buffer. */
int fatbin_unwrap(const uint8_t *image, size_t size, const uint8_t **data, size_t *len, char **cause);
/* Appends the entries of every container in [p, p+len); zero padding
 * between containers is skipped, anything else is an error. */
int fatbin_parse(const uint8_t *p, size_t len, struct fatbin_list *list, char **cause);
void fatbin_list_done(struct fatbin_list *list);
/* Inflates or copies one entry into a malloc'd buffer of e->size + 1 bytes
 * (NUL-terminated); *len is e->size. */
int fatbin_entry_data(const struct image_entry *e, uint8_t **out, size_t *len, char **cause);

#endif
