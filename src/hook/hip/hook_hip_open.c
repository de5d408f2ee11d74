/* The HIP 5 stand-in's real runtime: libamdhip64.so.5, searched as
 * reallib_amdhip64 says (the launcher's $NTOP_REAL_LIBAMDHIP64 first). */
#include "common/reallib.h"
#include "hook/hip/hook_hip.h"

int hook_hip_open_real(char **cause)
{
	return reallib_open(&reallib_amdhip64, (const void *)ntop_hook_marker, &hook.driver, hook.real_path,
			    sizeof hook.real_path, cause);
}
