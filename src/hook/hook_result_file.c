/* A probed launch's result file and its `result` line (hook_result_file.h). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "hook/hook_dir.h"
#include "hook/hook_events.h"
#include "hook/hook_result_file.h"
#include "hook/hook_state.h"
#include "trace/events.h"

static void result_emit(const struct result *r, const char *name, uint64_t bytes, uint32_t sample_shift,
			uint64_t disk_bytes)
{
	uint64_t written = 0, dropped = 0, unsampled = 0;
	int unknown = 0; /* the skipped blocks stored no counts */
	for (int i = 0; i < r->n_maps; i++) {
		written += r->maps[i].records_written;
		dropped += r->maps[i].records_dropped;
		unsampled += r->maps[i].records_unsampled;
		unknown |= r->maps[i].counts_kept_only || r->maps[i].unsampled_unknown;
	}
	struct strbuf sb;
	hook_event_begin(&sb, "result");
	event_add_int(&sb, "kid", r->kernel_id);
	event_add_int(&sb, "seq", (long long)r->seq);
	event_addf(&sb, "file", "results/%s", name);
	event_add_int(&sb, "maps", r->n_maps);
	event_add_int(&sb, "records", (long long)written);
	event_add_int(&sb, "dropped", (long long)dropped);
	if (sample_shift) {
		event_add_int(&sb, "sampled", 1ll << sample_shift);
		if (!unknown)
			event_add_int(&sb, "unsampled", (long long)unsampled);
	}
	event_add_int(&sb, "bytes", (long long)bytes);
	event_add_int(&sb, "disk", (long long)disk_bytes);
	event_add_int(&sb, "ns", (long long)r->duration_ns);
	hook_event_emit(&sb);
}

int hook_result_publish(const struct result *r, uint64_t bytes, uint32_t sample_shift)
{
	char name[64], *cause = NULL;
	snprintf(name, sizeof name, "%d-%llu.ntr", hook.pid, (unsigned long long)r->seq);
	if (!hook.cfg.results_dir) {
		hook_event_warn("probed launch %llu: NTOP_TRACE_DIR is not set, result not written",
				(unsigned long long)r->seq);
		return 0;
	}
	int dfd = hook_dir_sub("results", &cause);
	if (dfd < 0 || result_write_at(dfd, name, r, &cause) < 0) {
		hook_event_warn("result %s: %s", name, cause ? cause : "write failed");
		free(cause);
		if (dfd >= 0)
			close(dfd);
		return 0;
	}
	struct stat st;
	result_emit(r, name, bytes, sample_shift,
		    fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 ? (uint64_t)st.st_size : 0);
	close(dfd);
	return 1;
}
