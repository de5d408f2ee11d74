/* The SAVE layout rules both verifiers apply (verify.c for PTX snippets,
 * amdgpu_verify.c for GCN ones): u64 values 8-byte aligned, each value on
 * a field of its type when the map names fields, whole records per
 * snippet, no more than cap records. Messages are sentences without a
 * location; the callers add file:line. */
#ifndef NTOP_VERIFY_SAVE_H
#define NTOP_VERIFY_SAVE_H
#include <stddef.h>
#include <stdint.h>

#include "engine/probe/probe.h"

/* n values of type t saved from byte `saved` of what the snippet saves:
 * 0, or -1 with msg set. */
int verify_save_values(const struct probe_map *m, uint32_t saved, enum probe_type t, int n, char *msg, size_t len);
/* A snippet that saves `saved` bytes in all: 0, or -1 with msg set. */
int verify_save_total(const struct probe_map *m, uint32_t saved, char *msg, size_t len);

#endif
