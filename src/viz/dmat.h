/* Dense memory access timeline (DMAT, NEUTRINO seed 000) as a model: no I/O,
 * no curses, no libpng. x = time, y = memory page, a cell's value = how many
 * recorded accesses hit those pages in that time range (colour: log scale).
 * The renderers (render_dmat_term.c, render_dmat_png.c) and the TUI draw it.
 *
 * Records come from the dmat probe (probes/dmat.toml) or any map with named
 * fields: addr:u64 (required), clock:u32|u64 (SM clock, cycles) and/or
 * gtime:u64 (global timer, ns), and optionally sizekind:u32 (bytes in bits
 * 0-23, kind in 24-31) or size:u32 + kind:u32. Only the records inside each
 * unit's count are read: slots past it hold whatever the buffer held.
 *
 * Time axis:
 *  - DMAT_TIME_SM: SM clock cycles since the block's first recorded access.
 *    SM clocks are not synchronised (each SM counts from its own origin), so
 *    "since kernel start" cannot be measured across SMs; per block, all of
 *    whose warps run on one SM, it can. Blocks are thus overlaid at 0: the
 *    view shows the algorithm's access pattern over a block's life (NEUTRINO's
 *    "normalised" DMAT); a 32-bit clock is unwrapped against the block's
 *    first record, so blocks may run up to 2^31 cycles (~1 s).
 *  - DMAT_TIME_GLOBAL: global timer ns since the earliest recorded access
 *    (needs a gtime field; aligned across SMs: waves appear as steps).
 *
 * Page axis: the address space cut into pages (default 4 KiB: a 4 KiB page
 * holds 32 fully coalesced 128-byte warp accesses, so it is fine enough to
 * separate a kernel's tensors and strides, while a typical working set of
 * tens of MiB still gives a few thousand rows for the renderers to bin; the
 * GPU's 64 KiB / 2 MiB MMU pages would leave a 1 MiB tensor one or no row.
 * --page-size picks others). Only touched pages are drawn: touched pages
 * separated by at most `gap_keep` bytes form a run (the small gaps stay as
 * empty rows), larger gaps are collapsed and drawn as a thin separator. Runs
 * never cross an allocation boundary when allocations are given.
 *
 * Building streams the records, from a result file (dmat_open: the records
 * are decompressed from the file in chunks, never held) or from a result in
 * memory (dmat_create: tests, small files): pass 1 finds each block's time
 * origin, the time extent and the touched pages; pass 2 fills a fine 2-D
 * histogram (at most DMAT_HIST_COLS x DMAT_HIST_ROWS cells and
 * DMAT_HIST_CELLS in all: 32 MiB; integer-wide time bins and row bins, each
 * a power of two). dmat_bin draws a viewport from the histogram while the
 * viewport's cells are no finer than its bins (exact when the bins are one
 * cycle / ns and one page wide, otherwise a bin's count is shared between
 * the two cells it straddles in proportion to its cycles / pages in each);
 * finer viewports re-read the records (one more pass: seconds for 100M
 * records). Memory is O(units + blocks + touched pages + histogram cells),
 * never O(records); m->mem_bytes counts it (the file's counts and a pass's
 * buffers included). */
#ifndef NTOP_DMAT_H
#define NTOP_DMAT_H
#include <stddef.h>
#include <stdint.h>

#include "trace/result.h"
#include "viz/theme.h"

enum dmat_time { DMAT_TIME_SM, DMAT_TIME_GLOBAL };

/* Kinds as probes/dmat.toml writes them (access bits 18-20; sizekind bits
 * 24-31 in traces from before sites were recorded); 0: unknown. */
enum dmat_kind {
	DMAT_KIND_OTHER = 0,
	DMAT_KIND_LOAD = 1,
	DMAT_KIND_STORE = 2,
	DMAT_KIND_ATOMIC = 3,     /* atom.global, red.global */
	DMAT_KIND_ASYNC_LOAD = 4, /* cp.async global -> shared */
	DMAT_KIND_ASYNC_STORE = 5,/* bulk shared -> global */
	DMAT_N_KINDS
};

