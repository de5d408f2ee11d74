/* DMAT renderers: the terminal heatmap of a tiny model as exact strings
 * (ASCII density glyphs and UTF-8 half blocks), cursor readout; the PNG read
 * back with libpng (size, background, the hot cell's colour, colour bar);
 * range labels naming allocations the same way in both;
 * and `ntop export --view dmat` on a synthetic trace directory written with
 * the trace writer (result_write), including its error paths. */
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

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

static void fld(struct probe_map *pm, const char *name, enum probe_type t)
{
	struct probe_field *f = &pm->fields[pm->n_fields++];
	snprintf(f->name, sizeof f->name, "%s", name);
	f->type = t;
	f->offset = pm->rec_size;
	pm->rec_size += t;
}

static struct result *new_result(uint64_t seq, uint32_t kid, const char *kernel, const char *probes)
{
	struct result *r = calloc(1, sizeof *r);
	r->pid = 600;
	r->seq = seq;
	r->kernel_id = kid;
	r->kernel = strdup(kernel);
	r->probes = strdup(probes);
	r->grid[0] = r->grid[1] = r->grid[2] = 1;
	r->block[1] = r->block[2] = 1;
	r->device_sms = 132;
	r->device_cc = 90;
	r->sm_clock_khz = 1980000;
	r->n_maps = 1;
	r->maps = calloc(1, sizeof *r->maps);
	return r;
}

/* r's map as the dmat probe's: units threads, cap records of 16 bytes
 * each (filled with 0x5a), no counts yet. */
static struct result_map *dmat_map(struct result *r, uint32_t cap, uint32_t units)
{
	r->block[0] = units;
	struct result_map *m = &r->maps[0];
	snprintf(m->map.name, sizeof m->map.name, "dmat");
	m->map.level = PROBE_LEVEL_THREAD;
	m->map.cap = cap;
	m->stored = m->map.cap;
	fld(&m->map, "addr", PROBE_U64);
	fld(&m->map, "clock", PROBE_U32);
	fld(&m->map, "sizekind", PROBE_U32);
	m->units = units;
	m->counts = calloc(units, 4);
	m->records = malloc((size_t)units * cap * 16);
	memset(m->records, 0x5a, (size_t)units * cap * 16);
	return m;
}

/* Record k of unit u: a load of `bytes` at addr, at SM clock `clock`. */
static void dmat_put(struct result_map *m, uint32_t u, uint32_t k, uint64_t addr, uint32_t clock, uint32_t bytes)
{
	uint8_t *rec = m->records + ((size_t)u * m->map.cap + k) * 16;
	uint32_t sk = bytes | (uint32_t)DMAT_KIND_LOAD << 24;
	memcpy(rec, &addr, 8);
	memcpy(rec + 8, &clock, 4);
	memcpy(rec + 12, &sk, 4);
	m->counts[u] = (k + 1) * 16;
}

/* One block of 15 threads: page p (0..3) gets 2^p accesses at time 4p:
 * counts 1, 2, 4, 8 on a diagonal. */
static struct result *tiny(void)
{
	struct result *r = new_result(2, 1, "_Z4copyPfS_", "dmat");
	struct result_map *m = dmat_map(r, 2, 15);
	uint32_t u = 0;
	for (uint32_t p = 0; p < 4; p++)
		for (uint32_t k = 0; k < (1u << p); k++, u++)
			dmat_put(m, u, 0, BASE + p * PAGE + k * 16, 70000 + 4 * p, 16);
	m->records_written = 15;
	return r;
}

/* The model of r, ranges named by allocs (may be NULL). */
static struct dmat *model_of(const struct result *r, const struct dmat_alloc *allocs, int n_allocs)
{
	struct dmat_opts o;
	dmat_opts_init(&o);
	o.allocs = allocs;
	o.n_allocs = n_allocs;
	struct dmat *m = NULL;
	char *cause = NULL;
	CHECKF(dmat_create(r, 0, &o, &m, &cause) == 0, "%s", cause);
	free(cause);
	return m;
}

static char *row_text(const struct cellgrid *g, int y)
{
	struct strbuf sb;
	strbuf_init(&sb);
	cellgrid_row_text(g, y, &sb);
	return sb.data; /* owned by the caller */
}

