/* A probed copy's record (hook_registry.h), for both backends. */
#include <stdlib.h>
#include <string.h>
#include "hook/hook_registry.h"

struct hook_inst *hook_inst_new(void)
{
	struct hook_inst *in = aligned_alloc(_Alignof(struct hook_inst), sizeof *in);
	if (in)
		memset(in, 0, sizeof *in);
	return in;
}
