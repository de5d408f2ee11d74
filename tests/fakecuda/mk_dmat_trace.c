/* Writes a synthetic trace directory with dmat results whose heatmaps have
 * known answers, for tests/regress/tui_dmat.sh:
 *
 *   mk_dmat_trace DIR
 *
 * pid 700, two kernels on an H100 (132 SMs):
 *
 *  kid 1 copy_read(float const*, float*), launch seq 4: 1 block of 64 threads,
 *    thread map "dmat" {addr:u64, clock:u32, sizekind:u32}, cap 2. Thread u
 *    loads 4 bytes from page u of A (0x7f0000000000, 64 pages) at cycle
 *    u * 100, then stores 4 bytes to page u % 16 of B (0x7f0100000000, 16
 *    pages) at cycle 6400 + u * 25. Threads 0..7 tried a third save: 8
 *    dropped. The SM clock starts 4096 cycles before the 32-bit wrap, so the
 *    model must unwrap it. Totals: 128 accesses (64 ld, 64 st), 512 B, 80
 *    pages in 2 ranges, span 7976 cycles; A is a rising diagonal over cycles
 *    0..6300, B has nothing before cycle 6400.
 *
 *  kid 2 gtime_scan(float const*), launch seq 5: 2 blocks of 32 threads, map
 *    "dmat" {addr:u64, clock:u32, sizekind:u32, gtime:u64}, cap 1. Thread j
 *    of block b loads 8 bytes from page j of C (0x7f0200000000, 32 pages) at
 *    SM cycle j * 10 of its block (block clocks far apart) and global time
 *    2000000 + b * 50000 + j * 5 ns. SM time: 64 accesses over 311 cycles
 *    (both blocks overlaid); global time: span 50156 ns (axis in µs).
 *
 * The records past each unit's count are filled with garbage (0xa5) that a
 * correct reader never counts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "trace/result.h"

#define PAGE 4096ull
#define A_BASE 0x7f0000000000ull
#define B_BASE 0x7f0100000000ull
#define C_BASE 0x7f0200000000ull
#define KIND_LOAD 1u
#define KIND_STORE 2u

static void mk_field(struct probe_map *pm, const char *name, enum probe_type t)
{
	struct probe_field *f = &pm->fields[pm->n_fields++];
	snprintf(f->name, sizeof f->name, "%s", name);
	f->type = t;
	f->offset = pm->rec_size;
	pm->rec_size += t;
}

static struct result *mk_result(uint64_t seq, uint32_t kid, const char *kernel, uint32_t blocks, uint32_t threads,
				uint32_t cap, int gtime)
{
	struct result *r = calloc(1, sizeof *r);
	struct result_map *m = r ? calloc(1, sizeof *m) : NULL;
	if (!m) {
		free(r);
		return NULL;
	}
	r->pid = 700;
	r->seq = seq;
	r->kernel_id = kid;
	r->kernel = strdup(kernel);
	r->probes = strdup("dmat");
	r->grid[0] = blocks;
	r->grid[1] = r->grid[2] = 1;
	r->block[0] = threads;
	r->block[1] = r->block[2] = 1;
	r->device_sms = 132;
	r->device_cc = 90;
	r->sm_clock_khz = 1980000;
	r->n_maps = 1;
	r->maps = m;
	snprintf(m->map.name, sizeof m->map.name, "dmat");
	m->map.level = PROBE_LEVEL_THREAD;
	m->map.cap = cap;
	m->stored = m->map.cap; /* a whole map: every slot */
	m->slot_major = 1; /* as the hook writes thread maps */
	mk_field(&m->map, "addr", PROBE_U64);
	mk_field(&m->map, "clock", PROBE_U32);
	mk_field(&m->map, "sizekind", PROBE_U32);
	if (gtime)
		mk_field(&m->map, "gtime", PROBE_U64);
	m->units = (uint64_t)blocks * threads;
	m->counts = calloc(m->units, 4);
	size_t bytes = m->units * cap * m->map.rec_size;
	m->records = malloc(bytes);
	if (!r->kernel || !r->probes || !m->counts || !m->records) {
		result_free(r);
		return NULL;
	}
	memset(m->records, 0xa5, bytes);
	return r;
}

/* Record `slot` of unit u; the unit's count grows to cover it. */
static void mk_put(struct result *r, uint64_t u, uint32_t slot, uint64_t addr, uint32_t clock, uint32_t size,
		   uint32_t kind, uint64_t gtime)
{
	struct result_map *m = &r->maps[0];
	uint8_t *rec = (uint8_t *)result_map_record(m, u, slot);
	uint32_t sk = size | kind << 24;
	memcpy(rec, &addr, 8);
	memcpy(rec + 8, &clock, 4);
	memcpy(rec + 12, &sk, 4);
	if (m->map.rec_size == 24)
		memcpy(rec + 16, &gtime, 8);
	if (m->counts[u] < (slot + 1) * m->map.rec_size)
		m->counts[u] = (slot + 1) * m->map.rec_size;
}

