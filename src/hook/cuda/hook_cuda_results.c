/* From a queued probed launch to its result file, off the application's
 * threads and streams. The collector thread waits for each probed kernel
 * (its `end` event), copies the maps' counts back on the hook's own stream,
 * works out how many record slots any unit used, copies back only those
 * (slot planes; a unit-major map whole, compacted on the host), then zeroes
 * the device buffer on the same stream and returns it to the pool. Writer
 * threads compress and write results/<pid>-<seq>.ntr and emit `result`.
 * Hook threads run in relaxed capture mode for their whole life, so nothing
 * they call can invalidate an application thread's stream capture.
 *
 * Nothing is dropped to keep up: a slow disk makes staging memory fill, the
 * collector waits for it, device buffers stay out longer and the pool grows
 * (while the GPU keeps its reserve). The backlog is reported in `results`
 * events; at exit every queued result is finished, for as long as results
 * keep coming out (RESULTS_STALL_NS without progress ends the wait, and the
 * results left are counted as lost). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "common/cause.h"
#include "common/timeutil.h"
#include "hook/cuda/hook_cuda.h"
#include "hook/cuda/hook_cuda_api.h"
#include "hook/cuda/hook_cuda_results.h"
#include "hook/hook_dir.h"
#include "hook/hook_events.h"
#include "hook/hook_result_file.h"
#include "hook/hook_log.h"
#include "hook/hook_signals.h"
#include "trace/events.h"
#include "trace/result.h"

#define RESULTS_STAGING_MIN ((uint64_t)2 << 30) /* pinned staging held by unwritten results */
#define RESULTS_STALL_NS 60000000000ull         /* exit: give up after 60 s without progress */
#define RESULTS_PROGRESS_NS 1000000000ull       /* exit: a `results` line a second */
#define RESULTS_LET_GO_NS 200000ull               /* results_let_app_go: the longest wait */
#define RESULTS_POLL_NS 50000ull                  /* the collector, awake, looks this often */
#define RESULTS_LINGER_NS 10000000ull             /* ... for this long after its last job */
#define RESULTS_BOUNCE ((uint64_t)4 << 20)        /* results_dtoh: pinned chunk (one pinned slab) */

static uint64_t results_staging_cap(void)
{
	uint64_t cap = 2 * hook.cfg.map_budget;
	return cap > RESULTS_STAGING_MIN ? cap : RESULTS_STAGING_MIN;
}

static void results_emit_backlog(const char *why)
{
	struct hook_results *r = &hook.res;
	if (!hook_events_on())
		return;
	pthread_mutex_lock(&r->lock);
	uint64_t v[] = { r->pending, r->written, r->failed, r->launch_allocs, r->dev_pooled, r->host_pooled,
			 r->collect_ns / 1000000, r->write_ns / 1000000, r->dev_allocs, r->cpu_launches,
			 r->cpu_pre_ns / 1000, r->cpu_post_ns / 1000, r->zero_waits, r->host_pageable,
			 __atomic_load_n(&r->staged, __ATOMIC_RELAXED), r->host_pins, r->page_pooled, r->dev_given,
			 r->dev_peak };
	pthread_mutex_unlock(&r->lock);
	struct strbuf sb;
	hook_event_begin(&sb, "results");
	event_add(&sb, "at", why);
	event_add_int(&sb, "pending", (long long)v[0]);
	event_add_int(&sb, "written", (long long)v[1]);
	event_add_int(&sb, "failed", (long long)v[2]);
	event_add_int(&sb, "launch_allocs", (long long)v[3]);
	event_add_int(&sb, "dev_allocs", (long long)v[8]);
	event_add_int(&sb, "dev_pooled", (long long)v[4]);
	event_add_int(&sb, "dev_peak", (long long)v[18]);
	event_add_int(&sb, "dev_given", (long long)v[17]);
	event_add_int(&sb, "host_pooled", (long long)v[5]);
	event_add_int(&sb, "host_pins", (long long)v[15]);
	event_add_int(&sb, "host_pageable", (long long)v[13]);
	event_add_int(&sb, "page_pooled", (long long)v[16]);
	event_add_int(&sb, "collect_ms", (long long)v[6]);
	event_add_int(&sb, "write_ms", (long long)v[7]);
	event_add_int(&sb, "probed", (long long)v[9]);
	event_add_int(&sb, "cpu_pre_us", (long long)v[10]);
	event_add_int(&sb, "cpu_post_us", (long long)v[11]);
	event_add_int(&sb, "zero_waits", (long long)v[12]);
	event_add_int(&sb, "staged", (long long)v[14]);
	hook_event_emit(&sb);
}

