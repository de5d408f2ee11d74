/* The fake's own reader of a code object's kernels: the NT_AMDGPU_METADATA
 * note (msgpack) found through the section headers, and per kernel its
 * name, kernarg size, wave size, VGPRs, LDS and arguments. Only what the fake needs;
 * independent of ntop's engine, so the hook's arguments are checked by
 * another reading of the same metadata. */
#include <elf.h>
#include <stdlib.h>
#include <string.h>
#include "fake_hip.h"

#define NT_AMDGPU_METADATA 32

struct mp {
	const uint8_t *p, *end;
	int bad;
};

static uint64_t mp_be(struct mp *m, int n)
{
	uint64_t v = 0;
	if (m->end - m->p < n) {
		m->bad = 1;
		return 0;
	}
	for (int i = 0; i < n; i++)
		v = v << 8 | *m->p++;
	return v;
}

/* Container or string header: 'm' map, 'a' array, 's' string, 'u'
 * unsigned, 'o' anything else (skipped by length). *n: entries, length or
 * value. */
static int mp_head(struct mp *m, uint64_t *n)
{
	if (m->p >= m->end) {
		m->bad = 1;
		return 'o';
	}
	uint8_t t = *m->p++;
	if (t <= 0x7f)
		return *n = t, 'u';
	if (t >= 0x80 && t <= 0x8f)
		return *n = t & 15, 'm';
	if (t >= 0x90 && t <= 0x9f)
		return *n = t & 15, 'a';
	if (t >= 0xa0 && t <= 0xbf)
		return *n = t & 31, 's';
	if (t >= 0xe0)
		return *n = 0, 'o';
	switch (t) {
	case 0xc0: case 0xc2: case 0xc3: return *n = 0, 'o';
	case 0xc4: *n = mp_be(m, 1); m->p += *n; return 'o';
	case 0xc5: *n = mp_be(m, 2); m->p += *n; return 'o';
	case 0xc6: *n = mp_be(m, 4); m->p += *n; return 'o';
	case 0xca: m->p += 4; return *n = 0, 'o';
	case 0xcb: m->p += 8; return *n = 0, 'o';
	case 0xcc: return *n = mp_be(m, 1), 'u';
	case 0xcd: return *n = mp_be(m, 2), 'u';
	case 0xce: return *n = mp_be(m, 4), 'u';
	case 0xcf: return *n = mp_be(m, 8), 'u';
	case 0xd0: m->p += 1; return *n = 0, 'o';
	case 0xd1: m->p += 2; return *n = 0, 'o';
	case 0xd2: m->p += 4; return *n = 0, 'o';
	case 0xd3: m->p += 8; return *n = 0, 'o';
	case 0xd9: return *n = mp_be(m, 1), 's';
	case 0xda: return *n = mp_be(m, 2), 's';
	case 0xdb: return *n = mp_be(m, 4), 's';
	case 0xdc: return *n = mp_be(m, 2), 'a';
	case 0xdd: return *n = mp_be(m, 4), 'a';
	case 0xde: return *n = mp_be(m, 2), 'm';
	case 0xdf: return *n = mp_be(m, 4), 'm';
	}
	m->bad = 1;
	return 'o';
}

static void mp_skip(struct mp *m, int depth)
{
	uint64_t n;
	int t = mp_head(m, &n);
	if (depth > 32 || m->bad)
		m->bad = 1;
	else if (t == 's')
		m->p += n;
	else if (t == 'a')
		for (uint64_t i = 0; i < n && !m->bad; i++)
			mp_skip(m, depth + 1);
	else if (t == 'm')
		for (uint64_t i = 0; i < 2 * n && !m->bad; i++)
			mp_skip(m, depth + 1);
	if (m->p > m->end)
		m->bad = 1;
}

/* A string into buf (cut to fit); 0 when the next item is one. */
static int mp_str(struct mp *m, char *buf, size_t len)
{
	uint64_t n;
	const uint8_t *save = m->p;
	if (mp_head(m, &n) != 's' || (uint64_t)(m->end - m->p) < n) {
		m->p = save;
		return -1;
	}
	size_t c = n < len - 1 ? (size_t)n : len - 1;
	memcpy(buf, m->p, c);
	buf[c] = 0;
	m->p += n;
	return 0;
}

static int mp_uint(struct mp *m, uint64_t *v)
{
	const uint8_t *save = m->p;
	if (mp_head(m, v) != 'u') {
		m->p = save;
		mp_skip(m, 0);
		return -1;
	}
	return 0;
}

