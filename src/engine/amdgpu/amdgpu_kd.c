/* Kernel descriptor decode, encode and register-count patching (layout in
 * amdgpu_kd.h). Granule rules follow LLVM 19's AMDGPUBaseInfo
 * (getVGPREncodingGranule, getNumSGPRBlocks); the corpus test checks them
 * against the compiler's metadata for every kernel it holds. */
#include "engine/amdgpu/amdgpu_kd.h"

#include <string.h>

#include "engine/image/image_bytes.h"

#define RSRC1_VGPRS_MASK 0x3fu
#define RSRC1_SGPRS_SHIFT 6
#define RSRC1_SGPRS_MASK (0xfu << RSRC1_SGPRS_SHIFT)
#define RSRC3_ACCUM_MASK 0x3fu

static void kd_put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static int kd_sgpr_field(enum amdgpu_family f)
{
	return f <= AMDGPU_FAMILY_GFX94 && f != AMDGPU_FAMILY_UNKNOWN;
}

/* Re-derives the decoded views from the raw registers. */
static void kd_views(struct amdgpu_kd *kd, enum amdgpu_family f)
{
	kd->vgpr_granules = kd->rsrc1 & RSRC1_VGPRS_MASK;
	kd->sgpr_granules = kd_sgpr_field(f) ? (kd->rsrc1 & RSRC1_SGPRS_MASK) >> RSRC1_SGPRS_SHIFT : 0;
	kd->private_segment = kd->rsrc2 & 1;
	kd->user_sgprs = (kd->rsrc2 >> 1) & 0x1f;
	for (int d = 0; d < 3; d++)
		kd->wg_id[d] = (kd->rsrc2 >> (7 + d)) & 1;
	kd->wg_info = (kd->rsrc2 >> 10) & 1;
	kd->vgpr_workitem_ids = (kd->rsrc2 >> 11) & 3;
	kd->accum_offset = amdgpu_family_has_agprs(f) ? ((kd->rsrc3 & RSRC3_ACCUM_MASK) + 1) * 4 : 0;
	kd->wave32 = !!(kd->properties & AMDGPU_KD_WAVEFRONT_SIZE32);
}

void amdgpu_kd_decode(const uint8_t raw[AMDGPU_KD_SIZE], enum amdgpu_family f, struct amdgpu_kd *kd)
{
	memset(kd, 0, sizeof *kd);
	memcpy(kd->raw, raw, AMDGPU_KD_SIZE);
	kd->group_segment_fixed_size = image_bytes_le32(raw + 0);
	kd->private_segment_fixed_size = image_bytes_le32(raw + 4);
	kd->kernarg_size = image_bytes_le32(raw + 8);
	kd->entry_offset = (int64_t)image_bytes_le64(raw + 16);
	kd->rsrc3 = image_bytes_le32(raw + 44);
	kd->rsrc1 = image_bytes_le32(raw + 48);
	kd->rsrc2 = image_bytes_le32(raw + 52);
	kd->properties = image_bytes_le16(raw + 56);
	kd->kernarg_preload = image_bytes_le16(raw + 58);
	kd_views(kd, f);
}

void amdgpu_kd_encode(const struct amdgpu_kd *kd, uint8_t raw[AMDGPU_KD_SIZE])
{
	memcpy(raw, kd->raw, AMDGPU_KD_SIZE);
	kd_put32(raw + 0, kd->group_segment_fixed_size);
	kd_put32(raw + 4, kd->private_segment_fixed_size);
	kd_put32(raw + 8, kd->kernarg_size);
	kd_put32(raw + 16, (uint32_t)(uint64_t)kd->entry_offset);
	kd_put32(raw + 20, (uint32_t)((uint64_t)kd->entry_offset >> 32));
	kd_put32(raw + 44, kd->rsrc3);
	kd_put32(raw + 48, kd->rsrc1);
	kd_put32(raw + 52, kd->rsrc2);
	raw[56] = (uint8_t)kd->properties;
	raw[57] = (uint8_t)(kd->properties >> 8);
	raw[58] = (uint8_t)kd->kernarg_preload;
	raw[59] = (uint8_t)(kd->kernarg_preload >> 8);
}

static unsigned kd_vgpr_granule(enum amdgpu_family f, int wave32)
{
	if (amdgpu_family_has_agprs(f))
		return 8;
	return f >= AMDGPU_FAMILY_GFX10_1 && wave32 ? 8 : 4;
}

unsigned amdgpu_kd_vgpr_granules(unsigned vgprs, enum amdgpu_family f, int wave32)
{
	unsigned g = kd_vgpr_granule(f, wave32);
	return (vgprs ? vgprs + g - 1 : g) / g - 1;
}

unsigned amdgpu_kd_sgpr_granules(unsigned sgprs, enum amdgpu_family f)
{
	if (!kd_sgpr_field(f))
		return 0;
	return (sgprs ? sgprs + 7 : 8) / 8 - 1;
}

unsigned amdgpu_kd_vgprs(const struct amdgpu_kd *kd, enum amdgpu_family f)
{
	return (kd->vgpr_granules + 1) * kd_vgpr_granule(f, kd->wave32);
}

unsigned amdgpu_kd_sgprs(const struct amdgpu_kd *kd, enum amdgpu_family f)
{
	return kd_sgpr_field(f) ? (kd->sgpr_granules + 1) * 8 : 106;
}

void amdgpu_kd_set_vgprs(struct amdgpu_kd *kd, unsigned vgprs, enum amdgpu_family f)
{
	kd->rsrc1 = (kd->rsrc1 & ~RSRC1_VGPRS_MASK) | amdgpu_kd_vgpr_granules(vgprs, f, kd->wave32);
	kd_views(kd, f);
}

void amdgpu_kd_set_sgprs(struct amdgpu_kd *kd, unsigned sgprs, enum amdgpu_family f)
{
	if (!kd_sgpr_field(f))
		return;
	kd->rsrc1 = (kd->rsrc1 & ~RSRC1_SGPRS_MASK) | amdgpu_kd_sgpr_granules(sgprs, f) << RSRC1_SGPRS_SHIFT;
	kd_views(kd, f);
}

/* User SGPRs in the order the hardware loads them (AMDGPUUsage, "Initial
 * Kernel Execution State"): private segment buffer (4), dispatch ptr (2),
 * queue ptr (2), kernarg segment ptr (2), ... */
int amdgpu_kd_kernarg_sgpr(const struct amdgpu_kd *kd)
{
	if (!(kd->properties & AMDGPU_KD_KERNARG_SEGMENT_PTR))
		return -1;
	int s = 0;
	if (kd->properties & AMDGPU_KD_PRIVATE_SEGMENT_BUFFER)
		s += 4;
	if (kd->properties & AMDGPU_KD_DISPATCH_PTR)
		s += 2;
	if (kd->properties & AMDGPU_KD_QUEUE_PTR)
		s += 2;
	return s;
}

int amdgpu_kd_wg_id_sgpr(const struct amdgpu_kd *kd, int dim)
{
	if (dim < 0 || dim > 2 || !kd->wg_id[dim])
		return -1;
	int s = (int)kd->user_sgprs;
	for (int d = 0; d < dim; d++)
		s += kd->wg_id[d];
	return s;
}
