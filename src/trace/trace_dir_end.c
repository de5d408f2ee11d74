/* How a recording ended (doc/trace-format.md, "Complete and incomplete
 * traces"): ntop's `end` line, processes that never said `exit`, and what
 * a reader still recovers when the recording was cut short: the lines of
 * events-<pid>.log files ntop never merged (it was killed while processes
 * wrote there), and result files that no `result` line names (the line
 * was lost, the file was written). Recovered lines go through
 * trace_dir_feed like any other, so the model stays one. */
#include "trace/trace_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/strbuf.h"
#include "trace/events.h"
#include "trace/result.h"
#include "trace/trace_file.h"

int trace_dir_on_end(struct trace_dir *td, const struct event *ev)
{
	td->has_end = 1;
	td->end_status = (int)event_get_int(ev, "status", -1);
	td->end_signal = (int)event_get_int(ev, "signal", 0);
	if (td->feeding < td->n_traces) {
		struct td_trace *t = &td->traces[td->feeding];
		t->has_end = 1;
		t->end_status = td->end_status;
		t->end_signal = td->end_signal;
	}
	return 0;
}

int trace_pidlog_name(const char *n)
{
	size_t len = strlen(n);
	if (strncmp(n, "events-", 7) != 0 || len < 12 || len >= 64 || strcmp(n + len - 4, ".log") != 0)
		return 0;
	size_t d = strspn(n + 7, "0123456789");
	if (d == 0)
		return 0;
	if (7 + d == len - 4)
		return 1;
	return n[7 + d] == '.' && strspn(n + 8 + d, "0123456789") == len - 4 - (8 + d) && len - 4 > 8 + d;
}

