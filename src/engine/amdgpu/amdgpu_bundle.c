/* Offload bundle and HIPF wrapper parsing (layouts in amdgpu_bundle.h).
 * Every offset and size is checked against the bytes available before use:
 * bundles come from the application's memory or from files. */
#include "engine/amdgpu/amdgpu_bundle.h"

#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "common/cause.h"
#include "engine/image/image_bytes.h"

#define CCOB_METHOD_ZLIB 0
#define CCOB_METHOD_ZSTD 1
#define BUNDLE_TABLE_START (AMDGPU_BUNDLE_MAGIC_LEN + 8)

int amdgpu_bundle_kind(const uint8_t *p, size_t avail)
{
	if (avail >= BUNDLE_TABLE_START && memcmp(p, AMDGPU_BUNDLE_MAGIC, AMDGPU_BUNDLE_MAGIC_LEN) == 0)
		return 1;
	if (avail >= 4 && memcmp(p, AMDGPU_CCOB_MAGIC, 4) == 0)
		return 2;
	if (avail >= AMDGPU_HIPF_SIZE && image_bytes_le32(p) == AMDGPU_HIPF_MAGIC)
		return 3;
	return 0;
}

/* The compressed header's fields: sizes and where the payload starts. */
struct ccob_header {
	unsigned version, method;
	uint64_t total, raw;  /* total 0 when the version does not store it (v1) */
	size_t payload;       /* header bytes before the compressed data */
};

static int ccob_header(const uint8_t *p, size_t n, struct ccob_header *h, char **cause)
{
	if (n < 8)
		return cause_set(cause, "compressed offload bundle truncated (%zu bytes)", n);
	h->version = image_bytes_le16(p + 4);
	h->method = image_bytes_le16(p + 6);
	h->total = 0;
	if (h->version == 1) {
		h->payload = 20;
		h->raw = n >= 12 ? image_bytes_le32(p + 8) : 0;
	} else if (h->version == 2) {
		h->payload = 24;
		h->total = n >= 12 ? image_bytes_le32(p + 8) : 0;
		h->raw = n >= 16 ? image_bytes_le32(p + 12) : 0;
	} else if (h->version == 3) {
		h->payload = 32;
		h->total = n >= 16 ? image_bytes_le64(p + 8) : 0;
		h->raw = n >= 24 ? image_bytes_le64(p + 16) : 0;
	} else {
		return cause_set(cause, "compressed offload bundle version %u unknown (known: 1, 2, 3)", h->version);
	}
	if (n < h->payload)
		return cause_set(cause, "compressed offload bundle header truncated (%zu of %zu bytes)", n,
				 h->payload);
	return 0;
}

size_t amdgpu_bundle_extent(const uint8_t *p)
{
	if (memcmp(p, AMDGPU_CCOB_MAGIC, 4) == 0) {
		struct ccob_header h;
		if (ccob_header(p, 32, &h, NULL) < 0 || h.total > AMDGPU_BUNDLE_MAX_SIZE || h.total < h.payload)
			return 0;
		return (size_t)h.total;
	}
	if (memcmp(p, AMDGPU_BUNDLE_MAGIC, AMDGPU_BUNDLE_MAGIC_LEN) != 0)
		return 0;
	uint64_t count = image_bytes_le64(p + AMDGPU_BUNDLE_MAGIC_LEN), end = BUNDLE_TABLE_START, at = end;
	if (count > 4096)
		return 0;
	for (uint64_t i = 0; i < count; i++) {
		uint64_t off = image_bytes_le64(p + at), size = image_bytes_le64(p + at + 8),
			 idlen = image_bytes_le64(p + at + 16);
		if (idlen > AMDGPU_BUNDLE_ID_MAX || off > AMDGPU_BUNDLE_MAX_SIZE || size > AMDGPU_BUNDLE_MAX_SIZE)
			return 0;
		at += 24 + idlen;
		end = at > end ? at : end;
		end = off + size > end ? off + size : end;
	}
	return end > AMDGPU_BUNDLE_MAX_SIZE ? 0 : (size_t)end;
}

static int bundle_entry(const uint8_t *p, size_t n, size_t *at, struct amdgpu_bundle_entry *e, char **cause)
{
	if (!image_bytes_span_ok(*at, 24, n))
		return cause_set(cause, "offload bundle entry table truncated at byte %zu", *at);
	uint64_t off = image_bytes_le64(p + *at), size = image_bytes_le64(p + *at + 8),
		 idlen = image_bytes_le64(p + *at + 16);
	*at += 24;
	if (idlen == 0 || idlen >= AMDGPU_BUNDLE_ID_MAX || !image_bytes_span_ok(*at, idlen, n))
		return cause_set(cause, "offload bundle entry ID of %llu bytes at byte %zu is empty, too long or "
				 "truncated", (unsigned long long)idlen, *at);
	memcpy(e->id, p + *at, (size_t)idlen);
	e->id[idlen] = 0;
	*at += (size_t)idlen;
	if (!image_bytes_span_ok(off, size, n))
		return cause_set(cause, "offload bundle entry '%s' (%llu bytes at %llu) lies outside the %zu-byte "
				 "bundle", e->id, (unsigned long long)size, (unsigned long long)off, n);
	e->data = p + off;
	e->size = (size_t)size;
	return 0;
}

