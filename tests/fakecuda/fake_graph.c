/* fakecuda graphs: a graph is a list of kernel nodes (explicit ones and the
 * launches a stream capture recorded), each keeping its function, shape and
 * a copy of its argument bytes; an executable is a copy of those nodes, and
 * a replay runs each node as a launch (so a probed copy in a node fills its
 * map). Clones remember their originals (cuGraphNodeFindInClone), executable
 * nodes the graph node they came from (cuGraphExecKernelNodeSetParams, which
 * may change the function, as the driver allows). Enough for the hook's
 * graph twins; dependencies are ignored (nodes run in insertion order). */
#include <stdlib.h>
#include <string.h>
#include "fake.h"

#define FAKE_ARG_BYTES 64 /* bytes kept per argument */

struct fake_gnode {
	const struct fake_gnode *src;  /* clone: its original; exec node: its graph node */
	CUfunction f;
	unsigned grid[3], block[3], smem;
	int n_args;
	uint8_t args[FAKE_MAX_PARAMS][FAKE_ARG_BYTES];
	void *argp[FAKE_MAX_PARAMS];
	void *extra[5];            /* arguments given as `extra`: handed back as such */
	uint8_t buf[FAKE_MAX_PARAMS * 8];
	size_t buf_size;
};

struct fake_graph {
	struct fake_gnode **v;
	int n, cap;
	int is_exec;
};

static int fake_graph_replays;

/* Test hook: node launches replays ran so far. */
FAKE_EXPORT int fakecuda_graph_replays(void)
{
	return __atomic_load_n(&fake_graph_replays, __ATOMIC_RELAXED);
}

static struct fake_graph *fake_graph_new(int is_exec)
{
	struct fake_graph *g = fake_keep(calloc(1, sizeof *g));
	if (g)
		g->is_exec = is_exec;
	return g;
}

static struct fake_gnode *fake_graph_push(struct fake_graph *g)
{
	if (g->n == g->cap) {
		int cap = g->cap ? g->cap * 2 : 8;
		struct fake_gnode **v = realloc(g->v, (size_t)cap * sizeof *v);
		if (!v)
			return NULL;
		g->v = fake_keep(v);
		g->cap = cap;
	}
	struct fake_gnode *n = fake_keep(calloc(1, sizeof *n));
	if (n)
		g->v[g->n++] = n;
	return n;
}

/* Copies a launch's shape and argument bytes into node n. */
static CUresult fake_gnode_set(struct fake_gnode *n, CUfunction f, const unsigned grid[3], const unsigned block[3],
			       unsigned smem, void **params)
{
	const struct fake_func *fn = (const struct fake_func *)f;
	if (!fn || (fn->n_params > 0 && !params))
		return CUDA_ERROR_INVALID_VALUE;
	n->f = f;
	memcpy(n->grid, grid, sizeof n->grid);
	memcpy(n->block, block, sizeof n->block);
	n->smem = smem;
	n->n_args = fn->n_params;
	for (int i = 0; i < fn->n_params; i++) {
		size_t sz = fn->params[i].size < FAKE_ARG_BYTES ? fn->params[i].size : FAKE_ARG_BYTES;
		memcpy(n->args[i], params[i], sz);
		n->argp[i] = n->args[i];
	}
	return CUDA_SUCCESS;
}

/* `extra` arguments: each parameter's bytes at its offset in the buffer,
 * kept, and given back as `extra` by cuGraphKernelNodeGetParams. */
static int fake_gnode_extra(struct fake_gnode *n, const struct fake_func *fn, void **extra, void **params)
{
	const uint8_t *buf = NULL;
	for (int k = 0; extra[k] != CU_LAUNCH_PARAM_END; k += 2)
		if (extra[k] == CU_LAUNCH_PARAM_BUFFER_POINTER)
			buf = extra[k + 1];
		else if (extra[k] == CU_LAUNCH_PARAM_BUFFER_SIZE)
			n->buf_size = *(size_t *)extra[k + 1];
	if (!fn || !buf || n->buf_size > sizeof n->buf)
		return -1;
	memcpy(n->buf, buf, n->buf_size);
	for (int i = 0; i < fn->n_params; i++)
		params[i] = n->buf + fn->params[i].offset;
	n->extra[0] = CU_LAUNCH_PARAM_BUFFER_POINTER, n->extra[1] = n->buf;
	n->extra[2] = CU_LAUNCH_PARAM_BUFFER_SIZE, n->extra[3] = &n->buf_size, n->extra[4] = CU_LAUNCH_PARAM_END;
	return 0;
}

