/* DMAT range labels in the PNG and the terminal: both name a row by
 * dmat_row_label ("a3 64 MiB", "a3 64 MiB+0x3fc000"), and a label longer
 * than its margin keeps its allocation prefix and loses its tail. The PNG
 * used to reserve room for addresses only, so a long "a3 64 MiB+0x..." label
 * ran off the image's left edge and read "64 MiB+0x...". Checked on the
 * pixels: nothing drawn in the left padding, and the bottom label's first
 * glyph identical to a lone "a" drawn by the same font. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"
#include "trace/result.h"
#include "viz/cellgrid.h"
#include "viz/dmat.h"
#include "viz/font5x7.h"
#include "viz/png_canvas.h"
#include "viz/render_dmat_png.h"
#include "viz/render_dmat_term.h"
#include "viz/theme.h"

#define BASE 0x7f0000000000ull
#define PAGE 4096ull
#define OFF 0x3fc000ull /* the touched pages start this far into the allocation */

static void fld(struct probe_map *pm, const char *name, enum probe_type t)
{
	struct probe_field *f = &pm->fields[pm->n_fields++];
	snprintf(f->name, sizeof f->name, "%s", name);
	f->type = t;
	f->offset = pm->rec_size;
	pm->rec_size += t;
}

/* One block of 32 threads, thread p touching page p of BASE + OFF at time 4p. */
static struct result *deep_pages(void)
{
	struct result *r = calloc(1, sizeof *r);
	r->pid = 600;
	r->seq = 2;
	r->kernel = strdup("_Z4copyPf");
	r->probes = strdup("dmat");
	r->grid[0] = r->grid[1] = r->grid[2] = 1;
	r->block[0] = 32;
	r->block[1] = r->block[2] = 1;
	r->device_sms = 132;
	r->sm_clock_khz = 1980000;
	r->n_maps = 1;
	r->maps = calloc(1, sizeof *r->maps);
	struct result_map *m = &r->maps[0];
	snprintf(m->map.name, sizeof m->map.name, "dmat");
	m->map.level = PROBE_LEVEL_THREAD;
	m->map.cap = 1;
	m->stored = 1;
	fld(&m->map, "addr", PROBE_U64);
	fld(&m->map, "clock", PROBE_U32);
	fld(&m->map, "sizekind", PROBE_U32);
	m->units = 32;
	m->counts = calloc(32, 4);
	m->records = calloc(32, 16);
	for (uint32_t p = 0; p < 32; p++) {
		uint64_t a = BASE + OFF + p * PAGE;
		uint32_t c = 1000 + 4 * p, sk = 4 | (uint32_t)DMAT_KIND_LOAD << 24;
		memcpy(m->records + p * 16, &a, 8);
		memcpy(m->records + p * 16 + 8, &c, 4);
		memcpy(m->records + p * 16 + 12, &sk, 4);
		m->counts[p] = 16;
	}
	m->records_written = 32;
	return r;
}

static struct dmat *model(const struct result *r)
{
	static const struct dmat_alloc a = {BASE, 64ull << 20, "a3 64 MiB"};
	struct dmat_opts o;
	dmat_opts_init(&o);
	o.allocs = &a;
	o.n_allocs = 1;
	struct dmat *m = NULL;
	char *cause = NULL;
	CHECKF(dmat_create(r, 0, &o, &m, &cause) == 0, "%s", cause);
	free(cause);
	return m;
}

static int ink(const struct rp_image *im, int x0, int x1, int y0, int y1, struct rgb bg)
{
	int n = 0;
	for (int y = y0; y < y1; y++)
		for (int x = x0; x < x1; x++) {
			const uint8_t *p = im->px + ((size_t)y * im->w + x) * 3;
			n += p[0] != bg.r || p[1] != bg.g || p[2] != bg.b;
		}
	return n;
}

static void test_png(const struct dmat *m)
{
	struct theme th;
	theme_builtin("light", &th);
	struct dmat_view v;
	dmat_view_fit(m, &v);
	struct rdp_opts o;
	render_dmat_png_opts_init(&o);
	struct rp_image im;
	char *cause = NULL;
	CHECKF(render_dmat_png_draw(m, &v, &th, &o, &im, &cause) == 0, "%s", cause);
	free(cause);
	struct rdp_layout l;
	render_dmat_png_layout(m, &o, &l);
	int s = l.scale, pad = 8 * s, glyph = FONT5X7_ADVANCE * s;
	/* the plot's rows: labels left of it, nothing in the padding */
	CHECKF(ink(&im, 0, pad, l.plot_y, l.plot_y + l.plot_h, th.c[THEME_BG]) == 0,
	       "label ink in the left padding: a label ran off the margin");
	/* the lowest range label "a3 64 MiB+0x3fc000" hangs at the bottom row:
	 * its leftmost ink is the left of an 'a' */
	int y = l.plot_y + l.plot_h - 1 - FONT5X7_H * s / 2, h = FONT5X7_H * s;
	int x = pad;
	while (x < l.plot_x && ink(&im, x, x + 1, y, y + h, th.c[THEME_BG]) == 0)
		x++;
	struct rp_image a;
	CHECK(png_canvas_create(&a, glyph, h, th.c[THEME_BG], &cause) == 0);
	png_canvas_text(&a, 0, 0, "a", s, th.c[THEME_AXIS]);
	int ax = 0;
	while (ax < glyph && ink(&a, ax, ax + 1, 0, h, th.c[THEME_BG]) == 0)
		ax++;
	int same = x < l.plot_x - glyph && x - ax >= 0;
	for (int yy = 0; same && yy < h; yy++)
		same = memcmp(a.px + (size_t)yy * a.w * 3, im.px + ((size_t)(y + yy) * im.w + x - ax) * 3,
			      (size_t)glyph * 3) == 0;
	CHECKF(same, "the label does not start with its allocation's 'a' (first ink at x %d)", x);
	png_canvas_free(&a);
	png_canvas_free(&im);
}

/* The terminal names the same range the same way, cut at its tail. */
static void test_term(const struct dmat *m)
{
	char want[48];
	dmat_row_label(m, 0, want, sizeof want);
	CHECKF(strcmp(want, "a3 64 MiB+0x3fc000") == 0, "%s", want);
	struct theme th;
	theme_builtin("mono", &th);
	struct cellgrid *g = cellgrid_create(60, 12);
	struct dmat_view v;
	dmat_view_fit(m, &v);
	struct rdt_opts o;
	render_dmat_term_opts_init(&o);
	CHECK(render_dmat_term_draw(g, m, &v, &th, &o) == 0);
	int found = 0;
	for (int y = 0; y < 12 && !found; y++) {
		struct strbuf sb;
		strbuf_init(&sb);
		cellgrid_row_text(g, y, &sb);
		found = sb.data && strncmp(sb.data, "a3 64 MiB+0x3f ", 15) == 0;
		strbuf_done(&sb);
	}
	CHECK(found);
	cellgrid_free(g);
}

int main(void)
{
	struct result *r = deep_pages();
	struct dmat *m = model(r);
	if (m) {
		test_png(m);
		test_term(m);
	}
	dmat_free(m);
	result_free(r);
	return testlib_report();
}
