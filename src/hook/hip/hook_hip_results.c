/* Probed HIP launches after the launch path: map buffers from hipMalloc
 * in a pool per device (zeroed when made and after each use, on the hook's
 * own stream), and one collector thread that waits for each probed
 * kernel's end event, copies its maps back on the hook's stream, writes
 * the result file (hook_result_file.c) and recycles the buffer. The
 * application's streams never wait on anything of ours. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "common/cause.h"
#include "engine/amdgpu/amdgpu_map.h"
#include "hook/hook_events.h"
#include "hook/hip/hook_hip.h"
#include "hook/hook_log.h"
#include "hook/hook_result_file.h"
#include "hook/hook_signals.h"
#include "trace/result.h"

#define HIP_POOL_MAX 16 /* free buffers kept per device */
#define HIP_DRAIN_IDLE_NS (60ull * 1000000000ull)

struct hip_free_buf {
	void *ptr;
	uint64_t size;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t wake, idle;
	struct hip_job *head, *tail;
	uint64_t pending;          /* submitted, not finished */
	int started, stop;
	pthread_t thread;
	hipStream_t stream[HOOK_MAX_DEVICES]; /* the hook's own, non-blocking */
	struct hip_free_buf pool[HOOK_MAX_DEVICES][HIP_POOL_MAX];
	int n_pool[HOOK_MAX_DEVICES];
} hres = { .lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER, .idle = PTHREAD_COND_INITIALIZER };

/* The hook's stream on the current device (made on first use). */
static hipStream_t res_stream(int ordinal)
{
	pthread_mutex_lock(&hres.lock);
	hipStream_t s = hres.stream[ordinal];
	if (!s && hipr.hipStreamCreateWithFlags &&
	    hipr.hipStreamCreateWithFlags(&s, HIP_STREAM_NON_BLOCKING) == HIP_SUCCESS)
		hres.stream[ordinal] = s;
	pthread_mutex_unlock(&hres.lock);
	return s;
}

/* Clears [off, off + len) of buf on the hook's stream and waits for it. */
static hipError_t res_zero(int ordinal, void *buf, uint64_t len)
{
	hipStream_t s = res_stream(ordinal);
	if (!s)
		return HIP_ERROR_NOT_INITIALIZED;
	hipError_t e = hipr.hipMemsetAsync(buf, 0, len, s);
	return e == HIP_SUCCESS ? hipr.hipStreamSynchronize(s) : e;
}

void *hook_hip_pool_take(int ordinal, uint64_t bytes, char **cause)
{
	pthread_mutex_lock(&hres.lock);
	for (int i = 0; i < hres.n_pool[ordinal]; i++) {
		struct hip_free_buf *b = &hres.pool[ordinal][i];
		if (b->size < bytes)
			continue;
		void *p = b->ptr;
		*b = hres.pool[ordinal][--hres.n_pool[ordinal]];
		pthread_mutex_unlock(&hres.lock);
		return p;
	}
	pthread_mutex_unlock(&hres.lock);
	void *p = NULL;
	hipError_t e = hipr.hipMalloc ? hipr.hipMalloc(&p, bytes) : HIP_ERROR_NOT_FOUND;
	if (e != HIP_SUCCESS) {
		cause_set(cause, "hipMalloc of %llu bytes for the maps failed (HIP error %d)", (unsigned long long)bytes, e);
		return NULL;
	}
	if ((e = res_zero(ordinal, p, bytes)) != HIP_SUCCESS) {
		cause_set(cause, "zeroing the maps failed (HIP error %d)", e);
		hook_hip_pool_put(ordinal, p, bytes);
		return NULL;
	}
	return p;
}

/* Buffers beyond the pool's room stay allocated (the hook never frees
 * device memory the kernel may be writing); the pool is bounded so a burst
 * of large launches does not keep growing it. */
void hook_hip_pool_put(int ordinal, void *buf, uint64_t bytes)
{
	pthread_mutex_lock(&hres.lock);
	if (hres.n_pool[ordinal] < HIP_POOL_MAX)
		hres.pool[ordinal][hres.n_pool[ordinal]++] = (struct hip_free_buf){ buf, bytes };
	pthread_mutex_unlock(&hres.lock);
}

/* The maps as the result file describes them: the engine's layout
 * (amdgpu_map.h): counts, then records 16-aligned; thread maps with
 * cap > 1 slot-major. Every slot is stored. */
static void res_map(const struct hip_job *j, int i, uint8_t *host, struct result_map *m)
{
	const struct amdgpu_map *am = &j->plan->maps[i];
	memset(m, 0, sizeof *m);
	m->map = am->map;
	m->units = j->units[i];
	m->counts = (uint32_t *)(host + j->map_off[i]);
	m->records = host + j->map_off[i] + amdgpu_map_records_offset(m->units);
	m->stored = am->map.cap;
	m->slot_major = am->map.level == PROBE_LEVEL_THREAD && am->map.cap > 1;
	result_map_derive_counts(m);
}