static CUresult fake_gnode_set_params(struct fake_gnode *n, const CUDA_KERNEL_NODE_PARAMS *p)
{
	void *params[FAKE_MAX_PARAMS];
	if (!p || (p->extra && p->kernelParams))
		return CUDA_ERROR_INVALID_VALUE;
	CUfunction f = p->func ? p->func : (CUfunction)p->kern;
	n->extra[0] = NULL;
	if (p->extra && fake_gnode_extra(n, (const struct fake_func *)f, p->extra, params) < 0)
		return CUDA_ERROR_INVALID_VALUE;
	return fake_gnode_set(n, f, (unsigned[]){ p->gridDimX, p->gridDimY, p->gridDimZ },
			      (unsigned[]){ p->blockDimX, p->blockDimY, p->blockDimZ }, p->sharedMemBytes,
			      p->extra ? params : p->kernelParams);
}

static void fake_gnode_copy(struct fake_gnode *dst, const struct fake_gnode *src)
{
	*dst = *src;
	for (int i = 0; i < dst->n_args; i++)
		dst->argp[i] = dst->args[i];
	if (dst->extra[0]) {
		dst->extra[1] = dst->buf;
		dst->extra[3] = &dst->buf_size;
	}
	dst->src = src;
}

CUresult fake_graph_capture(CUstream s, CUfunction f, const unsigned grid[3], const unsigned block[3], unsigned smem,
			    void **params)
{
	struct fake_stream *fs = (struct fake_stream *)s;
	struct fake_gnode *n = fs && fs->graph ? fake_graph_push(fs->graph) : NULL;
	return n ? fake_gnode_set(n, f, grid, block, smem, params) : CUDA_ERROR_INVALID_VALUE;
}

