/* Code the application hands the HIP runtime: clang's registration of a
 * translation unit's bundles and kernels (__hipRegisterFatBinary,
 * __hipRegisterFunction), and modules (hipModuleLoad, hipModuleLoadData,
 * hipModuleLoadDataEx, hipModuleGetFunction, hipModuleUnload). Each is
 * forwarded first; what succeeded is registered (hook_hip_registry.c). */
#include <stdio.h>
#include <stdlib.h>
#include "common/fdio.h"
#include "hook/hip/hook_hip.h"

void **hook_hip___hipRegisterFatBinary(const void *wrapper)
{
	if (!hook.driver)
		return NULL;
	void **h = HIP_REAL(__hipRegisterFatBinary)(wrapper);
	if (h && wrapper)
		hook_hip_reg_module(h, "__hipRegisterFatBinary", wrapper, 0);
	return h;
}

void hook_hip___hipRegisterFunction(void **handle, const void *host, char *device, const char *name, unsigned limit,
				    void *tid, void *bid, hip_dim3 *block, hip_dim3 *grid, int *wsize)
{
	if (!hook.driver)
		return;
	HIP_REAL(__hipRegisterFunction)(handle, host, device, name, limit, tid, bid, block, grid, wsize);
	if (host && name)
		hook_hip_reg_kernel((void *)host, hook_hip_reg_module_find(handle), name);
}

void hook_hip___hipUnregisterFatBinary(void **handle)
{
	if (!hook.driver)
		return;
	hook_hip_reg_unload(handle);
	HIP_REAL(__hipUnregisterFatBinary)(handle);
}

hipError_t hook_hip_hipModuleLoadData(hipModule_t *m, const void *image)
{
	hipError_t rc = HIP_REAL(hipModuleLoadData)(m, image);
	if (rc == HIP_SUCCESS && m && image)
		hook_hip_reg_module(*m, "hipModuleLoadData", image, 0);
	return rc;
}

hipError_t hook_hip_hipModuleLoadDataEx(hipModule_t *m, const void *image, unsigned n, void *opts, void **vals)
{
	hipError_t rc = HIP_REAL(hipModuleLoadDataEx)(m, image, n, opts, vals);
	if (rc == HIP_SUCCESS && m && image)
		hook_hip_reg_module(*m, "hipModuleLoadDataEx", image, 0);
	return rc;
}

/* The file as the runtime read it, read again here (bounded); NULL when
 * empty. */
static void *load_file(const char *path, size_t *size)
{
	char *buf = fdio_read_file(path, ((size_t)1 << 31) + 1, size);
	if (buf && !*size) {
		free(buf);
		buf = NULL;
	}
	if (!buf)
		*size = 0;
	return buf;
}

hipError_t hook_hip_hipModuleLoad(hipModule_t *m, const char *path)
{
	hipError_t rc = HIP_REAL(hipModuleLoad)(m, path);
	if (rc != HIP_SUCCESS || !m)
		return rc;
	size_t size = 0;
	void *image = load_file(path, &size);
	hook_hip_reg_module(*m, "hipModuleLoad", image, size);
	free(image);
	return rc;
}

hipError_t hook_hip_hipModuleUnload(hipModule_t m)
{
	hook_hip_reg_unload(m);
	return HIP_REAL(hipModuleUnload)(m);
}

hipError_t hook_hip_hipModuleGetFunction(hipFunction_t *f, hipModule_t m, const char *name)
{
	hipError_t rc = HIP_REAL(hipModuleGetFunction)(f, m, name);
	if (rc == HIP_SUCCESS && f && *f && name)
		hook_hip_reg_kernel(*f, hook_hip_reg_module_find(m), name);
	return rc;
}
