/* Module, kernel, link and graph records (hook_registry.h). Images are
 * classified at load time from their own headers (the driver API passes no
 * size) and copied only when they may yield PTX later: PTX text, a fatbin
 * with PTX entries, or a cubin (Numba's linked PTX, NVRTC's or nvJitLink's,
 * or Triton's cache PTX can stand in for it; hook_ptxsrc.h); a fatbin
 * without PTX gets its -rdc build's. Records live until exit: a kernel record outlives its
 * module's unload because events and results refer to its kid. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine/image/image.h"
#include "hook/cuda/hook_cuda_api.h"
#include "hook/hook_events.h"
#include "hook/hook_log.h"
#include "hook/cuda/hook_ptxsrc.h"
#include "hook/hook_kernel_events.h"
#include "hook/hook_registry.h"
#include "hook/hook_state.h"
#include "trace/events.h"

#define REG_LOCK() pthread_mutex_lock(&hook.reg.lock)
#define REG_UNLOCK() pthread_mutex_unlock(&hook.reg.lock)
#define FATBIN_WRAPPER_MAGIC_LE 0x466243B1u

void hook_registry_init(struct hook_registry *r)
{
	(void)r; /* zeroed storage is an empty registry */
}

static const char *const kind_names[] = { "unknown", "ptx", "fatbin", "cubin", "elf" };

/* A fatbin wrapper (what cuLibraryLoadData gets from nvcc's registration
 * code) points at the container: classify and copy the container itself. */
static const void *registry_unwrap(const void *image)
{
	uint32_t magic;
	memcpy(&magic, image, sizeof magic);
	if (magic != FATBIN_WRAPPER_MAGIC_LE)
		return image;
	const void *data;
	memcpy(&data, (const uint8_t *)image + 8, sizeof data);
	return data ? data : image;
}

static void registry_count_entries(struct hook_module *m, const void *img, size_t size)
{
	struct image_entry *e = NULL;
	int n = 0;
	char *cause = NULL;
	if (image_fatbin_entries(img, size, &e, &n, &cause) < 0) {
		hook_log("fatbin entries: %s", cause ? cause : "?");
		free(cause);
		return;
	}
	for (int i = 0; i < n; i++) {
		m->n_ptx += e[i].is_ptx;
		m->n_sass += !e[i].is_ptx;
	}
	free(e);
}

/* PTX for a cubin from elsewhere: a cuLinkComplete output (Numba, keyed
 * on the pointer), else hook_ptxsrc.h's sources (keyed on the bytes). */
static void registry_cubin_ptx(struct hook_module *m, const void *orig, struct strbuf *why)
{
	REG_LOCK();
	struct hook_link *l = ptrmap_get(&hook.reg.cubins, orig);
	if (l && l->ptx && (m->link_ptx = malloc(l->ptx_len + 1)) != NULL) {
		memcpy(m->link_ptx, l->ptx, l->ptx_len + 1);
		m->link_ptx_len = l->ptx_len;
		m->source = "numba";
	}
	REG_UNLOCK();
	if (l)
		return;
	strbuf_puts(why, "SASS only: the cubin has no PTX; looked for it in: cuLink inputs (no link produced it)");
	hook_ptxsrc_cubin(m, why);
}

/* A fatbin (or host ELF) with no PTX entry: an -rdc build keeps it apart. */
static void registry_fatbin_ptx(struct hook_module *m, const void *orig, struct strbuf *why)
{
	strbuf_puts(why, "SASS only: the image has no PTX; rebuild with -gencode arch=compute_XX,code=compute_XX "
			 "(or +PTX in TORCH_CUDA_ARCH_LIST)");
	hook_ptxsrc_rdc(m, orig, why);
}

/* Where the module's PTX comes from, or m->why says where it was looked for. */
static void registry_find_ptx(struct hook_module *m, const void *orig)
{
	struct strbuf why;
	strbuf_init(&why);
	if (m->kind == IMAGE_CUBIN)
		registry_cubin_ptx(m, orig, &why);
	else if ((m->kind == IMAGE_FATBIN || m->kind == IMAGE_HOST_ELF) && m->n_ptx == 0)
		registry_fatbin_ptx(m, orig, &why);
	if (m->link_ptx || m->ptx_image || why.len == 0)
		strbuf_done(&why);
	else
		m->why = strbuf_finish(&why, NULL);
}

