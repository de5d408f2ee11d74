/* One section of an ELF file on disk (elf_file.h), read with pread: the
 * header, the section header table and the section-name table, then only the
 * section asked for, so a 1 GiB library costs a few kilobytes of reading
 * when it lacks the section. */
#include "engine/image/elf_file.h"

#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cause.h"

#define ELF_FILE_MAX_SHSTR ((uint64_t)16 << 20)

static int elf_file_read(int fd, void *buf, uint64_t len, uint64_t off)
{
	uint8_t *p = buf;
	while (len) {
		ssize_t n = pread(fd, p, len, (off_t)off);
		if (n <= 0)
			return -1;
		p += n;
		len -= (uint64_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/* The section headers and their names; 0 or -1 with a cause. */
static int elf_file_tables(int fd, const char *path, Elf64_Ehdr *eh, Elf64_Shdr **sh, char **names,
			   uint64_t *names_len, char **cause)
{
	*sh = NULL;
	*names = NULL;
	if (elf_file_read(fd, eh, sizeof *eh, 0) < 0 || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB)
		return cause_set(cause, "%s: not an ELF64 little-endian file", path);
	if (eh->e_shnum == 0 || eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    eh->e_shstrndx >= eh->e_shnum)
		return cause_set(cause, "%s: no usable section header table", path);
	*sh = malloc((size_t)eh->e_shnum * sizeof **sh);
	if (!*sh || elf_file_read(fd, *sh, (uint64_t)eh->e_shnum * sizeof **sh, eh->e_shoff) < 0)
		return cause_set(cause, "%s: cannot read the section headers", path);
	const Elf64_Shdr *st = &(*sh)[eh->e_shstrndx];
	if (st->sh_size > ELF_FILE_MAX_SHSTR || !(*names = malloc(st->sh_size + 1)) ||
	    elf_file_read(fd, *names, st->sh_size, st->sh_offset) < 0)
		return cause_set(cause, "%s: cannot read the section names", path);
	(*names)[st->sh_size] = 0;
	*names_len = st->sh_size;
	return 0;
}

int elf_file_section(const char *path, const char *name, size_t max, uint8_t **data, size_t *len, char **cause)
{
	Elf64_Ehdr eh;
	Elf64_Shdr *sh = NULL;
	char *names = NULL;
	uint64_t names_len = 0;
	int rc = -1;
	*data = NULL;
	*len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return cause_set(cause, "%s: cannot open", path);
	if (elf_file_tables(fd, path, &eh, &sh, &names, &names_len, cause) < 0)
		goto out;
	rc = 1;
	for (unsigned i = 0; i < eh.e_shnum && rc == 1; i++) {
		if (sh[i].sh_name >= names_len || strcmp(names + sh[i].sh_name, name) != 0)
			continue;
		if (sh[i].sh_type == SHT_NOBITS || sh[i].sh_size > max) {
			rc = cause_set(cause, "%s: section %s is %s", path, name,
				       sh[i].sh_type == SHT_NOBITS ? "empty" : "implausibly large");
			break;
		}
		*data = malloc(sh[i].sh_size ? sh[i].sh_size : 1);
		if (!*data || elf_file_read(fd, *data, sh[i].sh_size, sh[i].sh_offset) < 0) {
			free(*data);
			*data = NULL;
			rc = cause_set(cause, "%s: cannot read section %s", path, name);
			break;
		}
		*len = sh[i].sh_size;
		rc = 0;
	}
out:
	free(sh);
	free(names);
	close(fd);
	return rc;
}
