/* Load-time set-up of a stand-in library, whichever backend it links
 * (hook_backend.h): read the environment, open the real runtime, fill the
 * dispatch, say hello. Also the process-lifetime plumbing: atexit flush,
 * fork child. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hook/hook_backend.h"
#include "hook/hook_config.h"
#include "hook/hook_control.h"
#include "hook/hook_dispatch.h"
#include "hook/hook_dir.h"
#include "hook/hook_events.h"
#include "hook/hook_log.h"
#include "hook/hook_sink.h"
#include "hook/hook_state.h"
#include "trace/events.h"

#define NTOP_HOOK_VERSION "0.1.0"

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
	const char *real = hook_backend_in_use->driver_path();
	event_add(&sb, "driver", real ? real : "none");
	if (sync)
		hook_event_emit_sync(&sb);
	else
		hook_event_emit(&sb);
	if (hook.no_driver)
		hook_event_warn("%s", hook.no_driver);
	if (hook.cfg.unread)
		hook_event_warn("%s", hook.cfg.unread);
}

/* The fork child's hello, before its first line (hook_events.c). */
static void dispatch_hello_due(void)
{
	dispatch_hello(1);
}

static void dispatch_at_exit(void)
{
	hook_backend_in_use->shutdown();
	hook_events_shutdown(2000);
}

void hook_dispatch_register_exit(void)
{
	/* Registered at the first launch rather than at load, so it runs before
	 * the CUDA (HIP) runtime's own exit handlers tear the contexts down. */
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
	hook_backend_in_use->fork_child();
	hook_log("forked");
	__atomic_store_n(&hook.hello_due, dispatch_hello_due, __ATOMIC_RELEASE);
}

__attribute__((constructor)) static void dispatch_init(void)
{
	hook.pid = (int)getpid();
	hook_state_init_locks();
	hook_log_open();
	hook_config_load();
	char *cause = NULL;
	const struct hook_backend *b = hook_backend_in_use;
	if (b->init(&cause) < 0) {
		if (!cause && asprintf(&cause, "no real %s", b->what) < 0)
			cause = NULL;
		hook.no_driver = cause;
		hook_log("%s", hook.no_driver ? hook.no_driver : "no driver");
	}
	b->fill();
	hook.initialised = 1;
	pthread_atfork(NULL, NULL, dispatch_fork_child);
	dispatch_hello(0);
	hook_control_init();
}

/* Fallback when no launch registered the atexit handler (a process that
 * loaded the driver and launched nothing of ours, such as a job
 * launcher, or the library unloaded): the exit line and the flush, events
 * only, the driver may already be gone. */
__attribute__((destructor)) static void dispatch_fini(void)
{
	if (hook.atexit_done)
		return;
	if (hook_events_on()) {
		struct strbuf sb;
		hook_event_begin(&sb, "exit");
		event_add_int(&sb, "launches", (long long)__atomic_load_n(&hook.launches, __ATOMIC_RELAXED));
		hook_event_emit(&sb);
	}
	hook_events_shutdown(1000);
}
