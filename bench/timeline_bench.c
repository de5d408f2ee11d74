/* Timeline benchmark: how long the path from a probed launch's block_sched
 * records to a picture takes for a big launch (1M blocks by default). It
 * builds a synthetic result in memory (warp records of a 132-SM dispatch, as
 * a block_sched probe would write them), then times, each as the median of
 * --runs runs:
 *   analyze   block_sched_analyze (records -> blocks, per-SM replay)
 *   timeline  timeline_create (lanes, slots, axis times)
 *   term      render_term_draw of a 200x60 cell grid, whole launch in view
 *   png       render_png_draw of 1600x900 and render_png_write to a file
 * Every stage's output is also checked (block and warp counts, lanes, header
 * text, PNG signature), so `--smoke` (a small launch, CTest) proves the
 * benchmark still works without asserting any time.
 *
 * Usage: timeline_bench [--blocks N] [--runs N] [--smoke] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/strbuf.h"
#include "common/timeutil.h"
#include "trace/result.h"
#include "viz/block_sched.h"
#include "viz/cellgrid.h"
#include "viz/render_png.h"
#include "viz/render_term.h"
#include "viz/theme.h"
#include "viz/timeline.h"

#ifndef NTOP_BUILD_TYPE
#define NTOP_BUILD_TYPE "unknown"
#endif

#define TB_SMS 132          /* H100/H200 */
#define TB_OCC 8            /* resident blocks per SM */
#define TB_THREADS 128      /* 4 warps per block */
#define TB_REC 24           /* start u64, elapsed u32, smid u32, gstart u64 */
#define TB_CLOCK_KHZ 1980000
#define TB_TERM_W 200
#define TB_TERM_H 60
#define TB_MAX_RUNS 64

static int tb_failures;

#define TB_CHECK(cond, ...)                                                   \
	do {                                                                  \
		if (!(cond)) {                                                \
			fprintf(stderr, "timeline_bench: check failed: " __VA_ARGS__); \
			fputc('\n', stderr);                                  \
			tb_failures++;                                        \
		}                                                             \
	} while (0)

static uint64_t tb_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* ---- the synthetic launch ---- */

/* Min-heap of residency slots keyed by the cycle they become free, so each
 * block goes to the earliest free slot in O(log slots) like the hardware
 * dispatcher would place it. */
struct tb_heap {
	uint64_t *free_at;
	uint32_t *slot;
	uint32_t n;
};

static void tb_heap_down(struct tb_heap *h, uint32_t i)
{
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < h->n && h->free_at[l] < h->free_at[m])
			m = l;
		if (r < h->n && h->free_at[r] < h->free_at[m])
			m = r;
		if (m == i)
			return;
		uint64_t f = h->free_at[i];
		uint32_t s = h->slot[i];
		h->free_at[i] = h->free_at[m];
		h->slot[i] = h->slot[m];
		h->free_at[m] = f;
		h->slot[m] = s;
		i = m;
	}
}

static void tb_fill_records(struct result_map *m, uint32_t blocks)
{
	const uint32_t wpb = TB_THREADS / 32, nslots = TB_SMS * TB_OCC;
	struct tb_heap h = {calloc(nslots, 8), calloc(nslots, 4), nslots};
	uint64_t rng = 0x9e3779b97f4a7c15ull;
	/* the dispatcher ramps up over the SMs; the array is a valid heap as is */
	for (uint32_t s = 0; s < nslots; s++) {
		h.slot[s] = s;
		h.free_at[s] = (uint64_t)(s % TB_SMS) * 24 + s / TB_SMS;
	}
	for (uint32_t b = 0; b < blocks; b++) {
		uint32_t sm = h.slot[0] % TB_SMS;
		uint64_t t = h.free_at[0] + 150 + tb_rand(&rng) % 200; /* kernel-wide cycles */
		uint64_t dur = 3000 + tb_rand(&rng) % 1500 + (tb_rand(&rng) % 40 == 0 ? 6000 : 0);
		h.free_at[0] = t + dur;
		tb_heap_down(&h, 0);
		uint64_t sm_off = 1000000007ull * (sm * 7 + 3) % 90000000000ull; /* clocks differ per SM */
		for (uint32_t w = 0; w < wpb; w++) {
			uint64_t u = (uint64_t)b * wpb + w;
			uint8_t *rec = m->records + u * TB_REC;
			uint64_t ws = sm_off + t + w * 7;
			uint32_t el = (uint32_t)(dur - w * 7 - tb_rand(&rng) % 40);
			uint64_t g = 1745552787000000000ull + (t + w * 7) * 1000 / 1980;
			memcpy(rec, &ws, 8);
			memcpy(rec + 8, &el, 4);
			memcpy(rec + 12, &sm, 4);
			memcpy(rec + 16, &g, 8);
			m->counts[u] = TB_REC;
		}
	}
	free(h.free_at);
	free(h.slot);
}

