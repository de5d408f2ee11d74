/* The sequences the AMDGPU injector inserts (layout and semantics in
 * amdgpu_inject.h): the prologue, a hook's snippet with its helpers
 * expanded and registers renamed, SAVE, and the exit wrapper that stores
 * every unit's count. Helpers per family:
 *   CLOCK   gfx9, gfx90a, gfx94, gfx10.3: s_memtime (64-bit shader clock);
 *           gfx11: s_getreg SHADER_CYCLES (20 bits, zero-extended);
 *           gfx12: SHADER_CYCLES_HI, _LO, _HI again (LLVM's sequence: a
 *           low word read across a carry reads as 0)
 *   GTIMER  gfx9 to gfx10.3: s_memrealtime; gfx11, gfx12: s_sendmsg_rtn_b64
 *           MSG_RTN_GET_REALTIME (the constant 100 MHz counter)
 *   SMID    bits 0-3 CU (gfx9) or WGP (gfx10+), bit 4 SH/SA, bits 8-10 SE,
 *           bits 16-19 XCC (gfx94): from HW_ID (gfx9: CU 11:8, SH 12,
 *           SE 14:13), XCC_ID (gfx94: 3:0) or HW_ID1 (gfx10+: WGP 13:10,
 *           SA 16, SE 19:18 on gfx10.3, 20:18 on gfx11 and gfx12)
 * Every scalar memory read is followed by its wait (the kernel's own
 * counter-based waits then see nothing of ours outstanding). */
#include "engine/amdgpu/amdgpu_inject_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"

#define S(r) amdgpu_frame_reg('s', (r), 1, b1)
#define S2(r) amdgpu_frame_reg('s', (r), 2, b2)
#define V(r) amdgpu_frame_reg('v', (r), 1, b3)
#define V2(r) amdgpu_frame_reg('v', (r), 2, b4)

static int emit_gfx9(const struct amdgpu_isa *isa)
{
	return isa->family <= AMDGPU_FAMILY_GFX94;
}

/* --- prologue ---------------------------------------------------------- */

/* Workgroup ids into fr->wg, then the system SGPRs the kernel expects
 * moved back where it expects them. */
static void emit_wg_ids(struct amdgpu_ictx *c, struct amdgpu_code *code)
{
	const struct amdgpu_frame *fr = &c->fr;
	char b1[24], b2[24];
	if (c->isa.family == AMDGPU_FAMILY_GFX12) {
		amdgpu_code_add(code, "s_mov_b32 %s, ttmp9", S(fr->wg));
		amdgpu_code_add(code, "s_and_b32 %s, ttmp7, 0xffff", S(fr->wg + 1));
		amdgpu_code_add(code, "s_lshr_b32 %s, ttmp7, 16", S(fr->wg + 2));
		return;
	}
	for (int d = 0; d < 3; d++)
		amdgpu_code_add(code, "s_mov_b32 %s, %s", S(fr->wg + d), amdgpu_frame_reg('s', c->wg_sgpr[d], 1, b2));
	/* info and wave offset first (their sources are launch SGPRs the id
	 * moves may write), then the ids from their saved copies */
	for (int pass = 0; pass < 2; pass++)
		for (int m = 0; m < c->n_moves; m++) {
			if ((c->moves[m][1] < 0) != pass)
				continue;
			int to = c->moves[m][0], from = pass ? fr->wg + c->moves[m][2] : c->moves[m][1];
			if (to != from)
				amdgpu_code_add(code, "s_mov_b32 %s, %s", S(to), amdgpu_frame_reg('s', from, 1, b2));
		}
}

/* Work-item ids x, y, z into va, va+1, vd, and the linear index into vo. */
static void emit_tids(struct amdgpu_ictx *c, struct amdgpu_code *code)
{
	const struct amdgpu_frame *fr = &c->fr;
	char b1[24], b3[24];
	int x = fr->va, y = fr->va + 1, z = fr->vd;
	if (c->packed_tid) {
		amdgpu_code_add(code, "v_and_b32_e32 %s, 0x3ff, v0", V(x));
		amdgpu_code_add(code, "v_bfe_u32 %s, v0, 10, 10", V(y));
		amdgpu_code_add(code, "v_bfe_u32 %s, v0, 20, 10", V(z));
		if (c->tid_ids_orig < 2) /* the kernel expects only the ids it asked for in v0 */
			amdgpu_code_add(code, "v_and_b32_e32 v0, %s, v0", c->tid_ids_orig ? "0xfffff" : "0x3ff");
	} else {
		amdgpu_code_add(code, "v_mov_b32_e32 %s, v0", V(x));
		amdgpu_code_add(code, "v_mov_b32_e32 %s, v1", V(y));
		amdgpu_code_add(code, "v_mov_b32_e32 %s, v2", V(z));
	}
	amdgpu_code_add(code, "v_mad_u32_u24 %s, %s, v%d, v%d", V(fr->vo), S(fr->launch + 2), y, x);
	amdgpu_code_add(code, "v_mad_u32_u24 %s, %s, v%d, v%d", V(fr->vo), S(fr->launch + 3), z, fr->vo);
}

