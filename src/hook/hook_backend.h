/* The seam between the vendor-neutral hook (load-time set-up and process
 * lifetime in hook_dispatch.c, events, sink, control file) and a vendor
 * runtime (nvtop's struct gpu_vendor). Each stand-in library links one
 * backend: libcuda.so.1 the CUDA one (hook_cuda*.c), libamdhip64.so.5 the
 * HIP one (hook_hip*.c), each with its own export list and dispatch. */
#ifndef NTOP_HOOK_BACKEND_H
#define NTOP_HOOK_BACKEND_H
#include <stddef.h>

struct hook_kernel;
struct hook_ctl_table;

struct hook_backend {
	const char *name;
	const char *what;          /* "CUDA driver", for `no real ...` */
	/* Opens the real driver and fills the dispatch table; -1 with a cause
	 * when there is none (the exports then return the backend's error). */
	int (*init)(char **cause);
	/* Points every export at a handler, the real function or a stub
	 * (after init, also when it failed). */
	void (*fill)(void);
	/* Process exit: finish pending work (bounded), emit final stats. */
	void (*shutdown)(void);
	/* In a fork child: forget the parent's threads and in-flight work. */
	void (*fork_child)(void);
	/* Where the real driver was found, for `hello`. */
	const char *(*driver_path)(void);
	/* The PTX text k was built from (malloc'd), for the UI's region
	 * picker; NULL where the backend keeps none (HIP: code objects). */
	int (*kernel_source)(const struct hook_kernel *k, char **ptx, size_t *len, char **cause);
	/* A new control table was published (the control thread): start
	 * building what it picks; NULL where copies are built on the launch. */
	void (*picked)(const struct hook_ctl_table *t);
};

/* The library's backend (defined by the backend's own file). */
extern const struct hook_backend *const hook_backend_in_use;

#endif
