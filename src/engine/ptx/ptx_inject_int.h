/* Internals shared by the instrumenter's files; not part of the engine's
 * API (that is ptx_inject.h). The design notes are atop ptx_inject.c.
 *
 *   ptx_inject.c         the driver: probe and map setup, the result
 *   ptx_inject_snip.c    snippets prepared once per probe (renaming, SAVEs)
 *   ptx_inject_operand.c the traced instruction's BYTES and ADDR, and the
 *                        kernel's register widths ADDR needs
 *   ptx_inject_site.c    a snippet at one site: helpers expanded, lines out
 *   ptx_inject_save.c    SAVE: bounds, record address, vector stores
 *   ptx_inject_unit.c    a unit's count and record addresses in a map
 *   ptx_inject_exit.c    the code before every kernel exit
 *   ptx_inject_walk.c    a new body: prologue, statements, end
 *   ptx_inject_func.c    device functions: which are instrumented, the
 *                        context they share with their callers
 *   ptx_inject_region.c  region boundaries (hooks at = "region")
 *   ptx_inject_sites.c   the site table (SITE, source lines) */
#ifndef NTOP_PTX_INJECT_INT_H
#define NTOP_PTX_INJECT_INT_H
#include "engine/ptx/ptx_inject.h"

#include <ctype.h>
#include <stdint.h>

#include "common/strbuf.h"
#include "engine/ptx/ptx_lines.h"
#include "engine/ptx/snippet.h"

#define INJECT_SAVE_MAX 32 /* values in one SAVE statement */

/* ---- snippets, prepared once per probe ---------------------------------- */

struct snip_save {
	int size;        /* 4 or 8 bytes per value */
	int n_vals;
	char *vals[INJECT_SAVE_MAX];
	uint32_t off;    /* bytes from the snippet's record start */
};

struct snip_line {
	char *text;             /* renamed instruction, without ';' (NULL for SAVE) */
	struct snip_save *save;
	int first_save, last_save;
};

struct snip {
	struct snip_line *lines;
	int n;
	uint32_t save_bytes; /* S: bytes all SAVEs of one execution write */
	int uses_addr;
	int uses_bytes;
};

struct iprobe {
	const struct probe *p;
	int index;          /* in probes[] */
	int map;            /* map number, -1 without a map */
	struct snippet_reg *ren; /* its registers (snippet.h), renamed %ntop_p<index>_<name> */
	int n_ren;
	struct snip *snips; /* one per hook */
};

/* ---- kernel registers --------------------------------------------------- */

struct kreg {
	const char *name; /* points into the kernel's .reg text (not terminated) */
	size_t len;
	int range;
	int bits;
};

/* Per map: how its cursor (bytes the unit tried to save so far) is known.
 * Entry and exit snippets run exactly once per thread, in a fixed order, so
 * a map whose SAVEs all sit in them has a cursor known at instrumentation
 * time everywhere (no register). A SAVE at an instruction tracepoint makes
 * the cursor dynamic: %ntop_cur<i> and the unit's record address
 * %ntop_rec<i> then live from the entry to the exits. */
struct imap {
	int pr;              /* iprobe index */
	int warp;            /* warp or block map: lane 0 stores (exit code in lane 0) */
	int block;           /* block map: one unit per block, thread 0 stores its
				plain fields, every warp's lane 0 folds the others */
	int dynamic;
	uint32_t cap_bytes;  /* cap * rec_size */
	uint32_t rec_size;   /* bytes per record */
	int slot_major;      /* records slot-major (engine_map_slot_major): a unit's
				record k is k * units records after its record 0, so
				%ntop_un<i> (units) lives beside %ntop_rec<i> when dynamic */
	int sampled;         /* block-sampled (engine_map_sampled): the map pointer
				carries the shift; when dynamic, %ntop_sp<i> (block
				kept) lives beside %ntop_rec<i> */
	uint32_t entry_bytes; /* cursor after the entry snippets (saturated) */
	int rec_at_entry;    /* %ntop_hr<i> holds the unit's record 0 from the entry on */
	int count_static;    /* no count stores: every unit's count is the same (engine.h) */
};

/* A value that crosses a call into an instrumented .func: the caller
 * stores it in the thread's context (local memory) before the call and
 * loads it back after; the callee loads it at entry and stores it before
 * each ret. */
