/* The JIT compilers' libraries ntop has stand-ins for (src/jit), as both
 * the stand-ins and the launcher look for the real ones (reallib.h). */
#include "common/reallib.h"

#define REALLIB_STR2(x) #x
#define REALLIB_STR(x) REALLIB_STR2(x)

static const char *const jit_dirs[] = {
	"/usr/local/cuda/lib64", "/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib/aarch64-linux-gnu", "/usr/lib",
	NULL,
};
static const char *const toolkit_vars[] = { "CUDA_HOME", "CUDA_PATH", NULL };

const struct reallib_spec reallib_nvrtc = {
	.what = "NVRTC", .file = "libnvrtc.so." REALLIB_STR(NTOP_CUDA_MAJOR), .env = "NTOP_REAL_LIBNVRTC",
	.env_dirs = toolkit_vars, .dirs = jit_dirs, .must_export = "nvrtcCompileProgram",
};

const struct reallib_spec reallib_nvjitlink = {
	.what = "nvJitLink", .file = "libnvJitLink.so." REALLIB_STR(NTOP_CUDA_MAJOR), .env = "NTOP_REAL_LIBNVJITLINK",
	.env_dirs = toolkit_vars, .dirs = jit_dirs, .must_export = "nvJitLinkVersion",
};

const struct reallib_spec reallib_nvjitlink_prev = {
	.what = "nvJitLink", .file = "libnvJitLink.so." REALLIB_STR(NTOP_CUDA_MAJOR_PREV), .env = NULL,
	.env_dirs = toolkit_vars, .dirs = jit_dirs, .must_export = "nvJitLinkVersion",
};
