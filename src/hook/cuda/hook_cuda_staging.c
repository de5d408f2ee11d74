/* Host staging: where the collector copies a result back to until the
 * writers are done with it. Pinned buffers up to cfg.pinned_max, carved
 * from registered slabs; larger results in ordinary memory filled through
 * two pinned buffers (hook_cuda_results.c). Every call that pins or unpins
 * host memory holds all of the application's launches while it runs
 * (bench/pinned_stall.c), so slabs are small and their pages are faulted in
 * before the driver is asked. Staging is never given back while the
 * process runs: it is the hook's own memory (a writer may still read it
 * when a context goes), and not inherited by a fork child (MADV_DONTFORK:
 * pinned private pages would be copied at the fork, while the app waits).
 * A registration is portable but lasts only as long as the context that
 * made it: a slab whose context went is registered again before use. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "common/cause.h"
#include "hook/cuda/hook_cuda.h"
#include "hook/cuda/hook_cuda_api.h"
#include "hook/cuda/hook_cuda_results.h"

#define STAGING_MIN ((uint64_t)4 << 10)  /* pinned staging: powers of two from 4 KiB */
#define STAGING_SLAB ((uint64_t)4 << 20) /* pinned memory comes in slabs of 4 MiB */
#define STAGING_SLAB_BUFS 256
#define STAGING_HUGE ((uint64_t)2 << 20) /* staging maps are aligned for huge pages */

/* Host staging sizes: powers of two from 4 KiB up to a slab, whole slabs
 * beyond (a 71 MB result takes 72 MiB, not 128). */
static uint64_t staging_size(uint64_t bytes)
{
	if (bytes > STAGING_SLAB)
		return (bytes + STAGING_SLAB - 1) / STAGING_SLAB * STAGING_SLAB;
	uint64_t size = STAGING_MIN;
	while (size < bytes)
		size *= 2;
	return size;
}

/* Anonymous memory of len bytes (rounded up to pages) faulted in by the
 * kernel, with no driver lock held, in huge pages where the system gives
 * them (2 MiB aligned, MADV_HUGEPAGE): on an H200 server 64 MiB took 22 ms
 * to fault in that way against 68 ms in 4 KiB pages, and registering it
 * 2.9 ms against 7.2 (bench/pinned_stall.c). NULL when out of memory. */
static void *staging_map(uint64_t len)
{
	long page = sysconf(_SC_PAGESIZE);
	if (page > 0) /* the tail trimmed below must start on a page */
		len = (len + (uint64_t)page - 1) / (uint64_t)page * (uint64_t)page;
	uint64_t span = len + STAGING_HUGE;
	uint8_t *p = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	uint8_t *a = (uint8_t *)(((uintptr_t)p + STAGING_HUGE - 1) & ~(uintptr_t)(STAGING_HUGE - 1));
	if (a > p)
		munmap(p, (size_t)(a - p));
	if (a + len < p + span)
		munmap(a + len, (size_t)(p + span - (a + len)));
	madvise(a, len, MADV_HUGEPAGE);
	madvise(a, len, MADV_DONTFORK);
#ifdef MADV_POPULATE_WRITE
	if (madvise(a, len, MADV_POPULATE_WRITE) == 0)
		return a;
	if (errno == ENOMEM) {
		munmap(a, len);
		return NULL;
	}
#endif
	for (uint64_t off = 0; off < len; off += 4096) /* a kernel without MADV_POPULATE_WRITE */
		((volatile uint8_t *)a)[off] = 0;
	return a;
}

/* Registers [p, p+len) with ctx current: portable, so any context copies
 * into it while ctx lives. Every call that pins or unpins host memory
 * holds the application's launches for as long as it runs
 * (bench/pinned_stall.c, H200: cuMemAllocHost ~1 ms + 0.6 ms per MiB, it
 * faults the pages in under the driver's lock); staging_map has the kernel
 * fault these in first, and registering then takes ~1 ms for 4 MiB. */
static CUresult staging_register(void *p, uint64_t len)
{
	CUstreamCaptureMode prev = hook_cuda_relax_begin();
	hook_hold_begin();
	CUresult rc = cu.cuMemHostRegister_v2 ? cu.cuMemHostRegister_v2(p, len, CU_MEMHOSTREGISTER_PORTABLE)
					      : CUDA_ERROR_NOT_FOUND;
	hook_hold_end();
	hook_cuda_relax_end(prev);
	return rc;
}

