/* The HIP runtime as the HIP stand-in (libamdhip64.so.5) and the HIP hook
 * for ROCm 6/7 (libntop_hip.so, reached through the front) see it: the few
 * types, values and layouts they need, declared here (no ROCm headers), as
 * HIP 5.2 (Debian's libamdhip64-dev 5.2.3) has them, with ROCm 6's
 * hipDeviceProp_t (R0600) and launch config beside, and `hipr`, typed
 * pointers to the real runtime's functions for the hook's own calls (never
 * through our exports, which would register the hook's own modules). */
#ifndef NTOP_HOOK_HIP_API_H
#define NTOP_HOOK_HIP_API_H
#include <stddef.h>
#include <stdint.h>

typedef int hipError_t;
#define HIP_SUCCESS 0
#define HIP_ERROR_INVALID_VALUE 1
#define HIP_ERROR_NOT_INITIALIZED 3
#define HIP_ERROR_NOT_FOUND 500

typedef struct {
	uint32_t x, y, z;
} hip_dim3;

typedef void *hipStream_t, *hipEvent_t, *hipModule_t, *hipFunction_t, *hipGraph_t, *hipGraphExec_t,
	*hipGraphNode_t;

/* hipStreamPerThread: the _spt entry points' stream 0 */
#define HIP_STREAM_PER_THREAD ((hipStream_t)2)
#define HIP_LAUNCH_PARAM_BUFFER_POINTER ((void *)0x01)
#define HIP_LAUNCH_PARAM_BUFFER_SIZE ((void *)0x02)
#define HIP_LAUNCH_PARAM_END ((void *)0x03)
#define HIP_MEMCPY_DEVICE_TO_HOST 2
#define HIP_STREAM_NON_BLOCKING 1
#define HIP_CAPTURE_STATUS_NONE 0

/* hipDeviceProp_t of HIP 5.x (792 bytes), the layout the unversioned
 * hipGetDeviceProperties export keeps in ROCm 6 (R0000): read by offset.
 * tests/fakehip declares the struct field by field; regress hip_record
 * checks the hook reads name, CUs, clock and gcnArchName from it. */
#define HIP_PROPS_SIZE 792
#define HIP_PROPS_NAME 0
#define HIP_PROPS_CLOCK_KHZ 308
#define HIP_PROPS_CUS 336
#define HIP_PROPS_ARCH_NAME 396
#define HIP_PROPS_STR 256

/* hipDeviceProp_t of ROCm 6 and 7 (hipDeviceProp_tR0600, 1472 bytes), what
 * hipGetDevicePropertiesR0600 fills (and hipGetProcAddress gives for
 * "hipGetDeviceProperties" at version 600 and later). The offsets are
 * computed from our own declaration in tests/fakehip/hip_mini_api.h
 * (test_hip_props checks them, and against ROCm 7.1's header where the
 * triton wheel ships one). */
#define HIP_PROPS6_SIZE 1472
#define HIP_PROPS6_CLOCK_KHZ 348
#define HIP_PROPS6_CUS 388
#define HIP_PROPS6_ARCH_NAME 1160

/* hipLaunchAttribute (ROCm 7.1's header: an id, padding to 8 bytes, a
 * 64-byte value) and the ids ROCm 7.1 names; 4 is the cluster dimension
 * Triton's AMD launcher sets (CUDA's number; ROCm 7.1 names no such id). */
typedef struct {
	int id;
	char pad[4];
	union {
		unsigned char raw[64];
		int cooperative;
	} val;
} hip_launch_attr;
enum {
	HIP_ATTR_ACCESS_POLICY_WINDOW = 1,
	HIP_ATTR_COOPERATIVE = 2,
	HIP_ATTR_SYNCHRONIZATION_POLICY = 3,
	HIP_ATTR_CLUSTER_DIMENSION = 4,
	HIP_ATTR_PRIORITY = 8,
	HIP_ATTR_MEM_SYNC_DOMAIN_MAP = 9,
	HIP_ATTR_MEM_SYNC_DOMAIN = 10,
};

/* HIP_LAUNCH_CONFIG (hipDrvLaunchKernelEx, ROCm 6.4+). */
typedef struct {
	unsigned grid_x, grid_y, grid_z, block_x, block_y, block_z, smem;
	hipStream_t stream;
	hip_launch_attr *attrs;
	unsigned n_attrs;
} hip_launch_config;

typedef struct {
	hip_dim3 blockDim;
	void **extra;
	void *func;
	hip_dim3 gridDim;
	void **kernelParams;
	unsigned int sharedMemBytes;
} hip_kernel_node_params;

/* The runtime's own functions the hook calls: X(name, return, arguments). */
#define HIP_API(X) \
	X(hipGetDevice, hipError_t, (int *)) \
	X(hipSetDevice, hipError_t, (int)) \
	X(hipGetDeviceProperties, hipError_t, (void *, int)) \
	X(hipGetDevicePropertiesR0600, hipError_t, (void *, int)) \
	X(hipMalloc, hipError_t, (void **, size_t)) \
	X(hipMemcpyAsync, hipError_t, (void *, const void *, size_t, int, hipStream_t)) \
	X(hipMemsetAsync, hipError_t, (void *, int, size_t, hipStream_t)) \
	X(hipStreamCreateWithFlags, hipError_t, (hipStream_t *, unsigned)) \
	X(hipStreamSynchronize, hipError_t, (hipStream_t)) \
	X(hipStreamIsCapturing, hipError_t, (hipStream_t, int *)) \
	X(hipEventCreate, hipError_t, (hipEvent_t *)) \
	X(hipEventRecord, hipError_t, (hipEvent_t, hipStream_t)) \
	X(hipEventSynchronize, hipError_t, (hipEvent_t)) \
	X(hipEventElapsedTime, hipError_t, (float *, hipEvent_t, hipEvent_t)) \
	X(hipEventDestroy, hipError_t, (hipEvent_t)) \
	X(hipModuleLoadData, hipError_t, (hipModule_t *, const void *)) \
	X(hipModuleGetFunction, hipError_t, (hipFunction_t *, hipModule_t, const char *)) \
	X(hipModuleLaunchKernel, hipError_t, \
	  (hipFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, hipStream_t, void **, \
	   void **)) \
	X(hipModuleLaunchCooperativeKernel, hipError_t, \
	  (hipFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, hipStream_t, void **)) \
	X(hipDrvLaunchKernelEx, hipError_t, (const hip_launch_config *, hipFunction_t, void **, void **)) \
	X(hipModuleOccupancyMaxActiveBlocksPerMultiprocessor, hipError_t, (int *, hipFunction_t, int, size_t)) \
	X(hipGetLastError, hipError_t, (void)) \
	X(hipPeekAtLastError, hipError_t, (void))

struct hip_real {
#define HIP_API_FIELD(name, ret, args) ret(*name) args;
	HIP_API(HIP_API_FIELD)
#undef HIP_API_FIELD
};

extern struct hip_real hipr;

/* Fills hipr from the real runtime (missing functions stay NULL). */
void hook_hip_api_load(void *real);

#endif
