/* CUDA graphs (hook_graph.h). Capture and explicit kernel nodes are listed
 * (`graph` lines) and replays counted; the kernels in them are probed at
 * replay time through a probed twin of the executable:
 *
 *  - at instantiation the graph is cloned (the snapshot: what the executable
 *    holds; the app may change or destroy its graph afterwards), and its
 *    kernel nodes are listed with their kernels;
 *  - cuGraphExecKernelNodeSetParams on the executable is applied to the
 *    snapshot too, cuGraphExecUpdate takes a new snapshot; either drops the
 *    twin, rebuilt from the snapshot at the next probed replay;
 *  - at a replay where any kernel node's kernel wants a probe (the same
 *    choice as for a launch: NTOP_PROBES/NTOP_KERNELS or the control file,
 *    every Nth, the limit), the twin (a clone of the snapshot, instantiated
 *    once) gets, per such node, the probed function with the original
 *    arguments plus fresh map buffers; nodes probed at an earlier replay but
 *    not now get their original function back; the twin runs in the
 *    original's place, bracketed by each node's start and end events, and
 *    every probed node gives one result;
 *  - a node that cannot be probed says why (no PTX, its kernel shares
 *    module globals with the app, arguments given as `extra`, the twin could
 *    not be made or updated), and then the original executable runs.
 * Captured launches are never touched while capturing. Kernels inside child
 * graph or conditional nodes are not looked at. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/cause.h"
#include "hook/cuda/hook_cuda.h"
#include "hook/cuda/hook_cuda_api.h"
#include "hook/cuda/hook_cuda_results.h"
#include "hook/hook_dispatch.h"
#include "hook/hook_events.h"
#include "hook/cuda/hook_table.h"
#include "trace/events.h"

#define GRAPH_LOCK() pthread_mutex_lock(&hook.graphs.lock)
#define GRAPH_UNLOCK() pthread_mutex_unlock(&hook.graphs.lock)

struct hook_gnode {
	CUgraphNode snap;      /* in the snapshot */
	CUgraphNode twin;      /* in the twin's graph */
	struct hook_kernel *k;
	CUfunction f;          /* the app's function (or CUkernel) */
	int has_extra;         /* arguments as an `extra` buffer */
	int probed;            /* the twin's node holds the probed function now */
};

struct hook_gexec {
	pthread_mutex_t lock;  /* one replay at a time updates the twin */
	void *ctx;
	unsigned long long flags; /* instantiation flags for the twin */
	CUgraph snap;
	CUgraph twin_graph;
	CUgraphExec twin;
	struct hook_gnode *nodes;
	int n_nodes;
};

/* ---- listing ------------------------------------------------------------ */

static void graph_node_event(CUfunction f, const unsigned grid[3], const unsigned block[3], const char *api)
{
	struct hook_kernel *k = hook_registry_kernel(f);
	if (!k || !hook_events_on())
		return;
	struct strbuf sb;
	hook_event_begin(&sb, "graph");
	event_add_int(&sb, "kid", k->kid);
	event_add(&sb, "api", api);
	event_add_dim3(&sb, "grid", grid);
	event_add_dim3(&sb, "block", block);
	hook_event_emit(&sb);
}

CUresult hook_cuGraphAddKernelNode(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps, size_t n_deps,
				   const CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
	CUresult rc = HOOK_REAL(cuGraphAddKernelNode)(node, graph, deps, n_deps, p);
	if (rc == CUDA_SUCCESS && p)
		graph_node_event(p->func, (unsigned[]){ p->gridDimX, p->gridDimY, p->gridDimZ },
				 (unsigned[]){ p->blockDimX, p->blockDimY, p->blockDimZ }, "cuGraphAddKernelNode");
	return rc;
}

CUresult hook_cuGraphAddKernelNode_v2(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps, size_t n_deps,
				      const CUDA_KERNEL_NODE_PARAMS *p)
{
	CUresult rc = HOOK_REAL(cuGraphAddKernelNode_v2)(node, graph, deps, n_deps, p);
	if (rc == CUDA_SUCCESS && p)
		graph_node_event(p->func ? p->func : (CUfunction)p->kern,
				 (unsigned[]){ p->gridDimX, p->gridDimY, p->gridDimZ },
				 (unsigned[]){ p->blockDimX, p->blockDimY, p->blockDimZ }, "cuGraphAddKernelNode");
	return rc;
}

