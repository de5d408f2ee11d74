/* The DMAT drawn as an RGB image (png_canvas.h) for PNG export:
 *
 *   title (kernel), subtitle (launch, grid/block, device), header stats, notes
 *   address labels | heatmap, one bin per pixel, lowest address at the   | colour bar:
 *   (range starts) | bottom; dashed lines where gaps were collapsed      | accesses per
 *                  | time axis with ticks and units                      | cell, log scale
 *   legend: address ranges (allocation, start, size, accesses)
 *
 * Text is the 5x7 font, scaled 2x at the default 1600x900. */
#ifndef NTOP_RENDER_DMAT_PNG_H
#define NTOP_RENDER_DMAT_PNG_H
#include "viz/dmat.h"
#include "viz/png_canvas.h"
#include "viz/theme.h"

#define RDP_DEFAULT_W 1600
#define RDP_DEFAULT_H 900

struct rdp_opts {
	int width, height;      /* pixels (render_png_check_size's limits) */
	const char *title;      /* kernel name */
	const char *subtitle;   /* launch, grid and block, device */
};

struct rdp_layout {
	int scale;                          /* text scale */
	int plot_x, plot_y, plot_w, plot_h; /* the heatmap: bin (x, row) at pixel
					       (plot_x + x, plot_y + plot_h - 1 - row) */
	int bar_x, bar_y, bar_w, bar_h;     /* colour bar: count 1 at the bottom, max at the top */
};

void render_dmat_png_opts_init(struct rdp_opts *o);
void render_dmat_png_layout(const struct dmat *m, const struct rdp_opts *o, struct rdp_layout *l);
/* Draws into *out (allocated; free with png_canvas_free). */
int render_dmat_png_draw(const struct dmat *m, const struct dmat_view *v, const struct theme *th,
			 const struct rdp_opts *o, struct rp_image *out, char **cause);

#endif
