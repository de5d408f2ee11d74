#define NVJITLINK_NO_INLINE /* the calls come from the library the caller opened, not from linking */
#include "engine/ptx/assemble_njl.h"

#include <dlfcn.h>
#include <nvJitLink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/cause.h"

#define NJL_STR2(x) #x
#define NJL_STR(x) NJL_STR2(x)
#define NJL_LOG_MAX 2000 /* of nvJitLink's error log, in a cause */

typedef nvJitLinkResult (*njl_create_fn)(nvJitLinkHandle *, uint32_t, const char **);
typedef nvJitLinkResult (*njl_add_fn)(nvJitLinkHandle, nvJitLinkInputType, const void *, size_t, const char *);
typedef nvJitLinkResult (*njl_handle_fn)(nvJitLinkHandle);
typedef nvJitLinkResult (*njl_size_fn)(nvJitLinkHandle, size_t *);
typedef nvJitLinkResult (*njl_get_fn)(nvJitLinkHandle, void *);
typedef nvJitLinkResult (*njl_destroy_fn)(nvJitLinkHandle *);

/* "nvJitLinkCreate", else "__nvJitLinkCreate_13_0" (the header's inline
 * wrappers call the versioned names; libraries export both). */
static void *njl_sym(void *handle, const char *call)
{
	char name[64];
	snprintf(name, sizeof name, "nvJitLink%s", call);
	void *f = dlsym(handle, name);
	if (!f) {
		snprintf(name, sizeof name, "__nvJitLink%s_%s_0", call, NJL_STR(NTOP_CUDA_MAJOR));
		f = dlsym(handle, name);
	}
	return f;
}

int assemble_njl_bind(struct assemble_njl *n, void *handle, char **cause)
{
	static const char *const calls[] = { "Create", "AddData", "Complete", "GetLinkedCubinSize",
					     "GetLinkedCubin", "GetErrorLogSize", "GetErrorLog", "Destroy" };
	void **slot[] = { &n->create, &n->add_data, &n->complete, &n->cubin_size,
			  &n->cubin, &n->log_size, &n->log, &n->destroy };
	for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
		if (!(*slot[i] = njl_sym(handle, calls[i])))
			return cause_set(cause, "nvJitLink has no nvJitLink%s", calls[i]);
	return 0;
}

/* A failed step's cause, with the error log where the library kept one. */
static int njl_failed(const struct assemble_njl *n, nvJitLinkHandle h, const char *step, int rc, char **cause)
{
	size_t sz = 0;
	char *log = NULL;
	if (h && ((njl_size_fn)n->log_size)(h, &sz) == NVJITLINK_SUCCESS && sz > 1 && (log = calloc(1, sz + 1)) &&
	    ((njl_get_fn)n->log)(h, log) != NVJITLINK_SUCCESS)
		log[0] = 0;
	cause_set(cause, "nvJitLink %s failed (error %d)%s%.*s", step, rc, log && *log ? ": " : "", NJL_LOG_MAX,
		  log ? log : "");
	free(log);
	return -1;
}

int assemble_njl(const struct assemble_njl *n, const char *ptx, size_t len, const char *arch, void **cubin,
		 size_t *size, char **cause)
{
	char opt[48];
	snprintf(opt, sizeof opt, "-arch=%s", arch);
	const char *opts[] = { opt };
	nvJitLinkHandle h = NULL;
	*cubin = NULL;
	int rc = ((njl_create_fn)n->create)(&h, 1, opts);
	if (rc != NVJITLINK_SUCCESS)
		return njl_failed(n, h, "create", rc, cause);
	int ret = -1;
	size_t sz = 0;
	if ((rc = ((njl_add_fn)n->add_data)(h, NVJITLINK_INPUT_PTX, ptx, len, "probed.ptx")) != NVJITLINK_SUCCESS)
		njl_failed(n, h, "adding the PTX", rc, cause);
	else if ((rc = ((njl_handle_fn)n->complete)(h)) != NVJITLINK_SUCCESS)
		njl_failed(n, h, "compiling", rc, cause);
	else if ((rc = ((njl_size_fn)n->cubin_size)(h, &sz)) != NVJITLINK_SUCCESS || sz == 0)
		njl_failed(n, h, "sizing the cubin", rc, cause);
	else if (!(*cubin = malloc(sz)))
		cause_set(cause, "out of memory for a %zu-byte cubin", sz);
	else if ((rc = ((njl_get_fn)n->cubin)(h, *cubin)) != NVJITLINK_SUCCESS)
		njl_failed(n, h, "copying the cubin", rc, cause);
	else
		ret = 0;
	if (ret < 0) {
		free(*cubin);
		*cubin = NULL;
	} else {
		*size = sz;
	}
	((njl_destroy_fn)n->destroy)(&h);
	return ret;
}