#define DMAT_PAGE_DEFAULT 4096u
#define DMAT_PAGE_MIN 64u
#define DMAT_PAGE_MAX (1u << 30)
#define DMAT_GAP_KEEP_DEFAULT 65536u /* bytes: smaller untouched gaps stay as rows */
#define DMAT_NONE (-1)
#define DMAT_SITES 2048u           /* sites an access field names (11 bits) */
#define DMAT_HIST_COLS 4096u       /* fine histogram: time bins at most */
#define DMAT_HIST_ROWS 4096u       /* row bins at most */
#define DMAT_HIST_CELLS (1u << 23) /* cells at most (u32 each: 32 MiB) */

/* An allocation the hook saw (optional: the hook does not record them yet). */
struct dmat_alloc {
	uint64_t base;   /* device address */
	uint64_t size;   /* bytes */
	const char *label; /* e.g. "A", "weights"; NULL: shown by address */
};

struct dmat_opts {
	uint64_t page_size;   /* bytes, a power of two in DMAT_PAGE_MIN..MAX; 0: default */
	enum dmat_time time;
	uint64_t gap_keep;    /* bytes; 0: DMAT_GAP_KEEP_DEFAULT */
	const struct dmat_alloc *allocs; /* copied by dmat_create; may be NULL */
	int n_allocs;
	int alloc_filter;     /* DMAT_NONE: every access; else only allocs[alloc_filter] */
	uint32_t kinds;       /* bit k keeps enum dmat_kind k; 0: all */
	const uint8_t *sites; /* bit i keeps records of site i (access field's site; a
				 record without one is dropped); NULL: all */
	uint32_t hist_cols, hist_rows; /* fine histogram limits; 0: DMAT_HIST_COLS / ROWS */
	int amd;              /* AMD GPU: the clock is a CU's, labels say so */
};

/* A run of pages on the collapsed axis. */
struct dmat_run {
	uint64_t page0;     /* page number (address / page_size) of its first row */
	uint64_t n_pages;   /* rows: touched pages and the small gaps between them */
	uint64_t row0;      /* its first row on the collapsed axis */
	int alloc;          /* index into dmat.allocs holding its first page, DMAT_NONE */
	uint64_t accesses;  /* records that hit it (after the filters) */
};

