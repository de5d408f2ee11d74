/* Block-scheduling timeline model (timeline.h): lanes, axis times, viewport
 * arithmetic, per-column binning, hit testing and colour scales. */
#include "viz/timeline.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"

#define TL_MIN_WIDTH 4.0 /* axis units: zooming stops at a few cycles / ns */

/* Global mode needs every block's global timer start and the clock rate to
 * turn cycles into ns; otherwise say which is missing. */
static int tl_global_ok(const struct block_sched *bs, uint32_t khz, const char *lane, char *note, size_t len)
{
	if (!khz) {
		snprintf(note, len, "%s clock rate unknown: global time needs it, showing %s cycles", lane, lane);
		return 0;
	}
	for (uint64_t i = 0; i < bs->n_blocks_recorded; i++)
		if (!bs->blocks[i].gstart) {
			snprintf(note, len, "no global timer in the records: showing %s cycles", lane);
			return 0;
		}
	return 1;
}

static void tl_times(struct timeline *tl)
{
	const struct block_sched *bs = tl->bs;
	uint64_t g0 = UINT64_MAX;
	for (uint32_t i = 0; i < tl->n_blocks; i++)
		if (bs->blocks[i].gstart < g0)
			g0 = bs->blocks[i].gstart;
	double ns_per_cycle = tl->sm_clock_khz ? 1e6 / tl->sm_clock_khz : 0;
	for (uint32_t l = 0; l < tl->n_lanes; l++) {
		const struct tl_lane *ln = &tl->lanes[l];
		for (uint32_t i = ln->first; i < ln->first + ln->n; i++) {
			const struct bs_block *b = &bs->blocks[i];
			if (tl->time == TL_TIME_GLOBAL) {
				tl->t_start[i] = (double)((b->gstart - g0) * tl->gtimer_ns);
				tl->t_end[i] = tl->t_start[i] + (double)(b->end - b->start) * ns_per_cycle;
			} else {
				tl->t_start[i] = (double)(b->start - ln->origin);
				tl->t_end[i] = (double)(b->end - ln->origin);
			}
		}
	}
}

static void tl_scan(struct timeline *tl)
{
	const struct block_sched *bs = tl->bs;
	tl->dur_min = UINT64_MAX;
	double span = 0;
	for (uint32_t i = 0; i < tl->n_blocks; i++) {
		const struct bs_block *b = &bs->blocks[i];
		uint64_t d = b->end - b->start;
		if (d < tl->dur_min)
			tl->dur_min = d;
		if (d > tl->dur_max)
			tl->dur_max = d;
		if (b->index > tl->index_max)
			tl->index_max = b->index;
		if (tl->t_end[i] > span)
			span = tl->t_end[i];
	}
	if (!tl->n_blocks)
		tl->dur_min = 0;
	if (bs->n_blocks > 0 && bs->n_blocks - 1 > tl->index_max)
		tl->index_max = bs->n_blocks - 1; /* the grid's last index, recorded or not */
	tl->stats.span = span;
	tl->tail_from = span * (1.0 - TL_TAIL_FRACTION);
	for (uint32_t i = 0; i < tl->n_blocks; i++)
		tl->stats.tail_blocks += timeline_block_is_tail(tl, i);
}

static void tl_units(struct timeline *tl)
{
	if (tl->time == TL_TIME_SM) {
		tl->unit = tl->tick_unit = "cycles";
		tl->tick_div = 1;
		snprintf(tl->axis_label, sizeof tl->axis_label,
			 "%s clock cycles, each %s from its own first block start (%s clocks are independent)", tl->lane,
			 tl->lane, tl->lane);
		return;
	}
	tl->unit = "ns";
	double span = tl->stats.span;
	if (span < 5e3) {
		tl->tick_unit = "ns";
		tl->tick_div = 1;
	} else if (span < 5e6) {
		tl->tick_unit = "\xc2\xb5s";
		tl->tick_div = 1e3;
	} else {
		tl->tick_unit = "ms";
		tl->tick_div = 1e6;
	}
	if (tl->gtimer_ns != 1)
		snprintf(tl->axis_label, sizeof tl->axis_label,
			 "%s of the global timer (%u ns ticks) since the first block start (all %ss aligned)",
			 tl->tick_unit, tl->gtimer_ns, tl->lane);
	else
		snprintf(tl->axis_label, sizeof tl->axis_label,
			 "%s of the global timer since the first block start (all %ss aligned)", tl->tick_unit,
			 tl->lane);
}

