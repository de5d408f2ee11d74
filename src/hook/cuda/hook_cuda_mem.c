/* Device allocations: forward (again after the pool gave back its idle
 * memory, when a try found the GPU out of memory), then tell the event
 * stream, so the DMAT view can label address ranges by the allocation they
 * belong to (doc/events.md `alloc`/`free`). The hook keeps no table: a free
 * names its base and the reader pairs it with the live allocation at that
 * address. Memory from the virtual memory API (cuMemCreate + cuMemMap) is
 * retried the same way but not seen. */
#include <stdint.h>
#include "hook/cuda/hook_cuda.h"
#include "hook/cuda/hook_cuda_results.h"
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

#define MEM_WAIT_NS 5000000000ull /* the longest wait for results in flight */

/* Out of memory on the try-th call: the pool's idle map memory goes back to
 * the driver and the allocation is tried again (hook_cuda_giveback.c); when
 * that was not enough, or there was none, once more after the results in
 * flight gave their buffers back (the app waits for them, at most
 * MEM_WAIT_NS: better than an allocation that fails only under ntop). */
static int mem_retry(CUresult rc, int try, const char *api, size_t bytes)
{
	if (rc != CUDA_ERROR_OUT_OF_MEMORY || try > 1)
		return 0;
	if (try == 0 && hook_pool_give_back(api, bytes))
		return 1;
	return hook_results_wait_held(MEM_WAIT_NS) && hook_pool_give_back(api, bytes);
}

CUresult hook_cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytes)
{
	CUresult rc;
	int try = 0;
	do
		rc = HOOK_REAL(cuMemAlloc_v2)(dptr, bytes);
	while (mem_retry(rc, try++, "cuMemAlloc", bytes));
	return mem_alloced(rc, dptr, bytes, "cuMemAlloc");
}

CUresult hook_cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pitch, size_t width, size_t height, unsigned elem)
{
	CUresult rc;
	int try = 0;
	do
		rc = HOOK_REAL(cuMemAllocPitch_v2)(dptr, pitch, width, height, elem);
	while (mem_retry(rc, try++, "cuMemAllocPitch", width * height));
	return mem_alloced(rc, dptr, rc == CUDA_SUCCESS && pitch ? *pitch * height : 0, "cuMemAllocPitch");
}

CUresult hook_cuMemAllocManaged(CUdeviceptr *dptr, size_t bytes, unsigned flags)
{
	CUresult rc;
	int try = 0;
	do
		rc = HOOK_REAL(cuMemAllocManaged)(dptr, bytes, flags);
	while (mem_retry(rc, try++, "cuMemAllocManaged", bytes));
	return mem_alloced(rc, dptr, bytes, "cuMemAllocManaged");
}

static CUresult mem_alloc_async(enum hook_row_id row, CUdeviceptr *dptr, size_t bytes, CUstream s)
{
	__typeof__(&hook_cuMemAllocAsync) real = hook.real[row];
	CUresult rc;
	int try = 0;
	do
		rc = real(dptr, bytes, s);
	while (mem_retry(rc, try++, "cuMemAllocAsync", bytes));
	return mem_alloced(rc, dptr, bytes, "cuMemAllocAsync");
}

CUresult hook_cuMemAllocAsync(CUdeviceptr *dptr, size_t bytes, CUstream s)
{
	return mem_alloc_async(HOOK_ROW_cuMemAllocAsync, dptr, bytes, s);
}

CUresult hook_cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytes, CUstream s)
{
	return mem_alloc_async(HOOK_ROW_cuMemAllocAsync_ptsz, dptr, bytes, s);
}

static CUresult mem_alloc_pool(enum hook_row_id row, CUdeviceptr *dptr, size_t bytes, CUmemoryPool pool, CUstream s)
{
	__typeof__(&hook_cuMemAllocFromPoolAsync) real = hook.real[row];
	CUresult rc;
	int try = 0;
	do
		rc = real(dptr, bytes, pool, s);
	while (mem_retry(rc, try++, "cuMemAllocFromPoolAsync", bytes));
	return mem_alloced(rc, dptr, bytes, "cuMemAllocFromPoolAsync");
}

CUresult hook_cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytes, CUmemoryPool pool, CUstream s)
{
	return mem_alloc_pool(HOOK_ROW_cuMemAllocFromPoolAsync, dptr, bytes, pool, s);
}

CUresult hook_cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytes, CUmemoryPool pool, CUstream s)
{
	return mem_alloc_pool(HOOK_ROW_cuMemAllocFromPoolAsync_ptsz, dptr, bytes, pool, s);
}

/* Physical memory of the virtual memory API (PyTorch's expandable
 * segments): retried as the others, not reported (no address yet). */
CUresult hook_cuMemCreate(CUmemGenericAllocationHandle *handle, size_t bytes, const CUmemAllocationProp *prop,
			  unsigned long long flags)
{
	CUresult rc;
	int try = 0;
	do
		rc = HOOK_REAL(cuMemCreate)(handle, bytes, prop, flags);
	while (mem_retry(rc, try++, "cuMemCreate", bytes));
	return rc;
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
