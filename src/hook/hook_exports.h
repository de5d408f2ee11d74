/* The driver names the hook exports (generated from cuda_exports.txt) and the
 * dispatch array their assembly trampolines jump through. */
#ifndef NTOP_HOOK_EXPORTS_H
#define NTOP_HOOK_EXPORTS_H

extern const int hook_export_count;
extern const char *const hook_export_names[];
/* Slot i holds where export i goes: our handler, the real driver's function,
 * or a stub. Filled once by hook_dispatch_init() before any export is used. */
extern void *ntop_dispatch[] __attribute__((visibility("hidden")));

#endif
