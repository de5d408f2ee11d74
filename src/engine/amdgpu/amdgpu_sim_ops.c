/* What each modelled instruction does (see amdgpu_sim.h). Scalar ALU
 * results and SCC follow the ISA manuals: adds set SCC to the carry,
 * subtractions to the borrow, shifts and logic to "result != 0", s_min to
 * "the first operand was chosen", compares to their outcome; s_mul_i32,
 * moves and selects leave SCC. Vector ALU writes only active lanes; a
 * compare into an SGPR writes 0 for inactive lanes. */
#include "engine/amdgpu/amdgpu_sim_int.h"

#include <string.h>

typedef uint64_t (*sop2_fn)(uint64_t a, uint64_t b, int *scc);

static uint64_t op_add(uint64_t a, uint64_t b, int *scc)
{
	uint64_t r = (a & 0xffffffffu) + (b & 0xffffffffu);
	*scc = r >> 32 != 0;
	return (uint32_t)r;
}

static uint64_t op_addc(uint64_t a, uint64_t b, int *scc)
{
	uint64_t r = (a & 0xffffffffu) + (b & 0xffffffffu) + (uint64_t)*scc;
	*scc = r >> 32 != 0;
	return (uint32_t)r;
}

static uint64_t op_sub(uint64_t a, uint64_t b, int *scc)
{
	*scc = (uint32_t)b > (uint32_t)a;
	return (uint32_t)(a - b);
}

static uint64_t op_mul(uint64_t a, uint64_t b, int *scc)
{
	(void)scc;
	return (uint32_t)((uint32_t)a * (uint32_t)b);
}

static uint64_t op_lshl(uint64_t a, uint64_t b, int *scc)
{
	uint32_t r = (uint32_t)a << (b & 31);
	*scc = r != 0;
	return r;
}

static uint64_t op_lshr(uint64_t a, uint64_t b, int *scc)
{
	uint32_t r = (uint32_t)a >> (b & 31);
	*scc = r != 0;
	return r;
}

static uint64_t op_and(uint64_t a, uint64_t b, int *scc)
{
	uint32_t r = (uint32_t)(a & b);
	*scc = r != 0;
	return r;
}

static uint64_t op_or(uint64_t a, uint64_t b, int *scc)
{
	uint32_t r = (uint32_t)(a | b);
	*scc = r != 0;
	return r;
}

static uint64_t op_min(uint64_t a, uint64_t b, int *scc)
{
	*scc = (uint32_t)a < (uint32_t)b;
	return (uint32_t)a < (uint32_t)b ? (uint32_t)a : (uint32_t)b;
}

static const struct {
	const char *name;
	sop2_fn fn;
} sop2[] = {
	{ "s_add_u32", op_add }, { "s_add_co_u32", op_add }, { "s_addc_u32", op_addc }, { "s_add_co_ci_u32", op_addc },
	{ "s_sub_u32", op_sub }, { "s_sub_co_u32", op_sub }, { "s_mul_i32", op_mul },    { "s_lshl_b32", op_lshl },
	{ "s_lshr_b32", op_lshr }, { "s_and_b32", op_and }, { "s_or_b32", op_or },       { "s_min_u32", op_min },
};

static int sim_sop2(struct sim_ctx *c, const struct sim_insn *in, sop2_fn fn)
{
	uint64_t a, b;
	if (in->n != 3 || sim_sread(c, &in->op[1], &a) < 0 || sim_sread(c, &in->op[2], &b) < 0)
		return in->n != 3 ? sim_fail(c, "three operands expected") : -1;
	int scc = c->w->scc;
	uint64_t r = fn(a, b, &scc);
	c->w->scc = scc;
	return sim_swrite(c, &in->op[0], r);
}

