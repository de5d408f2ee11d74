/* DMAT model benchmark: how fast and in how much memory a big dmat result
 * becomes a model and a PNG, streamed from the file. For each size
 * (100M and 10M records by default) it
 *   1. writes a synthetic dmat result in a child process (result_write from
 *      a buffer: 1.6 GB for 100M records), like the hook would: a thread map
 *      {addr:u64, clock:u32, sizekind:u32}, cap 64, slot-major; 256-thread
 *      blocks of a grid-stride kernel reading A and B and writing C (4-byte
 *      elements, coalesced, 1 load in 16 a random gather from B), 32-bit
 *      clocks increasing per thread from a per-block start, waves of
 *      132 SMs x 8 blocks;
 *   2. in a fresh child (so that its peak RSS is its own): dmat_open (the
 *      model build: two passes over the records from the file), then the
 *      whole launch as a PNG the way `ntop export --view dmat` draws it
 *      (render_dmat_png_draw at the default size, png_canvas_write).
 * It prints build time, records/s, peak RSS (getrusage ru_maxrss), the
 * model's own heap (mem_peak), bytes per record on disk, PNG time and two
 * TUI-sized dmat_bin calls (from the histogram; zoomed past it), and
 * checks the model (records and accesses as generated, 3 ranges).
 *
 * Usage: dmat_model_bench [--threads N]... [--dir DIR] [--keep] [--smoke]
 *   --threads N  a launch of N threads x 64 records (repeatable; default
 *                1600000 and 160000: 102.4M and 10.24M records)
 *   --smoke      one tiny launch (CTest: checks, never times) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/timeutil.h"
#include "trace/result.h"
#include "viz/dmat.h"
#include "viz/png_canvas.h"
#include "viz/render_dmat_png.h"
#include "viz/theme.h"

#ifndef NTOP_BUILD_TYPE
#define NTOP_BUILD_TYPE "unknown"
#endif

#define DB_THREADS 256u   /* per block */
#define DB_CAP 64u        /* records per thread */
#define DB_REC 16u
#define DB_SLOTS (132u * 8u) /* resident blocks: 132 SMs x 8 */
#define DB_BASE_A 0x7f2000000000ull
#define DB_BASE_B 0x7f4000000000ull
#define DB_BASE_C 0x7f6000000000ull

static uint64_t db_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static double db_now(void)
{
	return (double)time_mono_ns() / 1e9;
}

/* ---- the synthetic launch ---- */

static void db_field(struct probe_map *pm, const char *name, enum probe_type t)
{
	struct probe_field *f = &pm->fields[pm->n_fields++];
	snprintf(f->name, sizeof f->name, "%s", name);
	f->type = t;
	f->offset = pm->rec_size;
	pm->rec_size += t;
}

/* Record k of thread g: iteration k / 3 of the grid-stride loop, loading
 * A[i] and B[i] and storing C[i] (i = g + iteration * threads). */
static void db_record(uint8_t *rec, uint64_t g, uint32_t k, uint64_t threads, uint32_t clock, uint64_t *rng)
{
	uint64_t i = g + (uint64_t)(k / 3) * threads, addr;
	uint32_t kind = k % 3 == 2 ? 2 : 1;
	if (k % 3 == 0)
		addr = DB_BASE_A + i * 4;
	else if (k % 3 == 1 && db_rand(rng) % 16 == 0)
		addr = DB_BASE_B + (db_rand(rng) % (threads * (DB_CAP / 3 + 1))) * 4; /* gather */
	else
		addr = (k % 3 == 1 ? DB_BASE_B : DB_BASE_C) + i * 4;
	uint32_t sk = 4u | kind << 24;
	memcpy(rec, &addr, 8);
	memcpy(rec + 8, &clock, 4);
	memcpy(rec + 12, &sk, 4);
}

