/* PNG export: draw a tiny known timeline, write it, read it back with libpng
 * and look at pixels: size, background at the corners, bar colours where the
 * layout says the bars are, tail outlines, text in the label areas, only
 * grey levels with the mono theme; write errors and bad sizes. */
#include <dirent.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"
#include "viz/block_sched.h"
#include "viz/render_png.h"
#include "viz/timeline.h"

static char dir[] = "/tmp/ntop-test-png-XXXXXX";

/* SM 0: P 0..1000 (block 0). SM 1: Q 0..500 (block 1), R 500..1000 (block 2),
 * S 100..300 in a second slot (block 3). SM clocks start anywhere. */
static struct block_sched *make_bs(void)
{
	static const struct bs_block b[] = {
		{7000, 8000, 0, 0, 0, 0, 1, 0},  /* P */
		{9000, 9500, 0, 1, 0, 1, 1, 0},  /* Q */
		{9100, 9300, 0, 1, 1, 3, 1, 0},  /* S */
		{9500, 10000, 0, 1, 0, 2, 1, 0}, /* R */
	};
	struct block_sched *bs = calloc(1, sizeof *bs);
	bs->blocks = malloc(sizeof b);
	memcpy(bs->blocks, b, sizeof b);
	bs->sms = calloc(2, sizeof *bs->sms);
	bs->sms[0] = (struct bs_sm){0, 1, 1, 1000, 0, 0};
	bs->sms[1] = (struct bs_sm){1, 3, 2, 1200, 0, 1};
	bs->n_sms = 2;
	bs->n_blocks = bs->n_blocks_recorded = 4;
	bs->waves = 1.0;
	bs->mean_running = 1100;
	bs->max_concurrent = 2;
	return bs;
}

struct img {
	int w, h;
	uint8_t *px;
};

static int read_png(const char *path, struct img *out)
{
	png_image im;
	memset(&im, 0, sizeof im);
	im.version = PNG_IMAGE_VERSION;
	if (!png_image_begin_read_from_file(&im, path))
		return -1;
	im.format = PNG_FORMAT_RGB;
	out->w = (int)im.width;
	out->h = (int)im.height;
	out->px = malloc(PNG_IMAGE_SIZE(im));
	if (!out->px || !png_image_finish_read(&im, NULL, out->px, 0, NULL)) {
		png_image_free(&im);
		free(out->px);
		return -1;
	}
	return 0;
}

static struct rgb px(const struct img *im, int x, int y)
{
	const uint8_t *p = im->px + ((size_t)y * im->w + x) * 3;
	return (struct rgb){p[0], p[1], p[2]};
}

static int count_color(const struct img *im, int x0, int y0, int x1, int y1, struct rgb c)
{
	int n = 0;
	for (int y = y0; y < y1; y++)
		for (int x = x0; x < x1; x++)
			n += rgb_eq(px(im, x, y), c);
	return n;
}

/* Draws, writes, reads back; the image and layout come back for checks. */
static int render(const struct timeline *tl, const struct tl_view *v, const struct theme *th, enum tl_color color,
		  int w, int h, const char *name, struct img *im, struct rp_layout *l)
{
	struct rp_opts o;
	render_png_opts_init(&o);
	o.width = w;
	o.height = h;
	o.color = color;
	o.title = "fill_kernel(float*, int)";
	o.subtitle = "launch seq 3  grid 4x1x1  block 128x1x1";
	struct rp_image img;
	char *cause = NULL, path[256];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	int rc = render_png_draw(tl, v, th, &o, &img, &cause);
	CHECKF(rc == 0, "%s", cause);
	if (rc == 0) {
		rc = render_png_write(path, &img, &cause);
		CHECKF(rc == 0, "%s", cause);
	}
	rp_image_free(&img);
	free(cause);
	render_png_layout(tl, v, &o, l);
	return rc == 0 ? read_png(path, im) : -1;
}

/* Pixel row in the middle of sub-row `row` of lane k. */
static int mid_y(const struct rp_layout *l, const struct timeline *tl, int k, int row)
{
	int rows = render_png_out_rows(l, tl->lanes[k].rows), y0, y1;
	render_png_row_span(l, k, row, rows, &y0, &y1);
	return (y0 + y1) / 2;
}

