/* Hazard rules for inserted code, per family (LLVM 19's
 * GCNHazardRecognizer and GCNSubtarget state which hardware has which):
 *  - every family: code that may write SCC (any scalar ALU instruction but
 *    moves, selects, s_getreg, multiplies...) saves it first
 *    (s_cselect_b32 sN, -1, 0) and restores it last (s_cmp_lg_u32 sN, 0),
 *    so a kernel's compare and its branch may sit on either side;
 *  - gfx9, gfx90a, gfx94: a vector memory instruction reading an SGPR a
 *    VALU wrote needs 5 wait states in between (s_nop);
 *  - gfx94: a VALU reading an SGPR a VALU wrote needs 2, v_readfirstlane
 *    reading a VGPR a VALU wrote needs 1;
 *  - gfx11: a change of EXEC by a scalar instruction is followed by
 *    s_waitcnt_depctr va_vdst(0) (the partial-forwarding hazard, for the
 *    VALU that follows, ours or the kernel's);
 *  - gfx11, gfx12: code reading the kernel's VGPRs (ADDR) first waits for
 *    the VALU writes in flight (va_vdst(0): a transcendental result read
 *    too early);
 *  - gfx12: every scalar write of an SGPR is followed by s_wait_alu
 *    sa_sdst(0) (the VALU-read-SGPR hazard, mitigated the way LLVM does
 *    without optimisation).
 * Boundaries with the kernel's code: inserted code reads no SGPR the
 * kernel's VALUs write except address registers the traced instruction
 * itself reads (the compiler already separated those from their writers),
 * writes no kernel register but EXEC and SCC (restored), and the only
 * VALU-written SGPRs it leaves are its own, which the kernel never reads.
 * None of this was run on AMD silicon. */
#include "engine/amdgpu/amdgpu_inject_int.h"

#include <stdlib.h>
#include <string.h>

#define HAZ_REGS 1024

struct haz {
	int ws;                       /* wait states so far */
	int sgpr_valu[HAZ_REGS];      /* ws after the last VALU write of each SGPR, -1000 none */
	int vgpr_valu[HAZ_REGS];
};

enum haz_kind { HK_VALU, HK_VMEM, HK_SALU, HK_SMEM, HK_OTHER };

static enum haz_kind haz_kind(const char *mn)
{
	if (mn[0] == 'v' && mn[1] == '_')
		return HK_VALU;
	if (amdgpu_isa_match(mn, "global") || amdgpu_isa_match(mn, "flat") || amdgpu_isa_match(mn, "buffer") ||
	    amdgpu_isa_match(mn, "scratch"))
		return HK_VMEM;
	if (amdgpu_isa_match(mn, "s_load") || amdgpu_isa_match(mn, "s_memtime") ||
	    amdgpu_isa_match(mn, "s_memrealtime") || amdgpu_isa_match(mn, "s_sendmsg_rtn"))
		return HK_SMEM;
	if (amdgpu_isa_match(mn, "s_nop") || amdgpu_isa_match(mn, "s_waitcnt") || amdgpu_isa_match(mn, "s_wait") ||
	    amdgpu_isa_match(mn, "s_cmp") || amdgpu_isa_match(mn, "s_bitcmp"))
		return HK_OTHER;
	return HK_SALU;
}

/* Operands a line writes: the first (the second too for a VOP3 carry-out). */
static int haz_dests(const char *mn, enum haz_kind k, int n_ops)
{
	if (k == HK_VMEM || k == HK_OTHER || n_ops == 0)
		return 0;
	return !strncmp(mn, "v_mad_u64_u32", 13) || !strncmp(mn, "v_mad_i64_i32", 13) ? 2 : 1;
}

static int haz_since(const int *last, const struct amdgpu_reg *r, int ws)
{
	int best = 1000;
	for (int i = 0; i < r->count && r->first + i < HAZ_REGS; i++)
		if (ws - last[r->first + i] < best)
			best = ws - last[r->first + i];
	return best;
}

