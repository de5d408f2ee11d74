/* HIP launch entry points. Every launch is counted; a `launch` line is
 * emitted for a kernel's first launch, a changed configuration and every
 * probed launch; matching kernels take the probe path (hook_hip_probe.c).
 * Launches are not timed on HIP yet (no `time` lines). */
#include <string.h>
#include "hook/hook_dispatch.h"
#include "hook/hook_events.h"
#include "hook/hip/hook_hip.h"
#include "hook/hook_kernel_events.h"
#include "trace/events.h"

hipError_t hook_hip_forward(const struct hip_launch *l)
{
	hip_dim3 g = { l->grid[0], l->grid[1], l->grid[2] }, b = { l->block[0], l->block[1], l->block[2] };
	hipFunction_t f = (hipFunction_t)l->key;
	switch (l->row) {
	case HIP_ROW_hipLaunchKernel:
		return HIP_REAL(hipLaunchKernel)(l->key, g, b, l->params, l->smem, l->stream);
	case HIP_ROW_hipLaunchKernel_spt:
		return HIP_REAL(hipLaunchKernel_spt)(l->key, g, b, l->params, l->smem, l->stream);
	case HIP_ROW_hipExtLaunchKernel:
		return HIP_REAL(hipExtLaunchKernel)(l->key, g, b, l->params, l->smem, l->stream, l->ev_start, l->ev_stop,
						    (int)l->flags);
	case HIP_ROW_hipLaunchCooperativeKernel:
		return HIP_REAL(hipLaunchCooperativeKernel)(l->key, g, b, l->params, (unsigned)l->smem, l->stream);
	case HIP_ROW_hipLaunchCooperativeKernel_spt:
		return HIP_REAL(hipLaunchCooperativeKernel_spt)(l->key, g, b, l->params, (unsigned)l->smem, l->stream);
	case HIP_ROW_hipModuleLaunchCooperativeKernel:
		return HIP_REAL(hipModuleLaunchCooperativeKernel)(f, g.x, g.y, g.z, b.x, b.y, b.z, (unsigned)l->smem,
								  l->stream, l->params);
	case HIP_ROW_hipDrvLaunchKernelEx:
		return HIP_REAL(hipDrvLaunchKernelEx)(l->config, f, l->params, l->extra);
	case HIP_ROW_hipExtModuleLaunchKernel:
		return HIP_REAL(hipExtModuleLaunchKernel)(f, l->wsize[0], l->wsize[1], l->wsize[2], b.x, b.y, b.z, l->smem,
							  l->stream, l->params, l->extra, l->ev_start, l->ev_stop,
							  l->flags);
	case HIP_ROW_hipHccModuleLaunchKernel:
		return HIP_REAL(hipHccModuleLaunchKernel)(f, l->wsize[0], l->wsize[1], l->wsize[2], b.x, b.y, b.z, l->smem,
							  l->stream, l->params, l->extra, l->ev_start, l->ev_stop);
	default:
		return HIP_REAL(hipModuleLaunchKernel)(f, g.x, g.y, g.z, b.x, b.y, b.z, (unsigned)l->smem, l->stream,
						       l->params, l->extra);
	}
}

/* Workgroups per launch of a module function (occupancy); 0 when HIP
 * cannot say (host functions are not asked). */
static int launch_occupancy(const struct hip_launch *l)
{
	int occ = 0;
	int module = l->row == HIP_ROW_hipModuleLaunchKernel || l->row == HIP_ROW_hipExtModuleLaunchKernel ||
		     l->row == HIP_ROW_hipHccModuleLaunchKernel || l->row == HIP_ROW_hipModuleLaunchCooperativeKernel ||
		     l->row == HIP_ROW_hipDrvLaunchKernelEx;
	int threads = (int)(l->block[0] * l->block[1] * l->block[2]);
	if (!module || !hipr.hipModuleOccupancyMaxActiveBlocksPerMultiprocessor ||
	    hipr.hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(&occ, (hipFunction_t)l->key, threads, l->smem) !=
		    HIP_SUCCESS)
		occ = 0;
	return occ;
}

