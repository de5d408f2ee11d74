/* What compiles a probed copy's PTX (NTOP_ASSEMBLER). Off the app's
 * threads (auto): ptxas, a process of its own, where one is found; else,
 * or where each fails, the real nvJitLink inside the app's process (a CUDA
 * runtime container has it and no ptxas); else the driver's JIT, which
 * holds the app's own driver calls while it compiles: on an H200 each
 * kernel's first launch during a build waited out most of its 10-30 ms JIT
 * (bench/jit_hold.c). Only loading a cubin takes the driver. On the launch
 * the app waits anyway, and the driver's JIT cache may answer at once. */
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/cause.h"
#include "common/reallib.h"
#include "engine/ptx/assemble.h"
#include "engine/ptx/assemble_njl.h"
#include "hook/cuda/hook_cuda.h"
#include "hook/cuda/hook_cuda_api.h"
#include "hook/hook_log.h"

#define ASM_JIT_LOG 8192
#define ASM_EXITING (-2) /* nvJitLink closed at exit: nothing else is tried */

/* The real nvJitLink the builder found (kept for the process). */
struct hook_njl {
	struct assemble_njl calls;
	char path[PATH_MAX];
};

static int asm_load_cubin(const void *cubin, CUmodule *mod, const char *what, char **cause)
{
	CUstreamCaptureMode prev = hook_cuda_relax_begin();
	CUresult r = HOOK_REAL(cuModuleLoadData)(mod, cubin);
	hook_cuda_relax_end(prev);
	if (r != CUDA_SUCCESS)
		return cause_set(cause, "loading the %s cubin failed (CUDA error %d)", what, (int)r);
	return 0;
}

static int asm_jit(const char *ptx, CUmodule *mod, char **cause)
{
	char info[ASM_JIT_LOG] = "", err[ASM_JIT_LOG] = "";
	CUjit_option opts[] = { CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER,
				CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES };
	void *vals[] = { info, (void *)(uintptr_t)sizeof info, err, (void *)(uintptr_t)sizeof err };
	CUstreamCaptureMode prev = hook_cuda_relax_begin();
	CUresult rc = HOOK_REAL(cuModuleLoadDataEx)(mod, ptx, 4, opts, vals);
	hook_cuda_relax_end(prev);
	if (rc != CUDA_SUCCESS)
		return cause_set(cause, "driver JIT failed (CUDA error %d): %.2000s", (int)rc, err);
	return 0;
}

static int asm_ptxas(const char *ptxas, const char *ptx, size_t len, const char *arch, CUmodule *mod, char **cause)
{
	struct assemble_info info = { .registers = -1, .want_cubin = 1 };
	int rc = assemble_ptxas_with(ptxas, ptx, len, arch, NULL, &info, cause);
	if (rc == 0)
		rc = asm_load_cubin(info.cubin, mod, "ptxas", cause);
	assemble_info_done(&info);
	return rc;
}

/* The copy compiled by the first of the build's ptxas that can: an old
 * toolkit's fails on a newer PTX's .version or target (a newer Triton's),
 * and a cubin too new for the driver fails to load. A failed one is not
 * run again for the build's next form; each failure but the last logged. */
static int asm_ptxas_any(struct hook_asm *a, const char *kname, const char *ptx, size_t len, const char *arch,
			 CUmodule *mod, char **cause)
{
	for (; a->next < a->n; a->next++) {
		char *why = NULL;
		const char *p = a->ptxas[a->next];
		if (asm_ptxas(p, ptx, len, arch, mod, &why) == 0)
			return 0;
		if (a->next + 1 == a->n) {
			a->next++;
			if (cause)
				*cause = why;
			else
				free(why);
			return -1;
		}
		hook_log("%s: %s: %s; trying %s", kname, p, why ? why : "failed", a->ptxas[a->next + 1]);
		free(why);
	}
	return cause_set(cause, "no ptxas found (" PTXAS_LOCATE_PLACES ")");
}

/* A loaded libnvJitLink.so.N that is not ntop's stand-in: a pip wheel's
 * (PyTorch's, Numba's), or the real one the stand-in opened. */
static int asm_njl_loaded(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	const char *name = info->dlpi_name, *base = name ? strrchr(name, '/') : NULL;
	if (!base || strncmp(base + 1, "libnvJitLink.so.", 16) != 0 || reallib_is_ours(name))
		return 0;
	snprintf(data, PATH_MAX, "%s", name);
	return 1;
}

/* NTOP_REAL_LIBNVJITLINK names the only one to use */
static int asm_njl_named(void)
{
	const char *v = getenv(reallib_nvjitlink.env);
	return v && *v;
}

/* libnvJitLink.so of this toolkit's major version, else the one before
 * (a CUDA 12 container under a CUDA 13 build's ntop). */
static void *asm_njl_search(char *path, char **cause)
{
	void *h = NULL;
	char *why = NULL;
	if (reallib_open(&reallib_nvjitlink, (const void *)asm_njl_search, &h, path, PATH_MAX, cause) == 0)
		return h;
	if (asm_njl_named() ||
	    reallib_open(&reallib_nvjitlink_prev, (const void *)asm_njl_search, &h, path, PATH_MAX, &why) < 0)
		h = NULL;
	free(why);
	return h;
}

