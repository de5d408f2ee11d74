/* Launches: the arguments laid out in a kernarg segment as the kernel's
 * metadata says (explicit ones from kernelParams in order, or the `extra`
 * buffer as given), then run at once (or recorded by a capturing stream).
 * Running: vecadd computes c = a + b over the launch, Triton's tt_add
 * out = x + y; a probed copy (an
 * ntop_launch argument) checks that block against the launch shape and
 * writes block_sched-style records into every ntop_map_* buffer. A launch
 * whose arguments are wrong fails, with a line on stderr saying why. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "fake_hip.h"

static int arg_hidden(const struct fh_arg *a)
{
	return strncmp(a->kind, "hidden_", 7) == 0;
}

static const struct fh_arg *arg_named(const struct fh_kernel *k, const char *name)
{
	for (int i = 0; i < k->n_args; i++)
		if (strcmp(k->args[i].name, name) == 0)
			return &k->args[i];
	return NULL;
}

/* The segment, or NULL (*rc set) when the arguments do not fit it. */
static uint8_t *kernarg_build(const struct fh_kernel *k, void **params, void **extra, hipError_t *rc)
{
	uint8_t *buf = calloc(1, k->kernarg_size + 1);
	*rc = hipErrorInvalidValue;
	if (!buf || (params && extra))
		goto bad;
	uint32_t explicit_end = 0;
	int n_explicit = 0;
	for (int i = 0; i < k->n_args; i++)
		if (!arg_hidden(&k->args[i])) {
			n_explicit++;
			if (k->args[i].offset + k->args[i].size > explicit_end)
				explicit_end = k->args[i].offset + k->args[i].size;
		}
	if (params) {
		for (int i = 0, j = 0; i < k->n_args; i++) {
			const struct fh_arg *a = &k->args[i];
			if (arg_hidden(a))
				continue;
			if (!params[j] || a->offset + a->size > k->kernarg_size)
				goto bad;
			memcpy(buf + a->offset, params[j++], a->size);
		}
		return buf;
	}
	if (!extra) {
		if (n_explicit == 0)
			return buf;
		goto bad;
	}
	void *p = NULL;
	size_t *len = NULL;
	for (int i = 0; extra[i] != HIP_LAUNCH_PARAM_END; i += 2) {
		if (extra[i] == HIP_LAUNCH_PARAM_BUFFER_POINTER)
			p = extra[i + 1];
		else if (extra[i] == HIP_LAUNCH_PARAM_BUFFER_SIZE)
			len = extra[i + 1];
		else
			goto bad;
	}
	if (!p || !len || *len < explicit_end || *len > k->kernarg_size)
		goto bad;
	memcpy(buf, p, *len);
	return buf;
bad:
	free(buf);
	return NULL;
}

static uint64_t karg_u64(const uint8_t *ka, const struct fh_kernel *k, int explicit_index, int size)
{
	uint64_t v = 0;
	for (int i = 0, j = 0; i < k->n_args; i++) {
		if (arg_hidden(&k->args[i]))
			continue;
		if (j++ == explicit_index) {
			memcpy(&v, ka + k->args[i].offset, (size_t)size);
			return v;
		}
	}
	return 0;
}

static void run_vecadd(const struct fh_kernel *k, const uint8_t *ka, uint64_t items)
{
	float *c = (float *)(uintptr_t)karg_u64(ka, k, 0, 8);
	const float *a = (const float *)(uintptr_t)karg_u64(ka, k, 1, 8);
	const float *b = (const float *)(uintptr_t)karg_u64(ka, k, 2, 8);
	int n = (int)karg_u64(ka, k, 3, 4);
	for (uint64_t i = 0; i < items && (int64_t)i < n; i++)
		c[i] = a[i] + b[i];
}

/* Triton's elementwise add (tests/corpus/amdgpu/src/triton_kernels.py:
 * x, y, out, n), over all n whatever the grid. */
static void run_tt_add(const struct fh_kernel *k, const uint8_t *ka)
{
	const float *x = (const float *)(uintptr_t)karg_u64(ka, k, 0, 8);
	const float *y = (const float *)(uintptr_t)karg_u64(ka, k, 1, 8);
	float *out = (float *)(uintptr_t)karg_u64(ka, k, 2, 8);
	int n = (int)karg_u64(ka, k, 3, 4);
	for (int i = 0; i < n; i++)
		out[i] = x[i] + y[i];
}

