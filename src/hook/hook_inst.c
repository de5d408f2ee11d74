/* A probed copy's record (hook_registry.h), for both backends, and the
 * line-aligned allocation it and a probed launch's job use. */
#include <stdlib.h>
#include <string.h>
#include "hook/hook_registry.h"

void *hook_zalloc_aligned(size_t align, size_t size)
{
	void *p = aligned_alloc(align, size);
	if (p)
		memset(p, 0, size);
	return p;
}

struct hook_inst *hook_inst_new(void)
{
	return hook_zalloc_aligned(_Alignof(struct hook_inst), sizeof(struct hook_inst));
}
