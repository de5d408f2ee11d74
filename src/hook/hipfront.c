/* The HIP front, lib/ntop/libntop_hipfront.so: what the loader audit
 * module (rtld_bind.c) sends the hooked calls of a ROCm 6/7 runtime to.
 * The launcher preloads it into every program it starts (LD_PRELOAD, after
 * the user's), so it must cost nothing where no HIP 6/7 call is made: no
 * constructor, libc only, no sanitizer (like the audit module), and the
 * hook itself (libntop_hip.so, the engine and its libraries) is opened only
 * on the first call the audit module sent here.
 *
 * One wrapper per hooked name, typed as HIP declares the call:
 * ntop_bind_NAME calls the hook's handler for NAME, or the real function
 * (ntop_bindreal_NAME, stored by the audit module when it bound the call
 * here) when the hook cannot be opened, so the application runs as it
 * would without ntop. Each wrapper remembers its target after the first
 * call: one indirect call more than the application's own. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "hook/hook_hip_api.h"

#define FRONT_EXPORT __attribute__((visibility("default")))
#define FRONT_HOOK_FILE "libntop_hip.so"

/* X(name, return type, parameters, arguments) */
#define FRONT_CALLS(X) \
	X(__hipRegisterFatBinary, void **, (const void *w), (w)) \
	X(hipModuleLoad, hipError_t, (hipModule_t * m, const char *p), (m, p)) \
	X(hipModuleLoadData, hipError_t, (hipModule_t * m, const void *i), (m, i)) \
	X(hipModuleLoadDataEx, hipError_t, (hipModule_t * m, const void *i, unsigned n, void *o, void **v), \
	  (m, i, n, o, v)) \
	X(hipModuleUnload, hipError_t, (hipModule_t m), (m)) \
	X(hipModuleGetFunction, hipError_t, (hipFunction_t * f, hipModule_t m, const char *n), (f, m, n)) \
	X(hipLaunchKernel, hipError_t, \
	  (const void *f, hip_dim3 g, hip_dim3 b, void **a, size_t sm, hipStream_t s), (f, g, b, a, sm, s)) \
	X(hipLaunchKernel_spt, hipError_t, \
	  (const void *f, hip_dim3 g, hip_dim3 b, void **a, size_t sm, hipStream_t s), (f, g, b, a, sm, s)) \
	X(hipExtLaunchKernel, hipError_t, \
	  (const void *f, hip_dim3 g, hip_dim3 b, void **a, size_t sm, hipStream_t s, hipEvent_t e0, hipEvent_t e1, \
	   int fl), \
	  (f, g, b, a, sm, s, e0, e1, fl)) \
	X(hipLaunchCooperativeKernel, hipError_t, \
	  (const void *f, hip_dim3 g, hip_dim3 b, void **a, unsigned sm, hipStream_t s), (f, g, b, a, sm, s)) \
	X(hipLaunchCooperativeKernel_spt, hipError_t, \
	  (const void *f, hip_dim3 g, hip_dim3 b, void **a, unsigned sm, hipStream_t s), (f, g, b, a, sm, s)) \
	X(hipModuleLaunchKernel, hipError_t, \
	  (hipFunction_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, \
	   unsigned sm, hipStream_t s, void **p, void **e), \
	  (f, gx, gy, gz, bx, by, bz, sm, s, p, e)) \
	X(hipModuleLaunchCooperativeKernel, hipError_t, \
	  (hipFunction_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, \
	   unsigned sm, hipStream_t s, void **p), \
	  (f, gx, gy, gz, bx, by, bz, sm, s, p)) \
	X(hipDrvLaunchKernelEx, hipError_t, (const hip_launch_config *c, hipFunction_t f, void **p, void **e), \
	  (c, f, p, e)) \
	X(hipExtModuleLaunchKernel, hipError_t, FRONT_EXT_PARAMS, FRONT_EXT_ARGS) \
	X(_Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j, \
	  hipError_t, FRONT_EXT_PARAMS, FRONT_EXT_ARGS) \
	X(hipHccModuleLaunchKernel, hipError_t, FRONT_HCC_PARAMS, FRONT_HCC_ARGS) \
	X(_Z24hipHccModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_, \
	  hipError_t, FRONT_HCC_PARAMS, FRONT_HCC_ARGS) \
	X(hipGraphAddKernelNode, hipError_t, \
	  (hipGraphNode_t * n, hipGraph_t g, const hipGraphNode_t *d, size_t nd, const hip_kernel_node_params *p), \
	  (n, g, d, nd, p)) \
	X(hipGraphLaunch, hipError_t, (hipGraphExec_t e, hipStream_t s), (e, s)) \
	X(hipGetProcAddress, hipError_t, (const char *n, void **f, int v, uint64_t fl, int *st), (n, f, v, fl, st))

