/* Test application for function attributes on probed copies
 * (regress/hook_attr.sh). Each case sets attributes on a kernel, launches
 * it with 64 KB or more of dynamic shared memory (the fake, like the GPU,
 * refuses more than 48 KB unless the launched function allows it) and asks
 * the fake what the last probed copy launched had: every attribute the app
 * set must be on it. One line per case: "CASE probed=N ATTR=VAL... ok" or
 * "FAIL ...". Cases:
 *   func    cuFuncSetAttribute (every settable attribute), cuFuncSetCacheConfig,
 *           cuFuncSetSharedMemConfig on a module function, before its first launch
 *   raise   the same function raised to 96 KB after its probed copy exists
 *   kernel  cuKernelSetAttribute / cuKernelSetCacheConfig on a library CUkernel,
 *           launched as a CUfunction (the 13.0 runtime's <<<>>> path)
 *   kfunc   cuFuncSetAttribute on a library CUkernel passed as a CUfunction
 *   unseen  set behind the hook's back (fakecuda_set_attr_unseen) on a module
 *           function and on a library kernel: read from the original
 * Usage: app_attr KERNELS.ptx [control]
 *   control: launch with 64 KB without the attribute: must fail with error 1
 *   (also under the hook: the app sees what it would without it). */
#define CUDA_ENABLE_DEPRECATED /* cuFuncSetSharedMemConfig: apps still call it */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda.h>
#include "app_util.h"

static CUdeviceptr buf;
static unsigned n_elems = 1024;


/* The fake's test hooks (loaded by the hook, or by us when run alone). */
static int (*probed_attr)(int);
static unsigned long (*probed_launches)(void);
static CUresult (*set_unseen)(CUfunction, CUfunction_attribute, int);

static void fake_syms(void)
{
	probed_attr = (int (*)(int))fake_sym("fakecuda_probed_attr");
	probed_launches = (unsigned long (*)(void))fake_sym("fakecuda_probed_launches");
	set_unseen = (CUresult(*)(CUfunction, CUfunction_attribute, int))fake_sym("fakecuda_set_attr_unseen");
	if (!probed_attr || !probed_launches || !set_unseen) {
		printf("FAIL: the fake's test hooks are not loaded\n");
		exit(1);
	}
}

struct want {
	int attr;      /* CUfunction_attribute, -1 cache config, -2 shared memory config */
	const char *name;
	int value;
};