struct ctx_slot {
	char reg[96];  /* %ntop_cur0, %ntop_p1_bytes, ... */
	int bytes;     /* 2, 4 or 8 */
	int pred;      /* a predicate, kept as a u32 */
	uint32_t off;  /* bytes into the context */
};

/* What the walk knows of the function it walks. */
struct inj_fn {
	struct ptx_func *f;
	int is_func;          /* a .func: no entry or exit work, context at calls and rets */
	int index;            /* in the site table's function names */
	struct ptx_loc *locs; /* per statement */
	uint32_t *rmask;      /* per statement: the regions it belongs to (bit r) */
	int *rnext;           /* per statement: the next instruction's index (n_body at the end) */
	uint32_t *lbegin;     /* per label: regions a jump arriving there begins (its source
				 was outside, or it heads a loop region: one segment per trip) */
	int rlast[32];        /* per region: its last instruction walked so far */
	int *dropped;         /* statements replaced by code of ours (a rewritten call) */
	int n_dropped;
};

/* A body built by the walk, swapped in when every walk succeeded. */
struct walked_body {
	struct ptx_func *f;
	struct ptx_stmt *out;
	unsigned char *mine;
	int n_out;
	int *dropped;
	int n_dropped;
};

struct inj {
	struct ptx_module *mod;
	struct ptx_func *kernel;
	struct inj_fn fn;    /* the body being walked */
	struct iprobe *pr;
	int n_pr;
	int n_maps;
	struct imap maps[ENGINE_MAX_MAPS];
	int any_warp, any_dyn_warp;
	int func_exit;       /* a .func of the module has an `exit`: a thread may leave
				without our exit code, so every count is stored */
	int has_exit_work;
	int plain;           /* blocks not kept run the original body (ptx_inject_plain.c) */
	struct strbuf plain_funcs; /* ... calling original copies of the instrumented .funcs */
	int at_entry;        /* count addresses (%ntop_hc<i>), static record starts and
				%ntop_lane0 computed at entry (engine.h) */
	int block_1d, grid_1d; /* ENGINE_BLOCK_1D, ENGINE_GRID_1D */
	struct strbuf decls;             /* renamed probe .reg lines */
	struct kreg *regs;
	int n_regs;
	struct ptx_stmt *out;
	unsigned char *mine; /* out[i] was made here (freed on failure) */
	int n_out, cap_out;
	struct walked_body *bodies; /* finished walks */
	int n_bodies;
	int skip_n, lane_n;  /* label counters */
	int sites;
	int sites_no_addr;   /* matching sites skipped: no address or size to give ADDR/BYTES */
	int sites_in_funcs;  /* matching sites in .func bodies not instrumented */
	/* device functions (ptx_inject_func.c) */
	unsigned char *probed; /* per module item: a .func instrumented */
	int n_probed;
	struct ctx_slot *ctx;
	int n_ctx;
	uint32_t ctx_bytes;
	const char *funcs_why; /* why no .func is instrumented, or NULL */
	/* regions (ptx_inject_region.c): those of the one probe with region hooks */
	const struct iprobe *rprobe;
	int rj_n;            /* label counter for jumps over a BEGIN */
	struct ptx_files files;
	struct engine_sites *out_sites;
	/* exit code, rendered once and reused at every exit: the part every
	 * thread runs, and the part only lane 0 of each warp runs (warp maps) */
	char *exit_all, *exit_lane0;
	char **cause;
};

/* ---- sites -------------------------------------------------------------- */

enum site_kind { SITE_ENTRY, SITE_INSN, SITE_EXIT };

/* What the straight-line code emitted so far at this site already holds,
 * so a quantity is computed once per site (ptxas does not merge repeated
 * special-register reads). */
enum {
	HAVE_TL = 1,     /* %ntop_tl = thread_linear */
	HAVE_GRID = 2,   /* %ntop_bl = block_linear, %ntop_nb = blocks */
	HAVE_UNIT_T = 4, /* %ntop_pt = units per block, %ntop_ut = unit in block (thread maps) */
	HAVE_UNIT_W = 8, /* %ntop_pw, %ntop_uw: the same for warp maps */
};

