/* Where the fields of ROCm 6's hipDeviceProp_t (R0600) that the HIP hook
 * and Triton's launcher read lie, as one declaration places them: ours
 * (hip_mini_api.h, hip_props_fake.c) or ROCm's (hip_props_rocm.c, built
 * only where the triton wheel's ROCm 7.1 headers were found). */
#ifndef FAKEHIP_HIP_PROPS_OFFSETS_H
#define FAKEHIP_HIP_PROPS_OFFSETS_H
#include <stddef.h>

#define HIP_PROPS_FIELDS(X) \
	X(name) X(sharedMemPerBlock) X(regsPerBlock) X(warpSize) X(clockRate) X(multiProcessorCount) \
	X(memoryClockRate) X(memoryBusWidth) X(maxThreadsPerMultiProcessor) X(cooperativeLaunch) X(gcnArchName)

struct hip_props_offsets {
	size_t size;
#define HIP_PROPS_FIELD(f) size_t f;
	HIP_PROPS_FIELDS(HIP_PROPS_FIELD)
#undef HIP_PROPS_FIELD
};

void hip_props_fake(struct hip_props_offsets *o);
/* 0 and the offsets; -1 when built without ROCm's headers. */
int hip_props_rocm(struct hip_props_offsets *o);
/* hipDrvLaunchKernelEx's layouts and attribute ids, as the hook reads
 * them: HIP_LAUNCH_N values, named by hip_launch_what[]. */
#define HIP_LAUNCH_N 8
#define HIP_LAUNCH_AT(attr_t, config_t, v) \
	do { \
		const size_t at_[HIP_LAUNCH_N] = { sizeof(attr_t), offsetof(attr_t, val), sizeof(config_t), \
						   offsetof(config_t, attrs), offsetof(config_t, numAttrs), \
						   hipLaunchAttributeCooperative, hipLaunchAttributePriority, \
						   hipLaunchAttributeMemSyncDomain }; \
		for (int i_ = 0; i_ < HIP_LAUNCH_N; i_++) \
			(v)[i_] = at_[i_]; \
	} while (0)
extern const char *const hip_launch_what[HIP_LAUNCH_N];
void hip_launch_fake(size_t v[HIP_LAUNCH_N]);
/* 0 and ROCm's; -1 when built without ROCm's headers. */
int hip_launch_rocm(size_t v[HIP_LAUNCH_N]);
/* HIP 5's hipDeviceProp_t: 0 size, 1 clockRate, 2 multiProcessorCount,
 * 3 gcnArchName. */
size_t hip_props5_offset(int field);

#endif