/* Unit indices: block_linear in pt; tunit = block * tpb + tid; wunit =
 * block * wpb + first lane's tid / wave size. */
static void emit_units(struct amdgpu_ictx *c, struct amdgpu_code *code)
{
	const struct amdgpu_frame *fr = &c->fr;
	char b1[24], b3[24];
	int L = fr->launch, pt = fr->pt;
	amdgpu_code_add(code, "s_mul_i32 %s, s%d, s%d", S(pt), L + 1, fr->wg + 2);
	amdgpu_code_add(code, "s_add_u32 %s, s%d, s%d", S(pt), pt, fr->wg + 1);
	amdgpu_code_add(code, "s_mul_i32 %s, s%d, s%d", S(pt), pt, L);
	amdgpu_code_add(code, "s_add_u32 %s, s%d, s%d", S(pt), pt, fr->wg);
	if (fr->tunit >= 0) {
		amdgpu_code_add(code, "s_mul_i32 %s, s%d, s%d", S(pt + 1), pt, L + 4);
		amdgpu_code_add(code, "%s_e32 %s, s%d, v%d", c->isa.vadd, V(fr->tunit), pt + 1, fr->vo);
	}
	if (fr->wunit >= 0) {
		amdgpu_code_add(code, "v_readfirstlane_b32 %s, %s", S(pt + 1), V(fr->vo));
		amdgpu_code_add(code, "s_lshr_b32 %s, s%d, %d", S(pt + 1), pt + 1, c->isa.wave64 ? 6 : 5);
		amdgpu_code_add(code, "s_mul_i32 %s, s%d, s%d", S(pt + 2), pt, L + 5);
		amdgpu_code_add(code, "s_add_u32 %s, s%d, s%d", S(fr->wunit), pt + 2, pt + 1);
	}
}

/* Per map: record base, cursors, strides. */
static void emit_map_init(struct amdgpu_ictx *c, int i, struct amdgpu_code *code)
{
	const struct amdgpu_frame *fr = &c->fr;
	const struct probe_map *m = &c->out->maps[i].map;
	char b1[24], b3[24];
	int L = fr->launch, pt = fr->pt, wave = m->level == PROBE_LEVEL_WARP;
	int units = wave ? L + 7 : L + 6;
	uint32_t cap_bytes = m->cap * m->rec_size;
	amdgpu_code_add(code, "s_lshl_b32 %s, s%d, 2", S(pt + 1), units);
	amdgpu_code_add(code, "s_add_u32 %s, s%d, 15", S(pt + 1), pt + 1);
	amdgpu_code_add(code, "s_and_b32 %s, s%d, -16", S(pt + 1), pt + 1);
	if (wave) {
		amdgpu_code_add(code, "s_mul_i32 %s, s%d, 0x%x", S(pt + 2), fr->wunit, cap_bytes);
		amdgpu_code_add(code, "s_add_u32 %s, s%d, s%d", S(pt + 1), pt + 1, pt + 2);
		amdgpu_code_add(code, "s_mov_b32 %s, 0", S(fr->cur[i]));
	} else {
		if (fr->stride[i] >= 0)
			amdgpu_code_add(code, "s_mul_i32 %s, s%d, 0x%x", S(fr->stride[i]), units, m->rec_size);
		amdgpu_code_add(code, "v_mov_b32_e32 %s, 0", V(fr->tcur[i]));
		amdgpu_code_add(code, "s_mov_b32 %s, 0x%x", S(pt + 2), m->rec_size);
		amdgpu_code_add(code, "v_mul_lo_u32 %s, v%d, s%d", V(fr->next[i]), fr->tunit, pt + 2);
	}
	amdgpu_code_add(code, "s_add_u32 %s, s%d, s%d", S(fr->rb[i]), fr->map[i], pt + 1);
	amdgpu_code_add(code, "s_addc_u32 %s, s%d, 0", S(fr->rb[i] + 1), fr->map[i] + 1);
}

