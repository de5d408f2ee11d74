/* PTX to a cubin inside the calling process with nvJitLink, whose library
 * the caller opens (the hook finds the real one behind its own stand-in).
 * No process of its own and no driver call: a CUDA runtime container has
 * libnvJitLink but no ptxas, and the driver's JIT would hold the app's
 * driver calls while it compiles. */
#ifndef NTOP_ASSEMBLE_NJL_H
#define NTOP_ASSEMBLE_NJL_H
#include <stddef.h>

/* The library's calls (its plain names, else this toolkit's versioned ones). */
struct assemble_njl {
	void *create, *add_data, *complete, *cubin_size, *cubin, *log_size, *log, *destroy;
};

/* Binds n to an opened libnvJitLink (dlopen handle); -1 and a cause naming
 * the first call it lacks. */
int assemble_njl_bind(struct assemble_njl *n, void *handle, char **cause);
/* Compiles len bytes of PTX for arch ("sm_90a"): *cubin (malloc'd) and its
 * *size; on failure -1 and a cause with nvJitLink's error log. */
int assemble_njl(const struct assemble_njl *n, const char *ptx, size_t len, const char *arch, void **cubin,
		 size_t *size, char **cause);

#endif
