/* cuLink* (Numba): the PTX inputs of each link state are remembered, and at
 * cuLinkComplete the output cubin's address is tied to them, so a module
 * loaded from that cubin can be probed from its PTX. The legacy unversioned
 * names share the _v2 signatures and handlers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hook/cuda/hook_cuda.h"
#include "hook/hook_log.h"
#include "hook/cuda/hook_table.h"

#define LINK_FILE_MAX ((size_t)256 << 20)

static void link_add_ptx(CUlinkState state, const void *data, size_t size)
{
	if (!data)
		return;
	/* PTX given with size 0 or including its NUL: use the text length. */
	size_t len = strnlen(data, size ? size : LINK_FILE_MAX);
	hook_registry_link_add(state, data, len);
}

static CUresult link_create(CUresult rc, CUlinkState *state)
{
	if (rc == CUDA_SUCCESS && state)
		hook_registry_link_create(*state);
	return rc;
}

CUresult hook_cuLinkCreate(unsigned int n, CUjit_option *options, void **values, CUlinkState *state)
{
	return link_create(HOOK_REAL(cuLinkCreate)(n, options, values, state), state);
}

CUresult hook_cuLinkCreate_v2(unsigned int n, CUjit_option *options, void **values, CUlinkState *state)
{
	return link_create(HOOK_REAL(cuLinkCreate_v2)(n, options, values, state), state);
}

static void link_data(CUresult rc, CUlinkState state, CUjitInputType type, void *data, size_t size)
{
	if (rc == CUDA_SUCCESS && type == CU_JIT_INPUT_PTX)
		link_add_ptx(state, data, size);
}

CUresult hook_cuLinkAddData(CUlinkState state, CUjitInputType type, void *data, size_t size, const char *name,
			    unsigned int n, CUjit_option *options, void **values)
{
	CUresult rc = HOOK_REAL(cuLinkAddData)(state, type, data, size, name, n, options, values);
	link_data(rc, state, type, data, size);
	return rc;
}

CUresult hook_cuLinkAddData_v2(CUlinkState state, CUjitInputType type, void *data, size_t size, const char *name,
			       unsigned int n, CUjit_option *options, void **values)
{
	CUresult rc = HOOK_REAL(cuLinkAddData_v2)(state, type, data, size, name, n, options, values);
	link_data(rc, state, type, data, size);
	return rc;
}

static void link_file(CUresult rc, CUlinkState state, CUjitInputType type, const char *path)
{
	if (rc != CUDA_SUCCESS || type != CU_JIT_INPUT_PTX || !path)
		return;
	FILE *f = fopen(path, "rbe");
	if (!f)
		return;
	long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
	char *buf = size >= 0 && (size_t)size < LINK_FILE_MAX && fseek(f, 0, SEEK_SET) == 0 ? malloc((size_t)size + 1)
											      : NULL;
	size_t len = buf ? fread(buf, 1, (size_t)size, f) : 0;
	fclose(f);
	if (buf) {
		buf[len] = 0;
		link_add_ptx(state, buf, len);
	}
	free(buf);
}

CUresult hook_cuLinkAddFile(CUlinkState state, CUjitInputType type, const char *path, unsigned int n,
			    CUjit_option *options, void **values)
{
	CUresult rc = HOOK_REAL(cuLinkAddFile)(state, type, path, n, options, values);
	link_file(rc, state, type, path);
	return rc;
}

CUresult hook_cuLinkAddFile_v2(CUlinkState state, CUjitInputType type, const char *path, unsigned int n,
			       CUjit_option *options, void **values)
{
	CUresult rc = HOOK_REAL(cuLinkAddFile_v2)(state, type, path, n, options, values);
	link_file(rc, state, type, path);
	return rc;
}

CUresult hook_cuLinkComplete(CUlinkState state, void **cubin, size_t *size)
{
	CUresult rc = HOOK_REAL(cuLinkComplete)(state, cubin, size);
	if (rc == CUDA_SUCCESS && cubin)
		hook_registry_link_complete(state, *cubin);
	return rc;
}

CUresult hook_cuLinkDestroy(CUlinkState state)
{
	hook_registry_link_destroy(state);
	return HOOK_REAL(cuLinkDestroy)(state);
}