struct site {
	const struct ptx_insn *insn; /* NULL at kernel entry/exit */
	enum site_kind kind;
	int index;                   /* in the site table (SITE), -1 at entry/exit */
	int region;                  /* REGION at a region boundary, else -1 */
	int lane0_only;              /* inside the exit's lane-0 branch */
	int kept_only;               /* behind the kept-block test of its sampled map */
	unsigned have;               /* HAVE_* */
	int sa_map;                  /* %ntop_sa holds this map's unit record start (-1: none) */
	int bytes_wide;              /* BYTES stands for %ntop_bw (the u32 register widened) */
	uint32_t cur[ENGINE_MAX_MAPS]; /* bytes: cursors known here (entry, static exits) */
};

/* Where one execution of a snippet stores, decided at its first SAVE. */
struct save_state {
	int drop;      /* static cursor past cap: no stores (the count still grows) */
	int pred;      /* stores guarded by %ntop_ok */
	int t0;        /* block map: plain stores guarded by %ntop_t0 (thread 0, and %ntop_ok) */
	uint32_t base; /* bytes: immediate offset of the snippet's record from %ntop_sa */
	/* slot-major maps: the snippet's record j lies (slot0 + j) * units
	 * records past %ntop_sa (static: %ntop_sa = the unit's record 0, slot0 =
	 * cursor / rec_size; dynamic: %ntop_sa = the record at the cursor,
	 * slot0 = 0); stores to a record other than %ntop_sa's go through
	 * %ntop_sb, which holds record rec_j (-1: none yet) */
	int slot_major;
	uint32_t slot0;
	int rec_j;
	char units[24]; /* register holding the map's units (u64) */
};

static inline int inject_is_ident(int c)
{
	return isalnum(c) || c == '_' || c == '$';
}

static inline const char *inject_skip_ws(const char *s)
{
	while (*s && isspace((unsigned char)*s))
		s++;
	return s;
}

/* Cursors saturate instead of wrapping, so a huge count never looks small. */
static inline uint32_t inject_sat_add(uint32_t a, uint32_t b)
{
	return a > UINT32_MAX - b ? UINT32_MAX : a + b;
}

/* ptx_inject_snip.c: renamed registers (into in->decls) and parsed lines
 * of every hook of ip; may mark ip's map dynamic. */
int ptx_inject_snip_prepare(struct inj *in, struct iprobe *ip);
void ptx_inject_snip_free(struct iprobe *ip);

/* ptx_inject_operand.c */
int ptx_inject_operand_type_bytes(const char *type);
/* Collects f's .reg declarations (for ADDR's register widths) and refuses
 * code that already uses our %ntop_ prefix. */
int ptx_inject_operand_kernel_regs(struct inj *in, const struct ptx_func *f);
/* Emits the computation of ADDR into %ntop_addr. */
int ptx_inject_operand_addr(struct inj *in, struct strbuf *sb, const struct ptx_insn *insn);

/* ptx_inject_site.c */
struct site ptx_inject_site_at(enum site_kind kind, const struct ptx_insn *insn);
/* Does s use helper `word` (a whole word, not part of a register or name)? */
int ptx_inject_site_has_helper(const char *s, const char *word);
/* Appends snippet text with helpers replaced for this site. */
int ptx_inject_site_expand(struct inj *in, struct strbuf *sb, const char *s, const struct site *st);
/* Before text that needs BYTES as a 64-bit operand (need64): when BYTES is
 * a u32 register (cp.async's src-size, a bulk copy's size), widens it into
 * %ntop_bw and makes BYTES stand for that until the next call. */
int ptx_inject_site_bytes64(struct inj *in, struct strbuf *sb, const char *text, struct site *st, int need64);
int ptx_inject_site_snip(struct inj *in, struct strbuf *sb, const struct iprobe *ip, int hook,
			 struct site *st);

/* ptx_inject_unit.c: pred = this thread is thread 0 of its block. */
void ptx_inject_unit_thread0(const struct inj *in, struct strbuf *sb, struct site *st, const char *pred);

/* ptx_inject_save.c: one SAVE line of snippet sn (its first sets up ss). */
int ptx_inject_save_emit(struct inj *in, struct strbuf *sb, const struct iprobe *ip,
			 const struct snip *sn, const struct snip_line *l, struct site *st,
			 struct save_state *ss);

