/* The hooked driver symbols, one row each (tmux cmd_table style): the exact
 * exported name, the cuda.h function whose type the handler has, and whether
 * it is a launch entry point. Read by the dispatch fill (exports and dlsym
 * go through the same trampolines) and by cuGetProcAddress. Every other
 * export is forwarded untouched, cuGetExportTable included.
 *
 * Only names whose ABI matches the listed prototype are hooked: the legacy
 * cuLinkCreate/cuLinkAddData/cuLinkAddFile have the _v2 signatures; legacy
 * cuGraphAddKernelNode takes the v1 params struct (same leading fields);
 * the graph rows' legacy names have the prototypes declared below.
 * The legacy cuCtxDestroy, cuDevicePrimaryCtxRelease and
 * cuDevicePrimaryCtxReset have the _v2 signatures.
 * The legacy 32-bit cuMemAlloc/cuMemFree/cuMemAllocPitch are forwarded
 * untouched (nothing built since CUDA 3.2 calls them). */
#ifndef NTOP_HOOK_TABLE_H
#define NTOP_HOOK_TABLE_H
#include <cuda.h>

/* Prototypes cuda.h no longer declares (or only under a macro rename). */
CUresult hook_proto_getproc_v1(const char *symbol, void **pfn, int cuda_version, cuuint64_t flags);
/* cuFuncSetSharedMemConfig, deprecated in cuda.h (a warning without
 * CUDA_ENABLE_DEPRECATED wherever this header is included). */
CUresult hook_proto_func_smem_config(CUfunction f, CUsharedconfig config);
CUresult hook_proto_graph_add_v1(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps,
				 size_t n_deps, const CUDA_KERNEL_NODE_PARAMS_v1 *params);
/* The legacy cuStreamBeginCapture and its _ptsz (CUDA 10.0: no mode,
 * global capture); cuda.h's cuStreamBeginCapture means _v2. */
CUresult hook_proto_begin_capture_v1(CUstream stream);
/* The legacy exports cuGraphInstantiate and cuGraphInstantiate_v2 (cuda.h's
 * cuGraphInstantiate means cuGraphInstantiateWithFlags), cuGraphExecUpdate
 * (cuda.h's means _v2), cuGraphExecKernelNodeSetParams (v1 params). */
CUresult hook_proto_graph_instantiate_v1(CUgraphExec *exec, CUgraph graph, CUgraphNode *error_node, char *log,
					 size_t log_size);
CUresult hook_proto_graph_exec_update_v1(CUgraphExec exec, CUgraph graph, CUgraphNode *error_node,
					 CUgraphExecUpdateResult *result);
CUresult hook_proto_graph_exec_kparams_v1(CUgraphExec exec, CUgraphNode node,
					  const CUDA_KERNEL_NODE_PARAMS_v1 *params);

