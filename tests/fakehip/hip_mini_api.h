/* The few HIP runtime types and calls the HIP test double (libamdhip64.so.5
 * and .so.7) and its test apps use, declared here so nothing needs ROCm's
 * headers. Values and layouts are HIP 5.2's (Debian's libamdhip64-dev
 * 5.2.3): error codes, launch-parameter markers, capture modes, and
 * hipDeviceProp_t as far as gcnArchName (the fields before it declared one
 * by one, so the compiler places them; the hook reads the same fields by
 * offset); then what ROCm 6 and 7 added that the .so.7 build and Triton's
 * launcher use: hipDeviceProp_tR0600 (whole, 1472 bytes), hipGetProcAddress,
 * the launch config of hipDrvLaunchKernelEx, version queries. */
#ifndef FAKEHIP_HIP_MINI_API_H
#define FAKEHIP_HIP_MINI_API_H
#include <stddef.h>
#include <stdint.h>

typedef int hipError_t;
enum {
	hipSuccess = 0,
	hipErrorInvalidValue = 1,
	hipErrorOutOfMemory = 2,
	hipErrorNotInitialized = 3,
	hipErrorInvalidDeviceFunction = 98,
	hipErrorInvalidImage = 200,
	hipErrorNoBinaryForGpu = 209,
	hipErrorInvalidHandle = 400,
	hipErrorNotFound = 500,
	hipErrorIllegalAddress = 700,
	hipErrorLaunchFailure = 719,
	hipErrorCooperativeLaunchTooLarge = 720,
	hipErrorStreamCaptureInvalidated = 901,
};

typedef struct dim3 {
	uint32_t x, y, z;
} dim3;

typedef struct ihipStream_t *hipStream_t;
typedef struct ihipEvent_t *hipEvent_t;
typedef struct ihipModule_t *hipModule_t;
typedef struct ihipModuleSymbol_t *hipFunction_t;
typedef struct ihipGraph *hipGraph_t;
typedef struct hipGraphExec *hipGraphExec_t;
typedef struct hipGraphNode *hipGraphNode_t;

#define HIP_LAUNCH_PARAM_BUFFER_POINTER ((void *)0x01)
#define HIP_LAUNCH_PARAM_BUFFER_SIZE ((void *)0x02)
#define HIP_LAUNCH_PARAM_END ((void *)0x03)

enum { hipMemcpyHostToHost = 0, hipMemcpyHostToDevice = 1, hipMemcpyDeviceToHost = 2, hipMemcpyDeviceToDevice = 3,
       hipMemcpyDefault = 4 };
enum { hipStreamCaptureModeGlobal = 0, hipStreamCaptureModeThreadLocal = 1, hipStreamCaptureModeRelaxed = 2 };
enum { hipStreamCaptureStatusNone = 0, hipStreamCaptureStatusActive = 1, hipStreamCaptureStatusInvalidated = 2 };
enum { hipDeviceAttributeClockRate = 5, hipDeviceAttributeMultiprocessorCount = 63, hipDeviceAttributeWarpSize = 87 };
#define hipStreamNonBlocking 0x01

/* hipDeviceProp_t of HIP 5.x (792 bytes), the layout the unversioned
 * hipGetDeviceProperties export keeps in ROCm 6 too (R0000). */
typedef struct hipDeviceProp_t {
	char name[256];
	size_t totalGlobalMem, sharedMemPerBlock;
	int regsPerBlock, warpSize, maxThreadsPerBlock, maxThreadsDim[3], maxGridSize[3];
	int clockRate, memoryClockRate, memoryBusWidth;
	size_t totalConstMem;
	int major, minor, multiProcessorCount, l2CacheSize, maxThreadsPerMultiProcessor, computeMode;
	int clockInstructionRate;
	uint32_t arch; /* hipDeviceArch_t: 32 feature bits */
	int concurrentKernels, pciDomainID, pciBusID, pciDeviceID;
	size_t maxSharedMemoryPerMultiProcessor;
	int isMultiGpuBoard, canMapHostMemory, gcnArch;
	char gcnArchName[256];
	char rest[792 - 652]; /* fields the fake does not fill */
} hipDeviceProp_t;

/* ROCm 6's hipDeviceProp_t (hipGetDevicePropertiesR0600). Runs of fields
 * the fake never sets are grouped into arrays of the same size; test_hip_props
 * holds the offsets of every field Triton reads against ROCm 7.1's header. */
