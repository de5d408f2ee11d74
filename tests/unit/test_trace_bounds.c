/* Readers of untrusted traces stay bounded: a 65 KB result
 * that would inflate to 2 GiB is refused at once by both result readers;
 * a FIFO named events.log or <pid>-<seq>.ntr is refused, not waited on; a
 * line without an end does not take all memory. And a recording cut short
 * is read whole and said to be incomplete: the `end` line, processes that
 * never exited, leftover events-<pid>.log files and result files no line
 * names. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/strbuf.h"
#include "common/timeutil.h"
#include "trace/result.h"
#include "trace/trace_dir.h"
#include "trace/trace_file.h"
#include "testlib.h"

static char dir[] = "/tmp/ntop-bounds-XXXXXX";

static char *at(const char *name)
{
	char *p;
	return asprintf(&p, "%s/%s", dir, name) < 0 ? NULL : p;
}

static void put(const char *name, const void *data, size_t n)
{
	char *p = at(name);
	FILE *f = p ? fopen(p, "wb") : NULL;
	CHECKF(f && fwrite(data, 1, n, f) == n, "write %s", name);
	if (f)
		fclose(f);
	free(p);
}

/* ---- a decompression bomb, byte by byte (doc/trace-format.md) ---- */

/* One map of `units` units (4 count bytes + 12 record bytes each) whose
 * zstd frame is nothing but 128 KiB RLE blocks of zeros: 4 bytes each, so
 * 2^27 units (2 GiB) fit in 64 KiB. Sizes agree everywhere: only the ratio
 * gives it away. */
static struct testlib_bytes bomb(uint64_t units)
{
	uint64_t total = units * 16, blocks = (total + 131071) / 131072;
	struct testlib_bytes x = { calloc(1, 256 + blocks * 4), 0 };
	memcpy(x.b, "NTOPRES", 8);
	x.n = 8;
	testlib_u32(&x, 1);   /* version */
	testlib_u32(&x, 104); /* header size */
	testlib_u64(&x, 0);   /* file size, patched below */
	while (x.n < 96)
		testlib_u32(&x, 1); /* pid .. duration */
	testlib_u32(&x, 1);     /* maps */
	testlib_u32(&x, 0);
	testlib_str(&x, "k");
	testlib_str(&x, "p");
	testlib_u32(&x, 56 + 4 + 1);
	testlib_u32(&x, 1); /* thread level */
	testlib_u32(&x, 1); /* cap */
	testlib_u32(&x, 12);
	testlib_u32(&x, 0);
	testlib_u32(&x, 0);
	testlib_u64(&x, units);
	testlib_u64(&x, units * 4);
	testlib_u64(&x, units * 12);
	size_t frame_at = x.n;
	testlib_u64(&x, 0); /* frame size, patched below */
	testlib_str(&x, "m");
	size_t start = x.n;
	testlib_u32(&x, 0xFD2FB528u);
	x.b[x.n++] = 0xE0; /* single segment, 8-byte content size */
	testlib_u64(&x, total);
	for (uint64_t i = 0; i < blocks; i++) {
		uint64_t sz = i + 1 < blocks ? 131072 : total - i * 131072;
		uint32_t bh = (i + 1 == blocks) | 1u << 1 | (uint32_t)sz << 3;
		x.b[x.n++] = (uint8_t)bh;
		x.b[x.n++] = (uint8_t)(bh >> 8);
		x.b[x.n++] = (uint8_t)(bh >> 16);
		x.b[x.n++] = 0;
	}
	for (int i = 0; i < 8; i++) {
		x.b[16 + i] = (uint8_t)((uint64_t)x.n >> (8 * i));
		x.b[frame_at + i] = (uint8_t)((uint64_t)(x.n - start) >> (8 * i));
	}
	return x;
}

static void test_bomb(void)
{
	struct testlib_bytes x = bomb(1ull << 27);
	CHECKF(x.n < 70000, "the bomb is %zu bytes", x.n);
	put("1-1.ntr", x.b, x.n);
	char *p = at("1-1.ntr"), *cause = NULL;
	struct result *r = NULL;
	uint64_t t0 = time_mono_ns();
	int rc = result_read(p, &r, &cause);
	double ms = (double)(time_mono_ns() - t0) / 1e6;
	CHECKF(rc < 0 && cause && strstr(cause, "refused as a decompression bomb"), "result_read: %s",
	       rc == 0 ? "read it" : cause);
	CHECKF(ms < 500, "result_read took %.0f ms to refuse it", ms);
	free(cause);
	cause = NULL;
	t0 = time_mono_ns();
	rc = result_read_head(p, &r, &cause); /* the streaming reader (report, dmat) */
	ms = (double)(time_mono_ns() - t0) / 1e6;
	CHECKF(rc < 0 && cause && strstr(cause, "refused as a decompression bomb"), "result_read_head: %s",
	       rc == 0 ? "read it" : cause);
	CHECKF(ms < 500, "result_read_head took %.0f ms to refuse it", ms);
	free(cause);
	cause = NULL;
	/* a small zero map far past the ratio still reads: only the bulk is refused */
	struct testlib_bytes small = bomb(1u << 16);
	CHECKF(result_read_mem(small.b, small.n, &r, &cause) == 0, "a 1 MiB zero map: %s", cause);
	CHECK(r && r->maps[0].units == 1u << 16 && r->maps[0].records_written == 0);
	result_free(r);
	free(small.b);
	free(x.b);
	free(p);
	free(cause);
}

/* ---- only regular files ---- */

