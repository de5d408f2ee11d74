/* trace_dir on a synthetic events.log: processes, kernels, launches, probed
 * launches and their result paths, warnings, unknown and malformed lines, and
 * a last line cut short by a killed writer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"
#include "viz/dmat_alloc.h"
#include "trace/events.h"
#include "trace/trace_dir.h"

static char dir[] = "/tmp/ntop-test-td-XXXXXX";

static const char *log_text =
	"record t=100 pid=10 argv=python%20train.py version=0.1.0\n"
	"hello t=101 pid=500 ppid=10 exe=/usr/bin/python%203 hook=0.1.0 driver=/usr/lib/libcuda.so.580\n"
	"device t=102 pid=500 ordinal=0 name=NVIDIA%20H100 cc=90 sms=132 clock_khz=1980000\n"
	"module t=103 pid=500 mid=1 api=cuLibraryLoadData kind=fatbin size=4096 ptx=1 sass=2 source=app\n"
	"kernel t=104 pid=500 kid=1 mid=1 name=_Z6vecaddPKfS0_Pfi ptx=1\n"
	"kernel t=105 pid=500 kid=2 mid=1 name=sgemm_sass ptx=0 reason=SASS%20only:%20rebuild%20with%20+PTX\n"
	"launch t=106 pid=500 kid=1 seq=1 api=cuLaunchKernel grid=256,1,1 block=128,1,1 smem=0 probed=0\n"
	"time t=107 pid=500 kid=1 seq=1 ns=1000\n"
	"instrument t=108 pid=500 kid=1 status=ok probes=block_sched reason= regs_orig=12 regs_probed=18 sites=2 ms_jit=211.5\n"
	"launch t=109 pid=500 kid=1 seq=2 api=cuLaunchKernel grid=256,1,1 block=128,1,1 smem=0 probed=1 occ=16\n"
	"time t=110 pid=500 kid=1 seq=2 ns=3000\n"
	"launch t=111 pid=500 kid=1 seq=3 api=cuLaunchKernel grid=512,2 block=64,1,1 smem=1024 probed=1\n"
	"result t=112 pid=500 kid=1 seq=3 file=results/500-3.ntr maps=1 records=4096 dropped=0 bytes=9000 ns=800\n"
	"result t=113 pid=500 kid=1 seq=2 file=results/500-2.ntr maps=1 records=2048 dropped=5 bytes=7000 ns=700\n"
	"probe t=114 pid=500 kid=1 seq=4 status=declined reason=map%20budget%20exhausted\n"
	"probe t=115 pid=500 kid=1 seq=5 status=declined reason=stream%20capture\n"
	"result t=116 pid=500 kid=1 seq=9 file=../../etc/passwd maps=1\n"
	"launch t=117 pid=500 kid=2 seq=1 api=cuLaunchKernelEx grid=8,8,1 block=256,1,1 smem=0 probed=0\n"
	"stats t=118 pid=500 kid=2 launches=40 timed=10 total_ns=50000 min_ns=4000 max_ns=6000\n"
	"graph t=119 pid=500 kid=2 api=cuGraphAddKernelNode grid=8,8,1 block=256,1,1\n"
	"graph t=120 pid=500 launches=7 api=cuGraphLaunch\n"
	"warn t=121 pid=500 msg=probe%20declined:%20100%25%20of%20budget\n"
	"lost t=122 pid=500 events=3\n"
	"future_event t=123 pid=500 whatever=1\n"
	"this is not an event\n"
	"launch t=124 pid=500 seq=9 grid=1,1,1\n"      /* no kid: malformed */
	"kernel t=125 kid=7 name=x\n"                  /* no pid: malformed */
	"hello t=126 pid=501 ppid=500 exe=/bin/child hook=0.1.0\n"
	"time t=127 pid=501 kid=1 seq=1 ns=10\n"       /* kernel never announced */
	"exit t=128 pid=500 launches=44\n"
	"stats t=129 pid=500 kid=2 launches=9999 timed=1"; /* killed mid-line */

static void write_log(const char *text)
{
	char path[256];
	snprintf(path, sizeof path, "%s/events.log", dir);
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
}

