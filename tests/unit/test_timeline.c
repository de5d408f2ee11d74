/* Timeline model and terminal renderer on hand-built block_sched data with
 * answers worked out by hand: lanes and slots, times in both axis modes,
 * viewport arithmetic, binning (also of a million blocks: totals), hit
 * testing, colour scales, header text, colour downgrades and the exact
 * half-block / ASCII cells of tiny timelines.
 *
 * Given `--write-fixture DIR` it instead writes a synthetic trace directory
 * (events.log and result files) for tests/regress/cli_export.sh. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testlib.h"
#include "trace/result.h"
#include "viz/block_sched.h"
#include "viz/cellgrid.h"
#include "viz/render_term.h"
#include "viz/timeline.h"

/* ---- hand-built block_sched ---- */

struct hb {
	uint32_t smid, slot;
	uint64_t start, end, gstart, index;
};

/* blocks must be given sorted by (smid, start). */
static struct block_sched *bs_make(const struct hb *b, uint32_t n, uint64_t grid_blocks)
{
	struct block_sched *bs = calloc(1, sizeof *bs);
	bs->blocks = calloc(n ? n : 1, sizeof *bs->blocks);
	bs->sms = calloc(n ? n : 1, sizeof *bs->sms);
	bs->n_blocks = grid_blocks;
	bs->n_blocks_recorded = n;
	bs->waves = -1;
	for (uint32_t i = 0; i < n; i++) {
		struct bs_block *x = &bs->blocks[i];
		x->smid = b[i].smid;
		x->slot = b[i].slot;
		x->start = b[i].start;
		x->end = b[i].end;
		x->gstart = b[i].gstart;
		x->index = b[i].index;
		x->warps = 1;
		if (i == 0 || b[i - 1].smid != b[i].smid) {
			bs->sms[bs->n_sms].smid = b[i].smid;
			bs->sms[bs->n_sms].first = i;
			bs->n_sms++;
		}
		bs->sms[bs->n_sms - 1].blocks++;
	}
	return bs;
}

static void bs_free(struct block_sched *bs)
{
	free(bs->blocks);
	free(bs->sms);
	free(bs);
}

/* SM 2: D 50000..50400; SM 5: A 1000..1100 (slot 0), B 1010..1210 (slot 1),
 * C 1100..1150 (slot 0). Global starts: D 1990, A 2000, B 2005, C 2050 ns. */
static const struct hb four[] = {
	{2, 0, 50000, 50400, 1990, 2}, /* D */
	{5, 0, 1000, 1100, 2000, 0},   /* A */
	{5, 1, 1010, 1210, 2005, 1},   /* B */
	{5, 0, 1100, 1150, 2050, 3},   /* C */
};
enum { D, A, B, C };

static int near(double a, double b)
{
	return fabs(a - b) < 1e-9 * (fabs(a) + fabs(b) + 1);
}

static void test_lanes_and_times(void)
{
	struct block_sched *bs = bs_make(four, 4, 4);
	struct timeline *tl = NULL;
	char *cause = NULL;
	CHECKF(timeline_create(bs, TL_TIME_SM, &(struct tl_device){ 1000000, 132, 0 }, &tl, &cause) == 0, "%s", cause);
	if (!tl)
		return;
	CHECK_EQ_INT(tl->n_lanes, 2);
	CHECK(tl->lanes[0].smid == 2 && tl->lanes[0].first == 0 && tl->lanes[0].n == 1 && tl->lanes[0].rows == 1);
	CHECK(tl->lanes[1].smid == 5 && tl->lanes[1].first == 1 && tl->lanes[1].n == 3 && tl->lanes[1].rows == 2);
	CHECK_EQ_INT(tl->lanes[1].origin, 1000);
	/* SM mode: every SM from its own first block */
	CHECK(tl->t_start[D] == 0 && tl->t_end[D] == 400);
	CHECK(tl->t_start[A] == 0 && tl->t_end[A] == 100);
	CHECK(tl->t_start[B] == 10 && tl->t_end[B] == 210);
	CHECK(tl->t_start[C] == 100 && tl->t_end[C] == 150);
	CHECK(tl->stats.span == 400 && tl->tail_from == 360);
	CHECK_EQ_INT(tl->stats.tail_blocks, 1);
	CHECK(timeline_block_is_tail(tl, D) && !timeline_block_is_tail(tl, B));
	CHECK(strcmp(tl->unit, "cycles") == 0 && strstr(tl->axis_label, "each SM"));
	CHECK(tl->dur_min == 50 && tl->dur_max == 400 && tl->index_max == 3);
	CHECK(tl->note[0] == 0);
	timeline_free(tl);

	/* global, 1 GHz: aligned on the earliest gstart (D, 1990 ns) */
	CHECKF(timeline_create(bs, TL_TIME_GLOBAL, &(struct tl_device){ 1000000, 132, 0 }, &tl, &cause) == 0, "%s", cause);
	CHECK(tl->time == TL_TIME_GLOBAL && tl->note[0] == 0 && strcmp(tl->unit, "ns") == 0);
	CHECK(tl->t_start[D] == 0 && tl->t_end[D] == 400);
	CHECK(tl->t_start[A] == 10 && tl->t_end[A] == 110);
	CHECK(tl->t_start[B] == 15 && tl->t_end[B] == 215);
	CHECK(tl->t_start[C] == 60 && tl->t_end[C] == 110);
	timeline_free(tl);

	/* global, 2 GHz: a cycle is 0.5 ns */
	timeline_create(bs, TL_TIME_GLOBAL, &(struct tl_device){ 2000000, 132, 0 }, &tl, &cause);
	CHECK(near(tl->t_end[D], 200) && near(tl->t_end[A], 60) && near(tl->t_end[B], 115) && near(tl->t_end[C], 85));
	CHECK(near(tl->stats.span, 200) && near(tl->tail_from, 180));
	CHECK(timeline_block_is_tail(tl, D) && !timeline_block_is_tail(tl, B));
	timeline_free(tl);

	/* unknown clock, missing global timer: fall back to SM cycles and say so */
	timeline_create(bs, TL_TIME_GLOBAL, &(struct tl_device){ 0, 132, 0 }, &tl, &cause);
	CHECK(tl->time == TL_TIME_SM && strstr(tl->note, "clock rate unknown") && tl->t_end[B] == 210);
	timeline_free(tl);
	bs->blocks[C].gstart = 0;
	timeline_create(bs, TL_TIME_GLOBAL, &(struct tl_device){ 1000000, 132, 0 }, &tl, &cause);
	CHECK(tl->time == TL_TIME_SM && strstr(tl->note, "no global timer"));
	timeline_free(tl);
	free(cause);
	bs_free(bs);
}

