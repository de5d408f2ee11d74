/* HIP graphs, listed: kernels added as explicit nodes get a `graph` line,
 * every replay of an executable a `graph ... launches=N` line. Nothing in a
 * graph is probed or timed on HIP (launches captured into one are declined
 * with the reason, hook_hip_probe.c). */
#include "hook/hook_dispatch.h"
#include "hook/hook_events.h"
#include "hook/hip/hook_hip.h"
#include "trace/events.h"

hipError_t hook_hip_hipGraphAddKernelNode(hipGraphNode_t *node, hipGraph_t g, const hipGraphNode_t *deps, size_t n,
					  const hip_kernel_node_params *p)
{
	hipError_t rc = HIP_REAL(hipGraphAddKernelNode)(node, g, deps, n, p);
	struct hook_kernel *k = rc == HIP_SUCCESS && p ? hook_hip_reg_find(p->func) : NULL;
	if (!k || !hook_events_on())
		return rc;
	const unsigned grid[3] = { p->gridDim.x, p->gridDim.y, p->gridDim.z };
	const unsigned block[3] = { p->blockDim.x, p->blockDim.y, p->blockDim.z };
	struct strbuf sb;
	hook_event_begin(&sb, "graph");
	event_add_int(&sb, "kid", k->kid);
	event_add(&sb, "api", "hipGraphAddKernelNode");
	event_add_dim3(&sb, "grid", grid);
	event_add_dim3(&sb, "block", block);
	hook_event_emit(&sb);
	return rc;
}

hipError_t hook_hip_hipGraphLaunch(hipGraphExec_t e, hipStream_t s)
{
	hipError_t rc = HIP_REAL(hipGraphLaunch)(e, s);
	if (rc != HIP_SUCCESS || !hook_events_on())
		return rc;
	if (!hook.atexit_done)
		hook_dispatch_register_exit();
	pthread_mutex_lock(&hook.reg.lock);
	uintptr_t n = (uintptr_t)ptrmap_get(&hook.reg.graphs, e) + 1;
	ptrmap_put(&hook.reg.graphs, e, (void *)n);
	pthread_mutex_unlock(&hook.reg.lock);
	__atomic_add_fetch(&hook.launches, 1, __ATOMIC_RELAXED);
	struct strbuf sb;
	hook_event_begin(&sb, "graph");
	event_add(&sb, "api", "hipGraphLaunch");
	event_add_hex(&sb, "exec", (unsigned long long)(uintptr_t)e);
	event_add_int(&sb, "launches", (long long)n);
	hook_event_emit(&sb);
	return rc;
}