void amdgpu_emit_prologue(struct amdgpu_ictx *c, struct amdgpu_code *code)
{
	const struct amdgpu_frame *fr = &c->fr;
	const struct amdgpu_inject *o = c->out;
	const struct amdgpu_isa *isa = &c->isa;
	char b2[24];
	int K = o->alloc.kernarg_sgpr;
	emit_wg_ids(c, code);
	amdgpu_code_add(code, "%s %s, s[%d:%d], 0x%x", isa->sload4, amdgpu_frame_reg('s', fr->launch, 4, b2), K, K + 1,
			o->launch_offset);
	amdgpu_code_add(code, "%s %s, s[%d:%d], 0x%x", isa->sload4, amdgpu_frame_reg('s', fr->launch + 4, 4, b2), K,
			K + 1, o->launch_offset + 16);
	for (int i = 0; i < o->n_maps; i++)
		amdgpu_code_add(code, "%s %s, s[%d:%d], 0x%x", isa->sload2, S2(fr->map[i]), K, K + 1,
				o->maps[i].arg_offset);
	amdgpu_code_add(code, "%s", isa->wait_smem);
	emit_tids(c, code);
	emit_units(c, code);
	for (int i = 0; i < o->n_maps; i++)
		emit_map_init(c, i, code);
	amdgpu_code_add(code, "%s %s, %s", isa->mov_mask, amdgpu_frame_reg('s', fr->exec0, isa->mask_sgprs, b2),
			isa->exec);
}

/* --- helpers ------------------------------------------------------------ */

static void emit_clock(const struct amdgpu_ictx *c, int d, struct amdgpu_code *code)
{
	char b1[24], b2[24];
	const struct amdgpu_isa *isa = &c->isa;
	if (isa->family <= AMDGPU_FAMILY_GFX10_3) {
		amdgpu_code_add(code, "s_memtime %s", S2(d));
		amdgpu_code_add(code, "%s", isa->wait_smem);
	} else if (isa->family == AMDGPU_FAMILY_GFX11) {
		amdgpu_code_add(code, "s_getreg_b32 %s, hwreg(HW_REG_SHADER_CYCLES, 0, 20)", S(d));
		amdgpu_code_add(code, "s_mov_b32 %s, 0", S(d + 1));
	} else {
		int t = c->fr.t0;
		amdgpu_code_add(code, "s_getreg_b32 %s, hwreg(HW_REG_SHADER_CYCLES_HI)", S(d + 1));
		amdgpu_code_add(code, "s_getreg_b32 %s, hwreg(HW_REG_SHADER_CYCLES_LO)", S(d));
		amdgpu_code_add(code, "s_getreg_b32 %s, hwreg(HW_REG_SHADER_CYCLES_HI)", S(t));
		amdgpu_code_add(code, "s_cmp_eq_u32 s%d, s%d", d + 1, t);
		amdgpu_code_add(code, "s_cselect_b32 %s, s%d, 0", S(d), d);
		amdgpu_code_add(code, "s_mov_b32 %s, s%d", S(d + 1), t);
	}
}

static void emit_gtimer(const struct amdgpu_ictx *c, int d, struct amdgpu_code *code)
{
	char b2[24];
	const struct amdgpu_isa *isa = &c->isa;
	if (isa->family <= AMDGPU_FAMILY_GFX10_3)
		amdgpu_code_add(code, "s_memrealtime %s", S2(d));
	else
		amdgpu_code_add(code, "s_sendmsg_rtn_b64 %s, sendmsg(MSG_RTN_GET_REALTIME)", S2(d));
	amdgpu_code_add(code, "%s", isa->wait_smem);
}

/* One field of a hardware register, shifted into place and or'ed into d. */
static void emit_field(const struct amdgpu_ictx *c, int d, const char *reg, int off, int size, int shift,
		       struct amdgpu_code *code)
{
	char b1[24];
	int t = c->fr.t0;
	amdgpu_code_add(code, "s_getreg_b32 %s, hwreg(%s, %d, %d)", S(t), reg, off, size);
	amdgpu_code_add(code, "s_lshl_b32 %s, s%d, %d", S(t), t, shift);
	amdgpu_code_add(code, "s_or_b32 %s, s%d, s%d", S(d), d, t);
}

