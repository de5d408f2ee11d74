/* Register use and probe register allocation (rules in amdgpu_regs.h). */
#include "engine/amdgpu/amdgpu_regs.h"

#include <stdlib.h>
#include <string.h>

#include "common/cause.h"

/* SGPRs addressable by code (LLVM getAddressableNumSGPRs), and on gfx8/9
 * what VCC, FLAT_SCRATCH and XNACK_MASK may take from the top: counted
 * whether or not this kernel uses them, so probe SGPRs never meet them. */
#define SGPRS_GFX9 102
#define SGPRS_GFX9_EXTRA 6
#define SGPRS_GFX10 106
#define VGPRS_ARCH 256
#define VGPRS_UNIFIED 512

static int regs_word_start(const char *text, const char *p)
{
	if (p == text)
		return 1;
	char c = p[-1];
	return !(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') && !(c >= '0' && c <= '9') && c != '_';
}

/* Operand "s5", "v[4:7]", "a12" at p: the highest index, or -1. */
static int regs_operand(const char *p)
{
	char *end;
	if (p[1] == '[') {
		long lo = strtol(p + 2, &end, 10);
		if (end == p + 2 || *end != ':')
			return -1;
		long hi = strtol(end + 1, &end, 10);
		return *end == ']' && hi >= lo && hi < 1024 ? (int)hi : -1;
	}
	if (p[1] < '0' || p[1] > '9')
		return -1;
	long v = strtol(p + 1, &end, 10);
	char c = *end;
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_')
		return -1; /* "s1x" is no register */
	return v < 1024 ? (int)v : -1;
}

static void regs_insn(const char *text, struct amdgpu_regs *r)
{
	const char *ops = strchr(text, ' ');
	if (!strncmp(text, "s_swappc", 8) || !strncmp(text, "s_call", 6))
		r->calls = 1;
	if (!ops)
		return;
	for (const char *p = ops; *p; p++) {
		if (!regs_word_start(text, p))
			continue;
		if (!strncmp(p, "vcc", 3))
			r->vcc = 1;
		else if (!strncmp(p, "flat_scratch", 12))
			r->flat_scratch = 1;
		else if (!strncmp(p, "xnack_mask", 10))
			r->xnack_mask = 1;
		int *slot = *p == 's' ? &r->sgpr_max : *p == 'v' ? &r->vgpr_max : *p == 'a' ? &r->agpr_max : NULL;
		if (!slot)
			continue;
		int hi = regs_operand(p);
		if (hi > *slot)
			*slot = hi;
	}
}

void amdgpu_regs_scan(const struct amdgpu_func *f, int n, struct amdgpu_regs *r)
{
	memset(r, 0, sizeof *r);
	r->sgpr_max = r->vgpr_max = r->agpr_max = -1;
	for (int i = 0; i < n && i < f->n; i++)
		regs_insn(f->v[i].text, r);
}

static int regs_max(int a, int b)
{
	return a > b ? a : b;
}

static int regs_launch_sgprs(const struct amdgpu_kd *kd)
{
	return (int)kd->user_sgprs + kd->wg_id[0] + kd->wg_id[1] + kd->wg_id[2] + kd->wg_info + kd->private_segment;
}

static int regs_alloc_sgprs(const struct amdgpu_co *co, const struct amdgpu_co_kernel *k,
			    const struct amdgpu_regs *used, int n, struct amdgpu_alloc *a, char **cause)
{
	int gfx9 = co->elf.family <= AMDGPU_FAMILY_GFX94;
	int limit = gfx9 ? SGPRS_GFX9 - SGPRS_GFX9_EXTRA : SGPRS_GFX10;
	/* the metadata's count includes the extra SGPRs on gfx9: the text
	 * and launch SGPRs bound the numbered ones */
	int base = regs_max(used->sgpr_max + 1, regs_launch_sgprs(&k->kd));
	if (used->calls) /* callees' SGPRs are in the count only (with VCC & co: conservative) */
		base = regs_max(base, (int)k->meta->sgpr_count);
	base = (base + 1) & ~1;
	if (base + n > limit)
		return cause_set(cause, "no free SGPRs: kernel %s uses s0-s%d, the probe needs %d more (limit %d)",
				 k->meta->name, base - 1, n, limit);
	a->sgpr = base;
	a->n_sgpr = n;
	a->kd_sgprs = (unsigned)(base + n + (gfx9 ? SGPRS_GFX9_EXTRA : 0));
	if (a->kd_sgprs < k->meta->sgpr_count)
		a->kd_sgprs = k->meta->sgpr_count;
	return 0;
}

static int regs_alloc_vgprs(const struct amdgpu_co *co, const struct amdgpu_co_kernel *k,
			    const struct amdgpu_regs *used, int n, struct amdgpu_alloc *a, char **cause)
{
	enum amdgpu_family f = co->elf.family;
	int unified = amdgpu_family_has_agprs(f);
	int agprs = (int)k->meta->agpr_count, arch = (int)k->meta->vgpr_count;
	if (unified && agprs)
		arch = (int)k->kd.accum_offset; /* .vgpr_count holds the AGPRs too */
	int base = regs_max(regs_max(used->vgpr_max + 1, arch), (int)k->kd.vgpr_workitem_ids + 1);
	if (unified)
		base = (base + 1) & ~1;
	int top = base + n;
	if (top > VGPRS_ARCH)
		return cause_set(cause, "no free VGPRs: kernel %s uses v0-v%d, the probe needs %d more (limit %d)",
				 k->meta->name, base - 1, n, VGPRS_ARCH);
	a->vgpr = base;
	a->n_vgpr = n;
	a->kd_vgprs = (unsigned)top;
	a->accum_offset = 0;
	if (unified) {
		unsigned acc = k->kd.accum_offset > (unsigned)((top + 3) & ~3) ? k->kd.accum_offset
									   : (unsigned)((top + 3) & ~3);
		if (!agprs)
			acc = (unsigned)((top + 3) & ~3);
		if (acc + (unsigned)agprs > VGPRS_UNIFIED)
			return cause_set(cause, "no free VGPRs: kernel %s's %d AGPRs leave no room above v%d", k->meta->name,
					 agprs, top - 1);
		a->accum_offset = acc;
		a->kd_vgprs = acc + (unsigned)agprs;
	}
	return 0;
}

int amdgpu_regs_alloc(const struct amdgpu_co *co, const struct amdgpu_co_kernel *k, const struct amdgpu_regs *used,
		      int n_sgpr, int n_vgpr, struct amdgpu_alloc *a, char **cause)
{
	memset(a, 0, sizeof *a);
	a->kernarg_sgpr = amdgpu_kd_kernarg_sgpr(&k->kd);
	if (a->kernarg_sgpr < 0)
		return cause_set(cause, "no kernarg pointer: kernel %s does not ask for its kernarg segment, so the "
				 "probe cannot find its map", k->meta->name);
	if (regs_alloc_sgprs(co, k, used, n_sgpr, a, cause) < 0 || regs_alloc_vgprs(co, k, used, n_vgpr, a, cause) < 0)
		return -1;
	return 0;
}

void amdgpu_regs_apply(const struct amdgpu_co *co, const struct amdgpu_alloc *a, struct amdgpu_kd *kd)
{
	enum amdgpu_family f = co->elf.family;
	if (a->accum_offset)
		kd->rsrc3 = (kd->rsrc3 & ~0x3fu) | (a->accum_offset / 4 - 1);
	amdgpu_kd_set_vgprs(kd, a->kd_vgprs, f);
	amdgpu_kd_set_sgprs(kd, a->kd_sgprs, f);
}