static void meta_arg(struct mp *m, struct fh_arg *a)
{
	uint64_t n, v;
	if (mp_head(m, &n) != 'm')
		return (void)(m->bad = 1);
	for (uint64_t i = 0; i < n && !m->bad; i++) {
		char key[32];
		if (mp_str(m, key, sizeof key) < 0)
			return (void)(m->bad = 1);
		if (strcmp(key, ".offset") == 0 && mp_uint(m, &v) == 0)
			a->offset = (uint32_t)v;
		else if (strcmp(key, ".size") == 0 && mp_uint(m, &v) == 0)
			a->size = (uint32_t)v;
		else if (strcmp(key, ".value_kind") == 0)
			mp_str(m, a->kind, sizeof a->kind);
		else if (strcmp(key, ".name") == 0)
			mp_str(m, a->name, sizeof a->name);
		else
			mp_skip(m, 0);
	}
}

static void meta_kernel(struct mp *m, struct fh_kernel *k)
{
	uint64_t n, v;
	if (mp_head(m, &n) != 'm')
		return (void)(m->bad = 1);
	for (uint64_t i = 0; i < n && !m->bad; i++) {
		char key[40];
		if (mp_str(m, key, sizeof key) < 0)
			return (void)(m->bad = 1);
		if (strcmp(key, ".name") == 0)
			mp_str(m, k->name, sizeof k->name);
		else if (strcmp(key, ".kernarg_segment_size") == 0 && mp_uint(m, &v) == 0)
			k->kernarg_size = (uint32_t)v;
		else if (strcmp(key, ".wavefront_size") == 0 && mp_uint(m, &v) == 0)
			k->wave = (int)v;
		else if (strcmp(key, ".vgpr_count") == 0 && mp_uint(m, &v) == 0)
			k->vgprs = (uint32_t)v;
		else if (strcmp(key, ".group_segment_fixed_size") == 0 && mp_uint(m, &v) == 0)
			k->lds = (uint32_t)v;
		else if (strcmp(key, ".args") == 0 && mp_head(m, &v) == 'a')
			for (uint64_t j = 0; j < v && !m->bad; j++)
				if (k->n_args < FH_MAX_ARGS)
					meta_arg(m, &k->args[k->n_args++]);
				else
					mp_skip(m, 0);
		else
			mp_skip(m, 0);
	}
}

static int meta_parse(const uint8_t *p, size_t len, struct fh_kernel **out, int *n)
{
	struct mp m = { p, p + len, 0 };
	uint64_t keys, cnt;
	if (mp_head(&m, &keys) != 'm')
		return -1;
	for (uint64_t i = 0; i < keys && !m.bad; i++) {
		char key[40];
		if (mp_str(&m, key, sizeof key) < 0)
			return -1;
		if (strcmp(key, "amdhsa.kernels") != 0 || mp_head(&m, &cnt) != 'a') {
			if (strcmp(key, "amdhsa.kernels") == 0)
				return -1;
			mp_skip(&m, 0);
			continue;
		}
		if (cnt > 100000)
			return -1;
		*out = calloc(cnt ? cnt : 1, sizeof **out);
		if (!*out)
			return -1;
		for (uint64_t j = 0; j < cnt && !m.bad; j++)
			meta_kernel(&m, &(*out)[j]);
		*n = (int)cnt;
	}
	return m.bad || !*out ? -1 : 0;
}

int fh_meta_read(const uint8_t *co, size_t size, struct fh_kernel **out, int *n)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)co;
	*out = NULL;
	*n = 0;
	if (size < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_machine != EM_AMDGPU ||
	    eh->e_shoff > size || eh->e_shnum > (size - eh->e_shoff) / sizeof(Elf64_Shdr))
		return -1;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(co + eh->e_shoff);
	for (int i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_NOTE || sh[i].sh_offset > size || sh[i].sh_size > size - sh[i].sh_offset)
			continue;
		const uint8_t *p = co + sh[i].sh_offset, *end = p + sh[i].sh_size;
		while (end - p >= 12) {
			uint32_t nsz, dsz, type;
			memcpy(&nsz, p, 4);
			memcpy(&dsz, p + 4, 4);
			memcpy(&type, p + 8, 4);
			const uint8_t *name = p + 12, *desc = name + ((nsz + 3) & ~3u);
			if (desc > end || dsz > (size_t)(end - desc))
				break;
			if (type == NT_AMDGPU_METADATA && nsz == 7 && memcmp(name, "AMDGPU", 7) == 0)
				return meta_parse(desc, dsz, out, n);
			p = desc + ((dsz + 3) & ~3u);
		}
	}
	return -1;
}
