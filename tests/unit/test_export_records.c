/* `ntop export --view records` on a synthetic trace directory written with
 * the trace writer (result_write): every line of the CSV against the records
 * put in, for a slot-major dmat map (threads past the cap, threads with no
 * accesses, a wrapping clock, garbage in unused slots), a unit-major warp map
 * of a 2-D launch (warp -> first thread, hex for *_addr fields), a map
 * without field names (raw hex), a block-sampled map (only the kept blocks'
 * records, the others counted) storing 2 of its 4 slots, and a warp map
 * storing 3 of its 8 (format v4).
 *
 * Given `--write-fixture DIR` it writes the trace directory to DIR and the
 * accesses the dmat launch was built from to DIR/expected.csv in the format
 * of examples/cuda/patterns.cu --dump-expected, for
 * tests/regress/cli_export_records.sh (which runs tests/gpu/check_dmat.py
 * on it). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"
#include "trace/result.h"

#define BASE 0x7f0000000000ull
#define A_BLOCKS 3u
#define A_THREADS 8u
#define A_CAP 64u
#define A_REC 16u
#define B_UNITS 12u /* 6 blocks of 40 threads: 2 warps each */

/* ---- the dmat launch: accesses known in advance ---- */

static uint32_t a_count(uint32_t b, uint32_t t)
{
	if (b == 1 && t == 0)
		return 70; /* 6 past the cap */
	return ((b * A_THREADS + t) % 5) * 3;
}

struct access {
	uint64_t addr;
	uint32_t bytes, kind, clock;
};

static struct access a_access(uint32_t b, uint32_t t, uint32_t k)
{
	struct access x;
	x.addr = BASE + (uint64_t)(b * A_THREADS + t) * 0x1000 + k * 16;
	x.bytes = k % 3 == 0 ? 16 : 4;
	x.kind = 1 + k % 4;
	/* thread (2,1) has a 32-bit SM clock that wraps between its records */
	x.clock = b == 2 && t == 1 ? 0xfffffff0u + k * 8 : 1000 + b * 100000 + k * 10 + t;
	return x;
}

static void fld(struct probe_map *pm, const char *name, enum probe_type t)
{
	struct probe_field *f = &pm->fields[pm->n_fields++];
	snprintf(f->name, sizeof f->name, "%s", name);
	f->type = t;
	f->offset = pm->rec_size;
	pm->rec_size += t;
}

static struct result *new_result(uint64_t seq, uint32_t kid, const char *kernel, int n_maps)
{
	struct result *r = calloc(1, sizeof *r);
	r->pid = 700;
	r->seq = seq;
	r->kernel_id = kid;
	r->kernel = strdup(kernel);
	r->probes = strdup("dmat");
	r->grid[0] = r->grid[1] = r->grid[2] = 1;
	r->block[0] = r->block[1] = r->block[2] = 1;
	r->device_sms = 132;
	r->device_cc = 90;
	r->n_maps = n_maps;
	r->maps = calloc((size_t)n_maps, sizeof *r->maps);
	return r;
}

static struct result *dmat_launch(void)
{
	struct result *r = new_result(1, 1, "_Z7dm_copyPKfPfi", 1);
	r->grid[0] = A_BLOCKS;
	r->block[0] = A_THREADS;
	struct result_map *m = &r->maps[0];
	snprintf(m->map.name, sizeof m->map.name, "dmat");
	m->map.level = PROBE_LEVEL_THREAD;
	m->map.cap = A_CAP;
	m->stored = m->map.cap;
	fld(&m->map, "addr", PROBE_U64);
	fld(&m->map, "clock", PROBE_U32);
	fld(&m->map, "sizekind", PROBE_U32);
	m->slot_major = 1;
	m->units = A_BLOCKS * A_THREADS;
	m->counts = calloc(m->units, 4);
	m->records = malloc(m->units * A_CAP * A_REC);
	memset(m->records, 0xab, m->units * A_CAP * A_REC); /* unused slots must never show */
	for (uint32_t u = 0; u < m->units; u++) {
		uint32_t b = u / A_THREADS, t = u % A_THREADS, n = a_count(b, t);
		m->counts[u] = n * A_REC;
		for (uint32_t k = 0; k < n && k < A_CAP; k++) {
			struct access x = a_access(b, t, k);
			uint32_t sk = x.bytes | x.kind << 24;
			uint8_t *rec = m->records + ((uint64_t)k * m->units + u) * A_REC;
			memcpy(rec, &x.addr, 8);
			memcpy(rec + 8, &x.clock, 4);
			memcpy(rec + 12, &sk, 4);
		}
	}
	return r;
}

