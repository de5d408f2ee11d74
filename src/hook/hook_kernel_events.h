/* Per-kernel event bookkeeping every backend shares (doc/events.md). */
#ifndef NTOP_HOOK_KERNEL_EVENTS_H
#define NTOP_HOOK_KERNEL_EVENTS_H
#include <stdint.h>

struct hook_kernel;

/* 1 when k's launch with this configuration (api: the entry point's name,
 * compared by address) differs from the last `launch` line's; lock-free
 * when unchanged. */
int hook_launch_cfg_changed(struct hook_kernel *k, const unsigned grid[3], const unsigned block[3], unsigned smem,
			    int dev, const char *api);
/* Counts a launch of k on device dev (-1 unknown: not counted apart). */
void hook_count_dev_launch(struct hook_kernel *k, int dev);
/* k's `stats` line: launches, timings, probed and declined counts. */
void hook_stats_line(struct hook_kernel *k, uint64_t launches);

struct hook_module;
/* A new kernel of module m (NULL: never seen loaded), numbered and listed
 * in the registry, its `kernel` line emitted; has_code: ntop can
 * instrument it, else `reason` says why. Called with the registry lock
 * held; NULL when out of memory. */
struct hook_kernel *hook_kernel_new(struct hook_module *m, const char *name, int has_code, const char *reason);
/* k's `kernel` line (again, in a forked child). Registry lock held. */
void hook_kernel_line(struct hook_kernel *k);

/* What a `launch` line says (doc/events.md). */
struct hook_launch_line {
	uint64_t seq;
	const char *api;
	const unsigned *grid, *block;
	uint64_t smem;
	const void *stream;
	int capturing, probed, occ;
	int dev;                    /* device ordinal, -1 unknown (not written) */
	uint64_t cpu_ns;            /* probed: the hook's time to the kernel queued */
	int slab;                   /* probed: a device slab was allocated on its path (written when 1) */
	int beside;                 /* probed: the hook's threads allocated or pinned meanwhile (written when 1) */
};
/* k's `launch` line, and a `graph` line for a launch into a capture. */
void hook_launch_line(const struct hook_kernel *k, const struct hook_launch_line *l);

#endif