static int tl_lanes(struct timeline *tl)
{
	const struct block_sched *bs = tl->bs;
	tl->n_lanes = bs->n_sms;
	tl->lanes = calloc(tl->n_lanes ? tl->n_lanes : 1, sizeof *tl->lanes);
	if (!tl->lanes)
		return -1;
	for (uint32_t l = 0; l < bs->n_sms; l++) {
		struct tl_lane *ln = &tl->lanes[l];
		ln->smid = bs->sms[l].smid;
		ln->first = bs->sms[l].first;
		ln->n = bs->sms[l].blocks;
		ln->origin = ln->n ? bs->blocks[ln->first].start : 0;
		for (uint32_t i = ln->first; i < ln->first + ln->n; i++)
			if (bs->blocks[i].slot + 1 > ln->rows)
				ln->rows = bs->blocks[i].slot + 1;
		if (!ln->rows)
			ln->rows = 1;
	}
	return 0;
}

int timeline_create(const struct block_sched *bs, enum tl_time time, const struct tl_device *dev,
		    struct timeline **out, char **cause)
{
	*out = NULL;
	if (bs->n_blocks_recorded > UINT32_MAX)
		return cause_set(cause, "%llu blocks: too many for the timeline",
				 (unsigned long long)bs->n_blocks_recorded);
	struct timeline *tl = calloc(1, sizeof *tl);
	if (!tl)
		return cause_set(cause, "out of memory");
	tl->bs = bs;
	tl->sm_clock_khz = dev->sm_clock_khz;
	tl->lane = dev->amd ? "CU" : "SM";
	tl->warps = dev->amd ? "waves" : "warps";
	tl->gtimer_ns = dev->amd ? TL_AMD_GTIMER_NS : 1;
	tl->n_blocks = (uint32_t)bs->n_blocks_recorded;
	tl->time = time;
	if (time == TL_TIME_GLOBAL && !tl_global_ok(bs, tl->sm_clock_khz, tl->lane, tl->note, sizeof tl->note))
		tl->time = TL_TIME_SM;
	size_t n = tl->n_blocks ? tl->n_blocks : 1;
	tl->t_start = malloc(n * sizeof *tl->t_start);
	tl->t_end = malloc(n * sizeof *tl->t_end);
	if (!tl->t_start || !tl->t_end || tl_lanes(tl) < 0) {
		uint32_t n_blocks = tl->n_blocks;
		timeline_free(tl);
		return cause_set(cause, "out of memory for %u blocks", n_blocks);
	}
	tl_times(tl);
	tl_scan(tl);
	tl_units(tl);
	struct tl_stats *s = &tl->stats;
	s->blocks = bs->n_blocks;
	s->blocks_recorded = bs->n_blocks_recorded;
	s->waves = bs->waves;
	s->mean_running = bs->mean_running;
	s->mean_sched = bs->mean_sched;
	s->sms_used = bs->n_sms;
	s->device_sms = dev->sms;
	s->max_concurrent = bs->max_concurrent;
	*out = tl;
	return 0;
}

void timeline_free(struct timeline *tl)
{
	if (!tl)
		return;
	free(tl->lanes);
	free(tl->t_start);
	free(tl->t_end);
	free(tl);
}

/* ---- viewport ---- */

static double tl_full(const struct timeline *tl)
{
	return tl->stats.span > 0 ? tl->stats.span : 1.0;
}

void timeline_view_fit(const struct timeline *tl, struct tl_view *v)
{
	v->t0 = 0;
	v->t1 = tl_full(tl);
	v->lane0 = 0;
	v->n_lanes = tl->n_lanes;
}

void timeline_view_clamp(const struct timeline *tl, struct tl_view *v)
{
	double full = tl_full(tl);
	double min_w = full < TL_MIN_WIDTH ? full : TL_MIN_WIDTH;
	double w = v->t1 - v->t0;
	if (!(w == w) || w > full)
		w = full;
	if (w < min_w) {
		double mid = (v->t0 + v->t1) / 2;
		w = min_w;
		v->t0 = mid - w / 2;
	}
	if (!(v->t0 >= 0))
		v->t0 = 0;
	if (v->t0 + w > full)
		v->t0 = full - w;
	v->t1 = v->t0 + w;
	if (v->n_lanes > tl->n_lanes)
		v->n_lanes = tl->n_lanes;
	if (v->lane0 > tl->n_lanes - v->n_lanes)
		v->lane0 = tl->n_lanes - v->n_lanes;
}