static char *row_text(const struct cellgrid *g, int y);

/* An AMD GPU: GTIMER records are 100 MHz ticks (10 ns each), lanes are
 * compute units. The same blocks as `four`, their gstart read as ticks. */
static void test_amd(void)
{
	struct block_sched *bs = bs_make(four, 4, 4);
	struct timeline *tl = NULL;
	char *cause = NULL;
	CHECKF(timeline_create(bs, TL_TIME_GLOBAL, &(struct tl_device){ 1000000, 104, 1 }, &tl, &cause) == 0, "%s",
	       cause);
	if (!tl)
		return;
	/* gstart ticks since D's (1990): A 10 ticks = 100 ns, B 150 ns, C 600 ns; ends add cycles at 1 GHz */
	CHECK(tl->time == TL_TIME_GLOBAL && strcmp(tl->unit, "ns") == 0 && tl->gtimer_ns == 10);
	CHECK(tl->t_start[D] == 0 && tl->t_end[D] == 400);
	CHECK(tl->t_start[A] == 100 && tl->t_end[A] == 200);
	CHECK(tl->t_start[B] == 150 && tl->t_end[B] == 350);
	CHECK(tl->t_start[C] == 600 && tl->t_end[C] == 650);
	CHECK(near(tl->stats.span, 650));
	CHECKF(strstr(tl->axis_label, "(10 ns ticks)") && strstr(tl->axis_label, "all CUs aligned") &&
		       !strstr(tl->axis_label, "SM"),
	       "%s", tl->axis_label);
	char h[256];
	timeline_header(tl, h, sizeof h);
	CHECKF(strstr(h, "2/104 CUs") && strstr(h, "waves/CU") && strstr(h, "resident/CU") && !strstr(h, "SM"), "%s",
	       h);
	CHECK(strcmp(tl->lane, "CU") == 0 && strcmp(tl->warps, "waves") == 0);
	timeline_free(tl);
	/* CU cycles, and what is missing said per CU */
	timeline_create(bs, TL_TIME_SM, &(struct tl_device){ 1000000, 104, 1 }, &tl, &cause);
	CHECKF(strstr(tl->axis_label, "CU clock cycles, each CU") && !strstr(tl->axis_label, "SM"), "%s",
	       tl->axis_label);
	timeline_free(tl);
	timeline_create(bs, TL_TIME_GLOBAL, &(struct tl_device){ 0, 104, 1 }, &tl, &cause);
	CHECKF(tl->time == TL_TIME_SM && strstr(tl->note, "CU clock rate unknown") && !strstr(tl->note, "SM"), "%s",
	       tl->note);
	timeline_free(tl);
	/* the terminal rendering: the lane caption and the legend say CU */
	struct theme th;
	theme_builtin("dark", &th);
	struct rt_opts o;
	render_term_opts_init(&o);
	timeline_create(bs, TL_TIME_SM, &(struct tl_device){ 1000000, 104, 1 }, &tl, &cause);
	struct tl_view v;
	timeline_view_fit(tl, &v);
	struct cellgrid *g = cellgrid_create(100, 8);
	CHECK(render_term_draw(g, tl, &v, &th, &o) == 0);
	int caption = 0, legend = 0, sm = 0;
	for (int y = 0; y < g->h; y++) {
		char *r = row_text(g, y);
		caption |= r && strncmp(r, "CU", 2) == 0;
		legend |= r && strstr(r, "each CU from its first block") != NULL;
		sm |= r && strstr(r, "SM") != NULL;
		free(r);
	}
	CHECK(caption && legend && !sm);
	timeline_free(tl);
	cellgrid_free(g);
	free(cause);
	bs_free(bs);
}

