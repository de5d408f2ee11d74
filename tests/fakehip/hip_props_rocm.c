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
	const size_t at[HIP_LAUNCH_N] = { sizeof(hipLaunchAttribute), offsetof(hipLaunchAttribute, val),
					  sizeof(HIP_LAUNCH_CONFIG), offsetof(HIP_LAUNCH_CONFIG, attrs),
					  offsetof(HIP_LAUNCH_CONFIG, numAttrs), hipLaunchAttributeCooperative,
					  hipLaunchAttributePriority, hipLaunchAttributeMemSyncDomain };
	for (int i = 0; i < HIP_LAUNCH_N; i++)
		v[i] = at[i];
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
