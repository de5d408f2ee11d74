/* The hooked rows (see hook_table.h) and lookups by name and by real pointer. */
#include <string.h>
#include "hook/cuda/hook_table.h"
#include "hook/hook_state.h"

const struct hook_row hook_table[HOOK_N_ROWS] = {
#define HOOK_ROW_INIT(n, proto, l) [HOOK_ROW_##n] = { #n, (void *)hook_##n, l },
	HOOK_ROWS(HOOK_ROW_INIT)
#undef HOOK_ROW_INIT
};

int hook_table_find(const char *name)
{
	for (int i = 0; i < HOOK_N_ROWS; i++)
		if (strcmp(hook_table[i].name, name) == 0)
			return i;
	return -1;
}

int hook_table_find_real(const void *fn)
{
	if (fn == NULL)
		return -1;
	for (int i = 0; i < HOOK_N_ROWS; i++)
		if (hook.real[i] == fn)
			return i;
	return -1;
}
