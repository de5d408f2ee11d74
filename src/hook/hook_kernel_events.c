/* Per-kernel event bookkeeping every backend shares: new kernels and their
 * `kernel` line, whether a launch's configuration is new (a `launch` line
 * is due), the `launch` line itself and a kernel's `stats` line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hook/hook_events.h"
#include "hook/hook_kernel_events.h"
#include "hook/hook_state.h"
#include "trace/events.h"

static uint64_t launch_cfg_hash(const struct hook_launch_cfg *c)
{
	uint64_t h = 1469598103934665603ull;
	const uint32_t v[] = { c->grid[0], c->grid[1], c->grid[2], c->block[0], c->block[1], c->block[2], c->smem,
			       (uint32_t)c->dev, (uint32_t)(uintptr_t)c->api, (uint32_t)((uintptr_t)c->api >> 32) };
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
		h = (h ^ v[i]) * 1099511628211ull;
	return h | 1; /* never 0: 0 means "no launch line yet" */
}

/* Lock-free when the hash matches the last config shown (the usual case).
 * A known device keeps its own last config, so a kernel launched on
 * several devices in turn logs a line per device and change, not one per
 * launch (a hash collision would hide one change: 2^-64). */
int hook_launch_cfg_changed(struct hook_kernel *k, const unsigned grid[3], const unsigned block[3], unsigned smem,
			    int dev, const char *api)
{
	struct hook_launch_cfg c = { { grid[0], grid[1], grid[2] }, { block[0], block[1], block[2] }, smem, dev, api };
	uint64_t h = launch_cfg_hash(&c);
	if (dev >= 0 && dev < HOOK_DEV_COUNTS) {
		if (__atomic_exchange_n(&k->last_hash_dev[dev], h, __ATOMIC_RELAXED) == h)
			return 0;
		k->launched = 1;
		return 1;
	}
	if (__atomic_load_n(&k->last_hash, __ATOMIC_RELAXED) == h)
		return 0;
	__atomic_store_n(&k->last_hash, h, __ATOMIC_RELAXED);
	pthread_mutex_lock(&hook.reg.lock);
	int changed = !k->launched || memcmp(&c, &k->last, sizeof c) != 0;
	k->last = c;
	k->launched = 1;
	pthread_mutex_unlock(&hook.reg.lock);
	return changed;
}

void hook_count_dev_launch(struct hook_kernel *k, int dev)
{
	if (dev >= 0 && dev < HOOK_DEV_COUNTS)
		__atomic_add_fetch(&k->dev_launches[dev], 1, __ATOMIC_RELAXED);
}

/* "0:40,1:60": launches per device, where any was counted. */
static void stats_devs(const struct hook_kernel *k, struct strbuf *sb)
{
	char buf[HOOK_DEV_COUNTS * 24] = "";
	size_t o = 0;
	for (int d = 0; d < HOOK_DEV_COUNTS && o < sizeof buf; d++) {
		uint64_t n = __atomic_load_n(&k->dev_launches[d], __ATOMIC_RELAXED);
		if (n)
			o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%d:%llu", o ? "," : "", d, (unsigned long long)n);
	}
	if (buf[0])
		event_add(sb, "devs", buf);
}

void hook_stats_line(struct hook_kernel *k, uint64_t launches)
{
	struct strbuf sb;
	hook_event_begin(&sb, "stats");
	event_add_int(&sb, "kid", k->kid);
	event_add_int(&sb, "launches", (long long)launches);
	event_add_int(&sb, "timed", (long long)k->timed);
	event_add_int(&sb, "total_ns", (long long)k->total_ns);
	event_add_int(&sb, "min_ns", (long long)(k->timed ? k->min_ns : 0));
	event_add_int(&sb, "max_ns", (long long)k->max_ns);
	uint64_t probed = __atomic_load_n(&k->probed, __ATOMIC_RELAXED);
	if (probed)
		event_add_int(&sb, "probed", (long long)probed);
	uint64_t declined = __atomic_load_n(&k->declined, __ATOMIC_RELAXED);
	if (declined)
		event_add_int(&sb, "declined", (long long)declined);
	uint64_t deferred = __atomic_load_n(&k->deferred, __ATOMIC_RELAXED);
	if (deferred)
		event_add_int(&sb, "deferred", (long long)deferred);
	stats_devs(k, &sb);
	hook_event_emit(&sb);
}

void hook_kernel_line(struct hook_kernel *k)
{
	if (!hook_events_on())
		return;
	k->announced_pid = hook.pid;
	struct strbuf sb;
	hook_event_begin(&sb, "kernel");
	event_add_int(&sb, "kid", k->kid);
	event_add_int(&sb, "mid", k->mod ? k->mod->mid : 0);
	event_add_int(&sb, "ptx", k->has_ptx);
	if (!k->has_ptx)
		event_add(&sb, "reason", k->reason);
	event_add(&sb, "name", k->name);
	hook_event_emit(&sb);
}

struct hook_kernel *hook_kernel_new(struct hook_module *m, const char *name, int has_code, const char *reason)
{
	struct hook_registry *r = &hook.reg;
	if (r->n_kernels == r->cap_kernels) {
		uint32_t cap = r->cap_kernels ? r->cap_kernels * 2 : 256;
		struct hook_kernel **all = realloc(r->all, cap * sizeof *all);
		if (!all)
			return NULL;
		r->all = all;
		r->cap_kernels = cap;
	}
	struct hook_kernel *k = hook_zalloc_aligned(_Alignof(struct hook_kernel), sizeof *k);
	if (!k || !(k->name = strdup(name ? name : "?"))) {
		free(k);
		return NULL;
	}
	k->kid = ++r->n_kernels;
	r->all[k->kid - 1] = k;
	k->mod = m;
	k->match = -1;
	k->min_ns = UINT64_MAX;
	k->has_ptx = has_code; /* "ptx" in the events means "has code ntop can instrument" */
	k->reason = has_code ? NULL : (char *)reason;
	if (m) {
		k->next_in_mod = m->kernels;
		m->kernels = k;
	}
	hook_kernel_line(k);
	return k;
}

void hook_launch_line(const struct hook_kernel *k, const struct hook_launch_line *l)
{
	if (!hook_events_on())
		return;
	struct strbuf sb;
	hook_event_begin(&sb, "launch");
	event_add_int(&sb, "kid", k->kid);
	event_add_int(&sb, "seq", (long long)l->seq);
	event_add(&sb, "api", l->api);
	event_add_dim3(&sb, "grid", l->grid);
	event_add_dim3(&sb, "block", l->block);
	event_add_int(&sb, "smem", (long long)l->smem);
	event_add_hex(&sb, "stream", (unsigned long long)(uintptr_t)l->stream);
	event_add_int(&sb, "capture", l->capturing);
	event_add_int(&sb, "probed", l->probed);
	event_add_int(&sb, "occ", l->occ);
	if (l->dev >= 0)
		event_add_int(&sb, "dev", l->dev);
	if (l->probed)
		event_add_int(&sb, "cpu_ns", (long long)l->cpu_ns);
	if (l->slab) /* a cuMemAlloc, which holds the app's other driver calls too */
		event_add_int(&sb, "slab", 1);
	if (l->beside) /* another such call of the hook's, which held this one */
		event_add_int(&sb, "beside", 1);
	hook_event_emit(&sb);
	if (l->capturing) {
		hook_event_begin(&sb, "graph");
		event_add_int(&sb, "kid", k->kid);
		event_add(&sb, "api", "capture");
		event_add_dim3(&sb, "grid", l->grid);
		event_add_dim3(&sb, "block", l->block);
		hook_event_emit(&sb);
	}
}