static void emit_smid(const struct amdgpu_ictx *c, int d, struct amdgpu_code *code)
{
	char b1[24];
	enum amdgpu_family f = c->isa.family;
	if (emit_gfx9(&c->isa)) {
		amdgpu_code_add(code, "s_getreg_b32 %s, hwreg(HW_REG_HW_ID, 8, 5)", S(d)); /* CU 11:8, SH 12 */
		emit_field(c, d, "HW_REG_HW_ID", 13, 2, 8, code);
		if (f == AMDGPU_FAMILY_GFX94)
			emit_field(c, d, "HW_REG_XCC_ID", 0, 4, 16, code);
		return;
	}
	amdgpu_code_add(code, "s_getreg_b32 %s, hwreg(HW_REG_HW_ID1, 10, 4)", S(d)); /* WGP */
	emit_field(c, d, "HW_REG_HW_ID1", 16, 1, 4, code);
	emit_field(c, d, "HW_REG_HW_ID1", 18, f == AMDGPU_FAMILY_GFX10_3 ? 2 : 3, 8, code);
}

/* A raw buffer access's 32-bit offset into vo: vaddr (offen) + offset. */
static void emit_buf_offset(const struct amdgpu_ictx *c, const struct amdgpu_mem *m, struct amdgpu_code *code)
{
	char b3[24];
	if (m->vaddr < 0)
		amdgpu_code_add(code, "v_mov_b32_e32 %s, %d", V(c->fr.vo), m->offset);
	else if (!m->offset)
		amdgpu_code_add(code, "v_mov_b32_e32 %s, v%d", V(c->fr.vo), m->vaddr);
	else
		amdgpu_code_add(code, "%s_e32 %s, %d, v%d", c->isa.vadd, V(c->fr.vo), m->offset, m->vaddr);
}

/* Before a hook on a buffer access: EXEC narrowed (the kernel's saved in
 * xsave) to the lanes whose access reaches memory at base + offset. The V#
 * must be a plain raw buffer: no stride, no swizzling (word 1 bits 16-31
 * zero), no thread id added (word 3 bit 23), and on gfx10+ the raw range
 * check (word 3 OOB_SELECT, bits 28-29, = 3); a lane is in range when its
 * whole access is below num_records (word 2). Otherwise no lane is: the
 * address the hardware uses is not proven, so nothing is recorded. */
static void emit_buf_guard(const struct amdgpu_ictx *c, const struct amdgpu_mem *m, struct amdgpu_code *code)
{
	const struct amdgpu_frame *fr = &c->fr;
	const struct amdgpu_isa *isa = &c->isa;
	char b1[24], b3[24], mk[24], xs[24];
	int r = m->srsrc, t0 = fr->t0, t1 = fr->t1;
	amdgpu_frame_reg('s', fr->mask, isa->mask_sgprs, mk);
	amdgpu_frame_reg('s', fr->xsave, isa->mask_sgprs, xs);
	emit_buf_offset(c, m, code);
	/* the limit: offsets below num_records - bytes + 1 (none when smaller) */
	amdgpu_code_add(code, "s_sub_u32 %s, s%d, %u", S(t1), r + 2, m->bytes - 1);
	amdgpu_code_add(code, "s_cselect_b32 %s, 0, s%d", S(t1), t1);
	amdgpu_code_add(code, "s_and_b32 %s, s%d, 0xffff0000", S(t0), r + 1);
	amdgpu_code_add(code, "s_cselect_b32 %s, 0, s%d", S(t1), t1);
	amdgpu_code_add(code, "s_and_b32 %s, s%d, 0x800000", S(t0), r + 3);
	amdgpu_code_add(code, "s_cselect_b32 %s, 0, s%d", S(t1), t1);
	if (!emit_gfx9(isa)) {
		amdgpu_code_add(code, "s_and_b32 %s, s%d, 0x30000000", S(t0), r + 3);
		amdgpu_code_add(code, "s_cmp_lg_u32 s%d, 0x30000000", t0);
		amdgpu_code_add(code, "s_cselect_b32 %s, 0, s%d", S(t1), t1);
	}
	amdgpu_code_add(code, "v_cmp_gt_u32_e64 %s, s%d, %s", mk, t1, V(fr->vo));
	amdgpu_code_add(code, "%s %s, %s", isa->and_saveexec, xs, mk);
}

static void emit_buf_unguard(const struct amdgpu_ictx *c, struct amdgpu_code *code)
{
	char xs[24];
	amdgpu_frame_reg('s', c->fr.xsave, c->isa.mask_sgprs, xs);
	amdgpu_code_add(code, "%s %s, %s", c->isa.mov_mask, c->isa.exec, xs);
}

