/* Stream captures the app opens, counted so that a launch asks the driver
 * whether its stream is capturing only while one may be. The question is a
 * driver call before every probed kernel and every timed launch, on the
 * app's thread while the GPU idles (bench/driver_calls.c says what it
 * costs). Every way to begin a capture is a hooked row (direct exports and
 * cuGetProcAddress alike): a capture counts from just before its begin
 * call until the hook sees its origin stream leave capture at its end
 * call. A stream joined to a capture (it waited on an event of a
 * capturing stream) captures only while the origin does, so counting
 * origins covers it. A stream destroyed while capturing is never seen to
 * end: the count stays up and launches keep asking (slower, never wrong).
 *
 * The check where a kernel is first seen or its configuration changes
 * (rare, and its launch line says whether it was captured) always asks;
 * should the driver say a stream captures while the count says none (a
 * begin the hook did not see), every launch asks from then on. */
#include "hook/cuda/hook_cuda.h"
#include "hook/cuda/hook_cuda_api.h"
#include "hook/hook_log.h"
#include "hook/cuda/hook_table.h"

/* 1 capturing (or invalidated, still to be ended), 0 not (or a driver
 * older than capture), -1 the driver could not say. */
static int capture_status(CUstream stream)
{
	if (!cu.cuStreamIsCapturing)
		return 0;
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
	if (cu.cuStreamIsCapturing(stream, &st) != CUDA_SUCCESS)
		return -1;
	return st != CU_STREAM_CAPTURE_STATUS_NONE;
}

static void capture_unseen(const char *how)
{
	if (!__atomic_exchange_n(&hook.captures_unseen, 1, __ATOMIC_ACQ_REL))
		hook_log("%s: a stream capture the hook did not see begin; every launch asks the driver from now on",
			 how);
}

int hook_cuda_capturing_asked(CUstream stream)
{
	int st = capture_status(stream);
	if (st > 0 && !__atomic_load_n(&hook.captures, __ATOMIC_ACQUIRE))
		capture_unseen("a launch found its stream capturing");
	return st != 0; /* errors count as capturing */
}

int hook_cuda_capturing(CUstream stream)
{
	if (!__atomic_load_n(&hook.captures, __ATOMIC_ACQUIRE) &&
	    !__atomic_load_n(&hook.captures_unseen, __ATOMIC_RELAXED))
		return 0;
	return capture_status(stream) != 0;
}

/* Counted before the begin call: a launch after it cannot miss it. */
static void capture_opening(void)
{
	__atomic_add_fetch(&hook.captures, 1, __ATOMIC_ACQ_REL);
}

/* One counted capture is over (or never began); never below zero: an
 * end the count cannot match means it missed a begin. */
static void capture_closed(void)
{
	int n = __atomic_load_n(&hook.captures, __ATOMIC_ACQUIRE);
	do {
		if (n <= 0) {
			capture_unseen("a capture ended");
			return;
		}
	} while (!__atomic_compare_exchange_n(&hook.captures, &n, n - 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
}

static CUresult capture_began(CUresult rc)
{
	if (rc != CUDA_SUCCESS)
		capture_closed();
	return rc;
}

CUresult hook_cuStreamBeginCapture(CUstream s)
{
	capture_opening();
	return capture_began(HOOK_REAL(cuStreamBeginCapture)(s));
}

CUresult hook_cuStreamBeginCapture_ptsz(CUstream s)
{
	capture_opening();
	return capture_began(HOOK_REAL(cuStreamBeginCapture_ptsz)(s));
}

CUresult hook_cuStreamBeginCapture_v2(CUstream s, CUstreamCaptureMode mode)
{
	capture_opening();
	return capture_began(HOOK_REAL(cuStreamBeginCapture_v2)(s, mode));
}

CUresult hook_cuStreamBeginCapture_v2_ptsz(CUstream s, CUstreamCaptureMode mode)
{
	capture_opening();
	return capture_began(HOOK_REAL(cuStreamBeginCapture_v2_ptsz)(s, mode));
}

CUresult hook_cuStreamBeginCaptureToGraph(CUstream s, CUgraph g, const CUgraphNode *deps,
					  const CUgraphEdgeData *edges, size_t n_deps, CUstreamCaptureMode mode)
{
	capture_opening();
	return capture_began(HOOK_REAL(cuStreamBeginCaptureToGraph)(s, g, deps, edges, n_deps, mode));
}

CUresult hook_cuStreamBeginCaptureToGraph_ptsz(CUstream s, CUgraph g, const CUgraphNode *deps,
					       const CUgraphEdgeData *edges, size_t n_deps, CUstreamCaptureMode mode)
{
	capture_opening();
	return capture_began(HOOK_REAL(cuStreamBeginCaptureToGraph_ptsz)(s, g, deps, edges, n_deps, mode));
}

/* Ended when the stream captured before the call and does not after it
 * (an end call that fails on a stream still capturing ends nothing). */
static CUresult capture_end(CUresult (*real)(CUstream, CUgraph *), CUstream s, CUgraph *g)
{
	int was = capture_status(s);
	CUresult rc = real(s, g);
	if (was > 0 && capture_status(s) == 0)
		capture_closed();
	return rc;
}

CUresult hook_cuStreamEndCapture(CUstream s, CUgraph *g)
{
	return capture_end(HOOK_REAL(cuStreamEndCapture), s, g);
}

CUresult hook_cuStreamEndCapture_ptsz(CUstream s, CUgraph *g)
{
	return capture_end(HOOK_REAL(cuStreamEndCapture_ptsz), s, g);
}
