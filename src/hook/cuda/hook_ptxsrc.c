/* PTX from elsewhere in the process (hook_ptxsrc.h). */
#include "hook/cuda/hook_ptxsrc.h"

#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/cause.h"
#include "engine/image/elf_file.h"
#include "engine/image/image.h"
#include "engine/image/triton_cache.h"
#include "hook/hook_env.h"
#include "hook/hook_log.h"
#include "hook/hook_registry.h"
#include "hook/hook_state.h"

#define PTXSRC_REL_MAX ((size_t)1 << 30) /* bytes of __nv_relfatbin we read at most */

struct hook_jit_output {
	uint64_t hash;  /* FNV-1a of the cubin's bytes */
	size_t size;    /* bytes the cubin's own headers span */
	int jit;        /* enum hook_jit */
	char *ptx;      /* PTX texts, each NUL-terminated */
	size_t ptx_len;
};

struct hook_rdc_elf {
	struct hook_rdc_elf *next;
	char *path;
	uint8_t *rel;   /* its __nv_relfatbin, NULL when it has none */
	size_t rel_len;
	int n_ptx;
	char *why;      /* why there is no PTX there */
};

static const char *const jit_names[HOOK_JIT_N] = { "nvrtc", "nvjitlink" };
static const char *const jit_files[HOOK_JIT_N] = { "libnvrtc", "libnvJitLink" };
static const char *const jit_envs[HOOK_JIT_N] = { NTOP_ENV_REAL_LIBNVRTC, NTOP_ENV_REAL_LIBNVJITLINK };

static uint64_t ptxsrc_hash(const uint8_t *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

/* ---- the stand-ins' outputs --------------------------------------------- */

__attribute__((visibility("default"))) void ntop_hook_jit_output(const char *jit, const void *cubin, size_t size,
								   const char *ptx, size_t ptx_len)
{
	struct hook_ptxsrc *s = &hook.ptxsrc;
	int j = jit && strcmp(jit, "nvjitlink") == 0 ? HOOK_JIT_NVJITLINK : HOOK_JIT_NVRTC;
	size_t real = 0;
	if (!cubin) {
		__atomic_store_n(&s->loaded[j], 1, __ATOMIC_RELEASE);
		hook_log("%s stand-in loaded", jit_names[j]);
		return;
	}
	if (image_classify(cubin, size, &real) != IMAGE_CUBIN || !ptx || !ptx_len) {
		hook_log("%s: an output of %zu bytes is not a cubin with PTX, ignored", jit_names[j], size);
		return;
	}
	struct hook_jit_output o = { ptxsrc_hash(cubin, real), real, j, malloc(ptx_len + 1), ptx_len };
	if (!o.ptx)
		return;
	memcpy(o.ptx, ptx, ptx_len);
	o.ptx[ptx_len] = 0;
	pthread_mutex_lock(&s->lock);
	s->loaded[j] = 1;
	s->outputs[j]++;
	if (s->n_out == s->cap_out) {
		uint32_t cap = s->cap_out ? s->cap_out * 2 : 64;
		struct hook_jit_output *v = realloc(s->out, cap * sizeof *v);
		if (v) {
			s->out = v;
			s->cap_out = cap;
		}
	}
	if (s->n_out < s->cap_out)
		s->out[s->n_out++] = o;
	else
		free(o.ptx);
	pthread_mutex_unlock(&s->lock);
}

__attribute__((visibility("default"))) void ntop_hook_jit_note(const char *jit, const char *msg)
{
	hook_log("%s: %s", jit ? jit : "?", msg ? msg : "");
}

/* The JIT output with these bytes: 1 and m->link_ptx set, else 0. */
static int ptxsrc_jit_find(struct hook_module *m)
{
	struct hook_ptxsrc *s = &hook.ptxsrc;
	if (!__atomic_load_n(&s->n_out, __ATOMIC_ACQUIRE))
		return 0;
	uint64_t h = ptxsrc_hash(m->image, m->size);
	int found = 0;
	pthread_mutex_lock(&s->lock);
	for (uint32_t i = 0; i < s->n_out && !found; i++) {
		const struct hook_jit_output *o = &s->out[i];
		if (o->size != m->size || o->hash != h || !(m->link_ptx = malloc(o->ptx_len + 1)))
			continue;
		memcpy(m->link_ptx, o->ptx, o->ptx_len + 1);
		m->link_ptx_len = o->ptx_len;
		m->source = jit_names[o->jit];
		found = 1;
	}
	pthread_mutex_unlock(&s->lock);
	return found;
}

/* Did the launcher have ntop's loader audit module send opens of this
 * library by any path to the stand-in (hook_env.h)? */
static int ptxsrc_audited(const char *file)
{
	const char *map = getenv(NTOP_ENV_AUDIT_MAP);
	size_t n = strlen(file);
	for (const char *p = map; p && (p = strstr(p, file)) != NULL; p += n)
		if ((p == map || p[-1] == '\n') && p[n] == '.')
			return 1;
	return 0;
}

/* What a stand-in saw, for the reason of a cubin nobody matched. */
static void ptxsrc_jit_why(struct strbuf *why)
{
	struct hook_ptxsrc *s = &hook.ptxsrc;
	pthread_mutex_lock(&s->lock);
	for (int j = 0; j < HOOK_JIT_N; j++) {
		const char *real = getenv(jit_envs[j]);
		strbuf_printf(why, "; %s: ", jit_names[j]);
		if (s->loaded[j])
			strbuf_printf(why, "%u cubin%s produced, none with these bytes", s->outputs[j],
				      s->outputs[j] == 1 ? "" : "s");
		else if (real && *real && ptxsrc_audited(jit_files[j]))
			strbuf_printf(why, "no call reached the stand-in (the app never called %s, or has it linked in "
				      "statically)", jit_files[j]);
		else if (real && *real)
			strbuf_printf(why, "no call reached the stand-in (the app did not load %s by name and ntop's "
				      "loader audit was off (--no-audit), or never called it)", jit_files[j]);
		else
			strbuf_printf(why, "not watched (ntop found no real %s to forward to)", jit_files[j]);
	}
	pthread_mutex_unlock(&s->lock);
}

void hook_ptxsrc_cubin(struct hook_module *m, struct strbuf *why)
{
	if (ptxsrc_jit_find(m))
		return;
	char *ptx = NULL, *cause = NULL;
	size_t len = 0;
	/* Reads directories: called outside the registry lock. */
	if (triton_cache_find_ptx(m->image, m->size, &ptx, &len, &cause) == 0) {
		m->link_ptx = ptx;
		m->link_ptx_len = len;
		m->source = "triton";
		return;
	}
	ptxsrc_jit_why(why);
	strbuf_printf(why, "; %s", cause ? cause : "Triton caches: none");
	free(cause);
}

/* ---- -rdc builds ------------------------------------------------------- */

struct ptxsrc_find_obj {
	uintptr_t addr;
	char path[4096];
	int found;
};

static int ptxsrc_phdr(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct ptxsrc_find_obj *f = arg;
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type != PT_LOAD || f->addr < start || f->addr >= start + ph->p_memsz)
			continue;
		/* the main program has no name here */
		snprintf(f->path, sizeof f->path, "%s", info->dlpi_name && *info->dlpi_name ? info->dlpi_name
											: "/proc/self/exe");
		f->found = 1;
		return 1;
	}
	return 0;
}

