/* NVML at run time (nvml.h). The few calls and structures used are
 * declared here as NVIDIA's nvml.h documents them: Debian packages no NVML
 * header, and the library keeps these ABIs (the _v2/_v3 names are the
 * versioned entry points). */
#include "cli/nvml.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct nvml_dev *nvml_device;
typedef struct {
	unsigned int gpu, memory;
} nvml_utilization;
typedef struct {
	unsigned long long total, free, used;
} nvml_memory;
typedef struct {
	unsigned int pid;
	unsigned long long used_gpu_memory;
	unsigned int gpu_instance_id, compute_instance_id;
} nvml_process; /* nvmlProcessInfo_t of the _v3 call */

#define NVML_OK 0
#define NVML_INSUFFICIENT_SIZE 7

struct nvml {
	void *lib;
	int (*init)(void);
	int (*shutdown)(void);
	int (*count)(unsigned int *);
	int (*handle)(unsigned int, nvml_device *);
	int (*name)(nvml_device, char *, unsigned int);
	int (*util)(nvml_device, nvml_utilization *);
	int (*mem)(nvml_device, nvml_memory *);
	int (*procs)(nvml_device, unsigned int *, nvml_process *);
};

struct nvml *nvml_open(char *why, size_t n)
{
	const char *path = getenv("NTOP_REAL_LIBNVML");
	struct nvml *m = calloc(1, sizeof *m);
	if (!m) {
		snprintf(why, n, "out of memory");
		return NULL;
	}
	m->lib = dlopen(path && *path ? path : "libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!m->lib) {
		snprintf(why, n, "no NVML (%s): GPUs not shown", path && *path ? path : "libnvidia-ml.so.1");
		free(m);
		return NULL;
	}
	*(void **)&m->init = dlsym(m->lib, "nvmlInit_v2");
	*(void **)&m->shutdown = dlsym(m->lib, "nvmlShutdown");
	*(void **)&m->count = dlsym(m->lib, "nvmlDeviceGetCount_v2");
	*(void **)&m->handle = dlsym(m->lib, "nvmlDeviceGetHandleByIndex_v2");
	*(void **)&m->name = dlsym(m->lib, "nvmlDeviceGetName");
	*(void **)&m->util = dlsym(m->lib, "nvmlDeviceGetUtilizationRates");
	*(void **)&m->mem = dlsym(m->lib, "nvmlDeviceGetMemoryInfo");
	*(void **)&m->procs = dlsym(m->lib, "nvmlDeviceGetComputeRunningProcesses_v3");
	int rc = m->init && m->count && m->handle ? m->init() : -1;
	if (rc != NVML_OK) {
		snprintf(why, n, "NVML did not start (%d): GPUs not shown", rc);
		dlclose(m->lib);
		free(m);
		return NULL;
	}
	return m;
}

static void nvml_one(struct nvml *m, unsigned int i, nvml_device d, struct nvml_gpu *g)
{
	memset(g, 0, sizeof *g);
	g->index = (int)i;
	g->util = -1;
	if (!m->name || m->name(d, g->name, sizeof g->name) != NVML_OK)
		snprintf(g->name, sizeof g->name, "GPU %u", i);
	nvml_utilization u;
	if (m->util && m->util(d, &u) == NVML_OK)
		g->util = (int)u.gpu;
	nvml_memory mem;
	if (m->mem && m->mem(d, &mem) == NVML_OK) {
		g->mem_used = mem.used;
		g->mem_total = mem.total;
	}
	nvml_process p[NVML_PROCS_MAX];
	unsigned int np = NVML_PROCS_MAX;
	int rc = m->procs ? m->procs(d, &np, p) : -1;
	if (rc == NVML_OK || rc == NVML_INSUFFICIENT_SIZE) {
		g->n_procs = (int)(np < NVML_PROCS_MAX ? np : NVML_PROCS_MAX);
		for (int k = 0; k < g->n_procs; k++)
			g->pids[k] = p[k].pid;
	}
}

int nvml_sample(struct nvml *m, struct nvml_gpu *out, int max, char *why, size_t n)
{
	unsigned int count = 0;
	if (m->count(&count) != NVML_OK) {
		snprintf(why, n, "NVML: no device count");
		return -1;
	}
	int k = 0;
	for (unsigned int i = 0; i < count && k < max; i++) {
		nvml_device d;
		if (m->handle(i, &d) == NVML_OK)
			nvml_one(m, i, d, &out[k++]);
	}
	return k;
}

void nvml_close(struct nvml *m)
{
	if (!m)
		return;
	if (m->shutdown)
		m->shutdown();
	dlclose(m->lib);
	free(m);
}
