/* hipDrvLaunchKernelEx's launch attributes, for the probe path. The probed
 * copy is launched by hipDrvLaunchKernelEx with the application's own
 * attribute list, so attributes that say how the launch is scheduled or
 * cached (access policy window, synchronization policy, priority, memory
 * sync domains) apply to it unchanged, and the cooperative one asks that
 * the probed copy still be co-resident (hook_hip_coop.c). Any other id is
 * declined: the cluster dimension Triton's launcher sets (4; ROCm 7.1's
 * header names no clusters, and no HIP call says whether the probed
 * copy's clusters still fit) and ids a later ROCm adds, which ntop cannot
 * know the probed copy takes unchanged. */
#include "common/cause.h"
#include "hook/hip/hook_hip.h"

int hook_hip_attrs_check(const hip_launch_config *c, int *cooperative, char **cause)
{
	if (c->n_attrs && !c->attrs)
		return cause_set(cause, "hipDrvLaunchKernelEx with %u launch attributes and no list", c->n_attrs);
	for (unsigned i = 0; i < c->n_attrs; i++) {
		const hip_launch_attr *a = &c->attrs[i];
		switch (a->id) {
		case HIP_ATTR_COOPERATIVE:
			*cooperative = a->val.cooperative != 0;
			break;
		case HIP_ATTR_ACCESS_POLICY_WINDOW:
		case HIP_ATTR_SYNCHRONIZATION_POLICY:
		case HIP_ATTR_PRIORITY:
		case HIP_ATTR_MEM_SYNC_DOMAIN_MAP:
		case HIP_ATTR_MEM_SYNC_DOMAIN:
			break;
		case HIP_ATTR_CLUSTER_DIMENSION:
			return cause_set(cause, "hipDrvLaunchKernelEx launch attribute 4 (cluster dimension): whether the "
					 "probed copy's clusters still fit cannot be checked");
		default:
			return cause_set(cause, "hipDrvLaunchKernelEx launch attribute %d is unknown to ntop: the probed "
					 "copy might not take it unchanged", a->id);
		}
	}
	return 0;
}
