/* The timeline drawn into a cell grid (no curses; the TUI copies the cells):
 *
 *   row 0          header: blocks, waves/SM, running / scheduling cycles, SMs
 *   rows 1..h-3    one track per SM (or per residency slot with `expand`);
 *                  UTF-8: two tracks per cell row with half blocks (top track
 *                  = upper half: '▀', lower: '▄', both: '█' or '▀' on a
 *                  coloured background); ASCII or `mono`: one track per
 *                  row, two glyphs ('#' '=', or '█' '▒') alternating between
 *                  neighbouring blocks so they stay apart without colour;
 *                  mono marks tail blocks with a third glyph ('~', '░');
 *                  the cursor is in reverse video
 *   row h-2        time axis: tick marks and labels
 *   row h-1        legend: colour scale, tail marker, axis unit, notes
 *
 * The left columns hold the SM id of each row's (top) track. */
#ifndef NTOP_RENDER_TERM_H
#define NTOP_RENDER_TERM_H
#include "viz/cellgrid.h"
#include "viz/theme.h"
#include "viz/timeline.h"

struct rt_opts {
	int utf8;             /* half blocks and box glyphs; 0: ASCII only */
	int mono;             /* no colours to tell blocks apart: glyphs do */
	int expand;           /* a track per residency slot instead of one per SM */
	enum tl_color color;
	int cursor_lane;      /* lane of the cursor, -1: none */
	double cursor_t;      /* axis units */
	int no_header, no_axis, no_legend; /* leave those rows out (small panes) */
};

struct rt_layout {
	int label_w;          /* cells left of the plot */
	int plot_x, plot_y, plot_w, plot_h; /* in cells */
	int tracks_per_row;   /* 2 (UTF-8 half blocks) or 1 (ASCII, mono) */
	int header_y, axis_y, legend_y; /* -1 when not drawn */
};

/* Defaults: UTF-8, index colours, no cursor, every row drawn. */
void render_term_opts_init(struct rt_opts *o);
/* Where things go in a w x h grid. */
void render_term_layout(const struct timeline *tl, int w, int h, const struct rt_opts *o,
			struct rt_layout *out);
/* Tracks that fit in the plot: set v->n_lanes from it (unexpanded: lanes). */
int render_term_tracks_fit(const struct rt_layout *l);
/* Track k of the view (0 = top): its lane and output row of
 * timeline_bin_lane(..., out_rows); -1 past the last track. */
int render_term_track(const struct timeline *tl, const struct tl_view *v, const struct rt_opts *o, int k,
		      uint32_t *lane, int *row, int *out_rows);
/* The track under cell (x, y) (half: 0 upper, 1 lower) and the time at
 * that column; -1 when the cell is not in the plot. */
int render_term_at(const struct timeline *tl, const struct tl_view *v, const struct rt_opts *o,
		   const struct rt_layout *l, int x, int y, int half, int *track, double *t);
/* Draws everything into g (cleared first). -1 only when out of memory. */
int render_term_draw(struct cellgrid *g, const struct timeline *tl, const struct tl_view *v,
		     const struct theme *th, const struct rt_opts *o);

#endif
