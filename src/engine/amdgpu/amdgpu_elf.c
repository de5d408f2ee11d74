/* AMDGPU code object reading (layout in amdgpu_elf.h). Headers are copied
 * out with memcpy (images are not aligned) and every table, section, note
 * and string is bounds-checked against the image size first. */
#include "engine/amdgpu/amdgpu_elf.h"

#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"
#include "engine/image/image_bytes.h"

#define EF_MACH_MASK 0xffu
#define EF_XNACK_V4 0x300u
#define EF_SRAMECC_V4 0xc00u
#define EF_XNACK_V3 0x100u
#define EF_SRAMECC_V3 0x200u

int amdgpu_elf_is(const uint8_t *p, size_t avail)
{
	return avail >= sizeof(Elf64_Ehdr) && memcmp(p, ELFMAG, SELFMAG) == 0 && p[EI_CLASS] == ELFCLASS64 &&
	       p[EI_DATA] == ELFDATA2LSB && image_bytes_le16(p + offsetof(Elf64_Ehdr, e_machine)) == AMDGPU_EM;
}

static void amdgpu_elf_shdr(const struct amdgpu_elf *e, const Elf64_Ehdr *eh, unsigned i, Elf64_Shdr *sh)
{
	memcpy(sh, e->p + eh->e_shoff + (uint64_t)i * sizeof *sh, sizeof *sh);
}

static enum amdgpu_feature amdgpu_elf_feature_v4(uint32_t bits)
{
	static const enum amdgpu_feature v[] = { AMDGPU_FEAT_UNSUPPORTED, AMDGPU_FEAT_ANY, AMDGPU_FEAT_OFF,
						 AMDGPU_FEAT_ON };
	return v[bits & 3];
}

static int amdgpu_elf_header(struct amdgpu_elf *e, const Elf64_Ehdr *eh, char **cause)
{
	if (eh->e_ident[EI_OSABI] != AMDGPU_OSABI_HSA)
		return cause_set(cause, "AMDGPU code object for OS/ABI %u, not HSA (64)", eh->e_ident[EI_OSABI]);
	int abi = eh->e_ident[EI_ABIVERSION];
	if (abi == 0)
		return cause_set(cause, "AMDGPU code object v2 (YAML metadata) is not supported: rebuild for code "
				 "object v4 or later");
	if (abi > 4)
		return cause_set(cause, "AMDGPU code object ABI version %d unknown (known: 1-4, code object v3-v6)",
				 abi);
	e->co_version = abi + 2;
	e->flags = eh->e_flags;
	const char *proc = amdgpu_target_mach_name(e->flags & EF_MACH_MASK);
	if (!proc)
		return cause_set(cause, "AMDGPU processor 0x%x (e_flags 0x%x) unknown", e->flags & EF_MACH_MASK,
				 e->flags);
	memset(&e->target, 0, sizeof e->target);
	strcpy(e->target.proc, proc);
	if (e->co_version == 3) {
		e->target.xnack = e->flags & EF_XNACK_V3 ? AMDGPU_FEAT_ON : AMDGPU_FEAT_ANY;
		e->target.sramecc = e->flags & EF_SRAMECC_V3 ? AMDGPU_FEAT_ON : AMDGPU_FEAT_ANY;
	} else {
		e->target.xnack = amdgpu_elf_feature_v4((e->flags & EF_XNACK_V4) >> 8);
		e->target.sramecc = amdgpu_elf_feature_v4((e->flags & EF_SRAMECC_V4) >> 10);
	}
	e->generic_version = e->co_version >= 6 ? (int)(e->flags >> 24) : 0;
	e->family = amdgpu_target_family(proc);
	return 0;
}

/* Walks one SHT_NOTE section for the AMDGPU metadata note. */
static int amdgpu_elf_notes(struct amdgpu_elf *e, const Elf64_Shdr *sh, char **cause)
{
	uint64_t at = sh->sh_offset, end = sh->sh_offset + sh->sh_size;
	while (end - at >= 12) {
		uint32_t namesz = image_bytes_le32(e->p + at), descsz = image_bytes_le32(e->p + at + 4),
			 type = image_bytes_le32(e->p + at + 8);
		uint64_t name_at = at + 12, desc_at = name_at + (((uint64_t)namesz + 3) & ~3ull);
		uint64_t next = desc_at + (((uint64_t)descsz + 3) & ~3ull);
		if (next > end)
			return cause_set(cause, "AMDGPU note at byte %llu runs past its section",
					 (unsigned long long)at);
		if (namesz == 7 && memcmp(e->p + name_at, "AMDGPU", 7) == 0 && type == AMDGPU_NT_METADATA) {
			e->meta = e->p + desc_at;
			e->meta_len = descsz;
			e->meta_off = (size_t)desc_at;
			return 0;
		}
		at = next;
	}
	return 0;
}

