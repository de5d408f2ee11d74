/* The probed code object writer (layout in amdgpu_write.h). Headers are
 * copied out and back with memcpy (the image is unaligned); every table of
 * the original was bounds-checked by amdgpu_elf_open, the program headers
 * and relocation tables are checked here. */
#include "engine/amdgpu/amdgpu_write.h"

#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"
#include "engine/image/image_bytes.h"

#define WRITE_PAGE 0x1000u  /* lld's AMDGPU page size: PT_LOAD alignment */
#define WRITE_CODE_ALIGN 256u /* kernel entries are 256-byte aligned */

static uint64_t write_align(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/* Where everything goes. */
struct write_plan {
	Elf64_Ehdr eh;
	uint64_t file_at, vaddr;   /* the new segment: file offset and address */
	uint64_t note_at;          /* offsets inside the segment */
	uint64_t code_at;
	int note_shndx;            /* the note section */
	uint8_t *note;             /* its new contents */
	size_t note_len;
};

static void write_shdr(const uint8_t *p, const Elf64_Ehdr *eh, unsigned i, Elf64_Shdr *sh)
{
	memcpy(sh, p + eh->e_shoff + (uint64_t)i * sizeof *sh, sizeof *sh);
}

/* The note section with the metadata note's descriptor replaced. */
static int write_notes(const struct amdgpu_write *w, const Elf64_Shdr *sh, struct write_plan *pl, char **cause)
{
	const uint8_t *p = w->co->elf.p;
	uint64_t at = sh->sh_offset, end = sh->sh_offset + sh->sh_size;
	uint8_t *out = malloc((size_t)sh->sh_size + w->meta_len + 16);
	size_t len = 0;
	if (!out)
		return cause_set(cause, "out of memory writing the code object");
	while (end - at >= 12) {
		uint32_t namesz = image_bytes_le32(p + at), descsz = image_bytes_le32(p + at + 4);
		uint64_t desc_at = at + 12 + (((uint64_t)namesz + 3) & ~3ull);
		uint64_t next = desc_at + (((uint64_t)descsz + 3) & ~3ull);
		if (next > end) {
			free(out);
			return cause_set(cause, "note at byte %llu runs past its section", (unsigned long long)at);
		}
		if (desc_at != w->co->elf.meta_off) {
			memcpy(out + len, p + at, (size_t)(next - at));
			len += (size_t)(next - at);
		} else {
			size_t head = (size_t)(desc_at - at);
			memcpy(out + len, p + at, head);
			for (int b = 0; b < 4; b++) /* descsz, little endian */
				out[len + 4 + b] = (uint8_t)(w->meta_len >> (8 * b));
			memcpy(out + len + head, w->meta, w->meta_len);
			memset(out + len + head + w->meta_len, 0, ((w->meta_len + 3) & ~(size_t)3) - w->meta_len);
			len += head + ((w->meta_len + 3) & ~(size_t)3);
		}
		at = next;
	}
	pl->note = out;
	pl->note_len = len;
	return 0;
}

/* The note section holding the metadata, and no dynamic relocation inside
 * the kernel's code (the new code would not get it). */
static int write_sections(const struct amdgpu_write *w, struct write_plan *pl, char **cause)
{
	const uint8_t *p = w->co->elf.p;
	const struct amdgpu_elf_kernel *ks = w->k->sym;
	pl->note_shndx = -1;
	for (unsigned i = 0; i < pl->eh.e_shnum; i++) {
		Elf64_Shdr sh;
		write_shdr(p, &pl->eh, i, &sh);
		if (sh.sh_type == SHT_NOTE && w->co->elf.meta_off >= sh.sh_offset &&
		    w->co->elf.meta_off < sh.sh_offset + sh.sh_size)
			pl->note_shndx = (int)i;
		if ((sh.sh_type != SHT_RELA && sh.sh_type != SHT_REL) || !sh.sh_entsize)
			continue;
		for (uint64_t r = 0; r + sh.sh_entsize <= sh.sh_size; r += sh.sh_entsize) {
			uint64_t off = image_bytes_le64(p + sh.sh_offset + r);
			if (off >= ks->code_addr && off < ks->code_addr + ks->code_size)
				return cause_set(cause, "kernel %s: a relocation patches its code at 0x%llx (not moved)",
						 w->k->meta->name, (unsigned long long)off);
		}
	}
	if (pl->note_shndx < 0)
		return cause_set(cause, "the metadata note lies in no note section");
	Elf64_Shdr note;
	write_shdr(p, &pl->eh, (unsigned)pl->note_shndx, &note);
	return write_notes(w, &note, pl, cause);
}

/* The new segment's place: after the file's last byte (256-aligned) and
 * above the highest address any segment loads, congruent modulo the page. */
static int write_layout(const struct amdgpu_write *w, struct write_plan *pl, char **cause)
{
	const uint8_t *p = w->co->elf.p;
	size_t size = w->co->elf.size;
	memcpy(&pl->eh, p, sizeof pl->eh);
	if (pl->eh.e_type != ET_DYN)
		return cause_set(cause, "the code object is not linked (ELF type %u, not ET_DYN)", pl->eh.e_type);
	if (pl->eh.e_shstrndx == SHN_UNDEF || pl->eh.e_shstrndx >= pl->eh.e_shnum || pl->eh.e_shnum >= 0xfff0)
		return cause_set(cause, "the code object has no section name table");
	if (pl->eh.e_phentsize != sizeof(Elf64_Phdr) || pl->eh.e_phnum == 0 || pl->eh.e_phnum >= 0xfff0 ||
	    !image_bytes_span_ok(pl->eh.e_phoff, (uint64_t)pl->eh.e_phnum * sizeof(Elf64_Phdr), size))
		return cause_set(cause, "the code object's program headers are missing or outside it");
	uint64_t top = 0;
	for (unsigned i = 0; i < pl->eh.e_phnum; i++) {
		Elf64_Phdr ph;
		memcpy(&ph, p + pl->eh.e_phoff + (uint64_t)i * sizeof ph, sizeof ph);
		if (ph.p_type == PT_LOAD && ph.p_vaddr + ph.p_memsz > top)
			top = ph.p_vaddr + ph.p_memsz;
	}
	pl->file_at = write_align(size, WRITE_CODE_ALIGN);
	pl->vaddr = write_align(top, WRITE_PAGE) + (pl->file_at & (WRITE_PAGE - 1));
	if (write_sections(w, pl, cause) < 0)
		return -1;
	pl->note_at = (uint64_t)(pl->eh.e_phnum + 1) * sizeof(Elf64_Phdr);
	pl->code_at = write_align(pl->note_at + pl->note_len, WRITE_CODE_ALIGN);
	return 0;
}

/* The program headers: PT_PHDR and PT_NOTE moved, a PT_LOAD (R X) for the
 * new segment after the last PT_LOAD (loadable entries stay sorted). */
static void write_phdrs(const uint8_t *p, const struct write_plan *pl, uint64_t seg_len, uint8_t *out)
{
	int last_load = -1, k = 0;
	for (unsigned i = 0; i < pl->eh.e_phnum; i++) {
		Elf64_Phdr ph;
		memcpy(&ph, p + pl->eh.e_phoff + (uint64_t)i * sizeof ph, sizeof ph);
		if (ph.p_type == PT_LOAD)
			last_load = (int)i;
	}
	for (unsigned i = 0; i < pl->eh.e_phnum; i++) {
		Elf64_Phdr ph;
		memcpy(&ph, p + pl->eh.e_phoff + (uint64_t)i * sizeof ph, sizeof ph);
		if (ph.p_type == PT_PHDR) {
			ph.p_offset = pl->file_at;
			ph.p_vaddr = ph.p_paddr = pl->vaddr;
			ph.p_filesz = ph.p_memsz = pl->note_at;
		} else if (ph.p_type == PT_NOTE) {
			ph.p_offset = pl->file_at + pl->note_at;
			ph.p_vaddr = ph.p_paddr = pl->vaddr + pl->note_at;
			ph.p_filesz = ph.p_memsz = pl->note_len;
		}
		memcpy(out + (k++) * sizeof ph, &ph, sizeof ph);
		if ((int)i == last_load) {
			Elf64_Phdr load = { .p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_offset = pl->file_at,
					    .p_vaddr = pl->vaddr, .p_paddr = pl->vaddr, .p_filesz = seg_len,
					    .p_memsz = seg_len, .p_align = WRITE_PAGE };
			memcpy(out + (k++) * sizeof load, &load, sizeof load);
		}
	}
}

/* Section headers after the section name table at `names_at`: the note and
 * name table moved, the new code section appended. */
static void write_shdrs(const uint8_t *p, const struct write_plan *pl, uint64_t names_at, uint64_t names_len,
			uint32_t new_name, size_t code_len, uint8_t *out)
{
	unsigned n = pl->eh.e_shnum;
	for (unsigned i = 0; i < n; i++) {
		Elf64_Shdr sh;
		write_shdr(p, &pl->eh, i, &sh);
		if ((int)i == pl->note_shndx) {
			sh.sh_offset = pl->file_at + pl->note_at;
			sh.sh_addr = pl->vaddr + pl->note_at;
			sh.sh_size = pl->note_len;
		} else if (i == pl->eh.e_shstrndx) {
			sh.sh_offset = names_at;
			sh.sh_size = names_len;
		}
		memcpy(out + i * sizeof sh, &sh, sizeof sh);
	}
	Elf64_Shdr code = { .sh_name = new_name, .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
			    .sh_addr = pl->vaddr + pl->code_at, .sh_offset = pl->file_at + pl->code_at,
			    .sh_size = code_len, .sh_addralign = WRITE_CODE_ALIGN };
	memcpy(out + n * sizeof code, &code, sizeof code);
}

/* Moves the kernel's function symbol (.symtab and .dynsym) to the new code. */
static void write_symbols(const struct amdgpu_write *w, const struct write_plan *pl, uint64_t addr, size_t len,
			  uint8_t *out)
{
	const uint8_t *p = w->co->elf.p;
	for (unsigned i = 0; i < pl->eh.e_shnum; i++) {
		Elf64_Shdr sh, str;
		write_shdr(p, &pl->eh, i, &sh);
		if ((sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) || sh.sh_link >= pl->eh.e_shnum)
			continue;
		write_shdr(p, &pl->eh, sh.sh_link, &str);
		for (uint64_t at = sh.sh_offset; at + sizeof(Elf64_Sym) <= sh.sh_offset + sh.sh_size;
		     at += sizeof(Elf64_Sym)) {
			Elf64_Sym sym;
			memcpy(&sym, p + at, sizeof sym);
			if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_name >= str.sh_size)
				continue;
			const char *nm = (const char *)p + str.sh_offset + sym.st_name;
			if (!memchr(nm, 0, str.sh_size - sym.st_name) || strcmp(nm, w->k->sym->name))
				continue;
			sym.st_value = addr;
			sym.st_size = len;
			sym.st_shndx = (uint16_t)pl->eh.e_shnum;
			memcpy(out + at, &sym, sizeof sym);
		}
	}
}