/* ---- the collector: copy back what was written ---- */

static uint64_t align16(uint64_t v)
{
	return (v + 15) & ~(uint64_t)15;
}

/* A result_map over the job's staging for map i (counts always; records
 * once copied). */
static void results_map_view(const struct hook_job *j, int i, struct result_map *rm)
{
	const struct engine_map *em = &j->plan->maps[i];
	const struct hook_copy *c = &j->copy[i];
	uint64_t blocks = (uint64_t)j->grid[0] * j->grid[1] * j->grid[2];
	memset(rm, 0, sizeof *rm);
	rm->map = em->map;
	rm->units = c->units;
	rm->counts = (uint32_t *)(uintptr_t)(j->counts->ptr + c->counts_off);
	rm->records = j->recs ? (uint8_t *)(uintptr_t)(j->recs->ptr + c->rec_off) : NULL;
	rm->stored = c->stored;
	rm->slot_major = engine_map_slot_major(&em->map);
	rm->sample_shift = engine_map_sampled(&em->map) ? j->sample_shift : 0;
	rm->sample_prefix = engine_map_sample_prefix(&em->map);
	rm->rec_units = c->rec_units;
	rm->units_per_block = blocks ? rm->units / blocks : 1;
	rm->counts_kept_only = c->counts.kept_only;
}

/* n bytes from the device into staging dst at off: one async copy into
 * pinned staging; ordinary staging (hook_staging_take) through two
 * pinned buffers, a chunk at a time, the next chunk's copy running while
 * the last one is copied out, on the collector's clock. */
static CUresult results_dtoh(CUcontext ctx, struct hook_buf *dst, uint64_t off, CUdeviceptr src, uint64_t n,
			     CUstream s)
{
	if (!dst->pageable)
		return cu.cuMemcpyDtoHAsync_v2((void *)(uintptr_t)(dst->ptr + off), src, n, s);
	uint64_t chunk = hook.cfg.pinned_max < RESULTS_BOUNCE ? hook.cfg.pinned_max : RESULTS_BOUNCE;
	struct hook_buf *b[2] = { hook_staging_take_pinned(ctx, chunk, NULL), NULL };
	if (!b[0])
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (n > chunk)
		b[1] = hook_staging_take_pinned(ctx, chunk, NULL);
	int nb = b[1] ? 2 : 1;
	uint64_t len = n < chunk ? n : chunk;
	CUresult rc = cu.cuMemcpyDtoHAsync_v2((void *)(uintptr_t)b[0]->ptr, src, len, s);
	for (uint64_t done = 0, i = 0; done < n && rc == CUDA_SUCCESS; i++) {
		rc = hook_pool_wait(ctx, s); /* chunk i is in b[i % nb] */
		uint64_t next = done + len, next_len = n - next < chunk ? n - next : chunk;
		if (rc == CUDA_SUCCESS && nb == 2 && next < n)
			rc = cu.cuMemcpyDtoHAsync_v2((void *)(uintptr_t)b[(i + 1) % 2]->ptr, src + next, next_len, s);
		if (rc == CUDA_SUCCESS)
			memcpy((void *)(uintptr_t)(dst->ptr + off + done), (void *)(uintptr_t)b[i % nb]->ptr, len);
		if (rc == CUDA_SUCCESS && nb == 1 && next < n)
			rc = cu.cuMemcpyDtoHAsync_v2((void *)(uintptr_t)b[0]->ptr, src + next, next_len, s);
		done = next;
		len = next_len;
	}
	/* a copy may still be under way after a failure: the bounce buffers
	 * go back only once the stream is idle */
	void (*give)(struct hook_buf *) = rc == CUDA_SUCCESS || hook_pool_wait(ctx, s) == CUDA_SUCCESS
						  ? hook_staging_put
						  : hook_staging_drop;
	give(b[0]);
	give(b[1]);
	return rc;
}

