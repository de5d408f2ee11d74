/* Test application for stream capture beside the hook's threads
 * (regress/hook_capture.sh). The main thread holds a global-mode capture
 * on one stream for CAPTURE_MS while a second thread launches `fill` on
 * another stream every few milliseconds (timed by the hook, and probed
 * under NTOP_PROBES): the hook's timing thread polls those launches' events
 * and its collector waits for the probed ones during the capture. Their
 * calls are "potentially unsafe" in CUDA's sense: in a thread not in relaxed
 * capture mode they would invalidate the capture (the fake models that).
 * Prints "capture rc=RC tolerated=N": RC is cuStreamEndCapture's result, N
 * the unsafe calls the fake saw from relaxed threads during the capture.
 * Usage: app_capture KERNELS.ptx MODE
 *   MODE hook:    as above; the capture must end valid (rc=0)
 *        control: the launching thread also queries an event itself during
 *                 the capture, as a thread in global mode: rc=901
 *                 (CUDA_ERROR_STREAM_CAPTURE_INVALIDATED), proving the fake
 *                 would catch a hook thread doing the same
 *        begins:  one thread; `fill` launched outside captures and once
 *                 inside a capture begun by each entry point there is
 *                 (exports by name, cuGetProcAddress), then `scale`, first
 *                 launched inside a capture begun behind the hook's back
 *                 (the fake's own cuStreamBeginCapture_v2). Prints how
 *                 often the stream's capture status was asked in each
 *                 phase: "asked quiet=Q captures=C after=A unseen=U" */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cuda.h>
#include "app_util.h"

#define CAPTURE_MS 400

static CUcontext ctx;
static CUfunction fill;
static CUdeviceptr buf;
static unsigned n_elems = 1024;
static int control;
static volatile int capturing, done;


static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

static void *launcher(void *arg)
{
	(void)arg;
	CUstream s;
	CUevent e;
	void *params[] = { &buf, &n_elems };
	CK(cuCtxSetCurrent(ctx));
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CK(cuEventCreate(&e, 0));
	while (!capturing)
		sleep_ms(1);
	while (!done) {
		CK(cuLaunchKernel(fill, 4, 1, 1, 64, 1, 1, 0, s, params, NULL));
		if (control) {
			CK(cuEventRecord(e, s));
			(void)cuEventQuery(e); /* unsafe in global mode: fails and invalidates */
		}
		sleep_ms(5);
	}
	return NULL;
}

typedef CUresult (*begin1_fn)(CUstream);
typedef CUresult (*begin2_fn)(CUstream, CUstreamCaptureMode);
typedef CUresult (*begin_graph_fn)(CUstream, CUgraph, const CUgraphNode *, const CUgraphEdgeData *, size_t,
				   CUstreamCaptureMode);
typedef CUresult (*end_fn)(CUstream, CUgraph *);

static void launch_n(CUfunction f, CUstream s, int n)
{
	void *params[] = { &buf, &n_elems };
	for (int i = 0; i < n; i++)
		CK(cuLaunchKernel(f, 4, 1, 1, 64, 1, 1, 0, s, params, NULL));
	CK(cuStreamSynchronize(s));
}