/* Lays the pieces out in one buffer. */
static int write_build(const struct amdgpu_write *w, const struct write_plan *pl, const uint8_t *code,
		       size_t code_len, struct amdgpu_written *out, char **cause)
{
	const uint8_t *p = w->co->elf.p;
	Elf64_Shdr names;
	write_shdr(p, &pl->eh, pl->eh.e_shstrndx, &names);
	uint64_t seg_len = pl->code_at + code_len, names_at = pl->file_at + seg_len;
	uint64_t names_len = names.sh_size + sizeof AMDGPU_WRITE_SECTION;
	uint64_t sh_at = write_align(names_at + names_len, 8);
	size_t total = (size_t)(sh_at + (uint64_t)(pl->eh.e_shnum + 1) * sizeof(Elf64_Shdr));
	uint8_t *b = calloc(1, total);
	if (!b)
		return cause_set(cause, "out of memory writing the code object");
	memcpy(b, p, w->co->elf.size);
	write_phdrs(p, pl, seg_len, b + pl->file_at);
	memcpy(b + pl->file_at + pl->note_at, pl->note, pl->note_len);
	memcpy(b + pl->file_at + pl->code_at, code, code_len);
	memcpy(b + names_at, p + names.sh_offset, names.sh_size);
	memcpy(b + names_at + names.sh_size, AMDGPU_WRITE_SECTION, sizeof AMDGPU_WRITE_SECTION);
	write_shdrs(p, pl, names_at, names_len, (uint32_t)names.sh_size, code_len, b + sh_at);
	Elf64_Ehdr eh = pl->eh;
	eh.e_phoff = pl->file_at;
	eh.e_phnum++;
	eh.e_shoff = sh_at;
	eh.e_shnum++;
	memcpy(b, &eh, sizeof eh);
	out->code_addr = pl->vaddr + pl->code_at;
	out->code_len = code_len;
	write_symbols(w, pl, out->code_addr, code_len, b);
	struct amdgpu_kd kd = *w->kd;
	kd.entry_offset = (int64_t)(out->code_addr - w->k->sym->kd_addr);
	amdgpu_kd_encode(&kd, b + w->k->sym->kd_off);
	out->elf = b;
	out->len = total;
	return 0;
}

