/* The stager thread: makes what the next probed launches need while the
 * kernels run, so the app's thread finds it ready: jobs for a probed
 * copy's next launches (hook_cuda_stage.c), asked for by each probed
 * launch, and spare map buffers, asked for by a launch that took the last
 * free one of its size (hook_cuda_pool.c). Apart from the collector: that
 * one waits for each probed kernel and its copy back, which can take
 * longer than the app takes to launch again.
 *
 * A probed launch hands a request over without waking the thread (a futex
 * call on the app's clock): after a request the thread stays awake a while
 * (hook_linger.h), looking every STAGER_POLL_NS for the first ms, with a
 * timer slack of its own so the look is that prompt. One request per copy
 * is queued at a time (`stage_asked`); it fills every empty slot. A
 * context about to go waits for the request under way there and drops its
 * queued ones; exit stops the thread after the request under way; a fork
 * child forgets them all. */
#include <stdlib.h>
#include <sys/prctl.h>
#include "hook/cuda/hook_cuda.h"
#include "hook/cuda/hook_cuda_api.h"
#include "hook/cuda/hook_cuda_results.h"
#include "hook/hook_signals.h"

#define STAGER_POLL_NS 20000ull       /* awake, it looks this often */
#define STAGER_LINGER_NS 10000000ull  /* ... for this long after its last request */
#define STAGER_SPARES_MAX 256

struct hook_stage_req {
	struct hook_stage_req *next;
	struct hook_kernel *k;
	struct hook_inst *in;
	struct hook_launch l;   /* grid, block and smem: the shape of the jobs */
	struct hook_device dev;
	CUcontext ctx;          /* NULL: cancelled (its context went) */
};

static void stager_run(struct hook_stage_req *r, struct hook_ctx_held *held)
{
	__atomic_store_n(&r->in->stage_asked, 0, __ATOMIC_RELEASE);
	/* not while a context or the process is going (they drop what was made) */
	if (r->ctx && !__atomic_load_n(&hook.res.draining, __ATOMIC_ACQUIRE) && hook_cuda_hold_ctx(held, r->ctx))
		hook_stage_fill(r->in, r->k, &r->l, &r->dev);
}

static void stager_spares(struct hook_stager *s, struct hook_ctx_held *held)
{
	CUcontext ctx = s->spare_ctx;
	uint64_t bytes = s->spare_bytes, n = s->spare_n;
	s->spare_ctx = NULL;
	s->spare_bytes = s->spare_n = 0;
	s->busy_ctx = ctx;
	pthread_mutex_unlock(&s->lock);
	if (!__atomic_load_n(&hook.res.draining, __ATOMIC_ACQUIRE) && hook_cuda_hold_ctx(held, ctx))
		hook_pool_add_spares(ctx, bytes, n);
	pthread_mutex_lock(&s->lock);
}

