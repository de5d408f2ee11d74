/* The GCN snippet verifier (rules in amdgpu_verify.h). */
#include "engine/amdgpu/amdgpu_verify.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"
#include "engine/amdgpu/amdgpu_isa.h"
#include "engine/amdgpu/amdgpu_snippet.h"
#include "engine/probe/verify_save.h"

enum vrule { VR_REGS = 1, VR_FLOW, VR_LDS, VR_CALL, VR_MEM, VR_LANES, VR_HELPER, VR_SYNTAX };

static const char *const vrule_names[] = {
	[VR_REGS] = "rule 1 (writes only its own registers)",
	[VR_FLOW] = "rule 2 (no control flow)",
	[VR_LDS] = "rule 3 (no LDS)",
	[VR_CALL] = "rule 4 (no function calls)",
	[VR_MEM] = "rule 5 (memory only through SAVE)",
	[VR_LANES] = "rule 6 (no cross-lane or resource instructions)",
	[VR_HELPER] = "helper",
	[VR_SYNTAX] = "syntax",
};

/* What an allowed instruction's first operands are. */
enum vdest {
	D_SGPR,      /* a probe SGPR */
	D_VGPR,      /* a probe VGPR */
	D_VGPR_SDST, /* a probe VGPR pair, then a probe SGPR (or null) carry-out */
	D_NONE,      /* no destination (compares into SCC, s_nop) */
};