size_t amdgpu_elf_addr_offset(const struct amdgpu_elf *e, uint64_t addr, uint64_t len)
{
	Elf64_Ehdr eh;
	memcpy(&eh, e->p, sizeof eh);
	for (unsigned i = 0; i < eh.e_shnum; i++) {
		Elf64_Shdr sh;
		amdgpu_elf_shdr(e, &eh, i, &sh);
		if (sh.sh_type == SHT_NOBITS || !(sh.sh_flags & SHF_ALLOC) || addr < sh.sh_addr ||
		    addr - sh.sh_addr > sh.sh_size || len > sh.sh_size - (addr - sh.sh_addr))
			continue;
		return (size_t)(sh.sh_offset + (addr - sh.sh_addr));
	}
	return (size_t)-1;
}

static int amdgpu_elf_push(struct amdgpu_elf *e, int *cap, const char *name, size_t len, char **cause)
{
	if (e->n_kernels == *cap) {
		int ncap = *cap ? *cap * 2 : 8;
		struct amdgpu_elf_kernel *v = realloc(e->kernels, (size_t)ncap * sizeof *v);
		if (!v)
			return cause_set(cause, "out of memory listing AMDGPU kernels");
		e->kernels = v;
		*cap = ncap;
	}
	struct amdgpu_elf_kernel *k = &e->kernels[e->n_kernels];
	memset(k, 0, sizeof *k);
	k->name = strndup(name, len);
	if (!k->name)
		return cause_set(cause, "out of memory listing AMDGPU kernels");
	e->n_kernels++;
	return 0;
}

struct amdgpu_syms {
	const uint8_t *syms;
	size_t n;
	const char *str;
	size_t str_len;
};

static const char *amdgpu_sym_name(const struct amdgpu_syms *s, const Elf64_Sym *sym)
{
	if (sym->st_name >= s->str_len || !memchr(s->str + sym->st_name, 0, s->str_len - sym->st_name))
		return NULL;
	return s->str + sym->st_name;
}

/* Kernels: every NAME.kd object of 64 bytes; the code is NAME's symbol. */
static int amdgpu_elf_kernels(struct amdgpu_elf *e, const struct amdgpu_syms *s, char **cause)
{
	int cap = 0;
	for (size_t i = 0; i < s->n; i++) {
		Elf64_Sym sym;
		memcpy(&sym, s->syms + i * sizeof sym, sizeof sym);
		const char *nm = amdgpu_sym_name(s, &sym);
		size_t len = nm ? strlen(nm) : 0;
		if (!nm || len < 4 || strcmp(nm + len - 3, ".kd") || ELF64_ST_TYPE(sym.st_info) != STT_OBJECT ||
		    sym.st_shndx == SHN_UNDEF)
			continue;
		if (sym.st_size != 64)
			return cause_set(cause, "kernel descriptor %s is %llu bytes, not 64", nm,
					 (unsigned long long)sym.st_size);
		size_t off = amdgpu_elf_addr_offset(e, sym.st_value, 64);
		if (off == (size_t)-1)
			return cause_set(cause, "kernel descriptor %s lies outside the image's sections", nm);
		if (amdgpu_elf_push(e, &cap, nm, len - 3, cause) < 0)
			return -1;
		struct amdgpu_elf_kernel *k = &e->kernels[e->n_kernels - 1];
		k->kd_addr = sym.st_value;
		k->kd_off = off;
	}
	for (size_t i = 0; i < s->n; i++) {
		Elf64_Sym sym;
		memcpy(&sym, s->syms + i * sizeof sym, sizeof sym);
		const char *nm = amdgpu_sym_name(s, &sym);
		if (!nm || ELF64_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF)
			continue;
		for (int k = 0; k < e->n_kernels; k++) {
			struct amdgpu_elf_kernel *kk = &e->kernels[k];
			if (kk->code_addr || strcmp(kk->name, nm))
				continue;
			size_t off = amdgpu_elf_addr_offset(e, sym.st_value, sym.st_size);
			if (off == (size_t)-1)
				return cause_set(cause, "kernel %s's code lies outside the image's sections", nm);
			kk->code_addr = sym.st_value;
			kk->code_size = sym.st_size;
			kk->code_off = off;
		}
	}
	return 0;
}