static int bundle_parse_plain(const uint8_t *p, size_t n, struct amdgpu_bundle *b, char **cause)
{
	uint64_t count = image_bytes_le64(p + AMDGPU_BUNDLE_MAGIC_LEN);
	/* an entry takes at least 25 bytes of table: this bounds count */
	if (count == 0 || count > (n - BUNDLE_TABLE_START) / 25)
		return cause_set(cause, "offload bundle claims %llu entries; the %zu bytes hold fewer",
				 (unsigned long long)count, n);
	b->v = calloc((size_t)count, sizeof *b->v);
	if (!b->v)
		return cause_set(cause, "out of memory reading an offload bundle");
	size_t at = BUNDLE_TABLE_START, end = 0;
	for (uint64_t i = 0; i < count; i++) {
		struct amdgpu_bundle_entry *e = &b->v[b->n];
		if (bundle_entry(p, n, &at, e, cause) < 0)
			return -1;
		size_t e_end = (size_t)(e->data - p) + e->size;
		end = e_end > end ? e_end : end;
		b->n++;
	}
	b->extent = at > end ? at : end;
	return 0;
}

static int bundle_inflate(const uint8_t *p, size_t n, struct amdgpu_bundle *b, char **cause)
{
	struct ccob_header h;
	if (ccob_header(p, n, &h, cause) < 0)
		return -1;
	if (h.method == CCOB_METHOD_ZLIB)
		return cause_set(cause, "zlib-compressed offload bundle: ntop reads zstd-compressed ones only "
				 "(build with an LLVM that has zstd, or without --offload-compress)");
	if (h.method != CCOB_METHOD_ZSTD)
		return cause_set(cause, "compressed offload bundle method %u unknown", h.method);
	size_t avail = n - h.payload;
	if (h.total) {
		if (h.total < h.payload || h.total > n)
			return cause_set(cause, "compressed offload bundle claims %llu bytes; %zu are there",
					 (unsigned long long)h.total, n);
		avail = (size_t)h.total - h.payload;
	}
	size_t frame = ZSTD_findFrameCompressedSize(p + h.payload, avail);
	if (ZSTD_isError(frame))
		return cause_set(cause, "compressed offload bundle: %s", ZSTD_getErrorName(frame));
	if (h.raw < BUNDLE_TABLE_START || h.raw > AMDGPU_BUNDLE_MAX_SIZE)
		return cause_set(cause, "compressed offload bundle claims %llu bytes uncompressed",
				 (unsigned long long)h.raw);
	unsigned long long framed = ZSTD_getFrameContentSize(p + h.payload, frame);
	if (framed != ZSTD_CONTENTSIZE_UNKNOWN && framed != h.raw)
		return cause_set(cause, "compressed offload bundle sizes disagree (header %llu, frame %llu)",
				 (unsigned long long)h.raw, framed);
	b->inflated = malloc((size_t)h.raw);
	if (!b->inflated)
		return cause_set(cause, "out of memory inflating an offload bundle");
	size_t got = ZSTD_decompress(b->inflated, (size_t)h.raw, p + h.payload, frame);
	if (ZSTD_isError(got) || got != h.raw)
		return cause_set(cause, "compressed offload bundle corrupt: %s",
				 ZSTD_isError(got) ? ZSTD_getErrorName(got) : "short output");
	if (memcmp(b->inflated, AMDGPU_BUNDLE_MAGIC, AMDGPU_BUNDLE_MAGIC_LEN) != 0)
		return cause_set(cause, "compressed offload bundle does not inflate to a bundle");
	if (bundle_parse_plain(b->inflated, got, b, cause) < 0)
		return -1;
	b->compressed = (int)h.version;
	b->extent = h.total ? (size_t)h.total : h.payload + frame;
	return 0;
}

int amdgpu_bundle_parse(const uint8_t *p, size_t n, struct amdgpu_bundle *b, char **cause)
{
	memset(b, 0, sizeof *b);
	int kind = amdgpu_bundle_kind(p, n);
	int r = kind == 1   ? bundle_parse_plain(p, n, b, cause)
		: kind == 2 ? bundle_inflate(p, n, b, cause)
			    : cause_set(cause, "not an offload bundle");
	if (r < 0)
		amdgpu_bundle_done(b);
	return r;
}

void amdgpu_bundle_done(struct amdgpu_bundle *b)
{
	free(b->v);
	free(b->inflated);
	memset(b, 0, sizeof *b);
}

int amdgpu_bundle_unwrap(const uint8_t *image, size_t size, const uint8_t **data, size_t *len, char **cause)
{
	if (size && size < AMDGPU_HIPF_SIZE)
		return cause_set(cause, "HIP fat binary wrapper truncated (%zu of %d bytes)", size, AMDGPU_HIPF_SIZE);
	uint32_t version = image_bytes_le32(image + 4);
	if (version != 1)
		return cause_set(cause, "HIP fat binary wrapper version %u unknown (known: 1)", version);
	uintptr_t addr = (uintptr_t)image_bytes_le64(image + 8);
	if (!addr)
		return cause_set(cause, "HIP fat binary wrapper holds a null bundle pointer");
	const uint8_t *c = (const uint8_t *)addr;
	size_t avail;
	if (size == 0) {
		avail = amdgpu_bundle_extent(c);
		if (!avail)
			return cause_set(cause, "HIP fat binary wrapper does not point at an offload bundle");
	} else {
		uintptr_t base = (uintptr_t)image;
		if (addr < base || addr - base >= size)
			return cause_set(cause, "HIP fat binary wrapper points outside the %zu-byte image", size);
		avail = size - (size_t)(addr - base);
		int k = amdgpu_bundle_kind(c, avail);
		if (k != 1 && k != 2)
			return cause_set(cause, "HIP fat binary wrapper does not point at an offload bundle");
	}
	*data = c;
	*len = avail;
	return 0;
}
