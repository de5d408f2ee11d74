/* A code object opened whole and its consistency checks (amdgpu_co.h). */
#include "engine/amdgpu/amdgpu_co.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"

static int co_pair(struct amdgpu_co *co, char **cause)
{
	co->k = calloc((size_t)(co->meta.n_kernels ? co->meta.n_kernels : 1), sizeof *co->k);
	if (!co->k)
		return cause_set(cause, "out of memory opening a code object");
	for (int i = 0; i < co->meta.n_kernels; i++) {
		const struct amdgpu_meta_kernel *mk = &co->meta.kernels[i];
		const struct amdgpu_elf_kernel *ek = amdgpu_elf_kernel(&co->elf, mk->symbol);
		if (!ek)
			return cause_set(cause, "kernel %s: no descriptor symbol %s", mk->name, mk->symbol);
		struct amdgpu_co_kernel *k = &co->k[co->n++];
		k->sym = ek;
		k->meta = mk;
		amdgpu_kd_decode(co->elf.p + ek->kd_off, co->elf.family, &k->kd);
	}
	if (co->elf.n_kernels != co->meta.n_kernels)
		return cause_set(cause, "%d kernel descriptors but %d kernels in the metadata", co->elf.n_kernels,
				 co->meta.n_kernels);
	return 0;
}

int amdgpu_co_open(const uint8_t *p, size_t size, struct amdgpu_co *co, char **cause)
{
	memset(co, 0, sizeof *co);
	if (amdgpu_elf_open(p, size, &co->elf, cause) < 0)
		return -1;
	if (amdgpu_meta_read(co->elf.meta, co->elf.meta_len, &co->meta, cause) < 0 || co_pair(co, cause) < 0) {
		amdgpu_co_done(co);
		return -1;
	}
	return 0;
}

void amdgpu_co_done(struct amdgpu_co *co)
{
	free(co->k);
	amdgpu_meta_done(&co->meta);
	amdgpu_elf_done(&co->elf);
	memset(co, 0, sizeof *co);
}

const struct amdgpu_co_kernel *amdgpu_co_kernel(const struct amdgpu_co *co, const char *name)
{
	const struct amdgpu_meta_kernel *mk = amdgpu_meta_kernel(&co->meta, name);
	for (int i = 0; mk && i < co->n; i++)
		if (co->k[i].meta == mk)
			return &co->k[i];
	return NULL;
}

void amdgpu_co_proc(const struct amdgpu_co *co, char buf[32])
{
	int w64 = 0;
	for (int i = 0; i < co->n && co->elf.family >= AMDGPU_FAMILY_GFX10_1; i++)
		w64 |= !co->k[i].kd.wave32;
	snprintf(buf, 32, "%s%s", co->elf.target.proc, w64 ? "+w64" : "");
}

/* VGPRs a lane needs as the descriptor counts them: on gfx90a/gfx94 the
 * AGPRs follow the VGPRs from accum_offset on, in one file. */
static unsigned co_vgprs_needed(const struct amdgpu_co *co, const struct amdgpu_co_kernel *k)
{
	const struct amdgpu_meta_kernel *m = k->meta;
	if (!amdgpu_family_has_agprs(co->elf.family) || m->agpr_count == 0)
		return m->vgpr_count;
	return k->kd.accum_offset + m->agpr_count;
}

static int co_check_regs(const struct amdgpu_co *co, const struct amdgpu_co_kernel *k, char **cause)
{
	const struct amdgpu_meta_kernel *m = k->meta;
	enum amdgpu_family f = co->elf.family;
	unsigned vneed = co_vgprs_needed(co, k);
	unsigned vg = amdgpu_kd_vgpr_granules(vneed, f, k->kd.wave32);
	if (vg != k->kd.vgpr_granules)
		return cause_set(cause, "kernel %s: %u VGPRs need %u granules, the descriptor has %u", m->name,
				 vneed, vg, k->kd.vgpr_granules);
	/* with AGPRs, gfx90a's .vgpr_count is the whole file: VGPRs up to
	 * accum_offset, then the AGPRs */
	if (amdgpu_family_has_agprs(f) && m->agpr_count && m->vgpr_count != k->kd.accum_offset + m->agpr_count)
		return cause_set(cause, "kernel %s: %u VGPRs in the metadata, accum_offset %u + %u AGPRs in the "
				 "descriptor", m->name, m->vgpr_count, k->kd.accum_offset, m->agpr_count);
	unsigned sg = amdgpu_kd_sgpr_granules(m->sgpr_count, f);
	if (f <= AMDGPU_FAMILY_GFX94 && sg != k->kd.sgpr_granules)
		return cause_set(cause, "kernel %s: %u SGPRs need %u granules, the descriptor has %u", m->name,
				 m->sgpr_count, sg, k->kd.sgpr_granules);
	return 0;
}

int amdgpu_co_check_kernel(const struct amdgpu_co *co, const struct amdgpu_co_kernel *k, char **cause)
{
	const struct amdgpu_meta_kernel *m = k->meta;
	const struct amdgpu_kd *kd = &k->kd;
	if (kd->kernarg_size != m->kernarg_size)
		return cause_set(cause, "kernel %s: kernarg size %u in the descriptor, %u in the metadata", m->name,
				 kd->kernarg_size, m->kernarg_size);
	if (kd->group_segment_fixed_size != m->group_segment || kd->private_segment_fixed_size != m->private_segment)
		return cause_set(cause, "kernel %s: LDS/scratch %u/%u in the descriptor, %u/%u in the metadata",
				 m->name, kd->group_segment_fixed_size, kd->private_segment_fixed_size,
				 m->group_segment, m->private_segment);
	if (m->wavefront_size && (m->wavefront_size == 32) != kd->wave32)
		return cause_set(cause, "kernel %s: wave%u in the metadata, wave%d in the descriptor", m->name,
				 m->wavefront_size, kd->wave32 ? 32 : 64);
	if (k->sym->code_addr && (uint64_t)((int64_t)k->sym->kd_addr + kd->entry_offset) != k->sym->code_addr)
		return cause_set(cause, "kernel %s: descriptor entry 0x%llx, code symbol at 0x%llx", m->name,
				 (unsigned long long)((int64_t)k->sym->kd_addr + kd->entry_offset),
				 (unsigned long long)k->sym->code_addr);
	return co_check_regs(co, k, cause);
}