typedef struct hipDeviceProp_tR0600 {
	char name[256];
	char uuid[16], luid[8];
	unsigned luidDeviceNodeMask;
	size_t totalGlobalMem, sharedMemPerBlock;
	int regsPerBlock, warpSize;
	size_t memPitch;
	int maxThreadsPerBlock, maxThreadsDim[3], maxGridSize[3], clockRate;
	size_t totalConstMem;
	int major, minor;
	size_t textureAlignment, texturePitchAlignment;
	int deviceOverlap, multiProcessorCount, kernelExecTimeoutEnabled, integrated, canMapHostMemory, computeMode;
	int textureSurfaceLimits[40]; /* maxTexture1D to maxSurfaceCubemapLayered[2] */
	size_t surfaceAlignment;
	int concurrentKernels, ECCEnabled, pciBusID, pciDeviceID, pciDomainID, tccDriver, asyncEngineCount;
	int unifiedAddressing, memoryClockRate, memoryBusWidth, l2CacheSize, persistingL2CacheMaxSize;
	int maxThreadsPerMultiProcessor, streamPrioritiesSupported, globalL1CacheSupported, localL1CacheSupported;
	size_t sharedMemPerMultiprocessor;
	int regsPerMultiprocessor, managedMemory, isMultiGpuBoard, multiGpuBoardGroupID;
	int more_flags[6];            /* hostNativeAtomicSupported to canUseHostPointerForRegisteredMem */
	int cooperativeLaunch, cooperativeMultiDeviceLaunch;
	size_t sharedMemPerBlockOptin;
	int more_limits[4];           /* pageableMemoryAccessUsesHostPageTables to accessPolicyMaxWindowSize */
	size_t reservedSharedMemPerBlock;
	int more_support[13];         /* hostRegisterSupported to unifiedFunctionPointers */
	int reserved[63], hipReserved[32];
	char gcnArchName[256];
	size_t maxSharedMemoryPerMultiProcessor;
	int clockInstructionRate;
	uint32_t arch;
	unsigned *hdpMemFlushCntl, *hdpRegFlushCntl;
	int cooperativeMultiDevice[4]; /* the Unmatched* fields */
	int isLargeBar, asicRevision;
} hipDeviceProp_tR0600;

/* hipLaunchAttribute (ROCm 7.1: an id, padding to 8 bytes, a 64-byte
 * value); the ids ROCm 7.1 names, and 4, the cluster dimension Triton's
 * launcher sets (CUDA's number, not in ROCm 7.1's enum). */
enum { hipLaunchAttributeAccessPolicyWindow = 1, hipLaunchAttributeCooperative = 2,
       hipLaunchAttributeSynchronizationPolicy = 3, hipLaunchAttributeClusterDimensionTriton = 4,
       hipLaunchAttributePriority = 8, hipLaunchAttributeMemSyncDomainMap = 9, hipLaunchAttributeMemSyncDomain = 10 };
typedef struct hipLaunchAttribute {
	int id;
	char pad[4];
	union {
		char pad[64];
		int cooperative;
		int priority;
	} val;
} hipLaunchAttribute;

/* HIP_LAUNCH_CONFIG */
typedef struct hipLaunchConfig {
	unsigned gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
	hipStream_t hStream;
	hipLaunchAttribute *attrs;
	unsigned numAttrs;
} hipLaunchConfig;

enum { hipFuncAttributeMaxThreadsPerBlock = 0, hipFuncAttributeLocalSizeBytes = 3, hipFuncAttributeNumRegs = 4 };
enum { hipPointerAttributeDevicePointer = 3 };

typedef struct hipKernelNodeParams {
	dim3 blockDim;
	void **extra;
	void *func;
	dim3 gridDim;
	void **kernelParams;
	unsigned int sharedMemBytes;
} hipKernelNodeParams;