/* The 32-byte ntop_launch block as the injected code expects it
 * (src/engine/amdgpu/amdgpu_inject.h), computed here on its own. */
static int check_launch(const struct fh_kernel *k, const uint8_t *ka, const unsigned grid[3], const unsigned block[3])
{
	const struct fh_arg *a = arg_named(k, "ntop_launch");
	uint32_t got[8], threads = block[0] * block[1] * block[2], waves = (threads + k->wave - 1) / k->wave;
	uint64_t blocks = (uint64_t)grid[0] * grid[1] * grid[2];
	uint32_t want[8] = { grid[0], grid[1], block[0], block[0] * block[1], threads, waves,
			     (uint32_t)(blocks * threads), (uint32_t)(blocks * waves) };
	if (!a || a->size != 32 || strcmp(a->kind, "by_value") != 0)
		return fprintf(stderr, "fakehip: %s: ntop_launch is not a 32-byte by_value argument\n", k->name), -1;
	memcpy(got, ka + a->offset, sizeof got);
	for (int i = 0; i < 8; i++)
		if (got[i] != want[i])
			return fprintf(stderr, "fakehip: %s: ntop_launch word %d is %u, the launch makes it %u\n", k->name,
				       i, got[i], want[i]),
			       -1;
	return 0;
}

static void fill_map(uint8_t *base, const struct fh_kernel *k, const unsigned grid[3], const unsigned block[3])
{
	const char *spec = getenv("FAKEHIP_MAP");
	int wave_map = !spec || strncmp(spec, "thread", 6) != 0;
	const char *colon = spec ? strchr(spec, ':') : NULL;
	unsigned rec = colon ? (unsigned)strtoul(colon + 1, NULL, 10) : 24;
	uint64_t blocks = (uint64_t)grid[0] * grid[1] * grid[2];
	unsigned threads = block[0] * block[1] * block[2];
	uint64_t upb = wave_map ? (threads + (unsigned)k->wave - 1) / (unsigned)k->wave : threads, units = blocks * upb;
	uint8_t *records = base + ((units * 4 + 15) & ~(uint64_t)15);
	for (uint64_t u = 0; u < units; u++) {
		uint64_t b = u / upb;
		uint32_t count = rec, cu = (uint32_t)(b % FH_CUS), elapsed = 4000 + (uint32_t)(u % 7) * 10;
		/* packed as SMID reads it: CU in bits 0-3, SE in bits 8-10 */
		uint32_t smid = (cu % 16) | (cu / 16) << 8;
		uint64_t start = 1000 + (b / FH_CUS) * 5000 + (u % upb) * 10, gstart = 170000000000ull + start / 17;
		memcpy(base + u * 4, &count, 4);
		uint8_t *r = records + u * rec;
		if (rec >= 24) {
			memcpy(r, &start, 8);
			memcpy(r + 8, &gstart, 8);
			memcpy(r + 16, &elapsed, 4);
			memcpy(r + 20, &smid, 4);
		}
	}
}

hipError_t fh_run(const struct ihipModuleSymbol_t *f, const unsigned grid[3], const unsigned block[3],
		  const uint8_t *ka)
{
	const struct fh_kernel *k = f->k;
	uint64_t items = (uint64_t)grid[0] * block[0];
	/* extern "C" (the corpus) or C++ (app_vecadd.hip) */
	if (strcmp(k->name, "vecadd") == 0 || strcmp(k->name, "_Z6vecaddPfPKfS1_i") == 0)
		run_vecadd(k, ka, items);
	else if (strcmp(k->name, "tt_add") == 0)
		run_tt_add(k, ka);
	if (!arg_named(k, "ntop_launch"))
		return hipSuccess;
	if (check_launch(k, ka, grid, block) < 0)
		return hipErrorLaunchFailure;
	for (int i = 0; i < k->n_args; i++) {
		if (strncmp(k->args[i].name, "ntop_map_", 9) != 0)
			continue;
		uint64_t p;
		memcpy(&p, ka + k->args[i].offset, 8);
		if (!p)
			return fprintf(stderr, "fakehip: %s: %s is NULL\n", k->name, k->args[i].name),
			       hipErrorIllegalAddress;
		fill_map((uint8_t *)(uintptr_t)p, k, grid, block);
	}
	return hipSuccess;
}