static void *stager_thread(void *arg)
{
	(void)arg;
	hook_cuda_relax_begin(); /* for the thread's whole life: no app's capture is disturbed */
	prctl(PR_SET_TIMERSLACK, HOOK_TIMER_SLACK_NS, 0, 0, 0);
	struct hook_stager *s = &hook.stager;
	struct hook_ctx_held held = { 0 };
	pthread_mutex_lock(&s->lock);
	while (!s->stop) {
		if (!s->head && !s->spare_ctx) {
			if (hook_linger_poll(&s->linger, &s->wake, &s->lock, STAGER_POLL_NS, STAGER_LINGER_NS))
				hook_linger_nap(&s->linger, &s->wake, &s->lock);
			continue;
		}
		hook_linger_busy(&s->linger);
		if (s->spare_ctx) { /* a launch that finds no buffer allocates on the app's clock */
			stager_spares(s, &held);
		} else {
			struct hook_stage_req *r = s->head;
			s->head = r->next;
			if (!s->head)
				s->tail = NULL;
			s->busy_ctx = r->ctx;
			pthread_mutex_unlock(&s->lock);
			stager_run(r, &held);
			free(r);
			pthread_mutex_lock(&s->lock);
		}
		s->busy_ctx = NULL;
		pthread_cond_broadcast(&s->done);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* Under s->lock: the thread, started on first use; 1 when it runs. */
static int stager_running(struct hook_stager *s)
{
	if (!s->started && !s->stop)
		s->started = hook_thread_create(&s->thread, stager_thread, NULL) == 0 ? 1 : -1;
	return s->started == 1 && !s->stop;
}

/* Under s->lock. */
static void stager_nudge(struct hook_stager *s)
{
	if (s->linger.napping)
		pthread_cond_signal(&s->wake);
}

void hook_stager_start(void)
{
	struct hook_stager *s = &hook.stager;
	pthread_mutex_lock(&s->lock);
	stager_running(s);
	pthread_mutex_unlock(&s->lock);
}

void hook_stager_ask(struct hook_inst *in, struct hook_kernel *k, const struct hook_launch *l, CUcontext ctx,
		     const struct hook_device *dev)
{
	if (__atomic_exchange_n(&in->stage_asked, 1, __ATOMIC_ACQ_REL))
		return; /* queued already: it fills every empty slot */
	struct hook_stage_req *r = malloc(sizeof *r);
	if (r) {
		*r = (struct hook_stage_req){ .k = k, .in = in, .dev = *dev, .ctx = ctx };
		for (int i = 0; i < 3; i++) {
			r->l.grid[i] = l->grid[i];
			r->l.block[i] = l->block[i];
		}
		r->l.smem = l->smem;
	}
	struct hook_stager *s = &hook.stager;
	pthread_mutex_lock(&s->lock);
	int ok = r && stager_running(s);
	if (ok) {
		if (s->tail)
			s->tail->next = r;
		else
			s->head = r;
		s->tail = r;
		stager_nudge(s);
	}
	pthread_mutex_unlock(&s->lock);
	if (!ok) {
		free(r);
		__atomic_store_n(&in->stage_asked, 0, __ATOMIC_RELEASE);
	}
}

void hook_stage_want_spare(CUcontext ctx, uint64_t bytes, uint64_t n)
{
	struct hook_stager *s = &hook.stager;
	pthread_mutex_lock(&s->lock);
	if (stager_running(s) && (!s->spare_ctx || s->spare_ctx == ctx)) {
		s->spare_ctx = ctx;
		if (bytes > s->spare_bytes)
			s->spare_bytes = bytes;
		if (n > s->spare_n)
			s->spare_n = n < STAGER_SPARES_MAX ? n : STAGER_SPARES_MAX;
		stager_nudge(s);
	}
	pthread_mutex_unlock(&s->lock);
}

void hook_stager_ctx_gone(CUcontext ctx)
{
	struct hook_stager *s = &hook.stager;
	pthread_mutex_lock(&s->lock);
	for (struct hook_stage_req *r = s->head; r; r = r->next)
		if (r->ctx == ctx)
			r->ctx = NULL;
	if (s->spare_ctx == ctx) {
		s->spare_ctx = NULL;
		s->spare_bytes = s->spare_n = 0;
	}
	while (ctx && s->busy_ctx == ctx)
		pthread_cond_wait(&s->done, &s->lock);
	pthread_mutex_unlock(&s->lock);
}

void hook_stager_shutdown(void)
{
	struct hook_stager *s = &hook.stager;
	/* the request under way ends; queued ones are dropped */
	hook_thread_stop(&s->lock, &s->wake, &s->stop, &s->started, &s->thread);
}

void hook_stager_fork_child(void)
{
	struct hook_stager *s = &hook.stager;
	for (struct hook_stage_req *r = s->head, *next; r; r = next) {
		next = r->next;
		free(r);
	}
	s->head = s->tail = NULL;
	s->busy_ctx = s->spare_ctx = NULL;
	s->spare_bytes = s->spare_n = 0;
	s->linger = (struct hook_linger){ 0 };
	s->started = 0;
	s->stop = 0;
}
