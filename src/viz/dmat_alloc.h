/* The allocations a probed launch ran with (trace_dir.h: the hook's
 * `alloc`/`free` events), as DMAT allocation ranges named by order and
 * size: "a3 64 MiB" is the process's third device allocation. */
#ifndef NTOP_DMAT_ALLOC_H
#define NTOP_DMAT_ALLOC_H
#include "trace/trace_dir.h"
#include "viz/dmat.h"

/* *out: tr's allocations in address order with their labels (NULL and 0
 * when there are none); -1 only when out of memory. */
int dmat_allocs_from_trace(const struct td_result *tr, struct dmat_alloc **out, int *n);
void dmat_allocs_free(struct dmat_alloc *a, int n);

#endif
