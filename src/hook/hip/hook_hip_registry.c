/* What the HIP stand-in knows about the application's code: modules (a
 * private copy of the bundle or code object each was made from) and
 * kernels, reachable from the host function clang registered for them
 * (__hipRegisterFunction) and from every hipFunction_t. The registry's
 * storage is the hook's (hook.reg); records live until exit, as events
 * and results refer to their mid and kid. */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine/amdgpu/amdgpu_bundle.h"
#include "engine/amdgpu/amdgpu_image.h"
#include "hook/hook_events.h"
#include "hook/hip/hook_hip.h"
#include "hook/hook_kernel_events.h"
#include "hook/hook_log.h"
#include "trace/events.h"

#define REG_LOCK() pthread_mutex_lock(&hook.reg.lock)
#define REG_UNLOCK() pthread_mutex_unlock(&hook.reg.lock)

/* Bytes of what a HIP call got without a size: a HIPF wrapper's or a
 * bundle's extent by its own header, a bare code object's by its section
 * header table; 0 when that cannot be told. */
static size_t reg_image_size(const void *image, const uint8_t **data, const char **kind)
{
	const uint8_t *p = image;
	size_t len = 0;
	uint32_t magic;
	*data = p;
	memcpy(&magic, p, 4);
	/* a wrapper is 24 bytes; a bundle or code object has 32 at least */
	switch (magic == AMDGPU_HIPF_MAGIC ? 3 : amdgpu_bundle_kind(p, 32)) {
	case 3:
		*kind = "hipfb";
		return amdgpu_bundle_unwrap(p, 0, data, &len, NULL) == 0 ? len : 0;
	case 1:
	case 2:
		*kind = "bundle";
		return amdgpu_bundle_extent(p);
	}
	const Elf64_Ehdr *eh = image;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64)
		return *kind = "unknown", 0;
	*kind = "co";
	return (size_t)eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
}

static void reg_emit_module(const struct hook_module *m, const char *api, const char *kind, int objects)
{
	if (!hook_events_on())
		return;
	struct strbuf sb;
	hook_event_begin(&sb, "module");
	event_add_int(&sb, "mid", m->mid);
	event_add(&sb, "api", api);
	event_add(&sb, "kind", kind);
	event_add_int(&sb, "size", (long long)m->size);
	event_add_int(&sb, "ptx", 0);
	event_add_int(&sb, "sass", 0);
	event_add_int(&sb, "co", objects);
	event_add(&sb, "source", m->source);
	hook_event_emit(&sb);
}

struct hook_module *hook_hip_reg_module(void *handle, const char *api, const void *image, size_t size_hint)
{
	struct hook_module *m = calloc(1, sizeof *m);
	if (!m)
		return NULL;
	m->handle = handle;
	m->source = "app";
	const uint8_t *data = NULL;
	const char *kind = "unknown";
	size_t size = image ? (size_hint ? size_hint : reg_image_size(image, &data, &kind)) : 0;
	if (size_hint)
		data = image, kind = "file";
	int objects = 0;
	struct amdgpu_objects objs;
	char *cause = NULL;
	if (size > 0 && size <= AMDGPU_BUNDLE_MAX_SIZE && (m->image = malloc(size)) != NULL) {
		memcpy(m->image, data, size);
		m->size = size;
		if (amdgpu_image_objects(m->image, m->size, &objs, &cause) == 0) {
			objects = objs.n;
			amdgpu_image_objects_done(&objs);
		}
	}
	if (objects == 0) {
		if (asprintf(&m->why, "no AMDGPU code object in the %s image%s%s", kind, cause ? ": " : "",
			     cause ? cause : "") < 0)
			m->why = NULL;
		free(m->image);
		m->image = NULL;
	}
	free(cause);
	m->n_ptx = objects;
	REG_LOCK();
	m->mid = ++hook.reg.n_modules;
	if (ptrmap_put(&hook.reg.modules, handle, m) < 0)
		hook_log("out of memory registering module");
	reg_emit_module(m, api, kind, objects);
	REG_UNLOCK();
	return m;
}

struct hook_module *hook_hip_reg_module_find(void *handle)
{
	REG_LOCK();
	struct hook_module *m = handle ? ptrmap_get(&hook.reg.modules, handle) : NULL;
	REG_UNLOCK();
	return m;
}

struct unload_ctx {
	const struct hook_module *m;
	const void *keys[256];
	int n;
};

static void unload_collect(const void *key, void *val, void *arg)
{
	struct unload_ctx *u = arg;
	const struct hook_kernel *k = val;
	if (k->mod == u->m && u->n < (int)(sizeof u->keys / sizeof u->keys[0]))
		u->keys[u->n++] = key;
}

/* The module's handles go (the runtime may hand the values out again);
 * its kernel records stay. */
void hook_hip_reg_unload(void *handle)
{
	REG_LOCK();
	struct hook_module *m = handle ? ptrmap_del(&hook.reg.modules, handle) : NULL;
	if (m) {
		m->unloaded = 1;
		struct unload_ctx u = { .m = m };
		do {
			u.n = 0;
			ptrmap_each(&hook.reg.kernels, unload_collect, &u);
			for (int i = 0; i < u.n; i++)
				ptrmap_del(&hook.reg.kernels, u.keys[i]);
		} while (u.n == (int)(sizeof u.keys / sizeof u.keys[0]));
	}
	REG_UNLOCK();
}

/* Called with the lock held. */
static struct hook_kernel *reg_new_kernel(struct hook_module *m, const char *name)
{
	return hook_kernel_new(m, name, m && m->image != NULL,
			       m && m->why ? m->why : "the module was never seen loaded");
}

struct hook_kernel *hook_hip_reg_kernel(void *handle, struct hook_module *m, const char *name)
{
	REG_LOCK();
	struct hook_kernel *k = NULL;
	for (k = m ? m->kernels : NULL; k && strcmp(k->name, name ? name : "?") != 0; k = k->next_in_mod)
		;
	if (!k)
		k = reg_new_kernel(m, name);
	if (k && handle)
		ptrmap_put(&hook.reg.kernels, handle, k);
	REG_UNLOCK();
	return k;
}

struct hook_kernel *hook_hip_reg_find(const void *handle)
{
	REG_LOCK();
	struct hook_kernel *k = handle ? ptrmap_get(&hook.reg.kernels, handle) : NULL;
	if (k && k->announced_pid != hook.pid)
		hook_kernel_line(k); /* a fork child's first sight of it */
	REG_UNLOCK();
	return k;
}