/* ---- a launch with a warp map and a map without field names ---- */

static struct result *multi_launch(void)
{
	struct result *r = new_result(2, 2, "_Z5multiv", 2);
	r->grid[0] = 3;
	r->grid[1] = 2;
	r->block[0] = 20;
	r->block[1] = 2;
	struct result_map *w = &r->maps[0], *raw = &r->maps[1];
	snprintf(w->map.name, sizeof w->map.name, "w");
	w->map.level = PROBE_LEVEL_WARP;
	w->map.cap = 2;
	w->stored = w->map.cap;
	fld(&w->map, "start", PROBE_U64);
	fld(&w->map, "x_addr", PROBE_U64);
	fld(&w->map, "v", PROBE_U32);
	w->units = B_UNITS;
	w->counts = calloc(B_UNITS, 4);
	w->records = malloc(B_UNITS * 2 * w->map.rec_size);
	memset(w->records, 0xcd, B_UNITS * 2 * w->map.rec_size);
	for (uint32_t u = 0; u < B_UNITS; u++) {
		w->counts[u] = (u == 5 ? 3 : u % 3) * w->map.rec_size;
		for (uint32_t k = 0; k < 2 && k < u % 3 + (u == 5); k++) {
			uint8_t *rec = w->records + (u * 2 + k) * w->map.rec_size;
			uint64_t start = 1000 + u * 10 + k, xa = 0xdead0000ull + u * 0x100 + k;
			uint32_t v = u * 100 + k;
			memcpy(rec, &start, 8);
			memcpy(rec + 8, &xa, 8);
			memcpy(rec + 16, &v, 4);
		}
	}
	snprintf(raw->map.name, sizeof raw->map.name, "raw");
	raw->map.level = PROBE_LEVEL_THREAD;
	raw->map.cap = 1;
	raw->stored = raw->map.cap;
	raw->map.rec_size = 8;
	raw->units = 240;
	raw->counts = calloc(240, 4);
	raw->records = calloc(240, 8);
	raw->counts[7] = 8;
	raw->counts[9] = 16; /* one kept, one dropped */
	for (int i = 0; i < 8; i++) {
		raw->records[7 * 8 + i] = (uint8_t)(i + 1);
		raw->records[9 * 8 + i] = (uint8_t)(0xf0 + i);
	}
	return r;
}

/* ---- a block-sampled launch: 3 blocks of 4 threads, 1 block in 2 kept,
 * cap 4 of which the units filled 2 at most: 2 slots stored (format v4) ---- */

static uint64_t s_addr(uint32_t u, uint32_t k)
{
	return BASE + u * 0x100 + k * 4;
}