/* The allow-list: mnemonics (without _e32/_e64), prefix-free. */
static const struct {
	const char *name;
	enum vdest dest;
} allowed[] = {
	{ "s_mov_b32", D_SGPR }, { "s_mov_b64", D_SGPR }, { "s_movk_i32", D_SGPR }, { "s_cmov_b32", D_SGPR },
	{ "s_cmov_b64", D_SGPR }, { "s_add_u32", D_SGPR }, { "s_addc_u32", D_SGPR }, { "s_sub_u32", D_SGPR },
	{ "s_subb_u32", D_SGPR }, { "s_add_i32", D_SGPR }, { "s_sub_i32", D_SGPR }, { "s_add_co_u32", D_SGPR },
	{ "s_add_co_ci_u32", D_SGPR }, { "s_sub_co_u32", D_SGPR }, { "s_sub_co_ci_u32", D_SGPR },
	{ "s_mul_i32", D_SGPR }, { "s_mul_hi_u32", D_SGPR }, { "s_lshl_b32", D_SGPR }, { "s_lshl_b64", D_SGPR },
	{ "s_lshr_b32", D_SGPR }, { "s_lshr_b64", D_SGPR }, { "s_ashr_i32", D_SGPR }, { "s_ashr_i64", D_SGPR },
	{ "s_and_b32", D_SGPR }, { "s_and_b64", D_SGPR }, { "s_or_b32", D_SGPR }, { "s_or_b64", D_SGPR },
	{ "s_xor_b32", D_SGPR }, { "s_xor_b64", D_SGPR }, { "s_not_b32", D_SGPR }, { "s_not_b64", D_SGPR },
	{ "s_min_u32", D_SGPR }, { "s_min_i32", D_SGPR }, { "s_max_u32", D_SGPR }, { "s_max_i32", D_SGPR },
	{ "s_bfe_u32", D_SGPR }, { "s_bfe_i32", D_SGPR }, { "s_bfe_u64", D_SGPR }, { "s_bfm_b32", D_SGPR },
	{ "s_cselect_b32", D_SGPR }, { "s_cselect_b64", D_SGPR }, { "s_abs_i32", D_SGPR },
	{ "s_bcnt1_i32_b32", D_SGPR }, { "s_bcnt1_i32_b64", D_SGPR }, { "s_ff1_i32_b32", D_SGPR },
	{ "s_ff1_i32_b64", D_SGPR }, { "s_brev_b32", D_SGPR }, { "s_getreg_b32", D_SGPR },
	{ "s_lshl1_add_u32", D_SGPR }, { "s_lshl2_add_u32", D_SGPR }, { "s_lshl3_add_u32", D_SGPR },
	{ "s_lshl4_add_u32", D_SGPR }, { "s_sext_i32_i8", D_SGPR }, { "s_sext_i32_i16", D_SGPR },
	{ "s_cmp_eq_u32", D_NONE }, { "s_cmp_lg_u32", D_NONE }, { "s_cmp_gt_u32", D_NONE }, { "s_cmp_ge_u32", D_NONE },
	{ "s_cmp_lt_u32", D_NONE }, { "s_cmp_le_u32", D_NONE }, { "s_cmp_eq_i32", D_NONE }, { "s_cmp_lg_i32", D_NONE },
	{ "s_cmp_gt_i32", D_NONE }, { "s_cmp_ge_i32", D_NONE }, { "s_cmp_lt_i32", D_NONE }, { "s_cmp_le_i32", D_NONE },
	{ "s_cmp_eq_u64", D_NONE }, { "s_cmp_lg_u64", D_NONE }, { "s_bitcmp0_b32", D_NONE },
	{ "s_bitcmp1_b32", D_NONE }, { "s_nop", D_NONE },
	{ "v_mov_b32", D_VGPR }, { "v_add_u32", D_VGPR }, { "v_add_nc_u32", D_VGPR }, { "v_sub_u32", D_VGPR },
	{ "v_sub_nc_u32", D_VGPR }, { "v_subrev_u32", D_VGPR }, { "v_subrev_nc_u32", D_VGPR },
	{ "v_mul_lo_u32", D_VGPR }, { "v_mul_hi_u32", D_VGPR }, { "v_mul_u32_u24", D_VGPR },
	{ "v_mul_hi_u32_u24", D_VGPR }, { "v_mad_u32_u24", D_VGPR }, { "v_mad_u64_u32", D_VGPR_SDST },
	{ "v_lshlrev_b32", D_VGPR }, { "v_lshrrev_b32", D_VGPR }, { "v_ashrrev_i32", D_VGPR },
	{ "v_lshlrev_b64", D_VGPR }, { "v_lshrrev_b64", D_VGPR }, { "v_and_b32", D_VGPR }, { "v_or_b32", D_VGPR },
	{ "v_xor_b32", D_VGPR }, { "v_not_b32", D_VGPR }, { "v_min_u32", D_VGPR }, { "v_max_u32", D_VGPR },
	{ "v_min_i32", D_VGPR }, { "v_max_i32", D_VGPR }, { "v_bfe_u32", D_VGPR }, { "v_bfe_i32", D_VGPR },
	{ "v_bfi_b32", D_VGPR }, { "v_alignbit_b32", D_VGPR }, { "v_lshl_add_u32", D_VGPR },
	{ "v_add_lshl_u32", D_VGPR }, { "v_lshl_or_b32", D_VGPR }, { "v_and_or_b32", D_VGPR }, { "v_or3_b32", D_VGPR },
	{ "v_add3_u32", D_VGPR }, { "v_bcnt_u32_b32", D_VGPR }, { "v_mbcnt_lo_u32_b32", D_VGPR },
	{ "v_mbcnt_hi_u32_b32", D_VGPR }, { "v_cvt_f32_u32", D_VGPR }, { "v_cvt_u32_f32", D_VGPR },
	{ "v_readfirstlane_b32", D_SGPR },
};

