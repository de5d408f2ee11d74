/* AMDGPU code object metadata (the msgpack map of the NT_AMDGPU_METADATA
 * note; keys as in LLVM AMDGPUUsage "Code Object V3+ Metadata"):
 * amdhsa.version, amdhsa.target, amdhsa.kernels[] with .name, .symbol,
 * .kernarg_segment_size/_align, .group/.private_segment_fixed_size,
 * .sgpr_count, .vgpr_count, .agpr_count, .wavefront_size, .args[] (.offset,
 * .size, .value_kind, .address_space, .name). Keeps the tree so a probed
 * copy can get extra arguments and be written back. */
#ifndef NTOP_AMDGPU_META_H
#define NTOP_AMDGPU_META_H
#include <stddef.h>
#include <stdint.h>

#include "engine/amdgpu/amdgpu_msgpack.h"

struct amdgpu_meta_arg {
	uint32_t offset, size;     /* bytes in the kernarg segment */
	char value_kind[40];       /* "global_buffer", "by_value", "hidden_block_count_x", ... */
	char address_space[16];    /* "global", "generic", ... or "" */
	char name[64];             /* source name when the compiler kept it, else "" */
};

struct amdgpu_meta_kernel {
	char *name, *symbol;       /* .name (source, mangled) and .symbol (NAME.kd) */
	uint32_t kernarg_size, kernarg_align;
	uint32_t group_segment, private_segment; /* bytes */
	uint32_t sgpr_count, vgpr_count, agpr_count;
	uint32_t sgpr_spill, vgpr_spill;
	uint32_t wavefront_size, max_flat_wg;
	int uses_dynamic_stack;
	struct amdgpu_meta_arg *args;
	int n_args, n_explicit;    /* explicit ones: value_kind not hidden_* */
};

struct amdgpu_meta {
	struct msgpack_node root;
	char target[96];           /* amdhsa.target */
	unsigned version[2];       /* amdhsa.version */
	struct amdgpu_meta_kernel *kernels;
	int n_kernels;
};

int amdgpu_meta_read(const uint8_t *p, size_t n, struct amdgpu_meta *m, char **cause);
void amdgpu_meta_done(struct amdgpu_meta *m);
/* By .name or by .symbol (with or without ".kd"). */
const struct amdgpu_meta_kernel *amdgpu_meta_kernel(const struct amdgpu_meta *m, const char *name);
/* Appends an explicit 8-byte global_buffer argument named `name` after the
 * kernel's whole segment (hidden arguments included), 8-aligned, and grows
 * .kernarg_segment_size; *offset gets its offset. Updates the tree and the
 * decoded view. */
int amdgpu_meta_append_buffer(struct amdgpu_meta *m, const char *kernel, const char *name, uint32_t *offset,
			      char **cause);
/* The same for a by_value argument of `size` bytes (8-aligned). */
int amdgpu_meta_append_value(struct amdgpu_meta *m, const char *kernel, const char *name, uint32_t size,
			     uint32_t *offset, char **cause);
/* Sets an unsigned key of the kernel's map (".sgpr_count", ".vgpr_count")
 * in the tree and the decoded view. */
int amdgpu_meta_set_count(struct amdgpu_meta *m, const char *kernel, const char *key, uint32_t value,
			  char **cause);
/* The tree as msgpack bytes (malloc'd). */
int amdgpu_meta_write(const struct amdgpu_meta *m, uint8_t **out, size_t *len, char **cause);

#endif
