/* Map buffers and the hook's copy streams. Device buffers (cuMemAlloc) are
 * pooled per context and come back zeroed: after a result is copied out,
 * the buffer is cleared on the hook's own stream and an event marks the end
 * of it, which the next launch that takes the buffer waits on (host
 * staging: hook_cuda_staging.c). Nothing is freed while the process runs
 * (cuMemFree synchronises the device) except when the context goes away or
 * an allocation of the app fails for lack of memory (hook_cuda_giveback.c).
 *
 * Where the memory comes from: a launch takes a free device buffer whose
 * zeroing is done (the smallest that fits). The collector waits for each
 * copy back anyway, and that wait covers the clearing queued after it, so
 * it then marks the buffer (pooled, zeroing queued, as soon as the copies
 * were) known zeroed and a launch takes one with no driver call (the app's stream is idle meanwhile when the app waits for each
 * launch: measured 4-5 us per probed launch saved on an H100). Only when
 * none is known zeroed does the launch ask the driver; only when none is
 * zeroed does it
 * allocate (warm-up), and then it asks the stager thread to keep as many
 * spares of that size as launches are in flight, so the pool grows to the
 * depth the application's pace needs and a steady probing loop finds
 * buffers waiting. Device memory comes in slabs carved into buffers, each
 * as large as the pool already is for its size (pool_slab_want), since any
 * allocation stalls the application's own driver calls. A launch allocates whenever the GPU
 * keeps a reserve free for the application (POOL_RESERVE_DIV), so results
 * in flight never make it decline; spares are made only while the pool is
 * under twice the map budget or a quarter of the GPU's memory, whichever is
 * more. The map budget limits one launch's maps. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "common/cause.h"
#include "hook/cuda/hook_cuda.h"
#include "hook/cuda/hook_cuda_api.h"
#include "hook/cuda/hook_cuda_results.h"

#define POOL_ROUND ((uint64_t)1 << 16)  /* buffer sizes round up to 64 KiB */
#define POOL_SLAB ((uint64_t)128 << 20) /* a slab: this much, or POOL_SLAB_MAX_BUFS buffers if less */
#define POOL_SLAB_MAX_BUFS 64
#define POOL_GROW_MAX ((uint64_t)512 << 20) /* a slab that doubles a size's buffers: at most this */
#define POOL_GROW_MAX_BUFS 1024
#define POOL_RESERVE_DIV 8              /* leave 1/8 of the GPU's memory free */
#define POOL_RESERVE_MIN ((uint64_t)1 << 30)

static uint64_t pool_round(uint64_t bytes)
{
	return (bytes + POOL_ROUND - 1) / POOL_ROUND * POOL_ROUND;
}

/* b left dev_free (caller holds the pool lock): the last buffer known no
 * longer is when it was b. */
static struct hook_buf *pool_left(struct hook_buf *b)
{
	if (b && b == hook.res.dev_free_last)
		hook.res.dev_free_last = NULL;
	return b;
}

struct hook_buf *hook_buf_take(struct hook_buf **list, void *ctx, uint64_t bytes)
{
	struct hook_buf **best = NULL;
	for (struct hook_buf **p = list; *p; p = &(*p)->next)
		if ((*p)->ctx == ctx && (*p)->size >= bytes && (!best || (*p)->size < (*best)->size))
			best = p;
	if (!best)
		return NULL;
	struct hook_buf *b = *best;
	*best = b->next;
	b->next = NULL;
	return b;
}

/* Free buffers of ctx with at least `bytes`, counted up to `most` (the
 * launch path only asks whether any is left: the list can be long). */
static uint64_t pool_count(const struct hook_buf *list, CUcontext ctx, uint64_t bytes, uint64_t most)
{
	uint64_t n = 0;
	for (; list && n < most; list = list->next)
		n += list->ctx == ctx && list->size >= bytes;
	return n;
}

/* The hook's two streams in ctx (created on first use, in relaxed capture
 * mode so another thread's capture is never disturbed): copies back and the
 * clearing that must follow them go on the first; clearing that a launch
 * waits for goes on the second, so a launch never waits behind copies of
 * hundreds of MB. 0, or -1. Caller holds no lock. */
