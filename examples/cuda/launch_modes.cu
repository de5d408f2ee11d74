/* Every way the CUDA runtime can launch a kernel, one kernel per way, so a
 * trace shows which launch paths the hook sees and probes:
 *   <<<>>>, a non-default stream, cudaLaunchKernelEx with attributes, a
 *   cooperative launch with grid.sync(), a stream-captured graph replayed 3
 *   times, an explicit graph (cudaGraphAddKernelNode), a kernel using a
 *   __device__ variable and __constant__ memory (module globals must stay
 *   consistent between probed and unprobed copies), a 7x5x3 block (threads
 *   not a multiple of 32).
 * Values are small multiples of powers of two so the float results are exact
 * and compared with == against the CPU. */
#include <cooperative_groups.h>
#include <vector>
#include "common.h"

namespace cg = cooperative_groups;

__global__ void lm_vec_add(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] = a[i] + b[i];
}

__global__ void lm_stream_scale(const float *x, float *y, float s, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = x[i] * s;
}

__global__ void lm_ex_kernel(const float *x, float *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = x[i] * x[i] + 1.0f;
}

/* Phase 2 reads what other blocks wrote in phase 1: wrong without the grid
 * barrier. */
__global__ void lm_coop_sync(int *a, int *b, int n)
{
	cg::grid_group grid = cg::this_grid();
	int stride = gridDim.x * blockDim.x;
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
		a[i] = 3 * i + 1;
	grid.sync();
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
		b[i] = a[(i + 1) % n] + a[n - 1 - i];
}

__global__ void lm_captured_axpy(const float *x, float *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] += 2.0f * x[i];
}

__global__ void lm_node_iota(int *out, int n, int base)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = base + (int)(((long long)i * i) % 977);
}

__device__ unsigned long long lm_g_sum;
__constant__ int lm_c_coef[4];

__global__ void lm_global_add(const int *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		atomicAdd(&lm_g_sum, (unsigned long long)(x[i] * lm_c_coef[i % 4]));
}

__global__ void lm_global_read(unsigned long long *out)
{
	if (blockIdx.x == 0 && threadIdx.x == 0)
		*out = lm_g_sum;
}

__global__ void lm_block3d(int *out)
{
	int block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
	int threads = blockDim.x * blockDim.y * blockDim.z;
	int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
	out[block * threads + t] = blockIdx.x + 10 * blockIdx.y + 100 * blockIdx.z + 1000 * t;
}

static const int N = 1 << 20;
static const int TPB = 256;
static const int BLOCKS = (N + TPB - 1) / TPB;

static int check_floats(const char *what, const std::vector<float> &got, const std::vector<float> &want)
{
	for (size_t i = 0; i < want.size(); i++)
		if (got[i] != want[i])
			return report_mismatch(what, i, got[i], want[i]);
	print_checksum(what, got.data(), got.size() * sizeof(float));
	return 0;
}

static int check_ints(const char *what, const std::vector<int> &got, const std::vector<int> &want)
{
	for (size_t i = 0; i < want.size(); i++)
		if (got[i] != want[i])
			return report_mismatch(what, i, got[i], want[i]);
	print_checksum(what, got.data(), got.size() * sizeof(int));
	return 0;
}

static std::vector<float> download(const float *d, int n)
{
	std::vector<float> h(n);
	CK(cudaMemcpy(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost));
	return h;
}

static std::vector<int> download_ints(const int *d, int n)
{
	std::vector<int> h(n);
	CK(cudaMemcpy(h.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost));
	return h;
}

static int run_plain(const float *a, const float *b, float *c, const std::vector<float> &ha, const std::vector<float> &hb)
{
	poison_device(c, N * sizeof(float));
	lm_vec_add<<<BLOCKS, TPB>>>(a, b, c, N);
	CK_LAUNCH();
	std::vector<float> want(N);
	for (int i = 0; i < N; i++)
		want[i] = ha[i] + hb[i];
	return check_floats("vec_add", download(c, N), want);
}

static int run_stream(const float *a, float *c, const std::vector<float> &ha)
{
	cudaStream_t s;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	poison_device(c, N * sizeof(float));
	lm_stream_scale<<<BLOCKS, TPB, 0, s>>>(a, c, 4.0f, N);
	CK(cudaGetLastError());
	CK(cudaStreamSynchronize(s));
	CK(cudaStreamDestroy(s));
	std::vector<float> want(N);
	for (int i = 0; i < N; i++)
		want[i] = ha[i] * 4.0f;
	return check_floats("stream_scale", download(c, N), want);
}

