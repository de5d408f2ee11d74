/* Fatbin wrapper, container and entry parsing plus entry decompression
 * (layout in fatbin.h). Every size field is checked against the bytes that
 * are really there before it is used: images come straight from the
 * application and may be truncated, corrupt or hostile. */
#include "engine/image/fatbin.h"

#include <limits.h>
#include <lz4.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "common/cause.h"
#include "engine/image/image_bytes.h"

#define FATBIN_KIND_PTX 1
#define FATBIN_KIND_ELF 2
#define FATBIN_FLAG_LZ4 0x2000u
#define FATBIN_FLAG_ZSTD 0x8000u
#define FATBIN_FLAG_ARCH_A 0x100000u
#define FATBIN_FLAG_ARCH_F 0x200000u
/* An LZ4 block cannot expand beyond ~255x: a match of length L costs at
 * least L/255 bytes of length extension. */
#define FATBIN_LZ4_MAX_RATIO 255

int fatbin_is_wrapper(const uint8_t *p, size_t avail)
{
	return avail >= FATBIN_WRAPPER_SIZE && image_bytes_le32(p) == FATBIN_WRAPPER_MAGIC;
}

int fatbin_is_container(const uint8_t *p, size_t avail)
{
	return avail >= FATBIN_HEADER_SIZE && image_bytes_le32(p) == FATBIN_MAGIC;
}

size_t fatbin_container_size(const uint8_t *p)
{
	if (image_bytes_le32(p) != FATBIN_MAGIC)
		return 0;
	uint64_t hs = image_bytes_le16(p + 6), body = image_bytes_le64(p + 8);
	if (hs < FATBIN_HEADER_SIZE || body > SIZE_MAX - hs)
		return 0;
	return (size_t)(hs + body);
}

int fatbin_unwrap(const uint8_t *image, size_t size, const uint8_t **data, size_t *len, char **cause)
{
	if (size && size < FATBIN_WRAPPER_SIZE)
		return cause_set(cause, "fatbin wrapper truncated (%zu of %d bytes)", size, FATBIN_WRAPPER_SIZE);
	uint32_t version = image_bytes_le32(image + 4);
	if (version != 1 && version != 2)
		return cause_set(cause, "fatbin wrapper version %u unknown", version);
	uintptr_t addr = (uintptr_t)image_bytes_le64(image + 8);
	if (!addr)
		return cause_set(cause, "fatbin wrapper holds a null data pointer");
	const uint8_t *c = (const uint8_t *)addr;
	size_t avail;
	if (size == 0) {
		avail = fatbin_container_size(c);
		if (!avail)
			return cause_set(cause, "fatbin wrapper does not point at a fatbin container");
	} else {
		uintptr_t base = (uintptr_t)image;
		if (addr < base || addr - base >= size)
			return cause_set(cause, "fatbin wrapper points outside the %zu-byte image", size);
		avail = size - (size_t)(addr - base);
		if (!fatbin_is_container(c, avail))
			return cause_set(cause, "fatbin wrapper does not point at a fatbin container");
	}
	*data = c;
	*len = avail;
	return 0;
}

static int fatbin_list_push(struct fatbin_list *list, const struct image_entry *e, char **cause)
{
	if (list->n == list->cap) {
		int cap = list->cap ? list->cap * 2 : 16;
		struct image_entry *v = realloc(list->v, (size_t)cap * sizeof *v);
		if (!v)
			return cause_set(cause, "out of memory listing fatbin entries");
		list->v = v;
		list->cap = cap;
	}
	list->v[list->n++] = *e;
	return 0;
}

void fatbin_list_done(struct fatbin_list *list)
{
	free(list->v);
	memset(list, 0, sizeof *list);
}

/* Fills the compression fields from the entry header at p (payload `padded`
 * bytes long). */
