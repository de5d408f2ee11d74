/* Memory access patterns whose every global access is known in advance, for
 * the DMAT accuracy check (tests/gpu/dmat_accuracy.sh, check_dmat.py): run
 * under `ntop record -p dmat`, the records of each kernel must be exactly
 * the accesses --dump-expected lists.
 *
 *   dm_linear    out[i] = in[i]                       (ld.global.nc, 4 B)
 *   dm_strided   out[i] = in[i * stride]
 *   dm_gather    out[i] = in[perm[i]]                  perm: seeded Fisher-Yates
 *   dm_scatter   out[perm[i]] = in[i]
 *   dm_random    K loads at pat_hash(seed, i, k) % n, then one store
 *   dm_vector    float4 load (16 B), 8-byte load, int atomicAdd (red, 4 B),
 *                8-byte store
 *   dm_async     cp.async global -> shared (kind 4), then a store
 *   dm_overflow  every 64th thread does 80 loads (past the probe's cap of 64
 *                records: 17 dropped each, the store included), others 8
 *
 * Every grid has one block more than n needs (and n is not a multiple of
 * the block size), so threads past n, guarded by `if (i < n)`, must leave no
 * records. Each thread accesses memory fewer than 64 times except in
 * dm_overflow. Accesses whose order the compiler could change (independent
 * loads) are separated by a compiler barrier, and loops are not unrolled,
 * so the program order of each thread's accesses is the order listed.
 *
 * Usage: patterns [--n N] [--seed S] [--only NAME,...] [--dump-expected FILE]
 * Prints per kernel "info: pattern NAME buf BUF base 0x... bytes N" (info:
 * lines differ between runs) and "checksum NAME ..." of its results; exit
 * 0 when every result matches the host's, 1 otherwise.
 * --dump-expected writes kernel,block,thread,k,addr,bytes,kind per access in
 * each thread's program order (kind 1 load, 2 store, 3 atomic, 4 async load),
 * kernels in launch order. */
#include <cuda_pipeline.h>

#include <string>
#include <vector>

#include "common.h"

static const int TPB = 256;
static const int STRIDE = 33;
static const int RANDOM_K = 16;
static const int OVER_HEAVY = 80, OVER_LIGHT = 8, OVER_EVERY = 64, OVER_STEP = 977;

enum { K_LOAD = 1, K_STORE = 2, K_ATOMIC = 3, K_ASYNC = 4 };

/* Keeps the compiler from moving memory accesses across it (emits nothing). */
#define ORDER() asm volatile("" ::: "memory")

/* A fixed 32-bit mix (murmur3's finaliser over the three inputs). */
__host__ __device__ inline uint32_t pat_hash(uint32_t seed, uint32_t tid, uint32_t k)
{
	uint32_t x = seed ^ (tid * 0x9E3779B1u) ^ (k * 0x85EBCA77u + 0x165667B1u);
	x ^= x >> 16;
	x *= 0x7FEB352Du;
	x ^= x >> 15;
	x *= 0x846CA68Bu;
	x ^= x >> 16;
	return x;
}

__host__ __device__ inline int over_loads(int i)
{
	return i % OVER_EVERY == 0 ? OVER_HEAVY : OVER_LIGHT;
}

__host__ __device__ inline int over_index(int i, int k, int n)
{
	return (int)(((long long)i + (long long)k * OVER_STEP) % n);
}

extern "C" __global__ void dm_linear(const float *in, float *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = __ldg(&in[i]);
}

extern "C" __global__ void dm_strided(const float *in, float *out, int n, int stride)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = in[(long long)i * stride];
}

extern "C" __global__ void dm_gather(const int *perm, const float *in, float *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = in[perm[i]];
}

extern "C" __global__ void dm_scatter(const int *perm, const float *in, float *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		float v = in[i];
		ORDER();
		out[perm[i]] = v;
	}
}

extern "C" __global__ void dm_random(const float *in, float *out, int n, uint32_t seed, int loads)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		float acc = 0.0f;
#pragma unroll 1
		for (int k = 0; k < loads; k++)
			acc += in[pat_hash(seed, (uint32_t)i, (uint32_t)k) % (uint32_t)n];
		out[i] = acc;
	}
}

extern "C" __global__ void dm_vector(const float4 *in4, const long long *in8, int *isum, long long *out8, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		float4 v = in4[i];
		ORDER();
		long long w = in8[i];
		ORDER();
		atomicAdd(&isum[i & 63], (int)v.x + (int)v.w);
		ORDER();
		out8[i] = w + 1;
	}
}

