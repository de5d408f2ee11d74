/* Shared by the AMDGPU injector's files (amdgpu_inject.c: sites and
 * orchestration; amdgpu_frame.c: the registers; amdgpu_emit.c: the
 * sequences; amdgpu_hazard.c: padding): not for use elsewhere. */
#ifndef NTOP_AMDGPU_INJECT_INT_H
#define NTOP_AMDGPU_INJECT_INT_H
#include "engine/amdgpu/amdgpu_code.h"
#include "engine/amdgpu/amdgpu_inject.h"
#include "engine/amdgpu/amdgpu_isa.h"
#include "engine/amdgpu/amdgpu_snippet.h"

#define FRAME_SCRATCH 10  /* SGPRs, 4-aligned: the hooks' temporaries */
#define FRAME_PROLOGUE 14 /* SGPRs from the same place: the prologue's (launch block, ids, temporaries) */

/* Every register the inserted code uses (-1: not needed). */
struct amdgpu_frame {
	/* SGPRs kept for the whole kernel */
	int exec0;                         /* lane mask: EXEC at launch */
	int wunit;                         /* the wave's unit index (wave maps) */
	int map[AMDGPU_MAX_MAPS];          /* pair: the map buffer */
	int rb[AMDGPU_MAX_MAPS];           /* pair: the record base (wave maps: this wave's records) */
	int cur[AMDGPU_MAX_MAPS];          /* wave maps: bytes the wave saved */
	int stride[AMDGPU_MAX_MAPS];       /* thread maps, cap > 1: units * rec_size */
	/* scratch SGPRs (FRAME_SCRATCH, 4-aligned) */
	int scratch;
	int esave, xsave, mask;            /* lane masks: SAVE's EXEC, the exit's EXEC, a compare */
	int scc, k, t0, t1;                /* SCC saved, a constant, temporaries */
	int launch, wg, pt;                /* prologue only: ntop_launch (8), workgroup ids (3), temps (3) */
	/* VGPRs */
	int tunit;                         /* the work-item's unit index (thread maps) */
	int tcur[AMDGPU_MAX_MAPS];         /* thread maps: bytes the work-item saved */
	int next[AMDGPU_MAX_MAPS];         /* thread maps: offset of its next record */
	int va, vd, vo;                    /* pairs va (ADDR), vd (data); vo an offset */
	/* probe registers, per probe and declared register: the first one */
	int *preg[AMDGPU_MAX_MAPS];
	int n_sgpr, n_vgpr;                /* what was asked of amdgpu_regs_alloc */
};

/* One probe as the injector sees it. */
struct amdgpu_iprobe {
	const struct probe *p;
	struct amdgpu_snip snip;
	int map;                           /* index in the result's maps, -1 without one */
};

/* The state of one instrumentation. */
struct amdgpu_ictx {
	const struct amdgpu_co *co;
	const struct amdgpu_co_kernel *k;
	const struct amdgpu_func *f;
	int n;
	struct amdgpu_isa isa;
	struct amdgpu_frame fr;
	struct amdgpu_iprobe *probes;
	int n_probes;
	struct amdgpu_inject *out;
	/* launch SGPRs after the descriptor is patched */
	int wg_sgpr[3];                    /* workgroup id SGPRs (-1 on gfx12: TTMPs) */
	int moves[5][3];                   /* system SGPRs put back: to, from, or the saved id (from -1) */
	int n_moves;
	unsigned tid_ids_orig;             /* the kernel's own vgpr_workitem_ids */
	int packed_tid;
	char proc[32];                     /* for the LLVM tools (amdgpu_co_proc) */
	unsigned char tried[AMDGPU_MAX_MAPS][64]; /* hooks whose code was assembled alone once */
	char **cause;
};

/* The site an instruction's text describes, for the helpers. */
struct amdgpu_site {
	const struct amdgpu_insn *in;      /* NULL at entry and exit */
	struct amdgpu_mem mem;             /* opcode sites on memory instructions */
	int is_mem, exit;
	int guard;                         /* a buffer access: the hook runs on lanes in range only */
};

/* amdgpu_frame.c */
int amdgpu_frame_build(struct amdgpu_ictx *c);
/* Register text: "s5", "s[4:5]", "v7", "v[6:7]". */
const char *amdgpu_frame_reg(char file, int first, int count, char buf[24]);

/* amdgpu_emit.c */
void amdgpu_emit_prologue(struct amdgpu_ictx *c, struct amdgpu_code *code);
/* One hook's snippet at a site (SCC-neutral, hazard-padded by the caller). */
int amdgpu_emit_hook(struct amdgpu_ictx *c, const struct amdgpu_iprobe *ip, int hook, const struct amdgpu_site *st,
		     struct amdgpu_code *code);
void amdgpu_emit_exit_head(struct amdgpu_ictx *c, struct amdgpu_code *code);
void amdgpu_emit_exit_tail(struct amdgpu_ictx *c, struct amdgpu_code *code);

/* amdgpu_hazard.c: wraps code in an SCC save/restore when it may write
 * SCC (unless at entry, where SCC holds nothing yet), and pads it for the
 * family's hazards (rules in amdgpu_hazard.c). reads_kernel_vgprs: the
 * code reads the kernel's VGPRs (ADDR). */
void amdgpu_hazard_fix(const struct amdgpu_ictx *c, const struct amdgpu_code *in, int reads_kernel_vgprs, int entry,
		       struct amdgpu_code *out);

#endif