static struct result *sampled_launch(void)
{
	struct result *r = new_result(4, 4, "_Z7sampledv", 1);
	r->grid[0] = 3;
	r->block[0] = 4;
	struct result_map *m = &r->maps[0];
	snprintf(m->map.name, sizeof m->map.name, "dmat");
	m->map.level = PROBE_LEVEL_THREAD;
	m->map.cap = 4;
	m->stored = 2;
	fld(&m->map, "addr", PROBE_U64);
	fld(&m->map, "clock", PROBE_U32);
	fld(&m->map, "sizekind", PROBE_U32);
	m->slot_major = 1;
	m->sample_shift = 1;
	m->units = 12;
	m->counts = calloc(12, 4);
	m->records = calloc(8 * 2, A_REC); /* blocks 0 and 2, 2 slot planes */
	for (uint32_t u = 0; u < 12; u++) {
		uint32_t b = u / 4, t = u % 4, n = 1 + t % 2;
		m->counts[u] = n * A_REC;
		if (b == 1)
			continue;
		for (uint32_t k = 0; k < n; k++) {
			uint8_t *rec = m->records + ((uint64_t)k * 8 + (b / 2) * 4 + t) * A_REC;
			uint64_t a = s_addr(u, k);
			uint32_t clock = 50 + k, sk = 4 | 1u << 24;
			memcpy(rec, &a, 8);
			memcpy(rec + 8, &clock, 4);
			memcpy(rec + 12, &sk, 4);
		}
	}
	return r;
}

/* ---- a warp map storing 3 of its 8 slots (format v4, unit-major: stride
 * 3): 2 blocks of 64 threads, warp u filled u % 4 records ---- */

static struct result *stored_launch(void)
{
	struct result *r = new_result(5, 5, "_Z6storedv", 1);
	r->grid[0] = 2;
	r->block[0] = 64;
	struct result_map *w = &r->maps[0];
	snprintf(w->map.name, sizeof w->map.name, "w4");
	w->map.level = PROBE_LEVEL_WARP;
	w->map.cap = 8;
	w->stored = 3;
	fld(&w->map, "start", PROBE_U64);
	fld(&w->map, "v", PROBE_U32);
	w->units = 4;
	w->counts = calloc(4, 4);
	w->records = malloc(4 * 3 * w->map.rec_size);
	memset(w->records, 0xcd, 4 * 3 * w->map.rec_size); /* unused slots must never show */
	for (uint32_t u = 0; u < 4; u++) {
		w->counts[u] = u % 4 * w->map.rec_size;
		for (uint32_t k = 0; k < u % 4; k++) {
			uint8_t *rec = w->records + (u * 3 + k) * w->map.rec_size; /* by hand, not the accessor */
			uint64_t start = 500 + u * 10 + k;
			uint32_t v = u * 100 + k;
			memcpy(rec, &start, 8);
			memcpy(rec + 8, &v, 4);
		}
	}
	return r;
}

/* ---- the fixture ---- */

static int write_result(const char *dir, const char *name, struct result *r)
{
	char *cause = NULL;
	int rc = result_write(dir, name, r, &cause);
	CHECKF(rc == 0, "%s", cause);
	free(cause);
	result_free(r);
	return rc;
}

static int write_expected(const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fputs("kernel,block,thread,k,addr,bytes,kind\n", f);
	for (uint32_t b = 0; b < A_BLOCKS; b++)
		for (uint32_t t = 0; t < A_THREADS; t++)
			for (uint32_t k = 0; k < a_count(b, t); k++) {
				struct access x = a_access(b, t, k);
				fprintf(f, "dm_copy,%u,%u,%u,0x%" PRIx64 ",%u,%u\n", b, t, k, x.addr, x.bytes, x.kind);
			}
	return fclose(f) == 0 ? 0 : -1;
}