static void check_row(const struct cellgrid *g, int y, const char *want)
{
	char *got = row_text(g, y);
	CHECKF(got && strcmp(got, want) == 0, "row %d:\n  got  '%s'\n  want '%s'", y, got ? got : "(null)", want);
	free(got);
}

static void test_term(void)
{
	struct result *r = tiny();
	struct dmat *m = model_of(r, NULL, 0);
	struct theme th;
	theme_builtin("dark", &th);
	struct dmat_view v;
	dmat_view_fit(m, &v);
	CHECK_EQ_INT((uint64_t)m->span, 13);

	/* ASCII: one bin row per cell, 16 label + 16 plot columns, 4 plot rows */
	struct rdt_opts o;
	render_dmat_term_opts_init(&o);
	o.utf8 = 0;
	struct cellgrid *g = cellgrid_create(32, 7);
	CHECK(render_dmat_term_draw(g, m, &v, &th, &o) == 0);
	struct rdt_layout l;
	render_dmat_term_layout(m, 32, 7, &o, &l);
	CHECK(l.label_w == 16 && l.plot_w == 16 && l.plot_h == 4 && l.bin_rows == 4);
	check_row(g, 0, "15 accesses  240 B  ld 100% ~   "); /* whole fields only */
	/* time t -> column floor(16 t / 13): 0, 4, 9, 14; glyph by log2(count) / 3 */
	check_row(g, 1, "                              @ ");
	check_row(g, 2, "                         *      ");
	check_row(g, 3, "                    -           ");
	check_row(g, 4, "0x7f0000000000  .               ");
	check_row(g, 5, "                |0              ");
	check_row(g, 6, "accesses/cell 1 .:-=+*#%@ 8 (log");
	CHECK(rgb_eq(cellgrid_at(g, 30, 1)->fg, th.c[THEME_BAR_END]));
	CHECK(rgb_eq(cellgrid_at(g, 16, 4)->fg, th.c[THEME_BAR_START]));
	CHECK(render_dmat_term_glyph(0, 8) == ' ' && render_dmat_term_glyph(1, 1) == '@');

	int col, row;
	CHECK(render_dmat_term_at(&l, 30, 1, 0, &col, &row) == 0);
	CHECK(col == 14 && row == 3);
	CHECK(render_dmat_term_at(&l, 3, 1, 0, &col, &row) == -1);
	cellgrid_free(g);

	/* wide: the whole legend and axis; a cursor on the hot bin puts its
	 * readout in the header and paints the bin in the selection colour */
	g = cellgrid_create(100, 7);
	render_dmat_term_draw(g, m, &v, &th, &o);
	check_row(g, 6, "accesses/cell 1 .:-=+*#%@ 8 (log)  x: cycles since each block's first access                        ");
	render_dmat_term_layout(m, 100, 7, &o, &l);
	CHECK(render_dmat_term_at(&l, l.plot_x + 77, 1, 0, &col, &row) == 0);
	CHECK(col == 77 && row == 3);
	o.cursor_col = col;
	o.cursor_row = row;
	render_dmat_term_draw(g, m, &v, &th, &o);
	char *h = row_text(g, 0);
	CHECKF(h && strstr(h, "t 11.9-12.1 cycles  0x7f0000003000-0x7f0000003fff (1 page)  8 accesses"), "%s", h);
	free(h);
	CHECK(rgb_eq(cellgrid_at(g, l.plot_x + 77, 1)->fg, th.c[THEME_SELECTION]));
	cellgrid_free(g);
	/* narrow: the readout keeps the count, the range as start and pages */
	g = cellgrid_create(48, 7);
	render_dmat_term_layout(m, 48, 7, &o, &l);
	o.cursor_col = 12 * l.plot_w / 13; /* the hot bin: time 12 of 13 */
	o.cursor_row = 3;
	render_dmat_term_draw(g, m, &v, &th, &o);
	h = row_text(g, 0);
	CHECKF(h && !strncmp(h, "t ", 2) && strstr(h, "  8 accesses  0x7f0000003000 +1 page"), "%s", h);
	free(h);
	cellgrid_free(g);

	/* UTF-8: two bin rows per cell (upper = higher address) */
	render_dmat_term_opts_init(&o);
	g = cellgrid_create(32, 5);
	CHECK(render_dmat_term_draw(g, m, &v, &th, &o) == 0);
	check_row(g, 1, "                         \xe2\x96\x84    \xe2\x96\x80 ");
	check_row(g, 2, "0x7f0000000000  \xe2\x96\x84   \xe2\x96\x80           ");
	struct cell *c = cellgrid_at(g, 30, 1);
	CHECK(rgb_eq(c->fg, th.c[THEME_BAR_END]) && rgb_eq(c->bg, th.c[THEME_BG]));
	CHECK(c->fg256 == color_rgb_to_256(th.c[THEME_BAR_END]) || c->fg256 != c->bg256);
	/* no labels on a narrow grid rather than a cut address */
	cellgrid_free(g);
	g = cellgrid_create(20, 5);
	render_dmat_term_draw(g, m, &v, &th, &o);
	render_dmat_term_layout(m, 20, 5, &o, &l);
	CHECK(l.label_w == 0 && l.plot_w == 20);
	cellgrid_free(g);

	/* UTF-8 without colours (mono): the ASCII density glyphs, one bin row per
	 * cell, the cursor in reverse video, the UTF-8 axis marks kept */
	render_dmat_term_opts_init(&o);
	o.mono = 1;
	o.cursor_col = 0;
	o.cursor_row = 0;
	g = cellgrid_create(32, 7);
	CHECK(render_dmat_term_draw(g, m, &v, &th, &o) == 0);
	check_row(g, 1, "                              @ ");
	check_row(g, 2, "                         *      ");
	check_row(g, 3, "                    -           ");
	check_row(g, 4, "0x7f0000000000  .               ");
	CHECK(cellgrid_at(g, 16, 4)->attr & CELL_REVERSE);
	check_row(g, 6, "accesses/cell 1 .:-=+*#%@ 8 (log");
	char *ax = row_text(g, 5);
	CHECKF(ax && strstr(ax, "\xe2\x96\xb2"), "%s", ax);
	free(ax);
	cellgrid_free(g);
	dmat_free(m);
	result_free(r);
}