/* Begins a capture on s through entry point i (0..6), -1 past the last. */
static int begin_nth(int i, CUstream s, const char **name)
{
	static const char *const names[] = { "cuStreamBeginCapture", "cuStreamBeginCapture_ptsz",
					     "cuStreamBeginCapture_v2", "cuStreamBeginCapture_v2_ptsz",
					     "cuStreamBeginCaptureToGraph", "cuStreamBeginCaptureToGraph_ptsz" };
	int n = (int)(sizeof names / sizeof names[0]);
	if (i > n)
		return -1;
	CUgraph g = NULL;
	if (i == n) { /* the runtime's way in */
		void *p = NULL;
		CUdriverProcAddressQueryResult st;
		*name = "cuGetProcAddress(cuStreamBeginCapture)";
		CK(cuGetProcAddress("cuStreamBeginCapture", &p, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &st));
		if (p)
			CK(((begin2_fn)p)(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
		return p ? 0 : -1;
	}
	*name = names[i];
	void *p = dlsym(RTLD_DEFAULT, names[i]);
	if (!p)
		return -1;
	if (i < 2)
		CK(((begin1_fn)p)(s));
	else if (i < 4)
		CK(((begin2_fn)p)(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	else if (cuGraphCreate(&g, 0) == CUDA_SUCCESS)
		CK(((begin_graph_fn)p)(s, g, NULL, NULL, 0, CU_STREAM_CAPTURE_MODE_GLOBAL));
	return 0;
}

static unsigned long asked(unsigned long (*fn)(void))
{
	return fn ? fn() : 0;
}

static int begins(CUmodule mod)
{
	unsigned long (*ask)(void) = (unsigned long (*)(void))fake_sym("fakecuda_capture_asked");
	begin2_fn own_begin = (begin2_fn)fake_own_sym("cuStreamBeginCapture_v2");
	end_fn own_end = (end_fn)fake_own_sym("cuStreamEndCapture");
	end_fn end_ptsz = (end_fn)dlsym(RTLD_DEFAULT, "cuStreamEndCapture_ptsz");
	CUfunction scale;
	CUstream cs;
	CUgraph g;
	if (!ask || !own_begin || !own_end || !end_ptsz) {
		printf("FAIL: the fake's capture entry points or counter not found\n");
		return 1;
	}
	CK(cuModuleGetFunction(&scale, mod, "scale"));
	CK(cuStreamCreate(&cs, CU_STREAM_NON_BLOCKING));
	launch_n(fill, cs, 3); /* the first launch asks (a kernel first seen) */
	unsigned long a0 = asked(ask);
	launch_n(fill, cs, 8);
	unsigned long a1 = asked(ask);
	const char *name = "";
	for (int i = 0; begin_nth(i, cs, &name) == 0; i++) {
		void *params[] = { &buf, &n_elems };
		CK(cuLaunchKernel(fill, 4, 1, 1, 64, 1, 1, 0, cs, params, NULL));
		CUresult rc = i % 2 ? end_ptsz(cs, &g) : cuStreamEndCapture(cs, &g);
		printf("begin %s end rc=%d\n", name, (int)rc);
		if (rc != CUDA_SUCCESS)
			failures++;
	}
	unsigned long a2 = asked(ask);
	launch_n(fill, cs, 8);
	unsigned long a3 = asked(ask);
	/* behind the hook's back: scale's first launch finds it */
	CK(own_begin(cs, CU_STREAM_CAPTURE_MODE_GLOBAL));
	void *sparams[] = { &buf, &(float){ 2.0f } };
	CK(cuLaunchKernel(scale, 4, 1, 1, 64, 1, 1, 0, cs, sparams, NULL));
	CK(own_end(cs, &g));
	unsigned long a4 = asked(ask);
	launch_n(fill, cs, 8);
	unsigned long a5 = asked(ask);
	printf("asked quiet=%lu captures=%lu after=%lu unseen=%lu\n", a1 - a0, a2 - a1, a3 - a2, a5 - a4);
	CK(cuCtxSynchronize());
	printf("app_capture: done, %d failures\n", failures);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	char *ptx = slurp(argv[1]);
	control = strcmp(argv[2], "control") == 0;
	int begin_each = strcmp(argv[2], "begins") == 0;
	if (!ptx || (!control && !begin_each && strcmp(argv[2], "hook") != 0))
		return 2;
	unsigned long (*tolerated)(void) = (unsigned long (*)(void))fake_sym("fakecuda_unsafe_tolerated");
	CUdevice dev;
	CUmodule mod;
	CUstream cs;
	CUgraph g = NULL;
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuCtxCreate(&ctx, NULL, 0, dev));
	CK(cuModuleLoadData(&mod, ptx));
	CK(cuModuleGetFunction(&fill, mod, "fill"));
	CK(cuMemAlloc(&buf, n_elems * sizeof(float)));
	if (begin_each) {
		free(ptx);
		return begins(mod);
	}
	CK(cuStreamCreate(&cs, CU_STREAM_NON_BLOCKING));
	pthread_t t;
	pthread_create(&t, NULL, launcher, NULL);
	void *params[] = { &buf, &n_elems };
	unsigned long tol0 = tolerated ? tolerated() : 0;
	CK(cuStreamBeginCapture(cs, CU_STREAM_CAPTURE_MODE_GLOBAL));
	capturing = 1;
	for (int i = 0; i < 4; i++) {
		CK(cuLaunchKernel(fill, 4, 1, 1, 64, 1, 1, 0, cs, params, NULL));
		sleep_ms(CAPTURE_MS / 4);
	}
	CUresult rc = cuStreamEndCapture(cs, &g);
	unsigned long tol = tolerated ? tolerated() - tol0 : 0;
	done = 1;
	pthread_join(t, NULL);
	printf("capture rc=%d tolerated=%lu\n", (int)rc, tol);
	if (rc != (control ? CUDA_ERROR_STREAM_CAPTURE_INVALIDATED : CUDA_SUCCESS))
		failures++;
	CK(cuCtxSynchronize());
	CK(cuMemFree(buf));
	free(ptx);
	printf("app_capture: done, %d failures\n", failures);
	return failures ? 1 : 0;
}
