/* Our declarations' offsets: R0600 (hip_props_offsets.h) and HIP 5's
 * hipDeviceProp_t (size, clockRate, multiProcessorCount, gcnArchName). */
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