static void registry_classify(struct hook_module *m, const void *image, size_t size_hint)
{
	if (!image)
		return;
	const void *img = registry_unwrap(image);
	size_t real = 0;
	m->kind = (int)image_classify(img, img == image ? size_hint : 0, &real);
	if (real == 0)
		real = size_hint;
	m->size = real;
	if (m->kind == IMAGE_FATBIN || m->kind == IMAGE_HOST_ELF)
		registry_count_entries(m, img, real);
	else if (m->kind == IMAGE_PTX)
		m->n_ptx = 1;
	else if (m->kind == IMAGE_CUBIN)
		m->n_sass = 1;
	int keep = m->kind == IMAGE_PTX || m->kind == IMAGE_CUBIN || (m->n_ptx > 0 && m->kind != IMAGE_UNKNOWN);
	if (keep && real > 0 && (m->image = malloc(real + 1)) != NULL) {
		memcpy(m->image, img, real);
		m->image[real] = 0;
	}
	if (m->image || m->kind != IMAGE_CUBIN)
		registry_find_ptx(m, m->kind == IMAGE_CUBIN ? image : img);
}

static void registry_emit_module(const struct hook_module *m, const char *api)
{
	if (!hook_events_on())
		return;
	struct strbuf sb;
	hook_event_begin(&sb, "module");
	event_add_int(&sb, "mid", m->mid);
	event_add(&sb, "api", api);
	event_add(&sb, "kind", kind_names[m->kind >= 0 && m->kind <= 4 ? m->kind : 0]);
	event_add_int(&sb, "size", (long long)m->size);
	event_add_int(&sb, "ptx", m->n_ptx + (m->link_ptx != NULL));
	event_add_int(&sb, "sass", m->n_sass);
	event_add(&sb, "source", m->source);
	hook_event_emit(&sb);
}

struct hook_module *hook_registry_add_module(void *handle, int is_library, const char *api,
					     const void *image, size_t size_hint)
{
	struct hook_module *m = calloc(1, sizeof *m);
	if (!m)
		return NULL;
	m->handle = handle;
	m->is_library = is_library;
	m->source = "app";
	CUcontext ctx = NULL;
	if (!is_library && cu.cuCtxGetCurrent && cu.cuCtxGetCurrent(&ctx) == CUDA_SUCCESS)
		m->ctx = ctx; /* a module lives and dies with the context it was loaded in */
	registry_classify(m, image, size_hint);
	REG_LOCK();
	m->mid = ++hook.reg.n_modules;
	if (ptrmap_put(&hook.reg.modules, handle, m) < 0)
		hook_log("out of memory registering module");
	registry_emit_module(m, api);
	REG_UNLOCK();
	return m;
}

struct hook_module *hook_registry_module(void *handle)
{
	REG_LOCK();
	struct hook_module *m = ptrmap_get(&hook.reg.modules, handle);
	REG_UNLOCK();
	return m;
}

void hook_registry_module_alias(void *handle, struct hook_module *m)
{
	if (!m)
		return;
	REG_LOCK();
	ptrmap_put(&hook.reg.modules, handle, m);
	REG_UNLOCK();
}

struct unload_ctx {
	const void *mod;
	const void **keys;
	size_t n, cap;
};

static void unload_collect(const void *key, void *val, void *arg)
{
	struct unload_ctx *u = arg;
	const struct hook_kernel *k = val;
	int hit = val == u->mod || (k && (const void *)k->mod == u->mod);
	if (!hit || u->n == u->cap)
		return;
	u->keys[u->n++] = key;
}

/* Drops every handle of the module (its kernels' CUfunctions too): the driver
 * may hand the same pointer values out again for a later module. */
