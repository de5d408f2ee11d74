/* Our declarations' offsets: R0600 (hip_props_offsets.h), HIP 5's
 * hipDeviceProp_t (size, clockRate, multiProcessorCount, gcnArchName),
 * the launch attribute and config the test double reads. */
#include "hip_mini_api.h"
#include "hip_props_offsets.h"

void hip_props_fake(struct hip_props_offsets *o)
{
	o->size = sizeof(hipDeviceProp_tR0600);
#define HIP_PROPS_AT(f) o->f = offsetof(hipDeviceProp_tR0600, f);
	HIP_PROPS_FIELDS(HIP_PROPS_AT)
#undef HIP_PROPS_AT
}

size_t hip_props5_offset(int field)
{
	const size_t at[] = { sizeof(hipDeviceProp_t), offsetof(hipDeviceProp_t, clockRate),
			      offsetof(hipDeviceProp_t, multiProcessorCount), offsetof(hipDeviceProp_t, gcnArchName) };
	return at[field];
}

const char *const hip_launch_what[HIP_LAUNCH_N] = {
	"hipLaunchAttribute size", "hipLaunchAttribute val", "HIP_LAUNCH_CONFIG size", "HIP_LAUNCH_CONFIG attrs",
	"HIP_LAUNCH_CONFIG numAttrs", "hipLaunchAttributeCooperative", "hipLaunchAttributePriority",
	"hipLaunchAttributeMemSyncDomain",
};

void hip_launch_fake(size_t v[HIP_LAUNCH_N])
{
	HIP_LAUNCH_AT(hipLaunchAttribute, hipLaunchConfig, v);
}
