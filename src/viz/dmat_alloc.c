/* Allocation ranges for the DMAT model from the trace model (dmat_alloc.h). */
#include "viz/dmat_alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int alloc_by_base(const void *a, const void *b)
{
	const struct dmat_alloc *x = a, *y = b;
	return x->base < y->base ? -1 : x->base > y->base;
}

int dmat_allocs_from_trace(const struct td_result *tr, struct dmat_alloc **out, int *n)
{
	*out = NULL;
	*n = 0;
	if (!tr->n_allocs)
		return 0;
	struct dmat_alloc *a = calloc((size_t)tr->n_allocs, sizeof *a);
	if (!a)
		return -1;
	for (int i = 0; i < tr->n_allocs; i++) {
		const struct td_alloc *t = &tr->allocs[i];
		char size[32], *label = NULL;
		dmat_fmt_bytes(t->bytes, size, sizeof size);
		if (asprintf(&label, "a%llu %s", (unsigned long long)t->n, size) < 0) {
			dmat_allocs_free(a, i);
			return -1;
		}
		a[i] = (struct dmat_alloc){t->base, t->bytes, label};
	}
	qsort(a, (size_t)tr->n_allocs, sizeof *a, alloc_by_base);
	*out = a;
	*n = tr->n_allocs;
	return 0;
}

void dmat_allocs_free(struct dmat_alloc *a, int n)
{
	for (int i = 0; a && i < n; i++)
		free((char *)a[i].label);
	free(a);
}