/* ---- PNG ---- */

static int read_png(const char *path, png_image *img, uint8_t **px)
{
	memset(img, 0, sizeof *img);
	img->version = PNG_IMAGE_VERSION;
	if (!png_image_begin_read_from_file(img, path))
		return -1;
	img->format = PNG_FORMAT_RGB;
	*px = malloc(PNG_IMAGE_SIZE(*img));
	if (!*px || !png_image_finish_read(img, NULL, *px, 0, NULL)) {
		free(*px);
		return -1;
	}
	return 0;
}

static struct rgb px_at(const uint8_t *px, int w, int x, int y)
{
	const uint8_t *p = px + ((size_t)y * w + x) * 3;
	return (struct rgb){p[0], p[1], p[2]};
}

static void test_png(void)
{
	struct result *r = tiny();
	struct dmat *m = model_of(r, NULL, 0);
	struct theme th;
	theme_builtin("light", &th);
	struct dmat_view v;
	dmat_view_fit(m, &v);
	struct rdp_opts o;
	render_dmat_png_opts_init(&o);
	o.title = "copy(float*, float*)";
	struct rp_image im;
	char *cause = NULL;
	CHECKF(render_dmat_png_draw(m, &v, &th, &o, &im, &cause) == 0, "%s", cause);
	char path[] = "/tmp/ntop_test_dmat_XXXXXX";
	int fd = mkstemp(path);
	close(fd);
	CHECKF(png_canvas_write(path, &im, &cause) == 0, "%s", cause);
	png_canvas_free(&im);
	png_image img;
	uint8_t *px = NULL;
	CHECK(read_png(path, &img, &px) == 0);
	unlink(path);
	if (!px)
		return;
	CHECK_EQ_INT(img.width, 1600);
	CHECK_EQ_INT(img.height, 900);
	int w = (int)img.width;
	CHECK(rgb_eq(px_at(px, w, 0, 0), th.c[THEME_BG]));
	struct rdp_layout l;
	render_dmat_png_layout(m, &o, &l);
	/* hot bin: page 3 (top quarter of the plot) at t = 12 */
	int x = l.plot_x + (int)(12.0 * l.plot_w / 13), y = l.plot_y + l.plot_h / 8;
	CHECK(rgb_eq(px_at(px, w, x, y), th.c[THEME_BAR_END]));
	CHECK(rgb_eq(px_at(px, w, x + 1, y), th.c[THEME_BG])); /* one column wide */
	int x0 = l.plot_x, y0 = l.plot_y + l.plot_h - 1 - l.plot_h / 8; /* page 0 at t = 0: one access */
	CHECK(rgb_eq(px_at(px, w, x0, y0), th.c[THEME_BAR_START]));
	CHECK(rgb_eq(px_at(px, w, l.plot_x + l.plot_w / 2, l.plot_y + l.plot_h / 8), th.c[THEME_BG]));
	/* colour bar: max at the top, 1 at the bottom, a mid colour between */
	CHECK(rgb_eq(px_at(px, w, l.bar_x + 2, l.bar_y), th.c[THEME_BAR_END]));
	CHECK(rgb_eq(px_at(px, w, l.bar_x + 2, l.bar_y + l.bar_h - 1), th.c[THEME_BAR_START]));
	struct rgb mid = px_at(px, w, l.bar_x + 2, l.bar_y + l.bar_h / 2);
	CHECK(!rgb_eq(mid, th.c[THEME_BAR_END]) && !rgb_eq(mid, th.c[THEME_BAR_START]) && !rgb_eq(mid, th.c[THEME_BG]));
	CHECK(l.bar_x > l.plot_x + l.plot_w && l.bar_x + l.bar_w < 1600);
	/* text was drawn in the title band */
	int ink = 0;
	for (int yy = 8; yy < 40; yy++)
		for (int xx = 16; xx < 400; xx++)
			ink += !rgb_eq(px_at(px, w, xx, yy), th.c[THEME_BG]);
	CHECK(ink > 100);
	free(px);
	/* too small */
	o.width = 100;
	CHECK(render_dmat_png_draw(m, &v, &th, &o, &im, &cause) == -1);
	free(cause);
	dmat_free(m);
	result_free(r);
}