/* The two that return nothing. */
#define FRONT_VOID_CALLS(X) \
	X(__hipRegisterFunction, \
	  (void **h, const void *f, char *d, const char *n, unsigned l, void *t, void *b, hip_dim3 *bl, hip_dim3 *g, \
	   int *w), \
	  (h, f, d, n, l, t, b, bl, g, w)) \
	X(__hipUnregisterFatBinary, (void **h), (h))

#define FRONT_EXT_PARAMS \
	(hipFunction_t f, uint32_t wx, uint32_t wy, uint32_t wz, uint32_t lx, uint32_t ly, uint32_t lz, size_t sm, \
	 hipStream_t s, void **p, void **e, hipEvent_t e0, hipEvent_t e1, uint32_t fl)
#define FRONT_EXT_ARGS (f, wx, wy, wz, lx, ly, lz, sm, s, p, e, e0, e1, fl)
#define FRONT_HCC_PARAMS \
	(hipFunction_t f, uint32_t wx, uint32_t wy, uint32_t wz, uint32_t lx, uint32_t ly, uint32_t lz, size_t sm, \
	 hipStream_t s, void **p, void **e, hipEvent_t e0, hipEvent_t e1)
#define FRONT_HCC_ARGS (f, wx, wy, wz, lx, ly, lz, sm, s, p, e, e0, e1)

static struct {
	pthread_once_t once;
	void *(*handler)(const char *name); /* the hook's ntop_hip_bind_handler */
} front = { PTHREAD_ONCE_INIT, NULL };

/* The hook beside this file; when it cannot be opened every call goes to
 * the runtime (the hook would have said why in its events; without it
 * there is no one to tell). */
static void front_load(void)
{
	Dl_info self;
	char path[4096];
	if (!dladdr((void *)front_load, &self) || !self.dli_fname || !strrchr(self.dli_fname, '/'))
		return;
	int dir = (int)(strrchr(self.dli_fname, '/') - self.dli_fname);
	if (snprintf(path, sizeof path, "%.*s/%s", dir, self.dli_fname, FRONT_HOOK_FILE) >= (int)sizeof path)
		return;
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h)
		front.handler = (void *(*)(const char *))dlsym(h, "ntop_hip_bind_handler");
}

static void *front_target(const char *name, void *const *real, void **cache)
{
	void *t = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
	if (t)
		return t;
	pthread_once(&front.once, front_load);
	t = front.handler ? front.handler(name) : NULL;
	if (!t)
		t = __atomic_load_n(real, __ATOMIC_ACQUIRE);
	__atomic_store_n(cache, t, __ATOMIC_RELEASE);
	return t;
}

#define FRONT_WRAP(name, ret, params, args) \
	FRONT_EXPORT void *ntop_bindreal_##name; \
	FRONT_EXPORT ret ntop_bind_##name params \
	{ \
		static void *cache; \
		ret(*fn) params = (ret(*) params)front_target(#name, &ntop_bindreal_##name, &cache); \
		return fn args; \
	}
#define FRONT_WRAP_VOID(name, params, args) \
	FRONT_EXPORT void *ntop_bindreal_##name; \
	FRONT_EXPORT void ntop_bind_##name params \
	{ \
		static void *cache; \
		void(*fn) params = (void(*) params)front_target(#name, &ntop_bindreal_##name, &cache); \
		fn args; \
	}
FRONT_CALLS(FRONT_WRAP)
FRONT_VOID_CALLS(FRONT_WRAP_VOID)

/* For the hook: an address inside the runtime the calls were bound to. */
FRONT_EXPORT void *ntop_bind_runtime(void)
{
#define FRONT_SLOT(name, ...) &ntop_bindreal_##name,
	void *const *slots[] = { FRONT_CALLS(FRONT_SLOT) FRONT_VOID_CALLS(FRONT_SLOT) };
#undef FRONT_SLOT
	for (size_t i = 0; i < sizeof slots / sizeof slots[0]; i++) {
		void *p = __atomic_load_n(slots[i], __ATOMIC_ACQUIRE);
		if (p)
			return p;
	}
	return NULL;
}