extern "C" __global__ void dm_async(const float *in, float *out, int n)
{
	__shared__ float s[TPB];
	int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
	if (i < n) {
		__pipeline_memcpy_async(&s[t], &in[i], sizeof(float));
		__pipeline_commit();
		__pipeline_wait_prior(0);
		out[i] = s[t] * 2.0f;
	}
}

extern "C" __global__ void dm_overflow(const float *in, float *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		float acc = 0.0f;
		int loads = over_loads(i);
#pragma unroll 1
		for (int k = 0; k < loads; k++)
			acc += in[over_index(i, k, n)];
		out[i] = acc;
	}
}

/* ---- host side ---- */

struct acc {
	uint64_t addr;
	uint32_t bytes, kind;
};

struct buf {
	const char *name;
	void *dev;
	size_t bytes;
};

struct ctx {
	int n, blocks;
	uint32_t seed;
	std::vector<float> in;  /* n * STRIDE floats: every kernel's input */
	std::vector<int> perm;
	float *d_in, *d_out;
	int *d_perm, *d_isum;
	float4 *d_in4;
	long long *d_in8, *d_out8;
	FILE *dump;
};

static uint64_t a_of(const void *base, size_t index, size_t size)
{
	return (uint64_t)(uintptr_t)base + index * size;
}

/* Thread i's accesses in program order (nothing for i >= n). */
typedef void (*accesses_fn)(const ctx &c, int i, std::vector<acc> &out);

static void acc_linear(const ctx &c, int i, std::vector<acc> &o)
{
	o.push_back({a_of(c.d_in, i, 4), 4, K_LOAD});
	o.push_back({a_of(c.d_out, i, 4), 4, K_STORE});
}

static void acc_strided(const ctx &c, int i, std::vector<acc> &o)
{
	o.push_back({a_of(c.d_in, (size_t)i * STRIDE, 4), 4, K_LOAD});
	o.push_back({a_of(c.d_out, i, 4), 4, K_STORE});
}

static void acc_gather(const ctx &c, int i, std::vector<acc> &o)
{
	o.push_back({a_of(c.d_perm, i, 4), 4, K_LOAD});
	o.push_back({a_of(c.d_in, c.perm[i], 4), 4, K_LOAD});
	o.push_back({a_of(c.d_out, i, 4), 4, K_STORE});
}

static void acc_scatter(const ctx &c, int i, std::vector<acc> &o)
{
	o.push_back({a_of(c.d_in, i, 4), 4, K_LOAD});
	o.push_back({a_of(c.d_perm, i, 4), 4, K_LOAD});
	o.push_back({a_of(c.d_out, c.perm[i], 4), 4, K_STORE});
}

static void acc_random(const ctx &c, int i, std::vector<acc> &o)
{
	for (int k = 0; k < RANDOM_K; k++)
		o.push_back({a_of(c.d_in, pat_hash(c.seed, i, k) % (uint32_t)c.n, 4), 4, K_LOAD});
	o.push_back({a_of(c.d_out, i, 4), 4, K_STORE});
}

static void acc_vector(const ctx &c, int i, std::vector<acc> &o)
{
	o.push_back({a_of(c.d_in4, i, 16), 16, K_LOAD});
	o.push_back({a_of(c.d_in8, i, 8), 8, K_LOAD});
	o.push_back({a_of(c.d_isum, i & 63, 4), 4, K_ATOMIC});
	o.push_back({a_of(c.d_out8, i, 8), 8, K_STORE});
}

static void acc_async(const ctx &c, int i, std::vector<acc> &o)
{
	o.push_back({a_of(c.d_in, i, 4), 4, K_ASYNC});
	o.push_back({a_of(c.d_out, i, 4), 4, K_STORE});
}

static void acc_overflow(const ctx &c, int i, std::vector<acc> &o)
{
	for (int k = 0; k < over_loads(i); k++)
		o.push_back({a_of(c.d_in, over_index(i, k, c.n), 4), 4, K_LOAD});
	o.push_back({a_of(c.d_out, i, 4), 4, K_STORE});
}

/* What each kernel's outputs must be, computed the way the device does. */
static float host_out(const ctx &c, int which, int i);

enum { P_LINEAR, P_STRIDED, P_GATHER, P_SCATTER, P_RANDOM, P_VECTOR, P_ASYNC, P_OVERFLOW, P_COUNT };

static const struct {
	const char *name;
	accesses_fn accesses;
} patterns[P_COUNT] = {
	{"dm_linear", acc_linear},   {"dm_strided", acc_strided}, {"dm_gather", acc_gather},
	{"dm_scatter", acc_scatter}, {"dm_random", acc_random},   {"dm_vector", acc_vector},
	{"dm_async", acc_async},     {"dm_overflow", acc_overflow},
};