/* ---- range labels ----
 * Both renderers name a row by dmat_row_label ("a3 64 MiB",
 * "a3 64 MiB+0x3fc000"), and a label longer than its margin keeps its
 * allocation prefix and loses its tail. The PNG used to reserve room for
 * addresses only, so a long "a3 64 MiB+0x..." label ran off the image's left
 * edge and read "64 MiB+0x...". Checked on the pixels: nothing drawn in the
 * left padding, and the bottom label's first glyph identical to a lone "a"
 * drawn by the same font. */

#define OFF 0x3fc000ull /* the touched pages start this far into the allocation */

/* One block of 32 threads, thread p touching page p of BASE + OFF at time 4p. */
static struct result *deep_pages(void)
{
	struct result *r = new_result(2, 1, "_Z4copyPf", "dmat");
	struct result_map *m = dmat_map(r, 1, 32);
	for (uint32_t p = 0; p < 32; p++)
		dmat_put(m, p, 0, BASE + OFF + p * PAGE, 1000 + 4 * p, 4);
	m->records_written = 32;
	return r;
}

static int png_ink(const struct rp_image *im, int x0, int x1, int y0, int y1, struct rgb bg)
{
	int n = 0;
	for (int y = y0; y < y1; y++)
		for (int x = x0; x < x1; x++) {
			const uint8_t *p = im->px + ((size_t)y * im->w + x) * 3;
			n += p[0] != bg.r || p[1] != bg.g || p[2] != bg.b;
		}
	return n;
}