static struct result *db_make(uint64_t threads)
{
	uint64_t blocks = threads / DB_THREADS;
	struct result *r = calloc(1, sizeof *r);
	r->pid = 4242;
	r->seq = 1;
	r->kernel = strdup("_Z6triadPKfS0_Pfi");
	r->probes = strdup("dmat");
	r->grid[0] = (uint32_t)blocks;
	r->grid[1] = r->grid[2] = 1;
	r->block[0] = DB_THREADS;
	r->block[1] = r->block[2] = 1;
	r->device_sms = 132;
	r->device_cc = 90;
	r->sm_clock_khz = 1980000;
	r->n_maps = 1;
	r->maps = calloc(1, sizeof *r->maps);
	struct result_map *m = &r->maps[0];
	snprintf(m->map.name, sizeof m->map.name, "dmat");
	m->map.level = PROBE_LEVEL_THREAD;
	m->map.cap = DB_CAP;
	m->stored = m->map.cap; /* a whole map: every slot */
	m->slot_major = 1;
	db_field(&m->map, "addr", PROBE_U64);
	db_field(&m->map, "clock", PROBE_U32);
	db_field(&m->map, "sizekind", PROBE_U32);
	m->units = blocks * DB_THREADS;
	m->counts = malloc(m->units * 4);
	m->records = malloc(m->units * DB_CAP * DB_REC);
	if (!m->counts || !m->records) {
		fprintf(stderr, "dmat_model_bench: out of memory for %llu threads\n", (unsigned long long)threads);
		exit(1);
	}
	uint64_t rng = 0x9e3779b97f4a7c15ull;
	for (uint64_t b = 0; b < blocks; b++) {
		/* a per-SM clock base, a start within the block's wave */
		uint32_t start = (uint32_t)((b % 132) * 2654435761u + (b / DB_SLOTS) * 3000 + db_rand(&rng) % 300);
		for (uint32_t t = 0; t < DB_THREADS; t++) {
			uint64_t u = b * DB_THREADS + t;
			uint32_t c = start + (t / 32) * 5;
			for (uint32_t k = 0; k < DB_CAP; k++) {
				c += 30 + (uint32_t)(db_rand(&rng) % 20) + (k % 3 == 2 ? 60 : 0);
				db_record(m->records + ((uint64_t)k * m->units + u) * DB_REC, u, k, m->units, c, &rng);
			}
			m->counts[u] = DB_CAP * DB_REC;
		}
	}
	return r;
}

/* ---- children ---- */

struct db_out {
	double gen_s, build_s, png_s;
	double bin_s, zoom_s;      /* a 400x120 terminal grid: whole launch; 1/64 of time and rows */
	uint64_t records, accesses, rows, file_bytes;
	uint32_t runs;
	long maxrss_kb;
	size_t mem_peak;
	int ok;
};

static int db_child(int (*fn)(void *, struct db_out *), void *arg, struct db_out *o)
{
	int fd[2];
	if (pipe(fd) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		close(fd[0]);
		struct db_out x;
		memset(&x, 0, sizeof x);
		x.ok = fn(arg, &x) == 0;
		struct rusage ru;
		getrusage(RUSAGE_SELF, &ru);
		x.maxrss_kb = ru.ru_maxrss;
		ssize_t w = write(fd[1], &x, sizeof x);
		_exit(w == (ssize_t)sizeof x ? 0 : 1);
	}
	close(fd[1]);
	ssize_t n = pid > 0 ? read(fd[0], o, sizeof *o) : -1;
	close(fd[0]);
	int st = 0;
	if (pid > 0)
		waitpid(pid, &st, 0);
	return n == (ssize_t)sizeof *o && o->ok ? 0 : -1;
}

struct db_job {
	const char *path, *dir, *png;
	uint64_t threads;
};

static int db_gen(void *arg, struct db_out *o)
{
	const struct db_job *j = arg;
	double t0 = db_now();
	struct result *r = db_make(j->threads);
	char *cause = NULL;
	int rc = result_write(j->dir, strrchr(j->path, '/') + 1, r, &cause);
	if (rc < 0)
		fprintf(stderr, "dmat_model_bench: %s\n", cause);
	o->gen_s = db_now() - t0;
	free(cause);
	result_free(r);
	return rc;
}

static int db_build(void *arg, struct db_out *o)
{
	const struct db_job *j = arg;
	struct dmat_opts mo;
	dmat_opts_init(&mo);
	struct dmat *m = NULL;
	struct rp_image img = {0};
	struct theme th;
	char *cause = NULL;
	int rc = -1;
	double t0 = db_now();
	if (dmat_open(j->path, -1, &mo, &m, &cause) < 0)
		goto out;
	o->build_s = db_now() - t0;
	o->records = m->records;
	o->accesses = m->accesses;
	o->rows = m->n_rows;
	o->runs = m->n_runs;
	o->mem_peak = m->mem_peak;
	/* the whole launch, as ntop export --view dmat draws it */
	t0 = db_now();
	struct dmat_view v;
	dmat_view_fit(m, &v);
	struct rdp_opts ro;
	render_dmat_png_opts_init(&ro);
	ro.title = "_Z6triadPKfS0_Pfi";
	ro.subtitle = "synthetic dmat launch (dmat_model_bench)";
	if (theme_builtin("dark", &th) < 0 || render_dmat_png_draw(m, &v, &th, &ro, &img, &cause) < 0 ||
	    png_canvas_write(j->png, &img, &cause) < 0)
		goto out;
	o->png_s = db_now() - t0;
	/* the TUI's redraws: from the histogram, then zoomed past it (one pass) */
	static uint32_t grid[400 * 120];
	t0 = db_now();
	if (dmat_bin(m, &v, 400, 120, grid, NULL) < 0 || !dmat_bin_fast(m, &v, 400, 120))
		goto out;
	o->bin_s = db_now() - t0;
	dmat_view_zoom(m, &v, 64, m->span / 2);
	dmat_view_zoom_rows(m, &v, 64, (double)m->n_rows / 2);
	t0 = db_now();
	if (dmat_bin(m, &v, 400, 120, grid, NULL) < 0 || (m->hist_rh > 1 && dmat_bin_fast(m, &v, 400, 120)))
		goto out;
	o->zoom_s = db_now() - t0;
	rc = 0;
out:
	if (rc)
		fprintf(stderr, "dmat_model_bench: %s\n", cause ? cause : "failed");
	free(cause);
	png_canvas_free(&img);
	dmat_free(m);
	return rc;
}