/* X(exported name, prototype, launch) */
#define HOOK_ROWS(X) \
	X(cuInit, cuInit, 0) \
	X(cuGetProcAddress, hook_proto_getproc_v1, 0) \
	X(cuGetProcAddress_v2, cuGetProcAddress_v2, 0) \
	X(cuCtxDestroy, cuCtxDestroy_v2, 0) \
	X(cuCtxDestroy_v2, cuCtxDestroy_v2, 0) \
	X(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain, 0) \
	X(cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2, 0) \
	X(cuDevicePrimaryCtxRelease_v2, cuDevicePrimaryCtxRelease_v2, 0) \
	X(cuDevicePrimaryCtxReset, cuDevicePrimaryCtxReset_v2, 0) \
	X(cuDevicePrimaryCtxReset_v2, cuDevicePrimaryCtxReset_v2, 0) \
	X(cuFuncSetAttribute, cuFuncSetAttribute, 0) \
	X(cuKernelSetAttribute, cuKernelSetAttribute, 0) \
	X(cuFuncSetCacheConfig, cuFuncSetCacheConfig, 0) \
	X(cuKernelSetCacheConfig, cuKernelSetCacheConfig, 0) \
	X(cuFuncSetSharedMemConfig, hook_proto_func_smem_config, 0) \
	X(cuModuleLoad, cuModuleLoad, 0) \
	X(cuModuleLoadData, cuModuleLoadData, 0) \
	X(cuModuleLoadDataEx, cuModuleLoadDataEx, 0) \
	X(cuModuleLoadFatBinary, cuModuleLoadFatBinary, 0) \
	X(cuModuleUnload, cuModuleUnload, 0) \
	X(cuModuleGetFunction, cuModuleGetFunction, 0) \
	X(cuLibraryLoadData, cuLibraryLoadData, 0) \
	X(cuLibraryLoadFromFile, cuLibraryLoadFromFile, 0) \
	X(cuLibraryUnload, cuLibraryUnload, 0) \
	X(cuLibraryGetKernel, cuLibraryGetKernel, 0) \
	X(cuLibraryGetModule, cuLibraryGetModule, 0) \
	X(cuKernelGetFunction, cuKernelGetFunction, 0) \
	X(cuLinkCreate, cuLinkCreate_v2, 0) \
	X(cuLinkCreate_v2, cuLinkCreate_v2, 0) \
	X(cuLinkAddData, cuLinkAddData_v2, 0) \
	X(cuLinkAddData_v2, cuLinkAddData_v2, 0) \
	X(cuLinkAddFile, cuLinkAddFile_v2, 0) \
	X(cuLinkAddFile_v2, cuLinkAddFile_v2, 0) \
	X(cuLinkComplete, cuLinkComplete, 0) \
	X(cuLinkDestroy, cuLinkDestroy, 0) \
	X(cuLaunchKernel, cuLaunchKernel, 1) \
	X(cuLaunchKernel_ptsz, cuLaunchKernel, 1) \
	X(cuLaunchKernelEx, cuLaunchKernelEx, 1) \
	X(cuLaunchKernelEx_ptsz, cuLaunchKernelEx, 1) \
	X(cuLaunchCooperativeKernel, cuLaunchCooperativeKernel, 1) \
	X(cuLaunchCooperativeKernel_ptsz, cuLaunchCooperativeKernel, 1) \
	X(cuGraphAddKernelNode, hook_proto_graph_add_v1, 1) \
	X(cuGraphAddKernelNode_v2, cuGraphAddKernelNode_v2, 1) \
	X(cuGraphLaunch, cuGraphLaunch, 1) \
	X(cuGraphLaunch_ptsz, cuGraphLaunch, 1) \
	X(cuGraphInstantiate, hook_proto_graph_instantiate_v1, 0) \
	X(cuGraphInstantiate_v2, hook_proto_graph_instantiate_v1, 0) \
	X(cuGraphInstantiateWithFlags, cuGraphInstantiateWithFlags, 0) \
	X(cuGraphInstantiateWithParams, cuGraphInstantiateWithParams, 0) \
	X(cuGraphInstantiateWithParams_ptsz, cuGraphInstantiateWithParams, 0) \
	X(cuGraphExecDestroy, cuGraphExecDestroy, 0) \
	X(cuGraphExecUpdate, hook_proto_graph_exec_update_v1, 0) \
	X(cuGraphExecUpdate_v2, cuGraphExecUpdate_v2, 0) \
	X(cuGraphExecKernelNodeSetParams, hook_proto_graph_exec_kparams_v1, 0) \
	X(cuGraphExecKernelNodeSetParams_v2, cuGraphExecKernelNodeSetParams_v2, 0) \
	X(cuMemAlloc_v2, cuMemAlloc_v2, 0) \
	X(cuMemAllocPitch_v2, cuMemAllocPitch_v2, 0) \
	X(cuMemAllocManaged, cuMemAllocManaged, 0) \
	X(cuMemAllocAsync, cuMemAllocAsync, 0) \
	X(cuMemAllocAsync_ptsz, cuMemAllocAsync, 0) \
	X(cuMemAllocFromPoolAsync, cuMemAllocFromPoolAsync, 0) \
	X(cuMemAllocFromPoolAsync_ptsz, cuMemAllocFromPoolAsync, 0) \
	X(cuMemCreate, cuMemCreate, 0) \
	X(cuMemFree_v2, cuMemFree_v2, 0) \
	X(cuMemFreeAsync, cuMemFreeAsync, 0) \
	X(cuMemFreeAsync_ptsz, cuMemFreeAsync, 0) \
	X(cuStreamBeginCapture, hook_proto_begin_capture_v1, 0) \
	X(cuStreamBeginCapture_ptsz, hook_proto_begin_capture_v1, 0) \
	X(cuStreamBeginCapture_v2, cuStreamBeginCapture_v2, 0) \
	X(cuStreamBeginCapture_v2_ptsz, cuStreamBeginCapture_v2, 0) \
	X(cuStreamBeginCaptureToGraph, cuStreamBeginCaptureToGraph, 0) \
	X(cuStreamBeginCaptureToGraph_ptsz, cuStreamBeginCaptureToGraph, 0) \
	X(cuStreamEndCapture, cuStreamEndCapture, 0) \
	X(cuStreamEndCapture_ptsz, cuStreamEndCapture, 0)

enum hook_row_id {
#define HOOK_ROW_ENUM(name, proto, launch) HOOK_ROW_##name,
	HOOK_ROWS(HOOK_ROW_ENUM)
#undef HOOK_ROW_ENUM
	HOOK_N_ROWS
};

/* Handlers: hook_<name>, typed like the prototype. */
#define HOOK_ROW_DECL(name, proto, launch) __typeof__(proto) hook_##name;
HOOK_ROWS(HOOK_ROW_DECL)
#undef HOOK_ROW_DECL

struct hook_row {
	const char *name;  /* exported symbol */
	void *handler;     /* hook_<name> */
	int launch;        /* a launch entry point (listed and counted) */
};

extern const struct hook_row hook_table[HOOK_N_ROWS];

/* Row for an exported name; -1 when the name is not hooked. */
int hook_table_find(const char *name);
/* Row whose real driver function is `fn`; -1 when none (cuGetProcAddress). */
int hook_table_find_real(const void *fn);

/* The real driver function of a row, typed: REAL(cuLaunchKernel_ptsz)(...). */
#define HOOK_REAL(name) ((__typeof__(&hook_##name))hook.real[HOOK_ROW_##name])

#endif