/* Why anything else is refused: first matching prefix. */
static const struct {
	const char *prefix;
	enum vrule rule;
	const char *why;
} refused[] = {
	{ "s_call", VR_CALL, "snippets cannot call functions" },
	{ "s_swappc", VR_CALL, "snippets cannot call functions" },
	{ "s_memtime", VR_MEM, "read the shader clock with s_mov_b64 %x, CLOCK" },
	{ "s_memrealtime", VR_MEM, "read the real-time counter with s_mov_b64 %x, GTIMER" },
	{ "s_sendmsg_rtn", VR_MEM, "read the real-time counter with s_mov_b64 %x, GTIMER" },
	{ "s_branch", VR_FLOW, "branches" }, { "s_cbranch", VR_FLOW, "branches" }, { "s_setpc", VR_FLOW, "jumps" },
	{ "s_getpc", VR_FLOW, "reads the program counter" }, { "s_endpgm", VR_FLOW, "ends the program" },
	{ "s_trap", VR_FLOW, "traps" }, { "s_rfe", VR_FLOW, "returns from an exception" },
	{ "s_barrier", VR_FLOW, "synchronises the workgroup" }, { "s_sleep", VR_FLOW, "sleeps" },
	{ "s_sethalt", VR_FLOW, "halts the wave" }, { "s_wakeup", VR_FLOW, "wakes waves" },
	{ "s_sendmsg", VR_FLOW, "sends a message" }, { "s_icache", VR_FLOW, "touches the instruction cache" },
	{ "s_wait", VR_FLOW, "waits on counters the kernel relies on" },
	{ "s_waitcnt", VR_FLOW, "waits on counters the kernel relies on" },
	{ "ds_", VR_LDS, "uses LDS" },
	{ "global_", VR_MEM, "accesses memory; record values with SAVE" },
	{ "flat_", VR_MEM, "accesses memory; record values with SAVE" },
	{ "buffer_", VR_MEM, "accesses memory; record values with SAVE" },
	{ "scratch_", VR_MEM, "accesses memory; record values with SAVE" },
	{ "image_", VR_MEM, "accesses memory; record values with SAVE" },
	{ "s_load", VR_MEM, "accesses memory" }, { "s_store", VR_MEM, "writes memory" },
	{ "s_buffer", VR_MEM, "accesses memory" }, { "s_atomic", VR_MEM, "writes memory" },
	{ "s_scratch", VR_MEM, "accesses memory" }, { "s_dcache", VR_MEM, "touches the data cache" },
	{ "exp", VR_MEM, "exports" },
	{ "v_readlane", VR_LANES, "reads another lane" }, { "v_writelane", VR_LANES, "writes another lane" },
	{ "v_permlane", VR_LANES, "moves data across lanes" }, { "v_mfma", VR_LANES, "uses the matrix cores" },
	{ "v_smfmac", VR_LANES, "uses the matrix cores" }, { "v_wmma", VR_LANES, "uses the matrix cores" },
	{ "v_swmmac", VR_LANES, "uses the matrix cores" }, { "s_setreg", VR_LANES, "changes the wave's modes" },
	{ "s_setprio", VR_LANES, "changes the wave's priority" }, { "s_movrel", VR_LANES, "indexes registers" },
	{ "v_movrel", VR_LANES, "indexes registers" }, { "s_set_gpr_idx", VR_LANES, "indexes registers" },
	{ "s_setvskip", VR_LANES, "skips vector instructions" },
};

struct vctx {
	const struct amdgpu_snip *s;
	const struct probe_hook *h;
	char **cause;
	uint32_t saved;
	int last_save_line;
	const char *last_save_text;
};

__attribute__((format(printf, 4, 5)))
static int verr(struct vctx *V, const struct amdgpu_stmt *st, enum vrule r, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	const struct probe *p = V->s->p;
	return cause_set(V->cause, "%s:%d: %s: %s: %s", p->path ? p->path : "<string>", st->line, vrule_names[r], msg,
			 st->text);
}

/* The allow-list entry of a mnemonic, _e32/_e64 stripped; -1 if none. */
static int vfind(const char *mn)
{
	char base[64];
	snprintf(base, sizeof base, "%s", mn);
	size_t n = strlen(base);
	if (n > 4 && (!strcmp(base + n - 4, "_e32") || !strcmp(base + n - 4, "_e64")))
		base[n - 4] = 0;
	for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; i++)
		if (!strcmp(allowed[i].name, base))
			return (int)i;
	return -1;
}