/* A compiler inside the process tears itself down at exit (the driver's
 * linker under a build aborted apps that way: doc/hook.md). This handler,
 * registered after nvJitLink's own, runs before them: it waits for the
 * compile under way and lets no other start. */
static void asm_njl_at_exit(void)
{
	pthread_mutex_lock(&hook.builder.njl_lock);
	__atomic_store_n(&hook.builder.njl_closed, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&hook.builder.njl_lock);
}

static struct hook_njl *asm_njl_open(void *h, const char *path)
{
	struct hook_njl *n = calloc(1, sizeof *n);
	char *why = NULL;
	if (n && assemble_njl_bind(&n->calls, h, &why) == 0) {
		snprintf(n->path, sizeof n->path, "%s", path);
		atexit(asm_njl_at_exit);
		return n;
	}
	hook_log("%s: %s", path, why ? why : "out of memory");
	free(why);
	free(n);
	return NULL;
}

/* The real nvJitLink: $NTOP_REAL_LIBNVJITLINK alone when set; else one the
 * process has loaded (looked for at each build, as a Triton's ptxas is),
 * else the toolkit's places (searched once). NULL when there is none.
 * Opened only when a copy needs it (no ptxas, or ptxas failed): loading it
 * maps a library of 100 MB and more into the app, and an exit while its
 * initialisers run on the builder crashes the app (seen with nvJitLink 13
 * under the test double's app_bench). */
static struct hook_njl *asm_njl(void)
{
	struct hook_builder *b = &hook.builder;
	struct hook_njl *n = __atomic_load_n(&b->njl, __ATOMIC_ACQUIRE);
	if (n)
		return n;
	pthread_mutex_lock(&b->njl_lock);
	char path[PATH_MAX] = "", pass[PATH_MAX];
	void *h = NULL;
	if (b->njl_closed) { /* a library's initialisers must not run under exit's handlers */
		pthread_mutex_unlock(&b->njl_lock);
		return NULL;
	}
	if (!(n = b->njl) && !asm_njl_named() && dl_iterate_phdr(asm_njl_loaded, path) &&
	    reallib_pass_through(path, pass, sizeof pass) == 0)
		h = dlopen(pass, RTLD_NOW | RTLD_LOCAL);
	if (!n && !h && !b->njl_searched) {
		char *why = NULL;
		b->njl_searched = 1;
		if (!(h = asm_njl_search(path, &why)))
			hook_log("%s", why ? why : "no nvJitLink");
		free(why);
	}
	if (!n && h && !(n = asm_njl_open(h, path)))
		dlclose(h);
	__atomic_store_n(&b->njl, n, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&b->njl_lock);
	return n;
}

static int asm_njl_compile(const struct hook_njl *n, const char *ptx, size_t len, const char *arch, CUmodule *mod,
			   char **cause)
{
	void *cubin = NULL;
	size_t size = 0;
	if (!n)
		return cause_set(cause, "no nvJitLink found (NTOP_REAL_LIBNVJITLINK, a loaded libnvJitLink, "
				 "LD_LIBRARY_PATH, CUDA_HOME, /usr/local/cuda/lib64, the system's libraries)");
	/* compiles one at a time: the exit handler waits for the one under way */
	pthread_mutex_lock(&hook.builder.njl_lock);
	int rc = hook.builder.njl_closed ? ASM_EXITING
					 : assemble_njl(&n->calls, ptx, len, arch, &cubin, &size, cause);
	pthread_mutex_unlock(&hook.builder.njl_lock);
	if (rc == ASM_EXITING)
		cause_set(cause, "the process was exiting before its probed copy was built");
	if (rc == 0)
		rc = asm_load_cubin(cubin, mod, "nvJitLink", cause);
	free(cubin);
	return rc;
}

/* Logs what builds the copies once, and again when that changes. */
static void asm_say(const struct hook_asm *a)
{
	char said[PATH_MAX + 8];
	snprintf(said, sizeof said, "%s|%s", a->n ? a->ptxas[0] : "", a->njl ? a->njl->path : "");
	if (hook.builder.asm_said && strcmp(hook.builder.asm_said, said) == 0)
		return;
	char more[(PTXAS_MAX_CANDIDATES + 1) * (PATH_MAX + 16)] = "";
	for (int i = 1, o = 0; i <= a->n && o >= 0 && (size_t)o < sizeof more; i++)
		o += snprintf(more + o, sizeof more - (size_t)o, "%s%s%s", i == 1 ? " (where it fails: " : ", ",
			      i < a->n ? "" : "nvJitLink ", i < a->n ? a->ptxas[i] : a->njl ? a->njl->path
											    : "where found");
	if (a->n)
		hook_log("probed copies built by %s%s%s", a->ptxas[0], more, *more ? ")" : "");
	else if (a->njl)
		hook_log("no ptxas found (" PTXAS_LOCATE_PLACES "): probed copies built by nvJitLink %s, in the app's "
			 "process", a->njl->path);
	else
		hook_log("no ptxas found (" PTXAS_LOCATE_PLACES ") nor nvJitLink: probed copies built by the driver's "
			 "JIT, which holds the app's driver calls while it compiles");
	free(hook.builder.asm_said);
	hook.builder.asm_said = strdup(said);
}

