/* The warps view of a regions launch drawn as a PNG (render_regions_png.c):
 * a lane per warp, its regions as coloured bars over its life, a time axis
 * in SM cycles and a legend with each region's share. */
#ifndef NTOP_RENDER_REGIONS_PNG_H
#define NTOP_RENDER_REGIONS_PNG_H
#include <stdint.h>

#include "viz/png_canvas.h"
#include "viz/regions.h"
#include "viz/theme.h"

struct rr_opts {
	int width, height;   /* pixels */
	const char *title;   /* kernel */
	const char *subtitle; /* launch, grid, device */
	const char *header;  /* which warps, their time */
};

/* A region's colour: a colour-blind-safe palette, or greys in mono themes. */
struct rgb render_regions_color(const struct theme *th, uint32_t region, int n_regions);
/* Draws the n warps idx[] (regions_lanes) of g. */
int render_regions_png(const struct regions *g, const uint64_t *idx, uint64_t n, const struct theme *th,
		       const struct rr_opts *o, struct rp_image *out, char **cause);

#endif