/* The symbol table (.symtab, else .dynsym) and the notes. */
static int amdgpu_elf_sections(struct amdgpu_elf *e, const Elf64_Ehdr *eh, char **cause)
{
	struct amdgpu_syms s = { 0 }, dyn = { 0 };
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		Elf64_Shdr sh;
		amdgpu_elf_shdr(e, eh, i, &sh);
		if (sh.sh_type == SHT_NOBITS || sh.sh_type == SHT_NULL)
			continue;
		if (!image_bytes_span_ok(sh.sh_offset, sh.sh_size, e->size))
			return cause_set(cause, "section %u (%llu bytes at %llu) lies outside the %zu-byte code object",
					 i, (unsigned long long)sh.sh_size, (unsigned long long)sh.sh_offset, e->size);
		if (sh.sh_type == SHT_NOTE && !e->meta && amdgpu_elf_notes(e, &sh, cause) < 0)
			return -1;
		if (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM)
			continue;
		if (sh.sh_link >= eh->e_shnum || sh.sh_entsize != sizeof(Elf64_Sym))
			return cause_set(cause, "symbol table section %u is malformed", i);
		Elf64_Shdr str;
		amdgpu_elf_shdr(e, eh, sh.sh_link, &str);
		if (str.sh_type == SHT_NOBITS || !image_bytes_span_ok(str.sh_offset, str.sh_size, e->size))
			return cause_set(cause, "symbol string table of section %u lies outside the image", i);
		struct amdgpu_syms *t = sh.sh_type == SHT_SYMTAB ? &s : &dyn;
		t->syms = e->p + sh.sh_offset;
		t->n = (size_t)(sh.sh_size / sizeof(Elf64_Sym));
		t->str = (const char *)e->p + str.sh_offset;
		t->str_len = (size_t)str.sh_size;
	}
	if (!e->meta)
		return cause_set(cause, "AMDGPU code object has no metadata note (NT_AMDGPU_METADATA)");
	if (!s.syms)
		s = dyn;
	if (!s.syms)
		return cause_set(cause, "AMDGPU code object has no symbol table");
	return amdgpu_elf_kernels(e, &s, cause);
}

int amdgpu_elf_open(const uint8_t *p, size_t size, struct amdgpu_elf *e, char **cause)
{
	memset(e, 0, sizeof *e);
	if (!amdgpu_elf_is(p, size))
		return cause_set(cause, "not an AMDGPU code object (ELF64, e_machine 224)");
	e->p = p;
	e->size = size;
	Elf64_Ehdr eh;
	memcpy(&eh, p, sizeof eh);
	if (eh.e_shnum == 0 || eh.e_shentsize != sizeof(Elf64_Shdr) ||
	    !image_bytes_span_ok(eh.e_shoff, (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr), size))
		return cause_set(cause, "AMDGPU code object's section header table is missing or outside the "
				 "%zu-byte image", size);
	if (amdgpu_elf_header(e, &eh, cause) < 0 || amdgpu_elf_sections(e, &eh, cause) < 0) {
		amdgpu_elf_done(e);
		return -1;
	}
	return 0;
}

void amdgpu_elf_done(struct amdgpu_elf *e)
{
	for (int i = 0; i < e->n_kernels; i++)
		free(e->kernels[i].name);
	free(e->kernels);
	e->kernels = NULL;
	e->n_kernels = 0;
}

const struct amdgpu_elf_kernel *amdgpu_elf_kernel(const struct amdgpu_elf *e, const char *name)
{
	size_t len = strlen(name);
	if (len > 3 && strcmp(name + len - 3, ".kd") == 0)
		len -= 3;
	for (int i = 0; i < e->n_kernels; i++)
		if (strlen(e->kernels[i].name) == len && strncmp(e->kernels[i].name, name, len) == 0)
			return &e->kernels[i];
	return NULL;
}

int amdgpu_elf_symbol(const uint8_t *p, size_t size, const char *name, uint64_t *value, char **cause)
{
	if (!amdgpu_elf_is(p, size))
		return cause_set(cause, "not an AMDGPU ELF");
	Elf64_Ehdr eh;
	memcpy(&eh, p, sizeof eh);
	if (eh.e_shentsize != sizeof(Elf64_Shdr) ||
	    !image_bytes_span_ok(eh.e_shoff, (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr), size))
		return cause_set(cause, "ELF section header table outside the image");
	struct amdgpu_elf e = { .p = p, .size = size };
	for (unsigned i = 0; i < eh.e_shnum; i++) {
		Elf64_Shdr sh, str;
		amdgpu_elf_shdr(&e, &eh, i, &sh);
		if (sh.sh_type != SHT_SYMTAB || sh.sh_link >= eh.e_shnum)
			continue;
		amdgpu_elf_shdr(&e, &eh, sh.sh_link, &str);
		if (!image_bytes_span_ok(sh.sh_offset, sh.sh_size, size) ||
		    !image_bytes_span_ok(str.sh_offset, str.sh_size, size))
			return cause_set(cause, "symbol table outside the image");
		struct amdgpu_syms s = { p + sh.sh_offset, (size_t)(sh.sh_size / sizeof(Elf64_Sym)),
					 (const char *)p + str.sh_offset, (size_t)str.sh_size };
		for (size_t k = 0; k < s.n; k++) {
			Elf64_Sym sym;
			memcpy(&sym, s.syms + k * sizeof sym, sizeof sym);
			const char *nm = amdgpu_sym_name(&s, &sym);
			if (nm && strcmp(nm, name) == 0) {
				*value = sym.st_value;
				return 0;
			}
		}
	}
	return 1;
}
