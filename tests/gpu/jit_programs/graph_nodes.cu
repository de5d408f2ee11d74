// Kernels that run only inside CUDA graphs. g_axpy is launched during a
// stream capture, g_count is an explicit kernel node of another graph;
// both graphs are instantiated, their graphs destroyed, and each
// executable replayed REPLAYS times (default 100). g_fill runs once outside
// any graph. Results are exact (small integers in float); prints sums and
// exits 1 on a wrong element.
#include <cstdio>
#include <cstdlib>
#include <vector>

__global__ void g_fill(float *v, float x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		v[i] = x;
}

__global__ void g_axpy(float *y, const float *x, float a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] += a * x[i];
}

__global__ void g_count(float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] += 1.0f;
}

#define CK(call)                                                                                       \
	do {                                                                                           \
		cudaError_t e_ = (call);                                                               \
		if (e_ != cudaSuccess) {                                                               \
			fprintf(stderr, "%s:%d: %s -> %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
			return 1;                                                                      \
		}                                                                                      \
	} while (0)

int main(int argc, char **argv)
{
	const int n = 1 << 18, replays = argc > 1 ? atoi(argv[1]) : 100;
	float *x, *y, *c;
	CK(cudaMalloc(&x, n * sizeof(float)));
	CK(cudaMalloc(&y, n * sizeof(float)));
	CK(cudaMalloc(&c, n * sizeof(float)));
	cudaStream_t s;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	g_fill<<<n / 256, 256, 0, s>>>(x, 1.0f, n);
	g_fill<<<n / 256, 256, 0, s>>>(y, 0.0f, n);
	g_fill<<<n / 256, 256, 0, s>>>(c, 0.0f, n);

	cudaGraph_t captured, explicit_g;
	cudaGraphExec_t cexec, eexec;
	CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	g_axpy<<<n / 128, 128, 0, s>>>(y, x, 2.0f, n);
	CK(cudaStreamEndCapture(s, &captured));
	CK(cudaGraphInstantiate(&cexec, captured, 0));
	CK(cudaGraphDestroy(captured));

	int nn = n;
	void *args[] = { &c, &nn };
	cudaKernelNodeParams p = {};
	p.func = (void *)g_count;
	p.gridDim = dim3(n / 64);
	p.blockDim = dim3(64);
	p.kernelParams = args;
	cudaGraphNode_t node;
	CK(cudaGraphCreate(&explicit_g, 0));
	CK(cudaGraphAddKernelNode(&node, explicit_g, nullptr, 0, &p));
	CK(cudaGraphInstantiate(&eexec, explicit_g, 0));
	CK(cudaGraphDestroy(explicit_g));

	for (int r = 0; r < replays; r++) {
		CK(cudaGraphLaunch(cexec, s));
		CK(cudaGraphLaunch(eexec, s));
	}
	CK(cudaStreamSynchronize(s));
	std::vector<float> hy(n), hc(n);
	CK(cudaMemcpy(hy.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(hc.data(), c, n * sizeof(float), cudaMemcpyDeviceToHost));
	int bad = 0;
	double sy = 0, sc = 0;
	for (int i = 0; i < n; i++) {
		bad += hy[i] != 2.0f * replays || hc[i] != (float)replays;
		sy += hy[i];
		sc += hc[i];
	}
	printf("graph_nodes %s: %d replays, axpy sum %.1f, count sum %.1f\n", bad ? "WRONG" : "ok", replays, sy, sc);
	CK(cudaGraphExecDestroy(cexec));
	CK(cudaGraphExecDestroy(eexec));
	return bad != 0;
}