/* ---- executables and their snapshots ----------------------------------- */

static void gexec_free(struct hook_gexec *g, int destroy)
{
	if (!g)
		return;
	if (destroy && g->twin)
		HOOK_REAL(cuGraphExecDestroy)(g->twin);
	if (destroy && g->twin_graph && cu.cuGraphDestroy)
		cu.cuGraphDestroy(g->twin_graph);
	if (destroy && g->snap && cu.cuGraphDestroy)
		cu.cuGraphDestroy(g->snap);
	pthread_mutex_destroy(&g->lock);
	free(g->nodes);
	free(g);
}

/* The twin goes (a later probed replay rebuilds it from the snapshot). */
static void gexec_drop_twin(struct hook_gexec *g)
{
	if (g->twin)
		HOOK_REAL(cuGraphExecDestroy)(g->twin);
	if (g->twin_graph && cu.cuGraphDestroy)
		cu.cuGraphDestroy(g->twin_graph);
	g->twin = NULL;
	g->twin_graph = NULL;
	for (int i = 0; i < g->n_nodes; i++)
		g->nodes[i].probed = 0;
}

/* The snapshot's kernel nodes and their kernels. */
static int gexec_list_nodes(struct hook_gexec *g)
{
	size_t n = 0;
	if (cu.cuGraphGetNodes(g->snap, NULL, &n) != CUDA_SUCCESS)
		return -1;
	CUgraphNode *all = calloc(n ? n : 1, sizeof *all);
	g->nodes = calloc(n ? n : 1, sizeof *g->nodes);
	if (!all || !g->nodes || cu.cuGraphGetNodes(g->snap, all, &n) != CUDA_SUCCESS) {
		free(all);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		CUgraphNodeType type;
		CUDA_KERNEL_NODE_PARAMS p;
		if (cu.cuGraphNodeGetType(all[i], &type) != CUDA_SUCCESS || type != CU_GRAPH_NODE_TYPE_KERNEL ||
		    cu.cuGraphKernelNodeGetParams_v2(all[i], &p) != CUDA_SUCCESS)
			continue;
		struct hook_gnode *gn = &g->nodes[g->n_nodes];
		gn->snap = all[i];
		gn->f = p.func ? p.func : (CUfunction)p.kern;
		gn->k = gn->f ? hook_registry_kernel(gn->f) : NULL;
		gn->has_extra = p.extra != NULL;
		g->n_nodes += gn->k != NULL;
	}
	free(all);
	return 0;
}

/* A record for a new executable: the graph cloned as it was instantiated. */
static void graph_snapshot(CUgraphExec exec, CUgraph graph, unsigned long long flags)
{
	if (!hook_events_on() || !cu.cuGraphClone || !cu.cuGraphGetNodes || !cu.cuGraphNodeGetType ||
	    !cu.cuGraphKernelNodeGetParams_v2 || !cu.cuGraphNodeFindInClone)
		return;
	struct hook_gexec *g = calloc(1, sizeof *g);
	if (!g)
		return;
	pthread_mutex_init(&g->lock, NULL);
	/* uploading takes a stream argument the twin has none for */
	g->flags = flags & ~(unsigned long long)CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD;
	if (cu.cuCtxGetCurrent)
		cu.cuCtxGetCurrent((CUcontext *)&g->ctx);
	if (cu.cuGraphClone(&g->snap, graph) != CUDA_SUCCESS || gexec_list_nodes(g) < 0 || g->n_nodes == 0) {
		gexec_free(g, 1);
		return;
	}
	GRAPH_LOCK();
	struct hook_gexec *old = ptrmap_get(&hook.graphs.execs, exec);
	if (ptrmap_put(&hook.graphs.execs, exec, g) < 0) {
		GRAPH_UNLOCK();
		gexec_free(g, 1);
		return;
	}
	GRAPH_UNLOCK();
	gexec_free(old, 1); /* the driver gave out the handle again: the old one went unseen */
}

static CUresult graph_instantiated(CUresult rc, CUgraphExec *exec, CUgraph graph, unsigned long long flags)
{
	if (rc == CUDA_SUCCESS && exec && graph)
		graph_snapshot(*exec, graph, flags);
	return rc;
}

