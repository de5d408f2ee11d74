/* Modules and registration: hipModuleLoadData(Ex), hipModuleGetFunction,
 * hipModuleUnload, and clang's host-side registration
 * (__hipRegisterFatBinary, __hipRegisterFunction), whose host pointers
 * hipLaunchKernel takes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fake_hip.h"

/* What __hipRegisterFunction said: host stub -> function. */
struct fh_reg {
	struct fh_reg *next;
	const void *host;
	struct ihipModuleSymbol_t *f;
};

static struct fh_reg *regs;
static struct fh_module *modules; /* every module loaded, kept until exit */
static int n_loaded;

/* FAKEHIP_SAVE=DIR: each code object loaded is written to DIR/N.co (N from
 * 1, in load order), so that tests can read what the runtime was given. */
static void save_object(const struct fh_module *m, int seq)
{
	const char *dir = getenv("FAKEHIP_SAVE");
	char path[4096];
	if (!dir || !*dir || snprintf(path, sizeof path, "%s/%d.co", dir, seq) >= (int)sizeof path)
		return;
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(m->co, 1, m->size, f) != m->size)
		fprintf(stderr, "fakehip: cannot write %s\n", path);
	if (f)
		fclose(f);
}

struct fh_module *fh_module_load(const void *image)
{
	struct fh_module *m = image ? calloc(1, sizeof *m) : NULL;
	if (!m)
		return NULL;
	if (fh_bundle_pick(image, &m->co, &m->size) < 0 || fh_meta_read(m->co, m->size, &m->k, &m->n) < 0 ||
	    !(m->funcs = calloc((size_t)m->n + 1, sizeof *m->funcs))) {
		free(m->k);
		free(m->co);
		free(m);
		return NULL;
	}
	for (int i = 0; i < m->n; i++)
		m->funcs[i] = (struct ihipModuleSymbol_t){ m, &m->k[i] };
	pthread_mutex_lock(&fh_lock);
	m->next = modules;
	modules = m;
	int seq = ++n_loaded;
	pthread_mutex_unlock(&fh_lock);
	save_object(m, seq);
	return m;
}

struct ihipModuleSymbol_t *fh_module_func(struct fh_module *m, const char *name)
{
	for (int i = 0; m && name && i < m->n; i++)
		if (strcmp(m->k[i].name, name) == 0)
			return &m->funcs[i];
	return NULL;
}

hipError_t hipModuleLoadData(hipModule_t *mod, const void *image)
{
	if (!mod)
		return hipErrorInvalidValue;
	struct fh_module *m = fh_module_load(image);
	*mod = (hipModule_t)m;
	return m ? hipSuccess : hipErrorInvalidImage;
}

hipError_t hipModuleLoadDataEx(hipModule_t *mod, const void *image, unsigned n, int *opts, void **vals)
{
	(void)n, (void)opts, (void)vals;
	return hipModuleLoadData(mod, image);
}

hipError_t hipModuleUnload(hipModule_t mod)
{
	struct fh_module *m = (struct fh_module *)mod;
	if (!m || m->unloaded)
		return hipErrorInvalidHandle;
	m->unloaded = 1; /* kept: functions of it answer errors from now on */
	return hipSuccess;
}

hipError_t hipModuleGetFunction(hipFunction_t *f, hipModule_t mod, const char *name)
{
	struct fh_module *m = (struct fh_module *)mod;
	if (!f || !m || m->unloaded)
		return hipErrorInvalidHandle;
	*f = fh_module_func(m, name);
	return *f ? hipSuccess : hipErrorNotFound;
}

void **__hipRegisterFatBinary(const void *wrapper)
{
	/* The handle is the module (NULL when nothing fits the device: its
	 * functions then fail to launch, as HIP's do). */
	struct fh_module **h = calloc(1, sizeof *h);
	if (h)
		*h = fh_module_load(wrapper);
	return (void **)h;
}

void __hipUnregisterFatBinary(void **handle)
{
	struct fh_module **h = (struct fh_module **)handle;
	if (h && *h)
		(*h)->unloaded = 1;
	free(h);
}

void __hipRegisterFunction(void **handle, const void *host, char *device, const char *name, unsigned limit,
			   void *tid, void *bid, dim3 *block, dim3 *grid, int *wsize)
{
	(void)device, (void)limit, (void)tid, (void)bid, (void)block, (void)grid, (void)wsize;
	struct fh_module **h = (struct fh_module **)handle;
	struct fh_reg *r = calloc(1, sizeof *r);
	if (!r)
		return;
	r->host = host;
	r->f = h ? fh_module_func(*h, name) : NULL;
	pthread_mutex_lock(&fh_lock);
	r->next = regs;
	regs = r;
	pthread_mutex_unlock(&fh_lock);
}

/* The function registered for a host stub; NULL when unknown. */
struct ihipModuleSymbol_t *fh_host_func(const void *host)
{
	pthread_mutex_lock(&fh_lock);
	struct fh_reg *r = regs;
	while (r && r->host != host)
		r = r->next;
	pthread_mutex_unlock(&fh_lock);
	return r ? r->f : NULL;
}
