/* ELF64 reading for cubins and host binaries (see elf_image.h). Headers are
 * copied out with memcpy (images are not aligned) and every table, section
 * and string is bounds-checked against the image size first.
 *
 * Cubin facts (CUDA 13 nvcc/ptxas output, checked with readelf): OS/ABI 0x41
 * with ABI version 8 keeps the SM number in e_flags bits 8..15 (sm_75:
 * 0x6004b04, sm_120: 0x6007802); older toolkits (ABI version 7, OS/ABI 0x33)
 * kept it in bits 0..7. Kernels are STT_FUNC symbols with st_other bit 0x10
 * (entry) living in their own `.text.<name>` section; `-rdc` device functions
 * also get `.text.<name>` and `.nv.info.<name>` but lack the entry bit. */
#include "engine/image/elf_image.h"

#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"
#include "engine/image/image_bytes.h"

#define ELF_IMAGE_STO_ENTRY 0x10
/* Any image claiming to be larger than this is corrupt (bytes). */
#define ELF_IMAGE_MAX_EXTENT ((uint64_t)1 << 36)

struct elf_view {
	const uint8_t *p;
	size_t size;
	Elf64_Ehdr eh;
	const char *shstr;
	size_t shstr_len;
};

int elf_image_is_elf64(const uint8_t *p, size_t avail)
{
	return avail >= sizeof(Elf64_Ehdr) && memcmp(p, ELFMAG, SELFMAG) == 0 && p[EI_CLASS] == ELFCLASS64 &&
	       p[EI_DATA] == ELFDATA2LSB;
}

int elf_image_machine(const uint8_t *p)
{
	return image_bytes_le16(p + 18);
}

static void elf_image_shdr(const struct elf_view *v, unsigned i, Elf64_Shdr *sh)
{
	memcpy(sh, v->p + v->eh.e_shoff + (uint64_t)i * sizeof *sh, sizeof *sh);
}

/* Checks the header and both header tables; sets up the section names. */
static int elf_image_open(const uint8_t *p, size_t size, struct elf_view *v, char **cause)
{
	if (!elf_image_is_elf64(p, size))
		return cause_set(cause, "not an ELF64 little-endian image");
	memset(v, 0, sizeof *v);
	v->p = p;
	v->size = size;
	memcpy(&v->eh, p, sizeof v->eh);
	const Elf64_Ehdr *eh = &v->eh;
	if (eh->e_shnum == 0 || eh->e_shentsize != sizeof(Elf64_Shdr))
		return cause_set(cause, "ELF has no usable section header table");
	if (!image_bytes_span_ok(eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr), size))
		return cause_set(cause, "ELF section header table lies outside the %zu-byte image", size);
	if (eh->e_shstrndx >= eh->e_shnum)
		return cause_set(cause, "ELF section name table index %u invalid", eh->e_shstrndx);
	Elf64_Shdr sh;
	elf_image_shdr(v, eh->e_shstrndx, &sh);
	if (sh.sh_type == SHT_NOBITS || !image_bytes_span_ok(sh.sh_offset, sh.sh_size, size))
		return cause_set(cause, "ELF section name table lies outside the image");
	v->shstr = (const char *)p + sh.sh_offset;
	v->shstr_len = (size_t)sh.sh_size;
	return 0;
}

/* A NUL-terminated string at `off` in a table of `len` bytes, or NULL. */
static const char *elf_image_string(const char *table, size_t len, uint64_t off)
{
	if (off >= len || !memchr(table + off, 0, len - off))
		return NULL;
	return table + off;
}

static const char *elf_image_section_name(const struct elf_view *v, const Elf64_Shdr *sh)
{
	return elf_image_string(v->shstr, v->shstr_len, sh->sh_name);
}

static int elf_image_section_data(const struct elf_view *v, const Elf64_Shdr *sh, const uint8_t **data,
				  size_t *len, char **cause)
{
	if (sh->sh_type == SHT_NOBITS) {
		*data = v->p;
		*len = 0;
		return 0;
	}
	if (!image_bytes_span_ok(sh->sh_offset, sh->sh_size, v->size))
		return cause_set(cause, "ELF section of %llu bytes at %llu lies outside the %zu-byte image",
				 (unsigned long long)sh->sh_size, (unsigned long long)sh->sh_offset, v->size);
	*data = v->p + sh->sh_offset;
	*len = (size_t)sh->sh_size;
	return 0;
}