static void test_view(void)
{
	struct block_sched *bs = bs_make(four, 4, 4);
	struct timeline *tl = NULL;
	timeline_create(bs, TL_TIME_SM, &(struct tl_device){ 0, 0, 0 }, &tl, NULL);
	struct tl_view v;
	timeline_view_fit(tl, &v);
	CHECK(v.t0 == 0 && v.t1 == 400 && v.lane0 == 0 && v.n_lanes == 2);
	timeline_view_zoom(tl, &v, 2, 100);
	CHECK(v.t0 == 50 && v.t1 == 250);
	timeline_view_pan(tl, &v, 0.5);
	CHECK(v.t0 == 150 && v.t1 == 350);
	timeline_view_pan(tl, &v, 1.0); /* clamped at the end */
	CHECK(v.t0 == 200 && v.t1 == 400);
	timeline_view_zoom(tl, &v, 2, 400);
	CHECK(v.t0 == 300 && v.t1 == 400);
	timeline_view_zoom(tl, &v, 0.25, 300); /* out past everything: fit */
	CHECK(v.t0 == 0 && v.t1 == 400);
	timeline_view_zoom(tl, &v, 1000, 0); /* not below 4 units */
	CHECK(v.t0 == 0 && v.t1 == 4);
	timeline_view_pan(tl, &v, -3);
	CHECK(v.t0 == 0 && v.t1 == 4);
	/* column arithmetic: 8 columns over [0, 4) */
	CHECK(timeline_x_to_t(&v, 8, 2) == 1.0 && timeline_t_to_x(&v, 8, 3) == 6.0);
	/* lanes */
	v.n_lanes = 1;
	timeline_view_scroll(tl, &v, 5);
	CHECK(v.lane0 == 1 && v.n_lanes == 1);
	timeline_view_scroll(tl, &v, -7);
	CHECK(v.lane0 == 0);
	v.n_lanes = 9;
	timeline_view_clamp(tl, &v);
	CHECK(v.n_lanes == 2 && v.lane0 == 0);
	timeline_free(tl);
	bs_free(bs);
}

static void test_bins_and_hits(void)
{
	struct block_sched *bs = bs_make(four, 4, 4);
	struct timeline *tl = NULL;
	timeline_create(bs, TL_TIME_SM, &(struct tl_device){ 0, 0, 0 }, &tl, NULL);
	struct tl_view v;
	timeline_view_fit(tl, &v);
	struct tl_bin b[8];
	/* lane 1 (SM 5), 4 columns of 100 cycles, one row per slot */
	CHECK(timeline_bin_lane(tl, &v, 1, 4, 2, b) == 0);
	CHECK(b[0].block == A && b[0].busy == 1.0f && b[0].count == 1);
	CHECK(b[1].block == C && b[1].busy == 0.5f && b[1].count == 1 && !b[1].edge);
	CHECK(b[2].block == TL_NONE && b[3].block == TL_NONE && b[2].count == 0);
	CHECK(b[4].block == B && fabsf(b[4].busy - 0.9f) < 1e-6 && b[4].edge);
	CHECK(b[5].block == B && b[5].busy == 1.0f && !b[5].edge);
	CHECK(b[6].block == B && fabsf(b[6].busy - 0.1f) < 1e-6);
	CHECK(b[7].block == TL_NONE);
	/* both slots in one row: busy is per slot, the biggest share wins */
	timeline_bin_lane(tl, &v, 1, 4, 1, b);
	CHECK(b[0].block == A && fabsf(b[0].busy - 0.95f) < 1e-6 && b[0].count == 2);
	CHECK(b[1].block == B && fabsf(b[1].busy - 0.75f) < 1e-6 && b[1].count == 2);
	CHECK(b[2].block == B && fabsf(b[2].busy - 0.05f) < 1e-6 && b[3].block == TL_NONE);
	CHECK(timeline_bin_lane(tl, &v, 2, 4, 1, b) < 0); /* no such lane */

	/* hits: lane 1 at t=105 has B (slot 1) and C (slot 0) */
	CHECK_EQ_INT(timeline_hit(tl, 1, 0, 105, 0), C);
	CHECK_EQ_INT(timeline_hit(tl, 1, 1, 105, 0), B);
	CHECK_EQ_INT(timeline_hit(tl, 1, -1, 105, 0), C); /* the latest started */
	CHECK_EQ_INT(timeline_hit(tl, 1, 0, 5, 0), A);
	CHECK_EQ_INT(timeline_hit(tl, 1, -1, 300, 0), -1);
	CHECK_EQ_INT(timeline_hit(tl, 1, -1, 255, 50), B); /* 45 past B's end */
	CHECK_EQ_INT(timeline_hit(tl, 0, -1, 399, 0), D);
	CHECK_EQ_INT(timeline_hit(tl, 7, -1, 0, 0), -1);
	timeline_free(tl);
	bs_free(bs);
}

static void test_colors_and_text(void)
{
	struct block_sched *bs = bs_make(four, 4, 4);
	bs->mean_running = 1234;
	bs->mean_sched = 300;
	bs->max_concurrent = 2;
	struct timeline *tl = NULL;
	timeline_create(bs, TL_TIME_SM, &(struct tl_device){ 0, 132, 0 }, &tl, NULL);
	struct theme th;
	theme_builtin("dark", &th);
	/* duration extremes: C is the shortest (50), D the longest (400) */
	CHECK(timeline_block_scale(tl, C, TL_COLOR_DURATION) == 0.0);
	CHECK(timeline_block_scale(tl, D, TL_COLOR_DURATION) == 1.0);
	CHECK(near(timeline_block_scale(tl, A, TL_COLOR_DURATION), 50.0 / 350));
	CHECK(rgb_eq(timeline_block_color(tl, C, TL_COLOR_DURATION, &th), th.c[THEME_BAR_START]));
	CHECK(rgb_eq(timeline_block_color(tl, D, TL_COLOR_DURATION, &th), th.c[THEME_BAR_END]));
	/* index: A is block 0, C block 3 of 4 */
	CHECK(rgb_eq(timeline_block_color(tl, A, TL_COLOR_INDEX, &th), th.c[THEME_BAR_START]));
	CHECK(rgb_eq(timeline_block_color(tl, C, TL_COLOR_INDEX, &th), th.c[THEME_BAR_END]));
	CHECK(near(timeline_block_scale(tl, D, TL_COLOR_INDEX), 2.0 / 3));
	char buf[256];
	timeline_header(tl, buf, sizeof buf);
	CHECKF(strcmp(buf, "4 blocks  waves/SM ?  running 1.2k cyc  scheduling 300 cyc (19.6%)  2/132 SMs  "
			   "max 2 resident/SM") == 0, "%s", buf);
	char small[16];
	timeline_header(tl, small, sizeof small);
	CHECK(strlen(small) == 15);
	timeline_free(tl);
	bs_free(bs);

	timeline_fmt_num(950, buf, sizeof buf);
	CHECK(strcmp(buf, "950") == 0);
	timeline_fmt_num(12345, buf, sizeof buf);
	CHECK(strcmp(buf, "12.3k") == 0);
	timeline_fmt_num(123456, buf, sizeof buf);
	CHECK(strcmp(buf, "123k") == 0);
	timeline_fmt_num(4560000, buf, sizeof buf);
	CHECK(strcmp(buf, "4.6M") == 0);
	CHECK(timeline_tick_step(400, 4) == 100);
	CHECK(timeline_tick_step(1000, 8) == 200);
	CHECK(timeline_tick_step(7, 2) == 5);
}

