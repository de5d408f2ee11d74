/* The probe verifier: a snippet may not (1) write a register it did not
 * declare itself (or the carry flag), (2) branch or otherwise change control
 * flow (bra, brx, ret, exit, trap, barriers), (3) touch shared memory, (4)
 * call functions, (5) write memory other than through SAVE, (6) use warp
 * collectives, (7) use any instruction or operand form not on its allow-list.
 * It reads the snippet as ptxas does (snippet.h). Also checks helper use
 * (SAVE sizes/alignment against the map, ADDR/BYTES only on memory
 * tracepoints). Errors read "FILE:LINE:COL: rule: what: instruction;".
 * This file is the PTX verifier; verify_probe() picks the one for a probe's
 * isa (verify_isa.c: PTX here, GCN in amdgpu_verify.c, the same rules). */
#ifndef NTOP_VERIFY_H
#define NTOP_VERIFY_H
#include "engine/probe/probe.h"

/* Verifies p with the verifier of its isa. */
int verify_probe(const struct probe *p, char **cause);
/* The PTX verifier (isa = "ptx"). */
int verify_probe_ptx(const struct probe *p, char **cause);

/* The registers p's snippets write without any .reg declaring them, as
 * ".reg .b64 %x;\n" lines typed after the instruction that writes each
 * (*decls NULL when there are none). For NEUTRINO's files, whose engine left
 * such registers to ptxas. Other mistakes are left to verify_probe. */
int verify_undeclared_writes(const struct probe *p, char **decls, char **cause);

#endif
