/* libFuzzer harness for the PTX parser: parse, emit, reparse; a module that
 * parses must emit text that parses again to the same shape, and pruning to
 * its first kernel (eager and lazy) must not fail. Seeds: tests/corpus/ptx. */
#include "engine/ptx/ptx.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int fuzz_same_shape(const struct ptx_module *a, const struct ptx_module *b)
{
	if (a->n_items != b->n_items)
		return 0;
	for (int i = 0; i < a->n_items; i++) {
		const struct ptx_top *x = &a->items[i], *y = &b->items[i];
		if (x->kind != y->kind)
			return 0;
		if (x->kind == PTX_TOP_FUNC && (x->func->n_body != y->func->n_body || x->func->n_params != y->func->n_params))
			return 0;
		for (int k = 0; x->kind == PTX_TOP_FUNC && k < x->func->n_body; k++) {
			const struct ptx_stmt *s = &x->func->body[k], *t = &y->func->body[k];
			if (s->kind != t->kind || strcmp(s->text, t->text) != 0 || s->insn.n_ops != t->insn.n_ops)
				return 0;
		}
	}
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ptx_module *m = NULL, *m2 = NULL;
	char *cause = NULL;
	if (ptx_parse((const char *)data, size, &m, &cause) < 0) {
		if (!cause)
			abort(); /* every failure says why */
		free(cause);
		return 0;
	}
	size_t len;
	char *out = ptx_emit(m, &len);
	if (!out || ptx_parse(out, len, &m2, &cause) < 0 || !fuzz_same_shape(m, m2))
		abort();
	const char **names = NULL;
	int n = 0;
	if (ptx_list_entries(m, &names, &n) == 0 && n > 0) {
		struct ptx_module *lazy = NULL;
		if (ptx_prune(m2, names[0], NULL) < 0)
			abort();
		if (ptx_parse_kernel((const char *)data, size, names[0], &lazy, &cause) == 0)
			ptx_free(lazy);
		free(cause);
	}
	free(names);
	free(out);
	ptx_free(m);
	ptx_free(m2);
	return 0;
}