hipError_t hipInit(unsigned flags);
hipError_t hipGetDeviceCount(int *n);
hipError_t hipSetDevice(int d);
hipError_t hipGetDevice(int *d);
hipError_t hipGetDeviceProperties(hipDeviceProp_t *p, int d);
hipError_t hipDeviceGetAttribute(int *v, int attr, int d);
const char *hipGetErrorString(hipError_t e);
hipError_t hipGetLastError(void);
hipError_t hipMalloc(void **p, size_t n);
hipError_t hipFree(void *p);
hipError_t hipMemcpy(void *dst, const void *src, size_t n, int kind);
hipError_t hipMemcpyAsync(void *dst, const void *src, size_t n, int kind, hipStream_t s);
hipError_t hipMemsetAsync(void *dst, int v, size_t n, hipStream_t s);
hipError_t hipDeviceSynchronize(void);
hipError_t hipStreamCreate(hipStream_t *s);
hipError_t hipStreamCreateWithFlags(hipStream_t *s, unsigned flags);
hipError_t hipStreamDestroy(hipStream_t s);
hipError_t hipStreamSynchronize(hipStream_t s);
hipError_t hipStreamWaitEvent(hipStream_t s, hipEvent_t e, unsigned flags);
hipError_t hipEventCreate(hipEvent_t *e);
hipError_t hipEventCreateWithFlags(hipEvent_t *e, unsigned flags);
hipError_t hipEventDestroy(hipEvent_t e);
hipError_t hipEventRecord(hipEvent_t e, hipStream_t s);
hipError_t hipEventSynchronize(hipEvent_t e);
hipError_t hipEventQuery(hipEvent_t e);
hipError_t hipEventElapsedTime(float *ms, hipEvent_t a, hipEvent_t b);
hipError_t hipModuleLoadData(hipModule_t *m, const void *image);
hipError_t hipModuleLoadDataEx(hipModule_t *m, const void *image, unsigned n, int *opts, void **vals);
hipError_t hipModuleUnload(hipModule_t m);
hipError_t hipModuleGetFunction(hipFunction_t *f, hipModule_t m, const char *name);
hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
				 unsigned bz, unsigned smem, hipStream_t s, void **params, void **extra);
/* HIP 5.2 exports this one under its C++ name only. */
hipError_t hipExtModuleLaunchKernel(hipFunction_t f, uint32_t wx, uint32_t wy, uint32_t wz, uint32_t lx, uint32_t ly,
				    uint32_t lz, size_t smem, hipStream_t s, void **params, void **extra,
				    hipEvent_t start, hipEvent_t stop, uint32_t flags)
	__asm__("_Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j");
hipError_t hipLaunchKernel(const void *f, dim3 grid, dim3 block, void **args, size_t smem, hipStream_t s);
hipError_t hipExtLaunchKernel(const void *f, dim3 grid, dim3 block, void **args, size_t smem, hipStream_t s,
			      hipEvent_t start, hipEvent_t stop, int flags);
hipError_t hipLaunchCooperativeKernel(const void *f, dim3 grid, dim3 block, void **args, unsigned smem,
				      hipStream_t s);
hipError_t hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(int *n, hipFunction_t f, int threads, size_t smem);
hipError_t hipStreamBeginCapture(hipStream_t s, int mode);
hipError_t hipStreamEndCapture(hipStream_t s, hipGraph_t *g);
hipError_t hipStreamIsCapturing(hipStream_t s, int *status);
hipError_t hipGraphCreate(hipGraph_t *g, unsigned flags);
hipError_t hipGraphAddKernelNode(hipGraphNode_t *node, hipGraph_t g, const hipGraphNode_t *deps, size_t n,
				 const hipKernelNodeParams *p);
hipError_t hipGraphInstantiate(hipGraphExec_t *e, hipGraph_t g, hipGraphNode_t *err, char *log, size_t len);
hipError_t hipGraphLaunch(hipGraphExec_t e, hipStream_t s);
hipError_t hipGraphExecDestroy(hipGraphExec_t e);
hipError_t hipGraphDestroy(hipGraph_t g);
/* ROCm 6/7 only (the .so.7 build, fake_hip_rocm.c). */
hipError_t hipDriverGetVersion(int *v);
hipError_t hipRuntimeGetVersion(int *v);
hipError_t hipGetProcAddress(const char *symbol, void **pfn, int version, uint64_t flags, int *status);
hipError_t hipGetDevicePropertiesR0600(hipDeviceProp_tR0600 *p, int d);
hipError_t hipModuleLaunchCooperativeKernel(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
					    unsigned by, unsigned bz, unsigned smem, hipStream_t s, void **params);
hipError_t hipDrvLaunchKernelEx(const hipLaunchConfig *c, hipFunction_t f, void **params, void **extra);
hipError_t hipFuncGetAttribute(int *v, int attr, hipFunction_t f);
hipError_t hipPointerGetAttribute(void *data, int attr, void *ptr);
/* What clang's host code calls (registration, <<<>>>). */
void **__hipRegisterFatBinary(const void *wrapper);
void __hipUnregisterFatBinary(void **handle);
void __hipRegisterFunction(void **handle, const void *host, char *device, const char *name, unsigned limit,
			   void *tid, void *bid, dim3 *block, dim3 *grid, int *wsize);
hipError_t __hipPushCallConfiguration(dim3 grid, dim3 block, size_t smem, hipStream_t s);
hipError_t __hipPopCallConfiguration(dim3 *grid, dim3 *block, size_t *smem, hipStream_t *s);

#endif
