/* The CUDA stand-in's dispatch (hook_cuda_dispatch.c) and the process-
 * lifetime hooks every stand-in shares (hook_dispatch.c). */
#ifndef NTOP_HOOK_DISPATCH_H
#define NTOP_HOOK_DISPATCH_H

/* Fills hook.real[] and ntop_dispatch[] from hook.real. */
void hook_dispatch_fill(void);
/* What a missing function is replaced with (CUDA_ERROR_NOT_FOUND, or
 * CUDA_ERROR_NOT_INITIALIZED when there is no driver at all). */
void *hook_dispatch_stub(void);
/* Registers the exit flush (once). */
void hook_dispatch_register_exit(void);

#endif
