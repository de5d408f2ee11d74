/* Internals of the HIP runtime test double (libamdhip64.so.5, built from
 * tests/fakehip/fake_hip_*.c). It runs on the CPU: device memory is host
 * memory, streams run at once, a code object's kernels are read from its
 * metadata note (its own small ELF and msgpack reader, not ntop's), a
 * launch lays the arguments out in a kernarg segment as the metadata
 * says, and "runs" the kernel: vecadd adds its vectors, every other kernel
 * does nothing. A probed copy (a kernel with an ntop_launch argument)
 * checks that block against the launch and fills each ntop_map_* buffer
 * with block_sched-style records (FAKEHIP_MAP, default "warp:24"). The
 * device is FAKEHIP_ARCH (default "gfx90a:sramecc+:xnack-"); occupancy is
 * modelled from a kernel's VGPRs (fake_hip_occupancy.c, FAKEHIP_VGPRS) and
 * cooperative launches that would not be co-resident are refused;
 * FAKEHIP_LAUNCH_LOG=FILE gets a line per launch. Built twice:
 * as HIP 5.2's libamdhip64.so.5 and, with fake_hip_rocm.c, as a
 * ROCm-7-shaped libamdhip64.so.7 (version 7.1, hipGetProcAddress, ROCm 6's
 * device properties), whose export list is ours, not ROCm's. */
#ifndef FAKEHIP_FAKE_HIP_H
#define FAKEHIP_FAKE_HIP_H
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "hip_mini_api.h"

#define FH_CUS 104
#define FH_CLOCK_KHZ 1700000
#define FH_MAX_ARGS 64

struct fh_arg {
	uint32_t offset, size;
	char kind[40];           /* .value_kind */
	char name[64];           /* .name, "" when absent */
};

struct fh_kernel {
	char name[256];          /* .name */
	uint32_t kernarg_size;
	int wave;                /* .wavefront_size */
	uint32_t vgprs;          /* .vgpr_count */
	uint32_t lds;            /* .group_segment_fixed_size */
	struct fh_arg args[FH_MAX_ARGS];
	int n_args;
};

struct ihipModuleSymbol_t;

struct fh_module {
	struct fh_module *next;
	uint8_t *co;             /* the code object (a private copy) */
	size_t size;
	struct fh_kernel *k;
	int n;
	struct ihipModuleSymbol_t *funcs; /* one per kernel: what hipModuleGetFunction hands out */
	int unloaded;
};

struct ihipModuleSymbol_t {
	struct fh_module *mod;
	struct fh_kernel *k;
};

/* A launch recorded by a capturing stream, replayed by hipGraphLaunch. */
struct fh_node {
	struct ihipModuleSymbol_t *f;
	unsigned grid[3], block[3];
	uint8_t *kernarg;
};

struct ihipGraph {
	struct fh_node *nodes;
	int n;
};

struct ihipStream_t {
	int capturing;
	int invalidated;
	struct ihipGraph *graph;
};

struct ihipEvent_t {
	uint64_t ns;
	int recorded;
};

extern pthread_mutex_t fh_lock;

/* fake_hip_meta.c: the kernels of a code object (ELF64, AMDGPU metadata
 * note); -1 when it is not one the fake can read. */
int fh_meta_read(const uint8_t *co, size_t size, struct fh_kernel **out, int *n);
/* fake_hip_bundle.c: the code object for the fake's device inside a
 * HIPF wrapper, an offload bundle (plain or zstd CCOB), or a bare object;
 * malloc'd copy. */
int fh_bundle_pick(const void *image, uint8_t **co, size_t *size);
/* fake_hip_module.c */
struct fh_module *fh_module_load(const void *image);
struct ihipModuleSymbol_t *fh_module_func(struct fh_module *m, const char *name);
struct ihipModuleSymbol_t *fh_host_func(const void *host);
/* fake_hip_launch.c */
/* A launch (cooperative: every workgroup must be co-resident; attrs:
 * hipDrvLaunchKernelEx's, logged). */
struct fh_how {
	const char *api;
	int cooperative;
	const hipLaunchAttribute *attrs;
	unsigned n_attrs;
};
hipError_t fh_launch(struct ihipModuleSymbol_t *f, const unsigned grid[3], const unsigned block[3], size_t smem,
		     hipStream_t s, void **params, void **extra, const struct fh_how *how);
hipError_t fh_run(const struct ihipModuleSymbol_t *f, const unsigned grid[3], const unsigned block[3],
		  const uint8_t *kernarg);
/* fake_hip_occupancy.c: workgroups of f resident per CU; a cooperative
 * launch's check (hipErrorCooperativeLaunchTooLarge when too many). */
int fh_occupancy(const struct fh_kernel *k, unsigned threads, size_t smem);
hipError_t fh_coop_check(const struct fh_kernel *k, const unsigned grid[3], const unsigned block[3], size_t smem);
/* fake_hip_core.c: the device's target ID and processor ("gfx90a"), its
 * wave size. */
const char *fh_arch(void);
void fh_arch_proc(char *buf, size_t len);
int fh_wave(void);
/* The fields HIP 5's and ROCm 6's hipDeviceProp_t share that the fake sets
 * (the same names in both layouts), the rest zeroed. */
#define FH_PROPS_FILL(p) \
	do { \
		char proc_[64]; \
		memset((p), 0, sizeof *(p)); \
		fh_arch_proc(proc_, sizeof proc_); \
		snprintf((p)->name, sizeof (p)->name, "AMD fake %s", proc_); \
		snprintf((p)->gcnArchName, sizeof (p)->gcnArchName, "%s", fh_arch()); \
		(p)->totalGlobalMem = (size_t)64 << 30; \
		(p)->warpSize = fh_wave(); \
		(p)->maxThreadsPerBlock = 1024; \
		(p)->clockRate = FH_CLOCK_KHZ; \
		(p)->multiProcessorCount = FH_CUS; \
		(p)->major = 9; \
	} while (0)

#endif