static void test_labels_png(const struct dmat *m)
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
	CHECKF(png_ink(&im, 0, pad, l.plot_y, l.plot_y + l.plot_h, th.c[THEME_BG]) == 0,
	       "label ink in the left padding: a label ran off the margin");
	/* the lowest range label "a3 64 MiB+0x3fc000" hangs at the bottom row:
	 * its leftmost ink is the left of an 'a' */
	int y = l.plot_y + l.plot_h - 1 - FONT5X7_H * s / 2, h = FONT5X7_H * s;
	int x = pad;
	while (x < l.plot_x && png_ink(&im, x, x + 1, y, y + h, th.c[THEME_BG]) == 0)
		x++;
	struct rp_image a;
	CHECK(png_canvas_create(&a, glyph, h, th.c[THEME_BG], &cause) == 0);
	png_canvas_text(&a, 0, 0, "a", s, th.c[THEME_AXIS]);
	int ax = 0;
	while (ax < glyph && png_ink(&a, ax, ax + 1, 0, h, th.c[THEME_BG]) == 0)
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
static void test_labels_term(const struct dmat *m)
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

static void test_labels(void)
{
	struct result *r = deep_pages();
	static const struct dmat_alloc a = {BASE, 64ull << 20, "a3 64 MiB"};
	struct dmat *m = model_of(r, &a, 1);
	if (m) {
		test_labels_png(m);
		test_labels_term(m);
	}
	dmat_free(m);
	result_free(r);
}

/* ---- ntop export --view dmat ---- */

static int write_result(const char *dir, const char *name, struct result *r)
{
	char *cause = NULL;
	int rc = result_write(dir, name, r, &cause);
	CHECKF(rc == 0, "%s", cause);
	free(cause);
	result_free(r);
	return rc;
}

static struct result *bytes_only(void)
{
	struct result *r = new_result(3, 2, "_Z4fillPf", "gmem_bytes");
	r->block[0] = 32;
	struct result_map *m = &r->maps[0];
	snprintf(m->map.name, sizeof m->map.name, "gmem_bytes");
	m->map.level = PROBE_LEVEL_THREAD;
	m->map.cap = 1;
	m->stored = m->map.cap;
	fld(&m->map, "load", PROBE_U32);
	fld(&m->map, "store", PROBE_U32);
	m->units = 32;
	m->counts = calloc(32, 4);
	m->records = calloc(32, 8);
	return r;
}

static int write_fixture(const char *dir)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/results", dir);
	mkdir(dir, 0755);
	mkdir(path, 0755);
	if (write_result(path, "600-2.ntr", tiny()) < 0 || write_result(path, "600-3.ntr", bytes_only()) < 0)
		return -1;
	snprintf(path, sizeof path, "%s/events.log", dir);
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fputs("record t=1 pid=4300 argv=./copy version=0.1.0\n"
	      "hello t=2 pid=600 ppid=4300 exe=/tmp/copy hook=0.1.0 driver=/usr/lib/libcuda.so.1\n"
	      "device t=3 pid=600 ordinal=0 name=NVIDIA%20H100%2080GB%20HBM3 cc=90 sms=132 clock_khz=1980000\n"
	      "module t=4 pid=600 mid=1 api=cuLibraryLoadData kind=fatbin size=4096 ptx=1 sass=1 source=app\n"
	      "kernel t=5 pid=600 kid=1 mid=1 name=_Z4copyPfS_ ptx=1\n"
	      "kernel t=6 pid=600 kid=2 mid=1 name=_Z4fillPf ptx=1\n"
	      "instrument t=7 pid=600 kid=1 status=ok probes=dmat reason= regs_orig=12 regs_probed=18 sites=4 ms_jit=120\n"
	      "launch t=8 pid=600 kid=1 seq=2 api=cuLaunchKernel grid=1,1,1 block=15,1,1 smem=0 probed=1 occ=8\n"
	      "result t=9 pid=600 kid=1 seq=2 file=results/600-2.ntr maps=1 records=15 dropped=0 bytes=1 ns=1\n"
	      "launch t=10 pid=600 kid=2 seq=3 api=cuLaunchKernel grid=1,1,1 block=32,1,1 smem=0 probed=1\n"
	      "result t=11 pid=600 kid=2 seq=3 file=results/600-3.ntr maps=1 records=32 dropped=0 bytes=1 ns=1\n"
	      "exit t=12 pid=600 launches=2\n",
	      f);
	return fclose(f) == 0 ? 0 : -1;
}