static uint64_t elf_image_max(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* End of a table of n entries of `entsize` at off; UINT64_MAX on overflow. */
static uint64_t elf_image_table_end(uint64_t off, uint64_t n, uint64_t entsize)
{
	uint64_t bytes = n * entsize; /* n, entsize < 2^16: no overflow */
	return off > UINT64_MAX - bytes ? UINT64_MAX : off + bytes;
}

size_t elf_image_extent(const uint8_t *p)
{
	if (!elf_image_is_elf64(p, sizeof(Elf64_Ehdr)))
		return 0;
	Elf64_Ehdr eh;
	memcpy(&eh, p, sizeof eh);
	uint64_t end = sizeof eh;
	if (eh.e_phnum)
		end = elf_image_max(end, elf_image_table_end(eh.e_phoff, eh.e_phnum, eh.e_phentsize));
	if (!eh.e_shnum || eh.e_shentsize != sizeof(Elf64_Shdr))
		return 0;
	end = elf_image_max(end, elf_image_table_end(eh.e_shoff, eh.e_shnum, sizeof(Elf64_Shdr)));
	if (end > ELF_IMAGE_MAX_EXTENT)
		return 0;
	for (unsigned i = 0; i < eh.e_shnum; i++) {
		Elf64_Shdr sh;
		memcpy(&sh, p + eh.e_shoff + (uint64_t)i * sizeof sh, sizeof sh);
		if (sh.sh_type == SHT_NOBITS)
			continue;
		if (sh.sh_offset > ELF_IMAGE_MAX_EXTENT || sh.sh_size > ELF_IMAGE_MAX_EXTENT)
			return 0;
		end = elf_image_max(end, sh.sh_offset + sh.sh_size);
	}
	return end > ELF_IMAGE_MAX_EXTENT || end > SIZE_MAX ? 0 : (size_t)end;
}

int elf_image_section(const uint8_t *p, size_t size, const char *name, const uint8_t **data, size_t *len,
		      char **cause)
{
	struct elf_view v;
	if (elf_image_open(p, size, &v, cause) < 0)
		return -1;
	for (unsigned i = 0; i < v.eh.e_shnum; i++) {
		Elf64_Shdr sh;
		elf_image_shdr(&v, i, &sh);
		const char *s = elf_image_section_name(&v, &sh);
		if (s && strcmp(s, name) == 0)
			return elf_image_section_data(&v, &sh, data, len, cause);
	}
	return 1;
}

int elf_image_cubin_arch(const uint8_t *p, size_t size, char **cause)
{
	if (!elf_image_is_elf64(p, size) || elf_image_machine(p) != ELF_IMAGE_EM_CUDA)
		return cause_set(cause, "not a cubin");
	uint32_t flags = image_bytes_le32(p + offsetof(Elf64_Ehdr, e_flags));
	int sm = p[EI_ABIVERSION] >= 8 ? (int)((flags >> 8) & 0xff) : (int)(flags & 0xff);
	if (sm == 0)
		return cause_set(cause, "cubin e_flags 0x%x hold no SM version", flags);
	return sm;
}

static int elf_image_push_name(char ***names, int *n, int *cap, const char *name, char **cause)
{
	if (*n == *cap) {
		int ncap = *cap ? *cap * 2 : 16;
		char **v = realloc(*names, (size_t)ncap * sizeof *v);
		if (!v)
			return cause_set(cause, "out of memory listing kernel names");
		*names = v;
		*cap = ncap;
	}
	char *copy = strdup(name);
	if (!copy)
		return cause_set(cause, "out of memory listing kernel names");
	(*names)[(*n)++] = copy;
	return 0;
}

/* 1 when symbol `name` is a kernel: an entry function in `.text.<name>`. */
static int elf_image_is_kernel(const struct elf_view *v, const Elf64_Sym *sym, const char *name)
{
	if (ELF64_ST_TYPE(sym->st_info) != STT_FUNC || !(sym->st_other & ELF_IMAGE_STO_ENTRY))
		return 0;
	if (sym->st_shndx == SHN_UNDEF || sym->st_shndx >= SHN_LORESERVE || sym->st_shndx >= v->eh.e_shnum)
		return 0;
	Elf64_Shdr sh;
	elf_image_shdr(v, sym->st_shndx, &sh);
	const char *s = elf_image_section_name(v, &sh);
	return s && strncmp(s, ".text.", 6) == 0 && strcmp(s + 6, name) == 0;
}

/* Finds the symbol table and its string table. 1 when there is none. */
static int elf_image_symtab(const struct elf_view *v, const uint8_t **syms, size_t *nsyms, const char **str,
			    size_t *str_len, char **cause)
{
	for (unsigned i = 0; i < v->eh.e_shnum; i++) {
		Elf64_Shdr sh, strsh;
		elf_image_shdr(v, i, &sh);
		if (sh.sh_type != SHT_SYMTAB)
			continue;
		if (sh.sh_entsize != sizeof(Elf64_Sym) || sh.sh_link >= v->eh.e_shnum)
			return cause_set(cause, "ELF symbol table malformed");
		size_t len = 0;
		if (elf_image_section_data(v, &sh, syms, &len, cause) < 0)
			return -1;
		*nsyms = len / sizeof(Elf64_Sym);
		elf_image_shdr(v, sh.sh_link, &strsh);
		const uint8_t *s = NULL;
		if (elf_image_section_data(v, &strsh, &s, str_len, cause) < 0)
			return -1;
		*str = (const char *)s;
		return 0;
	}
	return 1;
}

int elf_image_kernel_names(const uint8_t *p, size_t size, char ***names, int *n, int *cap, char **cause)
{
	struct elf_view v;
	if (elf_image_open(p, size, &v, cause) < 0)
		return -1;
	const uint8_t *syms = NULL;
	size_t nsyms = 0, str_len = 0;
	const char *str = NULL;
	int rc = elf_image_symtab(&v, &syms, &nsyms, &str, &str_len, cause);
	if (rc != 0)
		return rc < 0 ? -1 : 0;
	for (size_t i = 0; i < nsyms; i++) {
		Elf64_Sym sym;
		memcpy(&sym, syms + i * sizeof sym, sizeof sym);
		const char *name = elf_image_string(str, str_len, sym.st_name);
		if (name && *name && elf_image_is_kernel(&v, &sym, name) &&
		    elf_image_push_name(names, n, cap, name, cause) < 0)
			return -1;
	}
	return 0;
}
