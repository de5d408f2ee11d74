/* The nvJitLink stand-in (libnvJitLink.so.N): the PTX inputs of each link
 * (nvJitLinkAddData / AddFile with PTX) are kept, and when the application
 * takes the linked cubin (nvJitLinkGetLinkedCubin) cubin and inputs go to
 * the driver stand-in: Numba's kernels, linked outside the driver, are then
 * probed from their PTX. Each call has two exports (nvJitLinkCreate and the
 * versioned __nvJitLinkCreate_N_M the header's inline wrappers call); both
 * reach one handler. */
#define NVJITLINK_NO_INLINE
#include <nvJitLink.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "jit/jit.h"

#define NJL_FILE_MAX ((size_t)256 << 20)

#define NJL_STR2(x) #x
#define NJL_STR(x) NJL_STR2(x)
/* "__nvJitLinkCreate_13_0": the versioned name of this toolkit's call */
#define NJL_VERSIONED(call) "__nvJitLink" call "_" NJL_STR(JIT_MAJOR) "_0"

typedef nvJitLinkResult (*create_fn)(nvJitLinkHandle *, uint32_t, const char *const *);
typedef nvJitLinkResult (*destroy_fn)(nvJitLinkHandle *);
typedef nvJitLinkResult (*add_data_fn)(nvJitLinkHandle, nvJitLinkInputType, const void *, size_t, const char *);
typedef nvJitLinkResult (*add_file_fn)(nvJitLinkHandle, nvJitLinkInputType, const char *);
typedef nvJitLinkResult (*size_fn)(nvJitLinkHandle, size_t *);
typedef nvJitLinkResult (*get_fn)(nvJitLinkHandle, void *);

/* PTX inputs of each link, each NUL-terminated, until it is destroyed. */
struct njl_link {
	struct njl_link *next;
	nvJitLinkHandle h;
	char *ptx;
	size_t len;
};

static struct njl_link *links;
static pthread_mutex_t links_lock = PTHREAD_MUTEX_INITIALIZER;

/* The real function, under either of its names. */
static void *njl_real(const char *plain, const char *versioned)
{
	void *fn = jit_real(versioned);
	return fn ? fn : jit_real(plain);
}

static struct njl_link **njl_find(nvJitLinkHandle h)
{
	struct njl_link **pp = &links;
	while (*pp && (*pp)->h != h)
		pp = &(*pp)->next;
	return pp;
}

/* Appends PTX text (len bytes, no NUL needed) to link h's inputs. */
static void njl_add_ptx(nvJitLinkHandle h, const char *text, size_t len)
{
	pthread_mutex_lock(&links_lock);
	struct njl_link *l = *njl_find(h);
	char *p = l ? realloc(l->ptx, l->len + len + 1) : NULL;
	if (p) {
		memcpy(p + l->len, text, len);
		p[l->len + len] = 0;
		l->ptx = p;
		l->len += len + 1;
	}
	pthread_mutex_unlock(&links_lock);
}

/* PTX text: comments or blanks, then ".version" (NVJITLINK_INPUT_ANY). */
static int njl_is_ptx(const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r' || (s[i] == '/' && i + 1 < n &&
		s[i + 1] == '/'))) {
		if (s[i] == '/')
			while (i < n && s[i] != '\n')
				i++;
		else
			i++;
	}
	return n - i >= 8 && strncmp(s + i, ".version", 8) == 0;
}

static nvJitLinkResult njl_create(nvJitLinkHandle *h, uint32_t n, const char *const *opts)
{
	create_fn real = (create_fn)njl_real("nvJitLinkCreate", NJL_VERSIONED("Create"));
	if (!real)
		return NVJITLINK_ERROR_INTERNAL;
	nvJitLinkResult rc = real(h, n, opts);
	jit_output(NULL, 0, NULL, 0);
	struct njl_link *l = rc == NVJITLINK_SUCCESS && h ? calloc(1, sizeof *l) : NULL;
	if (l) {
		l->h = *h;
		pthread_mutex_lock(&links_lock);
		l->next = links;
		links = l;
		pthread_mutex_unlock(&links_lock);
	}
	return rc;
}