static int fatbin_entry_compression(const uint8_t *p, uint64_t flags, uint64_t padded,
				    struct image_entry *e, char **cause)
{
	int lz4 = !!(flags & FATBIN_FLAG_LZ4), zstd = !!(flags & FATBIN_FLAG_ZSTD);
	if (lz4 && zstd)
		return cause_set(cause, "fatbin entry flags 0x%llx claim both LZ4 and zstd",
				 (unsigned long long)flags);
	e->compressed = lz4 ? 1 : zstd ? 2 : 0;
	if (!e->compressed) {
		e->stored_size = e->size = (size_t)padded;
		return 0;
	}
	uint64_t stored = image_bytes_le32(p + 0x10), full = image_bytes_le64(p + 0x38);
	if (stored == 0 || stored > padded)
		return cause_set(cause, "compressed fatbin entry of %llu bytes claims %llu",
				 (unsigned long long)padded, (unsigned long long)stored);
	if (full == 0 || full > FATBIN_MAX_ENTRY_SIZE)
		return cause_set(cause, "fatbin entry claims %llu uncompressed bytes (limit %zu)",
				 (unsigned long long)full, FATBIN_MAX_ENTRY_SIZE);
	e->stored_size = (size_t)stored;
	e->size = (size_t)full;
	return 0;
}

/* Parses the entry at p; *used gets its total length. Returns 1 for an entry
 * of a kind we do not list (skipped), 0 for PTX/ELF, -1 on error. */
static int fatbin_parse_entry(const uint8_t *p, size_t avail, struct image_entry *e, size_t *used, char **cause)
{
	if (avail < FATBIN_ENTRY_MIN_HEADER)
		return cause_set(cause, "fatbin entry header truncated (%zu of %d bytes)", avail,
				 FATBIN_ENTRY_MIN_HEADER);
	uint16_t kind = image_bytes_le16(p);
	uint32_t hs = image_bytes_le32(p + 4);
	uint64_t padded = image_bytes_le64(p + 8);
	if (hs < FATBIN_ENTRY_MIN_HEADER || hs > avail)
		return cause_set(cause, "fatbin entry header size %u invalid (%zu bytes left)", hs, avail);
	if (padded > avail - hs)
		return cause_set(cause, "fatbin entry payload of %llu bytes exceeds the %zu bytes left",
				 (unsigned long long)padded, avail - hs);
	*used = hs + (size_t)padded;
	if (kind != FATBIN_KIND_PTX && kind != FATBIN_KIND_ELF)
		return 1;
	uint32_t arch = image_bytes_le32(p + 0x1c);
	uint64_t flags = image_bytes_le64(p + 0x28);
	if (arch == 0 || arch > 10000)
		return cause_set(cause, "fatbin entry arch %u invalid", arch);
	memset(e, 0, sizeof *e);
	e->is_ptx = kind == FATBIN_KIND_PTX;
	e->arch = (int)arch;
	e->arch_suffix_a = !!(flags & FATBIN_FLAG_ARCH_A);
	e->arch_suffix_f = !!(flags & FATBIN_FLAG_ARCH_F);
	e->payload = p + hs;
	return fatbin_entry_compression(p, flags, padded, e, cause);
}

static int fatbin_all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

/* Parses the container at p (avail bytes left); *used gets its length. */
static int fatbin_parse_container(const uint8_t *p, size_t avail, struct fatbin_list *list, size_t *used,
				  char **cause)
{
	if (avail < FATBIN_HEADER_SIZE)
		return cause_set(cause, "fatbin header truncated (%zu of %d bytes)", avail, FATBIN_HEADER_SIZE);
	size_t hs = image_bytes_le16(p + 6);
	uint64_t body = image_bytes_le64(p + 8);
	if (hs < FATBIN_HEADER_SIZE || hs > avail)
		return cause_set(cause, "fatbin header size %zu invalid", hs);
	if (body > avail - hs)
		return cause_set(cause, "fatbin claims %llu bytes of entries, only %zu present",
				 (unsigned long long)body, avail - hs);
	int index = list->containers++;
	size_t off = hs, end = hs + (size_t)body;
	while (off < end) {
		if (end - off < FATBIN_ENTRY_MIN_HEADER && fatbin_all_zero(p + off, end - off))
			break;
		struct image_entry e;
		size_t n = 0;
		int rc = fatbin_parse_entry(p + off, end - off, &e, &n, cause);
		if (rc < 0)
			return cause_wrap(cause, "fatbin container %d, entry at offset %zu", index, off);
		if (rc == 0) {
			e.container = index;
			if (fatbin_list_push(list, &e, cause) < 0)
				return -1;
		}
		off += n;
	}
	*used = end;
	return 0;
}