static int x_of(const struct rp_layout *l, const struct tl_view *v, double t)
{
	return l->plot_x + (int)timeline_t_to_x(v, l->plot_w, t);
}

static void test_dark(void)
{
	struct block_sched *bs = make_bs();
	struct timeline *tl = NULL;
	timeline_create(bs, TL_TIME_SM, &(struct tl_device){ 1980000, 132, 0 }, &tl, NULL);
	struct tl_view v;
	timeline_view_fit(tl, &v);
	struct theme th;
	theme_builtin("dark", &th);
	struct img im = {0};
	struct rp_layout l;
	if (render(tl, &v, &th, TL_COLOR_INDEX, 640, 400, "dark.png", &im, &l) < 0) {
		CHECK(0);
		goto out;
	}
	CHECK(im.w == 640 && im.h == 400);
	struct rgb bg = th.c[THEME_BG];
	CHECK(rgb_eq(px(&im, 0, 0), bg) && rgb_eq(px(&im, 639, 0), bg) && rgb_eq(px(&im, 0, 399), bg) &&
	      rgb_eq(px(&im, 639, 399), bg));
	CHECK(l.plot_x > 0 && l.plot_y > 0 && l.plot_x + l.plot_w < 640 && l.plot_y + l.plot_h < 400);
	/* P: block 0 -> gradient start; Q: block 1 of 0..3; R: block 2; S: slot 1 */
	struct rgb p = px(&im, x_of(&l, &v, 500), mid_y(&l, tl, 0, 0));
	CHECKF(rgb_eq(p, th.c[THEME_BAR_START]), "%02x%02x%02x", p.r, p.g, p.b);
	CHECK(rgb_eq(px(&im, x_of(&l, &v, 250), mid_y(&l, tl, 1, 0)), theme_gradient(&th, 1.0 / 3)));
	CHECK(rgb_eq(px(&im, x_of(&l, &v, 750), mid_y(&l, tl, 1, 0)), theme_gradient(&th, 2.0 / 3)));
	CHECK(rgb_eq(px(&im, x_of(&l, &v, 200), mid_y(&l, tl, 1, 1)), th.c[THEME_BAR_END]));
	/* nothing in slot 1 after S ends */
	CHECK(rgb_eq(px(&im, x_of(&l, &v, 650), mid_y(&l, tl, 1, 1)), bg));
	/* a separator column where R starts right after Q */
	CHECK(!rgb_eq(px(&im, x_of(&l, &v, 500), mid_y(&l, tl, 1, 0)), theme_gradient(&th, 2.0 / 3)) ||
	      !rgb_eq(px(&im, x_of(&l, &v, 500) - 1, mid_y(&l, tl, 1, 0)), theme_gradient(&th, 1.0 / 3)));
	/* SM labels in the left margin, tick labels and axis line below the plot */
	CHECK(count_color(&im, 0, l.plot_y - 30, l.plot_x - 2, l.plot_y + l.plot_h, th.c[THEME_AXIS]) > 10);
	CHECK(count_color(&im, l.plot_x, l.plot_y + l.plot_h + 3, 640, l.plot_y + l.plot_h + 20,
			  th.c[THEME_AXIS]) > 20);
	CHECK(count_color(&im, l.plot_x, l.plot_y + l.plot_h, l.plot_x + l.plot_w, l.plot_y + l.plot_h + 1,
			  th.c[THEME_AXIS]) == l.plot_w);
	/* title text at the top */
	CHECK(count_color(&im, 0, 0, 640, l.plot_y / 2, th.c[THEME_FG]) > 50);
	free(im.px);

	/* duration colours: P and R are tails (end at 1000 >= 900), outlined in warn */
	if (render(tl, &v, &th, TL_COLOR_DURATION, 640, 400, "dur.png", &im, &l) == 0) {
		int rows = render_png_out_rows(&l, 1), y0, y1, x = x_of(&l, &v, 500);
		render_png_row_span(&l, 0, 0, rows, &y0, &y1);
		CHECK(rgb_eq(px(&im, x, y0), th.c[THEME_WARN]) && rgb_eq(px(&im, x, y1 - 1), th.c[THEME_WARN]));
		CHECK(rgb_eq(px(&im, x, (y0 + y1) / 2), th.c[THEME_BAR_END])); /* P: the longest */
		CHECK(rgb_eq(px(&im, x_of(&l, &v, 200), mid_y(&l, tl, 1, 1)), th.c[THEME_BAR_START])); /* S */
		free(im.px);
	} else {
		CHECK(0);
	}
out:
	timeline_free(tl);
	block_sched_free(bs);
}

