/* The binding half of ntop's loader audit module (rtld_audit.c says why):
 * objects are tagged as they are opened (the runtime the bind rule names,
 * ntop's own libraries, everything else), and a binding of NAME from an
 * application object to the runtime is sent to the front's ntop_bind_NAME,
 * its real address stored in the front's ntop_bindreal_NAME.
 *
 * The front's symbols are read from its own hash table (DT_HASH; the front
 * is linked with one): dlsym on a library the loader mapped at start-up but
 * has not opened through dlopen faults in glibc 2.36 (no search list yet),
 * and la_symbind runs during start-up relocation. Nothing here runs the
 * front's code, which may not be relocated yet: its slots are zeroed data
 * with no relocation, written once per binding. */
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "hook/rtld_audit.h"

enum { BIND_OTHER, BIND_APP, BIND_RUNTIME };

static struct {
	const char *pattern;
	const char *front;
	size_t front_dir; /* length of the front's directory, '/' included */
	struct link_map *front_map;
} bind;

void audit_bind_rule(const char *pattern, const char *front)
{
	if (bind.pattern)
		return;
	bind.pattern = pattern;
	bind.front = front;
	bind.front_dir = (size_t)(audit_base(front) - front);
}

int audit_binding(void)
{
	return bind.pattern != NULL;
}

/* Dynamic entries hold load addresses once the loader has relocated them
 * (x86-64, aarch64), file addresses where it leaves them read-only. */
static const void *bind_dyn_ptr(const struct link_map *m, ElfW(Addr) a)
{
	return (const void *)(a < m->l_addr ? a + m->l_addr : a);
}

static void *bind_front_sym(const char *prefix, const char *name)
{
	const struct link_map *m = bind.front_map;
	const ElfW(Sym) *sym = NULL;
	const char *str = NULL;
	const uint32_t *hash = NULL;
	char want[512];
	if (snprintf(want, sizeof want, "%s%s", prefix, name) >= (int)sizeof want)
		return NULL;
	for (const ElfW(Dyn) *d = m->l_ld; d->d_tag != DT_NULL; d++) {
		if (d->d_tag == DT_SYMTAB)
			sym = bind_dyn_ptr(m, d->d_un.d_ptr);
		else if (d->d_tag == DT_STRTAB)
			str = bind_dyn_ptr(m, d->d_un.d_ptr);
		else if (d->d_tag == DT_HASH)
			hash = bind_dyn_ptr(m, d->d_un.d_ptr);
	}
	if (!sym || !str || !hash)
		return NULL;
	for (uint32_t i = 1; i < hash[1]; i++) /* hash[1]: the number of symbols */
		if (sym[i].st_shndx != SHN_UNDEF && strcmp(str + sym[i].st_name, want) == 0)
			return (void *)(m->l_addr + sym[i].st_value);
	return NULL;
}

__attribute__((visibility("default"))) unsigned int la_objopen(struct link_map *map, Lmid_t lmid, uintptr_t *cookie)
{
	(void)lmid;
	*cookie = BIND_OTHER;
	if (!bind.pattern || !map->l_name)
		return 0;
	const char *name = map->l_name;
	if (strcmp(name, bind.front) == 0) {
		bind.front_map = map;
		return 0;
	}
	if (name[0] && strncmp(name, bind.front, bind.front_dir) == 0)
		return 0; /* ntop's own libraries */
	if (name[0] && audit_name_matches(bind.pattern, name)) {
		*cookie = BIND_RUNTIME;
		return LA_FLG_BINDTO;
	}
	*cookie = BIND_APP;
	return LA_FLG_BINDFROM;
}

__attribute__((visibility("default"))) uintptr_t la_symbind64(Elf64_Sym *sym, unsigned int ndx, uintptr_t *refcook,
							     uintptr_t *defcook, unsigned int *flags,
							     const char *symname)
{
	(void)ndx, (void)flags;
	if (*defcook != BIND_RUNTIME || *refcook != BIND_APP || !bind.front_map || !symname)
		return sym->st_value;
	void *to = bind_front_sym("ntop_bind_", symname);
	uintptr_t *real = bind_front_sym("ntop_bindreal_", symname);
	if (!to || !real)
		return sym->st_value;
	__atomic_store_n(real, (uintptr_t)sym->st_value, __ATOMIC_RELEASE);
	return (uintptr_t)to;
}
