/* ptxas's test double for the hook's builder thread: takes ptxas's command
 * line (-arch=ARCH, -v, -o OUT, -c, the PTX file last) and writes the test
 * doubles' "cubin" of that PTX (fake_cubin.h), which the fake driver loads
 * with its kernels. FAKE_PTXAS_DELAY_MS=N: it takes N ms first (a real
 * ptxas takes 10-100); FAKE_PTXAS_FAIL=1: it refuses the PTX as ptxas
 * would (a message, exit 255); FAKE_PTXAS_LOG=FILE: each run appends a
 * line "ptxas ARCH" there. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "app_util.h"
#include "fake_cubin.h"

static void note_run(const char *arch)
{
	const char *log = getenv("FAKE_PTXAS_LOG");
	FILE *f = log && *log ? fopen(log, "a") : NULL;
	if (f) {
		fprintf(f, "ptxas %s\n", arch);
		fclose(f);
	}
}

int main(int argc, char **argv)
{
	const char *out = NULL, *in = NULL, *arch = "";
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
			out = argv[++i];
		else if (strncmp(argv[i], "-arch=", 6) == 0)
			arch = argv[i] + 6;
		else if (argv[i][0] != '-')
			in = argv[i];
	}
	if (!out || !in) {
		fprintf(stderr, "fake ptxas: usage: ptxas -arch=ARCH [-v] -o OUT IN.ptx\n");
		return 2;
	}
	note_run(arch);
	const char *delay = getenv("FAKE_PTXAS_DELAY_MS");
	if (delay && *delay) {
		long ms = atol(delay);
		struct timespec t = { ms / 1000, ms % 1000 * 1000000L };
		nanosleep(&t, NULL);
	}
	const char *failing = getenv("FAKE_PTXAS_FAIL");
	if (failing && *failing == '1') {
		fprintf(stderr, "ptxas fatal   : Unresolved extern function 'fake' (FAKE_PTXAS_FAIL)\n");
		return 255;
	}
	char *ptx = slurp(in);
	size_t size = 0;
	uint8_t *cubin = ptx ? fake_cubin_make(ptx, &size) : NULL;
	FILE *f = cubin ? fopen(out, "wb") : NULL;
	int ok = f && fwrite(cubin, 1, size, f) == size;
	if (f && fclose(f) != 0)
		ok = 0;
	free(cubin);
	free(ptx);
	if (!ok) {
		fprintf(stderr, "fake ptxas: cannot turn %s into %s\n", in, out);
		return 1;
	}
	printf("ptxas info    : Used 16 registers\n");
	return 0;
}