struct dmat {
	const struct result *r;  /* dmat_create: borrowed, must outlive the model;
				    dmat_open: the file's header and counts (records NULL) */
	struct result_stream *st;/* dmat_open: the file, owned; NULL: r's records */
	int map_index;
	uint32_t gtimer_ns;      /* ns per gtime tick: 1, or 10 on AMD GPUs (a 100 MHz counter) */
	enum dmat_time time;     /* what was asked for may have fallen back */
	char note[160];          /* why it fell back, "" otherwise */
	uint64_t page_size;      /* bytes */
	uint64_t gap_keep;       /* bytes */
	int alloc_filter;
	uint32_t kinds;          /* effective filter mask (never 0) */
	int site_filter;         /* records kept by site (sites[]) */
	uint8_t sites[DMAT_SITES / 8];
	struct dmat_alloc *allocs; /* copies (labels too), in the caller's order */
	int n_allocs;
	/* record layout (byte offsets, -1 absent) */
	int off_addr, off_clock, off_gtime, off_sizekind, off_access, off_size, off_kind;
	int clock_bytes;         /* 4 or 8 */
	uint64_t units_per_block;/* threads (thread map) or warps (warp map) per block */
	/* what pass 1 found */
	uint64_t records;        /* valid records (inside the counts) */
	uint64_t accesses;       /* records kept by the filters */
	uint64_t dropped;        /* saves past the cap (the map's count) */
	uint64_t unsampled;      /* saves of blocks block sampling skipped */
	int unsampled_unknown;   /* ... not counted (the hook's sampled dmat launches) */
	uint32_t sample_shift;   /* 1 block in 2^this has records (0: all) */
	uint64_t by_kind[DMAT_N_KINDS]; /* kept accesses per kind */
	uint64_t bytes;          /* kept accesses' bytes (0 when sizes are not recorded) */
	uint64_t blocks_seen;    /* blocks with at least one valid record */
	uint64_t g0;             /* global mode: earliest gtime (ns) */
	double span;             /* axis units: latest kept access + 1 */
	uint64_t addr_min, addr_max; /* kept accesses' lowest / highest address */
	uint64_t n_rows;         /* rows of the collapsed page axis */
	uint32_t n_runs;
	struct dmat_run *runs;   /* sorted by address */
	uint64_t n_blocks;       /* blocks with records (kept blocks when sampled) */
	uint64_t *org;           /* [n_blocks] SM time: each block's origin (clock); NULL in global time */
	uint32_t *hist;          /* [hist_rows * hist_cols] kept accesses, row 0 = lowest address */
	uint32_t hist_cols, hist_rows;
	uint64_t hist_bw;        /* axis units per histogram column (a power of two) */
	uint64_t hist_rh;        /* collapsed rows per histogram row (a power of two) */
	struct dmat_bin_cache *cache; /* the last grid binned from the records: a redraw of
				    the same fine view does not re-read the file */
	size_t mem_bytes;        /* heap the model holds (for the bounded-memory check) */
	size_t mem_peak;         /* most it held while building */
	/* axis units */
	const char *unit;        /* "cycles" or "ns" */
	const char *tick_unit;   /* "cycles", "ns", "\u00b5s" (UTF-8), "ms" */
	double tick_div;         /* axis units per tick_unit */
	char axis_label[128];
};

/* The visible window: time [t0, t1) in axis units, rows [y0, y1) of the collapsed axis. */
struct dmat_view {
	double t0, t1;
	double y0, y1;
};

/* What is under one cell of a binned grid. */
struct dmat_cell {
	double t0, t1;           /* axis units */
	uint64_t row0, row1;     /* collapsed rows [row0, row1) */
	uint64_t addr0, addr1;   /* [addr0, addr1): first row's page start .. last row's page end */
	uint64_t pages;          /* rows covered */
	uint32_t runs;           /* runs it spans (> 1: it crosses a collapsed gap) */
	int alloc;               /* allocation of its first row, DMAT_NONE */
	uint32_t count;          /* accesses in the cell */
};

void dmat_opts_init(struct dmat_opts *o);
/* Index of the map with DMAT records (addr plus clock or gtime), or -1. */
int dmat_find_map(const struct result *r);
/* Why map i cannot be drawn ("" when it can). */
void dmat_map_problem(const struct result *r, int i, char *buf, size_t len);
/* Builds the model over map `map_index` of r, whose records are in memory. */
int dmat_create(const struct result *r, int map_index, const struct dmat_opts *o, struct dmat **out,
		char **cause);
/* Builds the model over map `map_index` (-1: dmat_find_map) of the result
 * file at path, streaming its records; the model keeps the file open. */
int dmat_open(const char *path, int map_index, const struct dmat_opts *o, struct dmat **out, char **cause);
void dmat_free(struct dmat *m);