static int sim_scmp(struct sim_ctx *c, const struct sim_insn *in)
{
	uint64_t a, b;
	if (in->n != 2 || sim_sread(c, &in->op[0], &a) < 0 || sim_sread(c, &in->op[1], &b) < 0)
		return in->n != 2 ? sim_fail(c, "two operands expected") : -1;
	uint32_t x = (uint32_t)a, y = (uint32_t)b;
	const char *k = in->mn + 6; /* "s_cmp_" */
	int r = !strncmp(k, "eq", 2) ? x == y : !strncmp(k, "lg", 2) ? x != y : !strncmp(k, "le", 2) ? x <= y
	      : !strncmp(k, "lt", 2) ? x < y : !strncmp(k, "ge", 2) ? x >= y : !strncmp(k, "gt", 2) ? x > y : -1;
	if (r < 0 || strstr(k, "_i32") || strstr(k, "_u64"))
		return sim_fail(c, "compare not modelled");
	c->w->scc = r;
	return 0;
}

/* s_mov, s_cselect, s_and_saveexec. */
static int sim_smove(struct sim_ctx *c, const struct sim_insn *in)
{
	struct amdgpu_wave *w = c->w;
	uint64_t a, b;
	if (!strncmp(in->mn, "s_mov_", 6))
		return in->n == 2 && sim_sread(c, &in->op[1], &a) == 0 ? sim_swrite(c, &in->op[0], a) : -1;
	if (!strncmp(in->mn, "s_cselect_", 10)) {
		if (in->n != 3 || sim_sread(c, &in->op[1], &a) < 0 || sim_sread(c, &in->op[2], &b) < 0)
			return -1;
		return sim_swrite(c, &in->op[0], w->scc ? a : b);
	}
	/* s_and_saveexec: the old EXEC saved, EXEC &= src, SCC = EXEC != 0 */
	if (in->n != 2 || sim_sread(c, &in->op[1], &a) < 0)
		return -1;
	uint64_t old = w->exec;
	w->exec &= w->lanes == 32 ? (uint32_t)a : a;
	w->scc = w->exec != 0;
	return sim_swrite(c, &in->op[0], w->lanes == 32 ? (uint32_t)old : old);
}

/* Counters and hardware registers. */
static int sim_counter(struct sim_ctx *c, const struct sim_insn *in)
{
	struct amdgpu_wave *w = c->w;
	if (!strcmp(in->mn, "s_memtime") || !strcmp(in->mn, "s_memrealtime") || !strcmp(in->mn, "s_sendmsg_rtn_b64")) {
		int clock = !strcmp(in->mn, "s_memtime");
		if (!clock && in->n == 2 && !strstr(in->op[1].name, "MSG_RTN_GET_REALTIME"))
			return sim_fail(c, "message not modelled");
		uint64_t v = clock ? w->clock : w->realtime;
		if (clock && w->n_clock_reads < AMDGPU_SIM_READS)
			w->clock_reads[w->n_clock_reads++] = v;
		if (!clock && w->n_realtime_reads < AMDGPU_SIM_READS)
			w->realtime_reads[w->n_realtime_reads++] = v;
		return sim_swrite(c, &in->op[0], v);
	}
	/* s_getreg_b32 d, hwreg(...) */
	if (in->n != 2 || in->op[1].kind != SO_HWREG)
		return sim_fail(c, "s_getreg needs hwreg()");
	const struct sim_op *h = &in->op[1];
	uint64_t v;
	const char *n = h->name;
	if (!strcmp(n, "HW_REG_HW_ID") || (h->imm == 4 && w->family <= AMDGPU_FAMILY_GFX94))
		v = w->hw_id;
	else if (!strcmp(n, "HW_REG_HW_ID1"))
		v = w->hw_id1;
	else if (!strcmp(n, "HW_REG_XCC_ID"))
		v = w->xcc_id;
	else if (!strcmp(n, "HW_REG_SHADER_CYCLES") || !strcmp(n, "HW_REG_SHADER_CYCLES_LO"))
		v = !strcmp(n, "HW_REG_SHADER_CYCLES") ? w->clock & 0xfffff : (uint32_t)w->clock;
	else if (!strcmp(n, "HW_REG_SHADER_CYCLES_HI"))
		v = w->clock >> 32;
	else
		return sim_fail(c, "hardware register %s not modelled", n);
	if (strstr(n, "SHADER_CYCLES") && strcmp(n, "HW_REG_SHADER_CYCLES_HI") && w->n_clock_reads < AMDGPU_SIM_READS)
		w->clock_reads[w->n_clock_reads++] = !strcmp(n, "HW_REG_SHADER_CYCLES") ? w->clock & 0xfffff : w->clock;
	v = (v >> h->hw_off) & (h->hw_size >= 32 ? 0xffffffffu : (1u << h->hw_size) - 1);
	return sim_swrite(c, &in->op[0], v);
}

