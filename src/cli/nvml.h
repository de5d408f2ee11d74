/* The machine's GPUs as NVIDIA's management library sees them, for the
 * start screen: name, utilisation, memory, the processes on each. The
 * library (libnvidia-ml.so.1, from the driver; NTOP_REAL_LIBNVML names
 * another) is opened at run time, like the driver: no NVML, no GPU table. */
#ifndef NTOP_NVML_H
#define NTOP_NVML_H
#include <stddef.h>
#include <stdint.h>

#define NVML_PROCS_MAX 64

struct nvml_gpu {
	int index;
	char name[96];
	int util;                      /* % of the last sample period, -1 unknown */
	uint64_t mem_used, mem_total;  /* bytes */
	int n_procs;
	uint32_t pids[NVML_PROCS_MAX]; /* compute processes */
};

struct nvml;
/* NULL with *why when there is no NVML or it does not start. */
struct nvml *nvml_open(char *why, size_t n);
/* Up to max GPUs now; -1 with *why. */
int nvml_sample(struct nvml *m, struct nvml_gpu *out, int max, char *why, size_t n);
void nvml_close(struct nvml *m);

#endif