static struct result *tb_result(uint32_t blocks)
{
	static const struct probe_field f[] = {
		{"start", PROBE_U64, 0, 0}, {"elapsed", PROBE_U32, 8, 0}, {"smid", PROBE_U32, 12, 0}, {"gstart", PROBE_U64, 16, 0}};
	struct result *r = calloc(1, sizeof *r);
	r->pid = 1;
	r->seq = 1;
	r->kernel_id = 1;
	r->kernel = strdup("_Z5benchPf");
	r->probes = strdup("block_sched");
	r->grid[0] = blocks;
	r->grid[1] = r->grid[2] = 1;
	r->block[0] = TB_THREADS;
	r->block[1] = r->block[2] = 1;
	r->device_sms = TB_SMS;
	r->device_cc = 90;
	r->sm_clock_khz = TB_CLOCK_KHZ;
	r->n_maps = 1;
	r->maps = calloc(1, sizeof *r->maps);
	struct result_map *m = &r->maps[0];
	snprintf(m->map.name, sizeof m->map.name, "block_sched");
	m->map.level = PROBE_LEVEL_WARP;
	m->map.cap = 1;
	m->stored = m->map.cap;
	m->map.rec_size = TB_REC;
	m->map.n_fields = 4;
	memcpy(m->map.fields, f, sizeof f);
	m->units = (uint64_t)blocks * (TB_THREADS / 32);
	m->counts = calloc(m->units, 4);
	m->records = calloc(m->units, TB_REC);
	if (!r->kernel || !r->probes || !m->counts || !m->records) {
		result_free(r);
		return NULL;
	}
	m->records_written = m->units;
	tb_fill_records(m, blocks);
	return r;
}

/* ---- timing ---- */

struct tb_times {
	const char *what;
	double ms[TB_MAX_RUNS];
	int n;
};

static int tb_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void tb_print(struct tb_times *t)
{
	double s[TB_MAX_RUNS];
	memcpy(s, t->ms, sizeof(double) * (size_t)t->n);
	qsort(s, (size_t)t->n, sizeof *s, tb_cmp_double);
	double med = t->n % 2 ? s[t->n / 2] : (s[t->n / 2 - 1] + s[t->n / 2]) / 2;
	printf("%-9s median %9.2f ms  min %9.2f  max %9.2f  (%d runs)\n", t->what, med, s[0], s[t->n - 1], t->n);
}

static double tb_ms_since(uint64_t t0)
{
	return (double)(time_mono_ns() - t0) / 1e6;
}

/* ---- the stages, each checked ---- */

static struct block_sched *tb_analyze(const struct result *r, uint32_t blocks, struct tb_times *tt)
{
	struct block_sched *bs = NULL;
	char *cause = NULL;
	uint64_t t0 = time_mono_ns();
	if (block_sched_analyze(r, 0, TB_OCC, &bs, &cause) < 0) {
		TB_CHECK(0, "block_sched_analyze: %s", cause ? cause : "?");
		free(cause);
		return NULL;
	}
	tt->ms[tt->n++] = tb_ms_since(t0);
	TB_CHECK(bs->n_blocks == blocks && bs->n_blocks_recorded == blocks, "blocks %llu/%llu, want %u",
		 (unsigned long long)bs->n_blocks_recorded, (unsigned long long)bs->n_blocks, blocks);
	TB_CHECK(bs->warps_recorded == r->maps[0].units, "warps recorded %llu",
		 (unsigned long long)bs->warps_recorded);
	uint32_t want_sms = blocks < TB_SMS ? blocks : TB_SMS;
	TB_CHECK(bs->n_sms == want_sms, "SMs %u, want %u", bs->n_sms, want_sms);
	TB_CHECK(bs->max_concurrent >= 1 && bs->max_concurrent <= TB_OCC, "max concurrent %u", bs->max_concurrent);
	TB_CHECK(bs->smid_mismatch_blocks == 0, "smid mismatches %llu", (unsigned long long)bs->smid_mismatch_blocks);
	return bs;
}

static struct timeline *tb_timeline(const struct block_sched *bs, struct tb_times *tt)
{
	struct timeline *tl = NULL;
	char *cause = NULL;
	uint64_t t0 = time_mono_ns();
	if (timeline_create(bs, TL_TIME_GLOBAL, &(struct tl_device){ TB_CLOCK_KHZ, TB_SMS, 0 }, &tl, &cause) < 0) {
		TB_CHECK(0, "timeline_create: %s", cause ? cause : "?");
		free(cause);
		return NULL;
	}
	tt->ms[tt->n++] = tb_ms_since(t0);
	TB_CHECK(tl->n_lanes == bs->n_sms, "lanes %u", tl->n_lanes);
	TB_CHECK(tl->time == TL_TIME_GLOBAL, "fell back to SM time: %s", tl->note);
	TB_CHECK(tl->stats.span > 0, "empty span");
	return tl;
}

