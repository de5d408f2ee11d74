/* Typed real-driver pointers for the hook's own calls (hook_cuda_api.h). */
#include <dlfcn.h>
#include "hook/cuda/hook_cuda_api.h"
#include "hook/hook_state.h"

struct hook_cuda_api cu;

void hook_cuda_api_load(void)
{
	if (!hook.driver)
		return;
#define HOOK_CUDA_API_LOAD(name) cu.name = (__typeof__(name) *)dlsym(hook.driver, #name);
	HOOK_CUDA_API(HOOK_CUDA_API_LOAD)
#undef HOOK_CUDA_API_LOAD
	cu.cuFuncSetSharedMemConfig = (__typeof__(cu.cuFuncSetSharedMemConfig))dlsym(hook.driver, "cuFuncSetSharedMemConfig");
	/* Drivers before CUDA 12.8 only have the unversioned name. */
	if (!cu.cuEventElapsedTime_v2)
		cu.cuEventElapsedTime_v2 = (__typeof__(cuEventElapsedTime_v2) *)dlsym(hook.driver, "cuEventElapsedTime");
}