/* ADDR of the site's memory instruction into va (per lane, 64 bits). */
static void emit_addr(const struct amdgpu_ictx *c, const struct amdgpu_site *st, struct amdgpu_code *code)
{
	const struct amdgpu_frame *fr = &c->fr;
	const struct amdgpu_mem *m = &st->mem;
	char b2[24], b3[24], b4[24], sd[24];
	if (c->isa.vop3_null_sdst)
		snprintf(sd, sizeof sd, "null");
	else
		amdgpu_frame_reg('s', fr->mask, c->isa.mask_sgprs, sd);
	if (m->srsrc >= 0) { /* base (48 bits of the V#) + the offset */
		emit_buf_offset(c, m, code);
		amdgpu_code_add(code, "v_mov_b32_e32 %s, s%d", V(fr->va), m->srsrc);
		amdgpu_code_add(code, "v_mov_b32_e32 %s, s%d", V(fr->va + 1), m->srsrc + 1);
		amdgpu_code_add(code, "v_and_b32_e32 %s, 0xffff, v%d", V(fr->va + 1), fr->va + 1);
		amdgpu_code_add(code, "v_mad_u64_u32 %s, %s, v%d, 1, %s", V2(fr->va), sd, fr->vo, V2(fr->va));
		return;
	}
	if (m->saddr >= 0) {
		amdgpu_code_add(code, "v_mad_u64_u32 %s, %s, v%d, 1, %s", V2(fr->va), sd, m->vaddr, S2(m->saddr));
	} else {
		amdgpu_code_add(code, "v_mov_b32_e32 %s, v%d", V(fr->va), m->vaddr);
		amdgpu_code_add(code, "v_mov_b32_e32 %s, v%d", V(fr->va + 1), m->vaddr + 1);
	}
	if (m->offset) {
		amdgpu_code_add(code, "v_mov_b32_e32 %s, %d", V(fr->vo), m->offset);
		amdgpu_code_add(code, "v_mad_i64_i32 %s, %s, v%d, 1, %s", V2(fr->va), sd, fr->vo, V2(fr->va));
	}
}

/* --- SAVE ------------------------------------------------------------- */

struct save_state {
	uint32_t total;      /* bytes the snippet saves */
	uint32_t at;         /* bytes saved so far */
	int map;
	int wave;
};

/* Bounds check: EXEC narrowed to the lanes (thread maps) or lane 0 (wave
 * maps) with room for the snippet's records; ADDR computed first. */
static void emit_save_head(const struct amdgpu_ictx *c, const struct save_state *ss, int need_addr,
			   const struct amdgpu_site *st, struct amdgpu_code *code)
{
	const struct amdgpu_frame *fr = &c->fr;
	const struct amdgpu_isa *isa = &c->isa;
	const struct probe_map *m = &c->out->maps[ss->map].map;
	char b1[24], b3[24], es[24], mk[24];
	uint32_t room = m->cap * m->rec_size - ss->total;
	amdgpu_frame_reg('s', fr->esave, isa->mask_sgprs, es);
	amdgpu_frame_reg('s', fr->mask, isa->mask_sgprs, mk);
	if (need_addr)
		emit_addr(c, st, code);
	if (ss->wave) {
		amdgpu_code_add(code, "%s %s, %s", isa->mov_mask, es, isa->exec);
		amdgpu_code_add(code, "s_cmp_le_u32 s%d, 0x%x", fr->cur[ss->map], room);
		amdgpu_code_add(code, "%s %s, 1, 0", isa->cselect_mask, isa->exec);
		amdgpu_code_add(code, "v_mov_b32_e32 %s, s%d", V(fr->vo), fr->cur[ss->map]);
		return;
	}
	if (isa->vop3_literal) {
		amdgpu_code_add(code, "v_cmp_ge_u32_e64 %s, 0x%x, v%d", mk, room, fr->tcur[ss->map]);
	} else {
		amdgpu_code_add(code, "s_mov_b32 %s, 0x%x", S(fr->k), room);
		amdgpu_code_add(code, "v_cmp_ge_u32_e64 %s, s%d, v%d", mk, fr->k, fr->tcur[ss->map]);
	}
	amdgpu_code_add(code, "%s %s, %s", isa->and_saveexec, es, mk);
}