static int write_fixture(const char *dir)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/results", dir);
	mkdir(dir, 0755);
	mkdir(path, 0755);
	if (write_result(path, "700-1.ntr", dmat_launch()) < 0 || write_result(path, "700-2.ntr", multi_launch()) < 0 ||
	    write_result(path, "700-4.ntr", sampled_launch()) < 0 || write_result(path, "700-5.ntr", stored_launch()) < 0)
		return -1;
	snprintf(path, sizeof path, "%s/expected.csv", dir);
	if (write_expected(path) < 0)
		return -1;
	snprintf(path, sizeof path, "%s/events.log", dir);
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fputs("record t=1 pid=4400 argv=./patterns version=0.1.0\n"
	      "hello t=2 pid=700 ppid=4400 exe=/tmp/patterns hook=0.1.0 driver=/usr/lib/libcuda.so.1\n"
	      "device t=3 pid=700 ordinal=0 name=NVIDIA%20H100%2080GB%20HBM3 cc=90 sms=132 clock_khz=1980000\n"
	      "module t=4 pid=700 mid=1 api=cuLibraryLoadData kind=fatbin size=4096 ptx=1 sass=1 source=app\n"
	      "kernel t=5 pid=700 kid=1 mid=1 name=_Z7dm_copyPKfPfi ptx=1\n"
	      "kernel t=6 pid=700 kid=2 mid=1 name=_Z5multiv ptx=1\n"
	      "kernel t=7 pid=700 kid=3 mid=1 name=_Z5idlerv ptx=1\n"
	      "kernel t=7 pid=700 kid=4 mid=1 name=_Z7sampledv ptx=1\n"
	      "kernel t=7 pid=700 kid=5 mid=1 name=_Z6storedv ptx=1\n"
	      "launch t=8 pid=700 kid=1 seq=1 api=cuLaunchKernel grid=3,1,1 block=8,1,1 smem=0 probed=1\n"
	      "result t=9 pid=700 kid=1 seq=1 file=results/700-1.ntr maps=1 records=193 dropped=6 bytes=1 ns=1\n"
	      "launch t=10 pid=700 kid=2 seq=2 api=cuLaunchKernel grid=3,2,1 block=20,2,1 smem=0 probed=1\n"
	      "result t=11 pid=700 kid=2 seq=2 file=results/700-2.ntr maps=2 records=14 dropped=2 bytes=1 ns=1\n"
	      "launch t=12 pid=700 kid=3 seq=3 api=cuLaunchKernel grid=1,1,1 block=32,1,1 smem=0 probed=0\n"
	      "launch t=13 pid=700 kid=4 seq=4 api=cuLaunchKernel grid=3,1,1 block=4,1,1 smem=0 probed=1\n"
	      "result t=14 pid=700 kid=4 seq=4 file=results/700-4.ntr maps=1 records=12 dropped=0 bytes=1 ns=1\n"
	      "launch t=15 pid=700 kid=5 seq=5 api=cuLaunchKernel grid=2,1,1 block=64,1,1 smem=0 probed=1\n"
	      "result t=16 pid=700 kid=5 seq=5 file=results/700-5.ntr maps=1 records=6 dropped=0 bytes=1 ns=1\n"
	      "exit t=17 pid=700 launches=5\n",
	      f);
	return fclose(f) == 0 ? 0 : -1;
}

/* ---- the checks ---- */

/* Runs `ntop ARGS`; its exit status, stdout+stderr in a malloc'd *out. */
static int run_ntop(const char *args, char **out)
{
	char cmd[8192];
	snprintf(cmd, sizeof cmd, "{ %s/bin/ntop %s; } 2>&1", NTOP_BINARY_DIR, args);
	FILE *p = popen(cmd, "r");
	*out = NULL;
	if (!p)
		return -1;
	size_t len = 0, cap = 0;
	char buf[65536];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, p)) > 0) {
		if (len + n + 1 > cap) {
			cap = (len + n + 1) * 2;
			*out = realloc(*out, cap);
		}
		memcpy(*out + len, buf, n);
		len += n;
	}
	if (!*out)
		*out = calloc(1, 1);
	(*out)[len] = 0;
	int st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *read_csv(const char *dir, const char *name)
{
	char path[4400];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	char *s = testlib_slurp(path, NULL);
	CHECKF(s != NULL, "cannot read %s", path);
	return s;
}