/* Launches f with smem bytes; then every wanted value must be on the copy. */
static void run_case(const char *name, CUfunction f, unsigned smem, const struct want *w, int n)
{
	void *params[] = { &buf, &n_elems };
	unsigned long before = probed_launches();
	CK(cuLaunchKernel(f, 4, 1, 1, 64, 1, 1, smem, 0, params, NULL));
	unsigned long probed = probed_launches() - before;
	char line[1024];
	int bad = probed != 1;
	int len = snprintf(line, sizeof line, "%s probed=%lu smem=%u", name, probed, smem);
	for (int i = 0; i < n && len < (int)sizeof line; i++) {
		int got = probed_attr(w[i].attr);
		bad |= got != w[i].value;
		len += snprintf(line + len, sizeof line - (size_t)len, " %s=%d%s", w[i].name, got,
				got != w[i].value ? "(want)" : "");
	}
	printf("%s%s %s\n", bad ? "FAIL " : "", line, bad ? "" : "ok");
	failures += bad;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	char *ptx = slurp(argv[1]);
	if (!ptx)
		return 2;
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod, mod2;
	CUlibrary lib, lib2;
	CUfunction fill, fill2;
	CUkernel kscale, kfill, kscale2;
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuCtxCreate(&ctx, NULL, 0, dev));
	CK(cuMemAlloc(&buf, n_elems * sizeof(float)));
	CK(cuModuleLoadData(&mod, ptx));
	CK(cuModuleGetFunction(&fill, mod, "fill"));

	if (argc > 2 && strcmp(argv[2], "control") == 0) {
		void *params[] = { &buf, &n_elems };
		CUresult rc = cuLaunchKernel(fill, 4, 1, 1, 64, 1, 1, 64 * 1024, 0, params, NULL);
		printf("control: 64 KB without the attribute -> %d\n", (int)rc);
		free(ptx);
		return rc == CUDA_ERROR_INVALID_VALUE ? 0 : 1;
	}
	fake_syms();

	/* func: everything the function setters accept, before the first launch */
	CK(cuFuncSetAttribute(fill, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 64 * 1024));
	CK(cuFuncSetAttribute(fill, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 75));
	CK(cuFuncSetAttribute(fill, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, 2));
	CK(cuFuncSetAttribute(fill, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT, 1));
	CK(cuFuncSetAttribute(fill, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH, 1));
	CK(cuFuncSetAttribute(fill, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1));
	CK(cuFuncSetAttribute(fill, CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE,
			      CU_CLUSTER_SCHEDULING_POLICY_SPREAD));
	CK(cuFuncSetCacheConfig(fill, CU_FUNC_CACHE_PREFER_SHARED));
	CK(cuFuncSetSharedMemConfig(fill, CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE));
	const struct want all[] = {
		{ CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, "max_dyn_smem", 64 * 1024 },
		{ CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, "carveout", 75 },
		{ CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, "cluster_w", 2 },
		{ CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT, "cluster_h", 1 },
		{ CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH, "cluster_d", 1 },
		{ CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, "non_portable", 1 },
		{ CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE, "sched", CU_CLUSTER_SCHEDULING_POLICY_SPREAD },
		{ -1, "cache", CU_FUNC_CACHE_PREFER_SHARED },
		{ -2, "bank", CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE },
	};
	run_case("func", fill, 64 * 1024, all, (int)(sizeof all / sizeof all[0]));

	/* raise: the copy exists; the app asks for more */
	CK(cuFuncSetAttribute(fill, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 96 * 1024));
	CK(cuFuncSetCacheConfig(fill, CU_FUNC_CACHE_PREFER_L1));
	const struct want raised[] = {
		{ CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, "max_dyn_smem", 96 * 1024 },
		{ CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, "carveout", 75 },
		{ -1, "cache", CU_FUNC_CACHE_PREFER_L1 },
	};
	run_case("raise", fill, 96 * 1024, raised, 3);

	/* kernel: the library API on a CUkernel, launched as a CUfunction */
	CK(cuLibraryLoadData(&lib, ptx, NULL, NULL, 0, NULL, NULL, 0));
	CK(cuLibraryGetKernel(&kscale, lib, "scale"));
	CK(cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 64 * 1024, kscale, dev));
	CK(cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 50, kscale, dev));
	CK(cuKernelSetCacheConfig(kscale, CU_FUNC_CACHE_PREFER_EQUAL, dev));
	const struct want kern[] = {
		{ CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, "max_dyn_smem", 64 * 1024 },
		{ CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, "carveout", 50 },
		{ -1, "cache", CU_FUNC_CACHE_PREFER_EQUAL },
	};
	run_case("kernel", (CUfunction)kscale, 64 * 1024, kern, 3);

	/* kfunc: the function setter given the CUkernel */
	CK(cuLibraryGetKernel(&kfill, lib, "fill"));
	CK(cuFuncSetAttribute((CUfunction)kfill, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 80 * 1024));
	const struct want kf[] = { { CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, "max_dyn_smem", 80 * 1024 } };
	run_case("kfunc", (CUfunction)kfill, 80 * 1024, kf, 1);

	/* unseen: only the original knows (read at the copy's first launch) */
	CK(cuModuleLoadData(&mod2, ptx));
	CK(cuModuleGetFunction(&fill2, mod2, "fill"));
	CK(set_unseen(fill2, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 64 * 1024));
	CK(set_unseen(fill2, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1));
	const struct want un[] = {
		{ CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, "max_dyn_smem", 64 * 1024 },
		{ CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, "non_portable", 1 },
	};
	run_case("unseen", fill2, 64 * 1024, un, 2);
	CK(cuLibraryLoadData(&lib2, ptx, NULL, NULL, 0, NULL, NULL, 0));
	CK(cuLibraryGetKernel(&kscale2, lib2, "scale"));
	CK(set_unseen((CUfunction)kscale2, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 72 * 1024));
	const struct want unk[] = { { CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, "max_dyn_smem", 72 * 1024 } };
	run_case("unseen_kernel", (CUfunction)kscale2, 72 * 1024, unk, 1);

	CK(cuCtxSynchronize());
	CK(cuMemFree(buf));
	free(ptx);
	printf("app_attr: done, %d failures\n", failures);
	return failures ? 1 : 0;
}