static void test_ticks(void)
{
	/* global time over 20 us: ticks in us */
	const struct hb b[] = {{0, 0, 0, 20000, 1000, 0}, {1, 0, 0, 10000, 5000, 1}};
	struct block_sched *bs = bs_make(b, 2, 2);
	struct timeline *tl = NULL;
	timeline_create(bs, TL_TIME_GLOBAL, &(struct tl_device){ 1000000, 0, 0 }, &tl, NULL);
	CHECK(tl->tick_div == 1e3 && strcmp(tl->tick_unit, "\xc2\xb5s") == 0);
	char buf[32];
	timeline_fmt_tick(tl, 12500, 500, buf, sizeof buf);
	CHECKF(strcmp(buf, "12.5") == 0, "%s", buf);
	timeline_fmt_tick(tl, 14000, 2000, buf, sizeof buf);
	CHECKF(strcmp(buf, "14") == 0, "%s", buf);
	timeline_free(tl);
	timeline_create(bs, TL_TIME_SM, &(struct tl_device){ 0, 0, 0 }, &tl, NULL);
	timeline_fmt_tick(tl, 1200, 200, buf, sizeof buf);
	CHECKF(strcmp(buf, "1.2k") == 0, "%s", buf);
	timeline_fmt_tick(tl, 0, 200, buf, sizeof buf);
	CHECKF(strcmp(buf, "0") == 0, "%s", buf);
	timeline_fmt_tick(tl, 2500000, 500000, buf, sizeof buf);
	CHECKF(strcmp(buf, "2.5M") == 0, "%s", buf);
	timeline_free(tl);
	bs_free(bs);
}

/* 100 SMs x 4 slots x 2500 blocks back to back: 1M blocks. Binning must
 * account for every cycle of every block, whatever the view. */
static void test_million(void)
{
	const uint32_t sms = 100, slots = 4, per_slot = 2500;
	uint32_t n = sms * slots * per_slot;
	struct hb *b = malloc(n * sizeof *b);
	double total = 0;
	uint32_t k = 0;
	for (uint32_t m = 0; m < sms; m++) {
		uint64_t t = 1000000ull * m; /* SM clocks start anywhere */
		for (uint32_t i = 0; i < per_slot; i++) {
			uint64_t d = 100 + (i * 37 + m) % 50, gap = i % 3;
			for (uint32_t s = 0; s < slots; s++) /* slot s starts s cycles later: sorted */
				b[k++] = (struct hb){m, s, t + s, t + s + d, 0, m + sms * (i * slots + s)};
			total += (double)d * slots;
			t += d + gap;
		}
	}
	struct block_sched *bs = bs_make(b, n, n);
	struct timeline *tl = NULL;
	char *cause = NULL;
	CHECKF(timeline_create(bs, TL_TIME_SM, &(struct tl_device){ 1980000, 132, 0 }, &tl, &cause) == 0, "%s", cause);
	free(cause);
	if (!tl) {
		free(b);
		bs_free(bs);
		return;
	}
	CHECK_EQ_INT(tl->n_lanes, sms);
	CHECK_EQ_INT(tl->lanes[99].rows, slots);
	struct tl_view v;
	timeline_view_fit(tl, &v);
	const int cols = 1000;
	struct tl_bin *bins = malloc(sizeof *bins * cols * slots);
	double w = (v.t1 - v.t0) / cols, sum1 = 0, sum4 = 0;
	uint64_t counted = 0, wrong_slot = 0;
	for (uint32_t l = 0; l < tl->n_lanes; l++) {
		timeline_bin_lane(tl, &v, l, cols, (int)slots, bins);
		for (int r = 0; r < (int)slots; r++)
			for (int x = 0; x < cols; x++) {
				const struct tl_bin *q = &bins[r * cols + x];
				sum4 += q->busy * w;
				counted += q->count;
				wrong_slot += q->block != TL_NONE && bs->blocks[q->block].slot != (uint32_t)r;
			}
		timeline_bin_lane(tl, &v, l, cols, 1, bins);
		for (int x = 0; x < cols; x++)
			sum1 += bins[x].busy * w * slots;
	}
	CHECKF(fabs(sum4 - total) < total * 1e-5, "%f vs %f", sum4, total);
	CHECKF(fabs(sum1 - total) < total * 1e-5, "%f vs %f", sum1, total);
	CHECK(counted >= n);
	CHECK_EQ_INT(wrong_slot, 0);
	/* a zoomed window counts only what lies inside it */
	timeline_view_zoom(tl, &v, 4, tl->stats.span / 2);
	double in = 0, got = 0;
	for (uint32_t i = 0; i < n; i++) {
		double s = tl->t_start[i] > v.t0 ? tl->t_start[i] : v.t0;
		double e = tl->t_end[i] < v.t1 ? tl->t_end[i] : v.t1;
		in += e > s ? e - s : 0;
	}
	w = (v.t1 - v.t0) / cols;
	for (uint32_t l = 0; l < tl->n_lanes; l++) {
		timeline_bin_lane(tl, &v, l, cols, (int)slots, bins);
		for (int x = 0; x < cols * (int)slots; x++)
			got += bins[x].busy * w;
	}
	CHECKF(in > 0 && fabs(got - in) < in * 1e-5, "%f vs %f", got, in);
	free(bins);
	timeline_free(tl);
	bs_free(bs);
	free(b);
}

