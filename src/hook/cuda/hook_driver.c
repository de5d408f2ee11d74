/* The real libcuda.so.1 (hook_driver.h): $NTOP_REAL_LIBCUDA, else every
 * LD_LIBRARY_PATH directory, else the distributions' driver directories, each
 * opened by full path (common/reallib.c: never ourselves). We never intercept
 * dlopen: the application's own dlopen("libcuda.so.1") finds us through
 * LD_LIBRARY_PATH, one by path through ntop's loader audit module
 * (rtld_audit.c), and ours goes by a path form that module passes through. */
#include "common/reallib.h"
#include "hook/cuda/hook_driver.h"
#include "hook/hook_env.h"
#include "hook/hook_log.h"
#include "hook/hook_state.h"

static const char *const driver_dirs[] = {
	"/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/local/nvidia/lib64", "/usr/lib/wsl/lib",
	"/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib", NULL,
};

int hook_driver_open(char **cause)
{
	static const struct reallib_spec spec = {
		.what = "CUDA driver", .file = "libcuda.so.1", .env = NTOP_ENV_REAL_LIBCUDA, .dirs = driver_dirs, .must_export = "cuInit",
	};
	if (reallib_open(&spec, (const void *)ntop_hook_marker, &hook.driver, hook.real_path, sizeof hook.real_path,
			 cause) < 0)
		return -1;
	hook_log("real driver %s", hook.real_path);
	return 0;
}
