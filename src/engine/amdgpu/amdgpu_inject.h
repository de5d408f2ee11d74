/* The AMDGPU probe injector: GCN probes (isa = "gcn") into one kernel of a
 * code object, producing the inserted code, the patched descriptor and the
 * new metadata that amdgpu_write.c turns into a probed object.
 *
 * The kernel gets, after its whole kernarg segment, a 32-byte by_value
 * argument "ntop_launch" and one global_buffer argument per map
 * ("ntop_map_NAME"). ntop_launch holds eight u32: grid x, grid y (in
 * workgroups), workgroup size x, x*y, work-items per workgroup, waves per
 * workgroup, thread-map units and wave-map units of the launch. A map
 * buffer is laid out as PTX maps are (engine.h): u32 counts per unit, the
 * record area 16-aligned after them, a unit being a work-item (thread
 * maps; record slot k of unit u at (k * units + u) * rec_size when cap > 1)
 * or a wave (wave maps: the "warp" level; wave-size lanes, 32 or 64;
 * records at (u * cap + k) * rec_size). Unit index: block_linear *
 * per_block + work-item linear index (thread maps), or + the wave's index
 * in its workgroup (wave maps); block_linear = x + gx * (y + gy * z).
 *
 * The prologue (ahead of the kernel's first instruction) loads the
 * arguments, computes the unit indices and record bases, saves the launch
 * EXEC, then runs the entry hooks. Workgroup ids and work-item ids the
 * descriptor did not enable are enabled; the system SGPRs after them are
 * moved back to where the kernel expects them, and on packed-id targets
 * (gfx90a, gfx94, gfx11, gfx12) v0 is masked back to the ids the kernel
 * asked for. gfx12 reads the workgroup ids from TTMP7/TTMP9.
 * Opcode hooks run before the instruction, under the kernel's EXEC (inactive
 * lanes do nothing); exit hooks run before every s_endpgm (ahead of gfx11+'s
 * "s_nop 0; s_sendmsg MSG_DEALLOC_VGPRS"), with EXEC set to the lanes that
 * started, then every unit's count is stored. A wave map's SAVE writes from
 * lane 0 only (EXEC = 1), whatever the kernel's EXEC is then. */
#ifndef NTOP_AMDGPU_INJECT_H
#define NTOP_AMDGPU_INJECT_H
#include <stddef.h>
#include <stdint.h>

#include "engine/amdgpu/amdgpu_asm.h"
#include "engine/amdgpu/amdgpu_co.h"
#include "engine/amdgpu/amdgpu_regs.h"
#include "engine/probe/probe.h"

#define AMDGPU_MAX_MAPS 8
#define AMDGPU_LAUNCH_BYTES 32

struct amdgpu_map {
	struct probe_map map;
	char probe[PROBE_NAME_MAX];
	uint32_t arg_offset;     /* its pointer in the kernarg segment */
};

struct amdgpu_inject_stats {
	int sites;               /* opcode sites instrumented */
	int sites_no_addr;       /* matching sites without a plain address for ADDR/BYTES */
	const char *no_addr_why; /* why, for the first of them */
	int exits;               /* program ends instrumented */
	int clauses_dropped;     /* s_clause hints replaced by s_nop 0 (code inserted inside them) */
};

struct amdgpu_inject {
	struct amdgpu_asm_ins ins;       /* points into prologue / before / replace */
	char *prologue;
	char **before;                   /* n entries */
	char **replace;                  /* n entries */
	int n;
	struct amdgpu_alloc alloc;
	struct amdgpu_kd kd;             /* the descriptor to write (everything but the code entry) */
	uint8_t *meta;                   /* the new metadata note (msgpack) */
	size_t meta_len;
	uint32_t launch_offset;          /* the ntop_launch argument */
	uint32_t kernarg_size;
	int wave;                        /* 32 or 64 */
	int n_maps;
	struct amdgpu_map maps[AMDGPU_MAX_MAPS];
	struct amdgpu_inject_stats stats;
};

/* Instruments kernel k (f: its disassembly, n instructions) with the
 * probes. Fails with a cause naming the probe and line for snippet errors
 * and naming the refusal otherwise (no free registers, a family or
 * construct the engine does not handle). */
int amdgpu_inject_kernel(const struct amdgpu_co *co, const struct amdgpu_co_kernel *k, const struct amdgpu_func *f,
			 int n, struct probe *const *probes, int n_probes, struct amdgpu_inject *out, char **cause);
void amdgpu_inject_done(struct amdgpu_inject *out);

#endif
