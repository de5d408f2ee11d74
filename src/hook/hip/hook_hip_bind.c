/* What makes the HIP backend libntop_hip.so, the hook for ROCm 6 and 7
 * runtimes (libamdhip64.so.6/.7), which ntop has no stand-in for: the
 * runtime is loaded as it is, the loader audit module binds the hooked calls
 * to its front (rtld_front.c), and the front opens this library on the
 * first of them and asks ntop_hip_bind_handler for each call's handler. No
 * exports of the runtime's (hip_export_count is 0). The real runtime is the
 * one loaded whose file name is a ROCm 6/7 runtime's, as the audit module
 * decides it (REALLIB_AMDHIP64_BOUND). */
#include <dlfcn.h>
#include <fnmatch.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/cause.h"
#include "common/reallib.h"
#include "hook/hip/hook_hip.h"
#include "hook/hip/hook_hip_exports.h"

const int hip_export_count = 0;
const char *const hip_export_names[] = { NULL };
void *hip_dispatch[1];

static int bind_matches(const char *path)
{
	char real[PATH_MAX];
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (fnmatch(REALLIB_AMDHIP64_BOUND, base, 0) == 0)
		return 1;
	if (!realpath(path, real))
		return 0;
	base = strrchr(real, '/');
	return fnmatch(REALLIB_AMDHIP64_BOUND, base ? base + 1 : real, 0) == 0;
}

static int bind_find(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	if (!info->dlpi_name || !info->dlpi_name[0] || !bind_matches(info->dlpi_name))
		return 0;
	snprintf(data, sizeof hook.real_path, "%s", info->dlpi_name);
	return 1;
}

int hook_hip_open_real(char **cause)
{
	if (!dl_iterate_phdr(bind_find, hook.real_path))
		return cause_set(cause, "no ROCm 6/7 HIP runtime (%s) loaded", REALLIB_AMDHIP64_BOUND);
	if (!(hook.driver = dlopen(hook.real_path, RTLD_LAZY | RTLD_NOLOAD)))
		return cause_set(cause, "cannot reopen the HIP runtime %s", hook.real_path);
	return 0;
}

/* The front's question: the handler for a hooked name, NULL for others and
 * when no runtime was found (the handlers would only return errors; the
 * front then calls the runtime itself, and `hello` said why). */
__attribute__((visibility("default"))) void *ntop_hip_bind_handler(const char *name)
{
	int r = hook_hip_row_by_name(name);
	return r >= 0 && hook.driver ? hip_table[r].handler : NULL;
}