/* s_load_*: dst, base pair, byte offset. */
static int sim_sload(struct sim_ctx *c, const struct sim_insn *in)
{
	uint64_t base, off;
	if (in->n != 3 || in->op[0].kind != SO_SGPR || sim_sread(c, &in->op[1], &base) < 0 ||
	    sim_sread(c, &in->op[2], &off) < 0)
		return in->n != 3 ? sim_fail(c, "three operands expected") : -1;
	int n = in->op[0].count;
	uint32_t buf[16];
	if (n > 16 || sim_load(c, base + off, buf, (size_t)n * 4) < 0)
		return -1;
	for (int i = 0; i < n; i++)
		c->w->s[in->op[0].reg + i] = buf[i];
	return 0;
}

/* global_store_*: vaddr, vdata, saddr|off [offset:N], per active lane. */
static int sim_gstore(struct sim_ctx *c, const struct sim_insn *in)
{
	struct amdgpu_wave *w = c->w;
	if (in->n != 3 || in->op[1].kind != SO_VGPR)
		return sim_fail(c, "global store form not modelled");
	uint64_t base = 0;
	int saddr = in->op[2].kind != SO_OFF;
	if (saddr && sim_sread(c, &in->op[2], &base) < 0)
		return -1;
	for (int l = 0; l < w->lanes; l++) {
		if (!(w->exec >> l & 1))
			continue;
		uint64_t va, data;
		if (sim_vread(c, &in->op[0], l, &va) < 0 || sim_vread(c, &in->op[1], l, &data) < 0)
			return -1;
		uint64_t addr = (saddr ? base + (uint32_t)va : va) + (uint64_t)(int64_t)in->offset;
		if (sim_store(c, addr, &data, (size_t)in->op[1].count * 4) < 0)
			return -1;
	}
	return 0;
}