static void unload_drop(struct ptrmap *map, struct hook_module *m, int kernels)
{
	struct unload_ctx u = { m, NULL, 0, map->live };
	if (u.cap == 0 || !(u.keys = malloc(u.cap * sizeof *u.keys)))
		return;
	if (kernels)
		ptrmap_each(map, unload_collect, &u);
	else
		for (size_t i = 0; i < map->cap; i++)
			if (map->vals[i] == m && u.n < u.cap)
				u.keys[u.n++] = map->keys[i];
	for (size_t i = 0; i < u.n; i++)
		ptrmap_del(map, u.keys[i]);
	free(u.keys);
}

/* Called with the lock held. */
static void unload_module(struct hook_module *m)
{
	m->unloaded = 1;
	unload_drop(&hook.reg.kernels, m, 1);
	unload_drop(&hook.reg.modules, m, 0);
}

void hook_registry_unload(void *handle)
{
	REG_LOCK();
	struct hook_module *m = ptrmap_get(&hook.reg.modules, handle);
	__atomic_add_fetch(&hook.reg.generation, 1, __ATOMIC_RELEASE);
	if (m)
		unload_module(m);
	REG_UNLOCK();
}

struct ctx_modules {
	const void *ctx;
	struct hook_module *hit;
};

static void ctx_module_find(const void *key, void *val, void *arg)
{
	struct ctx_modules *c = arg;
	struct hook_module *m = val;
	(void)key;
	if (!c->hit && m && !m->is_library && !m->unloaded && m->ctx == c->ctx)
		c->hit = m;
}

void hook_registry_ctx_gone(void *ctx)
{
	if (!ctx)
		return;
	REG_LOCK();
	__atomic_add_fetch(&hook.reg.generation, 1, __ATOMIC_RELEASE);
	/* One module at a time: unload_module changes the map. */
	for (;;) {
		struct ctx_modules c = { ctx, NULL };
		ptrmap_each(&hook.reg.modules, ctx_module_find, &c);
		if (!c.hit)
			break;
		unload_module(c.hit);
	}
	REG_UNLOCK();
}

static const char *registry_no_ptx_reason(const struct hook_module *m)
{
	if (!m)
		return "module not seen loading (loaded before the hook or through an API it does not watch)";
	if (m->why)
		return m->why;
	if (m->kind == IMAGE_UNKNOWN)
		return "unrecognised image format";
	return "SASS only: the image has no PTX; rebuild with -gencode arch=compute_XX,code=compute_XX "
	       "(or +PTX in TORCH_CUDA_ARCH_LIST)";
}

void hook_registry_announce(struct hook_kernel *k)
{
	REG_LOCK();
	if (k->announced_pid != hook.pid)
		hook_kernel_line(k);
	REG_UNLOCK();
}

/* A fork child counts its own launches: its stats lines are its process's,
 * and the parent's counts in them would be counted twice by readers. */
void hook_registry_fork_child(void)
{
	struct hook_registry *r = &hook.reg;
	for (uint32_t i = 0; i < r->n_kernels; i++) {
		struct hook_kernel *k = r->all[i];
		__atomic_store_n(&k->last_hash, 0, __ATOMIC_RELAXED);
		k->launched = 0;
		memset(k->last_hash_dev, 0, sizeof k->last_hash_dev);
		k->launches = k->probe_attempts = k->probed = k->declined = k->deferred = 0;
		memset(k->dev_launches, 0, sizeof k->dev_launches);
		k->timed = k->total_ns = k->max_ns = 0;
		k->min_ns = UINT64_MAX;
		k->stats_launches = k->stats_timed = 0;
		free(k->decline_reported); /* the child says its own reasons */
		k->decline_reported = NULL;
		memset(&k->seen, 0, sizeof k->seen); /* the parent's contexts: nothing is built for them here */
	}
}

/* Called with the lock held. */
static struct hook_kernel *registry_new_kernel(struct hook_module *m, const char *name)
{
	int has_ptx = m && (m->kind == IMAGE_PTX || (m->n_ptx > 0 && (m->image || m->ptx_image)) || m->link_ptx);
	return hook_kernel_new(m, name, has_ptx, has_ptx ? NULL : registry_no_ptx_reason(m));
}

