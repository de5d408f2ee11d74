/* The test doubles' "cubin": an ELF64 header (EM_CUDA) with two section
 * headers, the second covering the PTX it was made from, which follows at
 * FAKE_CUBIN_PTX. The hook takes it for a cubin (its bytes span header,
 * table and PTX), the fake driver reads the PTX's kernels out of it. Made by
 * the fake driver's cuLinkComplete and the fake NVRTC and nvJitLink. */
#ifndef FAKECUDA_FAKE_CUBIN_H
#define FAKECUDA_FAKE_CUBIN_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_CUBIN_PTX 192
/* The fake nvJitLink's "LTO-IR": this, then PTX. */
#define FAKE_LTOIR_MAGIC "FAKE-LTOIR\n"

static inline void fake_cubin_put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* malloc'd cubin for ptx; *size: its bytes (PTX and NUL included). */
static inline uint8_t *fake_cubin_make(const char *ptx, size_t *size)
{
	size_t plen = ptx ? strlen(ptx) : 0;
	uint8_t *e = calloc(1, FAKE_CUBIN_PTX + plen + 1);
	if (!e)
		return NULL;
	memcpy(e, "\177ELF\2\1\1", 7); /* ELF64, little endian */
	e[18] = 190;                   /* EM_CUDA */
	e[40] = 64;                    /* e_shoff */
	e[58] = 64;                    /* e_shentsize */
	e[60] = 2;                     /* e_shnum: null, the PTX */
	e[128 + 4] = 1;                /* section 1: SHT_PROGBITS */
	fake_cubin_put64(e + 128 + 24, FAKE_CUBIN_PTX);
	fake_cubin_put64(e + 128 + 32, plen + 1);
	if (plen)
		memcpy(e + FAKE_CUBIN_PTX, ptx, plen);
	*size = FAKE_CUBIN_PTX + plen + 1;
	return e;
}

/* The PTX inside one of ours, NULL for anything else. */
static inline const char *fake_cubin_ptx(const void *image)
{
	const uint8_t *u = image;
	if (memcmp(u, "\177ELF", 4) != 0 || u[18] != 190 || u[40] != 64 || u[58] != 64 || u[60] != 2)
		return NULL;
	return (const char *)u + FAKE_CUBIN_PTX;
}

#endif