/* Runs ntop with args; returns its exit status, output in out. */
static int run_ntop(const char *args, char *out, size_t len)
{
	char cmd[8192];
	snprintf(cmd, sizeof cmd, "%s/bin/ntop %s 2>&1", NTOP_BINARY_DIR, args);
	FILE *p = popen(cmd, "r");
	if (!p)
		return -1;
	size_t n = fread(out, 1, len - 1, p);
	out[n] = 0;
	int st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_cli(void)
{
	char ntop[4096];
	snprintf(ntop, sizeof ntop, "%s/bin/ntop", NTOP_BINARY_DIR);
	if (access(ntop, X_OK) != 0) {
		printf("skip cli: %s not built\n", ntop);
		return;
	}
	char dir[] = "/tmp/ntop_test_dmat_trace_XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char tdir[4200], args[8192], out[8192];
	snprintf(tdir, sizeof tdir, "%s/trace", dir);
	CHECK(write_fixture(tdir) == 0);
	snprintf(args, sizeof args, "export %s -k copy --view dmat -o %s/a.png", tdir, dir);
	CHECKF(run_ntop(args, out, sizeof out) == 0, "%s", out);
	char want[4400];
	snprintf(want, sizeof want, "wrote %s/a.png: 1600x900, 15 accesses in 4 pages of 4 KiB (1 range), SM-cycle time, theme dark",
		 dir);
	CHECKF(strstr(out, want) != NULL, "%s", out);
	png_image img;
	uint8_t *px = NULL;
	snprintf(args, sizeof args, "%s/a.png", dir);
	CHECK(read_png(args, &img, &px) == 0 && img.width == 1600 && img.height == 900);
	free(px);
	px = NULL;
	/* page size, size, theme; global time falls back with a note */
	snprintf(args, sizeof args, "export %s -k copy --view=dmat --page-size 64K --width 800 --height 400 --theme mono "
		 "--time global -o %s/b.png", tdir, dir);
	CHECKF(run_ntop(args, out, sizeof out) == 0, "%s", out);
	CHECKF(strstr(out, "800x400, 15 accesses in 1 pages of 64 KiB (1 range), SM-cycle time, theme mono") &&
		       strstr(out, "note: no global timer"),
	       "%s", out);
	snprintf(args, sizeof args, "%s/b.png", dir);
	CHECK(read_png(args, &img, &px) == 0 && img.width == 800 && img.height == 400);
	free(px);
	/* errors */
	snprintf(args, sizeof args, "export %s -k fill --view dmat -o %s/c.png", tdir, dir);
	CHECK_EQ_INT(run_ntop(args, out, sizeof out), 2);
	CHECKF(strstr(out, "no dmat results to draw a DMAT") && strstr(out, "recorded probes gmem_bytes; maps: gmem_bytes") &&
		       strstr(out, "ntop record -p dmat -k 'fill'"),
	       "%s", out);
	snprintf(args, sizeof args, "export %s -k copy --view dmat --page-size 3000 -o %s/c.png", tdir, dir);
	CHECK_EQ_INT(run_ntop(args, out, sizeof out), 2);
	CHECKF(strstr(out, "power of two"), "%s", out);
	snprintf(args, sizeof args, "export %s -k copy --page-size 4K -o %s/c.png", tdir, dir);
	CHECK_EQ_INT(run_ntop(args, out, sizeof out), 2);
	CHECKF(strstr(out, "--page-size is for --view dmat"), "%s", out);
	/* the timeline still wants block_sched */
	snprintf(args, sizeof args, "export %s -k copy -o %s/c.png", tdir, dir);
	CHECK_EQ_INT(run_ntop(args, out, sizeof out), 2);
	CHECKF(strstr(out, "no block_sched results to draw a timeline") && strstr(out, "recorded probes dmat"), "%s", out);
	snprintf(args, sizeof args, "rm -rf '%s'", dir);
	CHECK(system(args) == 0);
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--write-fixture") == 0)
		return write_fixture(argv[2]) == 0 ? 0 : 1;
	test_term();
	test_png();
	test_labels();
	test_cli();
	return testlib_report();
}
