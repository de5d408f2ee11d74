/* Test application for the hook's plumbing tests: loads tests/fakecuda/
 * kernels.ptx through modules, a library and a cuLink chain, and launches
 * through every entry point (direct export, dlsym, cuGetProcAddress with and
 * without the per-thread flag, kernelParams and `extra`, cuLaunchKernelEx,
 * cooperative, stream capture and graphs), from several threads, and forks
 * once. Prints a fixed summary and exits with argv[2], so a test can check
 * that the hook changes neither. Usage: app_launch KERNELS.ptx EXIT_CODE */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cuda.h>
#include "app_util.h"

static CUcontext ctx;
static CUfunction fill, scale_f;
static CUdeviceptr buf;
static unsigned n_elems = 1024;

typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			      CUstream, void **, void **);
typedef CUresult (*launch_ex_fn)(const CUlaunchConfig *, CUfunction, void **, void **);
typedef CUresult (*coop_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			    CUstream, void **);

static void *getproc(const char *name, cuuint64_t flags)
{
	void *p = NULL;
	CUdriverProcAddressQueryResult st;
	CK(cuGetProcAddress(name, &p, 13000, flags, &st));
	return p;
}

static void launch_all_ways(CUstream s)
{
	void *params[] = { &buf, &n_elems };
	CK(cuLaunchKernel(fill, 4, 1, 1, 64, 1, 1, 0, s, params, NULL));

	/* dlsym on the driver the app was linked with, `extra` packing */
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	launch_fn ptsz = h ? (launch_fn)dlsym(h, "cuLaunchKernel_ptsz") : NULL;
	struct { CUdeviceptr p; unsigned n; unsigned pad; } packed = { buf, n_elems, 0 };
	size_t size = sizeof packed;
	void *extra[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, &packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
			  CU_LAUNCH_PARAM_END };
	if (!ptsz)
		printf("FAIL dlsym cuLaunchKernel_ptsz\n"), failures++;
	else
		CK(ptsz(fill, 5, 1, 1, 64, 1, 1, 0, 0, NULL, extra));
	if (h)
		dlclose(h);

	launch_fn lk0 = getproc("cuLaunchKernel", CU_GET_PROC_ADDRESS_DEFAULT);
	launch_fn lk2 = getproc("cuLaunchKernel", CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
	if (lk0)
		CK(lk0(fill, 6, 1, 1, 64, 1, 1, 0, s, params, NULL));
	if (lk2)
		CK(lk2(fill, 7, 1, 1, 64, 1, 1, 0, 0, params, NULL));

	CUlaunchConfig cfg = { .gridDimX = 8, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 64, .blockDimY = 1,
			       .blockDimZ = 1, .hStream = s };
	CK(cuLaunchKernelEx(&cfg, fill, params, NULL));
	launch_ex_fn ex2 = getproc("cuLaunchKernelEx", CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
	cfg.gridDimX = 9;
	cfg.hStream = 0;
	if (ex2)
		CK(ex2(&cfg, fill, NULL, extra));

	CK(cuLaunchCooperativeKernel(fill, 2, 1, 1, 64, 1, 1, 0, s, params));
	coop_fn coop2 = getproc("cuLaunchCooperativeKernel", CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
	if (coop2)
		CK(coop2(fill, 3, 1, 1, 64, 1, 1, 0, 0, params));
}

static void capture_and_graphs(CUstream s)
{
	void *params[] = { &buf, &n_elems };
	CUgraph g = NULL;
	CUgraphExec exec = NULL;
	CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	CK(cuLaunchKernel(fill, 10, 1, 1, 64, 1, 1, 0, s, params, NULL));
	CK(cuStreamEndCapture(s, &g));
	CK(cuGraphInstantiate(&exec, g, 0));
	for (int i = 0; i < 3; i++)
		CK(cuGraphLaunch(exec, s));

	CUDA_KERNEL_NODE_PARAMS np = { .func = fill, .gridDimX = 11, .gridDimY = 1, .gridDimZ = 1,
				       .blockDimX = 64, .blockDimY = 1, .blockDimZ = 1, .kernelParams = params };
	CUgraphNode node;
	CK(cuGraphCreate(&g, 0));
	CK(cuGraphAddKernelNode(&node, g, NULL, 0, &np));
}

static void *thread_main(void *arg)
{
	float factor = 1.0f;
	void *params[] = { &buf, &factor };
	CK(cuCtxSetCurrent(ctx));
	for (int i = 0; i < 25; i++)
		CK(cuLaunchKernel(scale_f, 4, 1, 1, 32 * (1 + (int)(long)arg % 2), 1, 1, 0, 0, params, NULL));
	return NULL;
}

static void numba_like(const char *ptx)
{
	CUlinkState st;
	void *cubin;
	size_t size;
	CUmodule mod;
	CUfunction f;
	void *params[] = { &buf, &n_elems };
	CK(cuLinkCreate(0, NULL, NULL, &st));
	CK(cuLinkAddData(st, CU_JIT_INPUT_PTX, (void *)ptx, strlen(ptx) + 1, "kernels.ptx", 0, NULL, NULL));
	CK(cuLinkComplete(st, &cubin, &size));
	CK(cuModuleLoadData(&mod, cubin));
	CK(cuLinkDestroy(st));
	CK(cuModuleGetFunction(&f, mod, "fill"));
	CK(cuLaunchKernel(f, 12, 1, 1, 64, 1, 1, 0, 0, params, NULL));
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s KERNELS.ptx EXIT_CODE\n", argv[0]);
		return 2;
	}
	char *ptx = slurp(argv[1]);
	if (!ptx)
		return 2;
	CUdevice dev;
	CUmodule mod;
	CUlibrary lib;
	CUkernel kern;
	CUstream s;
	CUresult rc = cuInit(0);
	if (rc != CUDA_SUCCESS) {
		printf("cuInit failed: %d\n", (int)rc);
		free(ptx);
		return 4;
	}
	CK(cuDeviceGet(&dev, 0));
	CK(cuCtxCreate(&ctx, NULL, 0, dev));
	CK(cuStreamCreate(&s, 0));
	CK(cuModuleLoadData(&mod, ptx));
	CK(cuModuleGetFunction(&fill, mod, "fill"));
	CK(cuModuleGetFunction(&scale_f, mod, "scale"));
	CK(cuMemAlloc(&buf, n_elems * sizeof(float)));

	launch_all_ways(s);
	capture_and_graphs(s);

	/* The 13.0 runtime's path: a CUkernel passed as the CUfunction. */
	CK(cuLibraryLoadData(&lib, ptx, NULL, NULL, 0, NULL, NULL, 0));
	CK(cuLibraryGetKernel(&kern, lib, "scale"));
	float two = 2.0f;
	void *sparams[] = { &buf, &two };
	CK(cuLaunchKernel((CUfunction)kern, 4, 1, 1, 32, 1, 1, 0, s, sparams, NULL));

	pthread_t t[4];
	for (long i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, thread_main, (void *)i);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);

	numba_like(ptx);

	/* cuBLAS-style private export table: must reach the real driver. */
	const void *table = NULL;
	CUuuid id = { { 0 } };
	CK(cuGetExportTable(&table, &id));
	int secret = table ? ((int (*)(void))((void *const *)table)[1])() : -1;

	/* Let the hook's threads go idle first: the sanitizer build's allocator
	 * is not fork-safe, and a fork while a hook thread allocates leaves the
	 * child stuck (glibc's malloc handles fork; see app_loop.c). */
	cuCtxSynchronize();
	usleep(600 * 1000); /* past the timing thread's next tick (200 ms); idle ticks allocate nothing */
	fflush(stdout);
	pid_t child = fork();
	if (child == 0) {
		void *params[] = { &buf, &n_elems };
		CK(cuLaunchKernel(fill, 13, 1, 1, 64, 1, 1, 0, 0, params, NULL));
		/* Events are written by a background thread: a child that calls
		 * _exit() (no atexit drain) right after launching loses what is
		 * still queued (doc/hook.md). Wait past the writer's idle line
		 * (250 ms after the timing thread's stats at 200 ms), so the
		 * child reads as left early with nothing lost, like an idle
		 * worker that is killed. */
		usleep(700 * 1000);
		_exit(failures ? 1 : 0);
	}
	int status = 0;
	waitpid(child, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		printf("FAIL child status %d\n", status), failures++;
	CK(cuCtxSynchronize());
	CK(cuMemFree(buf));
	printf("app: done, export table says %d, %d failures\n", secret, failures);
	free(ptx);
	return failures ? 1 : atoi(argv[2]);
}
