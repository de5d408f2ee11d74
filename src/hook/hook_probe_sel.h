/* Which launches are probed and with which probes, the same for every
 * backend: the live control file's selection once it exists, else
 * NTOP_PROBES, NTOP_KERNELS, NTOP_PROBE_EVERY and NTOP_PROBE_LIMIT; and a
 * declined launch said once per kernel and reason. */
#ifndef NTOP_HOOK_PROBE_SEL_H
#define NTOP_HOOK_PROBE_SEL_H
#include <stdint.h>
#include "hook/hook_control.h"

struct hook_kernel;
struct probe;

/* The probes of a set (NULL: NTOP_PROBES). */
struct hook_probe_list {
	struct probe **v;
	int n;
	const char *cause; /* why there are none */
};

/* 1 when the launch should be probed (budget left); fills pick. */
int hook_probe_wanted(struct hook_kernel *k, struct hook_probe_pick *pick);
/* The probes of set (NULL: NTOP_PROBES, loaded and verified on first use).
 * Caller holds hook.probe_lock. */
struct hook_probe_list hook_probe_list_locked(const struct hook_ctl_set *set);
/* A launch that runs unprobed while its probed copy is built (counted as
 * deferred, said when `first`); gives the reservation back; 0. */
int hook_probe_defer(struct hook_kernel *k, uint64_t seq, const struct hook_probe_pick *pick, int first);
/* Declines (reason said once per kernel) and gives the reservation back; 0. */
int hook_probe_give_up(struct hook_kernel *k, uint64_t seq, const struct hook_probe_pick *pick, const char *reason);

#endif
