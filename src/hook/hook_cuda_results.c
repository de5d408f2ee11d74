/* Map buffers and the result writer. Device buffers (cuMemAlloc) and pinned
 * host buffers (cuMemAllocHost) are pooled per context and reused; the bytes
 * of queued and running probed launches stay under NTOP_MAP_BUDGET. The
 * writer thread is the only place that waits on the GPU: it synchronises on
 * each job's `done` event (recorded on the application's stream after the
 * copy back), writes results/<pid>-<seq>.ntr, emits `result`, and returns
 * the buffers. Buffers are never freed while the process runs (cuMemFree
 * would synchronise the device). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "common/cause.h"
#include "common/timeutil.h"
#include "hook/hook_cuda.h"
#include "hook/hook_cuda_api.h"
#include "hook/hook_cuda_results.h"
#include "hook/hook_events.h"
#include "hook/hook_log.h"
#include "trace/events.h"
#include "trace/result.h"

#define RESULTS_ROUND ((uint64_t)1 << 20) /* buffer sizes round up to 1 MiB */

/* Best-fitting free buffer of ctx with at least `bytes`; unlinked. */
static struct hook_buf *results_take(struct hook_buf **list, CUcontext ctx, uint64_t bytes)
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

static struct hook_buf *results_alloc(CUcontext ctx, uint64_t bytes, int host, char **cause)
{
	struct hook_buf *b = calloc(1, sizeof *b);
	if (!b) {
		cause_set(cause, "out of host memory");
		return NULL;
	}
	b->ctx = ctx;
	b->size = (bytes + RESULTS_ROUND - 1) / RESULTS_ROUND * RESULTS_ROUND;
	CUstreamCaptureMode prev = hook_cuda_relax_begin();
	CUresult rc;
	if (host) {
		void *p = NULL;
		rc = cu.cuMemAllocHost_v2 ? cu.cuMemAllocHost_v2(&p, b->size) : CUDA_ERROR_NOT_FOUND;
		b->ptr = (uint64_t)(uintptr_t)p;
	} else {
		CUdeviceptr p = 0;
		rc = cu.cuMemAlloc_v2 ? cu.cuMemAlloc_v2(&p, b->size) : CUDA_ERROR_NOT_FOUND;
		b->ptr = p;
	}
	hook_cuda_relax_end(prev);
	if (rc != CUDA_SUCCESS) {
		cause_set(cause, "%s of %llu map bytes failed (CUDA error %d)", host ? "cuMemAllocHost" : "cuMemAlloc",
			  (unsigned long long)b->size, (int)rc);
		free(b);
		return NULL;
	}
	return b;
}

int hook_results_reserve(CUcontext ctx, uint64_t bytes, struct hook_buf **dev, struct hook_buf **host,
			 char **cause)
{
	struct hook_results *r = &hook.res;
	pthread_mutex_lock(&r->lock);
	if (r->in_flight + bytes > hook.cfg.map_budget) {
		uint64_t in = r->in_flight;
		pthread_mutex_unlock(&r->lock);
		return cause_set(cause, "map budget exhausted: %llu bytes needed, %llu in flight, budget %llu (%s)",
				 (unsigned long long)bytes, (unsigned long long)in,
				 (unsigned long long)hook.cfg.map_budget, "NTOP_MAP_BUDGET");
	}
	r->in_flight += bytes;
	*dev = results_take(&r->dev_free, ctx, bytes);
	*host = results_take(&r->host_free, ctx, bytes);
	pthread_mutex_unlock(&r->lock);
	if (!*dev)
		*dev = results_alloc(ctx, bytes, 0, cause);
	if (*dev && !*host)
		*host = results_alloc(ctx, bytes, 1, cause);
	if (*dev && *host)
		return 0;
	hook_results_release(*dev, *host, bytes);
	*dev = *host = NULL;
	return -1;
}

void hook_results_release(struct hook_buf *dev, struct hook_buf *host, uint64_t bytes)
{
	struct hook_results *r = &hook.res;
	pthread_mutex_lock(&r->lock);
	if (dev) {
		dev->next = r->dev_free;
		r->dev_free = dev;
	}
	if (host) {
		host->next = r->host_free;
		r->host_free = host;
	}
	r->in_flight -= bytes;
	pthread_mutex_unlock(&r->lock);
}

