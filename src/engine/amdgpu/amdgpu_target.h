/* AMDGPU processors and target IDs: the e_flags machine numbers of code
 * objects (EF_AMDGPU_MACH_*, as in LLVM's BinaryFormat/ELF.h and the
 * AMDGPU usage document), the ISA family each belongs to (which decides
 * register granules, descriptor fields and the probe dialect), and the
 * target-ID strings of offload bundles and of the runtime
 * ("gfx90a:sramecc+:xnack-"), including which code object a device with a
 * given target ID may load. */
#ifndef NTOP_AMDGPU_TARGET_H
#define NTOP_AMDGPU_TARGET_H
#include <stdint.h>

enum amdgpu_family {
	AMDGPU_FAMILY_UNKNOWN,
	AMDGPU_FAMILY_GFX6,   /* gfx6, gfx7 */
	AMDGPU_FAMILY_GFX8,
	AMDGPU_FAMILY_GFX9,   /* gfx900..gfx909, gfx90c, gfx9-generic */
	AMDGPU_FAMILY_GFX90A, /* gfx90a: unified VGPR/AGPR file, accum_offset */
	AMDGPU_FAMILY_GFX94,  /* gfx940..gfx950: gfx90a's file plus architected flat scratch */
	AMDGPU_FAMILY_GFX10_1,
	AMDGPU_FAMILY_GFX10_3,
	AMDGPU_FAMILY_GFX11,
	AMDGPU_FAMILY_GFX12,
};

/* Feature setting in a target ID or code object: not named (any), on, off,
 * or not supported by the processor at all. */
enum amdgpu_feature { AMDGPU_FEAT_ANY, AMDGPU_FEAT_ON, AMDGPU_FEAT_OFF, AMDGPU_FEAT_UNSUPPORTED };

struct amdgpu_target {
	char proc[24];          /* "gfx90a" */
	enum amdgpu_feature xnack, sramecc;
};

/* Processor name of an EF_AMDGPU_MACH value, or NULL when unknown. */
const char *amdgpu_target_mach_name(uint32_t mach);
/* EF_AMDGPU_MACH value of a processor name, or 0. */
uint32_t amdgpu_target_mach(const char *proc);
enum amdgpu_family amdgpu_target_family(const char *proc);
/* "gfx9", "gfx90a", "gfx94", "gfx10.1", "gfx10.3", "gfx11", "gfx12". */
const char *amdgpu_family_name(enum amdgpu_family f);
/* Has the family AGPRs (the accumulation registers of MFMA)? */
int amdgpu_family_has_agprs(enum amdgpu_family f);

/* LLVM tool options for a processor name as the AMDGPU path passes it
 * around: "gfx1100", or "gfx1100+w64" for wave64 code on gfx10+ (where
 * wave32 is the default and the disassembly names masks differently):
 * mcpu gets "--mcpu=gfx1100", mattr "--mattr=+wavefrontsize64" or "". */
void amdgpu_target_tool_args(const char *proc, char mcpu[48], char mattr[48]);

/* Parses "gfx90a", "gfx90a:xnack-", "gfx942:sramecc+:xnack+", also with a
 * bundle prefix ("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-", "hip-amdgcn-
 * amd-amdhsa-gfx906"). 0, or -1 with a cause. */
int amdgpu_target_parse(const char *s, struct amdgpu_target *t, char **cause);
/* Writes "gfx90a:sramecc+:xnack-" (features in LLVM's order, omitted when
 * any or unsupported). */
void amdgpu_target_format(const struct amdgpu_target *t, char *buf, unsigned len);
/* Can a device of target `dev` run code built for `code`? Same processor,
 * and each feature the code names equal to the device's. Returns a score:
 * -1 no, else the number of features the code names (prefer the most
 * specific). */
int amdgpu_target_match(const struct amdgpu_target *dev, const struct amdgpu_target *code);

#endif
