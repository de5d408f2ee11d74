/* The seam between the vendor-neutral hook (exports, events, registry) and a
 * vendor driver (nvtop's struct gpu_vendor). Only CUDA exists; a HIP backend
 * would add hook_hip*.c and its own export list. */
#ifndef NTOP_HOOK_BACKEND_H
#define NTOP_HOOK_BACKEND_H

struct hook_backend {
	const char *name;
	/* Opens the real driver and fills the dispatch table; -1 with a cause
	 * when there is none (the exports then return the backend's error). */
	int (*init)(char **cause);
	/* Process exit: finish pending work (bounded), emit final stats. */
	void (*shutdown)(void);
	/* In a fork child: forget the parent's threads and in-flight work. */
	void (*fork_child)(void);
	/* Where the real driver was found, for `hello`. */
	const char *(*driver_path)(void);
};

extern const struct hook_backend hook_cuda_backend;

#endif