struct hook_kernel *hook_registry_add_kernel(void *handle, struct hook_module *m, const char *name)
{
	REG_LOCK();
	struct hook_kernel *k = ptrmap_get(&hook.reg.kernels, handle);
	/* A handle value the driver handed out again for another module's
	 * function (its old module went without an unload we saw). */
	if (k && m && k->mod != m)
		k = NULL;
	if (!k && m && name)
		for (k = m->kernels; k && strcmp(k->name, name) != 0; k = k->next_in_mod)
			;
	if (!k)
		k = registry_new_kernel(m, name);
	if (k)
		ptrmap_put(&hook.reg.kernels, handle, k);
	REG_UNLOCK();
	return k;
}

void hook_registry_alias(void *handle, struct hook_kernel *k)
{
	if (!k)
		return;
	REG_LOCK();
	ptrmap_put(&hook.reg.kernels, handle, k);
	REG_UNLOCK();
}

/* A few recent handles per thread, so a launch loop takes no lock. Valid
 * while the registry generation is unchanged (no module was unloaded). */
#define REG_CACHE 4
static __thread struct {
	uint64_t gen;
	void *handle[REG_CACHE];
	struct hook_kernel *k[REG_CACHE];
	unsigned next;
} reg_cache;

struct hook_kernel *hook_registry_kernel(void *handle)
{
	uint64_t gen = __atomic_load_n(&hook.reg.generation, __ATOMIC_ACQUIRE);
	if (reg_cache.gen == gen) {
		for (int i = 0; i < REG_CACHE; i++)
			if (reg_cache.handle[i] == handle && handle)
				return reg_cache.k[i];
	} else {
		memset(&reg_cache, 0, sizeof reg_cache);
		reg_cache.gen = gen;
	}
	REG_LOCK();
	struct hook_kernel *k = ptrmap_get(&hook.reg.kernels, handle);
	REG_UNLOCK();
	if (!k && handle)
		k = hook_registry_kernel_slow(handle);
	if (k) {
		unsigned i = reg_cache.next++ % REG_CACHE;
		reg_cache.handle[i] = handle;
		reg_cache.k[i] = k;
	}
	return k;
}

struct hook_kernel *hook_registry_find(void *handle)
{
	REG_LOCK();
	struct hook_kernel *k = handle ? ptrmap_get(&hook.reg.kernels, handle) : NULL;
	REG_UNLOCK();
	return k;
}

int hook_registry_attr_set(void *handle, enum hook_attr_id a, int v)
{
	if (!handle || a < 0 || a >= HOOK_ATTR_N)
		return -1;
	REG_LOCK();
	struct hook_kernel *k = ptrmap_get(&hook.reg.kernels, handle);
	if (k) {
		uint64_t g = k->attrs.gen + 1;
		__atomic_store_n(&k->attrs.slot[a], g << 32 | (uint32_t)v, __ATOMIC_RELAXED);
		__atomic_store_n(&k->attrs.gen, g, __ATOMIC_RELEASE);
	}
	REG_UNLOCK();
	return k ? 0 : -1;
}

void hook_registry_library_kernel(void *kernel, struct hook_kernel *k)
{
	if (!k)
		return;
	REG_LOCK();
	if (!k->library_kernel)
		k->library_kernel = kernel;
	REG_UNLOCK();
}

/* The library kernel whose function in the current context is `f`: the
 * driver makes such functions itself (a launch captured into a graph holds
 * the context's CUfunction of the CUkernel the runtime launched), so the
 * hook never sees them handed out. Only kernels of that name are asked. */
static struct hook_kernel *registry_library_function(void *f, const char *name)
{
	if (!cu.cuKernelGetFunction)
		return NULL;
	REG_LOCK();
	uint32_t n = 0;
	void **cand = malloc((hook.reg.n_kernels + 1) * sizeof *cand);
	struct hook_kernel **ks = malloc((hook.reg.n_kernels + 1) * sizeof *ks);
	for (uint32_t i = 0; cand && ks && i < hook.reg.n_kernels; i++) {
		struct hook_kernel *k = hook.reg.all[i];
		if (k->library_kernel && k->mod && !k->mod->unloaded && strcmp(k->name, name) == 0) {
			cand[n] = k->library_kernel;
			ks[n++] = k;
		}
	}
	REG_UNLOCK();
	struct hook_kernel *hit = NULL;
	for (uint32_t i = 0; i < n && !hit; i++) {
		CUfunction g = NULL;
		if (cu.cuKernelGetFunction(&g, (CUkernel)cand[i]) == CUDA_SUCCESS && (void *)g == f)
			hit = ks[i];
	}
	free(cand);
	free(ks);
	return hit;
}