static int vrefuse(struct vctx *V, const struct amdgpu_stmt *st)
{
	const char *mn = st->mnemonic;
	if (strstr(mn, "_dpp") || strstr(mn, "_sdwa"))
		return verr(V, st, VR_LANES, "DPP and SDWA forms read other lanes or parts of registers");
	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
		if (amdgpu_isa_match(mn, refused[i].prefix) ||
		    (refused[i].prefix[strlen(refused[i].prefix) - 1] == '_' &&
		     !strncmp(mn, refused[i].prefix, strlen(refused[i].prefix))))
			return verr(V, st, refused[i].rule, "'%s' %s", mn, refused[i].why);
	if (!strncmp(mn, "v_cmp", 5) || !strncmp(mn, "v_cndmask", 9) || strstr(mn, "_co_") || strstr(mn, "addc") ||
	    strstr(mn, "subb") || !strncmp(mn, "v_div_", 6))
		return verr(V, st, VR_REGS, "'%s' writes or reads VCC or EXEC, which belong to the kernel", mn);
	if (strstr(mn, "saveexec") || strstr(mn, "_exec"))
		return verr(V, st, VR_REGS, "'%s' writes EXEC, which belongs to the kernel", mn);
	return verr(V, st, VR_SYNTAX, "'%s' is not among the instructions GCN snippets may use (doc/amdgpu.md lists "
		    "them)", mn);
}

static int vhelper_name(const char *op)
{
	static const char *const helpers[] = { "CLOCK", "GTIMER", "SMID", "ADDR", "BYTES", "OUT", "IN1", "IN2",
					       "IN3", NULL };
	for (int i = 0; helpers[i]; i++)
		if (!strcmp(op, helpers[i]))
			return i;
	return -1;
}

/* A destination operand: a declared register of the right file and width. */
static int vdest(struct vctx *V, const struct amdgpu_stmt *st, const char *op, int vector, int width)
{
	int part;
	if (vhelper_name(op) >= 0)
		return verr(V, st, VR_REGS, "writes %s, which is read-only", op);
	const struct amdgpu_sreg *r = amdgpu_snip_ref(V->s, op, &part);
	if (!r && op[0] == '%')
		return verr(V, st, VR_SYNTAX, "%s is not declared (.sgpr/.vgpr), or is not a pair (.lo/.hi)", op);
	if (!r)
		return verr(V, st, VR_REGS, "writes %s, which the probe did not declare with .%s", op,
			    vector ? "vgpr" : "sgpr");
	if (r->vector != vector)
		return verr(V, st, VR_REGS, "writes %s, a %s register, where the instruction writes a%s", op,
			    r->vector ? "vector" : "scalar", vector ? " VGPR" : "n SGPR");
	int got = part ? 1 : r->count;
	if (got != width)
		return verr(V, st, VR_SYNTAX, "%s is %d register%s wide, the instruction writes %d", op, got,
			    got == 1 ? "" : "s", width);
	return 0;
}

/* Every pattern of the hook names a global, flat or buffer access (ADDR),
 * or any vector memory access (BYTES). */
static int vmemory_hook(const struct probe_hook *h, int need_addr)
{
	static const char *const addr[] = { "global", "flat", "buffer", NULL };
	static const char *const any[] = { "global", "flat", "buffer", "scratch", NULL };
	for (int i = 0; i < h->n_opcodes; i++) {
		const char *const *sp = need_addr ? addr : any;
		while (*sp && !amdgpu_isa_match(h->opcodes[i], *sp))
			sp++;
		if (!*sp)
			return i;
	}
	return -1;
}

