/* A model of one wave running the code ntop inserts into AMDGPU kernels:
 * the instructions of the probed object as llvm-objdump prints them,
 * executed on simulated registers (SGPRs, VGPRs per lane, EXEC, SCC, VCC,
 * TTMPs) and memory (the kernarg segment, map buffers). It knows the
 * instructions the injector emits and the allow-listed snippet
 * instructions the built-in probes use; anything else is an error, so a new
 * instruction in inserted code cannot go unmodelled. Used by the tests to
 * run inserted code per simulated wave (record indices, EXEC masking,
 * wave32 and wave64) and compare the records with what the probe meant;
 * the kernel's own instructions are not run (the test plays their effect:
 * which sites run, with which EXEC and addresses).
 *
 * Hardware counters: CLOCK reads return `clock`, GTIMER reads `realtime`;
 * both advance by 1 every instruction the wave executes (gfx11's
 * SHADER_CYCLES keeps 20 bits). Every read is logged. HW_ID, HW_ID1 and
 * XCC_ID are what the test sets. */
#ifndef NTOP_AMDGPU_SIM_H
#define NTOP_AMDGPU_SIM_H
#include <stddef.h>
#include <stdint.h>

#include "engine/amdgpu/amdgpu_disasm.h"
#include "engine/amdgpu/amdgpu_target.h"

#define AMDGPU_SIM_SGPRS 128
#define AMDGPU_SIM_VGPRS 512
#define AMDGPU_SIM_MEMS 16
#define AMDGPU_SIM_READS 256

struct amdgpu_sim_mem {
	uint64_t addr;                 /* where the wave sees it */
	uint8_t *p;
	size_t len;
};

struct amdgpu_wave {
	enum amdgpu_family family;
	int lanes;                     /* 32 or 64 */
	uint32_t s[AMDGPU_SIM_SGPRS];
	uint32_t ttmp[16];
	uint32_t v[AMDGPU_SIM_VGPRS][64];
	uint64_t exec, vcc;
	int scc;
	uint32_t m0;
	uint64_t clock, realtime;      /* counters (advance per instruction) */
	uint32_t hw_id, hw_id1, xcc_id;
	struct amdgpu_sim_mem mem[AMDGPU_SIM_MEMS];
	int n_mem;
	uint64_t clock_reads[AMDGPU_SIM_READS], realtime_reads[AMDGPU_SIM_READS];
	int n_clock_reads, n_realtime_reads;
	long executed;                 /* instructions run */
	void (*trace)(const struct amdgpu_wave *w, const char *text); /* called after each instruction, or NULL */
};

/* A wave of `lanes` lanes (32 or 64) of family f, all registers 0. */
void amdgpu_sim_init(struct amdgpu_wave *w, enum amdgpu_family f, int lanes);
/* Adds a memory range the wave may read and write (p must outlive w). */
int amdgpu_sim_map(struct amdgpu_wave *w, uint64_t addr, uint8_t *p, size_t len);
/* Runs instructions [from, to) of g in order (inserted code has no
 * branches): 0, or -1 with a cause naming the instruction. */
int amdgpu_sim_run(struct amdgpu_wave *w, const struct amdgpu_func *g, int from, int to, char **cause);
/* One instruction (exposed for the tests of the model itself). */
int amdgpu_sim_step(struct amdgpu_wave *w, const char *text, char **cause);

#endif
