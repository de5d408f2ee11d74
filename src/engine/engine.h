/* The probe engine pipeline: PTX text + kernel name + probes -> probed PTX
 * and the map plan the hook needs to launch it. Pure: no driver, no files. */
#ifndef NTOP_ENGINE_H
#define NTOP_ENGINE_H
#include <stddef.h>
#include <stdint.h>
#include "engine/probe/probe.h"

#define ENGINE_MAX_MAPS 8
#define ENGINE_MAX_GLOBALS 64

/* One map buffer as the device code addresses it: an extra .u64 kernel
 * parameter appended after the original ones (in map order) points at
 *   [u32 count per unit][pad to 16 bytes][units * cap * rec_size record bytes]
 * where unit = thread (thread maps), warp (warp maps: ceil(threads/32) per
 * block) or block (block maps), units = blocks * units_per_block, unit index =
 * block_linear * units_per_block + (thread_linear, thread_linear/32 or 0), and
 * count = bytes the unit tried to save (saves past cap*rec_size are dropped,
 * so records written = min(count, cap*rec_size)/rec_size). The buffer must
 * be 16-byte aligned (the device code uses vector stores where a record
 * start, 16-aligned area + multiple of rec_size, allows). Every unit that
 * reaches a kernel exit stores its count there; a unit that leaves
 * otherwise (exit/trap in a .func) leaves its count as the host set it.
 * A map whose SAVEs all sit in entry and exit hooks (a static cursor) has
 * the same count in every unit, since each thread runs the entry once and
 * reaches exactly one exit: when no .func of the module can `exit`, the
 * kernel stores no counts at all (count_static, count_bytes); the host
 * neither clears nor copies them and takes count_bytes for every unit. On
 * an H100 the count store alone cost a memory-bound copy 2.6% and a short
 * block reduction 3-4% (doc/performance.md). A map that stores counts
 * then stores every unit's at its exit, overwriting what was there, so
 * the host clears counts only where a unit may leave without (count_clear).
 *
 * Records are laid out one of two ways, by engine_map_slot_major():
 *  - unit-major: unit u's record k at (u * cap + k) * rec_size (warp maps,
 *    and any map with cap 1, where both layouts are the same);
 *  - slot-major: (k * units + u) * rec_size (thread maps with cap > 1), so
 *    the 32 lanes of a warp saving their k-th record at once write 32
 *    consecutive records, one coalesced store, instead of 32 stores
 *    cap * rec_size apart. Total size is the same either way.
 * Result files record which one was used (result_map_record reads both).
 *
 * Block sampling (engine_map_sampled: slot-major maps, whose size grows
 * with cap x threads, and warp maps with cap > 1, cap x warps): when a
 * launch's maps would not fit the hook's budget (or, with a warp map, its
 * smaller per-launch target), it keeps the records of 1 block in 2^shift:
 * of a slot-major map those whose block_linear is a multiple of 2^shift,
 * spread over the launch (dmat's accesses over time); of a warp map the
 * first ceil(blocks / 2^shift) (engine_map_sample_prefix), which the GPU
 * runs first: a kept block runs slower, and one among the last to run
 * would hold up the kernel's end (a Triton matmul with 8 kept blocks of
 * 1024 spread over it took 1.18x). The shift travels in the low 5 bits of
 * the map's pointer parameter (the buffer itself is 256-aligned). The
 * count area still has a slot for every unit, but only the kept blocks'
 * units store their counts where a map's cursor is dynamic (the others
 * leave theirs as found: the host clears and reads only the kept blocks'
 * counts, so what the other blocks tried to save is not known; a static
 * map's counts are not stored at all, see count_static); the record area
 * holds only the kept blocks' units, kept unit index = (block_linear >>
 * shift) * units_per_block + unit in block (with the first blocks kept,
 * the unit index itself), and the slot-major stride is that smaller
 * number of units. When every map of a kernel is sampled the same way (all
 * slot-major, or all warp maps) and it has no indirect branch, a block not
 * kept branches at entry to a copy of the kernel's original body (calling
 * original copies of the instrumented .funcs; ptx_inject_plain.c) and runs
 * as if unprobed; otherwise its region hooks (at = "region") are branched
 * around, one predicated branch a boundary. */
