/* Triton loads kernels as cubins (cuModuleLoadData), so the image the hook
 * sees holds no PTX. Triton keeps the PTX it compiled from beside the cubin
 * in its cache: <root>/<hash>/<kernel>.cubin and <kernel>.ptx. The roots,
 * in order: $TRITON_CACHE_DIR; $TRITON_HOME/.triton/cache (else
 * $HOME/.triton/cache); torch.compile's (Inductor's) Triton caches
 * <dir>/triton/<device index>, with <dir> $TORCHINDUCTOR_CACHE_DIR, else
 * /tmp/torchinductor_<user>; and <dir> itself. This finds that PTX by
 * matching the cubin's bytes. */
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
/* Under each of the NULL-terminated roots in turn; *where (may be NULL) gets
 * the root that held it. The cause names every root and what it held. */
int triton_cache_find_ptx_roots(const char *const *roots, const void *cubin, size_t size, char **ptx, size_t *len,
				const char **where, char **cause);
/* The roots triton_cache_find_ptx searches (malloc'd, NULL-terminated). */
int triton_cache_roots(char ***roots, int *n);
void triton_cache_roots_free(char **roots, int n);

#endif