void timeline_view_zoom(const struct timeline *tl, struct tl_view *v, double factor, double at)
{
	if (!(factor > 0))
		return;
	v->t0 = at - (at - v->t0) / factor;
	v->t1 = at + (v->t1 - at) / factor;
	timeline_view_clamp(tl, v);
}

void timeline_view_pan(const struct timeline *tl, struct tl_view *v, double frac)
{
	double d = (v->t1 - v->t0) * frac;
	v->t0 += d;
	v->t1 += d;
	timeline_view_clamp(tl, v);
}

void timeline_view_scroll(const struct timeline *tl, struct tl_view *v, int delta)
{
	long l = (long)v->lane0 + delta;
	v->lane0 = l < 0 ? 0 : (uint32_t)l;
	timeline_view_clamp(tl, v);
}

double timeline_x_to_t(const struct tl_view *v, int cols, double x)
{
	return v->t0 + x * (v->t1 - v->t0) / (cols > 0 ? cols : 1);
}

double timeline_t_to_x(const struct tl_view *v, int cols, double t)
{
	double w = v->t1 - v->t0;
	return w > 0 ? (t - v->t0) * cols / w : 0;
}

/* ---- binning ---- */

static void tl_bin_block(struct tl_bin *row, int cols, const struct tl_view *v, double w, double norm,
			 uint32_t b, double s, double e)
{
	double cs = s > v->t0 ? s : v->t0, ce = e < v->t1 ? e : v->t1;
	double fx0 = (cs - v->t0) / w, fx1 = (ce - v->t0) / w;
	long x0 = (long)fx0, x1 = (long)ceil(fx1) - 1;
	if (x1 < x0)
		x1 = x0; /* zero-length block, or one ending on a column boundary */
	if (x0 >= cols)
		x0 = cols - 1;
	if (x1 >= cols)
		x1 = cols - 1;
	for (long x = x0; x <= x1; x++) {
		struct tl_bin *bin = &row[x];
		double c0 = v->t0 + x * w, c1 = c0 + w;
		double cov = (ce < c1 ? ce : c1) - (cs > c0 ? cs : c0);
		if (cov < 0)
			cov = 0;
		bin->busy += (float)(cov / norm);
		bin->count++;
		if (bin->block == TL_NONE || cov > bin->best) {
			bin->block = b;
			bin->best = (float)cov;
		}
	}
	if (x1 - x0 >= 2 && s >= v->t0)
		row[x0].edge = 1;
}

/* Slots s with s * out_rows / rows == r: busy is divided by it so a fully
 * occupied merged row reads 1. */
static uint64_t tl_merged(uint64_t rows, uint64_t out_rows, uint64_t r)
{
	uint64_t hi = ((r + 1) * rows + out_rows - 1) / out_rows, lo = (r * rows + out_rows - 1) / out_rows;
	return hi > lo ? hi - lo : 1;
}

int timeline_bin_lane(const struct timeline *tl, const struct tl_view *v, uint32_t lane, int cols,
		      int out_rows, struct tl_bin *out)
{
	if (lane >= tl->n_lanes || cols <= 0 || out_rows <= 0 || !(v->t1 > v->t0))
		return -1;
	const struct tl_lane *ln = &tl->lanes[lane];
	for (long i = 0; i < (long)cols * out_rows; i++)
		out[i] = (struct tl_bin){TL_NONE, 0, 0, 0, 0};
	double w = (v->t1 - v->t0) / cols;
	for (uint32_t i = ln->first; i < ln->first + ln->n; i++) {
		double s = tl->t_start[i], e = tl->t_end[i];
		if (s >= v->t1 || e < v->t0 || (e == v->t0 && s < e))
			continue;
		uint32_t slot = tl->bs->blocks[i].slot;
		uint64_t r = (uint64_t)slot * out_rows / ln->rows;
		tl_bin_block(out + r * cols, cols, v, w, w * tl_merged(ln->rows, out_rows, r), i, s, e);
	}
	return 0;
}

/* ---- hit testing ---- */

long timeline_hit(const struct timeline *tl, uint32_t lane, int slot, double t, double tol)
{
	if (lane >= tl->n_lanes)
		return -1;
	const struct tl_lane *ln = &tl->lanes[lane];
	long best = -1;
	double best_d = 0;
	for (uint32_t i = ln->first; i < ln->first + ln->n; i++) {
		if (slot >= 0 && tl->bs->blocks[i].slot != (uint32_t)slot)
			continue;
		double s = tl->t_start[i], e = tl->t_end[i];
		double d = t < s ? s - t : t > e ? t - e : 0;
		if (d > tol)
			continue;
		if (best < 0 || d < best_d || (d == best_d && s >= tl->t_start[best])) {
			best = i;
			best_d = d;
		}
	}
	return best;
}