/* ptx_inject_unit.c */
/* pred = this thread is lane 0 of its warp. */
void ptx_inject_unit_lane0(const struct inj *in, struct strbuf *sb, struct site *st, const char *pred);
/* dst = address of this unit's count (rec = 0) or first record (rec = 1) in map. */
void ptx_inject_unit_addr(const struct inj *in, struct strbuf *sb, struct site *st, int map,
			  int rec, const char *dst);
/* pred = this block keeps records in slot-major map (block sampling). */
void ptx_inject_unit_sampled(const struct inj *in, struct strbuf *sb, struct site *st, int map,
			     const char *pred);
/* dst (u64) = units of map in this launch (the slot stride, in records, of
 * a slot-major map). */
void ptx_inject_unit_count(const struct inj *in, struct strbuf *sb, struct site *st, int map,
			   const char *dst);

/* ptx_inject_exit.c: the exit code, appended before a ret/exit or the end. */
int ptx_inject_exit_emit(struct inj *in, struct strbuf *sb);
/* Bytes map's exit snippets try to save (saturated). */
uint32_t ptx_inject_exit_bytes(const struct inj *in, int map);

/* ptx_inject_walk.c */
/* Builds the kernel's new body into in->out: prologue, every statement, end. */
int ptx_inject_walk_body(struct inj *in);
/* The same for instrumented .func f (in->probed). */
int ptx_inject_walk_func(struct inj *in, struct ptx_func *f);
/* Does any hook fire at x (a statement of the function being walked);
 * *uses_addr: one of them needs ADDR; *skipped: one matched but has no
 * address to give ADDR/BYTES. */
int ptx_inject_site_needs(const struct inj *in, const struct ptx_insn *x, int *uses_addr, int *skipped);
int ptx_inject_is_transfer(const struct ptx_insn *x);
/* "@!pred bra $ntop_skip_N;": code up to the label runs when pred holds;
 * returns N (the caller writes the label). */
int ptx_inject_guard_open(struct inj *in, struct strbuf *sb, const char *pred);

/* ptx_inject_func.c */
/* Decides which .func bodies of the module are instrumented (those with a
 * site or region boundary, and those calling them, unless their address is
 * taken) and lays out the context they share. */
int ptx_inject_func_plan(struct inj *in);
/* The .func a call instruction calls directly when it is instrumented
 * (NULL otherwise). */
const struct ptx_func *ptx_inject_func_callee(const struct inj *in, const struct ptx_insn *x);
/* Context stores before a call and loads after it, in callers and callees. */
void ptx_inject_ctx_store(const struct inj *in, struct strbuf *sb);
void ptx_inject_ctx_load(const struct inj *in, struct strbuf *sb);
/* The call instruction x with the context pointer appended to its arguments. */
int ptx_inject_func_call_text(struct inj *in, const struct ptx_insn *x, char **text);
/* The kernel's context: its .local array and %ntop_cx. */
void ptx_inject_ctx_kernel_decl(const struct inj *in, struct strbuf *sb);
/* Appends the context parameter to every instrumented .func. */
int ptx_inject_func_params(struct inj *in);

/* ptx_inject_region.c */
/* Per statement of in->fn: its regions and the next instruction. */
int ptx_inject_region_mark(struct inj *in);
/* Region records due before statement i (and, for a label, after it:
 * *after, appended after the statement). */
int ptx_inject_region_before(struct inj *in, struct strbuf *sb, int i, uint32_t *open, struct strbuf *after);

/* ptx_inject_plain.c: the original body for blocks block sampling skips. */
int ptx_inject_plain_wanted(const struct inj *in);
/* The prologue's first code: blocks not kept go to the copy. */
void ptx_inject_plain_branch(struct inj *in, struct strbuf *sb);
/* The copy, after the probed body (and the instrumented functions'
 * original copies, kept for ptx_inject_plain_funcs). 0, or -1 with a cause. */
int ptx_inject_plain_emit(struct inj *in, struct strbuf *sb);
/* Once the bodies are swapped: those copies go in before the kernel. */
int ptx_inject_plain_funcs(struct inj *in);

/* ptx_inject_sites.c */
/* Adds a site for statement i of in->fn; its index, or -1 out of memory. */
int ptx_inject_site_add(struct inj *in, int i, enum engine_site_kind kind, int region);
int ptx_inject_sites_func(struct inj *in, const char *name);
int ptx_inject_sites_finish(struct inj *in);

#endif