CUresult hook_cuGraphInstantiate(CUgraphExec *exec, CUgraph graph, CUgraphNode *error_node, char *log, size_t size)
{
	return graph_instantiated(HOOK_REAL(cuGraphInstantiate)(exec, graph, error_node, log, size), exec, graph, 0);
}

CUresult hook_cuGraphInstantiate_v2(CUgraphExec *exec, CUgraph graph, CUgraphNode *error_node, char *log,
				    size_t size)
{
	return graph_instantiated(HOOK_REAL(cuGraphInstantiate_v2)(exec, graph, error_node, log, size), exec, graph, 0);
}

CUresult hook_cuGraphInstantiateWithFlags(CUgraphExec *exec, CUgraph graph, unsigned long long flags)
{
	return graph_instantiated(HOOK_REAL(cuGraphInstantiateWithFlags)(exec, graph, flags), exec, graph, flags);
}

CUresult hook_cuGraphInstantiateWithParams(CUgraphExec *exec, CUgraph graph, CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
	return graph_instantiated(HOOK_REAL(cuGraphInstantiateWithParams)(exec, graph, p), exec, graph,
				  p ? p->flags : 0);
}

CUresult hook_cuGraphInstantiateWithParams_ptsz(CUgraphExec *exec, CUgraph graph, CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
	return graph_instantiated(HOOK_REAL(cuGraphInstantiateWithParams_ptsz)(exec, graph, p), exec, graph,
				  p ? p->flags : 0);
}

CUresult hook_cuGraphExecDestroy(CUgraphExec exec)
{
	GRAPH_LOCK();
	struct hook_gexec *g = ptrmap_del(&hook.graphs.execs, exec);
	GRAPH_UNLOCK();
	gexec_free(g, 1);
	return HOOK_REAL(cuGraphExecDestroy)(exec);
}

/* The app changed an executable's kernel node: the snapshot follows. */
static void graph_node_updated(CUgraphExec exec, CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS *p)
{
	GRAPH_LOCK();
	struct hook_gexec *g = ptrmap_get(&hook.graphs.execs, exec);
	if (g)
		pthread_mutex_lock(&g->lock);
	GRAPH_UNLOCK();
	if (!g)
		return;
	CUgraphNode snap = NULL;
	if (cu.cuGraphNodeFindInClone(&snap, node, g->snap) == CUDA_SUCCESS && cu.cuGraphKernelNodeSetParams_v2)
		cu.cuGraphKernelNodeSetParams_v2(snap, p);
	for (int i = 0; i < g->n_nodes; i++)
		if (g->nodes[i].snap == snap) {
			g->nodes[i].f = p->func ? p->func : (CUfunction)p->kern;
			g->nodes[i].k = hook_registry_kernel(g->nodes[i].f);
			g->nodes[i].has_extra = p->extra != NULL;
		}
	gexec_drop_twin(g);
	pthread_mutex_unlock(&g->lock);
}

CUresult hook_cuGraphExecKernelNodeSetParams(CUgraphExec exec, CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
	CUresult rc = HOOK_REAL(cuGraphExecKernelNodeSetParams)(exec, node, p);
	if (rc == CUDA_SUCCESS && p) {
		CUDA_KERNEL_NODE_PARAMS v2;
		memset(&v2, 0, sizeof v2);
		memcpy(&v2, p, sizeof *p); /* the v2 struct extends v1 */
		graph_node_updated(exec, node, &v2);
	}
	return rc;
}

CUresult hook_cuGraphExecKernelNodeSetParams_v2(CUgraphExec exec, CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS *p)
{
	CUresult rc = HOOK_REAL(cuGraphExecKernelNodeSetParams_v2)(exec, node, p);
	if (rc == CUDA_SUCCESS && p)
		graph_node_updated(exec, node, p);
	return rc;
}

/* cuGraphExecUpdate: the executable now holds what `graph` holds. */
static CUresult graph_updated(CUresult rc, CUgraphExec exec, CUgraph graph)
{
	if (rc != CUDA_SUCCESS)
		return rc;
	GRAPH_LOCK();
	struct hook_gexec *g = ptrmap_del(&hook.graphs.execs, exec);
	unsigned long long flags = g ? g->flags : 0;
	GRAPH_UNLOCK();
	gexec_free(g, 1);
	graph_snapshot(exec, graph, flags);
	return rc;
}