static int launch_capturing(hipStream_t s)
{
	int st = HIP_CAPTURE_STATUS_NONE;
	return hipr.hipStreamIsCapturing && hipr.hipStreamIsCapturing(s, &st) == HIP_SUCCESS &&
	       st != HIP_CAPTURE_STATUS_NONE;
}

void hook_hip_emit_launch(struct hook_kernel *k, const struct hip_launch *l, int probed)
{
	if (!hook_events_on())
		return;
	struct hook_launch_line line = { .seq = l->seq, .api = l->api, .grid = l->grid, .block = l->block,
					 .smem = l->smem, .stream = l->stream,
					 .capturing = !probed && launch_capturing(l->ostream), .probed = probed,
					 .occ = launch_occupancy(l), .dev = -1 };
	hook_launch_line(k, &line);
}

hipError_t hook_hip_launch(struct hip_launch *l)
{
	struct hook_kernel *k = hook_hip_reg_find(l->key);
	l->seq = __atomic_add_fetch(&hook.seq, 1, __ATOMIC_RELAXED);
	if (!k) {
		__atomic_add_fetch(&hook.launches, 1, __ATOMIC_RELAXED);
		return hook_hip_forward(l);
	}
	__atomic_add_fetch(&k->launches, 1, __ATOMIC_RELAXED);
	if (!hook.atexit_done)
		hook_dispatch_register_exit();
	if (!hook_events_on())
		return hook_hip_forward(l);
	hook_control_ensure_thread();
	hipError_t rc;
	struct hook_probe_pick pick;
	if (hook_probe_wanted(k, &pick) && hook_hip_probe_launch(l, k, &pick, &rc))
		return rc;
	if (hook_launch_cfg_changed(k, l->grid, l->block, (unsigned)l->smem, -1, l->api))
		hook_hip_emit_launch(k, l, 0);
	return hook_hip_forward(l);
}

static hipError_t launch_host(enum hip_row_id row, int spt, const void *f, hip_dim3 g, hip_dim3 b, void **args,
			      size_t smem, hipStream_t s, int coop)
{
	struct hip_launch l = { .row = row, .api = hip_table[row].name, .key = f, .grid = { g.x, g.y, g.z },
				.block = { b.x, b.y, b.z }, .smem = smem, .stream = s, .ostream = s, .params = args,
				.cooperative = coop };
	if (spt && !s)
		l.ostream = HIP_STREAM_PER_THREAD;
	return hook_hip_launch(&l);
}

hipError_t hook_hip_hipLaunchKernel(const void *f, hip_dim3 grid, hip_dim3 block, void **args, size_t smem,
				    hipStream_t s)
{
	return launch_host(HIP_ROW_hipLaunchKernel, 0, f, grid, block, args, smem, s, 0);
}

hipError_t hook_hip_hipLaunchKernel_spt(const void *f, hip_dim3 grid, hip_dim3 block, void **args, size_t smem,
					hipStream_t s)
{
	return launch_host(HIP_ROW_hipLaunchKernel_spt, 1, f, grid, block, args, smem, s, 0);
}

hipError_t hook_hip_hipLaunchCooperativeKernel(const void *f, hip_dim3 grid, hip_dim3 block, void **args,
					       unsigned smem, hipStream_t s)
{
	return launch_host(HIP_ROW_hipLaunchCooperativeKernel, 0, f, grid, block, args, smem, s, 1);
}

hipError_t hook_hip_hipLaunchCooperativeKernel_spt(const void *f, hip_dim3 grid, hip_dim3 block, void **args,
						   unsigned smem, hipStream_t s)
{
	return launch_host(HIP_ROW_hipLaunchCooperativeKernel_spt, 1, f, grid, block, args, smem, s, 1);
}

hipError_t hook_hip_hipExtLaunchKernel(const void *f, hip_dim3 g, hip_dim3 b, void **args, size_t smem,
				       hipStream_t s, hipEvent_t start, hipEvent_t stop, int flags)
{
	struct hip_launch l = { .row = HIP_ROW_hipExtLaunchKernel, .api = "hipExtLaunchKernel", .key = f,
				.grid = { g.x, g.y, g.z }, .block = { b.x, b.y, b.z }, .smem = smem, .stream = s,
				.ostream = s, .params = args, .ev_start = start, .ev_stop = stop,
				.flags = (uint32_t)flags };
	return hook_hip_launch(&l);
}

