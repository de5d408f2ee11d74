/* The CUDA driver error check of the bench's standalone GPU programs
 * (ptx_time.c, pinned_stall.c, stream_marks.c): 0 on success, else -1 and
 * a line on stderr naming the program (BENCH_NAME, defined before this
 * header is included), what failed and the driver's word for it. */
#ifndef NTOP_BENCH_CK_H
#define NTOP_BENCH_CK_H
#include <stdio.h>
#include <cuda.h>

static int ck(CUresult rc, const char *what)
{
	if (rc == CUDA_SUCCESS)
		return 0;
	const char *s = NULL;
	cuGetErrorString(rc, &s);
	fprintf(stderr, BENCH_NAME ": %s: %s\n", what, s ? s : "?");
	return -1;
}

#endif
