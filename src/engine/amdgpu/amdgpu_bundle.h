/* Clang offload bundles, the container HIP programs hand the runtime, and
 * the HIP fat binary wrapper that points at them. Layouts (little endian),
 * checked against clang-offload-bundler 19 and Debian's ROCm 5.x libraries:
 *   wrapper    (.hipFatBinSegment, what __hipRegisterFatBinary receives):
 *              u32 magic 0x48495046 ("HIPF"), u32 version 1, u64 address
 *              of the bundle, u64 unused.
 *   bundle     "__CLANG_OFFLOAD_BUNDLE__" (24 bytes), u64 entry count, then
 *              per entry u64 offset (from the bundle start), u64 size, u64
 *              ID length, ID bytes ("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-";
 *              the host entry "host-x86_64-unknown-linux-gnu-" is empty).
 *              Code objects sit 4096-aligned after the table.
 *   compressed "CCOB", u16 version, u16 method (0 zlib, 1 zstd), then
 *              v1: u32 uncompressed size; v2: u32 total size, u32
 *              uncompressed size; v3: u64 total, u64 uncompressed; then a
 *              u64 hash and the compressed plain bundle.
 * A host ELF's .hip_fatbin section holds one bundle per translation unit
 * back to back, each padded to 4096 bytes. */
#ifndef NTOP_AMDGPU_BUNDLE_H
#define NTOP_AMDGPU_BUNDLE_H
#include <stddef.h>
#include <stdint.h>

#define AMDGPU_HIPF_MAGIC 0x48495046u
#define AMDGPU_HIPF_SIZE 24
#define AMDGPU_BUNDLE_MAGIC "__CLANG_OFFLOAD_BUNDLE__"
#define AMDGPU_BUNDLE_MAGIC_LEN 24
#define AMDGPU_CCOB_MAGIC "CCOB"
/* Refuse to inflate a bundle beyond this (bytes), as fatbin.c does. */
#define AMDGPU_BUNDLE_MAX_SIZE ((size_t)1 << 31)
#define AMDGPU_BUNDLE_ID_MAX 256

struct amdgpu_bundle_entry {
	char id[AMDGPU_BUNDLE_ID_MAX];
	const uint8_t *data; /* into the image, or into the bundle's inflated copy */
	size_t size;
};

struct amdgpu_bundle {
	struct amdgpu_bundle_entry *v;
	int n;
	size_t extent;       /* bytes of the image this bundle occupies (header to last byte) */
	int compressed;      /* 0, or the CCOB version */
	uint8_t *inflated;   /* owned decompressed plain bundle (compressed ones) */
};

/* 1 plain bundle, 2 compressed bundle, 3 HIPF wrapper, else 0. */
int amdgpu_bundle_kind(const uint8_t *p, size_t avail);
/* Parses the plain or compressed bundle at p (n bytes available; entries
 * must lie inside). Compressed ones are inflated (zstd; zlib is refused by
 * name). */
int amdgpu_bundle_parse(const uint8_t *p, size_t n, struct amdgpu_bundle *b, char **cause);
void amdgpu_bundle_done(struct amdgpu_bundle *b);
/* Bytes a bundle at a live pointer claims from its own header (entry table
 * or CCOB total size); 0 when that cannot be told (corrupt, or CCOB v1). */
size_t amdgpu_bundle_extent(const uint8_t *p);
/* Follows a HIPF wrapper to its bundle. With size 0 the address is trusted
 * (a live in-process wrapper) and *len comes from amdgpu_bundle_extent;
 * otherwise it must point inside [image, image+size). */
int amdgpu_bundle_unwrap(const uint8_t *image, size_t size, const uint8_t **data, size_t *len, char **cause);

#endif
