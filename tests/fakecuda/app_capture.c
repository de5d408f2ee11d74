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
 *                 would catch a hook thread doing the same */
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

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	char *ptx = slurp(argv[1]);
	control = strcmp(argv[2], "control") == 0;
	if (!ptx || (!control && strcmp(argv[2], "hook") != 0))
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
