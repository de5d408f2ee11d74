/* Which ptxas to run. A GPU server may have no CUDA toolkit and still have
 * a ptxas: Triton ships one inside its Python package. */
#ifndef NTOP_PTXAS_LOCATE_H
#define NTOP_PTXAS_LOCATE_H

/* $NTOP_PTXAS as given; else the first executable of: ptxas on PATH,
 * $TRITON_PTXAS_PATH, the ptxas beside a Triton loaded in this process
 * (triton/backends/nvidia/bin/ptxas), $CUDA_HOME/bin/ptxas,
 * /usr/local/cuda/bin/ptxas. NULL when there is none (malloc'd). */
char *ptxas_locate(void);

/* The places ptxas_locate looks, for messages. */
#define PTXAS_LOCATE_PLACES \
	"NTOP_PTXAS, PATH, TRITON_PTXAS_PATH, a loaded Triton's own, CUDA_HOME, /usr/local/cuda/bin"

#endif