/* The dmat CSV must be exactly the kept accesses, unit by unit. */
static void check_dmat_csv(const char *csv)
{
	const char *p = csv, *want_head = "block,thread,unit,slot,addr,clock,sizekind\n";
	CHECKF(strncmp(p, want_head, strlen(want_head)) == 0, "header: %.60s", p);
	p += strlen(want_head);
	int lines = 0, bad = 0;
	for (uint32_t b = 0; b < A_BLOCKS; b++)
		for (uint32_t t = 0; t < A_THREADS; t++)
			for (uint32_t k = 0; k < a_count(b, t) && k < A_CAP; k++) {
				struct access x = a_access(b, t, k);
				char want[128];
				int n = snprintf(want, sizeof want, "%u,%u,%u,%u,0x%" PRIx64 ",%u,%u\n", b, t,
						 b * A_THREADS + t, k, x.addr, x.clock, x.bytes | x.kind << 24);
				if (strncmp(p, want, (size_t)n) != 0 && !bad++)
					CHECKF(0, "line %d: got '%.60s', want '%s'", lines + 2, p, want);
				const char *nl = strchr(p, '\n');
				p = nl ? nl + 1 : p + strlen(p);
				lines++;
			}
	CHECK_EQ_INT(bad, 0);
	CHECK_EQ_INT(lines, 193);
	CHECKF(*p == 0, "trailing lines: %.60s", p);
}

static void check_multi_csv(const char *csv)
{
	const char *head = "block,thread,unit,slot,start,x_addr,v\n";
	CHECKF(strncmp(csv, head, strlen(head)) == 0, "header: %.60s", csv);
	char want[4096] = "", line[128];
	strcat(want, head);
	for (uint32_t u = 0; u < B_UNITS; u++)
		for (uint32_t k = 0; k < 2 && k < u % 3 + (u == 5); k++) {
			/* 2 warps per block: the second starts at thread 32 */
			snprintf(line, sizeof line, "%u,%u,%u,%u,%u,0x%x,%u\n", u / 2, u % 2 * 32, u, k, 1000 + u * 10 + k,
				 0xdead0000u + u * 0x100 + k, u * 100 + k);
			strcat(want, line);
		}
	CHECKF(strcmp(csv, want) == 0, "got:\n%s\nwant:\n%s", csv, want);
}

static void check_sampled_csv(const char *csv)
{
	char want[4096] = "block,thread,unit,slot,addr,clock,sizekind\n", line[128];
	for (uint32_t u = 0; u < 12; u++)
		for (uint32_t k = 0; u / 4 != 1 && k < 1 + u % 2; k++) {
			snprintf(line, sizeof line, "%u,%u,%u,%u,0x%" PRIx64 ",%u,%u\n", u / 4, u % 4, u, k, s_addr(u, k),
				 50 + k, 4 | 1u << 24);
			strcat(want, line);
		}
	CHECKF(strcmp(csv, want) == 0, "got:\n%s\nwant:\n%s", csv, want);
}

static void check_stored_csv(const char *csv)
{
	char want[4096] = "block,thread,unit,slot,start,v\n", line[128];
	for (uint32_t u = 0; u < 4; u++)
		for (uint32_t k = 0; k < u % 4; k++) {
			snprintf(line, sizeof line, "%u,%u,%u,%u,%u,%u\n", u / 2, u % 2 * 32, u, k, 500 + u * 10 + k,
				 u * 100 + k);
			strcat(want, line);
		}
	CHECKF(strcmp(csv, want) == 0, "got:\n%s\nwant:\n%s", csv, want);
}

/* The fixture's files are the versions their maps need: v4 where a map
 * stores fewer slots than its cap. */
static void check_versions(const char *tdir)
{
	static const struct {
		const char *name;
		uint32_t version, stored;
	} want[] = {{"700-1.ntr", 2, 64}, {"700-2.ntr", 1, 2}, {"700-4.ntr", 4, 2}, {"700-5.ntr", 4, 3}};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		char path[4400], *cause = NULL;
		struct result *r = NULL;
		snprintf(path, sizeof path, "%s/results/%s", tdir, want[i].name);
		CHECKF(result_read_head(path, &r, &cause) == 0, "%s", cause);
		CHECKF(r && r->version == want[i].version && r->maps[0].stored == want[i].stored,
		       "%s: version %u, %u stored", want[i].name, r ? r->version : 0, r ? r->maps[0].stored : 0);
		result_free(r);
		free(cause);
	}
}