hipError_t hook_hip_hipModuleLaunchKernel(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
					  unsigned by, unsigned bz, unsigned smem, hipStream_t s, void **params,
					  void **extra)
{
	struct hip_launch l = { .row = HIP_ROW_hipModuleLaunchKernel, .api = "hipModuleLaunchKernel", .key = f,
				.grid = { gx, gy, gz }, .block = { bx, by, bz }, .smem = smem, .stream = s,
				.ostream = s, .params = params, .extra = extra };
	return hook_hip_launch(&l);
}

hipError_t hook_hip_hipModuleLaunchCooperativeKernel(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz,
						     unsigned bx, unsigned by, unsigned bz, unsigned smem, hipStream_t s,
						     void **params)
{
	struct hip_launch l = { .row = HIP_ROW_hipModuleLaunchCooperativeKernel,
				.api = "hipModuleLaunchCooperativeKernel", .key = f, .grid = { gx, gy, gz },
				.block = { bx, by, bz }, .smem = smem, .stream = s, .ostream = s, .params = params,
				.cooperative = 1 };
	return hook_hip_launch(&l);
}

hipError_t hook_hip_hipDrvLaunchKernelEx(const hip_launch_config *c, hipFunction_t f, void **params, void **extra)
{
	if (!c)
		return HIP_REAL(hipDrvLaunchKernelEx)(c, f, params, extra);
	struct hip_launch l = { .row = HIP_ROW_hipDrvLaunchKernelEx, .api = "hipDrvLaunchKernelEx", .key = f,
				.grid = { c->grid_x, c->grid_y, c->grid_z },
				.block = { c->block_x, c->block_y, c->block_z }, .smem = c->smem, .stream = c->stream,
				.ostream = c->stream, .params = params, .extra = extra, .config = c };
	return hook_hip_launch(&l);
}

/* Global work sizes in work-items: the grid is the workgroups covering them. */
static hipError_t launch_ext_module(enum hip_row_id row, const char *api, hipFunction_t f, const uint32_t w[3],
				    const uint32_t lsz[3], size_t smem, hipStream_t s, void **params, void **extra,
				    hipEvent_t start, hipEvent_t stop, uint32_t flags)
{
	struct hip_launch l = { .row = row, .api = api, .key = f, .block = { lsz[0], lsz[1], lsz[2] }, .smem = smem,
				.stream = s, .ostream = s, .params = params, .extra = extra, .ev_start = start,
				.ev_stop = stop, .wsize = { w[0], w[1], w[2] }, .flags = flags };
	for (int i = 0; i < 3; i++)
		l.grid[i] = lsz[i] ? (w[i] + lsz[i] - 1) / lsz[i] : 0;
	return hook_hip_launch(&l);
}

hipError_t hook_hip_hipExtModuleLaunchKernel(hipFunction_t f, uint32_t wx, uint32_t wy, uint32_t wz, uint32_t lx,
					     uint32_t ly, uint32_t lz, size_t smem, hipStream_t s, void **params,
					     void **extra, hipEvent_t start, hipEvent_t stop, uint32_t flags)
{
	const uint32_t w[3] = { wx, wy, wz }, lsz[3] = { lx, ly, lz };
	return launch_ext_module(HIP_ROW_hipExtModuleLaunchKernel, "hipExtModuleLaunchKernel", f, w, lsz, smem, s,
				 params, extra, start, stop, flags);
}

hipError_t hook_hip_hipHccModuleLaunchKernel(hipFunction_t f, uint32_t wx, uint32_t wy, uint32_t wz, uint32_t lx,
					     uint32_t ly, uint32_t lz, size_t smem, hipStream_t s, void **params,
					     void **extra, hipEvent_t start, hipEvent_t stop)
{
	const uint32_t w[3] = { wx, wy, wz }, lsz[3] = { lx, ly, lz };
	return launch_ext_module(HIP_ROW_hipHccModuleLaunchKernel, "hipHccModuleLaunchKernel", f, w, lsz, smem, s,
				 params, extra, start, stop, 0);
}
