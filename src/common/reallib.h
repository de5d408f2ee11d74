/* Finding the real library behind one of ntop's stand-ins (libcuda.so.1,
 * libnvrtc.so.N, libnvJitLink.so.N) without ever finding a stand-in: each
 * candidate is opened by full path (no name lookup can hand us back
 * ourselves), a file that is the caller's own (same device and inode) is
 * skipped, and a file whose dynamic symbols name ntop_hook_marker (a copy of
 * a stand-in) is rejected before it is opened, so its constructor never
 * runs. NEUTRINO's driver found itself this way and recursed until the app
 * crashed. Each is opened in the form ntop's loader audit module passes
 * through (reallib_pass_through). */
#ifndef NTOP_REALLIB_H
#define NTOP_REALLIB_H
#include <stddef.h>

struct reallib_spec {
	const char *what;           /* "CUDA driver", for messages */
	const char *file;           /* "libnvrtc.so.13" */
	const char *env;            /* variable holding an explicit path (not second-guessed) */
	const char *const *env_dirs; /* variables naming toolkit roots, searched as $VAR/lib64 */
	const char *const *dirs;    /* searched after LD_LIBRARY_PATH and env_dirs */
	const char *must_export;    /* a symbol every real one has ("cuInit") */
};

/* Every stand-in exports this (a function: sanitizer builds add nothing for
 * it); a library that does is one of ours. */
void ntop_hook_marker(void);

/* Does the file's dynamic string table name ntop_hook_marker? Reads the file,
 * does not load it. */
int reallib_is_ours(const char *path);
/* Opens the first candidate that is a real library: *handle (RTLD_LOCAL) and
 * its path. `self` is an address inside the caller's own library. On failure
 * -1 and a cause listing every candidate and why it was refused. */
int reallib_open(const struct reallib_spec *s, const void *self, void **handle, char *path, size_t path_len,
		 char **cause);
/* The same search without loading anything (for the launcher, which decides
 * whether a stand-in has a real library to forward to): 0 and the path of the
 * first candidate that exists and is not ours, else -1. */
int reallib_find(const struct reallib_spec *s, char *path, size_t path_len);

/* path as the stand-ins dlopen it: "DIR/./FILE" ("./FILE" for a bare
 * name), the form ntop's loader audit module (src/hook/audit/rtld_audit.c) never
 * redirects, so a stand-in's open of its real library cannot come back to
 * the stand-in. -1 when it does not fit. */
int reallib_pass_through(const char *path, char *out, size_t out_len);

/* The JIT libraries ntop stands in for (src/jit), for the toolkit's major
 * version: libnvrtc.so.N ($NTOP_REAL_LIBNVRTC) and libnvJitLink.so.N
 * ($NTOP_REAL_LIBNVJITLINK), searched on LD_LIBRARY_PATH, in
 * $CUDA_HOME/lib64 and $CUDA_PATH/lib64, /usr/local/cuda/lib64 and the
 * system library directories. */
extern const struct reallib_spec reallib_nvrtc, reallib_nvjitlink;
/* libnvJitLink.so.N-1, in the same places (no variable): the hook's builder
 * compiles with either (a CUDA 12 container under a CUDA 13 build). */
extern const struct reallib_spec reallib_nvjitlink_prev;
/* HIP 5's runtime, libamdhip64.so.5 ($NTOP_REAL_LIBAMDHIP64), for the HIP
 * stand-in (reallib_hip.c). */
extern const struct reallib_spec reallib_amdhip64;
/* ROCm 6 and 7's runtimes (an fnmatch pattern on the file name, or on the
 * file a "libamdhip64.so" link resolves to): no stand-in; the loader audit
 * module binds their hooked calls to libntop_hip.so (src/hook/audit/rtld_bind.c). */
#define REALLIB_AMDHIP64_BOUND "libamdhip64.so.[67]*"

#endif
