/* Blocks whose warps end far apart, for checking block_sched's block
 * extents on a GPU (tests/gpu/block_records.sh): run under `ntop record -p
 * block_sched -p block_sched_warp`, each block's record must end with its
 * last warp, not with thread 0's.
 *
 *   bs_stagger   warp w of each 256-thread block spins (w + 1) * spin SM
 *                cycles from its own start, then writes: warp 0 leaves
 *                first, warp 7 last, so a block lives ~8 * spin cycles
 *   bs_early     only the block's last warp spins (8 * spin cycles); the
 *                others, thread 0's included, leave at once
 *
 * Usage: block_skew [--spin CYCLES] (default 20000; 4 blocks per SM).
 * Prints "info: block_skew spin=N blocks=B" and "checksum NAME ..." of each
 * kernel's output; exit 0 when every output matches the host's. */
#include <vector>
#include "common.h"

static const int TPB = 256;

static __device__ void spin_from(long long t0, long long cycles)
{
	while (clock64() - t0 < cycles)
		;
}

extern "C" __global__ void bs_stagger(int *out, long long spin)
{
	long long t0 = clock64();
	int w = threadIdx.x / 32;
	spin_from(t0, (w + 1) * spin);
	out[blockIdx.x * blockDim.x + threadIdx.x] = w + 1;
}

extern "C" __global__ void bs_early(int *out, long long spin)
{
	long long t0 = clock64();
	int w = threadIdx.x / 32;
	if (w == blockDim.x / 32 - 1)
		spin_from(t0, (w + 1) * spin);
	out[blockIdx.x * blockDim.x + threadIdx.x] = w + 1;
}

int main(int argc, char **argv)
{
	long long spin = 20000;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--spin") && i + 1 < argc) {
			spin = atoll(argv[++i]);
		} else {
			fprintf(stderr, "usage: block_skew [--spin CYCLES]\n");
			return 2;
		}
	}
	int sms = 0;
	CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	int blocks = 4 * sms, n = blocks * TPB;
	int *out;
	CK(cudaMalloc(&out, n * sizeof(int)));
	std::vector<int> host(n), want(n);
	for (int i = 0; i < n; i++)
		want[i] = i % TPB / 32 + 1;
	printf("info: block_skew spin=%lld blocks=%d\n", spin, blocks);
	int bad = 0;
	const char *names[] = { "bs_stagger", "bs_early" };
	for (int k = 0; k < 2; k++) {
		CK(cudaMemset(out, 0, n * sizeof(int)));
		if (k == 0)
			bs_stagger<<<blocks, TPB>>>(out, spin);
		else
			bs_early<<<blocks, TPB>>>(out, spin);
		CK_LAUNCH();
		CK(cudaMemcpy(host.data(), out, n * sizeof(int), cudaMemcpyDeviceToHost));
		bad |= host != want;
		printf("checksum %s %016llx\n", names[k], (unsigned long long)fnv1a(host.data(), n * sizeof(int)));
	}
	CK(cudaFree(out));
	return bad;
}