static void tb_term(const struct timeline *tl, const struct theme *th, struct tb_times *tt)
{
	struct cellgrid *g = cellgrid_create(TB_TERM_W, TB_TERM_H);
	struct rt_opts o;
	struct tl_view v;
	render_term_opts_init(&o);
	timeline_view_fit(tl, &v);
	uint64_t t0 = time_mono_ns();
	int rc = g ? render_term_draw(g, tl, &v, th, &o) : -1;
	tt->ms[tt->n++] = tb_ms_since(t0);
	TB_CHECK(rc == 0, "render_term_draw failed");
	if (rc == 0) {
		struct strbuf sb;
		strbuf_init(&sb);
		cellgrid_row_text(g, 0, &sb);
		TB_CHECK(sb.len && strstr(sb.data, "blocks"), "header row: '%s'", sb.len ? sb.data : "");
		strbuf_done(&sb);
	}
	cellgrid_free(g);
}

/* tt[0]: draw + write, tt[1]: draw, tt[2]: write */
static void tb_png(const struct timeline *tl, const struct theme *th, const char *path, struct tb_times *tt)
{
	struct rp_opts o;
	struct tl_view v;
	struct rp_image img = {0};
	char *cause = NULL;
	render_png_opts_init(&o);
	o.title = "bench(float*)";
	timeline_view_fit(tl, &v);
	uint64_t t0 = time_mono_ns();
	int rc = render_png_draw(tl, &v, th, &o, &img, &cause);
	uint64_t t1 = time_mono_ns();
	if (rc == 0)
		rc = render_png_write(path, &img, &cause);
	tt[0].ms[tt[0].n++] = tb_ms_since(t0);
	tt[1].ms[tt[1].n++] = (double)(t1 - t0) / 1e6;
	tt[2].ms[tt[2].n++] = tb_ms_since(t1);
	TB_CHECK(rc == 0, "png: %s", cause ? cause : "?");
	TB_CHECK(img.w == RP_DEFAULT_W && img.h == RP_DEFAULT_H, "image %dx%d", img.w, img.h);
	free(cause);
	rp_image_free(&img);
	FILE *f = fopen(path, "rb");
	unsigned char sig[8] = {0};
	TB_CHECK(f && fread(sig, 1, 8, f) == 8 && memcmp(sig, "\x89PNG\r\n\x1a\n", 8) == 0, "%s is not a PNG", path);
	if (f)
		fclose(f);
}

/* ---- main ---- */

static int tb_usage(void)
{
	fprintf(stderr, "usage: timeline_bench [--blocks N] [--runs N] [--smoke]\n");
	return 2;
}

int main(int argc, char **argv)
{
	long blocks = 1 << 20, runs = 5;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--smoke")) {
			blocks = 5000;
			runs = 2;
		} else if (!strcmp(argv[i], "--blocks") && i + 1 < argc) {
			blocks = atol(argv[++i]);
		} else if (!strcmp(argv[i], "--runs") && i + 1 < argc) {
			runs = atol(argv[++i]);
		} else {
			return tb_usage();
		}
	}
	if (blocks < 1 || blocks > (1l << 26) || runs < 1 || runs > TB_MAX_RUNS)
		return tb_usage();
	struct theme th;
	if (theme_builtin("dark", &th) < 0)
		return 1;
	char dir[] = "/tmp/ntop-tlbench.XXXXXX", png[64];
	if (!mkdtemp(dir))
		return 1;
	snprintf(png, sizeof png, "%s/t.png", dir);

	printf("timeline_bench: %ld blocks x %d threads on %d SMs (%d resident), build %s%s\n", blocks, TB_THREADS,
	       TB_SMS, TB_OCC, NTOP_BUILD_TYPE,
#if defined(__SANITIZE_ADDRESS__)
	       " (ASan+UBSan)"
#else
	       ""
#endif
	);
	uint64_t t0 = time_mono_ns();
	struct result *r = tb_result((uint32_t)blocks);
	if (!r) {
		fprintf(stderr, "timeline_bench: out of memory\n");
		rmdir(dir);
		return 1;
	}
	printf("synthetic records: %.0f ms (not timed below)\n", tb_ms_since(t0));

	struct tb_times ta = {"analyze", {0}, 0}, tt = {"timeline", {0}, 0}, tr = {"term", {0}, 0};
	struct tb_times tp[3] = {{"png", {0}, 0}, {" draw", {0}, 0}, {" write", {0}, 0}};
	for (long i = 0; i < runs && !tb_failures; i++) {
		struct block_sched *bs = tb_analyze(r, (uint32_t)blocks, &ta);
		struct timeline *tl = bs ? tb_timeline(bs, &tt) : NULL;
		if (tl) {
			tb_term(tl, &th, &tr);
			tb_png(tl, &th, png, tp);
		}
		timeline_free(tl);
		block_sched_free(bs);
	}
	unlink(png);
	rmdir(dir);
	result_free(r);
	if (tb_failures) {
		fprintf(stderr, "timeline_bench: %d checks failed\n", tb_failures);
		return 1;
	}
	tb_print(&ta);
	tb_print(&tt);
	tb_print(&tr);
	for (int i = 0; i < 3; i++)
		tb_print(&tp[i]);
	return 0;
}
