/* The timeline drawn as an RGB image and written as a PNG (libpng):
 *
 *   title (kernel), subtitle (launch, grid/block), header stats, notes
 *   SM labels | one lane per SM, residency slots stacked inside it
 *             | time axis with ticks and units
 *   legend: colour scale, tail marker
 *
 * Text uses the project's own 5x7 font (font5x7.h), scaled 2x at the
 * default 1600x900. Colours come from the theme. */
#ifndef NTOP_RENDER_PNG_H
#define NTOP_RENDER_PNG_H
#include <stdint.h>

#include "viz/png_canvas.h"
#include "viz/theme.h"
#include "viz/timeline.h"

#define RP_DEFAULT_W 1600
#define RP_DEFAULT_H 900
#define RP_MIN_W 320
#define RP_MIN_H 200
#define RP_MAX_SIDE 10000 /* pixels: beyond this a PNG viewer struggles anyway */

struct rp_opts {
	int width, height;     /* pixels */
	enum tl_color color;
	const char *title;     /* kernel name (UTF-8; outside ASCII drawn as '?') */
	const char *subtitle;  /* launch, grid and block, device */
};

/* Where the plot went: lanes are bands of plot_h / n_lanes pixels. */
struct rp_layout {
	int scale;             /* text scale: 1 or 2 */
	int plot_x, plot_y, plot_w, plot_h;
	double lane_h;         /* pixels per lane (fractional) */
};

void render_png_opts_init(struct rp_opts *o);
/* Checks the size; -1 with a cause for sizes outside RP_MIN..RP_MAX_SIDE. */
int render_png_check_size(int w, int h, char **cause);
void render_png_layout(const struct timeline *tl, const struct tl_view *v, const struct rp_opts *o,
		       struct rp_layout *l);
/* Pixel rows [y0, y1) of sub-row `row` of `out_rows` in lane band k (0 = first visible). */
void render_png_row_span(const struct rp_layout *l, int k, int row, int out_rows, int *y0, int *y1);
/* Sub-rows a lane of `rows` slots gets in a band: fewer when pixels are short. */
int render_png_out_rows(const struct rp_layout *l, uint32_t rows);

int render_png_draw(const struct timeline *tl, const struct tl_view *v, const struct theme *th,
		    const struct rp_opts *o, struct rp_image *out, char **cause);
/* 8-bit RGB PNG, written to a temporary file beside path and renamed. */
int render_png_write(const char *path, const struct rp_image *img, char **cause);
void rp_image_free(struct rp_image *img);

#endif
