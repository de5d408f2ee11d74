/* The fake's device, memory, streams, events and graphs. One device,
 * FAKEHIP_ARCH (default gfx90a:sramecc+:xnack-), 104 compute units at
 * 1.7 GHz; memory is host memory; every stream runs at once, so events
 * are stamped when recorded; a capturing stream records launches into its
 * graph and hipGraphLaunch runs them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "fake_hip.h"

pthread_mutex_t fh_lock = PTHREAD_MUTEX_INITIALIZER;

const char *fh_arch(void)
{
	const char *a = getenv("FAKEHIP_ARCH");
	return a && *a ? a : "gfx90a:sramecc+:xnack-";
}

void fh_arch_proc(char *buf, size_t len)
{
	snprintf(buf, len, "%.*s", (int)strcspn(fh_arch(), ":"), fh_arch());
}

hipError_t hipInit(unsigned flags)
{
	return flags ? hipErrorInvalidValue : hipSuccess;
}

hipError_t hipGetDeviceCount(int *n)
{
	*n = 1;
	return hipSuccess;
}

hipError_t hipSetDevice(int d)
{
	return d == 0 ? hipSuccess : hipErrorInvalidValue;
}

hipError_t hipGetDevice(int *d)
{
	*d = 0;
	return hipSuccess;
}

int fh_wave(void)
{
	/* HIP compiles gfx10+ for wave32 unless told otherwise */
	return strncmp(fh_arch(), "gfx1", 4) == 0 && strlen(fh_arch()) >= 6 && fh_arch()[5] != ':' ? 32 : 64;
}

hipError_t hipGetDeviceProperties(hipDeviceProp_t *p, int d)
{
	if (!p || d != 0)
		return hipErrorInvalidValue;
	FH_PROPS_FILL(p);
	return hipSuccess;
}

hipError_t hipDeviceGetAttribute(int *v, int attr, int d)
{
	if (!v || d != 0)
		return hipErrorInvalidValue;
	if (attr == hipDeviceAttributeClockRate)
		*v = FH_CLOCK_KHZ;
	else if (attr == hipDeviceAttributeMultiprocessorCount)
		*v = FH_CUS;
	else if (attr == hipDeviceAttributeWarpSize)
		*v = fh_wave();
	else
		return hipErrorInvalidValue;
	return hipSuccess;
}

const char *hipGetErrorString(hipError_t e)
{
	return e == hipSuccess ? "no error" : "fake HIP error";
}

hipError_t hipMalloc(void **p, size_t n)
{
	if (!p)
		return hipErrorInvalidValue;
	*p = calloc(1, n ? n : 1);
	return *p ? hipSuccess : hipErrorOutOfMemory;
}

hipError_t hipFree(void *p)
{
	free(p);
	return hipSuccess;
}

hipError_t hipMemcpy(void *dst, const void *src, size_t n, int kind)
{
	if ((n && (!dst || !src)) || kind < 0 || kind > hipMemcpyDefault)
		return hipErrorInvalidValue;
	memmove(dst, src, n);
	return hipSuccess;
}

hipError_t hipMemcpyAsync(void *dst, const void *src, size_t n, int kind, hipStream_t s)
{
	if (s && s->capturing)
		return hipErrorStreamCaptureInvalidated; /* not captured by the fake */
	return hipMemcpy(dst, src, n, kind);
}

hipError_t hipMemsetAsync(void *dst, int v, size_t n, hipStream_t s)
{
	if (s && s->capturing)
		return hipErrorStreamCaptureInvalidated;
	if (n && !dst)
		return hipErrorInvalidValue;
	memset(dst, v, n);
	return hipSuccess;
}

hipError_t hipDeviceSynchronize(void)
{
	return hipSuccess;
}

hipError_t hipStreamCreateWithFlags(hipStream_t *s, unsigned flags)
{
	(void)flags;
	*s = calloc(1, sizeof **s);
	return *s ? hipSuccess : hipErrorOutOfMemory;
}

hipError_t hipStreamCreate(hipStream_t *s)
{
	return hipStreamCreateWithFlags(s, 0);
}

hipError_t hipStreamDestroy(hipStream_t s)
{
	free(s);
	return hipSuccess;
}

