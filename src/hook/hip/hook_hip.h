/* Internals shared by the HIP backend's files (hook_hip*.c). The HIP
 * stand-in (libamdhip64.so.5) links the vendor-neutral hook (events, sink,
 * control file, probe selection, result files) with these. */
#ifndef NTOP_HOOK_HIP_H
#define NTOP_HOOK_HIP_H
#include <pthread.h>
#include <stdint.h>
#include "engine/amdgpu/amdgpu_inject.h"
#include "hook/hip/hook_hip_api.h"
#include "hook/hip/hook_hip_table.h"
#include "hook/hook_probe_sel.h"
#include "hook/hook_registry.h"
#include "hook/hook_state.h"

/* One launch as the entry points describe it, normalised. */
struct hip_launch {
	enum hip_row_id row;
	const char *api;            /* the entry point's name */
	const void *key;            /* the host function, or the hipFunction_t */
	unsigned grid[3], block[3]; /* workgroups; work-items per workgroup */
	size_t smem;
	hipStream_t stream;         /* as given */
	hipStream_t ostream;        /* for our calls on it: per-thread for _spt + 0 */
	void **params, **extra;
	hipEvent_t ev_start, ev_stop; /* hipExt*: recorded around the kernel */
	uint32_t wsize[3];          /* hipExt/HccModuleLaunchKernel: global sizes as given */
	uint32_t flags;
	const hip_launch_config *config; /* hipDrvLaunchKernelEx */
	int cooperative;            /* a cooperative entry point, or the attribute */
	uint64_t seq;
};

/* A device as the probe path needs it. */
struct hip_device {
	int ordinal;
	char arch[HIP_PROPS_STR];   /* target ID: "gfx90a:sramecc+:xnack-" */
	struct hook_device *d;      /* name, CUs, clock */
};

/* An instrumented copy's launch plan (hook_inst.globals). */
struct hip_plan {
	hipModule_t module;
	hipFunction_t func;
	uint8_t *elf;               /* the probed code object (kept: the runtime may read it later) */
	int n_explicit;             /* the original kernel's explicit arguments */
	uint32_t launch_offset, kernarg_size;
	int wave;
	int n_maps;
	struct amdgpu_map maps[AMDGPU_MAX_MAPS];
	char probes[256];           /* names, comma-separated */
};

/* hook_hip_open.c (the HIP 5 stand-in) or hook_hip_bind.c (ROCm 6/7): opens
 * the real runtime into hook.driver and hook.real_path; -1 with a cause. */
int hook_hip_open_real(char **cause);

/* hook_hip.c */
/* The calling thread's current device (NULL when HIP cannot say). */
const struct hip_device *hook_hip_device(void);


/* hook_hip_registry.c */
struct hook_module *hook_hip_reg_module(void *handle, const char *api, const void *image, size_t size_hint);
struct hook_module *hook_hip_reg_module_find(void *handle);
void hook_hip_reg_unload(void *handle);
struct hook_kernel *hook_hip_reg_kernel(void *handle, struct hook_module *m, const char *name);
struct hook_kernel *hook_hip_reg_find(const void *handle);

/* hook_hip_launch.c */
hipError_t hook_hip_launch(struct hip_launch *l);
hipError_t hook_hip_forward(const struct hip_launch *l);
void hook_hip_emit_launch(struct hook_kernel *k, const struct hip_launch *l, int probed);

/* hook_hip_probe.c */
/* Runs the probed copy; 1 when it launched (*rc set), 0 when the original
 * must run (the reason emitted, the reservation given back). */
int hook_hip_probe_launch(struct hip_launch *l, struct hook_kernel *k, const struct hook_probe_pick *pick,
			  hipError_t *rc);

/* hook_hip_coop.c: 0 when the probed copy of a cooperative launch keeps
 * every workgroup co-resident and can be launched cooperatively; -1 with
 * a cause naming the numbers. */
int hook_hip_coop_fits(const struct hip_launch *l, const struct hook_inst *in, const struct hip_device *dev,
		       char **cause);

/* hook_hip_attrs.c: 0 when the probed copy can take hipDrvLaunchKernelEx's
 * attributes unchanged (*cooperative set from them); -1 with a cause. */
int hook_hip_attrs_check(const hip_launch_config *c, int *cooperative, char **cause);

/* hook_hip_results.c */
struct hip_job {
	struct hip_job *next;
	struct hook_kernel *k;
	const struct hip_plan *plan;
	uint64_t seq, wall_ns;
	int ordinal;
	struct hook_device device;
	void *buf;                  /* the maps on the device (pooled) */
	uint64_t bytes;
	uint64_t map_off[AMDGPU_MAX_MAPS], units[AMDGPU_MAX_MAPS];
	unsigned grid[3], block[3];
	size_t smem;
	hipEvent_t start, end;      /* around the probed launch, on the app's stream */
};
/* A zeroed map buffer of at least `bytes` on the device (pooled). */
void *hook_hip_pool_take(int ordinal, uint64_t bytes, char **cause);
void hook_hip_pool_put(int ordinal, void *buf, uint64_t bytes);
/* Queues a probed launch (already on its stream) for the collector. */
void hook_hip_results_submit(struct hip_job *j);
void hook_hip_results_shutdown(void);
void hook_hip_results_fork_child(void);

#endif
