/* Device allocations: forward, then tell the event stream, so the DMAT view
 * can label address ranges by the allocation they belong to (doc/events.md
 * `alloc`/`free`). The hook keeps no table: a free names its base and the
 * reader pairs it with the live allocation at that address. Memory from
 * the virtual memory API (cuMemCreate + cuMemMap) is not seen. */
#include <stdint.h>
#include "hook/cuda/hook_cuda.h"
#include "hook/hook_events.h"
#include "hook/hook_state.h"
#include "hook/cuda/hook_table.h"
#include "trace/events.h"

static CUresult mem_alloced(CUresult rc, const CUdeviceptr *dptr, size_t bytes, const char *api)
{
	if (rc != CUDA_SUCCESS || !dptr || !hook_events_on())
		return rc;
	struct strbuf sb;
	hook_event_begin(&sb, "alloc");
	event_add_int(&sb, "n", (long long)__atomic_add_fetch(&hook.allocs, 1, __ATOMIC_RELAXED));
	event_add_hex(&sb, "base", (unsigned long long)*dptr);
	event_add_int(&sb, "bytes", (long long)bytes);
	event_add(&sb, "api", api);
	hook_event_emit(&sb);
	return rc;
}

static CUresult mem_freed(CUresult rc, CUdeviceptr dptr, const char *api)
{
	if (rc != CUDA_SUCCESS || !dptr || !hook_events_on())
		return rc;
	struct strbuf sb;
	hook_event_begin(&sb, "free");
	event_add_hex(&sb, "base", (unsigned long long)dptr);
	event_add(&sb, "api", api);
	hook_event_emit(&sb);
	return rc;
}

CUresult hook_cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytes)
{
	return mem_alloced(HOOK_REAL(cuMemAlloc_v2)(dptr, bytes), dptr, bytes, "cuMemAlloc");
}

CUresult hook_cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pitch, size_t width, size_t height, unsigned elem)
{
	CUresult rc = HOOK_REAL(cuMemAllocPitch_v2)(dptr, pitch, width, height, elem);
	return mem_alloced(rc, dptr, rc == CUDA_SUCCESS && pitch ? *pitch * height : 0, "cuMemAllocPitch");
}

CUresult hook_cuMemAllocManaged(CUdeviceptr *dptr, size_t bytes, unsigned flags)
{
	return mem_alloced(HOOK_REAL(cuMemAllocManaged)(dptr, bytes, flags), dptr, bytes, "cuMemAllocManaged");
}

CUresult hook_cuMemAllocAsync(CUdeviceptr *dptr, size_t bytes, CUstream s)
{
	return mem_alloced(HOOK_REAL(cuMemAllocAsync)(dptr, bytes, s), dptr, bytes, "cuMemAllocAsync");
}

CUresult hook_cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytes, CUstream s)
{
	return mem_alloced(HOOK_REAL(cuMemAllocAsync_ptsz)(dptr, bytes, s), dptr, bytes, "cuMemAllocAsync");
}

CUresult hook_cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytes, CUmemoryPool pool, CUstream s)
{
	return mem_alloced(HOOK_REAL(cuMemAllocFromPoolAsync)(dptr, bytes, pool, s), dptr, bytes,
			   "cuMemAllocFromPoolAsync");
}

CUresult hook_cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytes, CUmemoryPool pool, CUstream s)
{
	return mem_alloced(HOOK_REAL(cuMemAllocFromPoolAsync_ptsz)(dptr, bytes, pool, s), dptr, bytes,
			   "cuMemAllocFromPoolAsync");
}

CUresult hook_cuMemFree_v2(CUdeviceptr dptr)
{
	return mem_freed(HOOK_REAL(cuMemFree_v2)(dptr), dptr, "cuMemFree");
}

CUresult hook_cuMemFreeAsync(CUdeviceptr dptr, CUstream s)
{
	return mem_freed(HOOK_REAL(cuMemFreeAsync)(dptr, s), dptr, "cuMemFreeAsync");
}

CUresult hook_cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream s)
{
	return mem_freed(HOOK_REAL(cuMemFreeAsync_ptsz)(dptr, s), dptr, "cuMemFreeAsync");
}