static void test_mono_and_sizes(void)
{
	struct block_sched *bs = make_bs();
	struct timeline *tl = NULL;
	timeline_create(bs, TL_TIME_SM, &(struct tl_device){ 1980000, 132, 0 }, &tl, NULL);
	struct tl_view v;
	timeline_view_fit(tl, &v);
	struct theme th;
	theme_builtin("mono", &th);
	struct img im = {0};
	struct rp_layout l;
	for (int c = 0; c < 2; c++) {
		if (render(tl, &v, &th, c ? TL_COLOR_DURATION : TL_COLOR_INDEX, 320, 200, "mono.png", &im, &l) < 0) {
			CHECK(0);
			continue;
		}
		CHECK(im.w == 320 && im.h == 200);
		long colour = 0, lit = 0;
		for (int i = 0; i < im.w * im.h; i++) {
			const uint8_t *p = im.px + i * 3;
			colour += p[0] != p[1] || p[1] != p[2];
			lit += p[0] > 0;
		}
		CHECK_EQ_INT(colour, 0);
		CHECK(lit > 1000);
		free(im.px);
	}
	/* the default size draws too; zoomed views clip */
	theme_builtin("light", &th);
	timeline_view_zoom(tl, &v, 4, 500);
	if (render(tl, &v, &th, TL_COLOR_INDEX, RP_DEFAULT_W, RP_DEFAULT_H, "big.png", &im, &l) == 0) {
		CHECK(im.w == 1600 && im.h == 900 && l.scale == 2);
		CHECK(rgb_eq(px(&im, x_of(&l, &v, 500), mid_y(&l, tl, 0, 0)), th.c[THEME_BAR_START]));
		free(im.px);
	} else {
		CHECK(0);
	}

	struct rp_opts o;
	render_png_opts_init(&o);
	struct rp_image img;
	char *cause = NULL;
	o.width = 319;
	CHECK(render_png_draw(tl, &v, &th, &o, &img, &cause) < 0 && img.px == NULL && strstr(cause, "319x900"));
	o.width = 400;
	o.height = 20000;
	CHECK(render_png_draw(tl, &v, &th, &o, &img, &cause) < 0);
	CHECK(render_png_check_size(320, 200, NULL) == 0);
	o.height = 200;
	CHECK(render_png_draw(tl, &v, &th, &o, &img, &cause) == 0);
	CHECK(render_png_write("/nonexistent-dir/x.png", &img, &cause) < 0 && strstr(cause, "/nonexistent-dir/x.png"));
	rp_image_free(&img);
	free(cause);
	timeline_free(tl);
	block_sched_free(bs);
}

/* An empty launch still draws a readable image. */
static void test_empty(void)
{
	struct block_sched *bs = calloc(1, sizeof *bs);
	bs->waves = -1;
	struct timeline *tl = NULL;
	CHECK(timeline_create(bs, TL_TIME_GLOBAL, &(struct tl_device){ 0, 0, 0 }, &tl, NULL) == 0);
	struct tl_view v;
	timeline_view_fit(tl, &v);
	struct theme th;
	theme_builtin("dark", &th);
	struct img im = {0};
	struct rp_layout l;
	if (render(tl, &v, &th, TL_COLOR_INDEX, 400, 300, "empty.png", &im, &l) == 0) {
		CHECK(count_color(&im, 0, 0, 400, 300, th.c[THEME_WARN]) > 20); /* "no blocks recorded" */
		free(im.px);
	} else {
		CHECK(0);
	}
	timeline_free(tl);
	block_sched_free(bs);
}

static void cleanup(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int leftovers = 0;
	char path[512];
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
			continue;
		leftovers += strstr(e->d_name, ".tmp") != NULL;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
	CHECK_EQ_INT(leftovers, 0); /* no temporary files left behind */
	rmdir(dir);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_dark();
	test_mono_and_sizes();
	test_empty();
	cleanup();
	return testlib_report();
}
