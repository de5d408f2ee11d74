/* What a profiler costs as the application's own clock sees it: seven kernels
 * a user might time, each launched N times on a stream of its own with a
 * cudaEvent pair around every launch and a cudaEventSynchronize after it
 * (how people time their kernels), the first launch left out. Per kernel it
 * prints the median and p90 of those times, an FNV hash of the output (runs
 * under ntop must hash the same), and the whole run's wall time.
 *   app_cost [N]      N launches per kernel (default 21)
 *   app_cost burst M  one warm-up launch of a 1-block kernel and a sync, then
 *                     M launches back to back and one sync: the sustained
 *                     launch rate (M+1 launches in all)
 * Output (bench/app_cost.sh reads it):
 *   info: cost kernel=<name> launches=<n> median_us=<x> p90_us=<y> host_us=<h>
 *     (h: the median time the launch call took on this thread, the
 *     <<<>>> statement alone: host work the GPU may idle through)
 *   info: cost each kernel=<name> i=<l> us=<x>
 *     (with APP_COST_EACH=1: every launch's time, l from 1; bench/app_cost.sh's
 *     paired modes probe every other launch and compare the two halves)
 * APP_COST_PAUSE_MS=N: the app sleeps N ms after each kernel's first launch,
 * as a training loop's next step comes later: a probed copy built off the
 * app's threads is then ready for the rest. wall_s leaves the pauses out;
 *   info: cost paused_s=<s>   says how long they were.
 *   info: cost wall_s=<s>
 *   info: cost burst launches=<M> wall_s=<s> rate=<launches/s>
 *   cost check <name> <16 hex digits>
 * Lines starting with "info:" are timings; the others must match between
 * runs (common.h). Exit status 0, or 1 on a CUDA error or a wrong burst
 * count. */
#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>
#include <sched.h>
#include <sys/resource.h>
#include "common.h"

static const int FILL_N = 4 << 20, COPY_N = 16 << 20, RED_N = 4 << 20, FMA_N = 1 << 20;
static const int SAXPY_N = 16 << 20, SAXPY_BLOCKS = 528, GEMM = 1024, TILE = 32, FMA_ITERS = 4096;
static const int CALL_N = 2 << 20; /* about 8 us on an H100/H200 */

__global__ void k_fill(int *out, int v, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = v + i;
}

__global__ void k_copy(const float *in, float *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = in[i];
}

/* Integer sums, so the atomics' order cannot change the result. */
__global__ void k_reduce(const float *in, unsigned long long *sum, int n)
{
	__shared__ unsigned long long s[256];
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	s[threadIdx.x] = i < n ? (unsigned long long)(in[i] * 1000.0f + 0.5f) : 0;
	__syncthreads();
	for (int w = blockDim.x / 2; w > 0; w /= 2) {
		if (threadIdx.x < w)
			s[threadIdx.x] += s[threadIdx.x + w];
		__syncthreads();
	}
	if (threadIdx.x == 0)
		atomicAdd(sum, s[0]);
}

__global__ void k_sgemm(const float *a, const float *b, float *c, int n)
{
	__shared__ float ta[TILE][TILE], tb[TILE][TILE];
	int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
	float acc = 0.0f;
	for (int t = 0; t < n; t += TILE) {
		ta[threadIdx.y][threadIdx.x] = a[row * n + t + threadIdx.x];
		tb[threadIdx.y][threadIdx.x] = b[(t + threadIdx.y) * n + col];
		__syncthreads();
		for (int k = 0; k < TILE; k++)
			acc += ta[threadIdx.y][k] * tb[k][threadIdx.x];
		__syncthreads();
	}
	c[row * n + col] = acc;
}

__global__ void k_fma(float *out, int n, int iters)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	float x = (float)(i % 97) * 1e-3f, y = 1.0001f;
	for (int k = 0; k < iters; k++)
		x = fmaf(x, y, 1e-6f);
	out[i] = x;
}