/* ---- viewport ---- */
void dmat_view_fit(const struct dmat *m, struct dmat_view *v);
/* Zooms time by `factor` (> 1 in) keeping time `at` in place; at least 4 axis units wide. */
void dmat_view_zoom(const struct dmat *m, struct dmat_view *v, double factor, double at);
/* Zooms rows by `factor` keeping row `at` in place; at least 1 row tall. */
void dmat_view_zoom_rows(const struct dmat *m, struct dmat_view *v, double factor, double at);
/* Pans by a fraction of the window (negative: earlier / lower addresses). */
void dmat_view_pan(const struct dmat *m, struct dmat_view *v, double frac);
void dmat_view_scroll(const struct dmat *m, struct dmat_view *v, double frac);
/* Puts the window back inside [0, span) x [0, n_rows). */
void dmat_view_clamp(const struct dmat *m, struct dmat_view *v);
/* Shows allocation a's rows (all its runs), full time; -1 when it has none. */
int dmat_view_alloc(const struct dmat *m, struct dmat_view *v, int a);

/* ---- binning ---- */
/* Counts kept accesses into rows x cols cells (out[row * cols + col], row 0 =
 * lowest address), from the histogram or (finer views) one pass over the
 * records. Column x covers time
 * [t0 + x w, t0 + (x + 1) w); when rows <= visible rows, each page goes to the
 * output row holding its centre (so cells sum to the accesses in view); when
 * zoomed past one row per page, a page fills every output row it covers.
 * *max_out (may be NULL) gets the largest cell. -1 for bad sizes, or when
 * re-reading the file failed (out then holds zeros). */
int dmat_bin(const struct dmat *m, const struct dmat_view *v, int cols, int rows, uint32_t *out,
	     uint32_t *max_out);
/* Would dmat_bin serve this from the histogram (no pass over the records)? */
int dmat_bin_fast(const struct dmat *m, const struct dmat_view *v, int cols, int rows);

/* ---- lookups ---- */
/* Row of an address on the collapsed axis; -1 when its page is not drawn. */
int64_t dmat_addr_row(const struct dmat *m, uint64_t addr);
/* Run holding a row, or -1. */
int dmat_row_run(const struct dmat *m, uint64_t row);
/* First address of a row's page (rows past the end: the last page's end). */
uint64_t dmat_row_addr(const struct dmat *m, uint64_t row);
/* The allocation holding addr, DMAT_NONE. */
int dmat_alloc_of(const struct dmat *m, uint64_t addr);
/* What cell (col, row) of a grid binned with dmat_bin(v, cols, rows) covers. */
int dmat_cell_at(const struct dmat *m, const struct dmat_view *v, int cols, int rows, const uint32_t *grid,
		 int col, int row, struct dmat_cell *out);

/* ---- colour ---- */
/* Position of `count` on the log colour scale [0, 1]: 0 for 1 access (and
 * for 0), 1 for `max`: log(count) / log(max). */
double dmat_scale(uint32_t count, uint32_t max);
/* Background for 0, else the theme's gradient at dmat_scale. */
struct rgb dmat_color(const struct theme *th, uint32_t count, uint32_t max);

/* ---- text ---- */
const char *dmat_kind_name(enum dmat_kind k);
/* "12.3k accesses (64 per thread kept, 4.5k dropped)  1.5 MB  ld 66% st 33%  512 pages in 3 ranges" */
void dmat_header(const struct dmat *m, char *buf, size_t len);
/* A row's page start for axis labels: "LABEL" or "LABEL+0x2000" inside a
 * labelled allocation, else the address. */
void dmat_row_label(const struct dmat *m, uint64_t row, char *buf, size_t len);
/* "0x7f3a00001000" */
void dmat_fmt_addr(uint64_t addr, char *buf, size_t len);
/* "4 KiB", "2 MiB", "1536 B" */
void dmat_fmt_bytes(uint64_t bytes, char *buf, size_t len);
/* Tick label at t for ticks `step` apart, in tick_unit. */
void dmat_fmt_tick(const struct dmat *m, double t, double step, char *buf, size_t len);
/* Cursor readout: "t 1.2k-1.3k cycles  0x7f..000-0x7f..fff (2 pages, A+0x1000)  37 accesses" */
void dmat_cell_text(const struct dmat *m, const struct dmat_cell *c, char *buf, size_t len);

#endif
