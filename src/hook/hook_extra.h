/* A launch's `extra` array (CUDA's CU_LAUNCH_PARAM_*, HIP's
 * HIP_LAUNCH_PARAM_*: the same shape, other sentinel values), read the same
 * way by both backends before they append the map pointers. */
#ifndef NTOP_HOOK_EXTRA_H
#define NTOP_HOOK_EXTRA_H
#include <stddef.h>

/* The keys of one API's `extra` array. */
struct hook_extra_keys {
	void *buffer, *size, *end;
};

/* The argument buffer and its size from `extra`: 0, or -1 with a cause (an
 * entry other than those two, or either missing). */
int hook_extra_buffer(void *const *extra, const struct hook_extra_keys *keys, void **buf, size_t **size,
		      char **cause);

#endif