/* ---- terminal cells ---- */

static char *row_text(const struct cellgrid *g, int y)
{
	struct strbuf sb;
	strbuf_init(&sb);
	cellgrid_row_text(g, y, &sb);
	return strbuf_finish(&sb, NULL);
}

static void check_row(const struct cellgrid *g, int y, const char *want)
{
	char *got = row_text(g, y);
	CHECKF(got && strcmp(got, want) == 0, "row %d: '%s' want '%s'", y, got, want);
	free(got);
}

/* SM 0: X 0..100, SM 1: Y 50..150, SM 2: Z 0..400 (global, 1 GHz). Equal
 * durations give X and Y the same colour; Z is the tail. Window [0, 200)
 * in 8 columns of 25 ns. */
static void test_term_half_blocks(void)
{
	const struct hb b[] = {{0, 0, 500, 600, 1000, 0}, {1, 0, 700, 800, 1050, 1}, {2, 0, 9, 409, 1000, 2}};
	struct block_sched *bs = bs_make(b, 3, 3);
	struct timeline *tl = NULL;
	timeline_create(bs, TL_TIME_GLOBAL, &(struct tl_device){ 1000000, 0, 0 }, &tl, NULL);
	struct theme th;
	theme_builtin("dark", &th);
	struct tl_view v;
	timeline_view_fit(tl, &v);
	v.t1 = 200;
	struct rt_opts o;
	render_term_opts_init(&o);
	o.color = TL_COLOR_DURATION;
	o.no_header = o.no_axis = o.no_legend = 1;
	struct cellgrid *g = cellgrid_create(11, 2);
	CHECK(render_term_draw(g, tl, &v, &th, &o) == 0);
	check_row(g, 0, " 0 \xe2\x96\x80\xe2\x96\x80\xe2\x96\x88\xe2\x96\x88\xe2\x96\x84\xe2\x96\x84  ");
	check_row(g, 1, " 2 \xe2\x96\x80\xe2\x96\x80\xe2\x96\x80\xe2\x96\x80\xe2\x96\x80\xe2\x96\x80\xe2\x96\x80\xe2\x96\x80");
	CHECK(rgb_eq(cellgrid_at(g, 5, 0)->fg, th.c[THEME_BAR_START]));    /* X and Y: shortest */
	CHECK(rgb_eq(cellgrid_at(g, 3, 0)->bg, th.c[THEME_BG]));           /* upper half only */
	CHECK(rgb_eq(cellgrid_at(g, 3, 1)->fg, th.c[THEME_WARN]));         /* Z ends in the tail */
	/* the layout agrees: track 1 (SM 1) is the lower half of row 0 */
	struct rt_layout l;
	render_term_layout(tl, 11, 2, &o, &l);
	int track;
	double t;
	CHECK(render_term_at(tl, &v, &o, &l, 7, 0, 1, &track, &t) == 0 && track == 1 && t == 112.5);
	uint32_t lane;
	int row, rows;
	CHECK(render_term_track(tl, &v, &o, track, &lane, &row, &rows) == 0 && lane == 1);
	CHECK_EQ_INT(timeline_hit(tl, lane, -1, t, 0), 1);
	CHECK(render_term_at(tl, &v, &o, &l, 1, 0, 0, &track, &t) < 0); /* label column */

	/* the full layout: header, axis with ticks, legend */
	cellgrid_free(g);
	g = cellgrid_create(60, 6);
	o.no_header = o.no_axis = o.no_legend = 0;
	o.cursor_lane = 2;
	o.cursor_t = 60;
	render_term_draw(g, tl, &v, &th, &o);
	char *r0 = row_text(g, 0), *r4 = row_text(g, 4), *r5 = row_text(g, 5);
	/* whole fields that fit in 60 cells, then the ellipsis */
	CHECKF(r0 && strncmp(r0, "3 blocks  waves/SM ?  running 0 cyc \xe2\x80\xa6 ", 38) == 0, "%s", r0);
	CHECKF(r4 && strncmp(r4, "SM \xe2\x95\xb5" "0", 7) == 0 && strstr(r4, "\xe2\x95\xb5" "50") &&
	       strstr(r4, "\xe2\x96\xb2"), "%s", r4);
	CHECKF(r5 && strncmp(r5, "duration 100 ", 13) == 0 && strstr(r5, "tail"), "%s", r5);
	CHECK(rgb_eq(cellgrid_at(g, 3 + 17, 2)->fg, th.c[THEME_SELECTION])); /* cursor: 60 ns of 200 in 57 columns */
	CHECK(cellgrid_at(g, 0, 2)->attr & CELL_REVERSE);
	free(r0);
	free(r4);
	free(r5);
	cellgrid_free(g);
	timeline_free(tl);
	bs_free(bs);
}