/* One value of a SAVE into vd (and vd+1 for 64-bit values). */
static int emit_value(const struct amdgpu_ictx *c, const struct amdgpu_iprobe *ip, const char *op, int width,
		      const struct amdgpu_site *st, struct amdgpu_code *code)
{
	const struct amdgpu_frame *fr = &c->fr;
	char b3[24];
	int part;
	const struct amdgpu_sreg *r = amdgpu_snip_ref(&ip->snip, op, &part);
	for (int w = 0; w < width; w++) {
		char src[32];
		if (r) {
			int first = fr->preg[ip - c->probes][r - ip->snip.regs] + (part == 2) + w;
			snprintf(src, sizeof src, "%c%d", r->vector ? 'v' : 's', first);
		} else if (!strcmp(op, "ADDR")) {
			snprintf(src, sizeof src, "v%d", fr->va + w);
		} else if (!strcmp(op, "BYTES")) {
			snprintf(src, sizeof src, "%u", st->mem.bytes);
		} else if (op[1] == '[') {
			struct amdgpu_reg kr;
			if (amdgpu_code_reg(op, &kr) < 0)
				return -1;
			snprintf(src, sizeof src, "%c%d", kr.file, kr.first + w);
		} else if (op[0] == 's' || op[0] == 'v') {
			snprintf(src, sizeof src, "%s", op);
		} else {
			long long v = strtoll(op, NULL, 0);
			snprintf(src, sizeof src, "0x%x", (unsigned)((unsigned long long)v >> (32 * w)));
		}
		amdgpu_code_add(code, "v_mov_b32_e32 %s, %s", V(fr->vd + w), src);
	}
	return 0;
}

/* The values of one SAVE, stored 1 or 2 dwords at a time. */
static int emit_save(const struct amdgpu_ictx *c, const struct amdgpu_iprobe *ip, const struct amdgpu_stmt *stm,
		     struct save_state *ss, const struct amdgpu_site *st, struct amdgpu_code *code)
{
	const struct amdgpu_frame *fr = &c->fr;
	const struct amdgpu_isa *isa = &c->isa;
	const struct probe_map *m = &c->out->maps[ss->map].map;
	int width = !strcmp(stm->mnemonic, "SAVE.u64") ? 2 : 1;
	char b1[24], b2[24], b3[24];
	for (int i = 0; i < stm->n_ops; i++) {
		int data = fr->vd; /* ADDR is stored from where it was computed */
		if (!strcmp(stm->ops[i], "ADDR"))
			data = fr->va;
		else if (emit_value(c, ip, stm->ops[i], width, st, code) < 0)
			return cause_set(c->cause, "cannot read SAVE value %s", stm->ops[i]);
		uint32_t rec = ss->at / m->rec_size, in_rec = ss->at % m->rec_size;
		const char *off = V(fr->vo);
		uint32_t imm = ss->wave ? ss->at : in_rec;
		if (!ss->wave) {
			off = V(fr->next[ss->map]);
			if (rec) { /* slot-major: record rec of this snippet is rec strides on */
				amdgpu_code_add(code, "s_mul_i32 %s, s%d, %u", S(fr->t1), fr->stride[ss->map], rec);
				amdgpu_code_add(code, "%s_e32 %s, s%d, v%d", isa->vadd, V(fr->vo), fr->t1, fr->next[ss->map]);
				off = b3;
			}
		}
		if (imm > (uint32_t)isa->store_offset_max) {
			char base[24];
			snprintf(base, sizeof base, "%s", off);
			amdgpu_code_add(code, "%s_e32 %s, 0x%x, %s", isa->vadd, V(fr->vo), imm, base);
			off = b3;
			imm = 0;
		}
		amdgpu_code_add(code, "%s %s, %s, %s%s%.0u", width == 2 ? isa->gstore2 : isa->gstore1, off,
				amdgpu_frame_reg('v', data, width, b1), S2(fr->rb[ss->map]), imm ? " offset:" : "", imm);
		ss->at += 4u * (uint32_t)width;
	}
	return 0;
}

