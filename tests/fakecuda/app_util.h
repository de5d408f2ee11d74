/* What the fake-driver test apps share: a checked driver call that counts
 * failures and says which call failed (with the pid: some apps fork), and
 * reading the kernels' PTX file. Header-only: each app is one file. */
#ifndef FAKECUDA_APP_UTIL_H
#define FAKECUDA_APP_UTIL_H
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <cuda.h>

static int failures;

#define CK(call) app_check((call), #call, __LINE__)

static void app_check(CUresult rc, const char *what, int line)
{
	if (rc != CUDA_SUCCESS) {
		printf("FAIL pid %d line %d: %s -> %d\n", (int)getpid(), line, what, (int)rc);
		failures++;
	}
}

/* The whole file, NUL-terminated; NULL when unreadable. */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
	if (s && fread(s, 1, (size_t)n, f) == (size_t)n)
		s[n] = 0;
	fclose(f);
	return s;
}

#endif
