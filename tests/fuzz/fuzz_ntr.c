/* Fuzz harness for the result (.ntr) readers: the whole-file reader on the
 * bytes, and the streaming reader (header, then each map's records pass by
 * pass) on the same bytes in a file (the readers open regular files only),
 * as `ntop report` and the DMAT view read them. A file either reads or
 * fails with a reason; a file the whole reader takes, the stream reader
 * takes to its last record. Seeds: examples/session/results. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fdio.h"
#include "trace/result.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char fuzz_path[64];
static int fuzz_fd = -1;

static void fuzz_unlink(void)
{
	unlink(fuzz_path);
}

static void stream_all(const char *path, const struct result *whole)
{
	struct result_stream *s = NULL;
	char *cause = NULL;
	if (result_stream_open(path, &s, &cause) < 0) {
		if (!cause || whole)
			abort(); /* a reason, and no disagreement with the whole-file reader */
		free(cause);
		return;
	}
	const struct result *r = result_stream_result(s);
	if (whole && (r->n_maps != whole->n_maps || r->seq != whole->seq))
		abort();
	for (int m = 0; m < r->n_maps; m++) {
		struct result_pass *p = NULL;
		if (result_pass_open(s, m, &p, &cause) < 0) {
			free(cause);
			cause = NULL;
			continue;
		}
		struct result_chunk c;
		int rc;
		while ((rc = result_pass_next(p, &c, &cause)) > 0)
			;
		if (rc < 0 && whole)
			abort();
		free(cause);
		cause = NULL;
		result_pass_free(p);
	}
	result_stream_close(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct result *r = NULL;
	char *cause = NULL;
	if (result_read_mem(data, size, &r, &cause) < 0) {
		if (!cause)
			abort();
		free(cause);
		r = NULL;
	}
	if (fuzz_fd < 0) { /* one file of our own for the whole run (mkstemp: O_EXCL) */
		snprintf(fuzz_path, sizeof fuzz_path, "/tmp/fuzz_ntr.XXXXXX");
		fuzz_fd = mkstemp(fuzz_path);
		if (fuzz_fd >= 0)
			atexit(fuzz_unlink);
	}
	if (fuzz_fd >= 0 && ftruncate(fuzz_fd, 0) == 0 && lseek(fuzz_fd, 0, SEEK_SET) == 0 &&
	    fdio_write_all(fuzz_fd, data, size) == 0)
		stream_all(fuzz_path, r);
	result_free(r);
	return 0;
}
