/* The DMAT drawn into a cell grid (no curses; the TUI copies the cells):
 *
 *   row 0          header: accesses, bytes, kinds, pages; with a cursor, the
 *                  readout of the cell under it instead
 *   rows 1..h-3    the heatmap, lowest address at the bottom. UTF-8: two bin
 *                  rows per cell with half blocks ('▀' upper colour on the
 *                  lower colour as background); ASCII or `mono`: one bin
 *                  row per cell, density glyphs " .:-=+*#%@" (log scale),
 *                  in colour when there is colour; the cursor in reverse
 *   row h-2        time axis: tick marks and labels
 *   row h-1        legend: colour ramp 1..max (log), the x unit, notes
 *
 * The left columns label where address ranges start (allocation label or
 * address); a '┄' ('-') beside the plot marks a collapsed gap. Colours are
 * true colour in the cells; cellgrid derives the 256/8-colour fallbacks. */
#ifndef NTOP_RENDER_DMAT_TERM_H
#define NTOP_RENDER_DMAT_TERM_H
#include "viz/cellgrid.h"
#include "viz/dmat.h"
#include "viz/theme.h"

#define RDT_RAMP " .:-=+*#%@"

struct rdt_opts {
	int utf8;                  /* half blocks; 0: ASCII density glyphs */
	int mono;                  /* no colours: density glyphs in UTF-8 too */
	int cursor_col, cursor_row;/* bin under the cursor (row 0 = lowest address), -1: none */
	int no_header, no_axis, no_legend;
	int no_labels;             /* no address column */
};

struct rdt_layout {
	int label_w;               /* cells left of the plot */
	int plot_x, plot_y, plot_w, plot_h; /* cells */
	int rows_per_cell;         /* bin rows per cell: 2 (UTF-8 half blocks) or 1 (glyphs) */
	int bin_cols, bin_rows;    /* the grid dmat_bin fills */
	int header_y, axis_y, legend_y; /* -1 when not drawn */
};

void render_dmat_term_opts_init(struct rdt_opts *o);
void render_dmat_term_layout(const struct dmat *m, int w, int h, const struct rdt_opts *o,
			     struct rdt_layout *l);
/* The bin under cell (x, y) (half: 0 upper, 1 lower); -1 outside the plot. */
int render_dmat_term_at(const struct rdt_layout *l, int x, int y, int half, int *col, int *row);
/* Density glyph for a count (ASCII mode). */
char render_dmat_term_glyph(uint32_t count, uint32_t max);
/* Draws everything into g (cleared first). -1 only when out of memory. */
int render_dmat_term_draw(struct cellgrid *g, const struct dmat *m, const struct dmat_view *v,
			  const struct theme *th, const struct rdt_opts *o);

#endif
