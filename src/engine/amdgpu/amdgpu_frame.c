/* The injector's registers (struct amdgpu_frame): SGPRs kept for the whole
 * kernel first (the launch EXEC, per map its buffer and record base), then
 * single SGPRs (unit index, cursors, strides), then the 4-aligned scratch
 * block and the probes' own (the prologue's registers overlap both); VGPRs: ADDR and data pairs, an offset, the
 * unit index, per thread map a cursor and a record offset, then the
 * probes' own. Pairs are even-aligned. All of it sits above what the
 * kernel uses (amdgpu_regs_alloc, with the launch SGPRs the patched
 * descriptor loads). */
#include "engine/amdgpu/amdgpu_inject_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"

const char *amdgpu_frame_reg(char file, int first, int count, char buf[24])
{
	if (count == 1)
		snprintf(buf, 24, "%c%d", file, first);
	else
		snprintf(buf, 24, "%c[%d:%d]", file, first, first + count - 1);
	return buf;
}

static int frame_take(int *at, int n, int align)
{
	*at = (*at + align - 1) / align * align;
	int r = *at;
	*at += n;
	return r;
}

/* Probe registers of one file: pairs first (even), then singles. */
static int frame_probe_regs(struct amdgpu_ictx *c, int vector, int *at)
{
	for (int pass = 2; pass >= 1; pass--)
		for (int i = 0; i < c->n_probes; i++) {
			const struct amdgpu_snip *s = &c->probes[i].snip;
			for (int r = 0; r < s->n_regs; r++)
				if (s->regs[r].vector == vector && s->regs[r].count == pass)
					c->fr.preg[i][r] = frame_take(at, pass, pass);
		}
	return 0;
}

/* Offsets from 0; the base is added once the allocation is known. The
 * prologue's registers (the launch block, workgroup ids, temporaries) are
 * dead before the first hook runs, so they share the block that holds the
 * hooks' scratch and the probes' own SGPRs. */
static void frame_layout(struct amdgpu_ictx *c, int *n_s, int *n_v)
{
	struct amdgpu_frame *fr = &c->fr;
	const struct amdgpu_inject *o = c->out;
	int s = 0, v = 0, wave_maps = 0, thread_maps = 0;
	fr->exec0 = frame_take(&s, 2, 2);
	for (int i = 0; i < o->n_maps; i++) {
		fr->map[i] = frame_take(&s, 2, 2);
		fr->rb[i] = frame_take(&s, 2, 2);
		wave_maps += o->maps[i].map.level == PROBE_LEVEL_WARP;
		thread_maps += o->maps[i].map.level == PROBE_LEVEL_THREAD;
	}
	fr->wunit = wave_maps ? frame_take(&s, 1, 1) : -1;
	for (int i = 0; i < o->n_maps; i++) {
		int wave = o->maps[i].map.level == PROBE_LEVEL_WARP;
		fr->cur[i] = wave ? frame_take(&s, 1, 1) : -1;
		fr->stride[i] = !wave && o->maps[i].map.cap > 1 ? frame_take(&s, 1, 1) : -1;
		fr->tcur[i] = fr->next[i] = -1;
	}
	fr->scratch = frame_take(&s, FRAME_SCRATCH, 4);
	fr->esave = fr->scratch;
	fr->xsave = fr->scratch + 2;
	fr->mask = fr->scratch + 4;
	fr->scc = fr->scratch + 6;
	fr->k = fr->scratch + 7;
	fr->t0 = fr->scratch + 8;
	fr->t1 = fr->scratch + 9;
	fr->launch = fr->scratch;
	fr->wg = fr->scratch + 8;
	fr->pt = fr->scratch + 11;
	frame_probe_regs(c, 0, &s);
	if (s < fr->scratch + FRAME_PROLOGUE)
		s = fr->scratch + FRAME_PROLOGUE;
	fr->va = frame_take(&v, 2, 2);
	fr->vd = frame_take(&v, 2, 2);
	fr->vo = frame_take(&v, 1, 1);
	fr->tunit = thread_maps ? frame_take(&v, 1, 1) : -1;
	for (int i = 0; i < o->n_maps; i++)
		if (o->maps[i].map.level == PROBE_LEVEL_THREAD) {
			fr->tcur[i] = frame_take(&v, 1, 1);
			fr->next[i] = frame_take(&v, 1, 1);
		}
	frame_probe_regs(c, 1, &v);
	*n_s = s;
	*n_v = (v + 1) & ~1;
}

static void frame_rebase(struct amdgpu_ictx *c, int sb, int vb)
{
	struct amdgpu_frame *fr = &c->fr;
	int *sg[] = { &fr->exec0, &fr->wunit, &fr->scratch, &fr->esave, &fr->xsave, &fr->mask, &fr->scc, &fr->k,
		      &fr->t0, &fr->t1, &fr->launch, &fr->wg, &fr->pt };
	int *vg[] = { &fr->tunit, &fr->va, &fr->vd, &fr->vo };
	for (size_t i = 0; i < sizeof sg / sizeof sg[0]; i++)
		if (*sg[i] >= 0)
			*sg[i] += sb;
	for (size_t i = 0; i < sizeof vg / sizeof vg[0]; i++)
		if (*vg[i] >= 0)
			*vg[i] += vb;
	for (int i = 0; i < AMDGPU_MAX_MAPS; i++) {
		int *s[] = { &fr->map[i], &fr->rb[i], &fr->cur[i], &fr->stride[i] };
		for (int k = 0; k < 4; k++)
			if (*s[k] >= 0 && i < c->out->n_maps)
				*s[k] += sb;
		if (i < c->out->n_maps && fr->tcur[i] >= 0) {
			fr->tcur[i] += vb;
			fr->next[i] += vb;
		}
	}
	for (int i = 0; i < c->n_probes; i++)
		for (int r = 0; r < c->probes[i].snip.n_regs; r++)
			fr->preg[i][r] += c->probes[i].snip.regs[r].vector ? vb : sb;
}

int amdgpu_frame_build(struct amdgpu_ictx *c)
{
	struct amdgpu_frame *fr = &c->fr;
	for (int i = 0; i < c->n_probes; i++) {
		fr->preg[i] = calloc((size_t)c->probes[i].snip.n_regs + 1, sizeof *fr->preg[i]);
		if (!fr->preg[i])
			return cause_set(c->cause, "out of memory placing probe registers");
	}
	int n_s, n_v;
	frame_layout(c, &n_s, &n_v);
	struct amdgpu_regs used;
	amdgpu_regs_scan(c->f, c->n, &used);
	/* the allocation sees the launch SGPRs and VGPRs the patched descriptor loads */
	struct amdgpu_co_kernel k = *c->k;
	k.kd = c->out->kd;
	/* two spare SGPRs: the scratch block must start 4-aligned */
	if (amdgpu_regs_alloc(c->co, &k, &used, n_s + 2, n_v, &c->out->alloc, c->cause) < 0)
		return -1;
	int sb = c->out->alloc.sgpr, shift = (sb + fr->scratch) % 4 ? 2 : 0;
	fr->n_sgpr = n_s + 2;
	fr->n_vgpr = n_v;
	frame_rebase(c, sb + shift, c->out->alloc.vgpr);
	return 0;
}
