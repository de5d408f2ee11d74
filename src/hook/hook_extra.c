/* A launch's `extra` array (hook_extra.h). */
#include "hook/hook_extra.h"

#include "common/cause.h"

int hook_extra_buffer(void *const *extra, const struct hook_extra_keys *keys, void **buf, size_t **size,
		      char **cause)
{
	*buf = NULL;
	*size = NULL;
	for (int i = 0; extra[i] != keys->end; i += 2) {
		if (extra[i] == keys->buffer)
			*buf = extra[i + 1];
		else if (extra[i] == keys->size)
			*size = extra[i + 1];
		else
			return cause_set(cause, "unknown entry %p in the launch's extra array", extra[i]);
	}
	if (!*buf || !*size)
		return cause_set(cause, "extra array without buffer pointer and size");
	return 0;
}
