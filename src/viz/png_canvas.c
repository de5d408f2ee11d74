/* The shared PNG raster (png_canvas.h). libpng reports errors by longjmp;
 * the writer keeps what it must undo outside the jump's reach and removes
 * its temporary file on every failure. */
#include "viz/png_canvas.h"

#include <errno.h>
#include <math.h>
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cause.h"
#include "viz/font5x7.h"

int png_canvas_create(struct rp_image *im, int w, int h, struct rgb bg, char **cause)
{
	memset(im, 0, sizeof *im);
	if (w <= 0 || h <= 0)
		return cause_set(cause, "image size %dx%d", w, h);
	im->px = malloc((size_t)w * h * 3);
	if (!im->px)
		return cause_set(cause, "out of memory for a %dx%d image", w, h);
	im->w = w;
	im->h = h;
	png_canvas_fill(im, 0, 0, w, h, bg);
	return 0;
}

void png_canvas_free(struct rp_image *im)
{
	free(im->px);
	im->px = NULL;
	im->w = im->h = 0;
}

void png_canvas_fill(struct rp_image *im, int x0, int y0, int x1, int y1, struct rgb c)
{
	x0 = x0 < 0 ? 0 : x0;
	y0 = y0 < 0 ? 0 : y0;
	x1 = x1 > im->w ? im->w : x1;
	y1 = y1 > im->h ? im->h : y1;
	for (int y = y0; y < y1; y++) {
		uint8_t *p = im->px + ((size_t)y * im->w + x0) * 3;
		for (int x = x0; x < x1; x++, p += 3) {
			p[0] = c.r;
			p[1] = c.g;
			p[2] = c.b;
		}
	}
}

void png_canvas_vdash(struct rp_image *im, int x, int y0, int y1, int on, int off, struct rgb c)
{
	for (int y = y0; y < y1; y += on + off)
		png_canvas_fill(im, x, y, x + 1, y + on < y1 ? y + on : y1, c);
}

void png_canvas_hdash(struct rp_image *im, int y, int x0, int x1, int on, int off, struct rgb c)
{
	for (int x = x0; x < x1; x += on + off)
		png_canvas_fill(im, x, y, x + on < x1 ? x + on : x1, y + 1, c);
}

void png_canvas_text(struct rp_image *im, int x, int y, const char *s, int scale, struct rgb c)
{
	font5x7_draw(im->px, im->w, im->h, x, y, s, scale, c);
}

void png_canvas_text_fit(struct rp_image *im, int x, int y, const char *s, int scale, int max_w, struct rgb col)
{
	if (font5x7_text_width(s, scale) <= max_w) {
		png_canvas_text(im, x, y, s, scale, col);
		return;
	}
	int room = max_w / (FONT5X7_ADVANCE * scale) - 3;
	char buf[512];
	const char *p = s;
	int n = 0;
	while (n < room && font5x7_next(&p))
		n++;
	size_t bytes = (size_t)(p - s) < sizeof buf - 4 ? (size_t)(p - s) : sizeof buf - 4;
	memcpy(buf, s, bytes);
	strcpy(buf + bytes, "...");
	png_canvas_text(im, x, y, buf, scale, col);
}

int png_canvas_scale(int w, int h)
{
	return w >= 1200 && h >= 640 ? 2 : 1;
}

int png_canvas_line_h(int s)
{
	return (FONT5X7_H + 4) * s;
}

/* ---- PNG ---- */

struct pc_png_err {
	char msg[200];
};

static void pc_png_error(png_structp png, png_const_charp msg)
{
	struct pc_png_err *e = png_get_error_ptr(png);
	snprintf(e->msg, sizeof e->msg, "%s", msg);
	png_longjmp(png, 1);
}

static void pc_png_warning(png_structp png, png_const_charp msg)
{
	(void)png;
	(void)msg; /* library code never prints; warnings do not stop the write */
}

