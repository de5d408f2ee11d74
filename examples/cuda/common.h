/* Shared helpers of the example apps: every CUDA call is checked, outputs are
 * hashed (FNV-1a 64 over the bytes) so a run under ntop can be compared with a
 * plain run line by line. Convention for all apps: lines starting with
 * "info:" carry timings and other run-to-run noise; every other line must be
 * identical between runs. Exit status 0 = results verified, 1 = mismatch or
 * CUDA error. */
#ifndef EXAMPLES_COMMON_H
#define EXAMPLES_COMMON_H
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CK(call)                                                              \
	do {                                                                  \
		cudaError_t err_ = (call);                                    \
		if (err_ != cudaSuccess) {                                    \
			fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__,   \
				__LINE__, #call, cudaGetErrorString(err_));   \
			exit(1);                                              \
		}                                                             \
	} while (0)

/* Checks a launch: the launch itself, then the kernel's completion. */
#define CK_LAUNCH()                                                           \
	do {                                                                  \
		CK(cudaGetLastError());                                       \
		CK(cudaDeviceSynchronize());                                  \
	} while (0)

static inline uint64_t fnv1a(const void *data, size_t n)
{
	const unsigned char *p = (const unsigned char *)data;
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 1099511628211ull;
	}
	return h;
}

/* Poison pattern: NaN for floats, 0xAB bytes in general, so a kernel that
 * silently does not run cannot pass verification by accident. */
static inline void poison_device(void *dptr, size_t bytes)
{
	CK(cudaMemset(dptr, 0xAB, bytes));
}

static inline void print_checksum(const char *what, const void *host, size_t bytes)
{
	printf("checksum %s %016llx\n", what, (unsigned long long)fnv1a(host, bytes));
}

static inline int report_mismatch(const char *what, size_t index, double got, double want)
{
	fprintf(stderr, "MISMATCH %s[%zu]: got %.9g want %.9g\n", what, index, got, want);
	return 1;
}

static inline long arg_long(int argc, char **argv, int i, long def)
{
	if (argc <= i)
		return def;
	char *end;
	long v = strtol(argv[i], &end, 10);
	if (*end || v <= 0) {
		fprintf(stderr, "bad argument %s\n", argv[i]);
		exit(2);
	}
	return v;
}

#endif
