/* The HIP runtime ntop has a stand-in for (src/hook/hook_hip*.c), as both
 * the stand-in and the launcher look for the real one (reallib.h): HIP 5's
 * libamdhip64.so.5 ($NTOP_REAL_LIBAMDHIP64, LD_LIBRARY_PATH, ROCm's and
 * the distributions' library directories). */
#include "common/reallib.h"

static const char *const hip_dirs[] = {
	"/opt/rocm/lib", "/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/lib/x86_64-linux-gnu", "/usr/lib", NULL,
};

const struct reallib_spec reallib_amdhip64 = {
	.what = "HIP runtime", .file = "libamdhip64.so.5", .env = "NTOP_REAL_LIBAMDHIP64", .dirs = hip_dirs,
	.must_export = "hipModuleLaunchKernel",
};