struct engine_map {
	struct probe_map map; /* copy of the probe's map (name, level, cap, rec_size, fields) */
	char probe[PROBE_NAME_MAX];
	int param_index;      /* index of its .u64 parameter in the probed kernel */
	int count_static;     /* the kernel stores no counts: every unit's is count_bytes */
	uint32_t count_bytes;
	int count_clear;      /* a unit may leave without storing its count (a .func can
				 exit): the host clears the counts before each launch */
};

struct engine_global {
	char name[256];
	int is_const;         /* .const: copied in only; .global: copied in and back */
};

/* The places of a probed kernel where probes run: every instruction an
 * opcode hook fires at, and every region boundary (hooks at = "region"),
 * in the kernel and in the device functions it calls. A snippet's SITE is
 * its site's index here, so a record can name the source line it came
 * from. */
enum engine_site_kind { ENGINE_SITE_INSN, ENGINE_SITE_BEGIN, ENGINE_SITE_END };

struct engine_site {
	enum engine_site_kind kind;
	int region;                /* BEGIN/END: the region's index in its probe; else -1 */
	int func;                  /* index in engine_sites.funcs: the kernel is 0 */
	int ptx_line;              /* the instruction's line in the PTX the engine was given */
	char opcode[48];           /* the instruction's opcode (cut to fit) */
	int file, line, col;       /* source position: file indexes engine_sites.files; line 0 = none */
	int at_file, at_line;      /* where it was inlined (at_line 0 = not inlined) */
};

struct engine_sites {
	struct engine_site *s;
	int n;
	char **funcs;              /* function names (mangled) */
	int n_funcs;
	char **files;              /* source files as the PTX's .file named them */
	int n_files;
	struct probe_region *regions; /* the regions of the probe that records them */
	int n_regions;
};
void engine_sites_done(struct engine_sites *sites);

struct engine_stats {
	/* wall time per phase: ms_parse includes pruning (ptx_parse_kernel parses
	 * only what the kernel reaches), so ms_prune stays 0; ms_inject includes
	 * verification; ms_emit covers both emits (pruned and probed) */
	double ms_parse, ms_prune, ms_inject, ms_emit;
	int lines_in, lines_pruned, lines_probed;       /* PTX line counts */
	int sites;            /* tracepoint sites instrumented */
	int sites_in_funcs;   /* matching sites inside .func bodies not instrumented (why: funcs_why) */
	int funcs_probed;     /* .func bodies instrumented */
	const char *funcs_why; /* why some .func was left alone, or NULL (a static string) */
	int sites_no_addr;    /* matching sites with no address for ADDR/BYTES (.param, bulk tensor copies) */
};

struct engine_result {
	char *ptx;            /* probed PTX, NUL-terminated */
	size_t ptx_len;
	char *pruned_ptx;     /* the kernel alone, unprobed (for baselines/debug) */
	char target[32];      /* first .target word, e.g. "sm_90a" */
	int n_params_orig;
	int n_maps;
	struct engine_map maps[ENGINE_MAX_MAPS];
	int n_globals;        /* module variables the kernel uses (state sync) */
	struct engine_global globals[ENGINE_MAX_GLOBALS];
	struct engine_stats stats;
	struct engine_sites sites;
};

/* Where a unit's map addresses (its count, a static cursor's record start)
 * and warp maps' lane-0 test are computed. By default once at entry and
 * kept in registers: the exit then only stores, so warps leave as soon as
 * the kernel's own work is done (~40 instructions fewer at every exit).
 * ENGINE_ADDR_AT_EXIT computes them at each exit instead: ~4 registers
 * fewer through the whole kernel, for a kernel whose occupancy or spills
 * those registers would cost (the hook builds both and picks). */
enum { ENGINE_ADDR_AT_EXIT = 1 };

/* Launch shapes the probed code may assume. ENGINE_BLOCK_1D: launched only
 * with ntid.y = ntid.z = 1; ENGINE_GRID_1D: only with nctaid.y = nctaid.z =
 * 1. The unit arithmetic then leaves the y and z terms out: on H100 their
 * special-register reads cost app_cost's reduce 7% and copy 2% inside the
 * kernel (doc/performance.md). Code built with either flag computes wrong
 * addresses for any other shape: the caller keys it by the shape
 * (engine_shape_of) and never launches it with another. */
