/* Runs the code a probed kernel holds per simulated wave (amdgpu_sim.h)
 * over small launches and holds the map buffers to what the built-in AMD
 * probes mean (block_sched, dmat, gmem_bytes):
 *  - every wave of every workgroup: launch registers as the patched
 *    descriptor asks (kernarg pointer, workgroup ids in SGPRs or gfx12's
 *    TTMPs, work-item ids packed or not, EXEC of the lanes present: partial
 *    waves included), every other kernel register random;
 *  - the prologue, then each site in program order with an EXEC the run
 *    picks (all lanes, every other lane, half, none) and known addresses
 *    in the traced instruction's address registers, then the exits with an
 *    arbitrary EXEC; after each site the kernel's registers, EXEC and SCC
 *    must be what they were;
 *  - then every unit's count and records: the unit index from workgroup
 *    and wave / work-item ids, the records each lane meant to save (the
 *    first `cap`), addresses, sizes and kinds, the clock and timer values
 *    the wave read, the packed CU id.
 * Prints one "FAIL ..." line per difference (the first 3 of a kernel). */
#ifndef NTOP_TEST_AMDGPU_SIMRUN_H
#define NTOP_TEST_AMDGPU_SIMRUN_H

#include "engine/amdgpu/amdgpu_instrument.h"

struct simrun_tally {
	long waves, sites, units, records, failed;
	long mfma, wmma; /* matrix instructions in tensorop_count's records checked */
};

/* r: a kernel amdgpu_instrument probed; its maps name their probes. */
int simrun_kernel(const struct amdgpu_instrumented *r, struct simrun_tally *t);

#endif
