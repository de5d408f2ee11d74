/* The hook's globals (hook_state.h). */
#include <string.h>
#include "hook/hook_state.h"

struct hook_state hook = { .cfg = { .event_fd = -1 } };

void hook_state_init_locks(void)
{
	pthread_mutex_init(&hook.q.lock, NULL);
	pthread_cond_init(&hook.q.wake, NULL);
	pthread_cond_init(&hook.q.idle, NULL);
	pthread_mutex_init(&hook.reg.lock, NULL);
	pthread_mutex_init(&hook.timing.lock, NULL);
	pthread_cond_init(&hook.timing.wake, NULL);
	pthread_mutex_init(&hook.timing.poll_lock, NULL);
	pthread_mutex_init(&hook.res.lock, NULL);
	pthread_cond_init(&hook.res.wake, NULL);
	pthread_cond_init(&hook.res.idle, NULL);
	pthread_cond_init(&hook.res.wake_w, NULL);
	pthread_cond_init(&hook.res.room, NULL);
	pthread_mutex_init(&hook.dev_lock, NULL);
	pthread_mutex_init(&hook.probe_lock, NULL);
	pthread_mutex_init(&hook.ctl.lock, NULL);
	pthread_cond_init(&hook.ctl.wake, NULL);
	pthread_mutex_init(&hook.ctl.poll_lock, NULL);
	pthread_mutex_init(&hook.ptxsrc.lock, NULL);
	pthread_mutex_init(&hook.graphs.lock, NULL);
	pthread_mutex_init(&hook.builder.lock, NULL);
	pthread_mutex_init(&hook.builder.njl_lock, NULL);
	pthread_cond_init(&hook.builder.wake, NULL);
	pthread_cond_init(&hook.builder.done, NULL);
	pthread_mutex_init(&hook.stager.lock, NULL);
	pthread_cond_init(&hook.stager.wake, NULL);
	pthread_cond_init(&hook.stager.done, NULL);
}
