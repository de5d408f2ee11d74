/* CUDA graphs (hook_cuda_graph.c): kernels that run only inside graphs —
 * launched during a stream capture or added as explicit kernel nodes — are
 * probed when an executable graph is replayed, through a probed twin: a
 * copy of the graph as it was instantiated, instantiated once more, whose
 * kernel nodes the user picked get the probed function and fresh map
 * buffers at each replay (cuGraphExecKernelNodeSetParams), and which runs
 * in the original's place on that replay. */
#ifndef NTOP_HOOK_GRAPH_H
#define NTOP_HOOK_GRAPH_H
#include <pthread.h>
#include "hook/hook_ptrmap.h"

struct hook_graphs {
	pthread_mutex_t lock;
	struct ptrmap execs; /* CUgraphExec -> struct hook_gexec */
};

/* Before ctx is destroyed: the records of its executables go (the driver
 * destroys the snapshots and twins with it). */
void hook_graph_ctx_gone(void *ctx);

#endif