/* Sources: declared names only; helpers only where they belong. */
static int vsources(struct vctx *V, const struct amdgpu_stmt *st, int first)
{
	for (int i = first; i < st->n_ops; i++) {
		const char *op = st->ops[i];
		int part, hlp = vhelper_name(op);
		if (op[0] == '%' && !amdgpu_snip_ref(V->s, op, &part))
			return verr(V, st, VR_SYNTAX, "%s is not declared (.sgpr/.vgpr), or is not a pair (.lo/.hi)", op);
		if (hlp >= 5)
			return verr(V, st, VR_HELPER, "%s is not available in GCN snippets", op);
		if (hlp == 3)
			return verr(V, st, VR_HELPER, "ADDR is a 64-bit value per lane: save it with SAVE.u64 {ADDR}");
		if (hlp == 4 && (V->h->kind != PROBE_TP_INSN || vmemory_hook(V->h, 0) >= 0))
			return verr(V, st, VR_HELPER, "BYTES is only defined in hooks on vector memory instructions");
		if (hlp >= 0 && hlp <= 2) {
			const char *want = hlp == 2 ? "s_mov_b32" : "s_mov_b64";
			if (strcmp(st->mnemonic, want) || i != 1)
				return verr(V, st, VR_HELPER, "%s is read with %s %%x, %s", op, want, op);
		}
	}
	if (strstr(st->mods, "row_") || strstr(st->mods, "quad_perm") || strstr(st->mods, "sel:") ||
	    strstr(st->mods, "bound_ctrl") || strstr(st->mods, "dpp") || strstr(st->mnemonic, "_dpp") ||
	    strstr(st->mnemonic, "_sdwa"))
		return verr(V, st, VR_LANES, "DPP and SDWA forms read other lanes or parts of registers");
	return 0;
}

static int vinsn(struct vctx *V, const struct amdgpu_stmt *st)
{
	int k = vfind(st->mnemonic);
	if (k < 0)
		return vrefuse(V, st);
	enum vdest d = allowed[k].dest;
	int width = amdgpu_snip_dest_width(st->mnemonic);
	if (d == D_NONE)
		return vsources(V, st, 0);
	if (st->n_ops < 2)
		return verr(V, st, VR_SYNTAX, "'%s' needs a destination and sources", st->mnemonic);
	int r = vdest(V, st, st->ops[0], d != D_SGPR, width), part;
	const struct amdgpu_sreg *sd = d == D_VGPR_SDST ? amdgpu_snip_ref(V->s, st->ops[1], &part) : NULL;
	/* the carry-out is a lane mask: one SGPR in wave32, a pair in wave64 */
	if (r == 0 && d == D_VGPR_SDST && strcmp(st->ops[1], "null") && (!sd || sd->vector))
		r = verr(V, st, VR_REGS, "writes %s, which the probe did not declare with .sgpr", st->ops[1]);
	return r < 0 ? -1 : vsources(V, st, d == D_VGPR_SDST ? 2 : 1);
}

