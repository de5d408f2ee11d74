/* -rdc kernels that call device functions of other translation units: the
 * probed PTX names them `.extern .func`, which the driver's JIT cannot
 * resolve from one translation unit. They are linked, as nvlink did for the
 * app, with the PTX of every other unit of the same __nv_relfatbin
 * (cuLink*, called on the real driver, in relaxed capture mode). Best
 * effort: an other unit that refers back to something pruned from the
 * kernel's unit fails the link, and the linker's message is the reason. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/cause.h"
#include "engine/image/image.h"
#include "hook/cuda/hook_cuda.h"
#include "hook/cuda/hook_table.h"

#define RDCLINK_LOG 8192

int hook_rdc_link(const struct hook_module *m, const char *kernel, const char *ptx, int cc, CUmodule *mod,
		  char **cause)
{
	char **others = NULL;
	int n = 0;
	if (image_other_ptx(m->ptx_image, m->ptx_image_size, cc, kernel, &others, &n, cause) < 0)
		return -1;
	char err[RDCLINK_LOG] = "";
	CUjit_option opts[] = { CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES };
	void *vals[] = { err, (void *)(uintptr_t)sizeof err };
	CUlinkState st = NULL;
	void *cubin = NULL;
	size_t size = 0;
	CUstreamCaptureMode prev = hook_cuda_relax_begin();
	CUresult r = HOOK_REAL(cuLinkCreate_v2)(2, opts, vals, &st);
	if (r == CUDA_SUCCESS)
		r = HOOK_REAL(cuLinkAddData_v2)(st, CU_JIT_INPUT_PTX, (void *)ptx, strlen(ptx) + 1, "probed.ptx", 0, NULL,
						NULL);
	for (int i = 0; i < n && r == CUDA_SUCCESS; i++)
		r = HOOK_REAL(cuLinkAddData_v2)(st, CU_JIT_INPUT_PTX, others[i], strlen(others[i]) + 1, "unit.ptx", 0,
						NULL, NULL);
	if (r == CUDA_SUCCESS)
		r = HOOK_REAL(cuLinkComplete)(st, &cubin, &size);
	if (r == CUDA_SUCCESS)
		r = HOOK_REAL(cuModuleLoadData)(mod, cubin);
	if (st)
		HOOK_REAL(cuLinkDestroy)(st);
	hook_cuda_relax_end(prev);
	image_free_names(others, n);
	if (r != CUDA_SUCCESS)
		return cause_set(cause, "linking the probed -rdc kernel with the %d other translation unit%s failed "
				 "(CUDA error %d): %.2000s", n, n == 1 ? "" : "s", (int)r, err);
	return 0;
}