static void test_cli(void)
{
	char ntop[4096];
	snprintf(ntop, sizeof ntop, "%s/bin/ntop", NTOP_BINARY_DIR);
	if (access(ntop, X_OK) != 0) {
		printf("skip cli: %s not built\n", ntop);
		return;
	}
	char dir[] = "/tmp/ntop_test_export_records_XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char tdir[4200], args[8192], *out = NULL, *csv;
	snprintf(tdir, sizeof tdir, "%s/trace", dir);
	CHECK(write_fixture(tdir) == 0);

	snprintf(args, sizeof args, "export %s -k dm_copy --view records -o %s/a.csv", tdir, dir);
	CHECKF(run_ntop(args, &out) == 0, "%s", out);
	CHECKF(strstr(out, "a.csv: 193 records of 19 units, map dmat (launch seq 1), 6 dropped past the cap of 64"),
	       "%s", out);
	free(out);
	if ((csv = read_csv(dir, "a.csv")) != NULL)
		check_dmat_csv(csv);
	free(csv);

	/* the same on stdout, summary on stderr */
	snprintf(args, sizeof args, "export %s -k dm_copy --view=records -o - 2>/dev/null", tdir);
	CHECK_EQ_INT(run_ntop(args, &out), 0);
	check_dmat_csv(out);
	free(out);

	snprintf(args, sizeof args, "export %s -k multi --view records -o %s/b.csv", tdir, dir);
	CHECKF(run_ntop(args, &out) == 0, "%s", out);
	CHECKF(strstr(out, "12 records of 8 units, map w (launch seq 2), 1 dropped past the cap of 2"), "%s", out);
	free(out);
	if ((csv = read_csv(dir, "b.csv")) != NULL)
		check_multi_csv(csv);
	free(csv);

	snprintf(args, sizeof args, "export %s -k multi --view records --map raw -o %s/c.csv", tdir, dir);
	CHECKF(run_ntop(args, &out) == 0, "%s", out);
	CHECKF(strstr(out, "2 records of 2 units, map raw (launch seq 2), 1 dropped past the cap of 1"), "%s", out);
	free(out);
	if ((csv = read_csv(dir, "c.csv")) != NULL)
		CHECKF(strcmp(csv, "block,thread,unit,slot,raw\n0,7,7,0,0102030405060708\n0,9,9,0,f0f1f2f3f4f5f6f7\n") == 0,
		       "%s", csv);
	free(csv);

	snprintf(args, sizeof args, "export %s -k sampled --view records -o %s/d.csv", tdir, dir);
	CHECKF(run_ntop(args, &out) == 0, "%s", out);
	CHECKF(strstr(out, "12 records of 8 units, map dmat (launch seq 4), 0 dropped past the cap of 4") &&
		       strstr(out, "note: 4 units with records belong to blocks that were not sampled"),
	       "%s", out);
	free(out);
	if ((csv = read_csv(dir, "d.csv")) != NULL)
		check_sampled_csv(csv);
	free(csv);

	snprintf(args, sizeof args, "export %s -k stored --view records -o %s/e.csv", tdir, dir);
	CHECKF(run_ntop(args, &out) == 0, "%s", out);
	CHECKF(strstr(out, "6 records of 3 units, map w4 (launch seq 5), 0 dropped past the cap of 8"), "%s", out);
	free(out);
	if ((csv = read_csv(dir, "e.csv")) != NULL)
		check_stored_csv(csv);
	free(csv);
	check_versions(tdir);

	snprintf(args, sizeof args, "rm -rf '%s'", dir);
	CHECK(system(args) == 0);
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--write-fixture") == 0)
		return write_fixture(argv[2]) == 0 ? 0 : 1;
	test_cli();
	return testlib_report();
}