/* Names in dfd that keep(name) accepts, sorted (malloc'd, *n of them). */
static char **dir_names(int dfd, int (*keep)(const char *), int *n)
{
	*n = 0;
	int d = dup(dfd);
	DIR *dir = d >= 0 ? fdopendir(d) : NULL;
	if (!dir) {
		if (d >= 0)
			close(d);
		return NULL;
	}
	char **v = NULL;
	for (struct dirent *e; (e = readdir(dir)) != NULL;) {
		if (!keep(e->d_name))
			continue;
		char **nv = realloc(v, (size_t)(*n + 1) * sizeof *v);
		if (!nv || !(nv[*n] = strdup(e->d_name))) {
			v = nv ? nv : v;
			break;
		}
		v = nv;
		(*n)++;
	}
	closedir(dir);
	return v;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void free_names(char **v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void feed(void *arg, const char *line, size_t len)
{
	trace_dir_feed(arg, line, len);
}

/* events-<pid>.log files ntop never merged: their lines, after events.log. */
static void recover_logs(struct trace_dir *td, int dfd)
{
	int n;
	char **names = dir_names(dfd, trace_pidlog_name, &n);
	if (names)
		qsort(names, (size_t)n, sizeof *names, cmp_names);
	for (int i = 0; i < n; i++) {
		int fd = trace_file_open(dfd, names[i], NULL);
		struct trace_lines tl;
		if (fd < 0)
			continue;
		if (trace_lines_read(fd, feed, td, &tl) == 0 && tl.lines)
			td->leftover_logs++;
		td->malformed_lines += tl.too_long;
		close(fd);
	}
	free_names(names, n);
}

/* "<pid>-<seq>.ntr" */
static int result_name(const char *n)
{
	size_t a = strspn(n, "0123456789");
	if (a == 0 || n[a] != '-')
		return 0;
	size_t b = strspn(n + a + 1, "0123456789");
	return b > 0 && strcmp(n + a + 1 + b, ".ntr") == 0;
}

struct pid_seq {
	uint32_t pid;
	uint64_t seq;
};

static int cmp_pid_seq(const void *a, const void *b)
{
	const struct pid_seq *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The (pid, seq) of every result a line named, sorted for bsearch. */
static struct pid_seq *listed_results(const struct trace_dir *td, int *n)
{
	struct pid_seq *v = malloc((size_t)(td->n_results ? td->n_results : 1) * sizeof *v);
	*n = 0;
	for (int i = 0; v && i < td->n_results; i++)
		if (td->results[i].file)
			v[(*n)++] = (struct pid_seq){ td->results[i].pid, td->results[i].seq };
	if (v)
		qsort(v, (size_t)*n, sizeof *v, cmp_pid_seq);
	return v;
}

/* The kernel and result lines a result file stands for. */
static void feed_result(struct trace_dir *td, const char *name, const struct result *r)
{
	struct strbuf sb;
	uint64_t records = 0, dropped = 0;
	for (int m = 0; m < r->n_maps; m++) {
		records += r->maps[m].records_written;
		dropped += r->maps[m].records_dropped;
	}
	if (!trace_dir_kernel(td, r->pid + ((uint32_t)td->feeding << TD_PID_SHIFT), r->kernel_id)) {
		strbuf_init(&sb);
		event_begin(&sb, "kernel", r->wall_ns, (int)r->pid);
		event_add_int(&sb, "kid", r->kernel_id);
		event_add(&sb, "name", r->kernel ? r->kernel : "");
		event_add_int(&sb, "ptx", 1);
		event_end(&sb);
		if (!sb.failed)
			trace_dir_feed(td, sb.data, sb.len);
		strbuf_done(&sb);
	}
	char file[300];
	snprintf(file, sizeof file, "results/%s", name);
	strbuf_init(&sb);
	event_begin(&sb, "result", r->wall_ns, (int)r->pid);
	event_add_int(&sb, "kid", r->kernel_id);
	event_add_int(&sb, "seq", (long long)r->seq);
	event_add(&sb, "file", file);
	event_add_int(&sb, "maps", r->n_maps);
	event_add_int(&sb, "records", (long long)records);
	event_add_int(&sb, "dropped", (long long)dropped);
	event_end(&sb);
	if (!sb.failed)
		trace_dir_feed(td, sb.data, sb.len);
	strbuf_done(&sb);
}

/* The directory of the trace being read. */
static const char *td_feeding_path(const struct trace_dir *td)
{
	return td->feeding < td->n_traces ? td->traces[td->feeding].path : td->path;
}

/* Result files no `result` line named: read by their header. */
static void recover_results(struct trace_dir *td, int dfd)
{
	int rfd = openat(dfd, "results", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), n;
	if (rfd < 0)
		return;
	char **names = dir_names(rfd, result_name, &n);
	int n_listed = 0;
	struct pid_seq *known = listed_results(td, &n_listed);
	if (names)
		qsort(names, (size_t)n, sizeof *names, cmp_names);
	for (int i = 0; known && i < n; i++) {
		struct pid_seq key = { 0, strtoull(strchr(names[i], '-') + 1, NULL, 10) };
		unsigned long pid = strtoul(names[i], NULL, 10);
		key.pid = (uint32_t)pid + ((uint32_t)td->feeding << TD_PID_SHIFT);
		if (pid >= (1ul << TD_PID_SHIFT) || bsearch(&key, known, (size_t)n_listed, sizeof key, cmp_pid_seq))
			continue;
		char path[4200];
		struct result *r = NULL;
		snprintf(path, sizeof path, "%s/results/%s", td_feeding_path(td), names[i]);
		if (result_read_head(path, &r, NULL) == 0 && r->pid == key.pid && r->seq == key.seq) {
			feed_result(td, names[i], r);
			td->unlisted_results++;
		}
		result_free(r);
	}
	free(known);
	free_names(names, n);
	close(rfd);
}

void trace_dir_recover(struct trace_dir *td)
{
	if (!td_feeding_path(td))
		return;
	int dfd = open(td_feeding_path(td), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return;
	recover_logs(td, dfd);
	recover_results(td, dfd);
	close(dfd);
}

int td_process_missing_results(const struct trace_dir *td, uint32_t pid)
{
	int n = 0;
	for (int i = 0; i < td->n_results; i++)
		n += td->results[i].pid == pid && !td->results[i].file;
	return n;
}

int trace_dir_left_early(const struct trace_dir *td, struct strbuf *notes)
{
	int n = 0;
	for (int i = 0; i < td->n_procs; i++) {
		const struct td_process *p = &td->procs[i];
		if (p->exited || !p->quiet || td_process_missing_results(td, p->pid))
			continue;
		n++;
		if (notes)
			strbuf_printf(notes, "pid %u left without its exit line (os._exit, or killed) while idle: "
					     "every line it sent and every result it queued is here\n", p->pid);
	}
	return n;
}

int trace_dir_incomplete(const struct trace_dir *td, struct strbuf *why)
{
	int n = 0;
	if (td->end_signal > 0) {
		n++;
		if (why)
			strbuf_printf(why, "the program was killed by signal %d (%s): what it had not written yet is "
					   "missing\n", td->end_signal, strsignal(td->end_signal));
	}
	for (int i = 0; i < td->n_procs; i++) {
		const struct td_process *p = &td->procs[i];
		int missing = td_process_missing_results(td, p->pid);
		if (p->exited || (p->quiet && !missing))
			continue;
		n++;
		if (why && missing)
			strbuf_printf(why, "pid %u never reached its exit (killed, crashed, or the recording stopped "
					   "first): %d probed launch%s without a result, and its last events may be "
					   "missing\n", p->pid, missing, missing == 1 ? "" : "es");
		else if (why)
			strbuf_printf(why, "pid %u never reached its exit (killed, crashed, or the recording stopped "
					   "first) while busy: its last events may be missing\n", p->pid);
	}
	if (td->leftover_logs) {
		n++;
		if (why)
			strbuf_printf(why, "%d per-process event file%s ntop never merged (it was killed): read from "
					   "the directory\n", td->leftover_logs, td->leftover_logs == 1 ? "" : "s");
	}
	if (td->unlisted_results) {
		n++;
		if (why)
			strbuf_printf(why, "%d result file%s no event line names (the line was lost): read from "
					   "results/\n", td->unlisted_results, td->unlisted_results == 1 ? "" : "s");
	}
	return n;
}
