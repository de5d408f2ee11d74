/* The fake's own reading of what HIP programs hand the runtime: a HIPF
 * wrapper (u32 "HIPF" magic, u32 version, u64 address of the bundle), a
 * clang offload bundle ("__CLANG_OFFLOAD_BUNDLE__", u64 entries, then per
 * entry u64 offset, u64 size, u64 ID length, ID), a compressed one ("CCOB"
 * v2/v3, zstd), or a bare code object. The entry for the fake's processor
 * (FAKEHIP_ARCH up to the first ':') is copied out. */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include "fake_hip.h"

#define FH_BUNDLE_MAGIC "__CLANG_OFFLOAD_BUNDLE__"

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static int bundle_entry(const uint8_t *b, size_t avail, uint8_t **co, size_t *size)
{
	char proc[64], want[96];
	fh_arch_proc(proc, sizeof proc);
	snprintf(want, sizeof want, "amdgcn-amd-amdhsa--%s", proc);
	uint64_t n = rd64(b + 24);
	const uint8_t *e = b + 32;
	for (uint64_t i = 0; i < n && i < 4096; i++) {
		uint64_t off = rd64(e), sz = rd64(e + 8), idlen = rd64(e + 16);
		const char *id = (const char *)e + 24;
		e += 24 + idlen;
		if (idlen > 512 || (avail && (off > avail || sz > avail - off)))
			return -1;
		/* "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-": the processor ends the ID or a ':' follows it */
		const char *at = memmem(id, idlen, want, strlen(want));
		size_t end = at ? (size_t)(at - id) + strlen(want) : 0;
		if (!at || (end < idlen && id[end] != ':') || sz == 0)
			continue;
		if (!(*co = malloc(sz)))
			return -1;
		memcpy(*co, b + off, sz);
		*size = sz;
		return 0;
	}
	return -1;
}

static int bundle_inflate(const uint8_t *c, uint8_t **co, size_t *size)
{
	uint16_t version, method;
	memcpy(&version, c + 4, 2);
	memcpy(&method, c + 6, 2);
	uint64_t total, raw;
	size_t head;
	if (method != 1)
		return -1; /* zstd only */
	if (version == 2) {
		uint32_t t, r;
		memcpy(&t, c + 8, 4);
		memcpy(&r, c + 12, 4);
		total = t, raw = r, head = 24;
	} else if (version == 3) {
		total = rd64(c + 8), raw = rd64(c + 16), head = 32;
	} else {
		return -1;
	}
	if (total < head || raw > ((uint64_t)1 << 31))
		return -1;
	uint8_t *plain = malloc(raw ? raw : 1);
	if (!plain)
		return -1;
	size_t got = ZSTD_decompress(plain, raw, c + head, total - head);
	int rc = -1;
	if (!ZSTD_isError(got) && got == raw && raw >= 32 && memcmp(plain, FH_BUNDLE_MAGIC, 24) == 0)
		rc = bundle_entry(plain, raw, co, size);
	free(plain);
	return rc;
}

/* EF_AMDGPU_MACH of the processors the tests use (LLVM's AMDGPUUsage). */
static unsigned bare_mach(void)
{
	static const struct {
		const char *proc;
		unsigned mach;
	} t[] = { { "gfx90a", 0x3f }, { "gfx942", 0x4c }, { "gfx1100", 0x41 }, { "gfx1201", 0x4e } };
	char proc[64];
	fh_arch_proc(proc, sizeof proc);
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		if (strcmp(proc, t[i].proc) == 0)
			return t[i].mach;
	return 0;
}

/* A bare code object for the device's processor: its size from the
 * section header table at its end. */
static int bare_object(const uint8_t *p, uint8_t **co, size_t *size)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)p;
	size_t sz = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	if (eh->e_machine != EM_AMDGPU || (eh->e_flags & 0xff) != bare_mach() || sz < sizeof *eh ||
	    sz > ((size_t)1 << 31) || !(*co = malloc(sz)))
		return -1;
	memcpy(*co, p, sz);
	*size = sz;
	return 0;
}

int fh_bundle_pick(const void *image, uint8_t **co, size_t *size)
{
	const uint8_t *p = image;
	uint32_t magic;
	memcpy(&magic, p, 4);
	if (magic == 0x48495046u) { /* "HIPF" */
		const uint8_t *b = (const uint8_t *)(uintptr_t)rd64(p + 8);
		return b ? fh_bundle_pick(b, co, size) : -1;
	}
	if (memcmp(p, FH_BUNDLE_MAGIC, 24) == 0)
		return bundle_entry(p, 0, co, size);
	if (memcmp(p, "CCOB", 4) == 0)
		return bundle_inflate(p, co, size);
	if (memcmp(p, ELFMAG, SELFMAG) == 0)
		return bare_object(p, co, size);
	return -1;
}
