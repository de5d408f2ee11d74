/* The HIP runtime names the stand-in exports (generated from
 * hip_exports.txt) and the dispatch array their trampolines jump through. */
#ifndef NTOP_HOOK_HIP_EXPORTS_H
#define NTOP_HOOK_HIP_EXPORTS_H

extern const int hip_export_count;
extern const char *const hip_export_names[];
/* Slot i: our handler, the real runtime's function, or a stub; filled once
 * at load (hook_dispatch.c) before any export is used. */
extern void *hip_dispatch[] __attribute__((visibility("hidden")));

#endif