struct hook_kernel *hook_registry_kernel_slow(void *handle)
{
	/* A handle we did not see created (a module loaded before us, or
	 * through an entry point we do not hook): ask the driver its name. */
	const char *name = NULL;
	if (cu.cuFuncGetName && cu.cuFuncGetName(&name, (CUfunction)handle) != CUDA_SUCCESS)
		name = NULL;
	struct hook_kernel *lib = name ? registry_library_function(handle, name) : NULL;
	if (lib) {
		hook_registry_alias(handle, lib);
		return lib;
	}
	if (!name && cu.cuKernelGetName && cu.cuKernelGetName(&name, (CUkernel)handle) != CUDA_SUCCESS)
		name = NULL;
	char buf[32];
	if (!name) {
		snprintf(buf, sizeof buf, "unknown@%p", handle);
		name = buf;
	}
	return hook_registry_add_kernel(handle, NULL, name);
}

struct hook_kernel **hook_registry_kernels(uint32_t *n)
{
	REG_LOCK();
	struct hook_kernel **v = malloc((hook.reg.n_kernels + 1) * sizeof *v);
	*n = 0;
	if (v && hook.reg.n_kernels) {
		memcpy(v, hook.reg.all, hook.reg.n_kernels * sizeof *v);
		*n = hook.reg.n_kernels;
	}
	REG_UNLOCK();
	return v;
}

void hook_registry_link_create(void *state)
{
	struct hook_link *l = calloc(1, sizeof *l);
	if (!l)
		return;
	REG_LOCK();
	struct hook_link *old = ptrmap_get(&hook.reg.links, state);
	ptrmap_put(&hook.reg.links, state, l);
	REG_UNLOCK();
	if (old) {
		free(old->ptx);
		free(old);
	}
}

void hook_registry_link_add(void *state, const void *ptx, size_t len)
{
	REG_LOCK();
	struct hook_link *l = ptrmap_get(&hook.reg.links, state);
	if (l) {
		/* Inputs are kept NUL-separated: the prober picks the one that
		 * defines the kernel. */
		char *p = realloc(l->ptx, l->ptx_len + len + 2);
		if (p) {
			if (l->ptx_len)
				p[l->ptx_len++] = 0;
			memcpy(p + l->ptx_len, ptx, len);
			l->ptx_len += len;
			p[l->ptx_len] = 0;
			l->ptx = p;
			l->n_ptx++;
		}
	}
	REG_UNLOCK();
}

void hook_registry_link_complete(void *state, const void *cubin)
{
	REG_LOCK();
	struct hook_link *l = ptrmap_get(&hook.reg.links, state);
	if (l && cubin)
		ptrmap_put(&hook.reg.cubins, cubin, l);
	REG_UNLOCK();
}

static void link_drop_cubins(struct hook_link *l)
{
	struct ptrmap *map = &hook.reg.cubins;
	for (size_t i = 0; i < map->cap; i++)
		if (map->vals[i] == l)
			ptrmap_del(map, map->keys[i]);
}

void hook_registry_link_destroy(void *state)
{
	REG_LOCK();
	struct hook_link *l = ptrmap_del(&hook.reg.links, state);
	if (l)
		link_drop_cubins(l);
	REG_UNLOCK();
	if (l) {
		free(l->ptx);
		free(l);
	}
}

uint64_t hook_registry_graph_launch(void *exec)
{
	REG_LOCK();
	uintptr_t n = (uintptr_t)ptrmap_get(&hook.reg.graphs, exec) + 1;
	ptrmap_put(&hook.reg.graphs, exec, (void *)n);
	REG_UNLOCK();
	return n;
}