struct hook_rows hook_counts_rows(const struct engine_result *plan, int i, uint64_t blocks, uint32_t threads,
				  uint32_t shift)
{
	const struct probe_map *m = &plan->maps[i].map;
	uint64_t units = engine_map_units(m, blocks, threads);
	struct hook_rows rw = { units * 4, units * 4, 1, 0 };
	if (!engine_map_sampled(m) || !shift || !blocks || plan->maps[i].count_static)
		return rw;
	uint64_t upb = units / blocks, kept = engine_map_rec_units(m, blocks, threads, shift);
	rw.kept_only = 1;
	if (engine_map_sample_prefix(m)) { /* the first blocks': one run */
		rw.len = rw.pitch = kept * 4;
		return rw;
	}
	rw.len = upb * 4;
	rw.pitch = rw.len << shift;
	rw.rows = kept / upb;
	return rw;
}

/* rw's runs from src, packed one after the other into staging dst at off:
 * one 2D copy into pinned staging, else a run at a time. */
static CUresult results_dtoh_rows(CUcontext ctx, struct hook_buf *dst, uint64_t off, CUdeviceptr src,
				  struct hook_rows rw, CUstream s)
{
	if (rw.rows <= 1)
		return results_dtoh(ctx, dst, off, src, rw.len, s);
	if (!dst->pageable && cu.cuMemcpy2DAsync_v2 && rw.pitch <= HOOK_PITCH_MAX) {
		CUDA_MEMCPY2D c = {
			.srcMemoryType = CU_MEMORYTYPE_DEVICE, .srcDevice = src, .srcPitch = rw.pitch,
			.dstMemoryType = CU_MEMORYTYPE_HOST, .dstHost = (void *)(uintptr_t)(dst->ptr + off),
			.dstPitch = rw.len, .WidthInBytes = rw.len, .Height = rw.rows,
		};
		return cu.cuMemcpy2DAsync_v2(&c, s);
	}
	CUresult rc = CUDA_SUCCESS;
	for (uint64_t r = 0; r < rw.rows && rc == CUDA_SUCCESS; r++)
		rc = results_dtoh(ctx, dst, off + r * rw.len, src + r * rw.pitch, rw.len, s);
	return rc;
}

/* Counts the kernel stored come back from the device (a sampled map's kept
 * blocks' only: the others stored none); a map whose kernel stores none
 * (engine.h) gets its constant here, on the collector's clock. */
static CUresult results_copy_counts(struct hook_job *j, CUstream s)
{
	int queued = 0;
	for (int i = 0; i < j->plan->n_maps; i++) {
		const struct hook_copy *c = &j->copy[i];
		if (j->plan->maps[i].count_static) {
			uint32_t *dst = (uint32_t *)(uintptr_t)(j->counts->ptr + c->counts_off);
			for (uint64_t u = 0; u < c->units; u++)
				dst[u] = j->plan->maps[i].count_bytes;
			continue;
		}
		CUresult rc = results_dtoh_rows(j->ctx, j->counts, c->counts_off, j->dev->ptr + j->map_off[i], c->counts, s);
		if (rc != CUDA_SUCCESS)
			return rc;
		queued = 1;
	}
	/* the records' sizes are read from the counts: wait for any copied */
	return queued ? hook_pool_wait(j->ctx, s) : CUDA_SUCCESS;
}

/* Staging bytes map i's copy needs: the stored slot planes of a slot-major
 * map; every slot of a unit-major one, compacted on the host afterwards (a
 * 2D copy of one short row per warp is far slower than the bytes saved). */
static uint64_t results_copy_bytes(const struct hook_job *j, int i)
{
	const struct probe_map *m = &j->plan->maps[i].map;
	const struct hook_copy *c = &j->copy[i];
	uint32_t slots = c->stored && !engine_map_slot_major(m) ? m->cap : c->stored;
	return (uint64_t)slots * m->rec_size * c->rec_units;
}

/* Queues the copy of map i's records into the job's record staging. */
static CUresult results_copy_records(struct hook_job *j, int i, CUstream s)
{
	const struct probe_map *m = &j->plan->maps[i].map;
	uint64_t blocks = (uint64_t)j->grid[0] * j->grid[1] * j->grid[2];
	uint32_t threads = j->block[0] * j->block[1] * j->block[2];
	CUdeviceptr src = j->dev->ptr + j->map_off[i] + engine_map_records_offset(m, blocks, threads);
	uint64_t n = results_copy_bytes(j, i);
	if (n == 0)
		return CUDA_SUCCESS;
	return results_dtoh(j->ctx, j->recs, j->copy[i].rec_off, src, n, s);
}