static void test_term_ascii(void)
{
	struct block_sched *bs = bs_make(four, 4, 4);
	struct timeline *tl = NULL;
	timeline_create(bs, TL_TIME_SM, &(struct tl_device){ 0, 0, 0 }, &tl, NULL);
	struct theme th;
	theme_builtin("mono", &th);
	struct tl_view v;
	timeline_view_fit(tl, &v);
	struct rt_opts o;
	render_term_opts_init(&o);
	o.utf8 = 0;
	o.no_header = o.no_axis = o.no_legend = 1;
	struct cellgrid *g = cellgrid_create(11, 3);
	render_term_draw(g, tl, &v, &th, &o);
	/* 8 columns of 50 cycles; SM 5 merged: A A B B B, then nothing */
	check_row(g, 0, " 2 ########");
	check_row(g, 1, " 5 ##===   ");
	check_row(g, 2, "           ");
	/* expanded: one row per slot, the SM labelled once */
	o.expand = 1;
	render_term_draw(g, tl, &v, &th, &o);
	check_row(g, 0, " 2 ########");
	check_row(g, 1, " 5 ##=     ");
	check_row(g, 2, "   #####   ");
	/* ink never vanishes at 8 colours: grey bars on black */
	CHECK(cellgrid_at(g, 3, 0)->fg8 != cellgrid_at(g, 3, 0)->bg8);
	cellgrid_free(g);
	timeline_free(tl);
	bs_free(bs);
}

/* Without colours in UTF-8 (mono): a track per row as in ASCII, blocks in
 * alternating full and shaded blocks, tails shaded light by duration, the
 * cursor cell in reverse video, a legend of glyphs instead of colours, and
 * an axis label the cursor marker would cut left out. */
static void test_term_mono(void)
{
	struct block_sched *bs = bs_make(four, 4, 4);
	struct timeline *tl = NULL;
	timeline_create(bs, TL_TIME_SM, &(struct tl_device){ 0, 0, 0 }, &tl, NULL);
	struct theme th;
	theme_builtin("dark", &th);
	struct tl_view v;
	timeline_view_fit(tl, &v);
	struct rt_opts o;
	render_term_opts_init(&o);
	o.mono = 1;
	o.no_header = 1;
	o.cursor_lane = 1;
	o.cursor_t = 125; /* column 2 of 50-cycle columns: block B */
	struct cellgrid *g = cellgrid_create(11, 4);
	render_term_draw(g, tl, &v, &th, &o);
	check_row(g, 0, " 2 \xe2\x96\x88\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88");
	check_row(g, 1, " 5 \xe2\x96\x88\xe2\x96\x88\xe2\x96\x92\xe2\x96\x92\xe2\x96\x92   ");
	CHECK(cellgrid_at(g, 5, 1)->attr & CELL_REVERSE);   /* the cursor cell */
	CHECK(!(cellgrid_at(g, 4, 1)->attr & CELL_REVERSE));
	CHECK(cellgrid_at(g, 0, 1)->attr & CELL_REVERSE);   /* and its lane label */
	char *ax = row_text(g, 2);
	CHECKF(ax && strstr(ax, "\xe2\x96\xb2"), "cursor marker: %s", ax);
	free(ax);
	char *lg = row_text(g, 3);
	CHECKF(lg && strncmp(lg, "\xe2\x96\x88\xe2\x96\x92 altern", 12) == 0, "legend: %s", lg);
	free(lg);
	/* by duration: D (400 cycles of the longest) is a tail, in light shade */
	o.color = TL_COLOR_DURATION;
	o.cursor_lane = -1;
	cellgrid_free(g);
	g = cellgrid_create(80, 4);
	render_term_draw(g, tl, &v, &th, &o);
	char *r0 = row_text(g, 0), *r3 = row_text(g, 3);
	CHECKF(r0 && strstr(r0, "\xe2\x96\x91\xe2\x96\x91\xe2\x96\x91"), "tail: %s", r0);
	CHECKF(r3 && strstr(r3, "\xe2\x96\x91 tail (ends in last 10%)"), "legend: %s", r3);
	free(r0);
	free(r3);
	/* the axis: a label the cursor marker would cut is not drawn */
	o.cursor_lane = 0;
	cellgrid_free(g);
	g = cellgrid_create(40, 4);
	render_term_draw(g, tl, &v, &th, &o);
	int lab = -1; /* the cell of the tick label "200" */
	for (int x = 0; x + 2 < 40 && lab < 0; x++)
		if (!strcmp(cellgrid_at(g, x, 2)->glyph, "2") && !strcmp(cellgrid_at(g, x + 1, 2)->glyph, "0") &&
		    !strcmp(cellgrid_at(g, x + 2, 2)->glyph, "0"))
			lab = x;
	CHECK(lab > 3);
	o.cursor_t = v.t0 + (lab + 1 - 3 + 0.5) * (v.t1 - v.t0) / 37; /* on its second character */
	render_term_draw(g, tl, &v, &th, &o);
	char *after = row_text(g, 2);
	CHECKF(after && !strstr(after, "200") && !strstr(after, "2\xe2\x96\xb2") && strstr(after, "\xe2\x96\xb2"),
	       "label cut by the marker: %s", after);
	free(after);
	cellgrid_free(g);
	timeline_free(tl);
	bs_free(bs);
}