/* The ptxas found (looked for at each build: a Triton the app loads later
 * brings its own), minus an NTOP_PTXAS that is none. */
static void asm_find_ptxas(struct hook_asm *a)
{
	a->n = ptxas_candidates(a->ptxas, PTXAS_MAX_CANDIDATES);
	if (a->n == 1 && access(a->ptxas[0], X_OK) != 0) {
		ptxas_candidates_free(a->ptxas, a->n);
		a->n = 0;
	}
}

void hook_asm_begin(struct hook_asm *a, int builder)
{
	memset(a, 0, sizeof *a);
	a->builder = builder;
	if (hook.cfg.assembler == HOOK_AS_PTXAS || (builder && hook.cfg.assembler == HOOK_AS_AUTO))
		asm_find_ptxas(a);
	if (hook.cfg.assembler == HOOK_AS_NVJITLINK || (builder && hook.cfg.assembler == HOOK_AS_AUTO && !a->n))
		a->njl = asm_njl();
	else if (builder && hook.cfg.assembler == HOOK_AS_AUTO) /* opened when ptxas fails */
		a->njl = __atomic_load_n(&hook.builder.njl, __ATOMIC_ACQUIRE);
	if (builder && hook.cfg.assembler == HOOK_AS_AUTO) {
		__atomic_store_n(&hook.builder.jit_only, !a->n && !a->njl, __ATOMIC_RELAXED); /* launches read it */
		asm_say(a);
	}
}

void hook_asm_end(struct hook_asm *a)
{
	ptxas_candidates_free(a->ptxas, a->n);
	a->n = 0;
}

/* Off the app's threads in auto: ptxas, nvJitLink, then the driver's JIT,
 * each failure logged with what comes next; ASM_EXITING stops there. */
static int asm_auto(struct hook_asm *a, const char *kname, const char *ptx, size_t len, const char *arch,
		    CUmodule *mod, const char **jit, char **cause)
{
	char *why = NULL;
	if (a->next < a->n) {
		*jit = "ptxas";
		if (asm_ptxas_any(a, kname, ptx, len, arch, mod, &why) == 0)
			return 0;
		if (!a->njl)
			a->njl = asm_njl();
		/* no driver's JIT under exit's handlers either */
		int exiting = !a->njl && __atomic_load_n(&hook.builder.njl_closed, __ATOMIC_RELAXED);
		hook_log("%s: %s; %s", kname, why ? why : "ptxas failed",
			 exiting ? "the process is exiting: not built" : a->njl ? "nvJitLink builds it"
										 : "the driver's JIT builds it");
		if (exiting) {
			free(why);
			cause_set(cause, "the process was exiting before its probed copy was built");
			return ASM_EXITING;
		}
		if (a->njl)
			asm_say(a); /* names it, once */
		free(why);
		why = NULL;
	}
	if (a->njl) {
		*jit = "nvjitlink";
		int rc = asm_njl_compile(a->njl, ptx, len, arch, mod, &why);
		if (rc == 0 || rc == ASM_EXITING) {
			if (cause)
				*cause = why;
			else
				free(why);
			return rc;
		}
		hook_log("%s: %s; the driver's JIT builds it", kname, why ? why : "nvJitLink failed");
		free(why);
	}
	return -1;
}

int hook_asm_load(struct hook_asm *a, const char *kname, const char *ptx, size_t len, int cc, CUmodule *mod,
		  const char **jit, char **cause)
{
	char arch[32];
	enum hook_assembler as = hook.cfg.assembler;
	if (as != HOOK_AS_JIT && (as != HOOK_AS_AUTO || a->builder) &&
	    assemble_pick_arch(ptx, cc, arch, sizeof arch) < 0)
		return cause_set(cause, "cannot pick an -arch for sm_%d", cc);
	if (as == HOOK_AS_PTXAS) {
		*jit = "ptxas";
		return asm_ptxas_any(a, kname, ptx, len, arch, mod, cause);
	}
	if (as == HOOK_AS_NVJITLINK) {
		*jit = "nvjitlink";
		return asm_njl_compile(a->njl, ptx, len, arch, mod, cause) < 0 ? -1 : 0;
	}
	if (as == HOOK_AS_AUTO && a->builder) {
		int rc = asm_auto(a, kname, ptx, len, arch, mod, jit, cause);
		if (rc == 0 || rc == ASM_EXITING)
			return rc < 0 ? -1 : 0;
	}
	*jit = "driver";
	return asm_jit(ptx, mod, cause);
}

int hook_build_by_jit(void)
{
	if (hook.cfg.assembler != HOOK_AS_AUTO)
		return hook.cfg.assembler == HOOK_AS_JIT;
	return __atomic_load_n(&hook.builder.jit_only, __ATOMIC_RELAXED);
}
