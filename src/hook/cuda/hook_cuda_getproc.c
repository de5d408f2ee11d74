/* cuGetProcAddress (4-argument, pre-12.0 ABI) and cuGetProcAddress_v2 (what
 * cuda.h's cuGetProcAddress means since 12.0; the runtime's only way in when
 * the driver exports it). The real driver resolves the symbol for the
 * requested version and per-thread-stream flag; when its answer is the real
 * function of a hooked row (cuLaunchKernel_ptsz, cuGraphAddKernelNode_v2...)
 * we hand out our handler for that row, so versions and _ptsz need no
 * parsing here. */
#include <string.h>
#include "hook/cuda/hook_cuda.h"
#include "hook/hook_log.h"
#include "hook/cuda/hook_table.h"

/* Launch rows whose ABI is the same in every version: when a driver answers
 * with an address it does not export under the name, fall back on the name. */
static int getproc_by_name(const char *symbol, cuuint64_t flags)
{
	static const char *const stable[] = { "cuLaunchKernel", "cuLaunchKernelEx", "cuLaunchCooperativeKernel",
					      "cuGraphLaunch" };
	for (size_t i = 0; i < sizeof stable / sizeof stable[0]; i++) {
		if (strcmp(symbol, stable[i]) != 0)
			continue;
		char name[64];
		strcpy(name, stable[i]);
		if (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)
			strcat(name, "_ptsz");
		return hook_table_find(name);
	}
	return -1;
}

static void getproc_swap(const char *symbol, void **pfn, cuuint64_t flags)
{
	if (!pfn || !*pfn)
		return;
	int r = hook_table_find_real(*pfn);
	if (r < 0 && symbol && (r = getproc_by_name(symbol, flags)) >= 0)
		hook_log("%s: driver address not exported, hooked by name as %s", symbol, hook_table[r].name);
	if (r >= 0)
		*pfn = hook_table[r].handler;
}

CUresult hook_cuGetProcAddress(const char *symbol, void **pfn, int cuda_version, cuuint64_t flags)
{
	CUresult rc = HOOK_REAL(cuGetProcAddress)(symbol, pfn, cuda_version, flags);
	if (rc == CUDA_SUCCESS)
		getproc_swap(symbol, pfn, flags);
	return rc;
}

CUresult hook_cuGetProcAddress_v2(const char *symbol, void **pfn, int cuda_version, cuuint64_t flags,
				  CUdriverProcAddressQueryResult *status)
{
	CUresult rc = HOOK_REAL(cuGetProcAddress_v2)(symbol, pfn, cuda_version, flags, status);
	if (rc == CUDA_SUCCESS)
		getproc_swap(symbol, pfn, flags);
	return rc;
}