/* Reads the ELF's __nv_relfatbin once per file (the lock is held). */
static struct hook_rdc_elf *ptxsrc_rdc_elf(const char *path)
{
	struct hook_ptxsrc *s = &hook.ptxsrc;
	for (struct hook_rdc_elf *e = s->elfs; e; e = e->next)
		if (strcmp(e->path, path) == 0)
			return e;
	struct hook_rdc_elf *e = calloc(1, sizeof *e);
	if (!e || !(e->path = strdup(path))) {
		free(e);
		return NULL;
	}
	char *cause = NULL;
	int rc = elf_file_section(path, "__nv_relfatbin", PTXSRC_REL_MAX, &e->rel, &e->rel_len, &cause);
	struct image_entry *v = NULL;
	int n = 0;
	if (rc == 0 && image_fatbin_entries(e->rel, e->rel_len, &v, &n, &cause) == 0)
		for (int i = 0; i < n; i++)
			e->n_ptx += v[i].is_ptx;
	free(v);
	if (rc == 1)
		e->why = strdup("no __nv_relfatbin section (not an -rdc build)");
	else if (rc < 0 || !e->n_ptx)
		e->why = strdup(cause ? cause : "its __nv_relfatbin holds no PTX");
	free(cause);
	e->next = s->elfs;
	s->elfs = e;
	return e;
}

void hook_ptxsrc_rdc(struct hook_module *m, const void *addr, struct strbuf *why)
{
	struct ptxsrc_find_obj f = { .addr = (uintptr_t)addr };
	dl_iterate_phdr(ptxsrc_phdr, &f);
	if (!f.found) {
		strbuf_puts(why, "; the image lies in no loaded executable or library (no -rdc PTX to look for)");
		return;
	}
	struct hook_ptxsrc *s = &hook.ptxsrc;
	pthread_mutex_lock(&s->lock);
	struct hook_rdc_elf *e = ptxsrc_rdc_elf(f.path);
	if (e && e->n_ptx && (m->ptx_image = malloc(e->rel_len)) != NULL) {
		memcpy(m->ptx_image, e->rel, e->rel_len);
		m->ptx_image_size = e->rel_len;
		m->n_ptx = e->n_ptx;
		m->source = "rdc";
	} else {
		strbuf_printf(why, "; %s: %s", f.path, e && e->why ? e->why : "cannot be read");
	}
	pthread_mutex_unlock(&s->lock);
}