static int run_ex(const float *a, float *c, const std::vector<float> &ha)
{
	cudaLaunchAttribute attrs[2];
	memset(attrs, 0, sizeof(attrs));
	attrs[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
	attrs[0].val.programmaticStreamSerializationAllowed = 0;
	attrs[1].id = cudaLaunchAttributeClusterDimension;
	attrs[1].val.clusterDim.x = 1;
	attrs[1].val.clusterDim.y = 1;
	attrs[1].val.clusterDim.z = 1;
	cudaLaunchConfig_t cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.gridDim = dim3(BLOCKS);
	cfg.blockDim = dim3(TPB);
	cfg.dynamicSmemBytes = 0;
	cfg.stream = 0;
	cfg.attrs = attrs;
	cfg.numAttrs = 2;
	poison_device(c, N * sizeof(float));
	int n = N;
	CK(cudaLaunchKernelEx(&cfg, lm_ex_kernel, a, c, n));
	CK_LAUNCH();
	std::vector<float> want(N);
	for (int i = 0; i < N; i++)
		want[i] = ha[i] * ha[i] + 1.0f;
	return check_floats("launch_ex", download(c, N), want);
}

static int run_coop(void)
{
	int dev, coop, sms, per_sm;
	CK(cudaGetDevice(&dev));
	CK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev));
	if (!coop) {
		fprintf(stderr, "device cannot do cooperative launches\n");
		return 1;
	}
	CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
	CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, lm_coop_sync, TPB, 0));
	/* As real apps do: as many blocks as fit at once on the original kernel. */
	int blocks = sms * per_sm;
	printf("info: coop grid %d blocks (%d per SM)\n", blocks, per_sm);
	int *a, *b;
	CK(cudaMalloc(&a, N * sizeof(int)));
	CK(cudaMalloc(&b, N * sizeof(int)));
	poison_device(a, N * sizeof(int));
	poison_device(b, N * sizeof(int));
	int n = N;
	void *args[] = { &a, &b, &n };
	CK(cudaLaunchCooperativeKernel((void *)lm_coop_sync, dim3(blocks), dim3(TPB), args, 0, 0));
	CK_LAUNCH();
	std::vector<int> want(N);
	for (int i = 0; i < N; i++)
		want[i] = (3 * ((i + 1) % N) + 1) + (3 * (N - 1 - i) + 1);
	int rc = check_ints("coop_sync", download_ints(b, N), want);
	CK(cudaFree(a));
	CK(cudaFree(b));
	return rc;
}

/* Two kernels captured on a stream, the graph replayed 3 times: y += 12 x. */
static int run_capture(const float *a, float *c, const std::vector<float> &ha)
{
	cudaStream_t s;
	cudaGraph_t g;
	cudaGraphExec_t ge;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaMemset(c, 0, N * sizeof(float)));
	CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	lm_captured_axpy<<<BLOCKS, TPB, 0, s>>>(a, c, N);
	lm_captured_axpy<<<BLOCKS, TPB, 0, s>>>(a, c, N);
	CK(cudaGetLastError());
	CK(cudaStreamEndCapture(s, &g));
	CK(cudaGraphInstantiate(&ge, g, 0));
	for (int r = 0; r < 3; r++)
		CK(cudaGraphLaunch(ge, s));
	CK(cudaStreamSynchronize(s));
	CK(cudaGraphExecDestroy(ge));
	CK(cudaGraphDestroy(g));
	CK(cudaStreamDestroy(s));
	std::vector<float> want(N);
	for (int i = 0; i < N; i++)
		want[i] = 12.0f * ha[i];
	return check_floats("captured_graph", download(c, N), want);
}

static int run_explicit_graph(void)
{
	int *out;
	CK(cudaMalloc(&out, N * sizeof(int)));
	poison_device(out, N * sizeof(int));
	int n = N, base = 7;
	void *args[] = { &out, &n, &base };
	cudaKernelNodeParams p;
	memset(&p, 0, sizeof(p));
	p.func = (void *)lm_node_iota;
	p.gridDim = dim3(BLOCKS);
	p.blockDim = dim3(TPB);
	p.sharedMemBytes = 0;
	p.kernelParams = args;
	p.extra = NULL;
	cudaGraph_t g;
	cudaGraphNode_t node;
	cudaGraphExec_t ge;
	CK(cudaGraphCreate(&g, 0));
	CK(cudaGraphAddKernelNode(&node, g, NULL, 0, &p));
	CK(cudaGraphInstantiate(&ge, g, 0));
	CK(cudaGraphLaunch(ge, 0));
	CK(cudaGraphLaunch(ge, 0));
	CK(cudaDeviceSynchronize());
	CK(cudaGraphExecDestroy(ge));
	CK(cudaGraphDestroy(g));
	std::vector<int> want(N);
	for (int i = 0; i < N; i++)
		want[i] = base + (int)(((long long)i * i) % 977);
	int rc = check_ints("explicit_graph", download_ints(out, N), want);
	CK(cudaFree(out));
	return rc;
}

