/* The nvJitLink stand-in (libnvJitLink.so.N): the PTX inputs of each link
 * (nvJitLinkAddData / AddFile with PTX) are kept, and when the application
 * takes the linked cubin (nvJitLinkGetLinkedCubin) cubin and inputs go to
 * the driver stand-in, which then probes the kernels from their PTX. A link
 * of LTO-IR (what Numba 0.68 gives it: NVVM's -gen-lto output, no PTX at
 * all) is run again, on the real library, with -ptx added: the PTX of the
 * optimised program, the same kernels the cubin holds. Each call has two
 * exports (nvJitLinkCreate and the versioned __nvJitLinkCreate_N_M the
 * header's inline wrappers call); both reach one handler. */
#define NVJITLINK_NO_INLINE
#include <nvJitLink.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "common/fdio.h"
#include "jit/jit.h"

#define NJL_FILE_MAX ((size_t)256 << 20)
#define NJL_LTO_MAX ((size_t)256 << 20) /* LTO-IR bytes kept per link at most */
#define NJL_OPTS_MAX 64

#define NJL_STR2(x) #x
#define NJL_STR(x) NJL_STR2(x)
/* "__nvJitLinkCreate_13_0": the versioned name of this toolkit's call */
#define NJL_VERSIONED(call) "__nvJitLink" call "_" NJL_STR(JIT_MAJOR) "_0"

typedef nvJitLinkResult (*create_fn)(nvJitLinkHandle *, uint32_t, const char *const *);
typedef nvJitLinkResult (*destroy_fn)(nvJitLinkHandle *);
typedef nvJitLinkResult (*add_data_fn)(nvJitLinkHandle, nvJitLinkInputType, const void *, size_t, const char *);
typedef nvJitLinkResult (*add_file_fn)(nvJitLinkHandle, nvJitLinkInputType, const char *);
typedef nvJitLinkResult (*complete_fn)(nvJitLinkHandle);
typedef nvJitLinkResult (*size_fn)(nvJitLinkHandle, size_t *);
typedef nvJitLinkResult (*get_fn)(nvJitLinkHandle, void *);

/* One LTO-IR input, copied (the caller's buffer may be gone by then). */
struct njl_blob {
	struct njl_blob *next;
	size_t size;
	unsigned char data[];
};

/* PTX inputs of each link, each NUL-terminated, until it is destroyed; for
 * an LTO link also its options and LTO-IR inputs, to link again for PTX. */
