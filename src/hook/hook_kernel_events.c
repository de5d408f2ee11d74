/* Per-kernel event bookkeeping every backend shares: whether a launch's
 * configuration is new (a `launch` line is due) and a kernel's `stats` line. */
#include <string.h>
#include "hook/hook_events.h"
#include "hook/hook_kernel_events.h"
#include "hook/hook_state.h"
#include "trace/events.h"

static uint64_t launch_cfg_hash(const struct hook_launch_cfg *c)
{
	uint64_t h = 1469598103934665603ull;
	const uint32_t v[] = { c->grid[0], c->grid[1], c->grid[2], c->block[0], c->block[1], c->block[2], c->smem,
			       (uint32_t)(uintptr_t)c->api, (uint32_t)((uintptr_t)c->api >> 32) };
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
		h = (h ^ v[i]) * 1099511628211ull;
	return h | 1; /* never 0: 0 means "no launch line yet" */
}

/* Lock-free when the hash matches the last config shown (the usual case);
 * a collision only costs a `launch` line. */
int hook_launch_cfg_changed(struct hook_kernel *k, const unsigned grid[3], const unsigned block[3], unsigned smem,
			    const char *api)
{
	struct hook_launch_cfg c = { { grid[0], grid[1], grid[2] }, { block[0], block[1], block[2] }, smem, api };
	uint64_t h = launch_cfg_hash(&c);
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
	hook_event_emit(&sb);
}