static int pool_streams(CUcontext ctx, CUstream *copy, CUstream *clear)
{
	struct hook_results *r = &hook.res;
	pthread_mutex_lock(&r->lock);
	struct hook_copier *c;
	for (c = r->copiers; c && c->ctx != ctx; c = c->next)
		;
	if (c) {
		*copy = c->stream;
		*clear = c->clear;
	}
	pthread_mutex_unlock(&r->lock);
	if (c)
		return 0;
	CUstream s[2] = { NULL, NULL };
	CUstreamCaptureMode prev = hook_cuda_relax_begin();
	for (int i = 0; i < 2; i++)
		if (!cu.cuStreamCreate || cu.cuStreamCreate(&s[i], CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS)
			s[i] = NULL;
	hook_cuda_relax_end(prev);
	if (!s[0] || !s[1])
		return -1; /* a stream made is kept, never destroyed (that may synchronise) */
	pthread_mutex_lock(&r->lock);
	for (c = r->copiers; c && c->ctx != ctx; c = c->next)
		;
	/* Another thread made them first: keep theirs (ours stay unused). */
	if (!c && (c = calloc(1, sizeof *c)) != NULL) {
		c->ctx = ctx;
		c->stream = s[0];
		c->clear = s[1];
		c->next = r->copiers;
		r->copiers = c;
	}
	if (c) {
		*copy = c->stream;
		*clear = c->clear;
	}
	pthread_mutex_unlock(&r->lock);
	return c ? 0 : -1;
}

CUstream hook_pool_stream(CUcontext ctx)
{
	CUstream copy, clear;
	return pool_streams(ctx, &copy, &clear) == 0 ? copy : NULL;
}

static CUstream pool_clear_stream(CUcontext ctx)
{
	CUstream copy, clear;
	return pool_streams(ctx, &copy, &clear) == 0 ? clear : NULL;
}

/* Does the GPU keep its reserve if `bytes` more are taken? */
static int pool_gpu_has_room(uint64_t bytes, char **cause)
{
	size_t free_b = 0, total_b = 0;
	if (hook_pool_quiet(cause))
		return 0;
	if (!cu.cuMemGetInfo_v2 || cu.cuMemGetInfo_v2(&free_b, &total_b) != CUDA_SUCCESS)
		return 1; /* unknown: let cuMemAlloc decide */
	uint64_t reserve = total_b / POOL_RESERVE_DIV;
	if (reserve < POOL_RESERVE_MIN)
		reserve = total_b / 2 < POOL_RESERVE_MIN ? total_b / 2 : POOL_RESERVE_MIN;
	if ((uint64_t)free_b >= bytes + reserve)
		return 1;
	cause_set(cause, "the GPU lacks memory for maps: %llu bytes needed, %llu free, %llu kept free for the "
		  "application", (unsigned long long)bytes, (unsigned long long)free_b, (unsigned long long)reserve);
	return 0;
}

/* cuEventSynchronize spins in the driver, and another thread spinning
 * there costs each of the app's launches 0.5-1 us on its own clock; asking
 * every 20 us costs it 0-0.35 us (bench/stream_marks.c). The hook's threads
 * wait this way (their timer slack is small enough for the nap to be
 * 20 us, not Linux's default 50 us more); the app's thread never does. */
CUresult hook_event_wait_quiet(CUevent e)
{
	if (!cu.cuEventQuery)
		return cu.cuEventSynchronize ? cu.cuEventSynchronize(e) : CUDA_ERROR_NOT_FOUND;
	CUresult rc;
	while ((rc = cu.cuEventQuery(e)) == CUDA_ERROR_NOT_READY) {
		struct timespec ts = { 0, HOOK_WAIT_NAP_NS };
		nanosleep(&ts, NULL);
	}
	return rc;
}

CUresult hook_pool_wait(CUcontext ctx, CUstream s)
{
	CUevent e = hook_event_get_bare(ctx);
	if (!e)
		return CUDA_ERROR_OUT_OF_MEMORY;
	CUresult rc = cu.cuEventRecord(e, s);
	if (rc == CUDA_SUCCESS)
		rc = hook_event_wait_quiet(e);
	hook_event_put_bare(ctx, e);
	return rc;
}

/* Buffers of `size` the pool has in ctx, those of slabs being allocated
 * included; under res.lock. */
static uint64_t pool_made_locked(CUcontext ctx, uint64_t size)
{
	struct hook_results *r = &hook.res;
	uint64_t n = 0;
	for (const struct hook_dev_slab *sl = r->dev_slabs; sl; sl = sl->next)
		n += sl->ctx == ctx && sl->size == size ? sl->bufs : 0;
	for (int i = 0; i < HOOK_DEV_GROWING; i++)
		n += r->dev_growing[i].ctx == ctx && r->dev_growing[i].size == size ? r->dev_growing[i].bufs : 0;
	return n;
}

/* How many buffers of `size` a new slab holds: 128 MiB of them (at most
 * 64), or as many as the pool already has of that size when that is more
 * (at most POOL_GROW_MAX): a pool that keeps growing, the collector behind
 * a burst of short probed kernels, then allocates a logarithmic number of
 * times, and every cuMemAlloc, in any thread, holds driver locks the
 * application's launches wait on (with 64 MiB first slabs, fill's 3.5 MiB
 * maps outgrew theirs at the 20th launch of app_cost's burst, held 1.1-1.5
 * ms on the H200). */
static uint64_t pool_slab_want(uint64_t size, uint64_t made)
{
	uint64_t n = size >= POOL_SLAB ? 1 : POOL_SLAB / size;
	if (n > POOL_SLAB_MAX_BUFS)
		n = POOL_SLAB_MAX_BUFS;
	uint64_t grow = POOL_GROW_MAX / size;
	if (grow > POOL_GROW_MAX_BUFS)
		grow = POOL_GROW_MAX_BUFS;
	if (made < grow)
		grow = made;
	return grow > n ? grow : n;
}

/* Sizes a new slab and counts its buffers as made until it is pooled
 * (pool_grow_end), so that the launch path and the stager allocating at
 * once size theirs one after the other, doubling, not both alike. The slot
 * held, or -1 when every one is taken (then only not counted). */
static int pool_grow_begin(CUcontext ctx, uint64_t size, uint64_t *n)
{
	struct hook_results *r = &hook.res;
	int slot = -1;
	pthread_mutex_lock(&r->lock);
	*n = pool_slab_want(size, pool_made_locked(ctx, size));
	for (int i = 0; i < HOOK_DEV_GROWING && slot < 0; i++)
		if (!r->dev_growing[i].bufs) {
			r->dev_growing[i] = (struct hook_dev_growing){ ctx, size, *n };
			slot = i;
		}
	pthread_mutex_unlock(&r->lock);
	return slot;
}

static void pool_grow_end_locked(int slot)
{
	if (slot >= 0)
		hook.res.dev_growing[slot] = (struct hook_dev_growing){ 0 };
}

static void pool_grow_end(int slot)
{
	pthread_mutex_lock(&hook.res.lock);
	pool_grow_end_locked(slot);
	pthread_mutex_unlock(&hook.res.lock);
}

/* New zeroed device buffers of pool_round(bytes) in ctx, carved from one
 * slab (pool_slab_want; halved until the GPU keeps its reserve): the pool
 * grows by slabs. Returns one buffer; the others go to the free list. */
static struct hook_buf *pool_alloc_dev(CUcontext ctx, uint64_t bytes, int wait, char **cause)
{
	uint64_t size = pool_round(bytes), n;
	int slot = pool_grow_begin(ctx, size, &n);
	while (!pool_gpu_has_room(size * n, n > 1 ? NULL : cause)) { /* one cuMemGetInfo when there is room */
		if (n == 1) {
			pool_grow_end(slot);
			return NULL;
		}
		n /= 2;
	}
	CUstream s = pool_clear_stream(ctx); /* new memory: nothing to wait for */
	if (!s) {
		cause_set(cause, "cannot create the hook's streams");
		pool_grow_end(slot);
		return NULL;
	}
	CUdeviceptr p = 0;
	CUstreamCaptureMode prev = hook_cuda_relax_begin();
	hook_hold_begin();
	CUresult rc = cu.cuMemAlloc_v2 ? cu.cuMemAlloc_v2(&p, size * n) : CUDA_ERROR_NOT_FOUND;
	hook_hold_end();
	if (rc == CUDA_SUCCESS)
		rc = cu.cuMemsetD8Async(p, 0, size * n, s);
	/* The stager (wait) sees the clearing done before pooling the
	 * buffers, so launches take them without asking the driver. */
	int zeroed = wait && rc == CUDA_SUCCESS && hook_pool_wait(ctx, s) == CUDA_SUCCESS;
	struct hook_dev_slab *slab = rc == CUDA_SUCCESS ? calloc(1, sizeof *slab) : NULL;
	struct hook_buf *first = NULL;
	for (uint64_t i = 0; slab && i < n; i++) {
		struct hook_buf *b = calloc(1, sizeof *b);
		if (!b || !(b->ready = hook_event_get_bare(ctx)) || cu.cuEventRecord(b->ready, s) != CUDA_SUCCESS) {
			/* A buffer without its event cannot be proved zeroed: unused. */
			if (b)
				hook_event_put_bare(ctx, b->ready);
			free(b);
			break;
		}
		b->ctx = ctx;
		b->ptr = p + i * size;
		b->size = size;
		b->zeroed = zeroed;
		b->dev_slab = slab;
		slab->bufs++;
		if (!first)
			first = b;
		else
			hook_pool_put_dev(b);
	}
	hook_cuda_relax_end(prev);
	if (!first) {
		/* Memory the driver gave us is kept, never freed (that synchronises). */
		free(slab);
		cause_set(cause, "cuMemAlloc of %llu map bytes failed (CUDA error %d)", (unsigned long long)(size * n),
			  (int)rc);
		pool_grow_end(slot);
		return NULL;
	}
	*slab = (struct hook_dev_slab){ .ctx = ctx, .base = p, .len = size * n, .size = size, .bufs = slab->bufs };
	pthread_mutex_lock(&hook.res.lock);
	slab->next = hook.res.dev_slabs;
	hook.res.dev_slabs = slab;
	pool_grow_end_locked(slot);
	hook.res.dev_pooled += size * n;
	if (hook.res.dev_pooled > hook.res.dev_peak)
		hook.res.dev_peak = hook.res.dev_pooled;
	hook.res.dev_allocs++;
	pthread_mutex_unlock(&hook.res.lock);
	return first;
}

/* Has b's zeroing finished? Asks the driver only until it once has (the
 * caller holds the pool lock and is in relaxed capture mode). */
static int pool_zeroed(struct hook_buf *b)
{
	if (!b->zeroed && cu.cuEventQuery && cu.cuEventQuery((CUevent)b->ready) == CUDA_SUCCESS)
		b->zeroed = 1;
	return b->zeroed;
}

/* Does b suit a launch of layout key without clearing: cleared for it, or
 * never used; any buffer for key 0 (a layout with no counts to clear). */
static int pool_fits(const struct hook_buf *b, uint64_t key)
{
	return key == 0 || b->key == key || b->key == 0;
}

/* The key a launch asks the pool for: its layout's, or 0 when it has no
 * counts to clear (every unit stores its own: engine.h's count_clear). */
static uint64_t pool_want_key(const struct hook_zero *z)
{
	return z->n ? z->key : 0;
}

/* Better for a launch of layout key: one that fits, then smaller. */
static int pool_better(const struct hook_buf *b, const struct hook_buf *best, uint64_t key)
{
	int fits = pool_fits(b, key), best_fits = best && pool_fits(best, key);
	return !best || (fits && !best_fits) || (fits == best_fits && b->size < best->size);
}

/* The best free device buffer of ctx with at least `bytes` whose zeroing is
 * done; unlinked. The driver is asked about each candidate not yet known
 * zeroed (*busy = 1 when one is still being zeroed: a launch must not take
 * that one, its stream would wait for the hook's copies). With `ask` 0 it
 * is never asked: only buffers already known zeroed are taken (the launch
 * path's first try, with no driver call). */
static struct hook_buf *pool_take_ready(struct hook_buf **list, CUcontext ctx, uint64_t bytes, uint64_t key,
					int ask, int *busy)
{
	struct hook_buf **best = NULL;
	uint64_t fit = pool_round(bytes);
	for (struct hook_buf **p = list; *p; p = &(*p)->next) {
		struct hook_buf *b = *p;
		if (b->ctx != ctx || b->size < bytes || !pool_better(b, best ? *best : NULL, key))
			continue;
		if (!b->zeroed && (!ask || !pool_zeroed(b))) {
			*busy |= ask;
			continue;
		}
		best = p;
		if (pool_fits(b, key) && b->size == fit)
			break; /* none is better: the list can be long (slabs of small buffers) */
	}
	if (!best || (!ask && !pool_fits(*best, key)))
		return NULL;
	struct hook_buf *b = *best;
	*best = b->next;
	b->next = NULL;
	return b;
}

/* A buffer for a launch: a pooled one whose zeroing is done, else a new one
 * (warm-up, or a pool not yet as deep as the application's pace needs),
 * else, when the GPU has no room, one still being zeroed (the wait is then
 * the GPU's, stream-ordered). The stager is asked for spares whenever no
 * other ready buffer of the size is left. */
/* Where a clearing goes: behind b's copies back on the copy stream (the
 * collector), or, for a launch, on the clearing stream, so the launch waits
 * for this memset only, never for other buffers' copies; after b's own
 * last clearing (b->ready) when that may still be running. */
enum pool_zero_at { POOL_ZERO_AFTER_COPIES, POOL_ZERO_FOR_LAUNCH, POOL_ZERO_FOR_LAUNCH_AFTER_READY };

/* Zeroes rw's runs from p: one 2D memset, or a run at a time where the
 * driver lacks it or the pitch is too large. */
static CUresult pool_memset_rows(CUdeviceptr p, struct hook_rows rw, CUstream s)
{
	if (rw.rows <= 1)
		return cu.cuMemsetD8Async(p, 0, rw.len, s);
	if (cu.cuMemsetD2D8Async && rw.pitch <= HOOK_PITCH_MAX)
		return cu.cuMemsetD2D8Async(p, rw.pitch, 0, rw.len, rw.rows, s);
	CUresult rc = CUDA_SUCCESS;
	for (uint64_t r = 0; r < rw.rows && rc == CUDA_SUCCESS; r++)
		rc = cu.cuMemsetD8Async(p + r * rw.pitch, 0, rw.len, s);
	return rc;
}

/* Clears z's counts in b and records b->ready after. */
static int pool_zero(struct hook_buf *b, const struct hook_zero *z, enum pool_zero_at at)
{
	CUcontext ctx = (CUcontext)b->ctx;
	CUstream s = at == POOL_ZERO_AFTER_COPIES ? hook_pool_stream(ctx) : pool_clear_stream(ctx);
	if (s && at == POOL_ZERO_FOR_LAUNCH_AFTER_READY && cu.cuStreamWaitEvent(s, (CUevent)b->ready, 0) != CUDA_SUCCESS)
		return -1;
	for (int i = 0; s && i < z->n; i++)
		if (pool_memset_rows(b->ptr + z->off[i], z->runs[i], s) != CUDA_SUCCESS)
			return -1;
	if (!s || cu.cuEventRecord(b->ready, s) != CUDA_SUCCESS)
		return -1;
	b->key = z->key;
	b->zeroed = 0;
	b->gen++;
	return 0;
}

static struct hook_buf *pool_take_dev(CUcontext ctx, uint64_t bytes, const struct hook_zero *z, int *ready,
				      int *allocated_out, char **cause)
{
	struct hook_results *r = &hook.res;
	int busy = 0, allocated = 0;
	pthread_mutex_lock(&r->lock);
	struct hook_buf *b = pool_left(pool_take_ready(&r->dev_free, ctx, bytes, pool_want_key(z), 1, &busy));
	int last = pool_count(r->dev_free, ctx, bytes, 1) == 0;
	uint64_t depth = r->holding + 1;
	pthread_mutex_unlock(&r->lock);
	*ready = b != NULL;
	if (!b) {
		b = pool_alloc_dev(ctx, bytes, 0, busy ? NULL : cause);
		allocated = b != NULL;
		*ready = 0; /* new: its zeroing was only just queued */
	}
	int still_clearing = 0;
	if (!b && busy) {
		pthread_mutex_lock(&r->lock);
		b = pool_left(hook_buf_take(&r->dev_free, ctx, bytes));
		pthread_mutex_unlock(&r->lock);
		still_clearing = b != NULL;
		if (!b)
			cause_set(cause, "no map buffer free and no room on the GPU for another");
	}
	if (!b)
		return NULL;
	/* Cleared for another layout: clear this one's counts; the launch then
	 * waits for that (a change of kernel or launch shape only). */
	if (!pool_fits(b, pool_want_key(z))) {
		*ready = 0;
		if (pool_zero(b, z, still_clearing ? POOL_ZERO_FOR_LAUNCH_AFTER_READY : POOL_ZERO_FOR_LAUNCH) < 0) {
			hook_pool_put_dev(b);
			cause_set(cause, "clearing a map buffer failed");
			return NULL;
		}
	}
	if (allocated) {
		pthread_mutex_lock(&r->lock);
		r->launch_allocs++;
		pthread_mutex_unlock(&r->lock);
	}
	if (last)
		hook_stage_want_spare(ctx, bytes, allocated ? depth : 1);
	*allocated_out = allocated;
	return b;
}

/* On the application's launching thread, in relaxed capture mode: the
 * event queries (and any allocation) must not invalidate a global-mode
 * capture another application thread has in progress. */
/* A buffer already seen zeroed and cleared for this layout: no driver call
 * (most launches of a steady probing loop). */
static struct hook_buf *pool_take_seen(CUcontext ctx, uint64_t bytes, const struct hook_zero *z)
{
	struct hook_results *r = &hook.res;
	int busy = 0;
	pthread_mutex_lock(&r->lock);
	struct hook_buf *b = pool_left(pool_take_ready(&r->dev_free, ctx, bytes, pool_want_key(z), 0, &busy));
	int last = b && pool_count(r->dev_free, ctx, bytes, 1) == 0;
	pthread_mutex_unlock(&r->lock);
	/* The last one of its size: one spare made ahead by the stager (as
	 * the slow path asks when it did not allocate; more would have the
	 * stager's allocations stall the app's driver calls). */
	if (last)
		hook_stage_want_spare(ctx, bytes, 1);
	return b;
}

struct hook_buf *hook_pool_take_dev(CUcontext ctx, uint64_t bytes, const struct hook_zero *z, int *ready,
				    int *allocated, char **cause)
{
	struct hook_buf *b = pool_take_seen(ctx, bytes, z);
	*allocated = 0;
	if (b) {
		*ready = 1;
		return b;
	}
	CUstreamCaptureMode prev = hook_cuda_relax_begin();
	b = pool_take_dev(ctx, bytes, z, ready, allocated, cause);
	hook_cuda_relax_end(prev);
	return b;
}

/* How much the pool may hold in spares made ahead: twice the map budget, or
 * a quarter of the GPU's memory when that is more (dmat launches of
 * hundreds of MB each, probed at the app's pace, need that depth). */
static uint64_t pool_spare_cap(void)
{
	size_t free_b = 0, total_b = 0;
	uint64_t cap = 2 * hook.cfg.map_budget;
	if (cu.cuMemGetInfo_v2 && cu.cuMemGetInfo_v2(&free_b, &total_b) == CUDA_SUCCESS && total_b / 4 > cap)
		cap = total_b / 4;
	return cap;
}

/* Stager: at least n free device buffers of `bytes` in ctx, while the
 * pool is under its spare cap and the GPU has room. The cap (a driver call)
 * is asked only when a buffer is missing: most requests come from a launch
 * that took the last free buffer while its predecessor's was on its way
 * back, and the app's next launch must not meet our driver calls. */
void hook_pool_add_spares(CUcontext ctx, uint64_t bytes, uint64_t n)
{
	struct hook_results *r = &hook.res;
	uint64_t cap = 0;
	for (;;) {
		pthread_mutex_lock(&r->lock);
		int enough = pool_count(r->dev_free, ctx, bytes, n) >= n;
		uint64_t pooled = r->dev_pooled;
		pthread_mutex_unlock(&r->lock);
		if (enough || pooled + pool_round(bytes) > (cap ? cap : (cap = pool_spare_cap())))
			return;
		struct hook_buf *b = pool_alloc_dev(ctx, bytes, 1, NULL);
		if (!b)
			return;
		hook_pool_put_dev(b);
	}
}

/* Appended: the list stays oldest first, so the buffers least likely to be
 * still zeroing are looked at first. After the last buffer, where it is
 * known, not after a walk of the list under the lock the launch path
 * takes: a burst of one-block launches, whose pool holds about a thousand
 * buffers, ran at half the rate once slabs grew that large
 * (bench/app_cost.sh's burst). */
void hook_pool_put_dev(struct hook_buf *b)
{
	if (!b)
		return;
	struct hook_results *r = &hook.res;
	pthread_mutex_lock(&r->lock);
	struct hook_buf **p = r->dev_free_last ? &r->dev_free_last->next : &r->dev_free;
	while (*p)
		p = &(*p)->next;
	b->next = NULL;
	*p = b;
	r->dev_free_last = b;
	pthread_mutex_unlock(&r->lock);
}

/* Clears z's counts on the hook's stream, after whatever the stream already
 * holds (the copy back), then returns b to the pool. Only the counts: the
 * records past a unit's count are never read, and clearing them would take
 * memory bandwidth from the application's kernels. */
uint32_t hook_pool_recycle_dev_gen(struct hook_buf *b, const struct hook_zero *z)
{
	/* Cannot prove it cleared: keep it out of use (never freed: that would
	 * synchronise). */
	if (pool_zero(b, z, POOL_ZERO_AFTER_COPIES) < 0)
		return 0;
	uint32_t gen = b->gen;
	hook_pool_put_dev(b);
	return gen ? gen : 1;
}

/* Looked up in the free list rather than dereferenced: a launch may have
 * taken it meanwhile (and cleared it again: another gen). */
void hook_pool_mark_zeroed(struct hook_buf *b, uint32_t gen)
{
	pthread_mutex_lock(&hook.res.lock);
	for (struct hook_buf *p = hook.res.dev_free; p; p = p->next)
		if (p == b) {
			if (p->gen == gen)
				p->zeroed = 1;
			break;
		}
	pthread_mutex_unlock(&hook.res.lock);
}

/* Unlinks every buffer of ctx from *list into *out. */
static void pool_split(struct hook_buf **list, CUcontext ctx, struct hook_buf **out)
{
	for (struct hook_buf **p = list; *p;) {
		struct hook_buf *b = *p;
		if (b->ctx != ctx) {
			p = &b->next;
			continue;
		}
		*p = b->next;
		b->next = *out;
		*out = b;
	}
}

/* The context is about to be destroyed: its free device buffers and
 * stream go (their memory goes with the context; nothing is freed twice);
 * host staging is portable and stays. Buffers held by jobs in flight are
 * dropped by the collector when it sees the context gone. */
void hook_pool_ctx_gone(CUcontext ctx)
{
	struct hook_results *r = &hook.res;
	struct hook_buf *dev = NULL;
	pthread_mutex_lock(&r->lock);
	pool_split(&r->dev_free, ctx, &dev);
	r->dev_free_last = NULL;
	for (struct hook_copier **p = &r->copiers; *p;) {
		struct hook_copier *c = *p;
		if (c->ctx != ctx) {
			p = &c->next;
			continue;
		}
		*p = c->next;
		free(c);
	}
	for (struct hook_dev_slab **p = &r->dev_slabs; *p;) {
		struct hook_dev_slab *sl = *p;
		if (sl->ctx != ctx) {
			p = &sl->next;
			continue;
		}
		*p = sl->next;
		r->dev_pooled -= sl->len;
		free(sl);
	}
	pthread_mutex_unlock(&r->lock);
	while (dev) {
		struct hook_buf *n = dev->next;
		free(dev);
		dev = n;
	}
}
