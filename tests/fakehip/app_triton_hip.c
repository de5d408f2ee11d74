/* A C program that drives a HIP runtime exactly as Triton 3.9's AMD
 * launcher does (triton/backends/amd/driver.c, read, not copied): the
 * runtime dlopen'ed by absolute path, RTLD_LAZY | RTLD_LOCAL;
 * hipDriverGetVersion by dlsym, a major version below 6 refused with
 * Triton's message; hipGetProcAddress by dlsym, then every call through
 * hipGetProcAddress at the driver's version with flags 0 (the required ones
 * must resolve, hipDrvLaunchKernelEx may not); hipGetDeviceProperties (ROCm
 * 6's layout at version 600+); hipModuleLoadDataEx with Triton's five JIT
 * options, hipModuleGetFunction, hipFuncGetAttribute x3; then launches of
 * a Triton elementwise add (tt_add: x, y, out, n, then the global and
 * profile scratch pointers, NULL) with Triton's kernelParams layout through
 * hipModuleLaunchKernel (twice), hipDrvLaunchKernelEx (no attributes; a
 * priority and the cooperative flag; Triton's cluster dimension and the
 * cooperative flag 0) and hipModuleLaunchCooperativeKernel (Triton passes
 * an `extra` that the runtime's declaration does not have: kept); the
 * cooperative launches over COOPERATIVE_GRID workgroups (default 1; tt_add
 * adds all n whatever the grid). Memory comes from hipMalloc
 * (Triton takes torch's), checked with hipPointerGetAttribute as Triton
 * checks its pointer arguments.
 *   app_triton_hip LIBAMDHIP64 CODE_OBJECT [COOPERATIVE_GRID]
 * Prints the device, the kernel, a line per launch; exits 1 on a failure
 * or a wrong sum. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "app_read.h"
#include "hip_mini_api.h"

#define N 1000
#define BLOCK 1024
#define NUM_WARPS 4

#define SYMS(X) \
	X(hipGetLastError, 1, hipError_t, (void)) \
	X(hipGetErrorString, 1, const char *, (hipError_t)) \
	X(hipGetDeviceProperties, 1, hipError_t, (hipDeviceProp_tR0600 *, int)) \
	X(hipModuleLoadDataEx, 1, hipError_t, (hipModule_t *, const void *, unsigned, int *, void **)) \
	X(hipModuleUnload, 1, hipError_t, (hipModule_t)) \
	X(hipModuleGetFunction, 1, hipError_t, (hipFunction_t *, hipModule_t, const char *)) \
	X(hipFuncGetAttribute, 1, hipError_t, (int *, int, hipFunction_t)) \
	X(hipDrvLaunchKernelEx, 0, hipError_t, (const hipLaunchConfig *, hipFunction_t, void **, void **)) \
	X(hipModuleLaunchKernel, 1, hipError_t, \
	  (hipFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, hipStream_t, void **, \
	   void **)) \
	X(hipModuleLaunchCooperativeKernel, 1, hipError_t, \
	  (hipFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, hipStream_t, void **, \
	   void **)) \
	X(hipPointerGetAttribute, 1, hipError_t, (void *, int, void *)) \
	X(hipMalloc, 1, hipError_t, (void **, size_t)) \
	X(hipMemcpy, 1, hipError_t, (void *, const void *, size_t, int)) \
	X(hipFree, 1, hipError_t, (void *))

static struct {
#define SYM_FIELD(name, required, ret, args) ret(*name) args;
	SYMS(SYM_FIELD)
#undef SYM_FIELD
} hip;

static int init_symbols(const char *path)
{
	void *lib = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
	if (!lib)
		return fprintf(stderr, "cannot open %s\n", path), -1;
	hipError_t (*get_version)(int *) = (hipError_t(*)(int *))dlsym(lib, "hipDriverGetVersion");
	int version = -1;
	if (!get_version)
		return fprintf(stderr, "cannot query 'hipDriverGetVersion' from libamdhip64.so\n"), -1;
	get_version(&version);
	if (version / 10000000 < 6)
		return fprintf(stderr, "libamdhip64 version %d.%d.%d is not supported! Required major version is >=6.\n",
			       version / 10000000, version % 10000000 / 100000, version % 100000),
		       -1;
	hipError_t (*getproc)(const char *, void **, int, uint64_t, int *) =
		(hipError_t(*)(const char *, void **, int, uint64_t, int *))dlsym(lib, "hipGetProcAddress");
	if (!getproc)
		return fprintf(stderr, "cannot query 'hipGetProcAddress' from libamdhip64.so\n"), -1;
	int status;
#define SYM_QUERY(name, required, ret, args) \
	if (getproc(#name, (void **)&hip.name, version, 0, &status) != hipSuccess && required) \
		return fprintf(stderr, "cannot get address for '" #name "' from libamdhip64.so\n"), -1;
	SYMS(SYM_QUERY)
#undef SYM_QUERY
	printf("runtime: HIP %d.%d\n", version / 10000000, version % 10000000 / 100000);
	return 0;
}

static int check(const char *what, hipError_t e)
{
	if (e == hipSuccess)
		return 0;
	fprintf(stderr, "Triton Error [HIP]: %s Code: %d, Messsage: %s\n", what, e, hip.hipGetErrorString(e));
	return -1;
}

struct run {
	hipFunction_t fn;
	float *x, *y, *out;
	int n;
	void *gscratch, *pscratch;
	void *params[6];
	int bad;
};

/* Triton's launcher checks each pointer argument the same way. */
static int check_pointer(void *p)
{
	void *dev = NULL;
	return check("hipPointerGetAttribute", hip.hipPointerGetAttribute(&dev, hipPointerAttributeDevicePointer, p)) ||
	       dev != p;
}

