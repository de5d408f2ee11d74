/* What the ROCm-7-shaped build of the fake (libamdhip64.so.7) adds to the
 * HIP 5.2 one: the version queries (7.1.25424, HIP's major * 10^7 + minor
 * * 10^5 + patch), hipGetProcAddress over the fake's own functions (ROCm
 * 6's hipGetDeviceProperties from version 600 on, as ROCm's header maps
 * the name), ROCm 6's device properties, the cooperative module launch,
 * hipDrvLaunchKernelEx (its attributes taken, the cooperative one checked
 * as a cooperative launch is), and the two queries Triton's launcher makes
 * (hipFuncGetAttribute, hipPointerGetAttribute). */
#include <string.h>
#include "fake_hip.h"

#define FH_VERSION 70125424

hipError_t hipDriverGetVersion(int *v)
{
	if (!v)
		return hipErrorInvalidValue;
	*v = FH_VERSION;
	return hipSuccess;
}

hipError_t hipRuntimeGetVersion(int *v)
{
	return hipDriverGetVersion(v);
}

hipError_t hipGetDevicePropertiesR0600(hipDeviceProp_tR0600 *p, int d)
{
	if (!p || d != 0)
		return hipErrorInvalidValue;
	FH_PROPS_FILL(p);
	p->sharedMemPerBlock = 65536;
	p->regsPerBlock = 65536;
	p->memoryClockRate = 1600000;
	p->memoryBusWidth = 4096;
	p->maxThreadsPerMultiProcessor = 2048;
	p->cooperativeLaunch = 1;
	return hipSuccess;
}

hipError_t hipModuleLaunchCooperativeKernel(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
					    unsigned by, unsigned bz, unsigned smem, hipStream_t s, void **params)
{
	unsigned grid[3] = { gx, gy, gz }, block[3] = { bx, by, bz };
	const struct fh_how how = { "hipModuleLaunchCooperativeKernel", 1, NULL, 0 };
	return fh_launch(f, grid, block, smem, s, params, NULL, &how);
}

hipError_t hipDrvLaunchKernelEx(const hipLaunchConfig *c, hipFunction_t f, void **params, void **extra)
{
	if (!c || (c->numAttrs && !c->attrs))
		return hipErrorInvalidValue;
	unsigned grid[3] = { c->gridDimX, c->gridDimY, c->gridDimZ };
	unsigned block[3] = { c->blockDimX, c->blockDimY, c->blockDimZ };
	struct fh_how how = { "hipDrvLaunchKernelEx", 0, c->attrs, c->numAttrs };
	/* every attribute taken (a later runtime's ones too); cooperative checked */
	for (unsigned i = 0; i < c->numAttrs; i++)
		if (c->attrs[i].id == hipLaunchAttributeCooperative)
			how.cooperative = c->attrs[i].val.cooperative != 0;
	return fh_launch(f, grid, block, c->sharedMemBytes, c->hStream, params, extra, &how);
}

hipError_t hipFuncGetAttribute(int *v, int attr, hipFunction_t f)
{
	if (!v || !f)
		return hipErrorInvalidValue;
	*v = attr == hipFuncAttributeMaxThreadsPerBlock ? 1024 : attr == hipFuncAttributeNumRegs ? 32 : 0;
	return hipSuccess;
}

/* Device memory is host memory: a pointer is its own device pointer. */
hipError_t hipPointerGetAttribute(void *data, int attr, void *ptr)
{
	if (!data || attr != hipPointerAttributeDevicePointer)
		return hipErrorInvalidValue;
	memcpy(data, &ptr, sizeof ptr);
	return hipSuccess;
}

#define FH_PROC(name) { #name, (void *)name },
static const struct {
	const char *name;
	void *fn;
} procs[] = {
	FH_PROC(hipDriverGetVersion) FH_PROC(hipRuntimeGetVersion) FH_PROC(hipGetDevicePropertiesR0600)
	FH_PROC(hipGetDeviceCount) FH_PROC(hipGetDevice) FH_PROC(hipSetDevice) FH_PROC(hipGetLastError)
	FH_PROC(hipGetErrorString) FH_PROC(hipMalloc) FH_PROC(hipFree) FH_PROC(hipMemcpy)
	FH_PROC(hipDeviceSynchronize) FH_PROC(hipModuleLoadData) FH_PROC(hipModuleLoadDataEx)
	FH_PROC(hipModuleUnload) FH_PROC(hipModuleGetFunction) FH_PROC(hipModuleLaunchKernel)
	FH_PROC(hipModuleLaunchCooperativeKernel) FH_PROC(hipDrvLaunchKernelEx) FH_PROC(hipFuncGetAttribute)
	FH_PROC(hipPointerGetAttribute) FH_PROC(hipStreamCreate) FH_PROC(hipStreamSynchronize)
};

/* symbolStatus: 0 found, 1 not found, 2 the version is too old for it. */
hipError_t hipGetProcAddress(const char *symbol, void **pfn, int version, uint64_t flags, int *status)
{
	if (!symbol || !pfn || flags)
		return hipErrorInvalidValue;
	*pfn = NULL;
	const char *want = symbol;
	if (strcmp(symbol, "hipGetDeviceProperties") == 0)
		want = version >= 600 ? "hipGetDevicePropertiesR0600" : NULL;
	for (size_t i = 0; want && i < sizeof procs / sizeof procs[0]; i++)
		if (strcmp(procs[i].name, want) == 0)
			*pfn = procs[i].fn;
	if (!*pfn && want == NULL)
		*pfn = (void *)hipGetDeviceProperties; /* HIP 5's layout below 600 */
	if (status)
		*status = *pfn ? 0 : 1;
	return *pfn ? hipSuccess : hipErrorNotFound;
}
