/* In-process checks of the hook's coverage table and dispatch, with the
 * fake driver as the real one (NTOP_REAL_LIBCUDA, set by CTest): every
 * launch entry point is a hooked row flagged `launch`, its export slot holds
 * our handler, cuGetProcAddress hands out our handler for every version /
 * per-thread-stream variant, unhooked names forward to the driver, and a
 * name the driver lacks answers CUDA_ERROR_NOT_FOUND. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include "hook/hook_dispatch.h"
#include "hook/hook_exports.h"
#include "hook/hook_state.h"
#include "hook/cuda/hook_table.h"

static int fails;
#define EXPECT(c, ...) do { if (!(c)) { printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); fails++; } } while (0)

static int export_index(const char *name)
{
	for (int i = 0; i < hook_export_count; i++)
		if (strcmp(hook_export_names[i], name) == 0)
			return i;
	return -1;
}

static const char *const launch_names[] = {
	"cuLaunchKernel", "cuLaunchKernel_ptsz", "cuLaunchKernelEx", "cuLaunchKernelEx_ptsz",
	"cuLaunchCooperativeKernel", "cuLaunchCooperativeKernel_ptsz", "cuGraphLaunch", "cuGraphLaunch_ptsz",
	"cuGraphAddKernelNode", "cuGraphAddKernelNode_v2",
};

static void check_getproc(const char *symbol, cuuint64_t flags, const char *want_row)
{
	void *p = NULL;
	CUdriverProcAddressQueryResult st;
	CUresult rc = hook_cuGetProcAddress_v2(symbol, &p, 13000, flags, &st);
	int r = hook_table_find(want_row);
	EXPECT(rc == CUDA_SUCCESS && r >= 0 && p == hook_table[r].handler,
	       "cuGetProcAddress(%s, flags %llu) -> rc %d, %p, want handler of %s", symbol,
	       (unsigned long long)flags, (int)rc, p, want_row);
}

int main(void)
{
	EXPECT(hook.driver != NULL, "no driver: %s", hook.no_driver ? hook.no_driver : "?");
	for (size_t i = 0; i < sizeof launch_names / sizeof launch_names[0]; i++) {
		const char *n = launch_names[i];
		int r = hook_table_find(n);
		EXPECT(r >= 0, "%s is not hooked", n);
		if (r < 0)
			continue;
		EXPECT(hook_table[r].launch, "%s not flagged as a launch", n);
		int e = export_index(n);
		EXPECT(e >= 0, "%s is not exported", n);
		EXPECT(e < 0 || ntop_dispatch[e] == hook_table[r].handler, "%s export does not reach its handler", n);
	}
	for (int r = 0; r < HOOK_N_ROWS; r++)
		EXPECT(export_index(hook_table[r].name) >= 0, "hooked %s is not in the export list", hook_table[r].name);

	check_getproc("cuLaunchKernel", 0, "cuLaunchKernel");
	check_getproc("cuLaunchKernel", CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, "cuLaunchKernel_ptsz");
	check_getproc("cuLaunchKernelEx", 0, "cuLaunchKernelEx");
	check_getproc("cuLaunchKernelEx", CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, "cuLaunchKernelEx_ptsz");
	check_getproc("cuLaunchCooperativeKernel", 0, "cuLaunchCooperativeKernel");
	check_getproc("cuLaunchCooperativeKernel", CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
		      "cuLaunchCooperativeKernel_ptsz");
	check_getproc("cuGraphLaunch", 0, "cuGraphLaunch");
	check_getproc("cuGraphLaunch", CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, "cuGraphLaunch_ptsz");
	check_getproc("cuGraphAddKernelNode", 0, "cuGraphAddKernelNode_v2");
	check_getproc("cuGetProcAddress", 0, "cuGetProcAddress_v2");
	check_getproc("cuModuleLoadData", 0, "cuModuleLoadData");
	check_getproc("cuLinkCreate", 0, "cuLinkCreate_v2");
	check_getproc("cuMemAlloc", 0, "cuMemAlloc_v2");
	check_getproc("cuMemFree", 0, "cuMemFree_v2");

	/* Unhooked: forwarded untouched (cuGetExportTable above all). */
	void *fake = dlopen(hook.real_path, RTLD_NOW | RTLD_NOLOAD);
	const char *fwd[] = { "cuGetExportTable", "cuMemAllocHost_v2", "cuEventRecord" };
	for (size_t i = 0; i < 3; i++) {
		int e = export_index(fwd[i]);
		EXPECT(e >= 0 && fake && ntop_dispatch[e] == dlsym(fake, fwd[i]), "%s is not forwarded", fwd[i]);
	}
	void *p = (void *)1;
	CUresult rc = hook_cuGetProcAddress_v2("cuMemAllocHost", &p, 13000, 0, NULL);
	EXPECT(rc == CUDA_SUCCESS && fake && p == dlsym(fake, "cuMemAllocHost_v2"), "getproc(cuMemAllocHost) not forwarded");
	/* The fake has no cuArrayCreate_v2: its export answers NOT_FOUND. */
	int e = export_index("cuArrayCreate_v2");
	EXPECT(e >= 0 && ((CUresult(*)(void))ntop_dispatch[e])() == CUDA_ERROR_NOT_FOUND, "missing name not stubbed");
	if (fake)
		dlclose(fake);
	printf("%s: %d failures\n", fails ? "FAIL" : "ok", fails);
	return fails != 0;
}
