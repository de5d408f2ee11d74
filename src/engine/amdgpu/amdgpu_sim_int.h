/* Shared by amdgpu_sim.c (operands, memory, the run loop) and
 * amdgpu_sim_ops.c (what each instruction does). */
#ifndef NTOP_AMDGPU_SIM_INT_H
#define NTOP_AMDGPU_SIM_INT_H
#include "engine/amdgpu/amdgpu_sim.h"

#define SIM_OPS 8

enum sim_kind { SO_NONE, SO_SGPR, SO_TTMP, SO_EXEC, SO_VCC, SO_M0, SO_NULL, SO_VGPR, SO_IMM, SO_HWREG, SO_MSG,
		SO_OFF };

struct sim_op {
	enum sim_kind kind;
	int reg, count;        /* registers: first and how many (EXEC/VCC: the halves) */
	int64_t imm;           /* SO_IMM; SO_HWREG: id; SO_MSG: message name hash */
	int hw_off, hw_size;   /* SO_HWREG field */
	char name[40];         /* SO_HWREG / SO_MSG: the name as printed */
};

struct sim_insn {
	char mn[64];           /* mnemonic, _e32/_e64 stripped */
	struct sim_op op[SIM_OPS];
	int n;
	int32_t offset;        /* offset:N */
};

struct sim_ctx {
	struct amdgpu_wave *w;
	const char *text;
	char **cause;
};

int sim_fail(struct sim_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Scalar value of an operand (64-bit operands read two registers). */
int sim_sread(struct sim_ctx *c, const struct sim_op *o, uint64_t *v);
int sim_swrite(struct sim_ctx *c, const struct sim_op *o, uint64_t v);
/* Per-lane value of an operand (VGPRs per lane; scalars broadcast). */
int sim_vread(struct sim_ctx *c, const struct sim_op *o, int lane, uint64_t *v);
int sim_vwrite(struct sim_ctx *c, const struct sim_op *o, int lane, uint64_t v);
int sim_load(struct sim_ctx *c, uint64_t addr, void *out, size_t n);
int sim_store(struct sim_ctx *c, uint64_t addr, const void *in, size_t n);
/* Executes one decoded instruction (amdgpu_sim_ops.c). */
int sim_exec(struct sim_ctx *c, const struct sim_insn *in);

#endif
