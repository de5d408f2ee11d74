/* Kernels' PTX saved into the trace when the control file asks
 * (hook_source.c). */
#ifndef NTOP_HOOK_SOURCE_H
#define NTOP_HOOK_SOURCE_H

/* For each name, every kernel of that name this process announced and has
 * not saved yet: kernels/<pid>-<kid>/source.ptx and a `source` line. */
void hook_source_requests(char *const *names, int n);

#endif
