/* Reads the launcher's environment (hook_env.h) into hook.cfg, once. */
#ifndef NTOP_HOOK_CONFIG_H
#define NTOP_HOOK_CONFIG_H

void hook_config_load(void);
/* Is the event fd still the launcher's pipe (NTOP_EVENT_ID), or our file? */
int hook_config_event_fd_ok(void);
/* The fd stopped being the launcher's pipe: events go to
 * $NTOP_TRACE_DIR/events-<pid>.log from now on (or nowhere). */
void hook_config_event_fd_lost(void);
/* In a fork child: a per-pid events file is reopened under the child's pid. */
void hook_config_fork_child(void);
/* Does a kernel name match NTOP_KERNELS (mangled or demangled)? */
int hook_config_kernel_matches(const char *name);

#endif
