/* What makes the HIP backend libntop_hip.so, the hook for ROCm 6 and 7
 * runtimes (libamdhip64.so.6/.7), which ntop has no stand-in for: the
 * runtime is loaded as it is, the loader audit module sends the hooked
 * calls to the front (hipfront.c), and the front opens this library on
 * the first of them and asks ntop_hip_bind_handler for each call's
 * handler. No exports of the runtime's (hip_export_count is 0); the real
 * runtime is the one the front's calls were bound to. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include "common/cause.h"
#include "hook/hook_hip.h"
#include "hook/hook_hip_exports.h"

const int hip_export_count = 0;
const char *const hip_export_names[] = { NULL };
void *hip_dispatch[1];

int hook_hip_open_real(char **cause)
{
	/* the front is preloaded: in the global scope */
	void *(*bound)(void) = (void *(*)(void))dlsym(RTLD_DEFAULT, "ntop_bind_runtime");
	void *fn = bound ? bound() : NULL;
	Dl_info info;
	if (!fn || !dladdr(fn, &info) || !info.dli_fname)
		return cause_set(cause, "no HIP runtime bound through ntop's front (libntop_hipfront.so)");
	if (snprintf(hook.real_path, sizeof hook.real_path, "%s", info.dli_fname) >= (int)sizeof hook.real_path ||
	    !(hook.driver = dlopen(hook.real_path, RTLD_LAZY | RTLD_NOLOAD)))
		return cause_set(cause, "cannot reopen the bound HIP runtime %s", info.dli_fname);
	return 0;
}

/* The front's question: the handler for a hooked name, NULL for others. */
__attribute__((visibility("default"))) void *ntop_hip_bind_handler(const char *name)
{
	int r = hook_hip_row_by_name(name);
	return r >= 0 ? hip_table[r].handler : NULL;
}