/* ---- colour ---- */

double timeline_block_scale(const struct timeline *tl, uint32_t i, enum tl_color mode)
{
	const struct bs_block *b = &tl->bs->blocks[i];
	if (mode == TL_COLOR_INDEX)
		return tl->index_max ? (double)b->index / (double)tl->index_max : 0.0;
	if (tl->dur_max == tl->dur_min)
		return 0.5;
	return (double)(b->end - b->start - tl->dur_min) / (double)(tl->dur_max - tl->dur_min);
}

int timeline_block_is_tail(const struct timeline *tl, uint32_t i)
{
	return tl->stats.span > 0 && tl->t_end[i] >= tl->tail_from;
}

struct rgb timeline_block_color(const struct timeline *tl, uint32_t i, enum tl_color mode,
				const struct theme *th)
{
	return theme_gradient(th, timeline_block_scale(tl, i, mode));
}

/* ---- text ---- */

void timeline_fmt_num(double v, char *buf, size_t len)
{
	static const char sfx[] = " kMGTP";
	double a = fabs(v);
	int k = 0;
	while (a >= 999.5 && k < 5) {
		a /= 1000;
		v /= 1000;
		k++;
	}
	if (k == 0)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, a < 99.95 ? "%.1f%c" : "%.0f%c", v, sfx[k]);
}

double timeline_tick_step(double span, int max_ticks)
{
	if (!(span > 0) || max_ticks < 1)
		return 1;
	double raw = span / max_ticks;
	double p = pow(10, floor(log10(raw)));
	static const double m[] = {1, 2, 5, 10};
	for (int i = 0; i < 4; i++)
		if (m[i] * p >= raw)
			return m[i] * p;
	return 10 * p;
}

void timeline_fmt_tick(const struct timeline *tl, double t, double step, char *buf, size_t len)
{
	if (tl->time == TL_TIME_SM) {
		/* suffix by the tick's size, decimals by the step so neighbours differ */
		double a = fabs(t), div = 1;
		int k = 0;
		while (a / div >= 1000 && k < 4) {
			div *= 1000;
			k++;
		}
		int dec = 0;
		while (dec < 3 && step / div * pow(10, dec) < 0.999)
			dec++;
		static const char *const sfx[] = {"", "k", "M", "G", "T"};
		snprintf(buf, len, "%.*f%s", dec, t / div, sfx[k]);
		return;
	}
	double v = t / tl->tick_div, st = step / tl->tick_div;
	int dec = 0;
	while (dec < 4 && st * pow(10, dec) < 0.999)
		dec++;
	snprintf(buf, len, "%.*f", dec, v);
}

void timeline_header(const struct timeline *tl, char *buf, size_t len)
{
	const struct tl_stats *s = &tl->stats;
	char run[32], sch[32], n[32];
	timeline_fmt_num(s->mean_running, run, sizeof run);
	timeline_fmt_num(s->mean_sched, sch, sizeof sch);
	size_t o = 0;
#define TL_PUT(...) do { int k_ = snprintf(o < len ? buf + o : NULL, o < len ? len - o : 0, __VA_ARGS__); \
		if (k_ > 0) o += (size_t)k_; } while (0)
	if (!len)
		return;
	buf[0] = 0;
	TL_PUT("%llu blocks", (unsigned long long)s->blocks);
	if (s->blocks_recorded != s->blocks)
		TL_PUT(" (%llu recorded)", (unsigned long long)s->blocks_recorded);
	if (s->waves >= 0)
		TL_PUT("  %.2f waves/%s", s->waves, tl->lane);
	else
		TL_PUT("  waves/%s ?", tl->lane);
	double tot = s->mean_running + s->mean_sched;
	TL_PUT("  running %s cyc  scheduling %s cyc (%.1f%%)", run, sch, tot > 0 ? 100 * s->mean_sched / tot : 0.0);
	if (s->device_sms)
		TL_PUT("  %u/%u %ss", s->sms_used, s->device_sms, tl->lane);
	else
		TL_PUT("  %u %ss", s->sms_used, tl->lane);
	timeline_fmt_num((double)s->max_concurrent, n, sizeof n);
	TL_PUT("  max %s resident/%s", n, tl->lane);
#undef TL_PUT
	if (o >= len)
		buf[len - 1] = 0;
}