/* Unit-major maps came back with every slot: keep the first `stored` of
 * each unit, in place (rows only move towards the start). */
static void results_compact(struct hook_job *j, int i)
{
	const struct probe_map *m = &j->plan->maps[i].map;
	const struct hook_copy *c = &j->copy[i];
	if (engine_map_slot_major(m) || c->stored == 0 || c->stored == m->cap)
		return;
	uint8_t *base = (uint8_t *)(uintptr_t)(j->recs->ptr + c->rec_off);
	size_t row = (size_t)c->stored * m->rec_size, pitch = (size_t)m->cap * m->rec_size;
	for (uint64_t u = 1; u < c->rec_units; u++)
		memmove(base + u * row, base + u * pitch, row);
}

/* Waits for staging room (writers give it back); a job larger than the cap
 * still goes through once nothing else is held. */
static void results_wait_room(uint64_t need)
{
	struct hook_results *r = &hook.res;
	pthread_mutex_lock(&r->lock);
	while (r->host_busy > 0 && r->host_busy + need > results_staging_cap() && !r->stop)
		pthread_cond_wait(&r->room, &r->lock);
	pthread_mutex_unlock(&r->lock);
}

/* j's device buffer back to the pool, cleared behind its copies; the jobs
 * still holding one say how many spares a launch short of one asks for
 * (not the results waiting to be written: they hold host staging only). */
static uint32_t results_give_dev(struct hook_job *j)
{
	uint32_t gen = hook_pool_recycle_dev_gen(j->dev, &j->zero);
	j->dev = NULL;
	pthread_mutex_lock(&hook.res.lock);
	hook.res.holding--;
	pthread_mutex_unlock(&hook.res.lock);
	return gen;
}

/* Counts, then the records they say were written; the device buffer goes
 * back zeroed. 0, or -1 with a cause. */
static int results_copy_back(struct hook_job *j, char **cause)
{
	CUstream s = hook_pool_stream(j->ctx);
	if (!s)
		return cause_set(cause, "cannot create the hook's copy stream");
	uint64_t blocks = (uint64_t)j->grid[0] * j->grid[1] * j->grid[2];
	uint32_t threads = j->block[0] * j->block[1] * j->block[2];
	uint64_t counts_bytes = 0;
	for (int i = 0; i < j->plan->n_maps; i++) {
		const struct probe_map *m = &j->plan->maps[i].map;
		struct hook_copy *c = &j->copy[i];
		c->units = engine_map_units(m, blocks, threads);
		uint32_t shift = engine_map_sampled(m) ? j->sample_shift : 0;
		c->rec_units = engine_map_rec_units(m, blocks, threads, shift);
		c->counts = hook_counts_rows(j->plan, i, blocks, threads, j->sample_shift);
		c->counts_off = counts_bytes;
		counts_bytes += align16((c->counts.kept_only ? c->rec_units : c->units) * 4);
	}
	results_wait_room(counts_bytes);
	CUresult rc;
	if (!(j->counts = hook_staging_take(j->ctx, counts_bytes ? counts_bytes : 16, cause)))
		return -1;
	if ((rc = results_copy_counts(j, s)) != CUDA_SUCCESS)
		return cause_set(cause, "copying the counts back failed (CUDA error %d)", (int)rc);
	uint64_t rec_bytes = 0;
	for (int i = 0; i < j->plan->n_maps; i++) {
		struct result_map rm;
		results_map_view(j, i, &rm);
		j->copy[i].stored = result_map_most_records(&rm);
		j->copy[i].rec_off = rec_bytes;
		rec_bytes += align16(results_copy_bytes(j, i));
	}
	if (rec_bytes) {
		results_wait_room(rec_bytes);
		if (!(j->recs = hook_staging_take(j->ctx, rec_bytes, cause)))
			return -1;
	}
	for (int i = 0; i < j->plan->n_maps && rec_bytes; i++)
		if ((rc = results_copy_records(j, i, s)) != CUDA_SUCCESS)
			return cause_set(cause, "copying map %d back failed (CUDA error %d)", i, (int)rc);
	/* Stream order: the zeroing runs after the copies it must not spoil;
	 * the buffer is pooled at once (a launch short of memory may take it and
	 * wait), and the wait for the copies then proves it zeroed. */
	struct hook_buf *dev = j->dev;
	uint32_t gen = results_give_dev(j);
	rc = hook_pool_wait(j->ctx, s);
	if (gen && rc == CUDA_SUCCESS)
		hook_pool_mark_zeroed(dev, gen);
	if (rc != CUDA_SUCCESS)
		return cause_set(cause, "copying the records back failed (CUDA error %d)", (int)rc);
	for (int i = 0; i < j->plan->n_maps; i++)
		results_compact(j, i);
	return 0;
}