CUresult hook_cuGraphExecUpdate(CUgraphExec exec, CUgraph graph, CUgraphNode *error_node,
				CUgraphExecUpdateResult *result)
{
	return graph_updated(HOOK_REAL(cuGraphExecUpdate)(exec, graph, error_node, result), exec, graph);
}

CUresult hook_cuGraphExecUpdate_v2(CUgraphExec exec, CUgraph graph, CUgraphExecUpdateResultInfo *info)
{
	return graph_updated(HOOK_REAL(cuGraphExecUpdate_v2)(exec, graph, info), exec, graph);
}

struct graph_ctx_gone {
	void *ctx;
	const void *hit;
};

static void graph_find_ctx(const void *key, void *val, void *arg)
{
	struct graph_ctx_gone *c = arg;
	if (!c->hit && ((struct hook_gexec *)val)->ctx == c->ctx)
		c->hit = key;
}

void hook_graph_ctx_gone(void *ctx)
{
	GRAPH_LOCK();
	for (;;) {
		struct graph_ctx_gone c = { ctx, NULL };
		ptrmap_each(&hook.graphs.execs, graph_find_ctx, &c);
		if (!c.hit)
			break;
		gexec_free(ptrmap_del(&hook.graphs.execs, c.hit), 0); /* the driver destroys them */
	}
	GRAPH_UNLOCK();
}

/* ---- replays -------------------------------------------------------------- */

/* Replays are counted per executable; a line at the 1st, 2nd, 4th, 8th...
 * replay keeps a graph loop from flooding the stream. */
static void graph_launch_event(CUgraphExec exec, const char *api)
{
	uint64_t n = hook_registry_graph_launch(exec);
	__atomic_add_fetch(&hook.launches, 1, __ATOMIC_RELAXED);
	if (!hook.atexit_done)
		hook_dispatch_register_exit();
	if ((n & (n - 1)) != 0 || !hook_events_on())
		return;
	struct strbuf sb;
	hook_event_begin(&sb, "graph");
	event_add(&sb, "api", api);
	event_add_hex(&sb, "exec", (unsigned long long)(uintptr_t)exec);
	event_add_int(&sb, "launches", (long long)n);
	hook_event_emit(&sb);
}

/* The twin: the snapshot cloned and instantiated once more. */
static int graph_twin(struct hook_gexec *g, char **cause)
{
	CUresult r;
	if (g->twin)
		return 0;
	if ((r = cu.cuGraphClone(&g->twin_graph, g->snap)) != CUDA_SUCCESS) {
		g->twin_graph = NULL;
		return cause_set(cause, "graph replay: cloning the graph for a probed twin failed (CUDA error %d)", (int)r);
	}
	for (int i = 0; i < g->n_nodes; i++)
		if ((r = cu.cuGraphNodeFindInClone(&g->nodes[i].twin, g->nodes[i].snap, g->twin_graph)) != CUDA_SUCCESS) {
			gexec_drop_twin(g);
			return cause_set(cause, "graph replay: a kernel node is missing from the twin (CUDA error %d)",
					 (int)r);
		}
	if ((r = HOOK_REAL(cuGraphInstantiateWithFlags)(&g->twin, g->twin_graph, g->flags)) != CUDA_SUCCESS) {
		g->twin = NULL;
		gexec_drop_twin(g);
		return cause_set(cause, "graph replay: instantiating the probed twin failed (CUDA error %d)", (int)r);
	}
	return 0;
}

/* One kernel node of one replay. */
struct graph_pick {
	struct hook_probe_pick pick;
	int wanted;
	struct hook_launch l;
	struct hook_inst *in;
	struct hook_job *job;
};

/* Sets node i of the twin to the probed copy with the snapshot's arguments
 * and this replay's maps (or, in == NULL, back to the snapshot's params). */