static void test_color_depth(void)
{
	CHECK_EQ_INT(color_rgb_to_256((struct rgb){255, 0, 0}), 196);
	CHECK_EQ_INT(color_rgb_to_256((struct rgb){0, 0, 0}), 16);
	CHECK_EQ_INT(color_rgb_to_256((struct rgb){255, 255, 255}), 231);
	CHECK_EQ_INT(color_rgb_to_256((struct rgb){128, 128, 128}), 244);
	CHECK_EQ_INT(color_rgb_to_256((struct rgb){0, 95, 135}), 24);
	CHECK_EQ_INT(color_256_to_8(196), 1);
	CHECK_EQ_INT(color_256_to_8(231), 7);
	CHECK_EQ_INT(color_256_to_8(16), 0);
	CHECK_EQ_INT(color_256_to_8(46), 2);
	CHECK_EQ_INT(color_256_to_8(21), 4);
	CHECK_EQ_INT(color_256_to_8(3), 3);
	struct rgb c = color_256_to_rgb(24);
	CHECK(c.r == 0 && c.g == 95 && c.b == 135);
	struct cellgrid *g = cellgrid_create(4, 1);
	cellgrid_clear(g, (struct rgb){255, 255, 255}, (struct rgb){0, 0, 0});
	cellgrid_set(g, 0, 0, "#", (struct rgb){30, 30, 30}, (struct rgb){0, 0, 0}, 0);
	CHECK(cellgrid_at(g, 0, 0)->fg8 == 7 && cellgrid_at(g, 0, 0)->bg8 == 0);
	CHECK(cellgrid_puts(g, 1, 0, "a\xc2\xb5zz", (struct rgb){255, 255, 255}, (struct rgb){0, 0, 0}, -1) == 3);
	check_row(g, 0, "#a\xc2\xb5z");
	struct strbuf sb;
	strbuf_init(&sb);
	cellgrid_ansi(g, DEPTH_8, &sb);
	char *s = strbuf_finish(&sb, NULL);
	CHECKF(s && strstr(s, "\033[0;37;40m#"), "%s", s);
	free(s);
	cellgrid_free(g);
}

/* ---- fixture for tests/regress/cli_export.sh ---- */

struct fx_launch {
	uint32_t blocks, threads, sms, occ;
	int gstart; /* 1: ntop's 24-byte record with the global timer; 0: NEUTRINO's 16 bytes */
};

static uint32_t fx_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return (uint32_t)*s;
}

/* A launch scheduled the way hardware does it: blocks in index order to
 * whichever SM slot frees first, each SM clock with its own offset, a
 * handful of slow blocks so the tail shows. */
static struct result *fx_block_sched(uint32_t seq, uint32_t kid, const char *kernel, const struct fx_launch *l)
{
	struct result *r = calloc(1, sizeof *r);
	r->pid = 500;
	r->seq = seq;
	r->kernel_id = kid;
	r->kernel = strdup(kernel);
	r->probes = strdup("block_sched");
	r->grid[0] = l->blocks; r->grid[1] = 1; r->grid[2] = 1;
	r->block[0] = l->threads; r->block[1] = 1; r->block[2] = 1;
	r->device_sms = 132;
	r->device_cc = 90;
	r->sm_clock_khz = 1980000;
	r->n_maps = 1;
	r->maps = calloc(1, sizeof *r->maps);
	struct result_map *m = &r->maps[0];
	snprintf(m->map.name, sizeof m->map.name, "block_sched");
	m->map.level = PROBE_LEVEL_WARP;
	m->map.cap = 1;
	m->stored = m->map.cap;
	m->map.rec_size = l->gstart ? 24 : 16;
	if (l->gstart) {
		static const struct probe_field f[] = {
			{"start", PROBE_U64, 0, 0}, {"elapsed", PROBE_U32, 8, 0}, {"smid", PROBE_U32, 12, 0},
			{"gstart", PROBE_U64, 16, 0}};
		m->map.n_fields = 4;
		memcpy(m->map.fields, f, sizeof f);
	}
	uint32_t wpb = (l->threads + 31) / 32, nslots = l->sms * l->occ;
	m->units = (uint64_t)l->blocks * wpb;
	m->counts = calloc(m->units, 4);
	m->records = calloc(m->units, m->map.rec_size);
	uint64_t *free_at = calloc(nslots, sizeof *free_at), rng = 0x9e3779b97f4a7c15ull + seq;
	for (uint32_t s = 0; s < nslots; s++)
		free_at[s] = (s % l->sms) * 24; /* the dispatcher ramps up over the SMs */
	for (uint32_t b = 0; b < l->blocks; b++) {
		uint32_t best = 0;
		for (uint32_t s = 1; s < nslots; s++)
			if (free_at[s] < free_at[best])
				best = s;
		uint32_t sm = best % l->sms;
		uint64_t t = free_at[best] + 150 + fx_rand(&rng) % 200; /* kernel-wide cycles */
		uint64_t dur = 3000 + fx_rand(&rng) % 1500 + (fx_rand(&rng) % 40 == 0 ? 6000 : 0);
		free_at[best] = t + dur;
		uint64_t sm_off = 1000000007ull * (sm * 7 + 3) % 90000000000ull; /* clocks differ per SM */
		for (uint32_t w = 0; w < wpb; w++) {
			uint64_t u = (uint64_t)b * wpb + w;
			uint8_t *rec = m->records + u * m->map.rec_size;
			uint64_t ws = sm_off + t + w * 7;
			uint32_t el = (uint32_t)(dur - w * 7 - fx_rand(&rng) % 40);
			uint32_t smid = sm;
			uint64_t g = 1745552787000000000ull + (uint64_t)((t + w * 7) / 1.98);
			memcpy(rec, &ws, 8);
			memcpy(rec + 8, &el, 4);
			memcpy(rec + 12, &smid, 4);
			if (l->gstart)
				memcpy(rec + 16, &g, 8);
			m->counts[u] = m->map.rec_size;
		}
	}
	free(free_at);
	return r;
}