static float host_out(const ctx &c, int which, int i)
{
	switch (which) {
	case P_LINEAR: return c.in[i];
	case P_STRIDED: return c.in[(size_t)i * STRIDE];
	case P_GATHER: return c.in[c.perm[i]];
	case P_ASYNC: return c.in[i] * 2.0f;
	case P_RANDOM: {
		float a = 0.0f;
		for (int k = 0; k < RANDOM_K; k++)
			a += c.in[pat_hash(c.seed, i, k) % (uint32_t)c.n];
		return a;
	}
	case P_OVERFLOW: {
		float a = 0.0f;
		for (int k = 0; k < over_loads(i); k++)
			a += c.in[over_index(i, k, c.n)];
		return a;
	}
	}
	return 0.0f;
}

static void launch(const ctx &c, int which)
{
	switch (which) {
	case P_LINEAR: dm_linear<<<c.blocks, TPB>>>(c.d_in, c.d_out, c.n); break;
	case P_STRIDED: dm_strided<<<c.blocks, TPB>>>(c.d_in, c.d_out, c.n, STRIDE); break;
	case P_GATHER: dm_gather<<<c.blocks, TPB>>>(c.d_perm, c.d_in, c.d_out, c.n); break;
	case P_SCATTER: dm_scatter<<<c.blocks, TPB>>>(c.d_perm, c.d_in, c.d_out, c.n); break;
	case P_RANDOM: dm_random<<<c.blocks, TPB>>>(c.d_in, c.d_out, c.n, c.seed, RANDOM_K); break;
	case P_VECTOR: dm_vector<<<c.blocks, TPB>>>(c.d_in4, c.d_in8, c.d_isum, c.d_out8, c.n); break;
	case P_ASYNC: dm_async<<<c.blocks, TPB>>>(c.d_in, c.d_out, c.n); break;
	case P_OVERFLOW: dm_overflow<<<c.blocks, TPB>>>(c.d_in, c.d_out, c.n); break;
	}
	CK_LAUNCH();
}

static std::vector<buf> buffers(const ctx &c, int which)
{
	size_t n = (size_t)c.n;
	buf in = {"in", c.d_in, n * 4}, out = {"out", c.d_out, n * 4}, perm = {"perm", c.d_perm, n * 4};
	switch (which) {
	case P_STRIDED: return {{"in", c.d_in, n * STRIDE * 4}, out};
	case P_GATHER:
	case P_SCATTER: return {perm, in, out};
	case P_VECTOR:
		return {{"in4", c.d_in4, n * 16}, {"in8", c.d_in8, n * 8}, {"isum", c.d_isum, 64 * 4},
			{"out8", c.d_out8, n * 8}};
	}
	return {in, out};
}

/* Reads back the kernel's outputs, compares them with the host's, prints
 * their checksum; the number of mismatches. */
static int verify(const ctx &c, int which)
{
	size_t n = (size_t)c.n;
	const char *name = patterns[which].name;
	if (which == P_VECTOR) {
		std::vector<long long> o8(n);
		std::vector<int> sum(64);
		CK(cudaMemcpy(o8.data(), c.d_out8, n * 8, cudaMemcpyDeviceToHost));
		CK(cudaMemcpy(sum.data(), c.d_isum, 64 * 4, cudaMemcpyDeviceToHost));
		std::vector<int> want(64, 0);
		int bad = 0;
		for (size_t i = 0; i < n; i++) {
			want[i & 63] += (int)(i % 100) + (int)(i % 7);
			if (o8[i] != (long long)i * 3 + 1 && !bad++)
				report_mismatch("dm_vector out8", i, (double)o8[i], (double)i * 3 + 1);
		}
		for (int k = 0; k < 64; k++)
			if (sum[k] != want[k] && !bad++)
				report_mismatch("dm_vector isum", k, sum[k], want[k]);
		print_checksum(name, o8.data(), n * 8);
		return bad;
	}
	std::vector<float> out(n);
	CK(cudaMemcpy(out.data(), c.d_out, n * 4, cudaMemcpyDeviceToHost));
	int bad = 0;
	for (size_t i = 0; i < n; i++) {
		size_t at = which == P_SCATTER ? (size_t)c.perm[i] : i;
		float want = which == P_SCATTER ? c.in[i] : host_out(c, which, (int)i);
		if (out[at] != want && !bad++)
			report_mismatch(name, at, out[at], want);
	}
	print_checksum(name, out.data(), n * 4);
	return bad;
}