static void test_load(void)
{
	write_log(log_text);
	struct trace_dir *td = NULL;
	char *cause = NULL;
	CHECKF(trace_dir_load(dir, &td, &cause) == 0, "%s", cause);
	if (!td)
		return;
	CHECK(strcmp(td->record_argv, "python train.py") == 0);
	CHECK(strcmp(td->record_version, "0.1.0") == 0);
	CHECK(td->record_pid == 10 && td->record_t_ns == 100);
	CHECK_EQ_INT(td->lines, 30);
	CHECK_EQ_INT(td->malformed_lines, 3);
	CHECK_EQ_INT(td->unknown_lines, 1);
	CHECK(td->truncated_last_line);

	CHECK_EQ_INT(td->n_procs, 2);
	struct td_process *p = trace_dir_process(td, 500);
	CHECK(p && strcmp(p->exe, "/usr/bin/python 3") == 0 && p->ppid == 10);
	CHECK(p && p->exited && p->exit_launches == 44 && p->graph_launches == 7);
	CHECK(p && strcmp(p->driver, "/usr/lib/libcuda.so.580") == 0);
	struct td_process *c = trace_dir_process(td, 501);
	CHECK(c && !c->exited && strcmp(c->exe, "/bin/child") == 0);

	const struct td_device *d = trace_dir_device(td, 500);
	CHECK(d && d->sms == 132 && d->cc == 90 && strcmp(d->name, "NVIDIA H100") == 0);
	CHECK(trace_dir_device(td, 501) == NULL);
	CHECK_EQ_INT(td->n_modules, 1);
	CHECK(td->modules[0].n_ptx == 1 && td->modules[0].n_sass == 2 && td->modules[0].size == 4096);

	CHECK_EQ_INT(td->n_kernels, 3);
	struct td_kernel *k = trace_dir_kernel(td, 500, 1);
	CHECK(k && strcmp(k->name, "_Z6vecaddPKfS0_Pfi") == 0);
	CHECK(k && strcmp(k->demangled, "vecadd(float const*, float const*, float*, int)") == 0);
	CHECK(k && k->has_ptx && k->ptx_reason == NULL);
	CHECK(k && k->launches == 3 && k->timed == 2 && k->total_ns == 4000);
	CHECK(k && td_kernel_mean_ns(k) == 2000.0 && k->min_ns == 1000 && k->max_ns == 3000);
	CHECK(k && k->n_configs == 2 && k->last.grid[0] == 512 && k->last.grid[1] == 2 &&
	      k->last.grid[2] == 1 && k->last.smem == 1024);
	CHECK(k && k->occ == 16);
	CHECK(k && strcmp(k->instrument_status, "ok") == 0 && k->regs_probed == 18 && k->ms_jit == 211.5);
	CHECK(k && k->declined == 2 && strcmp(k->declined_reason, "stream capture") == 0);
	/* probed launches in seq order, with configs from their launch events */
	CHECK(k && k->n_results == 3);
	if (k && k->n_results == 3) {
		struct td_result *r2 = &td->results[k->results[0]];
		struct td_result *r3 = &td->results[k->results[1]];
		struct td_result *r9 = &td->results[k->results[2]];
		CHECK(r2->seq == 2 && r3->seq == 3 && r9->seq == 9);
		CHECK(strcmp(r2->file, "results/500-2.ntr") == 0);
		char want[300];
		snprintf(want, sizeof want, "%s/results/500-2.ntr", dir);
		CHECK(r2->path && strcmp(r2->path, want) == 0);
		CHECK(r2->has_config && r2->occ == 16 && r2->config.grid[0] == 256 && r2->dropped == 5);
		CHECK(r3->has_config && r3->occ == 0 && r3->config.block[0] == 64 && r3->records == 4096);
		CHECK(r9->file && r9->path == NULL); /* escapes the trace dir: not opened */
	}
	struct td_kernel *s = trace_dir_kernel(td, 500, 2);
	CHECK(s && !s->has_ptx && strcmp(s->ptx_reason, "SASS only: rebuild with +PTX") == 0);
	CHECK(s && strcmp(s->demangled, "sgemm_sass") == 0);
	/* stats win over counting; the cut stats line (9999) is not applied */
	CHECK(s && s->launches == 40 && s->timed == 10 && td_kernel_mean_ns(s) == 5000.0);
	CHECK(s && s->graph_nodes == 1 && s->n_results == 0 && s->instrument_status == NULL);
	struct td_kernel *u = trace_dir_kernel(td, 501, 1);
	CHECK(u && u->name == NULL && u->timed == 1);
	CHECK(trace_dir_kernel(td, 500, 7) == NULL);

	CHECK_EQ_INT(td->n_warnings, 1);
	CHECK(td->n_warnings == 1 && strcmp(td->warnings[0].msg, "probe declined: 100% of budget") == 0);
	CHECK(td->lost_events == 3);
	trace_dir_free(td);
	free(cause);
}

