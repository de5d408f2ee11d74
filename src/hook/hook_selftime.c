/* NTOP_SELF_TIME=1: the hook's time on the app's thread, per kernel and
 * phase (hook_selftime.h). */
#include "hook/hook_selftime.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/timeutil.h"
#include "hook/hook_events.h"
#include "hook/hook_registry.h"
#include "hook/hook_state.h"
#include "trace/events.h"

static const char *const self_key[HOOK_SELF_PHASES] = {
	"u_lookup_ns", "u_select_ns", "u_pre_ns", "u_drv_ns", "u_post_ns", "p_find_ns", "p_prep_ns", "p_enq_ns",
	"p_drv_ns", "p_end_ns", "p_emit_ns", "p_submit_ns",
};

uint64_t hook_self_now(void)
{
	return hook.cfg.self_time ? time_mono_ns() : 0;
}

static struct hook_self_ring *self_ring(struct hook_self *s)
{
	struct hook_self_ring *r = __atomic_load_n(&s->ring, __ATOMIC_ACQUIRE), *none = NULL;
	if (r)
		return r;
	if (!(r = malloc(sizeof *r)))
		return NULL;
	memset(r, 0, sizeof *r); /* its pages faulted in now, not at a later sample */
	if (__atomic_compare_exchange_n(&s->ring, &none, r, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return r;
	free(r); /* another thread's came first */
	return none;
}

void hook_self_ready(struct hook_kernel *k)
{
	if (hook.cfg.self_time && k)
		self_ring(&k->self);
}

void hook_self_add(struct hook_kernel *k, enum hook_self_phase p, uint64_t t0, uint64_t t1)
{
	if (!k || !t0 || t1 < t0)
		return;
	__atomic_add_fetch(&k->self.ns[p], t1 - t0, __ATOMIC_RELAXED);
	struct hook_self_ring *r = self_ring(&k->self);
	if (r) { /* two threads may write one slot at once: a sample lost, nothing more */
		uint64_t i = __atomic_fetch_add(&r->n[p], 1, __ATOMIC_RELAXED) % HOOK_SELF_RING;
		uint64_t ns = t1 - t0;
		__atomic_store_n(&r->ns[p][i], ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns, __ATOMIC_RELAXED);
	}
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

/* The median of phase p's latest samples; 0 without any. */
static uint64_t self_median(const struct hook_self_ring *r, int p)
{
	uint64_t n = r ? __atomic_load_n(&r->n[p], __ATOMIC_RELAXED) : 0;
	if (n == 0)
		return 0;
	if (n > HOOK_SELF_RING)
		n = HOOK_SELF_RING;
	uint32_t v[HOOK_SELF_RING];
	memcpy(v, r->ns[p], n * sizeof v[0]);
	qsort(v, n, sizeof v[0], cmp_u32);
	return v[n / 2];
}

void hook_self_count(struct hook_kernel *k, int probed, int timed)
{
	if (!k || !hook.cfg.self_time)
		return;
	__atomic_add_fetch(probed ? &k->self.probed : &k->self.unprobed, 1, __ATOMIC_RELAXED);
	if (timed)
		__atomic_add_fetch(&k->self.timed, 1, __ATOMIC_RELAXED);
}

/* The least of many back-to-back reads: what each phase's two reads add. */
static uint64_t self_clock_ns(void)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 1000; i++) {
		uint64_t a = time_mono_ns(), b = time_mono_ns();
		if (b - a < best)
			best = b - a;
	}
	return best;
}

static void self_line(const struct hook_kernel *k, uint64_t clock_ns)
{
	struct strbuf sb;
	hook_event_begin(&sb, "self");
	event_add_int(&sb, "kid", k->kid);
	event_add_int(&sb, "unprobed", (long long)k->self.unprobed);
	event_add_int(&sb, "probed", (long long)k->self.probed);
	event_add_int(&sb, "timed", (long long)k->self.timed);
	event_add_int(&sb, "clock_ns", (long long)clock_ns);
	for (int p = 0; p < HOOK_SELF_PHASES; p++) {
		uint64_t n = p <= HOOK_SELF_U_POST ? k->self.unprobed : k->self.probed;
		if (n)
			event_add_int(&sb, self_key[p], (long long)(k->self.ns[p] / n));
	}
	for (int p = 0; p < HOOK_SELF_PHASES; p++) {
		uint64_t med = self_median(k->self.ring, p);
		if (med) {
			char key[40];
			snprintf(key, sizeof key, "%.*s_p50_ns", (int)(strlen(self_key[p]) - 3), self_key[p]);
			event_add_int(&sb, key, (long long)med);
		}
	}
	hook_event_emit(&sb);
}

void hook_self_lines(void)
{
	if (!hook.cfg.self_time)
		return;
	uint64_t clock_ns = self_clock_ns();
	uint32_t n = 0;
	struct hook_kernel **all = hook_registry_kernels(&n);
	for (uint32_t i = 0; all && i < n; i++)
		if (all[i]->self.unprobed || all[i]->self.probed)
			self_line(all[i], clock_ns);
	free(all);
}