struct njl_link {
	struct njl_link *next;
	nvJitLinkHandle h;
	char *ptx;
	size_t len;
	char **opts;
	uint32_t n_opts;
	struct njl_blob *lto;
	size_t lto_bytes;
	int no_relink;    /* options or an LTO-IR input not kept: no PTX from a relink */
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

static void njl_keep_opts(struct njl_link *l, uint32_t n, const char *const *opts)
{
	if (n > NJL_OPTS_MAX || !(l->opts = calloc(n + 1, sizeof *l->opts))) {
		l->no_relink = 1;
		return;
	}
	for (uint32_t i = 0; i < n && opts && opts[i]; i++)
		if ((l->opts[l->n_opts] = strdup(opts[i])) != NULL)
			l->n_opts++;
}

/* Keeps a copy of an LTO-IR input of link h. */
static void njl_add_lto(nvJitLinkHandle h, const void *data, size_t size)
{
	pthread_mutex_lock(&links_lock);
	struct njl_link *l = *njl_find(h);
	struct njl_blob *b = l && size <= NJL_LTO_MAX - l->lto_bytes ? malloc(sizeof *b + size) : NULL;
	if (b) {
		b->size = size;
		memcpy(b->data, data, size);
		struct njl_blob **tail = &l->lto;
		while (*tail)
			tail = &(*tail)->next;
		b->next = NULL;
		*tail = b;
		l->lto_bytes += size;
	} else if (l) {
		l->no_relink = 1;
	}
	pthread_mutex_unlock(&links_lock);
}

static void njl_drop_lto(struct njl_link *l)
{
	while (l->lto) {
		struct njl_blob *b = l->lto;
		l->lto = b->next;
		free(b);
	}
}

static void njl_free(struct njl_link *l)
{
	for (uint32_t i = 0; i < l->n_opts; i++)
		free(l->opts[i]);
	free(l->opts);
	njl_drop_lto(l);
	free(l->ptx);
	free(l);
}

static nvJitLinkResult njl_create(nvJitLinkHandle *h, uint32_t n, const char *const *opts)
{
	create_fn real = (create_fn)njl_real("nvJitLinkCreate", NJL_VERSIONED("Create"));
	if (!real)
		return NVJITLINK_ERROR_INTERNAL;
	nvJitLinkResult rc = real(h, n, opts);
	jit_output(NULL, 0, NULL, 0);
	jit_note("link %p created, rc %d", h && rc == NVJITLINK_SUCCESS ? (void *)*h : NULL, (int)rc);
	struct njl_link *l = rc == NVJITLINK_SUCCESS && h ? calloc(1, sizeof *l) : NULL;
	if (l) {
		l->h = *h;
		njl_keep_opts(l, n, opts);
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
	int keep = rc == NVJITLINK_SUCCESS && len &&
		   (type == NVJITLINK_INPUT_PTX || (type == NVJITLINK_INPUT_ANY && njl_is_ptx(data, len)));
	int lto = rc == NVJITLINK_SUCCESS && data && size && type == NVJITLINK_INPUT_LTOIR;
	if (keep)
		njl_add_ptx(h, data, len);
	else if (lto)
		njl_add_lto(h, data, size);
	jit_note("link %p: input type %d, %zu bytes, rc %d: %s", (void *)h, (int)type, size, (int)rc,
		 keep ? "PTX kept" : lto ? "LTO-IR kept" : "neither PTX nor LTO-IR");
	return rc;
}

static nvJitLinkResult njl_add_file(nvJitLinkHandle h, nvJitLinkInputType type, const char *path)
{
	add_file_fn real = (add_file_fn)njl_real("nvJitLinkAddFile", NJL_VERSIONED("AddFile"));
	if (!real)
		return NVJITLINK_ERROR_INTERNAL;
	nvJitLinkResult rc = real(h, type, path);
	size_t got = 0;
	char *buf = rc == NVJITLINK_SUCCESS &&
			    (type == NVJITLINK_INPUT_PTX || type == NVJITLINK_INPUT_ANY || type == NVJITLINK_INPUT_LTOIR)
		    ? fdio_read_file(path, NJL_FILE_MAX, &got)
		    : NULL;
	size_t len = buf ? strnlen(buf, got) : 0;
	if (type == NVJITLINK_INPUT_LTOIR && got)
		njl_add_lto(h, buf, got);
	else if (len && njl_is_ptx(buf, len))
		njl_add_ptx(h, buf, len);
	free(buf);
	return rc;
}

/* Options for the relink: the link's own, with -lto and -ptx. */
static uint32_t njl_ptx_opts(const struct njl_link *l, const char **opts)
{
	uint32_t n = 0;
	int lto = 0;
	for (uint32_t i = 0; i < l->n_opts; i++) {
		if (strcmp(l->opts[i], "-ptx") == 0)
			continue;
		lto |= strcmp(l->opts[i], "-lto") == 0;
		opts[n++] = l->opts[i];
	}
	if (!lto)
		opts[n++] = "-lto";
	opts[n++] = "-ptx";
	return n;
}

/* The PTX nvJitLink makes of link l's LTO-IR inputs (l->lto), malloc'd and
 * NUL-terminated, or NULL; *why says what failed. */
static char *njl_lto_ptx(const struct njl_link *l, size_t *len, const char **why)
{
	create_fn create = (create_fn)njl_real("nvJitLinkCreate", NJL_VERSIONED("Create"));
	add_data_fn add = (add_data_fn)njl_real("nvJitLinkAddData", NJL_VERSIONED("AddData"));
	complete_fn complete = (complete_fn)njl_real("nvJitLinkComplete", NJL_VERSIONED("Complete"));
	size_fn ptx_size = (size_fn)njl_real("nvJitLinkGetLinkedPtxSize", NJL_VERSIONED("GetLinkedPtxSize"));
	get_fn get_ptx = (get_fn)njl_real("nvJitLinkGetLinkedPtx", NJL_VERSIONED("GetLinkedPtx"));
	destroy_fn destroy = (destroy_fn)njl_real("nvJitLinkDestroy", NJL_VERSIONED("Destroy"));
	const char *opts[NJL_OPTS_MAX + 2];
	nvJitLinkHandle h;
	char *ptx = NULL;
	*why = "the real library lacks a call";
	if (!create || !add || !complete || !ptx_size || !get_ptx || !destroy)
		return NULL;
	*why = "nvJitLinkCreate failed";
	if (create(&h, njl_ptx_opts(l, opts), opts) != NVJITLINK_SUCCESS)
		return NULL;
	int ok = 1;
	for (const struct njl_blob *b = l->lto; b && ok; b = b->next)
		ok = add(h, NVJITLINK_INPUT_LTOIR, b->data, b->size, "ntop-lto") == NVJITLINK_SUCCESS;
	*why = ok ? "the link failed" : "an LTO-IR input was refused";
	if (ok && complete(h) == NVJITLINK_SUCCESS && ptx_size(h, len) == NVJITLINK_SUCCESS && *len &&
	    (ptx = malloc(*len + 1)) != NULL) {
		if (get_ptx(h, ptx) == NVJITLINK_SUCCESS) {
			ptx[*len] = 0;
			*len = strlen(ptx);
		} else {
			free(ptx);
			ptx = NULL;
		}
	}
	destroy(&h);
	return ptx;
}

static double njl_ms_since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) * 1e3 + (double)(t.tv_nsec - t0->tv_nsec) / 1e6;
}