/* After the last SAVE: EXEC back, cursors advanced (saturating). */
static void emit_save_tail(const struct amdgpu_ictx *c, const struct save_state *ss, struct amdgpu_code *code)
{
	const struct amdgpu_frame *fr = &c->fr;
	const struct amdgpu_isa *isa = &c->isa;
	const struct probe_map *m = &c->out->maps[ss->map].map;
	char b1[24], b3[24], es[24];
	amdgpu_frame_reg('s', fr->esave, isa->mask_sgprs, es);
	uint32_t recs = ss->total / m->rec_size;
	if (!ss->wave && fr->stride[ss->map] >= 0 && recs) { /* lanes that stored move to their next slot */
		int by = fr->stride[ss->map];
		if (recs > 1) {
			amdgpu_code_add(code, "s_mul_i32 %s, s%d, %u", S(fr->t1), by, recs);
			by = fr->t1;
		}
		amdgpu_code_add(code, "%s_e32 %s, s%d, v%d", isa->vadd, V(fr->next[ss->map]), by, fr->next[ss->map]);
	}
	amdgpu_code_add(code, "%s %s, %s", isa->mov_mask, isa->exec, es);
	if (ss->wave) {
		amdgpu_code_add(code, "s_min_u32 %s, s%d, 0x%x", S(fr->cur[ss->map]), fr->cur[ss->map], ~ss->total);
		amdgpu_code_add(code, "s_add_u32 %s, s%d, 0x%x", S(fr->cur[ss->map]), fr->cur[ss->map], ss->total);
	} else {
		amdgpu_code_add(code, "v_min_u32_e32 %s, 0x%x, v%d", V(fr->tcur[ss->map]), ~ss->total, fr->tcur[ss->map]);
		amdgpu_code_add(code, "%s_e32 %s, 0x%x, v%d", isa->vadd, V(fr->tcur[ss->map]), ss->total,
				fr->tcur[ss->map]);
	}
}

/* --- snippets ----------------------------------------------------------- */

/* v_add_u32 (gfx9, no carry) and v_add_nc_u32 (gfx10+) are one operation:
 * a snippet may use either name on every family. */
static const char *emit_alias(const struct amdgpu_isa *isa, const char *mn, char buf[64])
{
	static const char *const pairs[][2] = { { "v_add_u32", "v_add_nc_u32" }, { "v_sub_u32", "v_sub_nc_u32" },
						{ "v_subrev_u32", "v_subrev_nc_u32" } };
	int gfx9 = emit_gfx9(isa);
	for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
		const char *from = pairs[i][gfx9], *to = pairs[i][!gfx9];
		size_t n = strlen(from);
		if (!strncmp(mn, from, n) && (!mn[n] || mn[n] == '_')) {
			snprintf(buf, 64, "%s%s", to, mn + n);
			return buf;
		}
	}
	return mn;
}

/* An operand renamed: probe registers to physical ones, BYTES to its value. */
static const char *emit_operand(const struct amdgpu_ictx *c, const struct amdgpu_iprobe *ip, const char *op,
				const struct amdgpu_site *st, char buf[32])
{
	int part;
	const struct amdgpu_sreg *r = amdgpu_snip_ref(&ip->snip, op, &part);
	if (r) {
		int first = c->fr.preg[ip - c->probes][r - ip->snip.regs] + (part == 2);
		return amdgpu_frame_reg(r->vector ? 'v' : 's', first, part ? 1 : r->count, buf);
	}
	if (!strcmp(op, "BYTES")) {
		snprintf(buf, 32, "%u", st->mem.bytes);
		return buf;
	}
	return op;
}

static void emit_insn(const struct amdgpu_ictx *c, const struct amdgpu_iprobe *ip, const struct amdgpu_stmt *stm,
		      const struct amdgpu_site *st, struct amdgpu_code *code)
{
	char ops[AMDGPU_SNIP_OPS][32], mn[64], line[512];
	int part;
	const struct amdgpu_sreg *d = stm->n_ops ? amdgpu_snip_ref(&ip->snip, stm->ops[0], &part) : NULL;
	int dst = d ? c->fr.preg[ip - c->probes][d - ip->snip.regs] + (part == 2) : -1;
	if (stm->n_ops == 2 && d && !strcmp(stm->ops[1], "CLOCK"))
		return emit_clock(c, dst, code);
	if (stm->n_ops == 2 && d && !strcmp(stm->ops[1], "GTIMER"))
		return emit_gtimer(c, dst, code);
	if (stm->n_ops == 2 && d && !strcmp(stm->ops[1], "SMID"))
		return emit_smid(c, dst, code);
	int len = snprintf(line, sizeof line, "%s", emit_alias(&c->isa, stm->mnemonic, mn));
	for (int i = 0; i < stm->n_ops && len < (int)sizeof line; i++)
		len += snprintf(line + len, sizeof line - (size_t)len, "%s%s", i ? ", " : " ",
				emit_operand(c, ip, stm->ops[i], st, ops[i]));
	if (stm->mods[0] && len < (int)sizeof line)
		snprintf(line + len, sizeof line - (size_t)len, " %s", stm->mods);
	amdgpu_code_add(code, "%s", line);
}

