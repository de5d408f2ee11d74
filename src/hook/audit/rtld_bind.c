/* The binding half of ntop's loader audit module (rtld_audit.c says why):
 * objects are tagged as they are opened (the runtime the bind rule names,
 * ntop's own libraries, everything else), and a binding of a hooked name
 * from an application object to the runtime is sent to the front's wrapper
 * for it (rtld_front.c), which keeps the real address. Nothing is opened
 * here: la_symbind also runs during start-up relocation. */
#include <link.h>
#include <stdint.h>
#include <string.h>
#include "hook/audit/rtld_audit.h"

enum { BIND_OTHER, BIND_APP, BIND_RUNTIME };

static struct {
	const char *pattern;
	const char *hook;
	size_t hook_dir; /* length of the hook's directory, '/' included */
} bind;

void audit_bind_rule(const char *pattern, const char *hook)
{
	if (bind.pattern)
		return;
	bind.pattern = pattern;
	bind.hook = hook;
	bind.hook_dir = (size_t)(audit_base(hook) - hook);
	audit_front_hook(hook);
}

int audit_binding(void)
{
	return bind.pattern != NULL;
}

__attribute__((visibility("default"))) unsigned int la_objopen(struct link_map *map, Lmid_t lmid, uintptr_t *cookie)
{
	(void)lmid;
	*cookie = BIND_OTHER;
	if (!bind.pattern || !map->l_name)
		return 0;
	const char *name = map->l_name;
	if (name[0] && strncmp(name, bind.hook, bind.hook_dir) == 0)
		return 0; /* ntop's own libraries: the hook's calls to the runtime stay real */
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
	if (*defcook != BIND_RUNTIME || *refcook != BIND_APP || !symname)
		return sym->st_value;
	void *to = audit_front_bind(symname, (void *)sym->st_value);
	return to ? (uintptr_t)to : sym->st_value;
}
