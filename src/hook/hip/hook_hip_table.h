/* The HIP calls ntop hooks, one row each: the row's id, the exact exported
 * name (HIP 5.2 exports hipExtModuleLaunchKernel and
 * hipHccModuleLaunchKernel by their C++ names; HIP_ROW_ALIASES gives the
 * C names a later runtime may export instead) and its handler
 * hook_hip_<id>. In the HIP 5 stand-in every other export of
 * hip_exports.txt is forwarded untouched through a signature-free
 * trampoline, and the rows HIP 5.2 lacks (hipGetProcAddress,
 * hipModuleLaunchCooperativeKernel, hipDrvLaunchKernelEx) are not
 * exported; on ROCm 6/7 the front (src/hook/audit/rtld_front.c) reaches every row. */
#ifndef NTOP_HOOK_HIP_TABLE_H
#define NTOP_HOOK_HIP_TABLE_H
#include "hook/hip/hook_hip_api.h"

#define HIP_MANGLED_EXT_MODULE_LAUNCH \
	"_Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j"
#define HIP_MANGLED_HCC_MODULE_LAUNCH \
	"_Z24hipHccModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_"

/* X(id, exported name) */
#define HIP_ROWS(X) \
	X(__hipRegisterFatBinary, "__hipRegisterFatBinary") \
	X(__hipRegisterFunction, "__hipRegisterFunction") \
	X(__hipUnregisterFatBinary, "__hipUnregisterFatBinary") \
	X(hipModuleLoad, "hipModuleLoad") \
	X(hipModuleLoadData, "hipModuleLoadData") \
	X(hipModuleLoadDataEx, "hipModuleLoadDataEx") \
	X(hipModuleUnload, "hipModuleUnload") \
	X(hipModuleGetFunction, "hipModuleGetFunction") \
	X(hipLaunchKernel, "hipLaunchKernel") \
	X(hipLaunchKernel_spt, "hipLaunchKernel_spt") \
	X(hipExtLaunchKernel, "hipExtLaunchKernel") \
	X(hipLaunchCooperativeKernel, "hipLaunchCooperativeKernel") \
	X(hipLaunchCooperativeKernel_spt, "hipLaunchCooperativeKernel_spt") \
	X(hipModuleLaunchKernel, "hipModuleLaunchKernel") \
	X(hipModuleLaunchCooperativeKernel, "hipModuleLaunchCooperativeKernel") \
	X(hipDrvLaunchKernelEx, "hipDrvLaunchKernelEx") \
	X(hipExtModuleLaunchKernel, HIP_MANGLED_EXT_MODULE_LAUNCH) \
	X(hipHccModuleLaunchKernel, HIP_MANGLED_HCC_MODULE_LAUNCH) \
	X(hipGraphAddKernelNode, "hipGraphAddKernelNode") \
	X(hipGraphLaunch, "hipGraphLaunch") \
	X(hipGetProcAddress, "hipGetProcAddress")

/* X(id, the C name) */
#define HIP_ROW_ALIASES(X) \
	X(hipExtModuleLaunchKernel, "hipExtModuleLaunchKernel") \
	X(hipHccModuleLaunchKernel, "hipHccModuleLaunchKernel")

enum hip_row_id {
#define HIP_ROW_ENUM(id, name) HIP_ROW_##id,
	HIP_ROWS(HIP_ROW_ENUM)
#undef HIP_ROW_ENUM
	HIP_N_ROWS
};

/* Handlers (hook_hip_*.c), typed as HIP 5.2 declares the calls. */
void **hook_hip___hipRegisterFatBinary(const void *wrapper);
void hook_hip___hipRegisterFunction(void **handle, const void *host, char *device, const char *name, unsigned limit,
				    void *tid, void *bid, hip_dim3 *block, hip_dim3 *grid, int *wsize);
void hook_hip___hipUnregisterFatBinary(void **handle);
hipError_t hook_hip_hipModuleLoad(hipModule_t *m, const char *path);
hipError_t hook_hip_hipModuleLoadData(hipModule_t *m, const void *image);
hipError_t hook_hip_hipModuleLoadDataEx(hipModule_t *m, const void *image, unsigned n, void *opts, void **vals);
hipError_t hook_hip_hipModuleUnload(hipModule_t m);
hipError_t hook_hip_hipModuleGetFunction(hipFunction_t *f, hipModule_t m, const char *name);
hipError_t hook_hip_hipLaunchKernel(const void *f, hip_dim3 grid, hip_dim3 block, void **args, size_t smem,
				    hipStream_t s);
hipError_t hook_hip_hipLaunchKernel_spt(const void *f, hip_dim3 grid, hip_dim3 block, void **args, size_t smem,
					hipStream_t s);
hipError_t hook_hip_hipExtLaunchKernel(const void *f, hip_dim3 grid, hip_dim3 block, void **args, size_t smem,
				       hipStream_t s, hipEvent_t start, hipEvent_t stop, int flags);
hipError_t hook_hip_hipLaunchCooperativeKernel(const void *f, hip_dim3 grid, hip_dim3 block, void **args,
					       unsigned smem, hipStream_t s);
hipError_t hook_hip_hipLaunchCooperativeKernel_spt(const void *f, hip_dim3 grid, hip_dim3 block, void **args,
						   unsigned smem, hipStream_t s);
hipError_t hook_hip_hipModuleLaunchKernel(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
					  unsigned by, unsigned bz, unsigned smem, hipStream_t s, void **params,
					  void **extra);
hipError_t hook_hip_hipModuleLaunchCooperativeKernel(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz,
						     unsigned bx, unsigned by, unsigned bz, unsigned smem, hipStream_t s,
						     void **params);
hipError_t hook_hip_hipDrvLaunchKernelEx(const hip_launch_config *c, hipFunction_t f, void **params, void **extra);
hipError_t hook_hip_hipExtModuleLaunchKernel(hipFunction_t f, uint32_t wx, uint32_t wy, uint32_t wz, uint32_t lx,
					     uint32_t ly, uint32_t lz, size_t smem, hipStream_t s, void **params,
					     void **extra, hipEvent_t start, hipEvent_t stop, uint32_t flags);
hipError_t hook_hip_hipHccModuleLaunchKernel(hipFunction_t f, uint32_t wx, uint32_t wy, uint32_t wz, uint32_t lx,
					     uint32_t ly, uint32_t lz, size_t smem, hipStream_t s, void **params,
					     void **extra, hipEvent_t start, hipEvent_t stop);
hipError_t hook_hip_hipGraphAddKernelNode(hipGraphNode_t *node, hipGraph_t g, const hipGraphNode_t *deps, size_t n,
					  const hip_kernel_node_params *p);
hipError_t hook_hip_hipGraphLaunch(hipGraphExec_t e, hipStream_t s);
hipError_t hook_hip_hipGetProcAddress(const char *symbol, void **pfn, int version, uint64_t flags, int *status);

struct hip_row {
	const char *name;
	void *handler;
};

extern const struct hip_row hip_table[HIP_N_ROWS];

/* The row a HIP name (its exported or its C name) hooks; -1 for none. */
int hook_hip_row_by_name(const char *name);

/* The real function of a row (a stub when the runtime lacks it), typed:
 * HIP_REAL(hipModuleLaunchKernel)(...). */
extern void *hip_real_rows[HIP_N_ROWS];
#define HIP_REAL(id) ((__typeof__(&hook_hip_##id))hip_real_rows[HIP_ROW_##id])

#endif
