/* The instrumenter: rewrites one kernel of a parsed (and pruned) PTX module
 * so that it runs the given probes. Adds one `.param .u64 ntop_map<i>` per
 * probe map (probe order) after the kernel's own parameters, the probes'
 * snippets at their tracepoints with helpers expanded (SAVE stores at the
 * unit's record address; layout in engine.h),
 * and the count stores before every kernel exit. Probes must already have
 * passed verify_probe. Device functions (.func) the kernel calls are
 * instrumented too, sharing the kernel's map state through a context in
 * the thread's local memory (ptx_inject_func.c); those whose address is
 * taken are not (their sites are counted). */
#ifndef NTOP_PTX_INJECT_H
#define NTOP_PTX_INJECT_H
#include "engine/engine.h"
#include "engine/probe/probe.h"
#include "engine/ptx/ptx.h"

struct ptx_inject_result {
	int n_params_orig;              /* kernel parameters before ours */
	int n_maps;
	int map_probe[ENGINE_MAX_MAPS]; /* index in probes[] owning map i */
	int count_static[ENGINE_MAX_MAPS]; /* map i's counts are not stored: all are count_bytes[i] */
	uint32_t count_bytes[ENGINE_MAX_MAPS];
	int count_clear[ENGINE_MAX_MAPS];  /* map i's counts must be cleared before a launch */
	int sites;                      /* entry + exit + instruction sites probed */
	int sites_in_funcs;             /* matching sites in .func bodies left alone (why: funcs_why) */
	int funcs_probed;               /* .func bodies instrumented */
	const char *funcs_why;
	int sites_no_addr;              /* matching sites without an address for ADDR/BYTES (.param, bulk tensor copies), left alone */
};

/* flags: ENGINE_ADDR_AT_EXIT or 0 (engine.h). On failure the module is
 * left as it was. */
int ptx_inject(struct ptx_module *m, const char *kernel, struct probe *const *probes,
	       int n_probes, unsigned flags, struct ptx_inject_result *res, struct engine_sites *sites,
	       char **cause);

/* Bytes a memory instruction accesses, as BYTES expands: type size times
 * vector width, or cp.async's size operand (written to `text`). */
int ptx_inject_bytes(const struct ptx_insn *insn, char *text, size_t text_len, char **cause);

#endif
