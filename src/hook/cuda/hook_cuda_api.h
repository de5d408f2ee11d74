/* The real driver functions the hook itself calls, typed from cuda.h and
 * taken with dlsym from the real driver (never through our own exports, which
 * would re-enter the hooks). A missing symbol stays NULL: callers check. */
#ifndef NTOP_HOOK_CUDA_API_H
#define NTOP_HOOK_CUDA_API_H
#include <cuda.h>

#define HOOK_CUDA_API(X) \
	X(cuDriverGetVersion) \
	X(cuDeviceGetCount) \
	X(cuDeviceGet) \
	X(cuDeviceGetName) \
	X(cuDeviceGetAttribute) \
	X(cuCtxGetCurrent) \
	X(cuCtxSetCurrent) \
	X(cuCtxGetDevice) \
	X(cuFuncGetName) \
	X(cuKernelGetName) \
	X(cuKernelGetFunction) \
	X(cuFuncGetAttribute) \
	X(cuFuncLoad) \
	X(cuFuncSetAttribute) \
	X(cuFuncSetCacheConfig) \
	X(cuKernelGetAttribute) \
	X(cuFuncGetParamInfo) \
	X(cuModuleUnload) \
	X(cuModuleGetGlobal_v2) \
	X(cuLibraryGetGlobal) \
	X(cuMemAlloc_v2) \
	X(cuMemFree_v2) \
	X(cuMemHostRegister_v2) \
	X(cuMemsetD8Async) \
	X(cuMemsetD2D8Async) \
	X(cuMemcpyDtoHAsync_v2) \
	X(cuMemcpy2DAsync_v2) \
	X(cuMemcpyDtoDAsync_v2) \
	X(cuEventCreate) \
	X(cuEventRecord) \
	X(cuEventQuery) \
	X(cuEventSynchronize) \
	X(cuEventElapsedTime_v2) \
	X(cuEventDestroy_v2) \
	X(cuStreamIsCapturing) \
	X(cuOccupancyMaxActiveBlocksPerMultiprocessor) \
	X(cuThreadExchangeStreamCaptureMode) \
	X(cuStreamCreate) \
	X(cuStreamWaitEvent) \
	X(cuMemGetInfo_v2) \
	X(cuDevicePrimaryCtxGetState) \
	X(cuGraphClone) \
	X(cuGraphDestroy) \
	X(cuGraphGetNodes) \
	X(cuGraphNodeGetType) \
	X(cuGraphNodeFindInClone) \
	X(cuGraphKernelNodeGetParams_v2) \
	X(cuGraphKernelNodeSetParams_v2)

struct hook_cuda_api {
#define HOOK_CUDA_API_FIELD(name) __typeof__(name) *name;
	HOOK_CUDA_API(HOOK_CUDA_API_FIELD)
#undef HOOK_CUDA_API_FIELD
	/* deprecated in cuda.h: typed by hand */
	CUresult (*cuFuncSetSharedMemConfig)(CUfunction f, CUsharedconfig config);
};

extern struct hook_cuda_api cu;

/* Fills `cu` from hook.real (NULLs when there is no driver). */
void hook_cuda_api_load(void);

#endif