static nvJitLinkResult njl_add_data(nvJitLinkHandle h, nvJitLinkInputType type, const void *data, size_t size,
				    const char *name)
{
	add_data_fn real = (add_data_fn)njl_real("nvJitLinkAddData", NJL_VERSIONED("AddData"));
	if (!real)
		return NVJITLINK_ERROR_INTERNAL;
	nvJitLinkResult rc = real(h, type, data, size, name);
	size_t len = data ? strnlen(data, size) : 0;
	if (rc == NVJITLINK_SUCCESS && len &&
	    (type == NVJITLINK_INPUT_PTX || (type == NVJITLINK_INPUT_ANY && njl_is_ptx(data, len))))
		njl_add_ptx(h, data, len);
	return rc;
}

static nvJitLinkResult njl_add_file(nvJitLinkHandle h, nvJitLinkInputType type, const char *path)
{
	add_file_fn real = (add_file_fn)njl_real("nvJitLinkAddFile", NJL_VERSIONED("AddFile"));
	if (!real)
		return NVJITLINK_ERROR_INTERNAL;
	nvJitLinkResult rc = real(h, type, path);
	FILE *f = rc == NVJITLINK_SUCCESS && path && (type == NVJITLINK_INPUT_PTX || type == NVJITLINK_INPUT_ANY)
			  ? fopen(path, "rbe")
			  : NULL;
	if (!f)
		return rc;
	long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
	char *buf = size > 0 && (size_t)size < NJL_FILE_MAX && fseek(f, 0, SEEK_SET) == 0 ? malloc((size_t)size)
											    : NULL;
	size_t got = buf ? fread(buf, 1, (size_t)size, f) : 0;
	fclose(f);
	size_t len = buf ? strnlen(buf, got) : 0;
	if (len && njl_is_ptx(buf, len))
		njl_add_ptx(h, buf, len);
	free(buf);
	return rc;
}

static nvJitLinkResult njl_get_cubin(nvJitLinkHandle h, void *cubin)
{
	get_fn real = (get_fn)njl_real("nvJitLinkGetLinkedCubin", NJL_VERSIONED("GetLinkedCubin"));
	size_fn cubin_size = (size_fn)njl_real("nvJitLinkGetLinkedCubinSize", NJL_VERSIONED("GetLinkedCubinSize"));
	if (!real)
		return NVJITLINK_ERROR_INTERNAL;
	nvJitLinkResult rc = real(h, cubin);
	size_t size = 0;
	if (rc != NVJITLINK_SUCCESS || !cubin || !cubin_size || cubin_size(h, &size) != NVJITLINK_SUCCESS)
		return rc;
	pthread_mutex_lock(&links_lock);
	struct njl_link *l = *njl_find(h);
	if (l && l->len)
		jit_output(cubin, size, l->ptx, l->len);
	pthread_mutex_unlock(&links_lock);
	return rc;
}

static nvJitLinkResult njl_destroy(nvJitLinkHandle *h)
{
	destroy_fn real = (destroy_fn)njl_real("nvJitLinkDestroy", NJL_VERSIONED("Destroy"));
	if (h) {
		pthread_mutex_lock(&links_lock);
		struct njl_link **pp = njl_find(*h), *l = *pp;
		if (l)
			*pp = l->next;
		pthread_mutex_unlock(&links_lock);
		if (l)
			free(l->ptx);
		free(l);
	}
	return real ? real(h) : NVJITLINK_ERROR_INTERNAL;
}

static nvJitLinkResult njl_missing(void)
{
	return NVJITLINK_ERROR_INTERNAL;
}

#define NJL_ROWS(call, fn) { "nvJitLink" call, (void *)fn }, { NJL_VERSIONED(call), (void *)fn }
static const struct jit_row njl_rows[] = {
	NJL_ROWS("Create", njl_create),
	NJL_ROWS("AddData", njl_add_data),
	NJL_ROWS("AddFile", njl_add_file),
	NJL_ROWS("GetLinkedCubin", njl_get_cubin),
	NJL_ROWS("Destroy", njl_destroy),
};

static const struct jit_lib njl_lib = {
	.name = "nvjitlink",
	.spec = &reallib_nvjitlink,
	.rows = njl_rows,
	.n_rows = sizeof njl_rows / sizeof njl_rows[0],
	.stub = (void *)njl_missing,
};

__attribute__((constructor)) static void njl_init(void)
{
	jit_init(&njl_lib);
}