/* A new slab of len bytes registered for ctx, on the slab list. */
static struct hook_slab *staging_pin(CUcontext ctx, uint64_t len, char **cause)
{
	struct hook_slab *sl = calloc(1, sizeof *sl);
	void *p = sl ? staging_map(len) : NULL;
	if (!p) {
		free(sl);
		cause_set(cause, "out of host memory for %llu staging bytes", (unsigned long long)len);
		return NULL;
	}
	CUresult rc = staging_register(p, len);
	if (rc != CUDA_SUCCESS) {
		munmap(p, len);
		free(sl);
		cause_set(cause, "cuMemHostRegister of %llu staging bytes failed (CUDA error %d)",
			  (unsigned long long)len, (int)rc);
		return NULL;
	}
	sl->base = p;
	sl->len = len;
	sl->ctx = ctx;
	struct hook_results *r = &hook.res;
	pthread_mutex_lock(&r->lock);
	sl->next = r->slabs;
	r->slabs = sl;
	r->host_pins++;
	pthread_mutex_unlock(&r->lock);
	return sl;
}

/* New pinned buffers of the size that holds `bytes`, carved from one slab:
 * a small result (a one-block launch's few records) takes a few KiB, not a
 * MiB, and one registration serves many results. A slab is small enough
 * that registering it holds the application's launches about 1 ms; only a
 * buffer larger than a slab (up to cfg.pinned_max) is a registration of
 * its own. Returns one; the others go to the free list. */
static struct hook_buf *staging_alloc_pinned(CUcontext ctx, uint64_t bytes, char **cause)
{
	uint64_t size = staging_size(bytes);
	uint64_t n = STAGING_SLAB / size;
	n = n < 1 ? 1 : n > STAGING_SLAB_BUFS ? STAGING_SLAB_BUFS : n;
	struct hook_slab *sl = staging_pin(ctx, size * n, cause);
	if (!sl)
		return NULL;
	struct hook_results *r = &hook.res;
	struct hook_buf *first = NULL;
	pthread_mutex_lock(&r->lock);
	for (uint64_t i = 0; i < n; i++) {
		struct hook_buf *b = calloc(1, sizeof *b);
		if (!b)
			break; /* the rest of the slab stays unused */
		b->slab = sl;
		b->ptr = (uint64_t)(uintptr_t)sl->base + i * size;
		b->size = size;
		r->host_pooled += size;
		if (!first) {
			first = b;
			r->host_busy += size;
		} else {
			b->next = r->host_free;
			r->host_free = b;
		}
	}
	pthread_mutex_unlock(&r->lock);
	if (!first)
		cause_set(cause, "out of host memory");
	return first;
}

/* A kept ordinary buffer for `bytes`, unlinked and counted busy; NULL when
 * none fits (one over twice the size is left: host_busy would be charged
 * all of it), after the free ones too small for it went. Lock held; what
 * goes is handed back in *gone, to be unmapped outside it. */
static struct hook_buf *staging_reuse_pageable(uint64_t bytes, struct hook_buf **gone)
{
	struct hook_results *r = &hook.res;
	struct hook_buf *b = hook_buf_take(&r->page_free, NULL, bytes);
	if (b && b->size / 2 > staging_size(bytes)) {
		b->next = r->page_free;
		r->page_free = b;
		b = NULL;
	}
	if (b) {
		r->host_busy += b->size;
		r->host_pageable++;
		return b;
	}
	for (struct hook_buf **p = &r->page_free; *p;) {
		struct hook_buf *t = *p;
		if (t->size >= bytes) {
			p = &t->next;
			continue;
		}
		*p = t->next;
		t->next = *gone;
		*gone = t;
		r->page_pooled -= t->size;
	}
	return NULL;
}

/* Staging larger than the pinned maximum is ordinary memory, filled through
 * a pinned buffer (results_dtoh): registering hundreds of MB holds the
 * application's launches for as long (cuMemAllocHost of 512 MiB stalled an
 * H100 app's launch 129 ms). It is kept for the next result, since faulting
 * fresh pages in costs the collector 0.3-1 ms per MiB on a GPU server. */