/* Vector ALU: per active lane. */
static int sim_valu(struct sim_ctx *c, const struct sim_insn *in)
{
	struct amdgpu_wave *w = c->w;
	const char *mn = in->mn;
	int cmp = !strcmp(mn, "v_cmp_ge_u32") || !strcmp(mn, "v_cmp_gt_u32");
	if (!strncmp(mn, "v_mad_co_", 9)) /* gfx12's names of the 64-bit multiply-adds */
		mn = !strcmp(mn, "v_mad_co_u64_u32") ? "v_mad_u64_u32" : !strcmp(mn, "v_mad_co_i64_i32") ? "v_mad_i64_i32" : mn;
	int wide = !strcmp(mn, "v_mad_u64_u32") || !strcmp(mn, "v_mad_i64_i32");
	int first = wide ? 2 : 1;
	uint64_t mask = 0;
	for (int l = 0; l < w->lanes; l++) {
		if (!(w->exec >> l & 1))
			continue;
		uint64_t a = 0, b = 0, d = 0, r;
		if ((in->n > first && sim_vread(c, &in->op[first], l, &a) < 0) ||
		    (in->n > first + 1 && sim_vread(c, &in->op[first + 1], l, &b) < 0) ||
		    (in->n > first + 2 && sim_vread(c, &in->op[first + 2], l, &d) < 0))
			return -1;
		uint32_t x = (uint32_t)a, y = (uint32_t)b;
		if (!strcmp(mn, "v_mov_b32"))
			r = x;
		else if (!strcmp(mn, "v_add_u32") || !strcmp(mn, "v_add_nc_u32"))
			r = (uint32_t)(x + y);
		else if (!strcmp(mn, "v_and_b32"))
			r = x & y;
		else if (!strcmp(mn, "v_lshlrev_b32"))
			r = y << (x & 31);
		else if (!strcmp(mn, "v_bfe_u32"))
			r = (x >> (y & 31)) & ((uint32_t)d >= 32 ? 0xffffffffu : (1u << (uint32_t)d) - 1);
		else if (!strcmp(mn, "v_mad_u32_u24"))
			r = (uint32_t)((x & 0xffffff) * (y & 0xffffff) + (uint32_t)d);
		else if (!strcmp(mn, "v_mul_lo_u32"))
			r = (uint32_t)(x * y);
		else if (!strcmp(mn, "v_min_u32"))
			r = x < y ? x : y;
		else if (!strcmp(mn, "v_mad_u64_u32"))
			r = (uint64_t)x * y + d;
		else if (!strcmp(mn, "v_mad_i64_i32"))
			r = (uint64_t)((int64_t)(int32_t)x * (int32_t)y + (int64_t)d);
		else if (cmp) {
			mask |= (uint64_t)(mn[7] == 'e' ? x >= y : x > y) << l;
			continue;
		} else
			return sim_fail(c, "vector instruction not modelled");
		if (sim_vwrite(c, &in->op[0], l, r) < 0)
			return -1;
	}
	return cmp ? sim_swrite(c, &in->op[0], mask) : 0;
}

static int sim_readfirstlane(struct sim_ctx *c, const struct sim_insn *in)
{
	int l = 0;
	while (l < c->w->lanes - 1 && !(c->w->exec >> l & 1))
		l++;
	uint64_t v;
	return in->n == 2 && sim_vread(c, &in->op[1], l, &v) == 0 ? sim_swrite(c, &in->op[0], (uint32_t)v) : -1;
}

static int sim_nop(const char *mn)
{
	static const char *const nops[] = { "s_nop", "s_waitcnt", "s_wait_kmcnt", "s_wait_alu", "s_waitcnt_depctr",
					    "s_delay_alu", NULL };
	for (int i = 0; nops[i]; i++)
		if (!strcmp(mn, nops[i]))
			return 1;
	return 0;
}

int sim_exec(struct sim_ctx *c, const struct sim_insn *in)
{
	const char *mn = in->mn;
	if (sim_nop(mn))
		return 0;
	for (size_t i = 0; i < sizeof sop2 / sizeof sop2[0]; i++)
		if (!strcmp(mn, sop2[i].name))
			return sim_sop2(c, in, sop2[i].fn);
	if (!strncmp(mn, "s_cmp_", 6))
		return sim_scmp(c, in);
	if (!strncmp(mn, "s_mov_b", 7) || !strncmp(mn, "s_cselect_b", 11) || !strncmp(mn, "s_and_saveexec_b", 16))
		return sim_smove(c, in);
	if (!strcmp(mn, "s_memtime") || !strcmp(mn, "s_memrealtime") || !strcmp(mn, "s_sendmsg_rtn_b64") ||
	    !strcmp(mn, "s_getreg_b32"))
		return sim_counter(c, in);
	if (!strncmp(mn, "s_load_", 7))
		return sim_sload(c, in);
	if (!strncmp(mn, "global_store_", 13))
		return sim_gstore(c, in);
	if (!strcmp(mn, "v_readfirstlane_b32"))
		return sim_readfirstlane(c, in);
	if (mn[0] == 'v' && mn[1] == '_')
		return sim_valu(c, in);
	return sim_fail(c, "instruction not modelled");
}
