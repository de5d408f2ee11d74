/* Launch timing without synchronising the application: sampled launches get
 * a pooled start/end event pair recorded around them on their own stream; a
 * background thread polls the end events (cuEventQuery, never a wait), turns
 * finished pairs into `time` lines and per-kernel totals, and emits `stats`
 * every 200 ms. Nothing is timed while the stream is capturing. */
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include "common/timeutil.h"
#include "hook/cuda/hook_cuda.h"
#include "hook/cuda/hook_cuda_api.h"
#include "hook/hook_events.h"
#include "hook/hook_kernel_events.h"
#include "hook/hook_log.h"
#include "hook/hook_signals.h"
#include "trace/events.h"

/* A timed launch costs the app's thread 3.5-5 us (two event records and
 * the capture check; NTOP_SELF_TIME on an H200), the rest 0.25 us: an app
 * timing its own launches of a 12 us kernel saw 1.03x in its median with
 * a kernel's first 3 launches timed, 1.01x with none. So a kernel's first
 * launch is timed (it pays for registering the kernel anyway), then one
 * launch per 10 ms (NTOP_TIME_GAP_MS) counted from the end of the last
 * timed launch's call (a first probed launch may wait for its JIT), and a
 * probed copy's first launch (hook_timing_first_probed). */
#define TIMING_MAX_PER_S 1000              /* sampled launches timed per second, all kernels: many
					      kernels (8 ranks x 200) would time every launch otherwise */
#define TIMING_POLL_NS 20000000ll          /* poll pending events every 20 ms: each query takes driver locks the app contends for */
#define TIMING_STATS_NS 200000000ull       /* stats lines at most every 200 ms */
#define TIMING_DRAIN_NS 500000000ull       /* at exit, wait this long for pending events */

/* The pool of ctx's events with timing (bare = 0) or without (1); created
 * when `create` (hook_event_get: the context is current and alive), never
 * by a put, so an event given back after its context was dropped cannot
 * land in the pool of a new context at the same address (it is left to the
 * driver, which freed it with the context). */
static struct hook_event_pool *timing_pool(CUcontext ctx, int bare, int create)
{
	struct hook_event_pool *p;
	for (p = hook.timing.pools; p && (p->ctx != ctx || p->bare != bare); p = p->next)
		;
	if (!p && create && (p = calloc(1, sizeof *p)) != NULL) {
		p->ctx = ctx;
		p->bare = bare;
		p->next = hook.timing.pools;
		hook.timing.pools = p;
	}
	return p;
}

static CUevent pool_event_get(CUcontext ctx, int bare)
{
	pthread_mutex_lock(&hook.timing.lock);
	struct hook_event_pool *p = timing_pool(ctx, bare, 1);
	CUevent e = p && p->n > 0 ? p->free[--p->n] : NULL;
	pthread_mutex_unlock(&hook.timing.lock);
	if (!e && (!cu.cuEventCreate ||
		   cu.cuEventCreate(&e, bare ? CU_EVENT_DISABLE_TIMING : CU_EVENT_DEFAULT) != CUDA_SUCCESS))
		e = NULL;
	return e;
}

static void pool_event_put(CUcontext ctx, int bare, CUevent e)
{
	if (!e)
		return;
	pthread_mutex_lock(&hook.timing.lock);
	struct hook_event_pool *p = timing_pool(ctx, bare, 0);
	if (p && p->n == p->cap) {
		int cap = p->cap ? p->cap * 2 : 16;
		void **v = realloc(p->free, (size_t)cap * sizeof *v);
		if (v) {
			p->free = v;
			p->cap = cap;
		}
	}
	if (p && p->n < p->cap)
		p->free[p->n++] = e;
	pthread_mutex_unlock(&hook.timing.lock);
}

CUevent hook_event_get(CUcontext ctx)
{
	return pool_event_get(ctx, 0);
}

void hook_event_put(CUcontext ctx, CUevent e)
{
	pool_event_put(ctx, 0, e);
}

CUevent hook_event_get_bare(CUcontext ctx)
{
	return pool_event_get(ctx, 1);
}