static int res_write(struct hip_job *j, uint8_t *host, float ms)
{
	struct result_map maps[AMDGPU_MAX_MAPS];
	for (int i = 0; i < j->plan->n_maps; i++)
		res_map(j, i, host, &maps[i]);
	struct result r = {
		.pid = (uint32_t)hook.pid, .seq = j->seq, .kernel_id = j->k->kid, .kernel = j->k->name,
		.probes = (char *)j->plan->probes, .grid = { j->grid[0], j->grid[1], j->grid[2] },
		.block = { j->block[0], j->block[1], j->block[2] }, .smem = (uint32_t)j->smem,
		.device_sms = (uint32_t)j->device.sms, .sm_clock_khz = (uint32_t)j->device.clock_khz,
		.warp_size = (uint32_t)j->plan->wave, .wall_ns = j->wall_ns,
		.duration_ns = (uint64_t)((double)ms * 1e6), .n_maps = j->plan->n_maps, .maps = maps,
	};
	return hook_result_publish(&r, j->bytes, 0);
}

/* Waits for the kernel, copies its maps back, writes, recycles. */
static void res_collect(struct hip_job *j)
{
	float ms = 0;
	hipError_t e;
	uint8_t *host = malloc(j->bytes ? j->bytes : 1);
	hipStream_t s = NULL;
	if (hipr.hipSetDevice)
		hipr.hipSetDevice(j->ordinal);
	if ((e = hipr.hipEventSynchronize(j->end)) != HIP_SUCCESS)
		hook_event_warn("probed launch %llu: waiting for it failed (HIP error %d)", (unsigned long long)j->seq, e);
	else if (!host || !(s = res_stream(j->ordinal)))
		hook_event_warn("probed launch %llu: no host memory or stream to copy its maps", (unsigned long long)j->seq);
	else if ((e = hipr.hipMemcpyAsync(host, j->buf, j->bytes, HIP_MEMCPY_DEVICE_TO_HOST, s)) != HIP_SUCCESS ||
		 (e = hipr.hipStreamSynchronize(s)) != HIP_SUCCESS)
		hook_event_warn("probed launch %llu: copying its maps back failed (HIP error %d)",
				(unsigned long long)j->seq, e);
	else {
		if (hipr.hipEventElapsedTime(&ms, j->start, j->end) != HIP_SUCCESS)
			ms = 0;
		res_write(j, host, ms);
		for (int i = 0; i < j->plan->n_maps; i++)
			res_zero(j->ordinal, (uint8_t *)j->buf + j->map_off[i], j->units[i] * 4);
		hook_hip_pool_put(j->ordinal, j->buf, j->bytes);
	}
	/* on failure the buffer is not reused: the kernel may still write it */
	free(host);
	hipr.hipEventDestroy(j->start);
	hipr.hipEventDestroy(j->end);
	free(j);
}

static void *res_collector(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&hres.lock);
	for (;;) {
		while (!hres.head && !hres.stop)
			pthread_cond_wait(&hres.wake, &hres.lock);
		struct hip_job *j = hres.head;
		if (!j)
			break;
		hres.head = j->next;
		if (!hres.head)
			hres.tail = NULL;
		pthread_mutex_unlock(&hres.lock);
		res_collect(j);
		pthread_mutex_lock(&hres.lock);
		hres.pending--;
		pthread_cond_broadcast(&hres.idle);
	}
	pthread_mutex_unlock(&hres.lock);
	return NULL;
}

void hook_hip_results_submit(struct hip_job *j)
{
	pthread_mutex_lock(&hres.lock);
	if (!hres.started && !hres.stop && hook_thread_create(&hres.thread, res_collector, NULL) == 0)
		hres.started = 1;
	j->next = NULL;
	if (hres.tail)
		hres.tail->next = j;
	else
		hres.head = j;
	hres.tail = j;
	hres.pending++;
	pthread_cond_signal(&hres.wake);
	int lost = !hres.started;
	pthread_mutex_unlock(&hres.lock);
	if (lost)
		hook_event_warn("probed launch %llu: no collector thread, result lost", (unsigned long long)j->seq);
}

/* Exit: every queued result, for as long as results keep coming out. */
void hook_hip_results_shutdown(void)
{
	pthread_mutex_lock(&hres.lock);
	uint64_t last = hres.pending;
	while (hres.started && hres.pending > 0) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += HIP_DRAIN_IDLE_NS / 1000000000ull;
		if (pthread_cond_timedwait(&hres.idle, &hres.lock, &ts) != 0 && hres.pending == last)
			break;
		last = hres.pending;
	}
	uint64_t left = hres.pending;
	hres.stop = 1;
	pthread_cond_broadcast(&hres.wake);
	int joined = hres.started && left == 0;
	pthread_mutex_unlock(&hres.lock);
	if (joined)
		pthread_join(hres.thread, NULL);
	if (left)
		hook_event_warn("%llu probed launches still pending at exit: results lost", (unsigned long long)left);
}

/* A fork child's inherited jobs: the parent's, never collected here, kept
 * reachable (a leak checker in a child that exits normally stays quiet). */
static struct hip_job *orphans;

/* In a fork child: the collector is gone and the parent's jobs and
 * buffers belong to the parent's device state: set aside, never used. */
void hook_hip_results_fork_child(void)
{
	if (hres.tail) {
		hres.tail->next = orphans;
		orphans = hres.head;
	}
	pthread_mutex_init(&hres.lock, NULL);
	pthread_cond_init(&hres.wake, NULL);
	pthread_cond_init(&hres.idle, NULL);
	hres.head = hres.tail = NULL;
	hres.pending = 0;
	hres.started = hres.stop = 0;
	memset(hres.stream, 0, sizeof hres.stream);
	memset(hres.n_pool, 0, sizeof hres.n_pool);
}
