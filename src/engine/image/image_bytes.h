/* Little-endian readers and range checks for the image parsers (fatbin.c,
 * elf_image.c, image.c). Images come from files or from the application's
 * memory, so nothing is assumed aligned and every span is checked before it
 * is read. */
#ifndef NTOP_IMAGE_BYTES_H
#define NTOP_IMAGE_BYTES_H
#include <stddef.h>
#include <stdint.h>

static inline uint16_t image_bytes_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static inline uint32_t image_bytes_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t image_bytes_le64(const uint8_t *p)
{
	return (uint64_t)image_bytes_le32(p) | (uint64_t)image_bytes_le32(p + 4) << 32;
}

/* 1 when [off, off+len) lies inside a buffer of `size` bytes (no overflow). */
static inline int image_bytes_span_ok(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

#endif
