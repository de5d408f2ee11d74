/* Probes: a snippet of PTX plus where it runs (tracepoint) plus where its
 * results go (a map). Loaded from TOML in two schemas:
 *  - NEUTRINO's (seed 003): top-level author/description/analyze_hook, one
 *    table per probe with position = "kernel" | "opcode[:opcode...]",
 *    optional datamodel = "thread:BYTES" | "warp:BYTES" [":CAP"] (cap 1 unless
 *    given), before/after.
 *  - ntop's own (doc/probes.md, probe_ntop.c): ntop_probe = 1, [map] with named
 *    fields, [[hook]] entries; chosen when the top level has `ntop_probe`.
 * Snippet helpers (expanded by the instrumenter):
 *   SAVE.u32 {a, b, ...} / SAVE.u64 {a, ...}  append values to this thread's /
 *       warp's record (whole records per snippet execution; clamped at cap)
 *   ADDR   64-bit address of the traced instruction's memory operand
 *   BYTES  bytes accessed by the traced instruction (type size * vector width)
 *   OUT, IN1, IN2, IN3   the traced instruction's operands 0, 1, 2, 3
 *   CLOCK (%clock64), GTIMER (%globaltimer, ns), SMID (%smid)
 *   SITE   the instruction site's index in the probed kernel's site table
 *          (engine.h: its function, PTX line and source line)
 *   REGION the region's index (region hooks)
 */
#ifndef NTOP_PROBE_H
#define NTOP_PROBE_H
#include <stddef.h>
#include <stdint.h>

/* BLOCK: one record array per block; thread 0 of the block stores its
 * fields, except folded ones (below), which every warp's lane 0 folds in. */
enum probe_level { PROBE_LEVEL_THREAD = 1, PROBE_LEVEL_WARP = 2, PROBE_LEVEL_BLOCK = 3 };
/* What the snippets are written in: PTX (NVIDIA), or AMDGPU assembly
 * (isa = "gcn" in the ntop schema; doc/amdgpu.md has its dialect). */
enum probe_isa { PROBE_ISA_PTX, PROBE_ISA_GCN };
enum probe_type { PROBE_U32 = 4, PROBE_U64 = 8 }; /* value = size in bytes */

#define PROBE_NAME_MAX 64
#define PROBE_MAX_FIELDS 16

/* How a block map's field combines its warps' values ("end:u64:max"): the
 * field starts at 0 before the launch and each warp's lane 0 folds its
 * value in (red.global.max / red.global.add), so the block's last exit or
 * its warps' count needs no barrier and no per-warp record. */
enum probe_fold { PROBE_FOLD_NONE, PROBE_FOLD_MAX, PROBE_FOLD_ADD };

struct probe_field {
	char name[PROBE_NAME_MAX];
	enum probe_type type;
	uint32_t offset; /* bytes from record start */
	enum probe_fold fold; /* block maps only */
};

struct probe_map {
	char name[PROBE_NAME_MAX];
	enum probe_level level;
	uint32_t cap;      /* records per thread (or warp, or block) */
	uint32_t rec_size; /* bytes per record */
	int n_fields;      /* 0 when the schema gives no names (NEUTRINO) */
	struct probe_field fields[PROBE_MAX_FIELDS];
};

enum probe_tp_kind {
	PROBE_TP_ENTRY, /* kernel start, before the first kernel instruction */
	PROBE_TP_EXIT,  /* before every ret of the kernel body and every exit */
	PROBE_TP_INSN,  /* before or after instructions whose opcode matches */
	PROBE_TP_REGION, /* where a warp enters (after = 0) or leaves (after = 1) one of
			    the probe's regions (struct probe_region) */
};

/* What a region is made of (probe_region.c reads "NAME=SPEC"):
 *   FILE:LINE or FILE:FIRST-LAST   instructions of those source lines (or
 *                                  inlined from a call on them)
 *   @tensor @load @store @wait @async   an instruction class
 *   @loop:FILE:LINE                each iteration of the innermost loop
 *                                  holding that line */
enum probe_region_kind { PROBE_REGION_LINES = 1, PROBE_REGION_CLASS, PROBE_REGION_LOOP };
enum probe_class {
	PROBE_CLASS_TENSOR = 1, /* mma, wmma.mma, wgmma.mma_async, tcgen05.mma */
	PROBE_CLASS_LOAD,       /* ld.global, ldu.global */
	PROBE_CLASS_STORE,      /* st.global, atom.global, red.global */
	PROBE_CLASS_WAIT,       /* CTA and cluster barriers, mbarrier waits, cp.async/bulk/wgmma wait groups */
	PROBE_CLASS_ASYNC,      /* cp.async, cp.async.bulk (TMA included), cp.reduce.async.bulk issue */
};