/* An LTO link's PTX, made once (at the first cubin taken) and added to l's
 * PTX texts. Called with links_lock held: links are rarely concurrent. */
static void njl_relink_for_ptx(struct njl_link *l)
{
	if (!l->lto)
		return;
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	const char *why = NULL;
	size_t len = 0;
	char *ptx = l->no_relink ? NULL : njl_lto_ptx(l, &len, &why);
	char *p = ptx ? realloc(l->ptx, l->len + len + 1) : NULL;
	if (p) {
		memcpy(p + l->len, ptx, len + 1);
		l->ptx = p;
		l->len += len + 1;
	}
	jit_note("link %p: PTX of its LTO-IR: %s (%.1f ms)", (void *)l->h,
		 p ? "made" : l->no_relink ? "not made, its options or inputs were too large to keep" : why,
		 njl_ms_since(&t0));
	free(ptx);
	njl_drop_lto(l);
}

static nvJitLinkResult njl_get_cubin(nvJitLinkHandle h, void *cubin)
{
	get_fn real = (get_fn)njl_real("nvJitLinkGetLinkedCubin", NJL_VERSIONED("GetLinkedCubin"));
	size_fn cubin_size = (size_fn)njl_real("nvJitLinkGetLinkedCubinSize", NJL_VERSIONED("GetLinkedCubinSize"));
	if (!real)
		return NVJITLINK_ERROR_INTERNAL;
	nvJitLinkResult rc = real(h, cubin);
	size_t size = 0;
	if (rc != NVJITLINK_SUCCESS || !cubin || !cubin_size || cubin_size(h, &size) != NVJITLINK_SUCCESS) {
		jit_note("link %p: cubin not taken (rc %d)", (void *)h, (int)rc);
		return rc;
	}
	pthread_mutex_lock(&links_lock);
	struct njl_link *l = *njl_find(h);
	if (l)
		njl_relink_for_ptx(l);
	size_t ptx_len = l ? l->len : 0;
	if (ptx_len)
		jit_output(cubin, size, l->ptx, ptx_len);
	pthread_mutex_unlock(&links_lock);
	jit_note("link %p: cubin of %zu bytes taken, %s", (void *)h, size,
		 !l ? "link unknown" : ptx_len ? "handed over with its PTX" : "no PTX input");
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
			njl_free(l);
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