/* The libpng part; -1 with err->msg set when libpng failed. */
static int pc_png_stream(FILE *f, const struct rp_image *img, struct pc_png_err *err)
{
	png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, err, pc_png_error, pc_png_warning);
	png_infop info = png ? png_create_info_struct(png) : NULL;
	if (!png || !info) {
		png_destroy_write_struct(png ? &png : NULL, NULL);
		snprintf(err->msg, sizeof err->msg, "libpng: out of memory");
		return -1;
	}
	if (setjmp(png_jmpbuf(png))) {
		png_destroy_write_struct(&png, &info);
		return -1;
	}
	png_init_io(png, f);
	png_set_IHDR(png, info, (png_uint_32)img->w, (png_uint_32)img->h, 8, PNG_COLOR_TYPE_RGB,
		     PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
	png_text txt = {0};
	txt.compression = PNG_TEXT_COMPRESSION_NONE;
	txt.key = (png_charp) "Software";
	txt.text = (png_charp) "ntop";
	png_set_text(png, info, &txt, 1);
	png_write_info(png, info);
	for (int y = 0; y < img->h; y++)
		png_write_row(png, img->px + (size_t)y * img->w * 3);
	png_write_end(png, info);
	png_destroy_write_struct(&png, &info);
	return 0;
}

int png_canvas_write(const char *path, const struct rp_image *img, char **cause)
{
	if (!img->px || img->w <= 0 || img->h <= 0)
		return cause_set(cause, "%s: no image to write", path);
	char *tmp;
	if (asprintf(&tmp, "%s.tmpXXXXXX", path) < 0)
		return cause_set(cause, "out of memory");
	int fd = mkstemp(tmp);
	if (fd < 0) {
		cause_set(cause, "cannot create %s: %s", path, strerror(errno));
		free(tmp);
		return -1;
	}
	fchmod(fd, 0644); /* mkstemp makes it private; an image is for sharing */
	FILE *f = fdopen(fd, "wb");
	struct pc_png_err err = {""};
	int rc = -1;
	if (!f) {
		close(fd);
		cause_set(cause, "%s: %s", tmp, strerror(errno));
	} else if (pc_png_stream(f, img, &err) < 0) {
		fclose(f);
		cause_set(cause, "writing %s: %s", path, err.msg);
	} else if (fflush(f) != 0 || fsync(fileno(f)) != 0) {
		cause_set(cause, "writing %s: %s", path, strerror(errno));
		fclose(f);
	} else if (fclose(f) != 0) {
		cause_set(cause, "writing %s: %s", path, strerror(errno));
	} else if (rename(tmp, path) != 0) {
		cause_set(cause, "renaming %s to %s: %s", tmp, path, strerror(errno));
	} else {
		rc = 0;
	}
	if (rc < 0)
		unlink(tmp);
	free(tmp);
	return rc;
}

void png_canvas_x_ticks(struct rp_image *im, int plot_x, int plot_w, int y, double t0, double t1, double step,
			int scale, struct rgb c, png_canvas_tick_fmt fmt, const void *ctx)
{
	double span = t1 - t0;
	if (!(span > 0) || !(step > 0))
		return;
	int last_end = -(1 << 20);
	for (double t = ceil(t0 / step) * step; t <= t1 + step * 1e-9; t += step) {
		int x = plot_x + (int)floor((t - t0) / span * plot_w);
		if (x < plot_x || x > plot_x + plot_w)
			continue;
		png_canvas_fill(im, x, y + 1, x + 1, y + 1 + 4 * scale, c);
		char lab[32];
		fmt(ctx, t, step, lab, sizeof lab);
		int w = font5x7_text_width(lab, scale), lx = x - w / 2;
		if (lx <= last_end + 4 * scale || lx + w > im->w - 2)
			continue;
		png_canvas_text(im, lx, y + 6 * scale, lab, scale, c);
		last_end = lx + w;
	}
}