FAKE_EXPORT CUresult cuGraphCreate(CUgraph *g, unsigned int flags)
{
	(void)flags;
	*g = (CUgraph)fake_graph_new(0);
	return *g ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

FAKE_EXPORT CUresult cuGraphDestroy(CUgraph g)
{
	(void)g; /* kept: handles stay unique */
	return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuGraphAddKernelNode_v2(CUgraphNode *node, CUgraph g, const CUgraphNode *deps, size_t n,
					     const CUDA_KERNEL_NODE_PARAMS *p)
{
	(void)deps, (void)n;
	struct fake_gnode *gn = g ? fake_graph_push((struct fake_graph *)g) : NULL;
	if (!gn)
		return CUDA_ERROR_INVALID_VALUE;
	CUresult rc = fake_gnode_set_params(gn, p);
	if (rc == CUDA_SUCCESS)
		*node = (CUgraphNode)gn;
	else
		((struct fake_graph *)g)->n--;
	return rc;
}

FAKE_EXPORT CUresult cuGraphClone(CUgraph *clone, CUgraph g)
{
	const struct fake_graph *o = (const struct fake_graph *)g;
	struct fake_graph *c = o ? fake_graph_new(0) : NULL;
	for (int i = 0; c && i < o->n; i++) {
		struct fake_gnode *n = fake_graph_push(c);
		if (!n)
			return CUDA_ERROR_OUT_OF_MEMORY;
		fake_gnode_copy(n, o->v[i]);
	}
	*clone = (CUgraph)c;
	return c ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FAKE_EXPORT CUresult cuGraphNodeFindInClone(CUgraphNode *out, CUgraphNode orig, CUgraph clone)
{
	const struct fake_graph *c = (const struct fake_graph *)clone;
	for (int i = 0; c && i < c->n; i++)
		if (c->v[i]->src == (const struct fake_gnode *)orig) {
			*out = (CUgraphNode)c->v[i];
			return CUDA_SUCCESS;
		}
	return CUDA_ERROR_INVALID_VALUE;
}

FAKE_EXPORT CUresult cuGraphGetNodes(CUgraph g, CUgraphNode *nodes, size_t *n)
{
	const struct fake_graph *fg = (const struct fake_graph *)g;
	if (!fg || !n)
		return CUDA_ERROR_INVALID_VALUE;
	if (nodes)
		for (int i = 0; i < fg->n && (size_t)i < *n; i++)
			nodes[i] = (CUgraphNode)fg->v[i];
	*n = (size_t)fg->n;
	return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuGraphNodeGetType(CUgraphNode node, CUgraphNodeType *type)
{
	if (!node)
		return CUDA_ERROR_INVALID_VALUE;
	*type = CU_GRAPH_NODE_TYPE_KERNEL;
	return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuGraphKernelNodeGetParams_v2(CUgraphNode node, CUDA_KERNEL_NODE_PARAMS *p)
{
	struct fake_gnode *n = (struct fake_gnode *)node;
	if (!n || !p)
		return CUDA_ERROR_INVALID_VALUE;
	memset(p, 0, sizeof *p);
	p->func = n->f;
	p->gridDimX = n->grid[0], p->gridDimY = n->grid[1], p->gridDimZ = n->grid[2];
	p->blockDimX = n->block[0], p->blockDimY = n->block[1], p->blockDimZ = n->block[2];
	p->sharedMemBytes = n->smem;
	if (n->extra[0])
		p->extra = n->extra;
	else
		p->kernelParams = n->argp;
	return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuGraphKernelNodeSetParams_v2(CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS *p)
{
	return node ? fake_gnode_set_params((struct fake_gnode *)node, p) : CUDA_ERROR_INVALID_VALUE;
}

/* An executable: a copy of the graph's nodes, each knowing its graph node. */
static CUresult fake_graph_instantiate(CUgraphExec *e, CUgraph g)
{
	const struct fake_graph *o = (const struct fake_graph *)g;
	struct fake_graph *x = o ? fake_graph_new(1) : NULL;
	for (int i = 0; x && i < o->n; i++) {
		struct fake_gnode *n = fake_graph_push(x);
		if (!n)
			return CUDA_ERROR_OUT_OF_MEMORY;
		fake_gnode_copy(n, o->v[i]);
	}
	*e = (CUgraphExec)x;
	return x ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FAKE_EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec *e, CUgraph g, unsigned long long flags)
{
	(void)flags;
	return fake_graph_instantiate(e, g);
}

FAKE_EXPORT CUresult cuGraphExecKernelNodeSetParams_v2(CUgraphExec e, CUgraphNode node,
						       const CUDA_KERNEL_NODE_PARAMS *p)
{
	struct fake_graph *x = (struct fake_graph *)e;
	for (int i = 0; x && i < x->n; i++)
		if (x->v[i]->src == (const struct fake_gnode *)node) {
			const struct fake_gnode *src = x->v[i]->src;
			CUresult rc = fake_gnode_set_params(x->v[i], p);
			x->v[i]->src = src;
			return rc;
		}
	return CUDA_ERROR_INVALID_VALUE;
}

FAKE_EXPORT CUresult cuGraphExecDestroy(CUgraphExec e)
{
	(void)e;
	return CUDA_SUCCESS;
}

static CUresult fake_graph_launch(CUgraphExec e, CUstream s)
{
	const struct fake_graph *x = (const struct fake_graph *)e;
	if (!x || !x->is_exec)
		return CUDA_ERROR_INVALID_VALUE;
	for (int i = 0; i < x->n; i++) {
		const struct fake_gnode *n = x->v[i];
		CUresult rc = fake_launch_node(n->f, n->grid, n->block, n->smem, s, (void **)n->argp);
		if (rc != CUDA_SUCCESS)
			return rc;
	}
	__atomic_add_fetch(&fake_graph_replays, 1, __ATOMIC_RELAXED);
	return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuGraphLaunch(CUgraphExec e, CUstream s)
{
	return fake_graph_launch(e, s);
}

FAKE_EXPORT CUresult cuGraphLaunch_ptsz(CUgraphExec e, CUstream s)
{
	return fake_graph_launch(e, s);
}

/* Capture: the stream collects its launches into a graph of its own. */
void fake_graph_begin_capture(struct fake_stream *fs)
{
	fs->graph = fake_graph_new(0);
}