int fatbin_parse(const uint8_t *p, size_t len, struct fatbin_list *list, char **cause)
{
	size_t off = 0;
	while (off < len) {
		/* Containers are 8-byte aligned; the gap is zero-filled. */
		if (p[off] == 0) {
			off++;
			continue;
		}
		if (!fatbin_is_container(p + off, len - off))
			return cause_set(cause, "no fatbin container magic at offset %zu", off);
		size_t used = 0;
		if (fatbin_parse_container(p + off, len - off, list, &used, cause) < 0)
			return -1;
		off += used;
	}
	return 0;
}

static int fatbin_inflate_lz4(const struct image_entry *e, uint8_t *out, char **cause)
{
	if (e->stored_size > INT_MAX || e->size > INT_MAX)
		return cause_set(cause, "LZ4 fatbin entry too large (%zu bytes)", e->size);
	if (e->size / FATBIN_LZ4_MAX_RATIO > e->stored_size + 1)
		return cause_set(cause, "LZ4 fatbin entry claims %zu bytes from %zu: impossible ratio", e->size,
				 e->stored_size);
	int got = LZ4_decompress_safe((const char *)e->payload, (char *)out, (int)e->stored_size, (int)e->size);
	if (got < 0 || (size_t)got != e->size)
		return cause_set(cause, "LZ4 fatbin entry corrupt (%d of %zu bytes decoded)", got, e->size);
	return 0;
}

static int fatbin_inflate_zstd(const struct image_entry *e, uint8_t *out, char **cause)
{
	unsigned long long framed = ZSTD_getFrameContentSize(e->payload, e->stored_size);
	if (framed == ZSTD_CONTENTSIZE_ERROR)
		return cause_set(cause, "zstd fatbin entry is no zstd frame");
	if (framed != ZSTD_CONTENTSIZE_UNKNOWN && framed != e->size)
		return cause_set(cause, "zstd fatbin entry frame says %llu bytes, header %zu", framed, e->size);
	size_t got = ZSTD_decompress(out, e->size, e->payload, e->stored_size);
	if (ZSTD_isError(got))
		return cause_set(cause, "zstd fatbin entry corrupt: %s", ZSTD_getErrorName(got));
	if (got != e->size)
		return cause_set(cause, "zstd fatbin entry gave %zu of %zu bytes", got, e->size);
	return 0;
}

int fatbin_entry_data(const struct image_entry *e, uint8_t **out, size_t *len, char **cause)
{
	if (e->size > FATBIN_MAX_ENTRY_SIZE)
		return cause_set(cause, "fatbin entry of %zu bytes exceeds the limit", e->size);
	uint8_t *buf = malloc(e->size + 1);
	if (!buf)
		return cause_set(cause, "out of memory for a %zu-byte fatbin entry", e->size);
	int rc = 0;
	if (e->compressed == 1)
		rc = fatbin_inflate_lz4(e, buf, cause);
	else if (e->compressed == 2)
		rc = fatbin_inflate_zstd(e, buf, cause);
	else if (e->compressed == 0 && e->stored_size == e->size)
		memcpy(buf, e->payload, e->size);
	else
		rc = cause_set(cause, "fatbin entry compression %d unknown", e->compressed);
	if (rc < 0) {
		free(buf);
		return -1;
	}
	buf[e->size] = 0;
	*out = buf;
	*len = e->size;
	return 0;
}