hipError_t hipStreamSynchronize(hipStream_t s)
{
	return s && s->capturing ? hipErrorStreamCaptureInvalidated : hipSuccess;
}

hipError_t hipStreamWaitEvent(hipStream_t s, hipEvent_t e, unsigned flags)
{
	(void)s;
	return e && !flags ? hipSuccess : hipErrorInvalidValue;
}

hipError_t hipEventCreateWithFlags(hipEvent_t *e, unsigned flags)
{
	(void)flags;
	*e = calloc(1, sizeof **e);
	return *e ? hipSuccess : hipErrorOutOfMemory;
}

hipError_t hipEventCreate(hipEvent_t *e)
{
	return hipEventCreateWithFlags(e, 0);
}

hipError_t hipEventDestroy(hipEvent_t e)
{
	free(e);
	return hipSuccess;
}

hipError_t hipEventRecord(hipEvent_t e, hipStream_t s)
{
	if (!e)
		return hipErrorInvalidHandle;
	if (s && s->capturing)
		return hipErrorStreamCaptureInvalidated;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	e->ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	e->recorded = 1;
	return hipSuccess;
}

hipError_t hipEventSynchronize(hipEvent_t e)
{
	return e ? hipSuccess : hipErrorInvalidHandle;
}

hipError_t hipEventQuery(hipEvent_t e)
{
	return e ? hipSuccess : hipErrorInvalidHandle;
}

hipError_t hipEventElapsedTime(float *ms, hipEvent_t a, hipEvent_t b)
{
	if (!ms || !a || !b || !a->recorded || !b->recorded)
		return hipErrorInvalidHandle;
	*ms = (float)((double)(b->ns - a->ns) / 1e6);
	return hipSuccess;
}

hipError_t hipStreamBeginCapture(hipStream_t s, int mode)
{
	(void)mode;
	if (!s || s->capturing)
		return hipErrorInvalidValue;
	s->graph = calloc(1, sizeof *s->graph);
	s->capturing = s->graph != NULL;
	return s->graph ? hipSuccess : hipErrorOutOfMemory;
}

hipError_t hipStreamEndCapture(hipStream_t s, hipGraph_t *g)
{
	if (!s || !s->capturing || !g)
		return hipErrorInvalidValue;
	*g = s->graph;
	s->graph = NULL;
	s->capturing = 0;
	return hipSuccess;
}

hipError_t hipStreamIsCapturing(hipStream_t s, int *status)
{
	if (!status)
		return hipErrorInvalidValue;
	*status = s && s->capturing ? hipStreamCaptureStatusActive : hipStreamCaptureStatusNone;
	return hipSuccess;
}

hipError_t hipGraphCreate(hipGraph_t *g, unsigned flags)
{
	(void)flags;
	*g = calloc(1, sizeof **g);
	return *g ? hipSuccess : hipErrorOutOfMemory;
}

hipError_t hipGraphInstantiate(hipGraphExec_t *e, hipGraph_t g, hipGraphNode_t *err, char *log, size_t len)
{
	(void)err, (void)log, (void)len;
	if (!e || !g)
		return hipErrorInvalidValue;
	*e = (hipGraphExec_t)g; /* the graph itself: the fake never edits one after */
	return hipSuccess;
}

hipError_t hipGraphLaunch(hipGraphExec_t e, hipStream_t s)
{
	(void)s;
	struct ihipGraph *g = (struct ihipGraph *)e;
	if (!g)
		return hipErrorInvalidValue;
	for (int i = 0; i < g->n; i++) {
		hipError_t rc = fh_run(g->nodes[i].f, g->nodes[i].grid, g->nodes[i].block, g->nodes[i].kernarg);
		if (rc != hipSuccess)
			return rc;
	}
	return hipSuccess;
}

hipError_t hipGraphExecDestroy(hipGraphExec_t e)
{
	(void)e; /* the graph owns it */
	return hipSuccess;
}

hipError_t hipGraphDestroy(hipGraph_t g)
{
	for (int i = 0; g && i < g->n; i++)
		free(g->nodes[i].kernarg);
	if (g)
		free(g->nodes);
	free(g);
	return hipSuccess;
}