static hipError_t capture_node(hipStream_t s, struct ihipModuleSymbol_t *f, const unsigned grid[3],
			       const unsigned block[3], uint8_t *ka)
{
	struct ihipGraph *g = s->graph;
	struct fh_node *v = realloc(g->nodes, (size_t)(g->n + 1) * sizeof *v);
	if (!v) {
		free(ka);
		return hipErrorOutOfMemory;
	}
	g->nodes = v;
	v[g->n++] = (struct fh_node){ f, { grid[0], grid[1], grid[2] }, { block[0], block[1], block[2] }, ka };
	return hipSuccess;
}

/* What a failed launch leaves for hipGetLastError (<<<>>> drops the
 * launch's own status). */
static __thread hipError_t last_error;

hipError_t hipGetLastError(void)
{
	hipError_t e = last_error;
	last_error = hipSuccess;
	return e;
}

hipError_t hipPeekAtLastError(void)
{
	return last_error;
}

static hipError_t launch(struct ihipModuleSymbol_t *f, const unsigned grid[3], const unsigned block[3], size_t smem,
			 hipStream_t s, void **params, void **extra)
{
	unsigned threads = block[0] * block[1] * block[2];
	if (!f)
		return hipErrorInvalidDeviceFunction;
	if (f->mod->unloaded)
		return hipErrorInvalidHandle;
	if (threads == 0 || threads > 1024 || !grid[0] || !grid[1] || !grid[2] || smem > 65536)
		return hipErrorInvalidValue;
	hipError_t rc;
	uint8_t *ka = kernarg_build(f->k, params, extra, &rc);
	if (!ka)
		return fprintf(stderr, "fakehip: %s: the arguments do not fit its kernarg segment\n", f->k->name), rc;
	pthread_mutex_lock(&fh_lock);
	int captured = s && s->capturing;
	if (captured)
		rc = capture_node(s, f, grid, block, ka);
	pthread_mutex_unlock(&fh_lock);
	if (captured)
		return rc;
	rc = fh_run(f, grid, block, ka);
	free(ka);
	return rc;
}

/* FAKEHIP_LAUNCH_LOG=FILE: a line per launch, so that a test sees how the
 * hook launched a probed copy (which entry point, cooperative or not, the
 * attributes it passed on). */
static void log_launch(const struct ihipModuleSymbol_t *f, const unsigned grid[3], const struct fh_how *how,
		       hipError_t rc)
{
	const char *path = getenv("FAKEHIP_LAUNCH_LOG");
	if (!path || !f)
		return;
	pthread_mutex_lock(&fh_lock);
	FILE *o = fopen(path, "a");
	if (o) {
		fprintf(o, "%s kernel=%s probed=%d cooperative=%d grid=%llu attrs=", how ? how->api : "?", f->k->name,
			arg_named(f->k, "ntop_launch") != NULL, how && how->cooperative,
			(unsigned long long)grid[0] * grid[1] * grid[2]);
		for (unsigned i = 0; how && i < how->n_attrs; i++)
			fprintf(o, "%s%d:%d", i ? "," : "", how->attrs[i].id, how->attrs[i].val.cooperative);
		fprintf(o, "%s rc=%d\n", how && how->n_attrs ? "" : "-", rc);
		fclose(o);
	}
	pthread_mutex_unlock(&fh_lock);
}

hipError_t fh_launch(struct ihipModuleSymbol_t *f, const unsigned grid[3], const unsigned block[3], size_t smem,
		     hipStream_t s, void **params, void **extra, const struct fh_how *how)
{
	hipError_t rc = how && how->cooperative && f ? fh_coop_check(f->k, grid, block, smem) : hipSuccess;
	/* FAKEHIP_FAIL_PROBED: every launch of a probed copy fails (as a
	 * runtime may refuse one), leaving its error for hipGetLastError */
	if (rc == hipSuccess && f && getenv("FAKEHIP_FAIL_PROBED") && arg_named(f->k, "ntop_launch"))
		rc = hipErrorLaunchFailure;
	if (rc == hipSuccess)
		rc = launch(f, grid, block, smem, s, params, extra);
	log_launch(f, grid, how, rc);
	if (rc != hipSuccess)
		last_error = rc;
	return rc;
}

hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
				 unsigned bz, unsigned smem, hipStream_t s, void **params, void **extra)
{
	unsigned grid[3] = { gx, gy, gz }, block[3] = { bx, by, bz };
	const struct fh_how how = { "hipModuleLaunchKernel", 0, NULL, 0 };
	return fh_launch(f, grid, block, smem, s, params, extra, &how);
}

