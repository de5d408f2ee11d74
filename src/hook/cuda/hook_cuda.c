/* The CUDA backend (hook_backend.h): opening the driver, cuInit, device
 * facts, capture mode helpers, and process exit / fork handling. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine/probe/probe.h"
#include "hook/hook_backend.h"
#include "hook/cuda/hook_cuda.h"
#include "hook/cuda/hook_cuda_api.h"
#include "hook/hook_dispatch.h"
#include "hook/cuda/hook_driver.h"
#include "hook/hook_events.h"
#include "hook/hook_log.h"
#include "trace/events.h"

static int cuda_init(char **cause)
{
	if (hook_driver_open(cause) < 0)
		return -1;
	hook_cuda_api_load();
	return 0;
}

static void cuda_exit_event(void)
{
	uint64_t launches = __atomic_load_n(&hook.launches, __ATOMIC_RELAXED);
	uint32_t n = 0;
	struct hook_kernel **all = hook_registry_kernels(&n);
	for (uint32_t i = 0; all && i < n; i++)
		launches += __atomic_load_n(&all[i]->launches, __ATOMIC_RELAXED);
	free(all);
	struct strbuf sb;
	hook_event_begin(&sb, "exit");
	event_add_int(&sb, "launches", (long long)launches);
	hook_event_emit(&sb);
}

static void cuda_shutdown(void)
{
	hook_builder_shutdown();
	hook_control_shutdown();
	hook_stager_shutdown();
	hook_results_shutdown();
	hook_timing_shutdown();
	hook_timing_stats(1);
	hook_self_lines();
	cuda_exit_event();
}

static void cuda_fork_child(void)
{
	hook_registry_fork_child();
	hook_builder_fork_child();
	hook_timing_fork_child();
	hook_stage_fork_child();
	hook_results_fork_child();
	hook_control_fork_child();
}

static const char *cuda_driver_path(void)
{
	return hook.driver ? hook.real_path : NULL;
}

static const struct hook_backend hook_cuda_backend = {
	.name = "cuda",
	.what = "CUDA driver",
	.init = cuda_init,
	.fill = hook_dispatch_fill,
	.shutdown = cuda_shutdown,
	.fork_child = cuda_fork_child,
	.driver_path = cuda_driver_path,
	.kernel_source = hook_cuda_kernel_source,
	.picked = hook_cuda_picked,
};

const struct hook_backend *const hook_backend_in_use = &hook_cuda_backend;

static int cuda_attr(CUdevice dev, CUdevice_attribute a)
{
	int v = 0;
	if (!cu.cuDeviceGetAttribute || cu.cuDeviceGetAttribute(&v, a, dev) != CUDA_SUCCESS)
		return 0;
	return v;
}

/* Fills hook.dev[ordinal] once and emits `device`. */
static const struct hook_device *cuda_device_info(int ordinal)
{
	if (ordinal < 0 || ordinal >= HOOK_MAX_DEVICES)
		return NULL;
	struct hook_device *d = &hook.dev[ordinal];
	if (__atomic_load_n(&d->known, __ATOMIC_ACQUIRE))
		return d;
	pthread_mutex_lock(&hook.dev_lock);
	if (!d->known) {
		CUdevice dev = ordinal;
		if (cu.cuDeviceGet)
			cu.cuDeviceGet(&dev, ordinal);
		d->cc = cuda_attr(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) * 10 +
			cuda_attr(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
		d->sms = cuda_attr(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
		d->clock_khz = cuda_attr(dev, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
		if (!cu.cuDeviceGetName || cu.cuDeviceGetName(d->name, sizeof d->name, dev) != CUDA_SUCCESS)
			snprintf(d->name, sizeof d->name, "device %d", ordinal);
		struct strbuf sb;
		hook_event_begin(&sb, "device");
		event_add_int(&sb, "ordinal", ordinal);
		event_add(&sb, "name", d->name);
		event_add_int(&sb, "cc", d->cc);
		event_add_int(&sb, "sms", d->sms);
		event_add_int(&sb, "clock_khz", d->clock_khz);
		hook_event_emit(&sb);
		__atomic_store_n(&d->known, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&hook.dev_lock);
	return d;
}

/* Asking the driver for the device again took about 0.1 us of a probed
 * launch's ~0.75 us of preparing on an H200. */
const struct hook_device *hook_cuda_launch_device(const struct hook_launch *l, CUcontext *ctx)
{
	if (l->dev < 0)
		return hook_cuda_device(ctx);
	if (!cu.cuCtxGetCurrent || cu.cuCtxGetCurrent(ctx) != CUDA_SUCCESS || !*ctx)
		return NULL;
	return cuda_device_info(l->dev);
}

const struct hook_device *hook_cuda_device(CUcontext *ctx)
{
	CUcontext c = NULL;
	CUdevice dev = 0;
	if (!cu.cuCtxGetCurrent || cu.cuCtxGetCurrent(&c) != CUDA_SUCCESS || !c)
		return NULL;
	if (ctx)
		*ctx = c;
	if (!cu.cuCtxGetDevice || cu.cuCtxGetDevice(&dev) != CUDA_SUCCESS)
		return NULL;
	return cuda_device_info((int)dev);
}

int hook_cuda_current_dev(void)
{
	static __thread CUcontext last_ctx;
	static __thread int last_dev = -1;
	static __thread uint64_t last_gen;
	CUcontext c = NULL;
	CUdevice dev = 0;
	/* One device: every launch is on it, and no driver call per launch */
	if (__atomic_load_n(&hook.n_devices, __ATOMIC_RELAXED) == 1)
		return 0;
	if (!cu.cuCtxGetCurrent || cu.cuCtxGetCurrent(&c) != CUDA_SUCCESS || !c)
		return -1;
	uint64_t gen = __atomic_load_n(&hook.reg.generation, __ATOMIC_ACQUIRE);
	if (c == last_ctx && gen == last_gen)
		return last_dev;
	if (!cu.cuCtxGetDevice || cu.cuCtxGetDevice(&dev) != CUDA_SUCCESS)
		return -1;
	last_ctx = c;
	last_gen = gen;
	last_dev = (int)dev;
	return last_dev;
}

int hook_cuda_hold_ctx(struct hook_ctx_held *h, CUcontext ctx)
{
	uint64_t g = __atomic_load_n(&hook.ctx_gen, __ATOMIC_ACQUIRE);
	if (g != h->gen) {
		h->gen = g;
		h->cur = NULL;
	}
	if (h->cur != ctx && cu.cuCtxSetCurrent && cu.cuCtxSetCurrent(ctx) == CUDA_SUCCESS)
		h->cur = ctx;
	return h->cur == ctx;
}

CUstreamCaptureMode hook_cuda_relax_begin(void)
{
	CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
	if (cu.cuThreadExchangeStreamCaptureMode)
		cu.cuThreadExchangeStreamCaptureMode(&mode);
	return mode;
}

void hook_cuda_relax_end(CUstreamCaptureMode prev)
{
	if (cu.cuThreadExchangeStreamCaptureMode)
		cu.cuThreadExchangeStreamCaptureMode(&prev);
}

CUresult hook_cuInit(unsigned int flags)
{
	if (!hook.driver)
		return CUDA_ERROR_NO_DEVICE;
	CUresult rc = HOOK_REAL(cuInit)(flags);
	int n = 0;
	if (rc == CUDA_SUCCESS && hook_events_on() && cu.cuDeviceGetCount &&
	    cu.cuDeviceGetCount(&n) == CUDA_SUCCESS) {
		__atomic_store_n(&hook.n_devices, n, __ATOMIC_RELEASE);
		for (int i = 0; i < n; i++)
			cuda_device_info(i);
	}
	return rc;
}
