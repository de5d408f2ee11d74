/* Probed copies built off the application's threads (the default; not with
 * NTOP_PROBE_ASYNC=0): a live pick (hook_probe_prebuild) or the launch
 * that first wants a copy queues its build here, and that launch runs
 * unprobed, as do the launches after it, until the copy is published
 * (`building` cleared under probe_lock). One thread builds, in order, with
 * the copy's context current. A context about to go waits for its build
 * under way and drops its queued ones; exit stops the thread after the
 * build under way; a fork child marks what was being built as failed (its
 * parent's contexts are no use there). */
#include <stdlib.h>
#include <string.h>
#include "common/timeutil.h"
#include "hook/cuda/hook_cuda.h"
#include "hook/cuda/hook_cuda_api.h"
#include "hook/hook_log.h"
#include "hook/hook_signals.h"

struct hook_build_req {
	struct hook_build_req *next;
	struct hook_kernel *k;
	struct hook_inst *in;
	struct hook_launch l;   /* f, grid, block and smem: what the build reads */
	CUcontext ctx;
	int cc;
	struct hook_probe_list pl;
	const char *cancelled;  /* why it is not built, or NULL */
};

/* Publishes in: what launches read once `building` is clear. */
static void builder_publish(struct hook_inst *in, const char *failed)
{
	pthread_mutex_lock(&hook.probe_lock);
	if (failed) {
		in->ok = 0;
		in->reason = strdup(failed);
	}
	__atomic_store_n(&in->building, 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&hook.probe_lock);
}

static void builder_run(struct hook_build_req *r)
{
	if (r->cancelled) {
		builder_publish(r->in, r->cancelled);
		return;
	}
	if (!cu.cuCtxSetCurrent || cu.cuCtxSetCurrent(r->ctx) != CUDA_SUCCESS) {
		builder_publish(r->in, "the builder thread could not make the kernel's context current");
		return;
	}
	hook_probe_inst_build(r->k, &r->l, r->cc, &r->pl, r->in);
	CUcontext ctx = NULL;
	const struct hook_device *dev = hook_cuda_device(&ctx);
	int jobs = dev && ctx == r->ctx ? hook_stage_first(r->in, r->k, &r->l, dev, NULL) : 0;
	hook_log("%s: probed copy built off the app's threads (%s), first launches' jobs made: %d", r->k->name,
		 r->in->ok ? "ok" : "failed", jobs);
	cu.cuCtxSetCurrent(NULL); /* hold no context between builds */
	builder_publish(r->in, NULL);
}

static void *builder_thread(void *arg)
{
	(void)arg;
	struct hook_builder *b = &hook.builder;
	pthread_mutex_lock(&b->lock);
	for (;;) {
		while (!b->head && !b->stop)
			pthread_cond_wait(&b->wake, &b->lock);
		struct hook_build_req *r = b->head;
		if (!r)
			break;
		if (b->stop && !r->cancelled)
			r->cancelled = "the process was exiting before its probed copy was built";
		b->head = r->next;
		if (!b->head)
			b->tail = NULL;
		b->busy_ctx = r->cancelled ? NULL : r->ctx;
		pthread_mutex_unlock(&b->lock);
		builder_run(r);
		free(r);
		pthread_mutex_lock(&b->lock);
		b->busy_ctx = NULL;
		pthread_cond_broadcast(&b->done);
	}
	pthread_mutex_unlock(&b->lock);
	return NULL;
}

int hook_builder_queue(struct hook_kernel *k, const struct hook_launch *l, CUcontext ctx, int cc,
		       const struct hook_probe_list *pl, struct hook_inst *in)
{
	struct hook_builder *b = &hook.builder;
	struct hook_build_req *r = calloc(1, sizeof *r);
	if (!r)
		return -1;
	r->k = k;
	r->in = in;
	r->l = *l;
	r->l.params = r->l.extra = NULL; /* the app's: not read, and gone once it returns */
	r->l.config = NULL;
	r->ctx = ctx;
	r->cc = cc;
	r->pl = *pl;
	pthread_mutex_lock(&b->lock);
	if (!b->started && !b->stop)
		b->started = hook_thread_create(&b->thread, builder_thread, NULL) == 0 ? 1 : -1;
	int ok = b->started == 1 && !b->stop;
	if (ok) {
		if (b->tail)
			b->tail->next = r;
		else
			b->head = r;
		b->tail = r;
		pthread_cond_signal(&b->wake);
	}
	pthread_mutex_unlock(&b->lock);
	if (!ok)
		free(r);
	return ok ? 0 : -1;
}

void hook_builder_wait(struct hook_inst *in)
{
	struct hook_builder *b = &hook.builder;
	pthread_mutex_lock(&b->lock);
	while (__atomic_load_n(&in->building, __ATOMIC_ACQUIRE))
		pthread_cond_wait(&b->done, &b->lock);
	pthread_mutex_unlock(&b->lock);
}

int hook_builder_wait_for(struct hook_inst *in, uint64_t ns)
{
	struct hook_builder *b = &hook.builder;
	struct timespec until;
	time_deadline(&until, (long long)ns);
	pthread_mutex_lock(&b->lock);
	int rc = 0;
	while (__atomic_load_n(&in->building, __ATOMIC_ACQUIRE) && rc == 0)
		rc = pthread_cond_timedwait(&b->done, &b->lock, &until);
	pthread_mutex_unlock(&b->lock);
	return !__atomic_load_n(&in->building, __ATOMIC_ACQUIRE);
}

void hook_builder_ctx_gone(CUcontext ctx)
{
	struct hook_builder *b = &hook.builder;
	pthread_mutex_lock(&b->lock);
	for (struct hook_build_req *r = b->head; r; r = r->next)
		if (r->ctx == ctx)
			r->cancelled = "its context went before its probed copy was built";
	while (ctx && b->busy_ctx == ctx)
		pthread_cond_wait(&b->done, &b->lock);
	pthread_mutex_unlock(&b->lock);
}

void hook_builder_shutdown(void)
{
	struct hook_builder *b = &hook.builder;
	pthread_mutex_lock(&b->njl_lock); /* nvJitLink is neither opened nor run from here on */
	__atomic_store_n(&b->njl_closed, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&b->njl_lock);
	/* the build under way ends; queued ones are cancelled */
	hook_thread_stop(&b->lock, &b->wake, &b->stop, &b->started, &b->thread);
}

void hook_builder_fork_child(void)
{
	struct hook_builder *b = &hook.builder;
	for (struct hook_build_req *r = b->head, *next; r; r = next) {
		next = r->next;
		free(r);
	}
	/* queued or under way in the parent: no thread builds them here */
	for (uint32_t i = 0; i < hook.reg.n_kernels; i++)
		for (struct hook_inst *in = hook.reg.all[i]->insts; in; in = in->next)
			if (__atomic_load_n(&in->building, __ATOMIC_ACQUIRE)) {
				in->reason = strdup("it was being built when the process forked");
				__atomic_store_n(&in->building, 0, __ATOMIC_RELEASE);
			}
	b->head = b->tail = NULL;
	b->busy_ctx = NULL;
	b->started = 0;
	b->stop = 0;
}
