/* Module and library loading: forward, then register the image and the
 * handles it yields (hook_registry.h). Nothing here changes what the
 * application gets back. */
#include <stdlib.h>
#include "common/fdio.h"
#include "hook/cuda/hook_cuda.h"
#include "hook/hook_log.h"
#include "hook/cuda/hook_table.h"

#define LOAD_FILE_MAX ((size_t)2 << 30)

static void load_register_file(void *handle, int is_library, const char *api, const char *path)
{
	size_t len = 0;
	void *buf = fdio_read_file(path, LOAD_FILE_MAX, &len);
	if (!buf)
		hook_log("%s: cannot read %s", api, path ? path : "(null)");
	hook_registry_add_module(handle, is_library, api, buf, len);
	free(buf);
}

CUresult hook_cuModuleLoad(CUmodule *module, const char *fname)
{
	CUresult rc = HOOK_REAL(cuModuleLoad)(module, fname);
	if (rc == CUDA_SUCCESS && module)
		load_register_file(*module, 0, "cuModuleLoad", fname);
	return rc;
}

CUresult hook_cuModuleLoadData(CUmodule *module, const void *image)
{
	CUresult rc = HOOK_REAL(cuModuleLoadData)(module, image);
	if (rc == CUDA_SUCCESS && module)
		hook_registry_add_module(*module, 0, "cuModuleLoadData", image, 0);
	return rc;
}

CUresult hook_cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int n, CUjit_option *options,
				 void **values)
{
	CUresult rc = HOOK_REAL(cuModuleLoadDataEx)(module, image, n, options, values);
	if (rc == CUDA_SUCCESS && module)
		hook_registry_add_module(*module, 0, "cuModuleLoadDataEx", image, 0);
	return rc;
}

CUresult hook_cuModuleLoadFatBinary(CUmodule *module, const void *fat)
{
	CUresult rc = HOOK_REAL(cuModuleLoadFatBinary)(module, fat);
	if (rc == CUDA_SUCCESS && module)
		hook_registry_add_module(*module, 0, "cuModuleLoadFatBinary", fat, 0);
	return rc;
}

CUresult hook_cuModuleUnload(CUmodule module)
{
	hook_registry_unload(module);
	return HOOK_REAL(cuModuleUnload)(module);
}

CUresult hook_cuModuleGetFunction(CUfunction *f, CUmodule module, const char *name)
{
	CUresult rc = HOOK_REAL(cuModuleGetFunction)(f, module, name);
	if (rc == CUDA_SUCCESS && f && name)
		hook_registry_add_kernel(*f, hook_registry_module(module), name);
	return rc;
}

CUresult hook_cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jit_opts, void **jit_vals,
				unsigned int n_jit, CUlibraryOption *lib_opts, void **lib_vals, unsigned int n_lib)
{
	CUresult rc = HOOK_REAL(cuLibraryLoadData)(library, code, jit_opts, jit_vals, n_jit, lib_opts, lib_vals, n_lib);
	if (rc == CUDA_SUCCESS && library)
		hook_registry_add_module(*library, 1, "cuLibraryLoadData", code, 0);
	return rc;
}

CUresult hook_cuLibraryLoadFromFile(CUlibrary *library, const char *path, CUjit_option *jit_opts, void **jit_vals,
				    unsigned int n_jit, CUlibraryOption *lib_opts, void **lib_vals, unsigned int n_lib)
{
	CUresult rc = HOOK_REAL(cuLibraryLoadFromFile)(library, path, jit_opts, jit_vals, n_jit, lib_opts, lib_vals,
						      n_lib);
	if (rc == CUDA_SUCCESS && library)
		load_register_file(*library, 1, "cuLibraryLoadFromFile", path);
	return rc;
}

CUresult hook_cuLibraryUnload(CUlibrary library)
{
	hook_registry_unload(library);
	return HOOK_REAL(cuLibraryUnload)(library);
}

CUresult hook_cuLibraryGetKernel(CUkernel *kernel, CUlibrary library, const char *name)
{
	CUresult rc = HOOK_REAL(cuLibraryGetKernel)(kernel, library, name);
	if (rc == CUDA_SUCCESS && kernel && name)
		hook_registry_library_kernel(*kernel, hook_registry_add_kernel(*kernel, hook_registry_module(library), name));
	return rc;
}

CUresult hook_cuLibraryGetModule(CUmodule *module, CUlibrary library)
{
	CUresult rc = HOOK_REAL(cuLibraryGetModule)(module, library);
	if (rc == CUDA_SUCCESS && module)
		hook_registry_module_alias(*module, hook_registry_module(library));
	return rc;
}

CUresult hook_cuKernelGetFunction(CUfunction *f, CUkernel kernel)
{
	CUresult rc = HOOK_REAL(cuKernelGetFunction)(f, kernel);
	if (rc == CUDA_SUCCESS && f)
		hook_registry_alias(*f, hook_registry_kernel(kernel));
	return rc;
}
