/* Load-time setup of the stand-in driver: read the environment, open the
 * real driver, point every export's dispatch slot at our handler (hooked
 * rows), the real function (everything else) or a stub (missing), then say
 * hello. Also the process-lifetime plumbing: atexit flush, fork child. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cuda.h>
#include "common/cause.h"
#include "hook/hook_backend.h"
#include "hook/hook_config.h"
#include "hook/hook_control.h"
#include "hook/hook_dispatch.h"
#include "hook/hook_dir.h"
#include "hook/hook_events.h"
#include "hook/hook_exports.h"
#include "hook/hook_log.h"
#include "hook/hook_sink.h"
#include "hook/hook_state.h"
#include "trace/events.h"

#define NTOP_HOOK_VERSION "0.1.0"

/* Stubs take no arguments: they are reached through signature-free
 * trampolines and only set the return register. */
static CUresult dispatch_missing(void)
{
	return CUDA_ERROR_NOT_FOUND;
}

static CUresult dispatch_no_driver(void)
{
	return CUDA_ERROR_NOT_INITIALIZED;
}

void *hook_dispatch_stub(void)
{
	return hook.driver ? (void *)dispatch_missing : (void *)dispatch_no_driver;
}

void hook_dispatch_fill(void)
{
	for (int r = 0; r < HOOK_N_ROWS; r++) {
		void *fn = hook.driver ? dlsym(hook.driver, hook_table[r].name) : NULL;
		hook.real[r] = fn ? fn : hook_dispatch_stub();
	}
	for (int i = 0; i < hook_export_count; i++) {
		int r = hook_table_find(hook_export_names[i]);
		if (r >= 0)
			ntop_dispatch[i] = hook_table[r].handler;
		else if (hook.driver && (ntop_dispatch[i] = dlsym(hook.driver, hook_export_names[i])) != NULL)
			continue;
		else
			ntop_dispatch[i] = hook_dispatch_stub();
	}
}

static void dispatch_hello(int sync)
{
	if (!hook_events_on())
		return;
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	exe[n > 0 ? n : 0] = 0;
	struct strbuf sb;
	hook_event_begin(&sb, "hello");
	event_add_int(&sb, "ppid", getppid());
	event_add(&sb, "exe", exe);
	event_add(&sb, "hook", NTOP_HOOK_VERSION);
	event_add(&sb, "driver", hook.driver ? hook.real_path : "none");
	if (sync)
		hook_event_emit_sync(&sb);
	else
		hook_event_emit(&sb);
	if (hook.no_driver)
		hook_event_warn("%s", hook.no_driver);
}

static void dispatch_at_exit(void)
{
	hook_cuda_backend.shutdown();
	hook_events_shutdown(2000);
}

void hook_dispatch_register_exit(void)
{
	/* Registered at the first launch rather than at load, so it runs before
	 * the CUDA runtime's own exit handlers tear the contexts down. */
	if (__atomic_exchange_n(&hook.atexit_done, 1, __ATOMIC_ACQ_REL) == 0)
		atexit(dispatch_at_exit);
}

static void dispatch_fork_child(void)
{
	hook.pid = (int)getpid();
	hook_state_init_locks();
	hook_events_fork_child();
	hook_dir_fork_child();
	hook_sink_fork_child();
	hook_cuda_backend.fork_child();
	hook_log("forked");
	dispatch_hello(1);
}

__attribute__((constructor)) static void dispatch_init(void)
{
	hook.pid = (int)getpid();
	hook_state_init_locks();
	hook_log_open();
	hook_config_load();
	char *cause = NULL;
	if (hook_cuda_backend.init(&cause) < 0) {
		hook.no_driver = cause ? cause : strdup("no real CUDA driver");
		hook_log("%s", hook.no_driver ? hook.no_driver : "no driver");
	}
	hook_dispatch_fill();
	hook.initialised = 1;
	pthread_atfork(NULL, NULL, dispatch_fork_child);
	dispatch_hello(0);
	hook_control_init();
}

/* Fallback flush when no launch registered the atexit handler (or the
 * library is unloaded): events only, the driver may already be gone. */
__attribute__((destructor)) static void dispatch_fini(void)
{
	if (!hook.atexit_done)
		hook_events_shutdown(1000);
}
