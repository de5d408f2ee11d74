/* A test double of NVML (libnvidia-ml.so.1) for the start screen's tests:
 * two GPUs, "Fake GPU 0" at 37% with 3 of 80 GiB used and "Fake GPU 1" at
 * 0% with nothing used; the processes on GPU 0 are the pids listed in
 * FAKENVML_PIDS (comma-separated). Plumbing only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	unsigned int gpu, memory;
} util_t;
typedef struct {
	unsigned long long total, free, used;
} mem_t;
typedef struct {
	unsigned int pid;
	unsigned long long used;
	unsigned int gi, ci;
} proc_t;

#define NVML_EXPORT __attribute__((visibility("default")))

static int inited;

NVML_EXPORT int nvmlInit_v2(void)
{
	inited = 1;
	return 0;
}

NVML_EXPORT int nvmlShutdown(void)
{
	inited = 0;
	return 0;
}

NVML_EXPORT int nvmlDeviceGetCount_v2(unsigned int *n)
{
	*n = 2;
	return inited ? 0 : 1;
}

NVML_EXPORT int nvmlDeviceGetHandleByIndex_v2(unsigned int i, void **d)
{
	if (i > 1)
		return 2;
	*d = (void *)(unsigned long)(i + 1);
	return 0;
}

NVML_EXPORT int nvmlDeviceGetName(void *d, char *name, unsigned int len)
{
	snprintf(name, len, "Fake GPU %lu", (unsigned long)d - 1);
	return 0;
}

NVML_EXPORT int nvmlDeviceGetUtilizationRates(void *d, util_t *u)
{
	u->gpu = (unsigned long)d == 1 ? 37 : 0;
	u->memory = 0;
	return 0;
}

NVML_EXPORT int nvmlDeviceGetMemoryInfo(void *d, mem_t *m)
{
	m->total = 80ull << 30;
	m->used = (unsigned long)d == 1 ? 3ull << 30 : 0;
	m->free = m->total - m->used;
	return 0;
}

NVML_EXPORT int nvmlDeviceGetComputeRunningProcesses_v3(void *d, unsigned int *n, proc_t *p)
{
	unsigned int k = 0;
	const char *e = getenv("FAKENVML_PIDS");
	for (const char *s = e; (unsigned long)d == 1 && s && *s && k < *n;) {
		p[k].pid = (unsigned int)strtoul(s, NULL, 10);
		p[k].used = 1ull << 30;
		p[k].gi = p[k].ci = 0;
		k++;
		s = strchr(s, ',');
		s = s ? s + 1 : NULL;
	}
	*n = k;
	return 0;
}