static void launch(struct run *r, const char *api, hipError_t e)
{
	float host[N];
	int wrong = 0;
	if (check(api, e) == 0 && check("hipMemcpy", hip.hipMemcpy(host, r->out, sizeof host, hipMemcpyDeviceToHost)) == 0)
		for (int i = 0; i < N; i++)
			wrong += host[i] != 3.0f * (float)i;
	else
		wrong = N;
	printf("%s: %s\n", api, wrong ? "WRONG" : "ok");
	r->bad |= wrong != 0;
	hip.hipMemcpy(r->out, (float[N]){ 0 }, sizeof(float) * N, hipMemcpyHostToDevice);
}

/* hipDrvLaunchKernelEx with two attributes, as Triton's launcher passes
 * its cluster dimension and cooperative flag. */
static void launch_ex(struct run *r, const char *what, unsigned grid, int id, int value, int cooperative)
{
	hipLaunchAttribute attrs[2];
	memset(attrs, 0, sizeof attrs);
	attrs[0].id = id;
	int *v = (int *)attrs[0].val.pad; /* a value, or Triton's cluster x, y, z */
	v[0] = value;
	if (id == hipLaunchAttributeClusterDimensionTriton)
		v[1] = v[2] = 1;
	attrs[1].id = hipLaunchAttributeCooperative;
	attrs[1].val.cooperative = cooperative;
	hipLaunchConfig c = { grid, 1, 1, 64 * NUM_WARPS, 1, 1, 0, NULL, attrs, 2 };
	launch(r, what, hip.hipDrvLaunchKernelEx(&c, r->fn, r->params, NULL));
}

