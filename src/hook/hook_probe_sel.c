/* Which launches are probed, and with what (hook_probe_sel.h): shared by
 * every backend. */
#include <stdlib.h>
#include <string.h>
#include "engine/probe/probe.h"
#include "engine/probe/verify.h"
#include "hook/hook_config.h"
#include "hook/hook_events.h"
#include "hook/hook_probe_sel.h"
#include "hook/hook_state.h"
#include "trace/events.h"

static void probe_load_all(void)
{
	struct strbuf why;
	strbuf_init(&why);
	char *list = strdup(hook.cfg.probes);
	for (char *save = NULL, *path = list ? strtok_r(list, ":", &save) : NULL; path;
	     path = strtok_r(NULL, ":", &save)) {
		struct probe *p = NULL;
		char *cause = NULL;
		if (probe_load_file(path, &p, &cause) < 0 || verify_probe(p, &cause) < 0) {
			strbuf_printf(&why, "%s%s", why.len ? "; " : "", cause ? cause : path);
			hook_event_warn("probe %s rejected: %s", path, cause ? cause : "?");
			probe_free(p);
			free(cause);
			continue;
		}
		struct probe **v = realloc(hook.probes, (size_t)(hook.n_probes + 1) * sizeof *v);
		if (!v) {
			probe_free(p);
			continue;
		}
		hook.probes = v;
		hook.probes[hook.n_probes++] = p;
	}
	free(list);
	if (hook.n_probes == 0)
		hook.probes_cause = strbuf_finish(&why, NULL);
	else
		strbuf_done(&why);
	if (hook.n_probes == 0 && !hook.probes_cause)
		hook.probes_cause = strdup("no probe could be loaded");
	hook.probes_loaded = 1;
}

int hook_probe_wanted(struct hook_kernel *k, struct hook_probe_pick *pick)
{
	const struct hook_ctl_table *t = __atomic_load_n(&hook.ctl.table, __ATOMIC_ACQUIRE);
	if (t)
		return hook_control_wanted(k, t, pick);
	pick->set = NULL;
	pick->reserved = &k->probed;
	pick->next_taken = NULL;
	if (!hook.cfg.probes)
		return 0;
	int match = __atomic_load_n(&k->match, __ATOMIC_RELAXED);
	if (match < 0) {
		match = hook_config_kernel_matches(k->name);
		__atomic_store_n(&k->match, match, __ATOMIC_RELAXED);
	}
	if (!match)
		return 0;
	/* SASS-only kernels are declined once, then stay off the probe path. */
	if (!k->has_ptx && __atomic_load_n(&k->decline_reported, __ATOMIC_ACQUIRE))
		return 0;
	uint64_t n = __atomic_fetch_add(&k->probe_attempts, 1, __ATOMIC_RELAXED);
	if (n % hook.cfg.probe_every != 0)
		return 0;
	/* Reserve a probed launch (given back on decline), so concurrent
	 * launches cannot overshoot NTOP_PROBE_LIMIT. */
	if (__atomic_fetch_add(&k->probed, 1, __ATOMIC_RELAXED) < hook.cfg.probe_limit)
		return 1;
	__atomic_sub_fetch(&k->probed, 1, __ATOMIC_RELAXED);
	return 0;
}

static int probe_unreserve(const struct hook_probe_pick *pick)
{
	if (pick->reserved)
		__atomic_sub_fetch(pick->reserved, 1, __ATOMIC_RELAXED);
	return 0;
}

struct hook_probe_list hook_probe_list_locked(const struct hook_ctl_set *set)
{
	if (set)
		return (struct hook_probe_list){ set->probes, set->n, set->cause };
	if (!hook.probes_loaded)
		probe_load_all();
	return (struct hook_probe_list){ hook.probes, hook.n_probes, hook.probes_cause };
}

/* Says once per kernel and reason why a probed launch did not happen. */
static void probe_decline(struct hook_kernel *k, uint64_t seq, const char *reason)
{
	__atomic_add_fetch(&k->declined, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&hook.probe_lock);
	int same = k->decline_reported && strcmp(k->decline_reported, reason) == 0;
	if (!same) {
		char *old = k->decline_reported;
		__atomic_store_n(&k->decline_reported, strdup(reason), __ATOMIC_RELEASE);
		free(old);
	}
	pthread_mutex_unlock(&hook.probe_lock);
	if (same || !hook_events_on())
		return;
	struct strbuf sb;
	hook_event_begin(&sb, "probe");
	event_add_int(&sb, "kid", k->kid);
	event_add_int(&sb, "seq", (long long)seq);
	event_add(&sb, "status", "declined");
	event_add(&sb, "reason", reason);
	hook_event_emit(&sb);
}

int hook_probe_defer(struct hook_kernel *k, uint64_t seq, const struct hook_probe_pick *pick, int first)
{
	__atomic_add_fetch(&k->deferred, 1, __ATOMIC_RELAXED);
	if (first && hook_events_on()) {
		struct strbuf sb;
		hook_event_begin(&sb, "probe");
		event_add_int(&sb, "kid", k->kid);
		event_add_int(&sb, "seq", (long long)seq);
		event_add(&sb, "status", "deferred");
		event_add(&sb, "reason", "its probed copy is being built off the application's threads "
					 "(record --wait-build, NTOP_PROBE_ASYNC=0, builds it on the launch): "
					 "launches run unprobed until it is ready");
		hook_event_emit(&sb);
	}
	if (pick->next_taken) /* `next` means the first launch that can be probed */
		__atomic_store_n(pick->next_taken, 0, __ATOMIC_RELEASE);
	return probe_unreserve(pick);
}

int hook_probe_give_up(struct hook_kernel *k, uint64_t seq, const struct hook_probe_pick *pick, const char *reason)
{
	probe_decline(k, seq, reason);
	return probe_unreserve(pick);
}
