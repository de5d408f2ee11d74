/* A kernel's PTX saved into the trace on request: a `source name=...` line
 * of the control file (doc/control.md) asks for it, and the UI's region
 * picker lists the kernel's own source lines from it. Runs on the control
 * thread, never on a launch, once per (kernel, process): only the kernel and
 * what it calls (ptx_parse_kernel) go to kernels/<pid>-<kid>/source.ptx,
 * then `source kid=N path=...` (or `source kid=N error=...`). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"
#include "engine/ptx/ptx.h"
#include "hook/hook_backend.h"
#include "hook/hook_dir.h"
#include "hook/hook_events.h"
#include "hook/hook_source.h"
#include "hook/hook_state.h"
#include "trace/events.h"

/* The kernel's PTX with only what it reaches. */
static char *source_text(const struct hook_kernel *k, size_t *len, char **cause)
{
	char *ptx = NULL;
	size_t n = 0;
	if (!hook_backend_in_use->kernel_source)
		return cause_set(cause, "the %s backend keeps no PTX", hook_backend_in_use->name), NULL;
	if (hook_backend_in_use->kernel_source(k, &ptx, &n, cause) < 0)
		return NULL;
	struct ptx_module *m = NULL;
	char *out = NULL;
	if (ptx_parse_kernel(ptx, n, k->name, &m, cause) == 0 && !(out = ptx_emit(m, len)))
		cause_set(cause, "out of memory");
	ptx_free(m);
	free(ptx);
	return out;
}

static void source_save(const struct hook_kernel *k)
{
	char *cause = NULL, rel[96];
	size_t len = 0;
	char *text = source_text(k, &len, &cause);
	struct strbuf sb;
	hook_event_begin(&sb, "source");
	event_add_int(&sb, "kid", k->kid);
	if (text && hook_dir_kernel_file(k->kid, "source.ptx", text, len, &cause) == 0) {
		snprintf(rel, sizeof rel, "kernels/%d-%u/source.ptx", hook.pid, k->kid);
		event_add(&sb, "path", rel);
		event_add_int(&sb, "bytes", (long long)len);
	} else {
		event_add(&sb, "error", cause ? cause : "cannot save it");
	}
	hook_event_emit(&sb);
	free(text);
	free(cause);
}

/* Kernels named `name` this process announced and has not saved yet. */
static int source_pending(const char *name, struct hook_kernel ***out)
{
	struct hook_registry *r = &hook.reg;
	int n = 0;
	pthread_mutex_lock(&r->lock);
	struct hook_kernel **v = calloc(r->n_kernels + 1, sizeof *v);
	for (uint32_t i = 0; v && i < r->n_kernels; i++) {
		struct hook_kernel *k = r->all[i];
		if (k->name && !strcmp(k->name, name) && k->announced_pid == hook.pid && k->source_pid != hook.pid) {
			k->source_pid = hook.pid;
			v[n++] = k;
		}
	}
	pthread_mutex_unlock(&r->lock);
	*out = v;
	return n;
}

void hook_source_requests(char *const *names, int n)
{
	for (int i = 0; i < n; i++) {
		struct hook_kernel **v = NULL;
		int m = source_pending(names[i], &v);
		for (int j = 0; j < m; j++)
			source_save(v[j]); /* modules are never freed (unloaded ones stay readable) */
		free(v);
	}
}