static void results_fill_map(struct result_map *rm, const struct engine_map *em, const uint8_t *base,
			     const struct hook_job *j, uint64_t *written, uint64_t *dropped, uint64_t *unsampled)
{
	uint64_t blocks = (uint64_t)j->grid[0] * j->grid[1] * j->grid[2];
	uint32_t threads = j->block[0] * j->block[1] * j->block[2];
	memset(rm, 0, sizeof *rm);
	rm->map = em->map;
	rm->units = engine_map_units(&em->map, blocks, threads);
	rm->counts = (uint32_t *)(uintptr_t)base;
	rm->records = (uint8_t *)(uintptr_t)(base + engine_map_records_offset(&em->map, blocks, threads));
	rm->slot_major = engine_map_slot_major(&em->map); /* the buffer as the device wrote it */
	rm->sample_shift = rm->slot_major ? j->sample_shift : 0;
	rm->rec_units = engine_map_rec_units(&em->map, blocks, threads, rm->sample_shift);
	rm->units_per_block = blocks ? rm->units / blocks : 1;
	if (!em->map.rec_size)
		return;
	result_map_derive_counts(rm);
	*written += rm->records_written;
	*dropped += rm->records_dropped;
	*unsampled += rm->records_unsampled;
}

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

static void results_write(struct hook_job *j)
{
	float ms = 0;
	if (cu.cuEventElapsedTime_v2 && cu.cuEventElapsedTime_v2(&ms, j->start, j->end) != CUDA_SUCCESS)
		ms = 0;
	struct result_map maps[ENGINE_MAX_MAPS];
	uint64_t written = 0, dropped = 0, unsampled = 0;
	for (int i = 0; i < j->plan->n_maps; i++)
		results_fill_map(&maps[i], &j->plan->maps[i], (const uint8_t *)(uintptr_t)j->host->ptr + j->map_off[i],
				 j, &written, &dropped, &unsampled);
	char probes[512];
	results_probe_names(j->plan, probes, sizeof probes);
	struct result r = {
		.pid = (uint32_t)hook.pid, .seq = j->seq, .kernel_id = j->k->kid, .kernel = j->k->name,
		.probes = probes, .grid = { j->grid[0], j->grid[1], j->grid[2] },
		.block = { j->block[0], j->block[1], j->block[2] }, .smem = j->smem,
		.device_sms = (uint32_t)j->device.sms, .device_cc = (uint32_t)j->device.cc,
		.sm_clock_khz = (uint32_t)j->device.clock_khz, .wall_ns = j->wall_ns,
		.duration_ns = (uint64_t)((double)ms * 1e6), .n_maps = j->plan->n_maps, .maps = maps,
	};
	char name[64], *cause = NULL;
	snprintf(name, sizeof name, "%d-%llu.ntr", hook.pid, (unsigned long long)j->seq);
	if (!hook.cfg.results_dir) {
		hook_event_warn("probed launch %llu: NTOP_TRACE_DIR is not set, result not written",
				(unsigned long long)j->seq);
		return;
	}
	mkdir(hook.cfg.results_dir, 0700);
	if (result_write(hook.cfg.results_dir, name, &r, &cause) < 0) {
		hook_event_warn("result %s: %s", name, cause ? cause : "write failed");
		free(cause);
		return;
	}
	struct strbuf sb;
	hook_event_begin(&sb, "result");
	event_add_int(&sb, "kid", j->k->kid);
	event_add_int(&sb, "seq", (long long)j->seq);
	event_addf(&sb, "file", "results/%s", name);
	event_add_int(&sb, "maps", j->plan->n_maps);
	event_add_int(&sb, "records", (long long)written);
	event_add_int(&sb, "dropped", (long long)dropped);
	if (j->sample_shift) {
		event_add_int(&sb, "sampled", 1ll << j->sample_shift);
		event_add_int(&sb, "unsampled", (long long)unsampled);
	}
	event_add_int(&sb, "bytes", (long long)j->bytes);
	event_add_int(&sb, "ns", (long long)r.duration_ns);
	hook_event_emit(&sb);
}

