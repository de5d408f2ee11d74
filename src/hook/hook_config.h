/* Reads the launcher's environment (hook_env.h) into hook.cfg, once. */
#ifndef NTOP_HOOK_CONFIG_H
#define NTOP_HOOK_CONFIG_H

void hook_config_load(void);
/* Does a kernel name match NTOP_KERNELS (mangled or demangled)? */
int hook_config_kernel_matches(const char *name);

#endif
