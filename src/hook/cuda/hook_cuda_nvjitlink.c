/* The probed copy compiled by nvJitLink on the builder thread (the
 * toolkit's in-process linker: PTX in, cubin out), then loaded with
 * cuModuleLoadData. The driver's own JIT (cuModuleLoadDataEx on PTX) holds
 * the application's driver calls while it compiles: on an H200 the first,
 * deferred launch of each kernel waited out the whole 10-25 ms JIT in the
 * occupancy query of its launch line (app_cost's block_sched-async runs,
 * 3b26952), the stall building off the app's threads is meant to spare
 * it. nvJitLink compiles without the driver; only loading the finished
 * cubin holds it. The library is found as ntop's stand-in finds it
 * (reallib_nvjitlink: NTOP_REAL_LIBNVJITLINK, the toolkit; never a
 * stand-in), opened on the first build. Without it, or when it fails (PTX
 * newer than it, a cubin the driver refuses), the driver's JIT builds the
 * copy; the `instrument` line says which did (`jit=`). */
#include <dlfcn.h>
#define NVJITLINK_NO_INLINE /* entry points from dlsym, none linked */
#include <nvJitLink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/cause.h"
#include "common/reallib.h"
#include "engine/ptx/assemble.h"
#include "hook/cuda/hook_cuda.h"
#include "hook/cuda/hook_table.h"
#include "hook/hook_log.h"

typedef nvJitLinkResult (*jl_create_fn)(nvJitLinkHandle *, uint32_t, const char **);
typedef nvJitLinkResult (*jl_destroy_fn)(nvJitLinkHandle *);
typedef nvJitLinkResult (*jl_add_fn)(nvJitLinkHandle, nvJitLinkInputType, const void *, size_t, const char *);
typedef nvJitLinkResult (*jl_complete_fn)(nvJitLinkHandle);
typedef nvJitLinkResult (*jl_size_fn)(nvJitLinkHandle, size_t *);
typedef nvJitLinkResult (*jl_get_fn)(nvJitLinkHandle, char *);

static const char *const jl_names[HOOK_JL_N] = { "nvJitLinkCreate", "nvJitLinkDestroy", "nvJitLinkAddData",
						 "nvJitLinkComplete", "nvJitLinkGetLinkedCubinSize",
						 "nvJitLinkGetLinkedCubin", "nvJitLinkGetErrorLogSize",
						 "nvJitLinkGetErrorLog" };

/* 0 when every entry point was found; else -1 (why is logged once). */
static int jl_open(struct hook_nvjitlink *jl)
{
	if (jl->tried)
		return jl->lib ? 0 : -1;
	jl->tried = 1;
	char path[4096], *cause = NULL;
	if (reallib_open(&reallib_nvjitlink, (const void *)ntop_hook_marker, &jl->lib, path, sizeof path, &cause) < 0) {
		hook_log("nvJitLink not found, probed copies built by the driver's JIT: %s", cause ? cause : "?");
		free(cause);
		return -1;
	}
	for (int i = 0; i < HOOK_JL_N; i++)
		if (!(jl->fn[i] = dlsym(jl->lib, jl_names[i])) && i < HOOK_JL_ERR_SIZE) { /* the error log is optional */
			hook_log("%s has no %s: probed copies built by the driver's JIT", path, jl_names[i]);
			dlclose(jl->lib);
			jl->lib = NULL;
			return -1;
		}
	hook_log("probed copies compiled by %s", path);
	return 0;
}

/* The error log, or what failed where there is none. */
static int jl_fail(struct hook_nvjitlink *jl, nvJitLinkHandle h, const char *what, nvJitLinkResult r, char **cause)
{
	size_t n = 0;
	char *log = NULL;
	if (h && jl->fn[HOOK_JL_ERR_SIZE] && jl->fn[HOOK_JL_ERR] && ((jl_size_fn)jl->fn[HOOK_JL_ERR_SIZE])(h, &n) == NVJITLINK_SUCCESS && n > 1 && (log = malloc(n)) &&
	    ((jl_get_fn)jl->fn[HOOK_JL_ERR])(h, log) != NVJITLINK_SUCCESS)
		log[0] = 0;
	cause_set(cause, "nvJitLink: %s failed (%d)%s%.1000s", what, (int)r, log && *log ? ": " : "", log ? log : "");
	free(log);
	return -1;
}

/* The cubin of ptx for sm_cc (or the PTX's arch-specific target), malloc'd. */
static int jl_cubin(struct hook_nvjitlink *jl, const char *ptx, size_t len, int cc, char **cubin, char **cause)
{
	char arch[32], opt[48];
	if (assemble_pick_arch(ptx, cc, arch, sizeof arch) < 0)
		return cause_set(cause, "nvJitLink: no -arch for sm_%d", cc);
	snprintf(opt, sizeof opt, "-arch=%s", arch);
	const char *opts[] = { opt };
	nvJitLinkHandle h = NULL;
	nvJitLinkResult r = ((jl_create_fn)jl->fn[HOOK_JL_CREATE])(&h, 1, opts);
	if (r != NVJITLINK_SUCCESS)
		return jl_fail(jl, NULL, "create", r, cause);
	size_t n = 0;
	int rc = -1;
	if ((r = ((jl_add_fn)jl->fn[HOOK_JL_ADD])(h, NVJITLINK_INPUT_PTX, ptx, len, "probed.ptx")) != NVJITLINK_SUCCESS)
		jl_fail(jl, h, "adding the PTX", r, cause);
	else if ((r = ((jl_complete_fn)jl->fn[HOOK_JL_COMPLETE])(h)) != NVJITLINK_SUCCESS)
		jl_fail(jl, h, "compiling", r, cause);
	else if ((r = ((jl_size_fn)jl->fn[HOOK_JL_CUBIN_SIZE])(h, &n)) != NVJITLINK_SUCCESS || n == 0)
		jl_fail(jl, h, "the cubin's size", r, cause);
	else if (!(*cubin = malloc(n)))
		cause_set(cause, "out of memory");
	else if ((r = ((jl_get_fn)jl->fn[HOOK_JL_CUBIN])(h, *cubin)) != NVJITLINK_SUCCESS) {
		jl_fail(jl, h, "the cubin", r, cause);
		free(*cubin);
		*cubin = NULL;
	} else
		rc = 0;
	((jl_destroy_fn)jl->fn[HOOK_JL_DESTROY])(&h);
	return rc;
}

int hook_nvjitlink_load(const char *ptx, size_t len, int cc, CUmodule *mod, char **cause)
{
	struct hook_nvjitlink *jl = &hook.builder.jl; /* the builder thread's alone */
	if (jl_open(jl) < 0)
		return cause_set(cause, "nvJitLink not found");
	char *cubin = NULL;
	if (jl_cubin(jl, ptx, len, cc, &cubin, cause) < 0)
		return -1;
	CUstreamCaptureMode prev = hook_cuda_relax_begin();
	CUresult r = HOOK_REAL(cuModuleLoadData)(mod, cubin);
	hook_cuda_relax_end(prev);
	free(cubin);
	if (r != CUDA_SUCCESS)
		return cause_set(cause, "loading nvJitLink's cubin failed (CUDA error %d)", (int)r);
	return 0;
}