/* Two launches of lm_global_add, then lm_global_read: the sum must carry over
 * whichever copy of the module (probed or not) each launch ran in. */
static int run_globals(void)
{
	const int coef[4] = { 1, 2, 3, 5 };
	const unsigned long long zero = 0;
	std::vector<int> hx(N);
	for (int i = 0; i < N; i++)
		hx[i] = i % 101;
	int *x;
	unsigned long long *out;
	CK(cudaMalloc(&x, N * sizeof(int)));
	CK(cudaMalloc(&out, sizeof(*out)));
	CK(cudaMemcpy(x, hx.data(), N * sizeof(int), cudaMemcpyHostToDevice));
	CK(cudaMemcpyToSymbol(lm_c_coef, coef, sizeof(coef)));
	CK(cudaMemcpyToSymbol(lm_g_sum, &zero, sizeof(zero)));
	poison_device(out, sizeof(*out));
	lm_global_add<<<BLOCKS, TPB>>>(x, N);
	CK_LAUNCH();
	lm_global_add<<<BLOCKS, TPB>>>(x, N);
	CK_LAUNCH();
	lm_global_read<<<1, 32>>>(out);
	CK_LAUNCH();
	unsigned long long got_dev, got_sym;
	CK(cudaMemcpy(&got_dev, out, sizeof(got_dev), cudaMemcpyDeviceToHost));
	CK(cudaMemcpyFromSymbol(&got_sym, lm_g_sum, sizeof(got_sym)));
	unsigned long long want = 0;
	for (int i = 0; i < N; i++)
		want += (unsigned long long)(hx[i] * coef[i % 4]);
	want *= 2;
	CK(cudaFree(x));
	CK(cudaFree(out));
	if (got_dev != want)
		return report_mismatch("global_read", 0, (double)got_dev, (double)want);
	if (got_sym != want)
		return report_mismatch("global_symbol", 0, (double)got_sym, (double)want);
	printf("checksum globals %llu\n", want);
	return 0;
}

static int run_block3d(void)
{
	const dim3 grid(3, 2, 2), block(7, 5, 3);
	const int threads = 7 * 5 * 3, blocks = 3 * 2 * 2, n = threads * blocks;
	int *out;
	CK(cudaMalloc(&out, n * sizeof(int)));
	poison_device(out, n * sizeof(int));
	lm_block3d<<<grid, block>>>(out);
	CK_LAUNCH();
	std::vector<int> want(n);
	for (int bz = 0; bz < 2; bz++)
		for (int by = 0; by < 2; by++)
			for (int bx = 0; bx < 3; bx++)
				for (int t = 0; t < threads; t++) {
					int b = bx + 3 * (by + 2 * bz);
					want[b * threads + t] = bx + 10 * by + 100 * bz + 1000 * t;
				}
	int rc = check_ints("block3d", download_ints(out, n), want);
	CK(cudaFree(out));
	return rc;
}

int main(void)
{
	std::vector<float> ha(N), hb(N);
	for (int i = 0; i < N; i++) {
		ha[i] = (float)(i % 1024) * 0.5f;
		hb[i] = (float)(i % 77) * 0.25f;
	}
	float *a, *b, *c;
	CK(cudaMalloc(&a, N * sizeof(float)));
	CK(cudaMalloc(&b, N * sizeof(float)));
	CK(cudaMalloc(&c, N * sizeof(float)));
	CK(cudaMemcpy(a, ha.data(), N * sizeof(float), cudaMemcpyHostToDevice));
	CK(cudaMemcpy(b, hb.data(), N * sizeof(float), cudaMemcpyHostToDevice));

	int fails = 0;
	fails += run_plain(a, b, c, ha, hb);
	fails += run_stream(a, c, ha);
	fails += run_ex(a, c, ha);
	fails += run_coop();
	fails += run_capture(a, c, ha);
	fails += run_explicit_graph();
	fails += run_globals();
	fails += run_block3d();

	CK(cudaFree(a));
	CK(cudaFree(b));
	CK(cudaFree(c));
	printf("launch_modes %s\n", fails ? "FAILED" : "ok");
	return fails ? 1 : 0;
}
