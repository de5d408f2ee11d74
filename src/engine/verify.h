/* The probe verifier: a snippet may not (1) write a register it did not
 * declare itself, (2) branch or otherwise change control flow (bra, brx, call,
 * ret, exit, trap, barriers), (3) touch shared memory, (4) call functions,
 * (5) write memory other than through SAVE, (6) use warp collectives. Also checks helper use (SAVE sizes/alignment against the map, ADDR/BYTES only
 * on memory tracepoints). Errors read "FILE:LINE: rule: offending instruction".
 * Probes with isa = "gcn" are checked by amdgpu_verify.c under the same rules. */
#ifndef NTOP_VERIFY_H
#define NTOP_VERIFY_H
#include "engine/probe.h"

int verify_probe(const struct probe *p, char **cause);

#endif
