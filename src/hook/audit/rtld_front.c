/* The HIP front, part of ntop's loader audit module: what rtld_bind.c
 * binds the hooked calls of a ROCm 6/7 runtime to. One wrapper per hooked
 * name, typed as HIP declares the call: it calls the hook's handler for the
 * name, or the real function (stored when the call was bound here) when
 * the hook cannot be opened, so the application runs as it would without
 * ntop. The hook (libntop_hip.so: the engine, its libraries, sanitizer
 * builds included) is opened into the application's namespace
 * (dlmopen(LM_ID_BASE)) on the first call that reaches a wrapper, never
 * before: nothing is loaded into a program that makes no such call, and
 * start-up relocation (where la_symbind runs) never opens anything. Each
 * wrapper remembers its target after the first call: one indirect call more
 * than the application's own. */
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>
#include "hook/hip/hook_hip_api.h"
#include "hook/audit/rtld_audit.h"

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
	const char *hook;                   /* the hook library's path */
	pthread_once_t once;
	void *(*handler)(const char *name); /* its ntop_hip_bind_handler */
} front = { NULL, PTHREAD_ONCE_INIT, NULL };

/* When the hook cannot be opened every call goes to the runtime (the hook
 * would have said why in its events; without it no one can: the audit
 * module never prints). */
static void front_load(void)
{
	void *h = front.hook ? dlmopen(LM_ID_BASE, front.hook, RTLD_NOW | RTLD_LOCAL) : NULL;
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
	static void *real_##name; \
	static ret front_##name params \
	{ \
		static void *cache; \
		ret(*fn) params = (ret(*) params)front_target(#name, &real_##name, &cache); \
		return fn args; \
	}
#define FRONT_WRAP_VOID(name, params, args) \
	static void *real_##name; \
	static void front_##name params \
	{ \
		static void *cache; \
		void(*fn) params = (void(*) params)front_target(#name, &real_##name, &cache); \
		fn args; \
	}
FRONT_CALLS(FRONT_WRAP)
FRONT_VOID_CALLS(FRONT_WRAP_VOID)

static const struct {
	const char *name;
	void *wrapper;
	void **real;
} front_calls[] = {
#define FRONT_ROW(name, ...) { #name, (void *)front_##name, &real_##name },
	FRONT_CALLS(FRONT_ROW) FRONT_VOID_CALLS(FRONT_ROW)
#undef FRONT_ROW
};

void audit_front_hook(const char *hook)
{
	front.hook = hook;
}

void *audit_front_bind(const char *name, void *real)
{
	for (size_t i = 0; i < sizeof front_calls / sizeof front_calls[0]; i++)
		if (strcmp(front_calls[i].name, name) == 0) {
			__atomic_store_n(front_calls[i].real, real, __ATOMIC_RELEASE);
			return front_calls[i].wrapper;
		}
	return NULL;
}