static void dump(const ctx &c, int which)
{
	std::vector<acc> a;
	for (int b = 0; b < c.blocks; b++)
		for (int t = 0; t < TPB; t++) {
			int i = b * TPB + t;
			if (i >= c.n)
				continue;
			a.clear();
			patterns[which].accesses(c, i, a);
			for (size_t k = 0; k < a.size(); k++)
				fprintf(c.dump, "%s,%d,%d,%zu,0x%llx,%u,%u\n", patterns[which].name, b, t, k,
					(unsigned long long)a[k].addr, a[k].bytes, a[k].kind);
		}
}

/* splitmix64: a seeded generator for the permutation. */
static uint64_t next_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static void setup(ctx &c)
{
	size_t n = (size_t)c.n;
	c.in.resize(n * STRIDE);
	for (size_t j = 0; j < c.in.size(); j++)
		c.in[j] = (float)(j % 1000) * 0.25f;
	c.perm.resize(n);
	for (size_t j = 0; j < n; j++)
		c.perm[j] = (int)j;
	uint64_t s = c.seed;
	for (size_t j = n - 1; j > 0; j--) { /* Fisher-Yates */
		size_t r = (size_t)(next_rand(&s) % (j + 1));
		int t = c.perm[j];
		c.perm[j] = c.perm[r];
		c.perm[r] = t;
	}
	std::vector<float4> in4(n);
	std::vector<long long> in8(n);
	for (size_t j = 0; j < n; j++) {
		in4[j] = make_float4((float)(j % 100), 1.0f, 2.0f, (float)(j % 7));
		in8[j] = (long long)j * 3;
	}
	CK(cudaMalloc(&c.d_in, n * STRIDE * 4));
	CK(cudaMalloc(&c.d_out, n * 4));
	CK(cudaMalloc(&c.d_perm, n * 4));
	CK(cudaMalloc(&c.d_isum, 64 * 4));
	CK(cudaMalloc(&c.d_in4, n * 16));
	CK(cudaMalloc(&c.d_in8, n * 8));
	CK(cudaMalloc(&c.d_out8, n * 8));
	CK(cudaMemcpy(c.d_in, c.in.data(), n * STRIDE * 4, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(c.d_perm, c.perm.data(), n * 4, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(c.d_in4, in4.data(), n * 16, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(c.d_in8, in8.data(), n * 8, cudaMemcpyHostToDevice));
}

static int wanted(const std::string &only, const char *name)
{
	if (only.empty())
		return 1;
	std::string list = "," + only + ",";
	return list.find("," + std::string(name) + ",") != std::string::npos;
}

static void usage(void)
{
	fprintf(stderr, "usage: patterns [--n N] [--seed S] [--only NAME,...] [--dump-expected FILE]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	ctx c = {};
	c.n = 65500; /* not a multiple of TPB: the last block is partly guarded off */
	c.seed = 12345;
	std::string only;
	const char *dump_path = NULL;
	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];
		if (i + 1 >= argc)
			usage();
		if (a == "--n")
			c.n = (int)arg_long(argc, argv, ++i, 0);
		else if (a == "--seed")
			c.seed = (uint32_t)arg_long(argc, argv, ++i, 0);
		else if (a == "--only")
			only = argv[++i];
		else if (a == "--dump-expected")
			dump_path = argv[++i];
		else
			usage();
	}
	if (c.n < 2 || c.n > (1 << 22)) {
		fprintf(stderr, "--n takes 2 to %d\n", 1 << 22);
		return 2;
	}
	c.blocks = (c.n + TPB - 1) / TPB + 1; /* one block past n: all guarded off */
	if (dump_path && !(c.dump = fopen(dump_path, "w"))) {
		perror(dump_path);
		return 1;
	}
	if (c.dump)
		fputs("kernel,block,thread,k,addr,bytes,kind\n", c.dump);
	setup(c);
	printf("patterns: n %d, %d blocks of %d threads, seed %u\n", c.n, c.blocks, TPB, c.seed);
	int bad = 0, ran = 0;
	for (int p = 0; p < P_COUNT; p++) {
		if (!wanted(only, patterns[p].name))
			continue;
		ran++;
		for (const buf &b : buffers(c, p))
			printf("info: pattern %s buf %s base %p bytes %zu\n", patterns[p].name, b.name, b.dev, b.bytes);
		CK(cudaMemset(c.d_out, 0, (size_t)c.n * 4));
		CK(cudaMemset(c.d_isum, 0, 64 * 4));
		launch(c, p);
		bad += verify(c, p);
		if (c.dump)
			dump(c, p);
	}
	if (c.dump && fclose(c.dump) != 0) {
		perror(dump_path);
		return 1;
	}
	if (!ran) {
		fprintf(stderr, "--only %s matches no pattern\n", only.c_str());
		return 2;
	}
	printf("%s\n", bad ? "MISMATCH" : "all patterns verified");
	return bad ? 1 : 0;
}
