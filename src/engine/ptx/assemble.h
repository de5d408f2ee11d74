/* Offline assembly with ptxas (spawned with argv, no shell). The hook's
 * builder thread uses it where it is found (the driver's JIT would hold the
 * app's driver calls meanwhile) and lives without it. */
#ifndef NTOP_ASSEMBLE_H
#define NTOP_ASSEMBLE_H
#include <stddef.h>

struct assemble_info {
	int registers;    /* from ptxas -v, -1 when not reported */
	char *log;        /* ptxas output (malloc'd) */
	int want_cubin;   /* set by the caller: with no out_path, the cubin comes back here */
	char *cubin;      /* malloc'd, cubin_len bytes (and a NUL) */
	size_t cubin_len;
};

/* Picks the -arch for a PTX text: its .target when it is sm_XYa / sm_XYf,
 * otherwise `sm` if given (>0), otherwise the .target. "sm_90a" etc. */
int assemble_pick_arch(const char *ptx, int sm, char *arch, size_t arch_len);
/* Runs ptxas on the PTX; writes the cubin to out_path if non-NULL (relocatable,
 * with -c, when the PTX declares .extern functions), else, when
 * info->want_cubin, hands it back in info from its own 0700 folder.
 * ptxas is ptxas_locate's. */
int assemble_ptxas(const char *ptx, size_t len, const char *arch, const char *out_path,
		   struct assemble_info *info, char **cause);
/* The same with the given ptxas. */
int assemble_ptxas_with(const char *ptxas, const char *ptx, size_t len, const char *arch, const char *out_path,
			struct assemble_info *info, char **cause);
/* Frees what info holds (its want_cubin stays). */
void assemble_info_done(struct assemble_info *info);

#endif