/* Wait states line `ops` needs before it. */
static int haz_need(const struct amdgpu_isa *isa, const struct haz *h, const char *mn, enum haz_kind k, char **ops,
		    int n, int dests)
{
	int need = 0;
	for (int i = dests; i < n; i++) {
		struct amdgpu_reg r;
		if (amdgpu_code_reg(ops[i], &r) < 0)
			continue;
		if (r.file == 's' && k == HK_VMEM && isa->family <= AMDGPU_FAMILY_GFX94) {
			int d = 5 - haz_since(h->sgpr_valu, &r, h->ws);
			need = d > need ? d : need;
		}
		if (r.file == 's' && k == HK_VALU && isa->family == AMDGPU_FAMILY_GFX94) {
			int d = 2 - haz_since(h->sgpr_valu, &r, h->ws);
			need = d > need ? d : need;
		}
		if (r.file == 'v' && isa->family == AMDGPU_FAMILY_GFX94 && !strncmp(mn, "v_readfirstlane", 15)) {
			int d = 1 - haz_since(h->vgpr_valu, &r, h->ws);
			need = d > need ? d : need;
		}
	}
	return need;
}

static void haz_record(struct haz *h, enum haz_kind k, char **ops, int dests)
{
	for (int i = 0; i < dests && k == HK_VALU; i++) {
		struct amdgpu_reg r;
		if (amdgpu_code_reg(ops[i], &r) < 0)
			continue;
		int *last = r.file == 's' ? h->sgpr_valu : r.file == 'v' ? h->vgpr_valu : NULL;
		for (int j = 0; last && j < r.count && r.first + j < HAZ_REGS; j++)
			last[r.first + j] = h->ws;
	}
}

static int haz_writes_exec(char **ops, int dests, const char *mn)
{
	struct amdgpu_reg r;
	return (dests && amdgpu_code_reg(ops[0], &r) == 0 && r.file == 'e') || strstr(mn, "saveexec");
}

/* One line, with the waits it needs before and after it. */
static void haz_line(const struct amdgpu_ictx *c, struct haz *h, const char *line, struct amdgpu_code *out)
{
	const struct amdgpu_isa *isa = &c->isa;
	char buf[512], *mn, *ops[AMDGPU_SNIP_OPS];
	int n = amdgpu_code_split(line, buf, sizeof buf, &mn, ops, AMDGPU_SNIP_OPS);
	enum haz_kind k = haz_kind(mn);
	int dests = haz_dests(mn, k, n);
	int need = haz_need(isa, h, mn, k, ops, n, dests);
	if (need > 0) {
		amdgpu_code_add(out, "s_nop %d", need - 1);
		h->ws += need;
	}
	amdgpu_code_add(out, "%s", line);
	h->ws += !strcmp(mn, "s_nop") && n ? 1 + (int)strtol(ops[0], NULL, 0) : 1;
	haz_record(h, k, ops, dests);
	if (isa->family == AMDGPU_FAMILY_GFX11 && k != HK_VALU && haz_writes_exec(ops, dests, mn))
		amdgpu_code_add(out, "s_waitcnt_depctr depctr_va_vdst(0)");
	struct amdgpu_reg r;
	if (isa->family == AMDGPU_FAMILY_GFX12 && k == HK_SALU && dests &&
	    amdgpu_code_reg(ops[0], &r) == 0 && r.file == 's' && r.first != c->fr.scc)
		amdgpu_code_add(out, "s_wait_alu depctr_sa_sdst(0)");
}

void amdgpu_hazard_fix(const struct amdgpu_ictx *c, const struct amdgpu_code *in, int reads_kernel_vgprs, int entry,
		       struct amdgpu_code *out)
{
	struct haz *h = calloc(1, sizeof *h); /* 8 KiB: not on the stack */
	if (!h) {
		out->oom = 1;
		return;
	}
	for (int i = 0; i < HAZ_REGS; i++)
		h->sgpr_valu[i] = h->vgpr_valu[i] = -1000;
	int scc = 0;
	for (int i = 0; i < in->n && !entry; i++)
		scc |= !amdgpu_isa_keeps_scc(in->line[i]);
	enum amdgpu_family f = c->isa.family;
	if (reads_kernel_vgprs && f == AMDGPU_FAMILY_GFX11)
		amdgpu_code_add(out, "s_waitcnt_depctr depctr_va_vdst(0)");
	if (reads_kernel_vgprs && f == AMDGPU_FAMILY_GFX12)
		amdgpu_code_add(out, "s_wait_alu depctr_va_vdst(0)");
	if (scc)
		amdgpu_code_add(out, "s_cselect_b32 s%d, -1, 0", c->fr.scc);
	for (int i = 0; i < in->n; i++) {
		out->cur = in->origin[i];
		haz_line(c, h, in->line[i], out);
	}
	out->cur = 0;
	if (scc)
		amdgpu_code_add(out, "s_cmp_lg_u32 s%d, 0", c->fr.scc);
	out->oom |= in->oom;
	free(h);
}