__global__ void k_saxpy(float a, const float *x, float *y, int n)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		y[i] = a * x[i] + y[i];
}

/* A short kernel whose work is in a device function the compiler keeps as a
 * call (libraries and -G builds do): probes reach into .func bodies. */
__device__ __noinline__ float call_step(const float *in, int i)
{
	return in[i] * 1.5f + 0.25f;
}

__global__ void k_call(const float *in, float *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = call_step(in, i);
}

__global__ void k_tiny(int *out)
{
	out[threadIdx.x] += 1;
}

struct bufs {
	int *ints;
	float *f0, *f1, *f2;
	unsigned long long *sum;
};

/* One launch of kernel `k` on stream s. */
static void launch(int k, const bufs &b, cudaStream_t s)
{
	switch (k) {
	case 0: k_fill<<<FILL_N / 64, 64, 0, s>>>(b.ints, 7, FILL_N); break;
	case 1: k_copy<<<COPY_N / 256, 256, 0, s>>>(b.f0, b.f1, COPY_N); break;
	case 2: k_reduce<<<RED_N / 256, 256, 0, s>>>(b.f0, b.sum, RED_N); break;
	case 3: k_sgemm<<<dim3(GEMM / TILE, GEMM / TILE), dim3(TILE, TILE), 0, s>>>(b.f0, b.f1, b.f2, GEMM); break;
	case 4: k_fma<<<FMA_N / 256, 256, 0, s>>>(b.f2, FMA_N, FMA_ITERS); break;
	case 5: k_saxpy<<<SAXPY_BLOCKS, 256, 0, s>>>(2.0f, b.f0, b.f1, SAXPY_N); break;
	case 6: k_call<<<CALL_N / 256, 256, 0, s>>>(b.f0, b.f1, CALL_N); break;
	}
	CK(cudaGetLastError());
}

static const char *const NAMES[] = { "fill", "copy", "reduce", "sgemm", "fma", "saxpy", "call" };
static const int N_KERNELS = (int)(sizeof NAMES / sizeof NAMES[0]);

/* The output each kernel leaves, hashed after its N launches. */
static void check(int k, const bufs &b)
{
	const void *src = k == 0 ? (const void *)b.ints : k == 2 ? (const void *)b.sum : k == 4 || k == 3 ? b.f2 : b.f1;
	size_t bytes = k == 0 ? FILL_N * 4ul : k == 2 ? 8 : k == 3 ? (size_t)GEMM * GEMM * 4 : k == 4 ? FMA_N * 4ul
													: COPY_N * 4ul;
	std::vector<unsigned char> h(bytes);
	CK(cudaMemcpy(h.data(), src, bytes, cudaMemcpyDeviceToHost));
	printf("cost check %s %016llx\n", NAMES[k], (unsigned long long)fnv1a(h.data(), bytes));
}