enum { ENGINE_BLOCK_1D = 2, ENGINE_GRID_1D = 4 };
/* The shape flags a launch of grid x block satisfies. */
unsigned engine_shape_of(const uint32_t grid[3], const uint32_t block[3]);

/* Runs parse -> prune -> verify -> inject -> emit. Probes are verified here
 * too, so a rejected probe fails with the verifier's cause. flags:
 * ENGINE_ADDR_AT_EXIT and the shape flags, or 0. */
int engine_instrument(const char *ptx, size_t len, const char *kernel,
		      struct probe *const *probes, int n_probes, unsigned flags,
		      struct engine_result *res, char **cause);
void engine_result_done(struct engine_result *res);

/* A launch's map buffers back to back, each 256-aligned (the low pointer
 * bits carry the sampling shift): total bytes, off[i] each map's offset
 * (off may be NULL); 0 on overflow. */
uint64_t engine_plan_bytes(const struct engine_result *res, uint64_t blocks, uint32_t threads, uint32_t shift,
			   uint64_t off[ENGINE_MAX_MAPS]);
/* Has the plan a map block sampling shrinks (engine_map_sampled)? */
int engine_plan_sampled(const struct engine_result *res);
/* ... and is one of them a warp map (the hook's smaller target)? */
int engine_plan_warp_sampled(const struct engine_result *res);
/* The smallest shift >= min_shift whose buffers fit in `limit` bytes; 0
 * when no map can be sampled; the shift keeping one block when nothing
 * fits (the caller checks the size again). */
uint32_t engine_plan_shift(const struct engine_result *res, uint64_t blocks, uint32_t threads, uint32_t min_shift,
			   uint64_t limit);

#define ENGINE_SAMPLE_SHIFT_MAX 31u

/* Bytes the map buffer needs for a launch of `blocks` blocks of `threads`
 * threads keeping 1 block in 2^shift (ignored for maps that cannot be
 * sampled); 0 on overflow. Mirrors the device-side layout above. */
uint64_t engine_map_bytes(const struct probe_map *m, uint64_t blocks, uint32_t threads, uint32_t shift);
/* Units with room for records (the slot-major stride) under that shift. */
uint64_t engine_map_rec_units(const struct probe_map *m, uint64_t blocks, uint32_t threads, uint32_t shift);
/* Index among the units with records of unit `unit`, or UINT64_MAX when its
 * block was not kept. */
uint64_t engine_map_kept_unit(const struct probe_map *m, uint64_t blocks, uint32_t threads, uint32_t shift,
			      uint64_t unit);
uint64_t engine_map_units(const struct probe_map *m, uint64_t blocks, uint32_t threads);
/* Offset of the record area inside the buffer (after the counts). */
uint64_t engine_map_records_offset(const struct probe_map *m, uint64_t blocks, uint32_t threads);
/* 1 when m has a folded field (a block map's "end:u64:max"): its records
 * must be all zero before each launch (the host clears them). */
int engine_map_records_clear(const struct probe_map *m);
/* 1 when m's records are slot-major (see the layout above): the one rule
 * the instrumenter, the host mirror and the hook's result files share. */
int engine_map_slot_major(const struct probe_map *m);
/* 1 when m can be block-sampled (see block sampling above). */
int engine_map_sampled(const struct probe_map *m);
/* 1 when a sampled m keeps the first blocks rather than every 2^shift-th. */
int engine_map_sample_prefix(const struct probe_map *m);
/* Index of unit `unit`'s record `slot` in the record area of a launch with
 * `units` units (multiply by rec_size for the byte offset). */
uint64_t engine_map_record_index(const struct probe_map *m, uint64_t units, uint64_t unit,
				 uint32_t slot);
/* Unit index of thread `tid` of block `ctaid` in a launch of grid x block,
 * computed the way the probed kernel's prologue does (host mirror, used by
 * tests and trace readers); *lane0 = 1 when this thread stores for its unit
 * (always for thread maps, lane 0 of each warp for warp maps, thread 0 of
 * the block for a block map's plain fields: every warp's lane 0 folds its
 * folded ones). */
uint64_t engine_map_unit_index(const struct probe_map *m, const uint32_t grid[3],
			       const uint32_t block[3], const uint32_t ctaid[3],
			       const uint32_t tid[3], int *lane0);

#endif