static void results_queue_write(struct hook_job *j)
{
	struct hook_results *r = &hook.res;
	pthread_mutex_lock(&r->lock);
	j->next = NULL;
	if (r->write_tail)
		r->write_tail->next = j;
	else
		r->write_head = j;
	r->write_tail = j;
	pthread_cond_signal(&r->wake_w);
	pthread_mutex_unlock(&r->lock);
}

/* After a failed copy back: the job's staging goes back only once the
 * hook's stream is idle (a copy may still be writing it). */
static void results_unstage_failed(struct hook_job *j)
{
	CUstream s = hook_pool_stream(j->ctx);
	if (s && hook_pool_wait(j->ctx, s) == CUDA_SUCCESS)
		return;
	hook_staging_drop(j->counts);
	hook_staging_drop(j->recs);
	j->counts = j->recs = NULL;
}

/* A job ends here, written or not. */
static void results_done(struct hook_job *j, int written)
{
	hook_probe_job_events_put(j);
	if (j->dev)
		results_give_dev(j);
	hook_staging_put(j->counts);
	hook_staging_put(j->recs);
	struct hook_results *r = &hook.res;
	pthread_mutex_lock(&r->lock);
	r->pending--;
	if (written)
		r->written++;
	else
		r->failed++;
	pthread_cond_broadcast(&r->idle);
	pthread_mutex_unlock(&r->lock);
	free(j);
}

/* A probed kernel just ended. An app that waits for each launch queues its
 * next work right now, while its GPU idles; our copies back would compete
 * with it for the driver (on an H100 its next launch took ~1-2 us longer).
 * So unless the app has queued a launch since this one (it did not wait),
 * let it queue one first, or 200 us pass. */
static void results_let_app_go(struct hook_results *r, const struct hook_job *j)
{
	uint64_t t0 = time_mono_ns();
	while (__atomic_load_n(&r->app_queued, __ATOMIC_ACQUIRE) == j->app_queued &&
	       !__atomic_load_n(&r->draining, __ATOMIC_ACQUIRE) && time_mono_ns() - t0 < RESULTS_LET_GO_NS) {
		struct timespec ts = { 0, HOOK_WAIT_NAP_NS };
		nanosleep(&ts, NULL);
	}
}

static void results_collect(struct hook_job *j, struct hook_ctx_held *held)
{
	hook_cuda_hold_ctx(held, j->ctx);
	CUresult rc = hook_event_wait_quiet(j->end);
	if (rc != CUDA_SUCCESS) {
		hook_event_warn("probed launch %llu of kernel %u failed on the device (CUDA error %d)",
				(unsigned long long)j->seq, j->k->kid, (int)rc);
		results_done(j, 0);
		return;
	}
	if (!j->start || !cu.cuEventElapsedTime_v2 ||
	    cu.cuEventElapsedTime_v2(&j->ms, j->start, j->end) != CUDA_SUCCESS)
		j->ms = 0; /* not sampled for timing: the result says ns=0, unknown */
	results_let_app_go(&hook.res, j);
	char *cause = NULL;
	if (results_copy_back(j, &cause) < 0) {
		hook_event_warn("probed launch %llu of kernel %u: %s, result lost", (unsigned long long)j->seq,
				j->k->kid, cause ? cause : "copy back failed");
		free(cause);
		results_unstage_failed(j);
		results_done(j, 0);
		return;
	}
	results_queue_write(j);
}

