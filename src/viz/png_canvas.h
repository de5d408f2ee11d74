/* An RGB raster for PNG exports, shared by the timeline (render_png.c) and
 * DMAT (render_dmat_png.c) renderers: filled rectangles, dashed lines, 5x7
 * text (font5x7.h) and the libpng writer. No layout, no model: callers place
 * everything. */
#ifndef NTOP_PNG_CANVAS_H
#define NTOP_PNG_CANVAS_H
#include <stdint.h>

#include "viz/theme.h"

struct rp_image {
	int w, h;
	uint8_t *px; /* [h][w][3] RGB */
};

/* A w x h image filled with bg; -1 with a cause when out of memory. */
int png_canvas_create(struct rp_image *im, int w, int h, struct rgb bg, char **cause);
void png_canvas_free(struct rp_image *im);
/* Rectangle [x0, x1) x [y0, y1), clipped to the image. */
void png_canvas_fill(struct rp_image *im, int x0, int y0, int x1, int y1, struct rgb c);
/* Vertical / horizontal dashed line: `on` pixels drawn, `off` skipped. */
void png_canvas_vdash(struct rp_image *im, int x, int y0, int y1, int on, int off, struct rgb c);
void png_canvas_hdash(struct rp_image *im, int y, int x0, int x1, int on, int off, struct rgb c);
/* UTF-8 text with its top-left corner at (x, y). */
void png_canvas_text(struct rp_image *im, int x, int y, const char *s, int scale, struct rgb c);
/* The same, cut with "..." to max_w pixels. */
void png_canvas_text_fit(struct rp_image *im, int x, int y, const char *s, int scale, int max_w, struct rgb c);
/* Tick marks every `step` from t0 to t1 under a plot spanning [plot_x,
 * plot_x + plot_w), hanging from row y, each labelled by fmt (labels that
 * would overlap the previous one or the image edge are left out). */
typedef void (*png_canvas_tick_fmt)(const void *ctx, double t, double step, char *buf, size_t len);
void png_canvas_x_ticks(struct rp_image *im, int plot_x, int plot_w, int y, double t0, double t1, double step,
			int scale, struct rgb c, png_canvas_tick_fmt fmt, const void *ctx);
/* Text scale for an image size: 2 from 1200x640 up, else 1. */
int png_canvas_scale(int w, int h);
/* Pixels per text line at scale s. */
int png_canvas_line_h(int s);
/* 8-bit RGB PNG, written to a temporary file beside path and renamed. */
int png_canvas_write(const char *path, const struct rp_image *img, char **cause);

#endif