/* ---- main ---- */

static int db_run(const char *dir, uint64_t threads, int keep, int smoke)
{
	char path[512], png[512];
	snprintf(path, sizeof path, "%s/dmat-%llu.ntr", dir, (unsigned long long)threads);
	snprintf(png, sizeof png, "%s/dmat-%llu.png", dir, (unsigned long long)threads);
	struct db_job j = {path, dir, png, threads / DB_THREADS * DB_THREADS};
	struct db_out g, b;
	memset(&g, 0, sizeof g);
	memset(&b, 0, sizeof b);
	if (db_child(db_gen, &j, &g) < 0)
		return -1;
	struct stat st;
	if (stat(path, &st) < 0)
		return -1;
	int rc = db_child(db_build, &j, &b);
	uint64_t want = j.threads * DB_CAP;
	if (rc == 0 && (b.records != want || b.accesses != want || b.runs != 3)) {
		fprintf(stderr, "dmat_model_bench: model has %llu records, %llu accesses, %u ranges; want %llu, %llu, 3\n",
			(unsigned long long)b.records, (unsigned long long)b.accesses, b.runs,
			(unsigned long long)want, (unsigned long long)want);
		rc = -1;
	}
	if (rc == 0 && !smoke)
		printf("%11llu  %9.2f  %9.2f  %8.1f  %9.1f  %8.2f  %8.2f  %8.2f  %6llu\n", (unsigned long long)want,
		       (double)st.st_size / 1e6, (double)st.st_size / (double)want, g.gen_s, b.build_s,
		       (double)want / b.build_s / 1e6, (double)b.maxrss_kb / 1024, (double)b.mem_peak / 1048576,
		       (unsigned long long)b.rows);
	if (rc == 0 && !smoke)
		printf("%11s  png %.2f s; 400x120 grid: whole launch %.1f ms, zoomed 64x %.2f s\n", "", b.png_s,
		       b.bin_s * 1e3, b.zoom_s);
	if (!keep) {
		unlink(path);
		unlink(png);
	}
	return rc;
}

int main(int argc, char **argv)
{
	uint64_t threads[8];
	int n = 0, keep = 0, smoke = 0;
	const char *dir = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc && n < 8)
			threads[n++] = strtoull(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
			dir = argv[++i];
		else if (strcmp(argv[i], "--keep") == 0)
			keep = 1;
		else if (strcmp(argv[i], "--smoke") == 0)
			smoke = 1;
		else {
			fprintf(stderr, "usage: dmat_model_bench [--threads N]... [--dir DIR] [--keep] [--smoke]\n");
			return 2;
		}
	}
	if (smoke && !n)
		threads[n++] = 4096;
	if (!n) {
		threads[n++] = 1600000; /* 102.4M records */
		threads[n++] = 160000;  /* 10.24M */
	}
	char tmp[] = "/tmp/ntop-dmat-bench-XXXXXX";
	if (!dir && !(dir = mkdtemp(tmp))) {
		perror("mkdtemp");
		return 1;
	}
	if (!smoke) {
		printf("dmat_model_bench (%s build): %u threads per block, %u records of %u B per thread, CPU only\n",
		       NTOP_BUILD_TYPE, DB_THREADS, DB_CAP, DB_REC);
		printf("%11s  %9s  %9s  %8s  %9s  %8s  %8s  %8s  %6s\n", "records", "file MB", "B/record", "write s",
		       "build s", "Mrec/s", "RSS MiB", "heap MiB", "pages");
	}
	int rc = 0;
	for (int i = 0; i < n && rc == 0; i++)
		rc = db_run(dir, threads[i], keep, smoke);
	if (dir == tmp && !keep)
		rmdir(tmp);
	if (rc)
		fprintf(stderr, "dmat_model_bench: failed\n");
	return rc ? 1 : 0;
}
