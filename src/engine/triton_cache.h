/* Triton loads kernels as cubins (cuModuleLoadData), so the image the hook
 * sees holds no PTX. Triton keeps the PTX it compiled from beside the cubin
 * in its cache: <root>/<hash>/<kernel>.cubin and <kernel>.ptx, with root
 * $TRITON_CACHE_DIR, else $TRITON_HOME/.triton/cache, else
 * $HOME/.triton/cache. This finds that PTX by matching the cubin's bytes. */
#ifndef NTOP_TRITON_CACHE_H
#define NTOP_TRITON_CACHE_H
#include <stddef.h>

/* The PTX Triton stored next to a cache copy of `cubin` (`size` may be 0:
 * derived from the ELF headers). *ptx is malloc'd and NUL-terminated, *len
 * excludes the NUL. -1 with a cause when no cache entry matches. */
int triton_cache_find_ptx(const void *cubin, size_t size, char **ptx, size_t *len, char **cause);
/* The same search under one explicit cache root. */
int triton_cache_find_ptx_in(const char *root, const void *cubin, size_t size, char **ptx, size_t *len,
			     char **cause);

#endif