static void *results_collector(void *arg)
{
	(void)arg;
	hook_cuda_relax_begin(); /* for the thread's whole life */
	prctl(PR_SET_TIMERSLACK, HOOK_TIMER_SLACK_NS, 0, 0, 0);
	struct hook_results *r = &hook.res;
	struct hook_ctx_held held = { 0 };
	pthread_mutex_lock(&r->lock);
	for (;;) {
		/* after a job it stays awake (hook_linger.h): a probed launch hands
		 * its job over without waking it */
		while (!r->collect_head && !r->stop)
			if (hook_linger_poll(&r->linger, &r->wake, &r->lock, RESULTS_POLL_NS, RESULTS_LINGER_NS))
				hook_linger_nap(&r->linger, &r->wake, &r->lock);
		hook_linger_busy(&r->linger);
		struct hook_job *j = r->collect_head;
		if (!j)
			break;
		r->collect_head = j->next;
		if (!r->collect_head)
			r->collect_tail = NULL;
		pthread_mutex_unlock(&r->lock);
		uint64_t t0 = time_mono_ns();
		results_collect(j, &held);
		pthread_mutex_lock(&r->lock);
		r->collect_ns += time_mono_ns() - t0;
	}
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

/* ---- writers ---- */

static void results_probe_names(const struct engine_result *plan, char *buf, size_t len)
{
	buf[0] = 0;
	for (int i = 0; i < plan->n_maps; i++) {
		if (i && strstr(buf, plan->maps[i].probe))
			continue;
		size_t n = strlen(buf);
		snprintf(buf + n, len - n, "%s%s", n ? "," : "", plan->maps[i].probe);
	}
}

/* 1 when the result file was written. */
static int results_write(struct hook_job *j)
{
	struct result_map maps[ENGINE_MAX_MAPS];
	for (int i = 0; i < j->plan->n_maps; i++) {
		results_map_view(j, i, &maps[i]);
		result_map_derive_counts(&maps[i]);
	}
	char probes[512];
	results_probe_names(j->plan, probes, sizeof probes);
	struct result r = {
		.pid = (uint32_t)hook.pid, .seq = j->seq, .kernel_id = j->k->kid, .kernel = j->k->name,
		.probes = probes, .grid = { j->grid[0], j->grid[1], j->grid[2] },
		.block = { j->block[0], j->block[1], j->block[2] }, .smem = j->smem,
		.device_sms = (uint32_t)j->device.sms, .device_cc = (uint32_t)j->device.cc,
		.sm_clock_khz = (uint32_t)j->device.clock_khz, .wall_ns = j->wall_ns,
		.duration_ns = (uint64_t)((double)j->ms * 1e6), .n_maps = j->plan->n_maps, .maps = maps,
		.sites = j->plan->sites, /* the build's, only read */
	};
	return hook_result_publish(&r, j->bytes, j->sample_shift);
}

static void *results_writer(void *arg)
{
	(void)arg;
	hook_cuda_relax_begin();
	struct hook_results *r = &hook.res;
	pthread_mutex_lock(&r->lock);
	for (;;) {
		while (!r->write_head && !r->stop)
			pthread_cond_wait(&r->wake_w, &r->lock);
		struct hook_job *j = r->write_head;
		if (!j)
			break;
		r->write_head = j->next;
		if (!r->write_head)
			r->write_tail = NULL;
		pthread_mutex_unlock(&r->lock);
		uint64_t t0 = time_mono_ns();
		results_done(j, results_write(j));
		pthread_mutex_lock(&r->lock);
		r->write_ns += time_mono_ns() - t0;
	}
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

/* ---- submission, drain, fork ---- */

static int results_writers_wanted(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN) / 4;
	if (n < 1)
		n = 1;
	return n > 4 ? 4 : (int)n;
}

/* Under r->lock. */
static void results_start_locked(struct hook_results *r)
{
	if (r->started)
		return;
	if (hook_thread_create(&r->collector, results_collector, NULL) != 0)
		return;
	r->n_writers = 0;
	int want = results_writers_wanted();
	for (int i = 0; i < want; i++)
		if (hook_thread_create(&r->writers[r->n_writers], results_writer, NULL) == 0)
			r->n_writers++;
	__atomic_store_n(&r->started, 1, __ATOMIC_RELEASE); /* hook_results_note_queued reads it unlocked */
}

void hook_results_count_launch(uint64_t pre_ns, uint64_t post_ns, int waited)
{
	struct hook_results *r = &hook.res;
	__atomic_add_fetch(&r->cpu_pre_ns, pre_ns, __ATOMIC_RELAXED);
	__atomic_add_fetch(&r->cpu_post_ns, post_ns, __ATOMIC_RELAXED);
	__atomic_add_fetch(&r->cpu_launches, 1, __ATOMIC_RELAXED);
	if (waited)
		__atomic_add_fetch(&r->zero_waits, 1, __ATOMIC_RELAXED);
}

uint64_t hook_results_app_queued(void)
{
	return __atomic_add_fetch(&hook.res.app_queued, 1, __ATOMIC_RELEASE);
}

/* An unprobed launch: counted only once a collector may be waiting for
 * one (results_let_app_go); a run that probes nothing pays no atomic. */
void hook_results_note_queued(void)
{
	if (__atomic_load_n(&hook.res.started, __ATOMIC_RELAXED))
		hook_results_app_queued();
}

void hook_results_start(void)
{
	pthread_mutex_lock(&hook.res.lock);
	results_start_locked(&hook.res);
	pthread_mutex_unlock(&hook.res.lock);
}

void hook_results_submit(struct hook_job *job)
{
	struct hook_results *r = &hook.res;
	/* the launch's wall time, read once its kernel is queued: a clock read
	 * takes ~46 ns on the H200's host (bench/driver_calls.c), GPU idle
	 * time before the kernel */
	job->wall_ns = time_wall_ns();
	pthread_mutex_lock(&r->lock);
	job->next = NULL;
	if (r->collect_tail)
		r->collect_tail->next = job;
	else
		r->collect_head = job;
	r->collect_tail = job;
	r->pending++;
	r->holding++;
	results_start_locked(r);
	if (r->linger.napping)
		pthread_cond_signal(&r->wake);
	pthread_mutex_unlock(&r->lock);
}

void hook_results_tick(void)
{
	static uint64_t last_pending = 0, last_written = 0;
	struct hook_results *r = &hook.res;
	pthread_mutex_lock(&r->lock);
	int moved = r->pending != last_pending || r->written != last_written;
	int show = moved && (r->pending > 0 || last_pending > 0);
	last_pending = r->pending;
	last_written = r->written;
	pthread_mutex_unlock(&r->lock);
	if (show)
		results_emit_backlog("run");
}

/* Waits (under r->lock) for every queued result while results keep coming
 * out; with `say`, a `results at=exit` line every second. */
static void results_drain(struct hook_results *r, int say)
{
	uint64_t last_done = r->written + r->failed, last_move = time_mono_ns(), last_say = last_move;
	while (r->pending > 0) {
		struct timespec until;
		time_deadline(&until, 100000000ll);
		pthread_cond_timedwait(&r->idle, &r->lock, &until);
		uint64_t now = time_mono_ns(), done = r->written + r->failed;
		if (done != last_done) {
			last_done = done;
			last_move = now;
		}
		if (now - last_move > RESULTS_STALL_NS)
			break;
		if (say && now - last_say >= RESULTS_PROGRESS_NS && r->pending > 0) {
			last_say = now;
			pthread_mutex_unlock(&r->lock);
			results_emit_backlog("exit");
			pthread_mutex_lock(&r->lock);
		}
	}
}

void hook_results_shutdown(void)
{
	struct hook_results *r = &hook.res;
	pthread_mutex_lock(&r->lock);
	if (!r->started) {
		pthread_mutex_unlock(&r->lock);
		return;
	}
	__atomic_store_n(&r->draining, 1, __ATOMIC_RELEASE);
	results_drain(r, 1);
	uint64_t lost = r->pending;
	r->stop = 1;
	pthread_cond_broadcast(&r->wake);
	pthread_cond_broadcast(&r->wake_w);
	pthread_cond_broadcast(&r->room);
	pthread_mutex_unlock(&r->lock);
	if (lost) {
		hook_event_warn("exit: %llu probed launches made no progress for %llu s, their results are lost",
				(unsigned long long)lost, (unsigned long long)(RESULTS_STALL_NS / 1000000000ull));
	} else {
		pthread_join(r->collector, NULL);
		for (int i = 0; i < r->n_writers; i++)
			pthread_join(r->writers[i], NULL);
	}
	results_emit_backlog("final");
}

int hook_results_wait_held(uint64_t ns)
{
	struct hook_results *r = &hook.res;
	pthread_mutex_lock(&r->lock);
	uint64_t held = r->holding, now = time_mono_ns(), end = now + ns;
	/* An app that searches for what it can allocate fails many times in a
	 * row: it waits once, not at each failure. */
	if (r->oom_wait_ns && now - r->oom_wait_ns < ns)
		held = 0;
	/* nothing waits for the app meanwhile, nor makes jobs ahead */
	int was = held ? __atomic_exchange_n(&r->draining, 1, __ATOMIC_ACQ_REL) : 1;
	while (held && r->holding > 0 && time_mono_ns() < end) {
		struct timespec until;
		time_deadline(&until, 10000000ll);
		pthread_cond_timedwait(&r->idle, &r->lock, &until);
	}
	if (!was)
		__atomic_store_n(&r->draining, 0, __ATOMIC_RELEASE);
	if (held)
		r->oom_wait_ns = time_mono_ns();
	int back = r->holding < held;
	uint64_t left = r->holding;
	pthread_mutex_unlock(&r->lock);
	if (held)
		hook_log("out of memory: waited %llu ms for %llu results in flight to give their map buffers back "
			 "(%llu still hold one)", (unsigned long long)((time_mono_ns() - now) / 1000000),
			 (unsigned long long)held, (unsigned long long)left);
	return back;
}

/* The context is about to go: finish the results in flight first (their
 * buffers die with it; a job in a thread's hands is on no list, so all of
 * them are waited for, while results keep coming out), then forget its
 * pools and copy stream. */
void hook_results_ctx_gone(CUcontext ctx)
{
	struct hook_results *r = &hook.res;
	pthread_mutex_lock(&r->lock);
	__atomic_store_n(&r->draining, 1, __ATOMIC_RELEASE);
	results_drain(r, 0);
	pthread_mutex_unlock(&r->lock);
	hook_stage_ctx_gone(ctx); /* jobs made ahead there, and any being made */
	hook_pool_ctx_gone(ctx);
	hook_staging_ctx_gone(ctx);
	__atomic_store_n(&r->draining, 0, __ATOMIC_RELEASE);
}

/* A fork child's inheritance from the parent's contexts: kept reachable,
 * never used (see timing_orphan_timed). */
static struct hook_job *results_orphan_jobs;
static struct hook_buf *results_orphan_bufs;
static struct hook_dev_slab *results_orphan_slabs;
static struct hook_copier *results_orphan_copiers;

static void results_orphan_jobs_add(struct hook_job *head, struct hook_job *tail)
{
	if (!tail)
		return;
	tail->next = results_orphan_jobs;
	results_orphan_jobs = head;
}

/* Puts a list linked by `next` in front of `orphans` (lists of any type). */
#define RESULTS_ORPHANS_ADD(orphans, list)                   \
	do {                                                 \
		__typeof__(list) last_ = (list);             \
		while (last_ && last_->next)                 \
			last_ = last_->next;                 \
		if (last_) {                                 \
			last_->next = (orphans);             \
			(orphans) = (list);                  \
		}                                            \
	} while (0)

void hook_results_fork_child(void)
{
	struct hook_results *r = &hook.res;
	results_orphan_jobs_add(r->collect_head, r->collect_tail);
	results_orphan_jobs_add(r->write_head, r->write_tail);
	RESULTS_ORPHANS_ADD(results_orphan_bufs, r->dev_free);
	RESULTS_ORPHANS_ADD(results_orphan_bufs, r->host_free);
	RESULTS_ORPHANS_ADD(results_orphan_bufs, r->page_free);
	RESULTS_ORPHANS_ADD(results_orphan_slabs, r->dev_slabs);
	RESULTS_ORPHANS_ADD(results_orphan_copiers, r->copiers);
	r->collect_head = r->collect_tail = r->write_head = r->write_tail = NULL;
	r->dev_free = r->host_free = r->page_free = NULL;
	r->dev_free_last = NULL;
	r->dev_slabs = NULL;
	memset(r->dev_growing, 0, sizeof r->dev_growing); /* the threads allocating them are gone */
	r->copiers = NULL;
	r->dev_pooled = r->dev_peak = r->host_pooled = r->host_busy = r->host_pins = r->page_pooled = r->host_pageable = 0;
	r->pending = r->holding = r->written = r->failed = r->launch_allocs = 0;
	r->cpu_pre_ns = r->cpu_post_ns = r->cpu_launches = r->zero_waits = r->staged = 0;
	r->collect_ns = r->write_ns = r->dev_allocs = r->dev_given = r->app_oom_ns = r->oom_wait_ns = 0;
	r->n_writers = 0;
	r->started = 0;
	r->stop = 0;
	r->linger = (struct hook_linger){ 0 };
}