/* One SAVE value: its width and whether it is per lane. */
static int vsave_value(struct vctx *V, const struct amdgpu_stmt *st, const char *op, int width, int wave)
{
	int part;
	const struct amdgpu_sreg *r = op[0] == '%' ? amdgpu_snip_ref(V->s, op, &part) : NULL;
	int hlp = vhelper_name(op), vector = 0, got = width;
	if (op[0] == '%' && !r)
		return verr(V, st, VR_SYNTAX, "%s is not declared (.sgpr/.vgpr), or is not a pair (.lo/.hi)", op);
	if (r) {
		vector = r->vector;
		got = part ? 1 : r->count;
	} else if (hlp == 3) {
		int bad = vmemory_hook(V->h, 1);
		if (V->h->kind != PROBE_TP_INSN || bad >= 0)
			return verr(V, st, VR_HELPER, "ADDR is only defined in hooks whose every opcode is a global_, flat_ "
				    "or buffer_ access%s%s", bad >= 0 ? ", not " : "", bad >= 0 ? V->h->opcodes[bad] : "");
		vector = 1;
		got = 2;
	} else if (hlp == 4) {
		if (V->h->kind != PROBE_TP_INSN || vmemory_hook(V->h, 0) >= 0)
			return verr(V, st, VR_HELPER, "BYTES is only defined in hooks on vector memory instructions");
		got = 1;
	} else if (hlp >= 0) {
		return verr(V, st, VR_HELPER, "%s cannot be saved directly: move it into a register first", op);
	} else if (op[0] == 'v') {
		vector = 1;
		got = op[1] == '[' ? 2 : 1;
	} else if (op[0] == 's') {
		got = op[1] == '[' ? 2 : 1;
	} else {
		char *end;
		strtoll(op, &end, 0);
		if (*end)
			return verr(V, st, VR_SYNTAX, "SAVE values are registers, integers, BYTES or ADDR, not '%s'", op);
	}
	if (wave && vector)
		return verr(V, st, VR_HELPER, "a wave map saves one value per wave: %s is per lane (use an SGPR, e.g. "
			    "v_readfirstlane_b32)", op);
	if (got != width)
		return verr(V, st, VR_HELPER, "%s is %d bits, SAVE%s saves %d-bit values", op, 32 * got, st->mnemonic + 4,
			    32 * width);
	return 0;
}

static int vsave(struct vctx *V, const struct amdgpu_stmt *st)
{
	const struct probe *p = V->s->p;
	enum probe_type t;
	if (!strcmp(st->mnemonic, "SAVE.u32"))
		t = PROBE_U32;
	else if (!strcmp(st->mnemonic, "SAVE.u64"))
		t = PROBE_U64;
	else
		return verr(V, st, VR_HELPER, "SAVE takes .u32 or .u64, not '%s'", st->mnemonic);
	if (!p->has_map)
		return verr(V, st, VR_HELPER, "SAVE needs a map, and this probe has none ([map])");
	for (int i = 0; i < st->n_ops; i++)
		if (vsave_value(V, st, st->ops[i], t == PROBE_U64 ? 2 : 1, p->map.level == PROBE_LEVEL_WARP) < 0)
			return -1;
	char msg[256];
	if (verify_save_values(&p->map, V->saved, t, st->n_ops, msg, sizeof msg) < 0)
		return verr(V, st, VR_HELPER, "%s", msg);
	V->saved += (uint32_t)st->n_ops * (uint32_t)t;
	V->last_save_line = st->line;
	V->last_save_text = st->text;
	return 0;
}

static int vhook(struct vctx *V, const struct amdgpu_shook *hk)
{
	V->h = hk->h;
	V->saved = 0;
	V->last_save_text = NULL;
	for (int i = 0; i < hk->n; i++) {
		const struct amdgpu_stmt *st = &hk->v[i];
		if ((st->kind == AMDGPU_STMT_SAVE ? vsave(V, st) : vinsn(V, st)) < 0)
			return -1;
	}
	char msg[256];
	const struct probe *p = V->s->p;
	struct amdgpu_stmt last = { .line = V->last_save_line, .text = (char *)(V->last_save_text ? V->last_save_text
												   : "SAVE") };
	if (p->has_map && verify_save_total(&p->map, V->saved, msg, sizeof msg) < 0)
		return verr(V, &last, VR_HELPER, "%s", msg);
	return 0;
}

int amdgpu_verify_probe(const struct probe *p, char **cause)
{
	struct amdgpu_snip s;
	if (amdgpu_snip_parse(p, &s, cause) < 0)
		return -1;
	struct vctx V = { .s = &s, .cause = cause };
	int r = 0;
	for (int i = 0; i < s.n_hooks && r == 0; i++)
		r = vhook(&V, &s.hooks[i]);
	amdgpu_snip_done(&s);
	return r;
}