static int graph_set_node(struct hook_gexec *g, int i, const struct hook_inst *in, const struct hook_job *j,
			  char **cause)
{
	CUDA_KERNEL_NODE_PARAMS p;
	CUresult r = cu.cuGraphKernelNodeGetParams_v2(g->nodes[i].snap, &p);
	if (r != CUDA_SUCCESS)
		return cause_set(cause, "graph replay: reading the node's parameters failed (CUDA error %d)", (int)r);
	void *args[ENGINE_MAX_MAPS + 256];
	CUdeviceptr maps[ENGINE_MAX_MAPS];
	if (in) {
		const struct engine_result *res = in->res;
		int n = res->n_params_orig + res->n_maps;
		if (n > (int)(sizeof args / sizeof args[0]))
			return cause_set(cause, "graph replay: %d kernel parameters are too many", n);
		hook_probe_maps(in, j, maps);
		for (int a = 0; a < res->n_params_orig; a++)
			args[a] = p.kernelParams[a];
		for (int m = 0; m < res->n_maps; m++)
			args[res->maps[m].param_index] = &maps[m];
		p.func = (CUfunction)in->func;
		p.kern = NULL;
		p.kernelParams = args;
	}
	r = HOOK_REAL(cuGraphExecKernelNodeSetParams_v2)(g->twin, g->nodes[i].twin, &p);
	if (r != CUDA_SUCCESS)
		return cause_set(cause, "graph replay: updating the twin's node failed (CUDA error %d)", (int)r);
	g->nodes[i].probed = in != NULL;
	return 0;
}

/* Prepares node i of this replay (picks[i].wanted); declines it on failure. */
static void graph_prepare_node(struct hook_gexec *g, int i, struct graph_pick *gp, CUstream s, enum hook_row_id row)
{
	struct hook_gnode *gn = &g->nodes[i];
	CUDA_KERNEL_NODE_PARAMS p;
	char *cause = NULL;
	gp->l = (struct hook_launch){ .row = row, .api = hook_table[row].name, .f = gn->f, .stream = s, .ostream = s,
				      .seq = __atomic_add_fetch(&hook.seq, 1, __ATOMIC_RELAXED),
				      .dev = hook_cuda_current_dev() };
	if (cu.cuGraphKernelNodeGetParams_v2(gn->snap, &p) == CUDA_SUCCESS) {
		gp->l.grid[0] = p.gridDimX, gp->l.grid[1] = p.gridDimY, gp->l.grid[2] = p.gridDimZ;
		gp->l.block[0] = p.blockDimX, gp->l.block[1] = p.blockDimY, gp->l.block[2] = p.blockDimZ;
		gp->l.smem = p.sharedMemBytes;
	}
	if (gn->has_extra)
		cause_set(&cause, "graph node built with `extra` arguments: its twin cannot take map pointers");
	else if (hook_probe_prepare(&gp->l, gn->k, &gp->pick, 0, &gp->in, &gp->job, &cause) == 0 &&
		 hook_probe_uses_globals(gp->in))
		cause_set(&cause, "its kernel shares module globals with the app's module: inside a graph the "
				  "probed copy's globals could not be kept in step with the other nodes");
	else if (!cause && graph_set_node(g, i, gp->in, gp->job, &cause) == 0) {
		gp->l.slab = gp->job->slab_made;
		hook_stage_settle(gp->job, 1);
		return;
	}
	hook_probe_give_up(gn->k, gp->l.seq, &gp->pick, cause ? cause : "declined");
	free(cause);
	if (gp->job)
		hook_probe_job_free(gp->job);
	gp->job = NULL;
	gp->wanted = 0;
}

/* Queues the twin with each probed node's events around it. */
static CUresult graph_launch_twin(struct hook_gexec *g, struct graph_pick *gp, CUstream s, enum hook_row_id row)
{
	for (int i = 0; i < g->n_nodes; i++) {
		struct hook_job *j = gp[i].job;
		if (!j)
			continue;
		hook_probe_job_events(j, 1);
		if (!j->start || !j->end || (!j->dev_ready && cu.cuStreamWaitEvent(s, (CUevent)j->dev->ready, 0)) ||
		    cu.cuEventRecord(j->start, s) != CUDA_SUCCESS)
			return CUDA_ERROR_UNKNOWN;
	}
	return ((__typeof__(&hook_cuGraphLaunch))hook.real[row])(g->twin, s);
}