#define PROBE_REGION_SPEC_MAX 256
#define PROBE_MAX_REGIONS 32

struct probe_region {
	char name[PROBE_NAME_MAX];
	char spec[PROBE_REGION_SPEC_MAX]; /* as written, for messages and the trace */
	enum probe_region_kind kind;
	enum probe_class cls;             /* PROBE_REGION_CLASS */
	char file[PROBE_REGION_SPEC_MAX]; /* LINES and LOOP: a path suffix */
	int first, last;                  /* LINES: the lines; LOOP: first == last */
};

/* Reads "NAME=SPEC": 0, or -1 with why. */
int probe_region_parse(const char *name_spec, struct probe_region *r, char *why, size_t why_len);
/* The spec of a class region, "@tensor"; NULL for another number. */
const char *probe_class_name(enum probe_class c);

/* Where a snippet byte was written in the probe file (1-based; columns count
 * code points). */
struct probe_pos {
	int line, col;
};

struct probe_hook {
	char name[PROBE_NAME_MAX]; /* TOML table it came from */
	enum probe_tp_kind kind;
	int after;                 /* PROBE_TP_INSN: 1 = after the instruction */
	char **opcodes;            /* PROBE_TP_INSN: dotted opcode prefixes */
	int n_opcodes;
	char *snippet;             /* PTX text with helpers */
	int snippet_line;          /* line in the TOML file where the snippet text starts */
	int snippet_flat;          /* 1: the snippet came from a one-line TOML string, its
				      lines are \n escapes, so all of them sit on snippet_line */
	struct probe_pos *snippet_pos; /* per snippet byte, strlen(snippet) + 1 entries; NULL when
				      the snippet was not read from a file (errors then count
				      lines and columns from snippet_line) */
	const char *snippet_pos_of;    /* the text snippet_pos describes: a loader that replaces
				      the snippet (NEUTRINO's SAVE [ NAME ]) leaves positions
				      that no longer apply, and lines are counted instead */
	/* NEUTRINO's meanings (probe_neutrino.c), 0 for ntop's schema: */
	int anywhere;              /* PROBE_TP_INSN: a pattern may start at any dotted part of
				      the opcode (NEUTRINO matches positions as substrings) */
	int no_pred;               /* PROBE_TP_INSN: runs whether or not the traced
				      instruction's guard holds (NEUTRINO's no_pred) */
	int after_jump_before;     /* PROBE_TP_INSN after-hook: at a branch, ret, exit or trap,
				      where nothing after runs, it runs just before instead */
};

struct probe {
	char name[PROBE_NAME_MAX];
	char *path;        /* file it came from ("<string>" otherwise) */
	char *description;
	char *analysis;    /* built-in analysis to run on results ("block_sched"), or NULL */
	char *decls;       /* .reg statements the loader declares for every hook (NEUTRINO's
			      %NR registers, registers its snippets write undeclared), or NULL */
	char *notes;       /* what loading decided that the file does not say, one line
			      each ("...\n"), shown by ntop check; NULL when nothing */
	enum probe_isa isa; /* PTX unless the ntop schema says isa = "gcn" */
	int has_map;
	struct probe_map map;
	struct probe_hook *hooks;
	int n_hooks;
	struct probe_region *regions; /* regions = ["NAME=SPEC", ...] (region hooks) */
	int n_regions;
};

#define PROBE_FILE_MAX (4u << 20) /* bytes: probe files are small; refuse anything bigger */
#define PROBE_MAX_HOOKS 64
#define PROBE_MAX_OPCODES 32      /* opcode patterns per hook */
#define PROBE_MAX_CAP (1u << 20)  /* records per thread or warp */
#define PROBE_MAX_REC 4096        /* bytes per record */

/* Probe text `text` (from `path`) with its regions replaced by specs
 * ("NAME=SPEC", checked here), malloc'd in *out (probe_regions_text.c). */
int probe_text_with_regions(const char *text, const char *path, const char *const *specs, int n, char **out,
			    char **cause);
/* Does p record regions (hooks at = "region")? */
int probe_has_regions(const struct probe *p);
/* Replaces p's regions with n "NAME=SPEC" strings (ntop record -r):
 * 0, or -1 with a cause naming the bad one. */
int probe_set_regions(struct probe *p, const char *const *specs, int n, char **cause);

/* "thread", "warp" or "block". */
const char *probe_level_name(enum probe_level level);

/* Loads and checks the schema (not the snippets: see verify.h). Errors read
 * "FILE:LINE:COL: what is wrong". */
int probe_load_file(const char *path, struct probe **out, char **cause);
int probe_load_string(const char *text, const char *path_for_errors, struct probe **out, char **cause);
void probe_free(struct probe *p);

#endif
