/* The probe verifier for GCN snippets (isa = "gcn"), reached through
 * verify_probe() (verify_isa.c). The same six rules as for PTX, by allow-list: a snippet
 * may use only the scalar and vector ALU instructions listed in
 * amdgpu_verify.c (moves, integer arithmetic, shifts, logic, compares into
 * SCC, bit fields, s_getreg_b32, v_readfirstlane_b32, lane counts), each
 * writing a register the probe declared, plus the helpers. Anything else is
 * refused with the rule it breaks: (1) writing a kernel register (EXEC,
 * VCC, M0 included; SCC is saved and restored around every snippet by the
 * engine), (2) branches, program ends, barriers, sleeps, messages, labels,
 * (3) LDS (ds_*), (4) calls, (5) any memory access (memory is written only
 * through SAVE; CLOCK and GTIMER read the counters), (6) cross-lane and
 * resource instructions (DPP, SDWA, readlane/writelane, permlane, MFMA,
 * WMMA, s_setreg, s_setprio, indexed moves). Helper checks: SAVE sizes
 * and layout against the map, wave maps save scalar values only, ADDR in
 * SAVE.u64 on global/flat hooks, BYTES on memory hooks. Errors read
 * "FILE:LINE: rule N (what): detail: statement". */
#ifndef NTOP_AMDGPU_VERIFY_H
#define NTOP_AMDGPU_VERIFY_H
#include "engine/probe/probe.h"

int amdgpu_verify_probe(const struct probe *p, char **cause);

#endif