static void results_finish(struct hook_job *j, CUcontext *cur)
{
	if (*cur != j->ctx && cu.cuCtxSetCurrent && cu.cuCtxSetCurrent(j->ctx) == CUDA_SUCCESS)
		*cur = j->ctx;
	CUresult rc = cu.cuEventSynchronize ? cu.cuEventSynchronize(j->done) : CUDA_ERROR_NOT_FOUND;
	if (rc == CUDA_SUCCESS)
		results_write(j);
	else
		hook_event_warn("probed launch %llu of kernel %u failed on the device (CUDA error %d)",
				(unsigned long long)j->seq, j->k->kid, (int)rc);
	hook_event_put(j->ctx, j->start);
	hook_event_put(j->ctx, j->end);
	hook_event_put(j->ctx, j->done);
	hook_results_release(j->dev, j->host, j->bytes);
	free(j);
}

static void *results_thread(void *arg)
{
	(void)arg;
	struct hook_results *r = &hook.res;
	CUcontext cur = NULL;
	pthread_mutex_lock(&r->lock);
	for (;;) {
		while (!r->head && !r->stop)
			pthread_cond_wait(&r->wake, &r->lock);
		if (!r->head)
			break;
		struct hook_job *j = r->head;
		r->head = j->next;
		if (!r->head)
			r->tail = NULL;
		r->busy = 1;
		pthread_mutex_unlock(&r->lock);
		results_finish(j, &cur);
		pthread_mutex_lock(&r->lock);
		r->busy = 0;
		if (!r->head)
			pthread_cond_broadcast(&r->idle);
	}
	pthread_cond_broadcast(&r->idle);
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

void hook_results_submit(struct hook_job *job)
{
	struct hook_results *r = &hook.res;
	pthread_mutex_lock(&r->lock);
	job->next = NULL;
	if (r->tail)
		r->tail->next = job;
	else
		r->head = job;
	r->tail = job;
	if (!r->started && pthread_create(&r->thread, NULL, results_thread, NULL) == 0)
		r->started = 1;
	pthread_cond_signal(&r->wake);
	pthread_mutex_unlock(&r->lock);
}

void hook_results_shutdown(int timeout_ms)
{
	struct hook_results *r = &hook.res;
	struct timespec until;
	time_deadline(&until, timeout_ms * 1000000ll);
	pthread_mutex_lock(&r->lock);
	if (!r->started) {
		pthread_mutex_unlock(&r->lock);
		return;
	}
	r->stop = 1;
	pthread_cond_signal(&r->wake);
	int rc = 0;
	while ((r->head || r->busy) && rc == 0)
		rc = pthread_cond_timedwait(&r->idle, &r->lock, &until);
	int drained = !r->head && !r->busy;
	pthread_mutex_unlock(&r->lock);
	if (drained)
		pthread_join(r->thread, NULL);
	else
		hook_event_warn("exit: probed launches still running after %d ms, their results are lost", timeout_ms);
}

/* A fork child's inheritance from the parent's contexts: kept reachable,
 * never used (see timing_orphan_timed). */
static struct hook_job *results_orphan_jobs;
static struct hook_buf *results_orphan_bufs;

static void results_orphan_bufs_add(struct hook_buf *list)
{
	struct hook_buf *b = list;
	while (b && b->next)
		b = b->next;
	if (b) {
		b->next = results_orphan_bufs;
		results_orphan_bufs = list;
	}
}

void hook_results_fork_child(void)
{
	struct hook_results *r = &hook.res;
	if (r->tail) {
		r->tail->next = results_orphan_jobs;
		results_orphan_jobs = r->head;
	}
	results_orphan_bufs_add(r->dev_free);
	results_orphan_bufs_add(r->host_free);
	r->head = r->tail = NULL;
	r->busy = 0;
	r->dev_free = r->host_free = NULL;
	r->in_flight = 0;
	r->started = 0;
	r->stop = 0;
}
