/* Which ptxas to run. A GPU server may have no CUDA toolkit and still have
 * a ptxas: Triton ships one inside its Python package. */
#ifndef NTOP_PTXAS_LOCATE_H
#define NTOP_PTXAS_LOCATE_H

#define PTXAS_MAX_CANDIDATES 5

/* $NTOP_PTXAS as given (the only one); else each distinct executable of, in
 * order: the first ptxas on PATH, $TRITON_PTXAS_PATH, the ptxas beside a
 * Triton loaded in this process (triton/backends/nvidia/bin/ptxas),
 * $CUDA_HOME/bin/ptxas, /usr/local/cuda/bin/ptxas. A ptxas too old for a
 * PTX's .version or target fails where a later one may not (a server's old
 * toolkit and a newer Triton's PTX). Fills out[] (malloc'd), returns the
 * count. */
int ptxas_candidates(char **out, int max);
void ptxas_candidates_free(char **c, int n);
/* The first candidate, or NULL (malloc'd). */
char *ptxas_locate(void);

/* The places ptxas_locate looks, for messages. */
#define PTXAS_LOCATE_PLACES \
	"NTOP_PTXAS, PATH, TRITON_PTXAS_PATH, a loaded Triton's own, CUDA_HOME, /usr/local/cuda/bin"

#endif
