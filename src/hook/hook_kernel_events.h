/* Per-kernel event bookkeeping every backend shares (doc/events.md). */
#ifndef NTOP_HOOK_KERNEL_EVENTS_H
#define NTOP_HOOK_KERNEL_EVENTS_H
#include <stdint.h>

struct hook_kernel;

/* 1 when k's launch with this configuration (api: the entry point's name,
 * compared by address) differs from the last `launch` line's; lock-free
 * when unchanged. */
int hook_launch_cfg_changed(struct hook_kernel *k, const unsigned grid[3], const unsigned block[3], unsigned smem,
			    const char *api);
/* k's `stats` line: launches, timings, probed and declined counts. */
void hook_stats_line(struct hook_kernel *k, uint64_t launches);

#endif