static int run_kernel(struct run *r, unsigned coop_grid)
{
	unsigned grid = (N + BLOCK - 1) / BLOCK, threads = 64 * NUM_WARPS;
	if (check_pointer(r->x) || check_pointer(r->y) || check_pointer(r->out))
		return -1;
	launch(r, "hipModuleLaunchKernel",
	       hip.hipModuleLaunchKernel(r->fn, grid, 1, 1, threads, 1, 1, 0, NULL, r->params, NULL));
	launch(r, "hipModuleLaunchKernel",
	       hip.hipModuleLaunchKernel(r->fn, grid, 1, 1, threads, 1, 1, 0, NULL, r->params, NULL));
	if (hip.hipDrvLaunchKernelEx) {
		hipLaunchConfig c = { grid, 1, 1, threads, 1, 1, 0, NULL, NULL, 0 };
		launch(r, "hipDrvLaunchKernelEx", hip.hipDrvLaunchKernelEx(&c, r->fn, r->params, NULL));
		launch_ex(r, "hipDrvLaunchKernelEx(priority, cooperative)", coop_grid, hipLaunchAttributePriority, 1, 1);
		/* Triton's num_ctas > 1 launch, here with clusters of one workgroup */
		launch_ex(r, "hipDrvLaunchKernelEx(cluster)", grid, hipLaunchAttributeClusterDimensionTriton, 1, 0);
	}
	launch(r, "hipModuleLaunchCooperativeKernel",
	       hip.hipModuleLaunchCooperativeKernel(r->fn, coop_grid, 1, 1, threads, 1, 1, 0, NULL, r->params, NULL));
	return r->bad ? -1 : 0;
}

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 4)
		return fprintf(stderr, "usage: app_triton_hip LIBAMDHIP64 CODE_OBJECT [COOPERATIVE_GRID]\n"), 2;
	unsigned coop_grid = argc == 4 ? (unsigned)strtoul(argv[3], NULL, 10) : 1;
	void *image = app_read_file(argv[2]);
	if (!image)
		return fprintf(stderr, "cannot read %s\n", argv[2]), 1;
	if (init_symbols(argv[1]) < 0)
		return 1;
	hipDeviceProp_tR0600 props;
	if (check("hipGetDeviceProperties", hip.hipGetDeviceProperties(&props, 0)))
		return 1;
	printf("device: %s arch=%s cus=%d warp=%d cooperative=%d\n", props.name, props.gcnArchName,
	       props.multiProcessorCount, props.warpSize, props.cooperativeLaunch);
	int opts[5] = { 0 };
	char err[8192], log[8192];
	void *vals[5] = { (void *)(uintptr_t)sizeof err, err, (void *)(uintptr_t)sizeof log, log, (void *)1 };
	hipModule_t mod;
	struct run r = { .n = N };
	int regs = 0, spills = 0, max_threads = 0;
	if (check("hipModuleLoadDataEx", hip.hipModuleLoadDataEx(&mod, image, 5, opts, vals)) ||
	    check("hipModuleGetFunction", hip.hipModuleGetFunction(&r.fn, mod, "tt_add")))
		return 1;
	hip.hipFuncGetAttribute(&regs, hipFuncAttributeNumRegs, r.fn);
	hip.hipFuncGetAttribute(&spills, hipFuncAttributeLocalSizeBytes, r.fn);
	hip.hipFuncGetAttribute(&max_threads, hipFuncAttributeMaxThreadsPerBlock, r.fn);
	printf("kernel: tt_add regs=%d spills=%d max_threads=%d\n", regs, spills / 4, max_threads);
	float host[N];
	if (check("hipMalloc", hip.hipMalloc((void **)&r.x, sizeof host)) ||
	    check("hipMalloc", hip.hipMalloc((void **)&r.y, sizeof host)) ||
	    check("hipMalloc", hip.hipMalloc((void **)&r.out, sizeof host)))
		return 1;
	for (int i = 0; i < N; i++)
		host[i] = (float)i;
	hip.hipMemcpy(r.x, host, sizeof host, hipMemcpyHostToDevice);
	for (int i = 0; i < N; i++)
		host[i] = 2.0f * (float)i;
	hip.hipMemcpy(r.y, host, sizeof host, hipMemcpyHostToDevice);
	void *params[6] = { &r.x, &r.y, &r.out, &r.n, &r.gscratch, &r.pscratch };
	memcpy(r.params, params, sizeof params);
	int rc = run_kernel(&r, coop_grid ? coop_grid : 1);
	if (check("hipModuleUnload", hip.hipModuleUnload(mod)) || hip.hipGetLastError() != hipSuccess)
		rc = -1;
	hip.hipFree(r.x);
	hip.hipFree(r.y);
	hip.hipFree(r.out);
	printf("app_triton_hip: %s\n", rc ? "FAILED" : "all correct");
	free(image);
	return rc ? 1 : 0;
}