static void event_stamp(hipEvent_t e)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (e) {
		e->ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
		e->recorded = 1;
	}
}

hipError_t hipExtModuleLaunchKernel(hipFunction_t f, uint32_t wx, uint32_t wy, uint32_t wz, uint32_t lx, uint32_t ly,
				    uint32_t lz, size_t smem, hipStream_t s, void **params, void **extra,
				    hipEvent_t start, hipEvent_t stop, uint32_t flags)
{
	(void)flags;
	if (!lx || !ly || !lz)
		return hipErrorInvalidValue;
	/* global work sizes in work-items: the grid is how many workgroups cover them */
	unsigned grid[3] = { (wx + lx - 1) / lx, (wy + ly - 1) / ly, (wz + lz - 1) / lz }, block[3] = { lx, ly, lz };
	const struct fh_how how = { "hipExtModuleLaunchKernel", 0, NULL, 0 };
	event_stamp(start);
	hipError_t rc = fh_launch(f, grid, block, smem, s, params, extra, &how);
	event_stamp(stop);
	return rc;
}

static hipError_t launch_host(const char *api, int coop, const void *host, dim3 g, dim3 b, void **args, size_t smem,
			      hipStream_t s)
{
	unsigned grid[3] = { g.x, g.y, g.z }, block[3] = { b.x, b.y, b.z };
	const struct fh_how how = { api, coop, NULL, 0 };
	return fh_launch(fh_host_func(host), grid, block, smem, s, args, NULL, &how);
}

hipError_t hipLaunchKernel(const void *host, dim3 g, dim3 b, void **args, size_t smem, hipStream_t s)
{
	return launch_host("hipLaunchKernel", 0, host, g, b, args, smem, s);
}

hipError_t hipExtLaunchKernel(const void *host, dim3 g, dim3 b, void **args, size_t smem, hipStream_t s,
			      hipEvent_t start, hipEvent_t stop, int flags)
{
	(void)flags;
	event_stamp(start);
	hipError_t rc = launch_host("hipExtLaunchKernel", 0, host, g, b, args, smem, s);
	event_stamp(stop);
	return rc;
}

hipError_t hipLaunchCooperativeKernel(const void *host, dim3 g, dim3 b, void **args, unsigned smem, hipStream_t s)
{
	return launch_host("hipLaunchCooperativeKernel", 1, host, g, b, args, smem, s);
}

/* <<<>>>: clang's host code pushes the configuration, the kernel's stub pops it. */
static __thread struct {
	dim3 grid, block;
	size_t smem;
	hipStream_t s;
	int pushed;
} call_cfg;

hipError_t __hipPushCallConfiguration(dim3 grid, dim3 block, size_t smem, hipStream_t s)
{
	call_cfg.grid = grid, call_cfg.block = block, call_cfg.smem = smem, call_cfg.s = s, call_cfg.pushed = 1;
	return hipSuccess;
}

hipError_t __hipPopCallConfiguration(dim3 *grid, dim3 *block, size_t *smem, hipStream_t *s)
{
	if (!call_cfg.pushed)
		return hipErrorInvalidValue;
	*grid = call_cfg.grid, *block = call_cfg.block, *smem = call_cfg.smem, *s = call_cfg.s;
	call_cfg.pushed = 0;
	return hipSuccess;
}

hipError_t hipGraphAddKernelNode(hipGraphNode_t *node, hipGraph_t g, const hipGraphNode_t *deps, size_t n,
				 const hipKernelNodeParams *p)
{
	(void)deps, (void)n;
	struct ihipModuleSymbol_t *f = p ? fh_host_func(p->func) : NULL;
	if (!node || !g || !f)
		return hipErrorInvalidValue;
	hipError_t rc;
	uint8_t *ka = kernarg_build(f->k, p->kernelParams, p->extra, &rc);
	if (!ka)
		return rc;
	struct fh_node *v = realloc(g->nodes, (size_t)(g->n + 1) * sizeof *v);
	if (!v) {
		free(ka);
		return hipErrorOutOfMemory;
	}
	g->nodes = v;
	v[g->n] = (struct fh_node){ f, { p->gridDim.x, p->gridDim.y, p->gridDim.z },
				    { p->blockDim.x, p->blockDim.y, p->blockDim.z }, ka };
	*node = (hipGraphNode_t)&v[g->n++];
	return hipSuccess;
}