/* Many kernels across processes: the index must find each one. */
static void test_many(void)
{
	struct trace_dir *td = trace_dir_create(NULL);
	struct strbuf sb;
	for (int pid = 1; pid <= 3; pid++) {
		for (int kid = 1; kid <= 3000; kid++) {
			strbuf_init(&sb);
			event_begin(&sb, "kernel", 1, pid);
			event_add_int(&sb, "kid", kid);
			event_addf(&sb, "name", "k_%d_%d", pid, kid);
			event_add_int(&sb, "ptx", 1);
			event_end(&sb);
			size_t n;
			char *l = strbuf_finish(&sb, &n);
			trace_dir_feed(td, l, n);
			free(l);
		}
	}
	CHECK_EQ_INT(td->n_kernels, 9000);
	int bad = 0;
	char want[64];
	for (int pid = 1; pid <= 3; pid++)
		for (int kid = 1; kid <= 3000; kid++) {
			struct td_kernel *k = trace_dir_kernel(td, pid, kid);
			snprintf(want, sizeof want, "k_%d_%d", pid, kid);
			bad += !k || strcmp(k->name, want) != 0;
		}
	CHECK_EQ_INT(bad, 0);
	CHECK_EQ_INT(td->malformed_lines, 0);
	trace_dir_free(td);
}

static void feed(struct trace_dir *td, const char *line)
{
	trace_dir_feed(td, line, strlen(line));
}

/* Allocations: each probed launch keeps its process's live set at the time
 * of its launch line; frees pair by base within a process; another
 * process's allocations and malformed lines stay out; labels by order and
 * size, in address order. */
static void test_allocs(void)
{
	struct trace_dir *td = trace_dir_create(NULL);
	feed(td, "hello t=1 pid=7 ppid=1 exe=a");
	feed(td, "kernel t=1 pid=7 kid=1 mid=1 ptx=1 name=k");
	feed(td, "alloc t=2 pid=7 n=1 base=0x7f0000200000 bytes=4096 api=cuMemAlloc");
	feed(td, "alloc t=3 pid=7 n=2 base=0x7f0000000000 bytes=67108864 api=cuMemAllocAsync");
	feed(td, "alloc t=3 pid=8 n=1 base=0x7f1000000000 bytes=16 api=cuMemAlloc");
	feed(td, "alloc t=3 pid=7 n=3 base=zzz bytes=16 api=cuMemAlloc");
	feed(td, "launch t=4 pid=7 kid=1 seq=5 grid=1,1,1 block=32,1,1 probed=1");
	feed(td, "free t=5 pid=7 base=0x7f0000200000 api=cuMemFree");
	feed(td, "free t=5 pid=7 base=0x7f0000900000 api=cuMemFree");
	feed(td, "alloc t=6 pid=7 n=4 base=0x7f0000200000 bytes=8192 api=cuMemAlloc");
	feed(td, "launch t=7 pid=7 kid=1 seq=6 grid=1,1,1 block=32,1,1 probed=1");
	CHECK_EQ_INT(td->malformed_lines, 1);
	CHECK_EQ_INT(td->unpaired_frees, 1);
	CHECK_EQ_INT(td->n_results, 2);
	const struct td_result *r5 = NULL, *r6 = NULL;
	for (int i = 0; i < td->n_results; i++) {
		if (td->results[i].seq == 5)
			r5 = &td->results[i];
		if (td->results[i].seq == 6)
			r6 = &td->results[i];
	}
	CHECK(r5 && r5->n_allocs == 2 && r5->allocs[0].n == 1 && r5->allocs[1].n == 2);
	CHECK(r6 && r6->n_allocs == 2 && r6->allocs[0].n == 2 && r6->allocs[1].n == 4 &&
	      r6->allocs[1].bytes == 8192 && strcmp(r6->allocs[1].api, "cuMemAlloc") == 0);
	struct dmat_alloc *a = NULL;
	int n = 0;
	CHECK(r5 && dmat_allocs_from_trace(r5, &a, &n) == 0 && n == 2);
	if (a && n == 2) {
		CHECK(a[0].base == 0x7f0000000000ull && strcmp(a[0].label, "a2 64 MiB") == 0);
		CHECKF(a[1].base == 0x7f0000200000ull && a[1].size == 4096 && strcmp(a[1].label, "a1 4 KiB") == 0,
		       "%s", a[1].label);
	}
	dmat_allocs_free(a, n);
	trace_dir_free(td);
}

static void test_missing(void)
{
	struct trace_dir *td = NULL;
	char *cause = NULL;
	CHECK(trace_dir_load("/nonexistent/trace", &td, &cause) < 0 && td == NULL);
	CHECK(cause && strstr(cause, "/nonexistent/trace/events.log"));
	free(cause);
	/* an empty log is a valid, empty trace */
	write_log("");
	CHECK(trace_dir_load(dir, &td, NULL) == 0 && td && td->lines == 0 && !td->truncated_last_line);
	trace_dir_free(td);
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	test_load();
	test_many();
	test_allocs();
	test_missing();
	char path[256];
	snprintf(path, sizeof path, "%s/events.log", dir);
	unlink(path);
	rmdir(dir);
	return testlib_report();
}