static struct result *mk_copy_read(void)
{
	struct result *r = mk_result(4, 1, "_Z9copy_readPKfPf", 1, 64, 2, 0);
	if (!r)
		return NULL;
	const uint32_t base = 0xfffff000u; /* wraps at cycle 4096 */
	for (uint32_t u = 0; u < 64; u++) {
		mk_put(r, u, 0, A_BASE + u * PAGE + 4 * u, base + u * 100, 4, KIND_LOAD, 0);
		mk_put(r, u, 1, B_BASE + (u % 16) * PAGE + 4 * u, base + 6400 + u * 25, 4, KIND_STORE, 0);
		if (u < 8)
			r->maps[0].counts[u] = 3 * r->maps[0].map.rec_size; /* a third save past the cap */
	}
	return r;
}

static struct result *mk_gtime_scan(void)
{
	struct result *r = mk_result(5, 2, "_Z10gtime_scanPKf", 2, 32, 1, 1);
	if (!r)
		return NULL;
	static const uint32_t clock0[2] = {1000, 900000000};
	for (uint32_t b = 0; b < 2; b++)
		for (uint32_t j = 0; j < 32; j++)
			mk_put(r, b * 32 + j, 0, C_BASE + j * PAGE, clock0[b] + j * 10, 8, KIND_LOAD,
			       2000000 + b * 50000 + j * 5);
	return r;
}

static int mk_write(const char *dir, const char *name, struct result *r)
{
	char *cause = NULL;
	int rc = r ? result_write(dir, name, r, &cause) : -1;
	if (rc < 0)
		fprintf(stderr, "mk_dmat_trace: %s: %s\n", name, cause ? cause : "out of memory");
	free(cause);
	result_free(r);
	return rc;
}

/* A directory that may already exist. */
static int mk_dir(const char *path)
{
	struct stat st;
	if (mkdir(path, 0755) == 0 || (stat(path, &st) == 0 && S_ISDIR(st.st_mode)))
		return 0;
	perror(path);
	return -1;
}

static const char events[] =
	"record t=1000 pid=699 argv=./copy_read version=0.1.0\n"
	"hello t=2000 pid=700 ppid=699 exe=/tmp/copy_read hook=0.1.0 driver=/usr/lib/libcuda.so.1\n"
	"device t=3000 pid=700 ordinal=0 name=NVIDIA%20H100%2080GB%20HBM3 cc=90 sms=132 clock_khz=1980000\n"
	"module t=4000 pid=700 mid=1 api=cuLibraryLoadData kind=fatbin size=4096 ptx=1 sass=1 source=app\n"
	"kernel t=5000 pid=700 kid=1 mid=1 ptx=1 name=_Z9copy_readPKfPf\n"
	"kernel t=6000 pid=700 kid=2 mid=1 ptx=1 name=_Z10gtime_scanPKf\n"
	"launch t=7000 pid=700 kid=1 seq=1 api=cuLaunchKernel grid=1,1,1 block=64,1,1 smem=0 stream=0x0 capture=0 "
	"probed=0\n"
	"instrument t=8000 pid=700 kid=1 status=ok probes=dmat reason= regs_orig=12 regs_probed=20 sites=2 ms_jit=120\n"
	"launch t=9000 pid=700 kid=1 seq=4 api=cuLaunchKernel grid=1,1,1 block=64,1,1 smem=0 stream=0x0 capture=0 "
	"probed=1 occ=8\n"
	"result t=10000 pid=700 kid=1 seq=4 file=results/700-4.ntr maps=1 records=128 dropped=8 bytes=1 ns=1\n"
	"instrument t=11000 pid=700 kid=2 status=ok probes=dmat reason= regs_orig=10 regs_probed=18 sites=1 ms_jit=110\n"
	"launch t=12000 pid=700 kid=2 seq=5 api=cuLaunchKernel grid=2,1,1 block=32,1,1 smem=0 stream=0x0 capture=0 "
	"probed=1 occ=8\n"
	"result t=13000 pid=700 kid=2 seq=5 file=results/700-5.ntr maps=1 records=64 dropped=0 bytes=1 ns=1\n"
	"exit t=14000 pid=700 launches=3\n";

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: mk_dmat_trace DIR\n");
		return 2;
	}
	char path[4096];
	snprintf(path, sizeof path, "%s/results", argv[1]);
	if (mk_dir(argv[1]) < 0 || mk_dir(path) < 0)
		return 1;
	if (mk_write(path, "700-4.ntr", mk_copy_read()) < 0 || mk_write(path, "700-5.ntr", mk_gtime_scan()) < 0)
		return 1;
	snprintf(path, sizeof path, "%s/events.log", argv[1]);
	FILE *f = fopen(path, "w");
	if (!f || fputs(events, f) < 0) {
		perror(path);
		if (f)
			fclose(f);
		return 1;
	}
	return fclose(f) == 0 ? 0 : 1;
}
