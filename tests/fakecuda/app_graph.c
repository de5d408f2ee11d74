/* Test application for probed graph replays: `scale` launched once during a
 * stream capture and once as an explicit kernel node of another graph; both
 * graphs are instantiated (the explicit one after its node's grid changed
 * in the executable, cuGraphExecKernelNodeSetParams), destroyed, and
 * replayed REPLAYS times each; then a third graph whose node is given
 * arguments as `extra` is replayed once. Prints a fixed summary and the
 * fake's count of node launches. Usage: app_graph KERNELS.ptx REPLAYS */
#include <string.h>
#include "app_util.h"

int main(int argc, char **argv)
{
	if (argc != 3)
		return fprintf(stderr, "usage: app_graph KERNELS.ptx REPLAYS\n"), 2;
	char *ptx = slurp(argv[1]);
	int replays = atoi(argv[2]);
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction scale;
	CUstream s;
	CUdeviceptr buf;
	float two = 2.0f;
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuCtxCreate(&ctx, NULL, 0, dev));
	CK(cuModuleLoadData(&mod, ptx));
	CK(cuModuleGetFunction(&scale, mod, "scale"));
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CK(cuMemAlloc(&buf, 4096 * sizeof(float)));
	void *params[] = { &buf, &two };

	/* captured: the launch becomes a node, nothing runs */
	CUgraph captured, explicit_g, extra_g;
	CUgraphExec cexec, eexec, xexec;
	CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	CK(cuLaunchKernel(scale, 2, 1, 1, 64, 1, 1, 0, s, params, NULL));
	CK(cuStreamEndCapture(s, &captured));
	CK(cuGraphInstantiate(&cexec, captured, 0));
	CK(cuGraphDestroy(captured));

	/* explicit, its grid changed in the executable after instantiation */
	CUDA_KERNEL_NODE_PARAMS np = { .func = scale, .gridDimX = 3, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 96,
				       .blockDimY = 1, .blockDimZ = 1, .kernelParams = params };
	CUgraphNode node;
	CK(cuGraphCreate(&explicit_g, 0));
	CK(cuGraphAddKernelNode(&node, explicit_g, NULL, 0, &np));
	CK(cuGraphInstantiate(&eexec, explicit_g, 0));
	np.gridDimX = 5;
	CK(cuGraphExecKernelNodeSetParams(eexec, node, &np));
	CK(cuGraphDestroy(explicit_g));

	for (int i = 0; i < replays; i++) {
		CK(cuGraphLaunch(cexec, s));
		CK(cuGraphLaunch(eexec, s));
	}

	/* a node with `extra` arguments: listed, declined, replayed as it is */
	struct { CUdeviceptr p; float f; } packed = { buf, 2.0f };
	size_t size = sizeof packed;
	void *extra[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, &packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
			  CU_LAUNCH_PARAM_END };
	CUDA_KERNEL_NODE_PARAMS xp = np;
	xp.kernelParams = NULL;
	xp.extra = extra;
	xp.gridDimX = 7;
	CK(cuGraphCreate(&extra_g, 0));
	if (cuGraphAddKernelNode(&node, extra_g, NULL, 0, &xp) == CUDA_SUCCESS) {
		CK(cuGraphInstantiate(&xexec, extra_g, 0));
		CK(cuGraphLaunch(xexec, s));
		CK(cuGraphExecDestroy(xexec));
	}
	CK(cuStreamSynchronize(s));
	CK(cuGraphExecDestroy(cexec));
	CK(cuGraphExecDestroy(eexec));
	int (*node_replays)(void) = (int (*)(void))fake_sym("fakecuda_graph_replays");
	printf("app_graph: %d replays of 2 graphs, %d failures\n", replays, failures);
	if (node_replays)
		printf("graph replays run: %d\n", node_replays());
	CK(cuMemFree(buf));
	CK(cuCtxDestroy(ctx));
	free(ptx);
	return failures != 0;
}
