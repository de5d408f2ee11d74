/* PTX for images that hold none, from where else it was produced in the
 * process, tied to the image by content:
 *  - NVRTC and nvJitLink: ntop's stand-ins for libnvrtc and libnvJitLink
 *    (src/jit) hand every cubin they see produced, with the PTX behind it,
 *    to ntop_hook_jit_output(); a cubin the driver later loads with the same
 *    bytes gets that PTX (source=nvrtc, source=nvjitlink);
 *  - Triton's caches, torch.compile's included (engine/image/triton_cache.h):
 *    source=triton;
 *  - -rdc builds: the linked fatbin the runtime loads holds SASS only, the
 *    PTX of each translation unit sits in the `__nv_relfatbin` section of
 *    the executable or library the fatbin lies in (source=rdc).
 * What was looked at goes into the kernel's reason when nothing matched.
 * cuLink* (Numba's older path) is the registry's: it keys on the pointer. */
#ifndef NTOP_HOOK_PTXSRC_H
#define NTOP_HOOK_PTXSRC_H
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include "common/strbuf.h"

struct hook_module;

enum hook_jit { HOOK_JIT_NVRTC, HOOK_JIT_NVJITLINK, HOOK_JIT_N };

struct hook_jit_output;
struct hook_rdc_elf;

struct hook_ptxsrc {
	pthread_mutex_t lock;
	struct hook_jit_output *out; /* cubins the stand-ins saw produced */
	uint32_t n_out, cap_out;
	int loaded[HOOK_JIT_N];      /* the stand-in said hello */
	uint32_t outputs[HOOK_JIT_N];
	struct hook_rdc_elf *elfs;   /* host ELFs asked for __nv_relfatbin */
};

/* The stand-ins' entry (exported, found with dlsym on the hook): `jit` is
 * "nvrtc" or "nvjitlink"; `ptx` holds one or more PTX texts, each
 * NUL-terminated, ptx_len bytes in all. cubin NULL: the stand-in is loaded. */
void ntop_hook_jit_output(const char *jit, const void *cubin, size_t size, const char *ptx, size_t ptx_len);

/* A cubin without PTX: the JIT outputs, then Triton's caches. Sets
 * m->link_ptx and m->source when found; else appends what was looked at. */
void hook_ptxsrc_cubin(struct hook_module *m, struct strbuf *why);
/* A fatbin without PTX at `addr` (the application's pointer): the
 * __nv_relfatbin of the ELF it lies in. Sets m->ptx_image when found. */
void hook_ptxsrc_rdc(struct hook_module *m, const void *addr, struct strbuf *why);

#endif
