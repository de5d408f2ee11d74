/* ROCm's declarations' offsets (hip_props_offsets.h), read from the ROCm
 * 7.1 headers the triton wheel ships, only at build time. Without them
 * (FAKEHIP_ROCM_HEADERS undefined) there is nothing to compare. */
#include "hip_props_offsets.h"
#ifdef FAKEHIP_ROCM_HEADERS
#define __HIP_PLATFORM_AMD__
#include <hip/hip_runtime_api.h>

int hip_props_rocm(struct hip_props_offsets *o)
{
	o->size = sizeof(hipDeviceProp_tR0600);
#define HIP_PROPS_AT(f) o->f = offsetof(hipDeviceProp_tR0600, f);
	HIP_PROPS_FIELDS(HIP_PROPS_AT)
#undef HIP_PROPS_AT
	return 0;
}

int hip_launch_rocm(size_t v[HIP_LAUNCH_N])
{
	HIP_LAUNCH_AT(hipLaunchAttribute, HIP_LAUNCH_CONFIG, v);
	return 0;
}
#else
int hip_props_rocm(struct hip_props_offsets *o)
{
	(void)o;
	return -1;
}

int hip_launch_rocm(size_t v[HIP_LAUNCH_N])
{
	(void)v;
	return -1;
}
#endif
