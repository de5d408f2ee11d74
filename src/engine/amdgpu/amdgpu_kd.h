/* The 64-byte AMDGPU kernel descriptor (LLVM AMDGPUUsage, "Kernel
 * Descriptor"), decoded into fields and encoded back. Bytes:
 *   0 u32 group_segment_fixed_size   4 u32 private_segment_fixed_size
 *   8 u32 kernarg_size              12 reserved (4)
 *  16 i64 kernel_code_entry_byte_offset (from the descriptor's address)
 *  24 reserved (20)                 44 u32 compute_pgm_rsrc3
 *  48 u32 compute_pgm_rsrc1         52 u32 compute_pgm_rsrc2
 *  56 u16 kernel_code_properties    58 u16 kernarg_preload
 *  60 reserved (4)
 * Encoding keeps the raw registers and rewrites only the fields named
 * here, so bits this decoder does not know survive a patch unchanged. */
#ifndef NTOP_AMDGPU_KD_H
#define NTOP_AMDGPU_KD_H
#include <stdint.h>

#include "engine/amdgpu/amdgpu_target.h"

#define AMDGPU_KD_SIZE 64

/* kernel_code_properties bits */
#define AMDGPU_KD_PRIVATE_SEGMENT_BUFFER 0x001
#define AMDGPU_KD_DISPATCH_PTR 0x002
#define AMDGPU_KD_QUEUE_PTR 0x004
#define AMDGPU_KD_KERNARG_SEGMENT_PTR 0x008
#define AMDGPU_KD_DISPATCH_ID 0x010
#define AMDGPU_KD_FLAT_SCRATCH_INIT 0x020
#define AMDGPU_KD_PRIVATE_SEGMENT_SIZE 0x040
#define AMDGPU_KD_WAVEFRONT_SIZE32 0x400
#define AMDGPU_KD_USES_DYNAMIC_STACK 0x800

struct amdgpu_kd {
	uint32_t group_segment_fixed_size;   /* bytes of LDS */
	uint32_t private_segment_fixed_size; /* bytes of scratch per work-item */
	uint32_t kernarg_size;               /* bytes */
	int64_t entry_offset;                /* code entry relative to the descriptor */
	uint32_t rsrc1, rsrc2, rsrc3;        /* raw COMPUTE_PGM_RSRC1..3 */
	uint16_t properties, kernarg_preload;
	/* decoded from the registers (read-only views; patch through the setters) */
	unsigned vgpr_granules;     /* rsrc1 bits 0-5: granulated VGPR count */
	unsigned sgpr_granules;     /* rsrc1 bits 6-9 (gfx6-gfx9 only) */
	unsigned user_sgprs;        /* rsrc2 bits 1-5 */
	int wg_id[3];               /* rsrc2 bits 7-9: workgroup id x/y/z in system SGPRs */
	int wg_info;                /* rsrc2 bit 10 */
	int private_segment;        /* rsrc2 bit 0: scratch wave offset SGPR */
	unsigned vgpr_workitem_ids; /* rsrc2 bits 11-12: 0 x, 1 x y, 2 x y z */
	unsigned accum_offset;      /* gfx90a/gfx94: first AGPR's VGPR index (rsrc3 bits 0-5 +1, x4) */
	int wave32;                 /* properties bit 10 */
	uint8_t raw[AMDGPU_KD_SIZE];
};

void amdgpu_kd_decode(const uint8_t raw[AMDGPU_KD_SIZE], enum amdgpu_family f, struct amdgpu_kd *kd);
/* Writes kd back: its raw copy with the plain fields and registers
 * replaced (bytes not modelled stay as read). */
void amdgpu_kd_encode(const struct amdgpu_kd *kd, uint8_t raw[AMDGPU_KD_SIZE]);

/* Register counts a descriptor allows (the granules decoded back):
 * VGPRs per lane (gfx90a/gfx94: VGPRs and AGPRs together) and SGPRs
 * (gfx6-gfx9; gfx10+ always allocate the maximum: returns 106 there). */
unsigned amdgpu_kd_vgprs(const struct amdgpu_kd *kd, enum amdgpu_family f);
unsigned amdgpu_kd_sgprs(const struct amdgpu_kd *kd, enum amdgpu_family f);
/* Granules for a count, as the assembler computes them; the setters patch
 * rsrc1. VGPR granule: 8 on gfx90a/gfx94 and on gfx10+ wave32, else 4;
 * SGPR granule: 8 (encoded) on gfx8/gfx9, 0 on gfx10+ (ignored). */
unsigned amdgpu_kd_vgpr_granules(unsigned vgprs, enum amdgpu_family f, int wave32);
unsigned amdgpu_kd_sgpr_granules(unsigned sgprs, enum amdgpu_family f);
void amdgpu_kd_set_vgprs(struct amdgpu_kd *kd, unsigned vgprs, enum amdgpu_family f);
void amdgpu_kd_set_sgprs(struct amdgpu_kd *kd, unsigned sgprs, enum amdgpu_family f);
/* First user SGPR holding the kernarg segment pointer (a pair), or -1 when
 * the kernel does not ask for it; the workgroup id SGPRs follow the user
 * SGPRs: amdgpu_kd_wg_id_sgpr gives the one of dimension dim, or -1. */
int amdgpu_kd_kernarg_sgpr(const struct amdgpu_kd *kd);
int amdgpu_kd_wg_id_sgpr(const struct amdgpu_kd *kd, int dim);

#endif