/* The written object opened again: the kernel's descriptor agrees with its
 * metadata and points at the new code. */
static int write_check(const struct amdgpu_write *w, const struct amdgpu_written *out, char **cause)
{
	struct amdgpu_co co;
	if (amdgpu_co_open(out->elf, out->len, &co, cause) < 0)
		return cause_wrap(cause, "the probed code object does not read back");
	const struct amdgpu_co_kernel *k = amdgpu_co_kernel(&co, w->k->meta->name);
	int r = k ? amdgpu_co_check_kernel(&co, k, cause)
		  : cause_set(cause, "the probed code object lost kernel %s", w->k->meta->name);
	if (r == 0 && k->sym->code_addr != out->code_addr)
		r = cause_set(cause, "the probed kernel's symbol does not reach its new code");
	amdgpu_co_done(&co);
	return r < 0 ? cause_wrap(cause, "the probed code object is inconsistent") : 0;
}

int amdgpu_write_object(const struct amdgpu_write *w, struct amdgpu_written *out, char **cause)
{
	struct write_plan pl;
	uint8_t *code = NULL;
	size_t code_len = 0;
	memset(out, 0, sizeof *out);
	memset(&pl, 0, sizeof pl);
	char proc[32];
	amdgpu_co_proc(w->co, proc);
	int r = write_layout(w, &pl, cause);
	if (r == 0)
		r = amdgpu_asm_func(w->f, w->n, w->ins, AMDGPU_ASM_WORDS, proc, pl.vaddr + pl.code_at, &code, &code_len,
				    cause);
	if (r == 0)
		r = write_build(w, &pl, code, code_len, out, cause);
	if (r == 0 && (r = write_check(w, out, cause)) < 0)
		amdgpu_written_done(out);
	free(code);
	free(pl.note);
	return r;
}

void amdgpu_written_done(struct amdgpu_written *out)
{
	free(out->elf);
	memset(out, 0, sizeof *out);
}