static struct hook_buf *staging_take_pageable(uint64_t bytes, char **cause)
{
	struct hook_results *r = &hook.res;
	struct hook_buf *gone = NULL;
	pthread_mutex_lock(&r->lock);
	struct hook_buf *b = staging_reuse_pageable(bytes, &gone);
	pthread_mutex_unlock(&r->lock);
	while (gone) {
		struct hook_buf *n = gone->next;
		munmap((void *)(uintptr_t)gone->ptr, gone->size);
		free(gone);
		gone = n;
	}
	if (b)
		return b;
	uint64_t size = staging_size(bytes);
	b = calloc(1, sizeof *b);
	void *p = b ? staging_map(size) : NULL;
	if (!p) {
		free(b);
		cause_set(cause, "out of memory for %llu staging bytes", (unsigned long long)bytes);
		return NULL;
	}
	b->ptr = (uint64_t)(uintptr_t)p;
	b->size = size;
	b->pageable = 1;
	pthread_mutex_lock(&r->lock);
	r->host_busy += size;
	r->host_pageable++;
	r->page_pooled += size;
	pthread_mutex_unlock(&r->lock);
	return b;
}

struct hook_buf *hook_staging_take(CUcontext ctx, uint64_t bytes, char **cause)
{
	if (bytes > hook.cfg.pinned_max)
		return staging_take_pageable(bytes, cause);
	return hook_staging_take_pinned(ctx, bytes, cause);
}

/* The best-fitting free pinned buffer of at least `bytes` whose slab is
 * registered (live) or not (its context went), unlinked; lock held. */
static struct hook_buf *staging_take_free(uint64_t bytes, int live)
{
	struct hook_buf **best = NULL;
	uint64_t fit = staging_size(bytes);
	for (struct hook_buf **p = &hook.res.host_free; *p; p = &(*p)->next) {
		struct hook_buf *b = *p;
		if ((b->slab->ctx != NULL) != live || b->size < bytes || (best && b->size >= (*best)->size))
			continue;
		best = p;
		if (b->size == fit)
			break; /* none is better: thousands of results in flight leave a long list */
	}
	if (!best)
		return NULL;
	struct hook_buf *b = *best;
	*best = b->next;
	b->next = NULL;
	hook.res.host_busy += b->size;
	return b;
}

/* A free buffer of a slab whose context went, its slab registered again
 * for ctx; NULL when there is none or the driver still has the old
 * registration (the context is still being destroyed). */
static struct hook_buf *staging_take_repinned(CUcontext ctx, uint64_t bytes)
{
	struct hook_results *r = &hook.res;
	pthread_mutex_lock(&r->lock);
	struct hook_buf *b = staging_take_free(bytes, 0);
	pthread_mutex_unlock(&r->lock);
	if (!b)
		return NULL;
	struct hook_slab *sl = b->slab;
	int ok = staging_register(sl->base, sl->len) == CUDA_SUCCESS;
	pthread_mutex_lock(&r->lock);
	if (ok) {
		sl->ctx = ctx;
		r->host_pins++;
	}
	pthread_mutex_unlock(&r->lock);
	if (ok)
		return b;
	hook_staging_put(b);
	return NULL;
}

/* Pinned staging of at least `bytes`: a free buffer, one of a slab
 * registered again, or a new slab. */
struct hook_buf *hook_staging_take_pinned(CUcontext ctx, uint64_t bytes, char **cause)
{
	struct hook_results *r = &hook.res;
	pthread_mutex_lock(&r->lock);
	struct hook_buf *b = staging_take_free(bytes, 1);
	pthread_mutex_unlock(&r->lock);
	if (!b)
		b = staging_take_repinned(ctx, bytes);
	return b ? b : staging_alloc_pinned(ctx, bytes, cause);
}

void hook_staging_ctx_gone(CUcontext ctx)
{
	struct hook_results *r = &hook.res;
	pthread_mutex_lock(&r->lock);
	for (struct hook_slab *sl = r->slabs; sl; sl = sl->next)
		if (sl->ctx == ctx)
			sl->ctx = NULL;
	pthread_mutex_unlock(&r->lock);
}

/* b may still be written by a copy that failed to finish: never used
 * again, no longer counted as busy. */
void hook_staging_drop(struct hook_buf *b)
{
	if (!b)
		return;
	pthread_mutex_lock(&hook.res.lock);
	hook.res.host_busy -= b->size;
	pthread_cond_broadcast(&hook.res.room);
	pthread_mutex_unlock(&hook.res.lock);
}

void hook_staging_put(struct hook_buf *b)
{
	if (!b)
		return;
	struct hook_results *r = &hook.res;
	pthread_mutex_lock(&r->lock);
	r->host_busy -= b->size;
	struct hook_buf **list = b->pageable ? &r->page_free : &r->host_free;
	b->next = *list;
	*list = b;
	pthread_cond_broadcast(&r->room);
	pthread_mutex_unlock(&r->lock);
}