void hook_event_put_bare(CUcontext ctx, CUevent e)
{
	pool_event_put(ctx, 1, e);
}

/* Room for one more sampled launch this second (each kernel's first
 * launch is timed regardless). */
static int timing_budget(uint64_t now)
{
	uint64_t sec = now / 1000000000ull, w = __atomic_load_n(&hook.timing.window, __ATOMIC_RELAXED);
	if (w != sec && __atomic_compare_exchange_n(&hook.timing.window, &w, sec, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		__atomic_store_n(&hook.timing.in_window, 0, __ATOMIC_RELAXED);
	return __atomic_add_fetch(&hook.timing.in_window, 1, __ATOMIC_RELAXED) <= TIMING_MAX_PER_S;
}

static int timing_on(void)
{
	return hook.cfg.time_mode != HOOK_TIME_OFF && hook_events_on();
}

int hook_timing_wanted(struct hook_kernel *k, uint64_t n)
{
	if (!timing_on())
		return 0;
	if (hook.cfg.time_mode == HOOK_TIME_ALL)
		return 1;
	/* a gap of milliseconds: the coarse clock is precise enough */
	uint64_t now = time_mono_coarse_ns();
	if (n == 1) {
		__atomic_store_n(&k->next_sample_ns, now + hook.cfg.time_gap_ns, __ATOMIC_RELAXED);
		return 1;
	}
	uint64_t next = __atomic_load_n(&k->next_sample_ns, __ATOMIC_RELAXED);
	return now >= next &&
	       __atomic_compare_exchange_n(&k->next_sample_ns, &next, now + hook.cfg.time_gap_ns, 0, __ATOMIC_RELAXED,
					   __ATOMIC_RELAXED) &&
	       timing_budget(now);
}

void hook_timing_launched(struct hook_kernel *k, const struct hook_launch *l)
{
	if (l->timed && hook.cfg.time_mode == HOOK_TIME_SAMPLE)
		__atomic_store_n(&k->next_sample_ns, time_mono_coarse_ns() + hook.cfg.time_gap_ns, __ATOMIC_RELAXED);
}

int hook_timing_first_probed(int *once)
{
	/* a load first: every probed launch asks, and a write each time would
	 * dirty the line of the copy's fields every launch reads */
	return timing_on() && !__atomic_load_n(once, __ATOMIC_RELAXED) && !__atomic_exchange_n(once, 1, __ATOMIC_RELAXED);
}

int hook_timing_start(struct hook_kernel *k, uint64_t seq, CUstream stream, struct hook_timed **out)
{
	CUcontext ctx = NULL;
	if (!cu.cuEventRecord || !cu.cuCtxGetCurrent || cu.cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || !ctx)
		return -1;
	if (hook_cuda_capturing(stream))
		return -1;
	struct hook_timed *t = calloc(1, sizeof *t);
	if (!t)
		return -1;
	t->k = k;
	t->seq = seq;
	t->ctx = ctx;
	t->start = hook_event_get(ctx);
	t->end = hook_event_get(ctx);
	if (!t->start || !t->end || cu.cuEventRecord(t->start, stream) != CUDA_SUCCESS) {
		hook_timing_abort(t);
		return -1;
	}
	*out = t;
	return 0;
}

void hook_timing_abort(struct hook_timed *t)
{
	hook_event_put(t->ctx, t->start);
	hook_event_put(t->ctx, t->end);
	free(t);
}

void hook_timing_finish(struct hook_timed *t, CUstream stream)
{
	if (cu.cuEventRecord(t->end, stream) != CUDA_SUCCESS) {
		hook_timing_abort(t);
		return;
	}
	pthread_mutex_lock(&hook.timing.lock);
	t->next = hook.timing.pending;
	hook.timing.pending = t;
	/* No wake-up: the thread polls on its own clock (at most 200 ms late),
	 * so a launch loop does not ping-pong with it. */
	pthread_mutex_unlock(&hook.timing.lock);
}

static void timing_record(struct hook_timed *t, uint64_t ns)
{
	struct hook_kernel *k = t->k;
	k->timed++;
	__atomic_add_fetch(&hook.timing.timed_total, 1, __ATOMIC_RELAXED);
	k->total_ns += ns;
	if (ns < k->min_ns)
		k->min_ns = ns;
	if (ns > k->max_ns)
		k->max_ns = ns;
	struct strbuf sb;
	hook_event_begin(&sb, "time");
	event_add_int(&sb, "kid", k->kid);
	event_add_int(&sb, "seq", (long long)t->seq);
	event_add_int(&sb, "ns", (long long)ns);
	hook_event_emit(&sb);
}

/* 1 when t is finished (recorded or dropped), 0 when still running. */
static int timing_poll_one(struct hook_timed *t, CUcontext *cur)
{
	if (*cur != t->ctx && cu.cuCtxSetCurrent && cu.cuCtxSetCurrent(t->ctx) == CUDA_SUCCESS)
		*cur = t->ctx;
	CUresult rc = cu.cuEventQuery(t->end);
	if (rc == CUDA_ERROR_NOT_READY)
		return 0;
	float ms = 0;
	if (rc == CUDA_SUCCESS && cu.cuEventElapsedTime_v2 &&
	    cu.cuEventElapsedTime_v2(&ms, t->start, t->end) == CUDA_SUCCESS)
		timing_record(t, (uint64_t)((double)ms * 1e6));
	if (rc == CUDA_SUCCESS) {
		hook_timing_abort(t); /* returns the events to the pool */
	} else {
		hook_log("event query failed (%d): dropping the timing", (int)rc);
		free(t); /* the context is likely gone: do not reuse its events */
	}
	return 1;
}

static int timing_poll_locked(CUcontext *cur);

/* One pass over the pending launches, under poll_lock so a context cannot
 * be destroyed while its events are queried (hook_timing_ctx_gone). The
 * thread holds a context current only during a pass: never a destroyed
 * one, and a new context at an old one's address is always set afresh. */
static int timing_poll(void)
{
	CUcontext cur = NULL;
	pthread_mutex_lock(&hook.timing.poll_lock);
	int left = timing_poll_locked(&cur);
	if (cur && cu.cuCtxSetCurrent)
		cu.cuCtxSetCurrent(NULL);
	pthread_mutex_unlock(&hook.timing.poll_lock);
	return left;
}

static int timing_poll_locked(CUcontext *cur)
{
	pthread_mutex_lock(&hook.timing.lock);
	struct hook_timed *list = hook.timing.pending;
	hook.timing.pending = NULL;
	pthread_mutex_unlock(&hook.timing.lock);
	struct hook_timed *keep = NULL;
	int left = 0;
	while (list) {
		struct hook_timed *t = list;
		list = t->next;
		if (!timing_poll_one(t, cur)) {
			t->next = keep;
			keep = t;
			left++;
		}
	}
	if (keep) {
		pthread_mutex_lock(&hook.timing.lock);
		struct hook_timed *tail = keep;
		while (tail->next)
			tail = tail->next;
		tail->next = hook.timing.pending;
		hook.timing.pending = keep;
		pthread_mutex_unlock(&hook.timing.lock);
	}
	return left;
}

void hook_timing_stats(int final)
{
	/* An idle tick allocates nothing: a fork of the application then finds
	 * no hook thread inside the allocator (sanitizer runtimes do not make
	 * their allocator locks fork-safe). */
	uint64_t seq = __atomic_load_n(&hook.seq, __ATOMIC_RELAXED);
	uint64_t timed = __atomic_load_n(&hook.timing.timed_total, __ATOMIC_RELAXED);
	if (!final && seq == hook.timing.stats_seq && timed == hook.timing.stats_timed)
		return;
	hook.timing.stats_seq = seq;
	hook.timing.stats_timed = timed;
	uint32_t n = 0;
	struct hook_kernel **all = hook_registry_kernels(&n);
	for (uint32_t i = 0; all && i < n; i++) {
		struct hook_kernel *k = all[i];
		uint64_t launches = __atomic_load_n(&k->launches, __ATOMIC_RELAXED);
		if (launches == k->stats_launches && k->timed == k->stats_timed && !(final && launches))
			continue;
		k->stats_launches = launches;
		k->stats_timed = k->timed;
		hook_stats_line(k, launches);
	}
	free(all);
}

static void *timing_thread(void *arg)
{
	(void)arg;
	/* For the thread's whole life: its event queries must never invalidate
	 * an application thread's global-mode stream capture. */
	hook_cuda_relax_begin();
	for (;;) {
		pthread_mutex_lock(&hook.timing.lock);
		int stop = hook.timing.stop;
		if (!stop) {
			struct timespec ts;
			time_deadline(&ts, hook.timing.pending ? TIMING_POLL_NS : (long long)TIMING_STATS_NS);
			pthread_cond_timedwait(&hook.timing.wake, &hook.timing.lock, &ts);
			stop = hook.timing.stop;
		}
		pthread_mutex_unlock(&hook.timing.lock);
		if (stop)
			break;
		timing_poll();
		uint64_t now = time_mono_ns();
		if (now - hook.timing.last_stats_ns >= TIMING_STATS_NS) {
			hook.timing.last_stats_ns = now;
			hook_timing_stats(0);
			hook_results_tick();
		}
	}
	uint64_t until = time_mono_ns() + TIMING_DRAIN_NS;
	while (timing_poll() > 0 && time_mono_ns() < until) {
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
	return NULL;
}

void hook_timing_ensure_thread(void)
{
	if (__atomic_load_n(&hook.timing.started, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&hook.timing.lock);
	if (!hook.timing.started && !hook.timing.stop) {
		hook.timing.last_stats_ns = time_mono_ns();
		if (hook_thread_create(&hook.timing.thread, timing_thread, NULL) == 0)
			__atomic_store_n(&hook.timing.started, 1, __ATOMIC_RELEASE);
		else
			hook.timing.stop = 1;
	}
	pthread_mutex_unlock(&hook.timing.lock);
}

void hook_timing_shutdown(void)
{
	struct hook_timing *t = &hook.timing;
	hook_thread_stop(&t->lock, &t->wake, &t->stop, &t->started, &t->thread);
}

/* A context is about to be destroyed: its pending timings and pooled events
 * go with it (the driver frees them; querying them afterwards would touch
 * freed memory), after the thread's current pass. */
void hook_timing_ctx_gone(CUcontext ctx)
{
	pthread_mutex_lock(&hook.timing.poll_lock);
	pthread_mutex_lock(&hook.timing.lock);
	for (struct hook_timed **p = &hook.timing.pending; *p;) {
		struct hook_timed *t = *p;
		if (t->ctx != ctx) {
			p = &t->next;
			continue;
		}
		*p = t->next;
		free(t);
	}
	for (struct hook_event_pool **p = &hook.timing.pools; *p;) {
		struct hook_event_pool *e = *p;
		if (e->ctx != ctx) {
			p = &e->next;
			continue;
		}
		*p = e->next;
		free(e->free);
		free(e);
	}
	pthread_mutex_unlock(&hook.timing.lock);
	pthread_mutex_unlock(&hook.timing.poll_lock);
}

/* What a fork child inherited from its parent's contexts: never used (the
 * events are the parent's) and never freed, but kept reachable so a leak
 * checker in a child that exits normally does not blame the application. */
static struct hook_timed *timing_orphan_timed;
static struct hook_event_pool *timing_orphan_pools;

void hook_timing_fork_child(void)
{
	struct hook_timed *t = hook.timing.pending;
	while (t && t->next)
		t = t->next;
	if (t) {
		t->next = timing_orphan_timed;
		timing_orphan_timed = hook.timing.pending;
	}
	struct hook_event_pool *p = hook.timing.pools;
	while (p && p->next)
		p = p->next;
	if (p) {
		p->next = timing_orphan_pools;
		timing_orphan_pools = hook.timing.pools;
	}
	hook.timing.pending = NULL;
	hook.timing.pools = NULL;
	hook.timing.started = 0;
	hook.timing.stop = 0;
}
