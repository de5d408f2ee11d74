/* The device-property layouts the HIP hook reads by offset
 * (src/hook/hip/hook_hip_api.h): ROCm 6's R0600 against our own declaration
 * (hip_mini_api.h, what the test double fills), every field Triton's
 * launcher reads against ROCm 7.1's header where the triton wheel ships
 * it (else said, and the constants are held against ours only), and HIP
 * 5's R0000 against ours; hipDrvLaunchKernelEx's attribute and config
 * layouts and the attribute ids the hook tells apart, alike. */
#include <stdio.h>
#include "hip_props_offsets.h"
#include "hook/hip/hook_hip_api.h"

static int fails;

static void same(const char *what, size_t got, size_t want)
{
	if (got != want) {
		printf("FAIL: %s: %zu, expected %zu\n", what, got, want);
		fails++;
	}
}

int main(void)
{
	struct hip_props_offsets ours, rocm;
	hip_props_fake(&ours);
	same("R0600 size", ours.size, HIP_PROPS6_SIZE);
	same("R0600 name", ours.name, HIP_PROPS_NAME);
	same("R0600 clockRate", ours.clockRate, HIP_PROPS6_CLOCK_KHZ);
	same("R0600 multiProcessorCount", ours.multiProcessorCount, HIP_PROPS6_CUS);
	same("R0600 gcnArchName", ours.gcnArchName, HIP_PROPS6_ARCH_NAME);
	if (hip_props_rocm(&rocm) == 0) {
		same("ROCm R0600 size", ours.size, rocm.size);
#define HIP_PROPS_SAME(f) same("ROCm R0600 " #f, ours.f, rocm.f);
		HIP_PROPS_FIELDS(HIP_PROPS_SAME)
#undef HIP_PROPS_SAME
		printf("held against ROCm 7.1's hipDeviceProp_tR0600\n");
	} else {
		printf("note: no ROCm headers at build time: R0600 held against our declaration only\n");
	}
	same("R0000 size", hip_props5_offset(0), HIP_PROPS_SIZE);
	same("R0000 clockRate", hip_props5_offset(1), HIP_PROPS_CLOCK_KHZ);
	same("R0000 multiProcessorCount", hip_props5_offset(2), HIP_PROPS_CUS);
	same("R0000 gcnArchName", hip_props5_offset(3), HIP_PROPS_ARCH_NAME);
	size_t hook[HIP_LAUNCH_N] = { sizeof(hip_launch_attr), offsetof(hip_launch_attr, val),
				      sizeof(hip_launch_config), offsetof(hip_launch_config, attrs),
				      offsetof(hip_launch_config, n_attrs), HIP_ATTR_COOPERATIVE, HIP_ATTR_PRIORITY,
				      HIP_ATTR_MEM_SYNC_DOMAIN },
	       fake[HIP_LAUNCH_N], rocm_launch[HIP_LAUNCH_N];
	hip_launch_fake(fake);
	int have_rocm = hip_launch_rocm(rocm_launch) == 0;
	for (int i = 0; i < HIP_LAUNCH_N; i++) {
		same(hip_launch_what[i], hook[i], fake[i]);
		if (have_rocm)
			same(hip_launch_what[i], hook[i], rocm_launch[i]);
	}
	printf("%s\n", fails ? "FAILED" : "ok");
	return fails != 0;
}
