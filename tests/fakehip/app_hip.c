/* A HIP application in plain C for the HIP test double (and ntop's HIP
 * stand-in): vecadd launched through every entry point ntop hooks, each
 * result checked. The registered kernel comes from a clang-built host
 * library (tests/corpus/amdgpu/libhipvec.so: its constructor calls
 * __hipRegisterFatBinary/__hipRegisterFunction, its stub
 * __device_stub__vecadd pops the <<<>>> configuration and calls
 * hipLaunchKernel); the module kernel from a bundle or code object file
 * given to hipModuleLoadData ("-": no module, so that the trace has one
 * kernel named vecadd).
 *   app_hip LIBHIPVEC CODE_OBJECT|- [ROUNDS]
 * Prints one line per entry point and "app_hip: N launches, all correct";
 * exits 1 when a launch fails or computes a wrong sum. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "app_read.h"
#include "hip_mini_api.h"

#define N 1000

struct app {
	float *a, *b, *c;
	int n;
	void *args[4];
	int launches, bad;
};

/* Checks c = a + b after a launch through `api`, then clears c. */
static void check(struct app *x, const char *api, hipError_t rc)
{
	int wrong = 0;
	for (int i = 0; i < x->n && rc == hipSuccess; i++)
		wrong += x->c[i] != x->a[i] + x->b[i];
	x->launches++;
	if (rc != hipSuccess || wrong) {
		printf("%s: %s (error %d, %d wrong sums)\n", api, rc ? "failed" : "wrong", rc, wrong);
		x->bad = 1;
	}
	memset(x->c, 0, sizeof(float) * N);
}

static void launch_registered(struct app *x, void *dl, hipStream_t s)
{
	typedef void (*stub_fn)(float *, const float *, const float *, int);
	stub_fn stub = (stub_fn)dlsym(dl, "__device_stub__vecadd");
	const void *handle = dlsym(dl, "vecadd");
	dim3 grid = { (N + 255) / 256, 1, 1 }, block = { 256, 1, 1 };
	if (!stub || !handle) {
		printf("libhipvec: no vecadd stub or handle\n");
		x->bad = 1;
		return;
	}
	hipError_t rc = __hipPushCallConfiguration(grid, block, 0, s);
	if (rc == hipSuccess)
		stub(x->c, x->a, x->b, x->n);
	check(x, "vecadd<<<>>>", rc);
	check(x, "hipLaunchKernel", hipLaunchKernel(handle, grid, block, x->args, 0, s));
	hipEvent_t e0, e1;
	hipEventCreate(&e0);
	hipEventCreate(&e1);
	check(x, "hipExtLaunchKernel", hipExtLaunchKernel(handle, grid, block, x->args, 0, s, e0, e1, 0));
	hipEventDestroy(e0);
	hipEventDestroy(e1);
	check(x, "hipLaunchCooperativeKernel", hipLaunchCooperativeKernel(handle, grid, block, x->args, 0, s));
}

static void launch_module(struct app *x, hipFunction_t f, hipStream_t s)
{
	unsigned g = (N + 127) / 128;
	check(x, "hipModuleLaunchKernel", hipModuleLaunchKernel(f, g, 1, 1, 128, 1, 1, 0, s, x->args, NULL));
	struct {
		float *c;
		const float *a, *b;
		int n;
	} packed = { x->c, x->a, x->b, x->n };
	size_t size = 28; /* the explicit arguments: three pointers and an int */
	void *extra[] = { HIP_LAUNCH_PARAM_BUFFER_POINTER, &packed, HIP_LAUNCH_PARAM_BUFFER_SIZE, &size,
			  HIP_LAUNCH_PARAM_END };
	check(x, "hipModuleLaunchKernel(extra)", hipModuleLaunchKernel(f, g, 1, 1, 128, 1, 1, 0, s, NULL, extra));
	check(x, "hipExtModuleLaunchKernel",
	      hipExtModuleLaunchKernel(f, g * 128, 1, 1, 128, 1, 1, 0, s, x->args, NULL, NULL, NULL, 0));
}

/* Captured launches run when the graph is launched. */
static void launch_graph(struct app *x, hipFunction_t f, hipStream_t s)
{
	hipGraph_t g = NULL;
	hipGraphExec_t e = NULL;
	hipError_t rc = hipStreamBeginCapture(s, hipStreamCaptureModeGlobal);
	if (rc == hipSuccess)
		rc = hipModuleLaunchKernel(f, (N + 127) / 128, 1, 1, 128, 1, 1, 0, s, x->args, NULL);
	hipError_t end = hipStreamEndCapture(s, &g);
	rc = rc ? rc : end;
	if (rc == hipSuccess)
		rc = hipGraphInstantiate(&e, g, NULL, NULL, 0);
	for (int i = 0; i < 2; i++)
		check(x, "hipGraphLaunch", rc ? rc : hipGraphLaunch(e, s));
	if (e)
		hipGraphExecDestroy(e);
	if (g)
		hipGraphDestroy(g);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: app_hip LIBHIPVEC CODE_OBJECT|- [ROUNDS]\n");
		return 2;
	}
	int rounds = argc > 3 ? atoi(argv[3]) : 1;
	struct app x = { .n = N };
	hipStream_t s = NULL;
	if (hipInit(0) != hipSuccess || hipMalloc((void **)&x.a, sizeof(float) * N) != hipSuccess ||
	    hipMalloc((void **)&x.b, sizeof(float) * N) != hipSuccess ||
	    hipMalloc((void **)&x.c, sizeof(float) * N) != hipSuccess || hipStreamCreate(&s) != hipSuccess) {
		fprintf(stderr, "app_hip: HIP set-up failed\n");
		return 1;
	}
	for (int i = 0; i < N; i++)
		x.a[i] = (float)i, x.b[i] = (float)(2 * i + 1);
	x.args[0] = &x.c, x.args[1] = &x.a, x.args[2] = &x.b, x.args[3] = &x.n;
	void *dl = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
	int no_module = strcmp(argv[2], "-") == 0;
	void *image = no_module ? NULL : app_read_file(argv[2]);
	hipModule_t mod = NULL;
	hipFunction_t f = NULL;
	if (!dl || (!no_module && (!image || hipModuleLoadData(&mod, image) != hipSuccess ||
				   hipModuleGetFunction(&f, mod, "vecadd") != hipSuccess))) {
		fprintf(stderr, "app_hip: cannot load %s or %s: %s\n", argv[1], argv[2], dl ? "module" : dlerror());
		return 1;
	}
	for (int r = 0; r < rounds; r++) {
		launch_registered(&x, dl, s);
		if (f)
			launch_module(&x, f, s);
	}
	if (f) {
		launch_graph(&x, f, s);
		hipModuleUnload(mod);
	}
	hipStreamSynchronize(s);
	hipStreamDestroy(s);
	hipFree(x.a);
	hipFree(x.b);
	hipFree(x.c);
	free(image);
	printf("app_hip: %d launches, %s\n", x.launches, x.bad ? "SOME FAILED" : "all correct");
	return x.bad;
}