static void test_fifos(void)
{
	char *sub = at("fifo"), *log = NULL, *ntr = NULL, *cause = NULL;
	CHECK(sub && mkdir(sub, 0700) == 0);
	CHECK(asprintf(&log, "%s/events.log", sub) > 0 && mkfifo(log, 0600) == 0);
	CHECK(asprintf(&ntr, "%s/9-9.ntr", sub) > 0 && mkfifo(ntr, 0600) == 0);
	struct trace_dir *td = NULL;
	/* each would wait forever for a writer if opened blocking */
	alarm(20);
	CHECK(trace_dir_load(sub, &td, &cause) < 0 && cause && strstr(cause, "not a regular file (a FIFO)"));
	free(cause);
	cause = NULL;
	struct result *r = NULL;
	CHECK(result_read(ntr, &r, &cause) < 0 && cause && strstr(cause, "a FIFO"));
	free(cause);
	cause = NULL;
	CHECK(result_read_head(ntr, &r, &cause) < 0 && cause && strstr(cause, "a FIFO"));
	alarm(0);
	free(cause);
	free(log);
	free(ntr);
	free(sub);
}

/* ---- bounded lines ---- */

static void count_line(void *arg, const char *line, size_t len)
{
	(void)line;
	(void)len;
	(*(int *)arg)++;
}

static void test_long_line(void)
{
	size_t n = 3u << 20; /* over TRACE_LINE_MAX, then a good line, then a cut one */
	char *b = malloc(n + 64);
	memset(b, 'x', n);
	strcpy(b + n, "\nok t=1 pid=1\ncut");
	put("long.log", b, strlen(b));
	char *p = at("long.log");
	int fd = open(p, O_RDONLY), lines = 0;
	struct trace_lines tl;
	CHECK(fd >= 0 && trace_lines_read(fd, count_line, &lines, &tl) == 0);
	CHECK_EQ_INT(lines, 1);
	CHECK_EQ_INT(tl.too_long, 1);
	CHECK(tl.cut);
	if (fd >= 0)
		close(fd);
	free(p);
	free(b);
}

/* ---- a recording cut short ---- */

static void test_cut_short(void)
{
	char *sub = at("cut"), *res = at("cut/results"), *cause = NULL;
	CHECK(sub && mkdir(sub, 0700) == 0 && mkdir(res, 0700) == 0);
	free(sub);
	const char *log = "record t=1 pid=10 argv=./app version=0.1.0 cwd=/ probes=block_sched kernels=\n"
			  "hello t=2 pid=11 ppid=10 exe=/app hook=0.1.0 driver=x\n"
			  "kernel t=3 pid=11 kid=1 mid=1 ptx=1 name=_Z1kv\n"
			  "launch t=4 pid=11 kid=1 seq=1 grid=1,1,1 block=32,1,1 probed=1\n";
	put("cut/events.log", log, strlen(log));
	/* ntop was killed: the hook went on in its own file */
	const char *more = "hello t=5 pid=12 ppid=11 exe=/app hook=0.1.0 driver=x\nexit t=6 pid=12 launches=0\n";
	put("cut/events-12.log", more, strlen(more));
	/* a result whose line never made it */
	struct testlib_bytes x = bomb(8);
	for (int i = 0; i < 4; i++) {
		x.b[24 + i] = (uint8_t)(11 >> (8 * i)); /* pid 11 */
		x.b[32 + i] = (uint8_t)(1 >> (8 * i));  /* seq 1 (low word) */
	}
	memset(x.b + 28, 0, 4);             /* kernel id 0 */
	memset(x.b + 36, 0, 4);             /* seq high word */
	put("cut/results/11-1.ntr", x.b, x.n);
	free(x.b);
	struct trace_dir *td = NULL;
	char *path = at("cut");
	CHECKF(trace_dir_load(path, &td, &cause) == 0, "%s", cause);
	if (td) {
		CHECK(!td->has_end);
		CHECK_EQ_INT(td->leftover_logs, 1);
		CHECK_EQ_INT(td->unlisted_results, 1);
		const struct td_process *p12 = trace_dir_process(td, 12);
		CHECK(p12 && p12->exited);
		const struct td_kernel *k = trace_dir_kernel(td, 11, 0);
		CHECKF(k && k->n_results == 1 && td->results[k->results[0]].path, "the unlisted result is read");
		struct strbuf why;
		strbuf_init(&why);
		CHECK_EQ_INT(trace_dir_incomplete(td, &why), 3); /* pid 11 never exited, leftovers, unlisted */
		CHECKF(why.data && strstr(why.data, "pid 11 never reached its exit"), "%s", why.data ? why.data : "");
		strbuf_done(&why);
		trace_dir_free(td);
	}
	/* a clean end, the program killed: said, and that alone makes it incomplete */
	const char *end = "end t=9 pid=10 status=137 signal=9\nexit t=8 pid=11 launches=1\n";
	char *lp = at("cut/events.log");
	FILE *f = fopen(lp, "a");
	CHECK(f && fputs(end, f) >= 0);
	if (f)
		fclose(f);
	CHECK(trace_dir_load(path, &td, &cause) == 0);
	if (td) {
		CHECK(td->has_end && td->end_status == 137 && td->end_signal == 9);
		struct strbuf why;
		strbuf_init(&why);
		trace_dir_incomplete(td, &why);
		CHECKF(why.data && strstr(why.data, "killed by signal 9"), "%s", why.data ? why.data : "");
		strbuf_done(&why);
		trace_dir_free(td);
	}
	free(lp);
	free(path);
	free(res);
	free(cause);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_bomb();
	test_fifos();
	test_long_line();
	test_cut_short();
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return testlib_report();
}