static void reset(const bufs &b)
{
	std::vector<float> h(COPY_N);
	for (int i = 0; i < COPY_N; i++)
		h[i] = (float)(i % 1000) * 0.001f;
	CK(cudaMemcpy(b.f0, h.data(), COPY_N * 4ul, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(b.f1, h.data(), COPY_N * 4ul, cudaMemcpyHostToDevice));
	CK(cudaMemset(b.sum, 0, 8));
}

static double pct(std::vector<float> v, double p)
{
	std::sort(v.begin(), v.end());
	return v.empty() ? 0 : v[std::min(v.size() - 1, (size_t)(p * (double)(v.size() - 1) + 0.5))];
}

static int burst(long m)
{
	int *d;
	CK(cudaMalloc(&d, 32 * sizeof(int)));
	CK(cudaMemset(d, 0, 32 * sizeof(int)));
	cudaStream_t s;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	/* Warm-up: module load, and under ntop the kernel's instrumentation and
	 * JIT, stay out of the timed burst. */
	k_tiny<<<1, 32, 0, s>>>(d);
	CK(cudaGetLastError());
	CK(cudaStreamSynchronize(s));
	auto t0 = std::chrono::steady_clock::now();
	for (long i = 0; i < m; i++)
		k_tiny<<<1, 32, 0, s>>>(d);
	CK(cudaGetLastError());
	CK(cudaStreamSynchronize(s));
	double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	int h[32];
	CK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
	printf("info: cost burst launches=%ld wall_s=%.6f rate=%.0f\n", m, wall, (double)m / wall);
	printf("cost check burst %016llx\n", (unsigned long long)fnv1a(h, sizeof h));
	if (h[0] != m + 1 || h[31] != m + 1) {
		fprintf(stderr, "burst: counter %d, want %ld\n", h[0], m + 1);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "burst") == 0)
		return burst(arg_long(argc, argv, 2, 5000));
	long n = arg_long(argc, argv, 1, 21);
	auto t0 = std::chrono::steady_clock::now();
	bufs b;
	CK(cudaMalloc(&b.ints, FILL_N * 4ul));
	CK(cudaMalloc(&b.f0, COPY_N * 4ul));
	CK(cudaMalloc(&b.f1, COPY_N * 4ul));
	CK(cudaMalloc(&b.f2, COPY_N * 4ul));
	CK(cudaMalloc(&b.sum, 8));
	cudaStream_t s;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	cudaEvent_t e0, e1;
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	const char *each_env = getenv("APP_COST_EACH");
	const bool each = each_env && strcmp(each_env, "1") == 0;
	const char *pause_env = getenv("APP_COST_PAUSE_MS");
	const long pause_ms = pause_env ? atol(pause_env) : 0;
	std::chrono::steady_clock::duration paused{};
	/* whether the launching thread stayed on its CPU: a process whose other
	 * threads wake often may move it, and its caches go cold */
	struct rusage ru0, ru1;
	getrusage(RUSAGE_THREAD, &ru0);
	long launches = 0, moved = 0;
	int last_cpu = sched_getcpu();
	for (int k = 0; k < N_KERNELS; k++) {
		reset(b);
		std::vector<float> ms, host_ms;
		for (long l = 0; l < n; l++) {
			int cpu = sched_getcpu();
			moved += cpu != last_cpu;
			last_cpu = cpu;
			launches++;
			CK(cudaEventRecord(e0, s));
			auto h0 = std::chrono::steady_clock::now();
			launch(k, b, s);
			auto h1 = std::chrono::steady_clock::now();
			CK(cudaEventRecord(e1, s));
			CK(cudaEventSynchronize(e1));
			float t = 0;
			CK(cudaEventElapsedTime(&t, e0, e1));
			if (l == 0 && pause_ms > 0) {
				auto p0 = std::chrono::steady_clock::now();
				std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
				paused += std::chrono::steady_clock::now() - p0;
			}
			if (l > 0 && each)
				printf("info: cost each kernel=%s i=%ld us=%.2f\n", NAMES[k], l, t * 1e3);
			if (l > 0) {
				ms.push_back(t);
				host_ms.push_back((float)std::chrono::duration<double, std::milli>(h1 - h0).count());
			}
		}
		check(k, b);
		printf("info: cost kernel=%s launches=%zu median_us=%.2f p90_us=%.2f host_us=%.2f\n", NAMES[k],
		       ms.size(), pct(ms, 0.5) * 1e3, pct(ms, 0.9) * 1e3, pct(host_ms, 0.5) * 1e3);
	}
	getrusage(RUSAGE_THREAD, &ru1);
	printf("info: cost sched launches=%ld moved=%ld vcsw=%ld ivcsw=%ld\n", launches, moved,
	       ru1.ru_nvcsw - ru0.ru_nvcsw, ru1.ru_nivcsw - ru0.ru_nivcsw);
	double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0 - paused).count();
	printf("info: cost wall_s=%.3f\n", wall);
	if (pause_ms > 0)
		printf("info: cost paused_s=%.3f\n", std::chrono::duration<double>(paused).count());
	return 0;
}
