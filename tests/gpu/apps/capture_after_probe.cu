// A kernel launched (and probed) on a stream, then at once a global-mode
// capture on that same stream, a graph built, instantiated and replayed,
// while the probed launch's results are still being copied back and
// written; then the same with the capture on a second thread. Under ntop
// this once died with SIGSEGV. Prints deterministic checksums.
#include <cstdio>
#include <thread>
#include <vector>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("FAIL %s: %s\n", #x, cudaGetErrorString(e_)); return 1; } } while (0)

__global__ void axpy(float a, const float *x, float *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = a * x[i] + y[i];
}

static int capture_and_run(cudaStream_t s, float *x, float *y, int n)
{
	cudaGraph_t g;
	cudaGraphExec_t e;
	CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	for (int k = 0; k < 4; k++)
		axpy<<<(n + 255) / 256, 256, 0, s>>>(0.5f, x, y, n);
	CK(cudaStreamEndCapture(s, &g));
	CK(cudaGraphInstantiate(&e, g, 0));
	for (int r = 0; r < 3; r++)
		CK(cudaGraphLaunch(e, s));
	CK(cudaStreamSynchronize(s));
	CK(cudaGraphExecDestroy(e));
	CK(cudaGraphDestroy(g));
	return 0;
}

static double sum(const float *d, int n)
{
	std::vector<float> h(n);
	cudaMemcpy(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost);
	double s = 0;
	for (float v : h)
		s += v;
	return s;
}

int main()
{
	const int n = 1 << 22;
	float *x, *y;
	CK(cudaMalloc(&x, n * sizeof(float)));
	CK(cudaMalloc(&y, n * sizeof(float)));
	std::vector<float> h(n, 1.0f);
	CK(cudaMemcpy(x, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
	CK(cudaMemset(y, 0, n * sizeof(float)));
	cudaStream_t s, t;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithFlags(&t, cudaStreamNonBlocking));
	for (int round = 0; round < 5; round++) {
		axpy<<<(n + 255) / 256, 256, 0, s>>>(1.0f, x, y, n); // probed, results draining
		if (capture_and_run(s, x, y, n))
			return 1;
		axpy<<<(n + 255) / 256, 256, 0, s>>>(1.0f, x, y, n);
		int rc = 0;
		std::thread other([&] { rc = capture_and_run(t, x, y, n); }); // capture on another thread
		other.join();
		if (rc)
			return 1;
	}
	CK(cudaDeviceSynchronize());
	printf("capture_after_probe sum %.1f\n", sum(y, n));
	return 0;
}