int amdgpu_emit_hook(struct amdgpu_ictx *c, const struct amdgpu_iprobe *ip, int hook, const struct amdgpu_site *st,
		     struct amdgpu_code *code)
{
	const struct amdgpu_shook *hk = &ip->snip.hooks[hook];
	struct save_state ss = { .map = ip->map };
	int last = -1, need_addr = 0;
	for (int i = 0; i < hk->n; i++) {
		const struct amdgpu_stmt *stm = &hk->v[i];
		if (stm->kind != AMDGPU_STMT_SAVE)
			continue;
		last = i;
		ss.total += 4u * (uint32_t)stm->n_ops * (!strcmp(stm->mnemonic, "SAVE.u64") ? 2 : 1);
		for (int k = 0; k < stm->n_ops; k++)
			need_addr |= !strcmp(stm->ops[k], "ADDR");
	}
	ss.wave = ip->map >= 0 && c->out->maps[ip->map].map.level == PROBE_LEVEL_WARP;
	int head = 0;
	if (st->guard)
		emit_buf_guard(c, &st->mem, code);
	for (int i = 0; i < hk->n; i++) {
		const struct amdgpu_stmt *stm = &hk->v[i];
		code->cur = stm->line;
		if (stm->kind != AMDGPU_STMT_SAVE) {
			emit_insn(c, ip, stm, st, code);
			continue;
		}
		if (!head++)
			emit_save_head(c, &ss, need_addr, st, code);
		if (emit_save(c, ip, stm, &ss, st, code) < 0)
			return -1;
		if (i == last)
			emit_save_tail(c, &ss, code);
	}
	if (st->guard)
		emit_buf_unguard(c, code);
	code->cur = 0;
	return code->oom ? cause_set(c->cause, "out of memory emitting probe code") : 0;
}

/* --- exits ---------------------------------------------------------------- */

void amdgpu_emit_exit_head(struct amdgpu_ictx *c, struct amdgpu_code *code)
{
	const struct amdgpu_isa *isa = &c->isa;
	char xs[24], e0[24];
	amdgpu_frame_reg('s', c->fr.xsave, isa->mask_sgprs, xs);
	amdgpu_frame_reg('s', c->fr.exec0, isa->mask_sgprs, e0);
	amdgpu_code_add(code, "%s %s, %s", isa->mov_mask, xs, isa->exec);
	amdgpu_code_add(code, "%s %s, %s", isa->mov_mask, isa->exec, e0);
}

/* Every unit's count: work-items under the launch EXEC, waves from lane 0. */
void amdgpu_emit_exit_tail(struct amdgpu_ictx *c, struct amdgpu_code *code)
{
	const struct amdgpu_frame *fr = &c->fr;
	const struct amdgpu_isa *isa = &c->isa;
	char b1[24], b2[24], b3[24], xs[24];
	amdgpu_frame_reg('s', fr->xsave, isa->mask_sgprs, xs);
	for (int i = 0; i < c->out->n_maps; i++) {
		if (fr->tcur[i] < 0)
			continue;
		amdgpu_code_add(code, "v_lshlrev_b32_e32 %s, 2, v%d", V(fr->vo), fr->tunit);
		amdgpu_code_add(code, "%s %s, v%d, %s", isa->gstore1, V(fr->vo), fr->tcur[i], S2(fr->map[i]));
	}
	if (fr->wunit >= 0) {
		amdgpu_code_add(code, "%s %s, 1", isa->mov_mask, isa->exec);
		amdgpu_code_add(code, "s_lshl_b32 %s, s%d, 2", S(fr->t1), fr->wunit);
		amdgpu_code_add(code, "v_mov_b32_e32 %s, s%d", V(fr->vo), fr->t1);
		for (int i = 0; i < c->out->n_maps; i++) {
			if (fr->cur[i] < 0)
				continue;
			amdgpu_code_add(code, "v_mov_b32_e32 %s, s%d", V(fr->vd), fr->cur[i]);
			amdgpu_code_add(code, "%s %s, v%d, %s", isa->gstore1, V(fr->vo), fr->vd, S2(fr->map[i]));
		}
	}
	amdgpu_code_add(code, "%s %s, %s", isa->mov_mask, isa->exec, xs);
}