static struct result *fx_bytes_only(uint32_t seq, uint32_t kid, const char *kernel)
{
	struct result *r = calloc(1, sizeof *r);
	r->pid = 500;
	r->seq = seq;
	r->kernel_id = kid;
	r->kernel = strdup(kernel);
	r->probes = strdup("gmem_bytes");
	r->grid[0] = 2; r->grid[1] = 1; r->grid[2] = 1;
	r->block[0] = 32; r->block[1] = 1; r->block[2] = 1;
	r->device_sms = 132;
	r->sm_clock_khz = 1980000;
	r->n_maps = 1;
	r->maps = calloc(1, sizeof *r->maps);
	struct result_map *m = &r->maps[0];
	snprintf(m->map.name, sizeof m->map.name, "gmem_bytes");
	m->map.level = PROBE_LEVEL_THREAD;
	m->map.cap = 1;
	m->stored = m->map.cap;
	m->map.rec_size = 8;
	m->map.n_fields = 1;
	snprintf(m->map.fields[0].name, PROBE_NAME_MAX, "bytes");
	m->map.fields[0].type = PROBE_U64;
	m->units = 64;
	m->counts = calloc(64, 4);
	m->records = calloc(64, 8);
	return r;
}

static int fx_write(const char *dir, const char *name, struct result *r)
{
	char *cause = NULL;
	int rc = result_write(dir, name, r, &cause);
	if (rc < 0)
		fprintf(stderr, "test_timeline: %s\n", cause);
	free(cause);
	result_free(r);
	return rc;
}

static int write_fixture(const char *dir)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/results", dir);
	mkdir(dir, 0755);
	if (mkdir(path, 0755) < 0 && access(path, W_OK) != 0)
		return 1;
	const struct fx_launch big = {3000, 256, 132, 4, 1}, small = {264, 64, 132, 2, 0};
	if (fx_write(path, "500-2.ntr", fx_block_sched(2, 1, "_Z6vecaddPKfS0_Pfi", &big)) < 0 ||
	    fx_write(path, "500-3.ntr", fx_block_sched(3, 1, "_Z6vecaddPKfS0_Pfi", &small)) < 0 ||
	    fx_write(path, "500-5.ntr", fx_block_sched(5, 2, "_Z6vecsubPKfS0_Pfi", &small)) < 0 ||
	    fx_write(path, "500-6.ntr", fx_bytes_only(6, 3, "_Z4memkPf")) < 0)
		return 1;
	snprintf(path, sizeof path, "%s/events.log", dir);
	FILE *f = fopen(path, "w");
	if (!f)
		return 1;
	fputs("record t=1 pid=4242 argv=./vecadd version=0.1.0\n"
	      "hello t=2 pid=500 ppid=4242 exe=/tmp/vecadd hook=0.1.0 driver=/usr/lib/libcuda.so.1\n"
	      "device t=3 pid=500 ordinal=0 name=NVIDIA%20H100%2080GB%20HBM3 cc=90 sms=132 clock_khz=1980000\n"
	      "module t=4 pid=500 mid=1 api=cuLibraryLoadData kind=fatbin size=4096 ptx=1 sass=1 source=app\n"
	      "kernel t=5 pid=500 kid=1 mid=1 name=_Z6vecaddPKfS0_Pfi ptx=1\n"
	      "kernel t=6 pid=500 kid=2 mid=1 name=_Z6vecsubPKfS0_Pfi ptx=1\n"
	      "kernel t=7 pid=500 kid=3 mid=1 name=_Z4memkPf ptx=1\n"
	      "kernel t=8 pid=500 kid=4 mid=1 name=_Z5idlerv ptx=1\n"
	      "launch t=9 pid=500 kid=1 seq=1 api=cuLaunchKernel grid=3000,1,1 block=256,1,1 smem=0 probed=0\n"
	      "instrument t=10 pid=500 kid=1 status=ok probes=block_sched reason= regs_orig=12 regs_probed=18 sites=2 ms_jit=120\n"
	      "launch t=11 pid=500 kid=1 seq=2 api=cuLaunchKernel grid=3000,1,1 block=256,1,1 smem=0 probed=1 occ=4\n"
	      "result t=12 pid=500 kid=1 seq=2 file=results/500-2.ntr maps=1 records=24000 dropped=0 bytes=1 ns=1\n"
	      "launch t=13 pid=500 kid=1 seq=3 api=cuLaunchKernel grid=264,1,1 block=64,1,1 smem=0 probed=1 occ=2\n"
	      "result t=14 pid=500 kid=1 seq=3 file=results/500-3.ntr maps=1 records=528 dropped=0 bytes=1 ns=1\n"
	      "launch t=15 pid=500 kid=2 seq=5 api=cuLaunchKernel grid=264,1,1 block=64,1,1 smem=0 probed=1 occ=2\n"
	      "result t=16 pid=500 kid=2 seq=5 file=results/500-5.ntr maps=1 records=528 dropped=0 bytes=1 ns=1\n"
	      "launch t=17 pid=500 kid=3 seq=6 api=cuLaunchKernel grid=2,1,1 block=32,1,1 smem=0 probed=1\n"
	      "result t=18 pid=500 kid=3 seq=6 file=results/500-6.ntr maps=1 records=0 dropped=0 bytes=1 ns=1\n"
	      "launch t=19 pid=500 kid=4 seq=7 api=cuLaunchKernel grid=1,1,1 block=32,1,1 smem=0 probed=0\n"
	      "stats t=20 pid=500 kid=4 launches=3 timed=0 total_ns=0 min_ns=0 max_ns=0\n"
	      "exit t=21 pid=500 launches=9\n",
	      f);
	return fclose(f) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--write-fixture") == 0)
		return write_fixture(argv[2]);
	test_lanes_and_times();
	test_amd();
	test_view();
	test_bins_and_hits();
	test_colors_and_text();
	test_ticks();
	test_million();
	test_term_half_blocks();
	test_term_ascii();
	test_term_mono();
	test_color_depth();
	return testlib_report();
}
