/* hipGetProcAddress (ROCm 6.1+; Triton's AMD launcher resolves every call
 * through it). The runtime resolves the name for the requested version
 * ("hipGetDeviceProperties" at 600 and later is hipGetDevicePropertiesR0600);
 * when its answer is the real function of a hooked row, or the name is a
 * hooked row's, our handler is handed out instead, as cuGetProcAddress is
 * on CUDA (hook_cuda_getproc.c). */
#include "hook/hip/hook_hip.h"
#include "hook/hook_log.h"

static int getproc_row(const char *symbol, void *fn)
{
	for (int r = 0; r < HIP_N_ROWS; r++)
		if (hip_real_rows[r] == fn)
			return r;
	return hook_hip_row_by_name(symbol);
}

hipError_t hook_hip_hipGetProcAddress(const char *symbol, void **pfn, int version, uint64_t flags, int *status)
{
	hipError_t rc = HIP_REAL(hipGetProcAddress)(symbol, pfn, version, flags, status);
	if (rc != HIP_SUCCESS || !pfn || !*pfn)
		return rc;
	int r = getproc_row(symbol, *pfn);
	if (r >= 0) {
		hook_log("hipGetProcAddress(%s, version %d): hooked as %s", symbol, version, hip_table[r].name);
		*pfn = hip_table[r].handler;
	}
	return rc;
}