static void graph_give_up_all(struct hook_gexec *g, struct graph_pick *gp, const char *why)
{
	for (int i = 0; i < g->n_nodes; i++) {
		if (!gp[i].wanted)
			continue;
		hook_probe_give_up(g->nodes[i].k, gp[i].l.seq ? gp[i].l.seq : __atomic_add_fetch(&hook.seq, 1,
											      __ATOMIC_RELAXED),
				   &gp[i].pick, why);
		if (gp[i].job)
			hook_probe_job_free(gp[i].job);
		gp[i].job = NULL;
		gp[i].wanted = 0;
	}
}

/* 1 when the twin ran in the executable's place (rc set); 0: run the original. */
static int graph_probe_replay(struct hook_gexec *g, struct graph_pick *gp, CUstream s, enum hook_row_id row,
			      CUresult *rc)
{
	char *cause = NULL;
	int any = 0, ready = 0;
	for (int i = 0; i < g->n_nodes; i++) {
		__atomic_add_fetch(&g->nodes[i].k->launches, 1, __ATOMIC_RELAXED); /* a replay launches each node */
		any |= gp[i].wanted = hook_probe_wanted(g->nodes[i].k, &gp[i].pick);
	}
	if (!any)
		return 0;
	if (hook_cuda_capturing(s)) {
		graph_give_up_all(g, gp, "graph launched into a stream capture: replays are probed outside captures");
		return 0;
	}
	if (graph_twin(g, &cause) < 0) {
		graph_give_up_all(g, gp, cause);
		free(cause);
		return 0;
	}
	for (int i = 0; i < g->n_nodes; i++) {
		if (gp[i].wanted)
			graph_prepare_node(g, i, &gp[i], s, row);
		ready += gp[i].job != NULL;
	}
	for (int i = 0; i < g->n_nodes; i++)
		if (!gp[i].job && g->nodes[i].probed && graph_set_node(g, i, NULL, NULL, &cause) < 0) {
			gexec_drop_twin(g); /* a node we cannot restore: build it again next time */
			graph_give_up_all(g, gp, cause);
			free(cause);
			return 0;
		}
	if (!ready)
		return 0;
	*rc = graph_launch_twin(g, gp, s, row);
	if (*rc != CUDA_SUCCESS) {
		char why[96];
		snprintf(why, sizeof why, "graph replay: the probed twin did not launch (CUDA error %d); the original ran",
			 (int)*rc);
		graph_give_up_all(g, gp, why);
		return 0;
	}
	for (int i = 0; i < g->n_nodes; i++) {
		struct hook_job *j = gp[i].job;
		if (!j)
			continue;
		if (cu.cuEventRecord(j->end, s) != CUDA_SUCCESS) {
			hook_event_warn("probed graph node %llu: queuing its end event failed, result lost",
					(unsigned long long)j->seq);
			continue; /* the node may still write the buffer: keep it out of use */
		}
		hook_cuda_emit_launch(g->nodes[i].k, &gp[i].l, 1, 0);
		hook_results_submit(j);
	}
	return 1;
}

static CUresult graph_launch(enum hook_row_id row, CUgraphExec exec, CUstream s)
{
	graph_launch_event(exec, hook_table[row].name);
	struct hook_gexec *g = NULL;
	if (hook_events_on()) {
		hook_timing_ensure_thread();
		hook_control_ensure_thread();
		GRAPH_LOCK();
		if ((g = ptrmap_get(&hook.graphs.execs, exec)) != NULL)
			pthread_mutex_lock(&g->lock);
		GRAPH_UNLOCK();
	}
	if (g) {
		CUresult rc = CUDA_SUCCESS;
		struct graph_pick *gp = calloc((size_t)g->n_nodes, sizeof *gp);
		int done = gp && graph_probe_replay(g, gp, s, row, &rc);
		pthread_mutex_unlock(&g->lock);
		free(gp);
		if (done)
			return rc;
	}
	return ((__typeof__(&hook_cuGraphLaunch))hook.real[row])(exec, s);
}

CUresult hook_cuGraphLaunch(CUgraphExec exec, CUstream s)
{
	return graph_launch(HOOK_ROW_cuGraphLaunch, exec, s);
}

CUresult hook_cuGraphLaunch_ptsz(CUgraphExec exec, CUstream s)
{
	return graph_launch(HOOK_ROW_cuGraphLaunch_ptsz, exec, s);
}
