/* The CUDA stand-in's dispatch: every export's slot points at our handler
 * (hooked rows), the real driver's function (everything else) or a stub
 * (missing). */
#include <dlfcn.h>
#include <cuda.h>
#include "hook/hook_dispatch.h"
#include "hook/hook_exports.h"
#include "hook/hook_state.h"

/* Stubs take no arguments: they are reached through signature-free
 * trampolines and only set the return register. */
static CUresult dispatch_missing(void)
{
	return CUDA_ERROR_NOT_FOUND;
}

static CUresult dispatch_no_driver(void)
{
	return CUDA_ERROR_NOT_INITIALIZED;
}

void *hook_dispatch_stub(void)
{
	return hook.driver ? (void *)dispatch_missing : (void *)dispatch_no_driver;
}

void hook_dispatch_fill(void)
{
	for (int r = 0; r < HOOK_N_ROWS; r++) {
		void *fn = hook.driver ? dlsym(hook.driver, hook_table[r].name) : NULL;
		hook.real[r] = fn ? fn : hook_dispatch_stub();
	}
	for (int i = 0; i < hook_export_count; i++) {
		int r = hook_table_find(hook_export_names[i]);
		if (r >= 0)
			ntop_dispatch[i] = hook_table[r].handler;
		else if (hook.driver && (ntop_dispatch[i] = dlsym(hook.driver, hook_export_names[i])) != NULL)
			continue;
		else
			ntop_dispatch[i] = hook_dispatch_stub();
	}
}
