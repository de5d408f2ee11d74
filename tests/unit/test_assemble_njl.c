/* nvJitLink inside the process (engine/ptx/assemble_njl.c) with the
 * toolkit's real library: the fake kernels' PTX, probed with block_sched,
 * compiles to a cubin (an ELF for EM_CUDA naming the kernel), and PTX
 * nvJitLink refuses gives a cause carrying its error log. */
#include "engine/ptx/assemble_njl.h"

#include "testlib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/reallib.h"
#include "engine/engine.h"
#include "engine/probe/probe.h"

#define EM_CUDA 190

static int has(const void *hay, size_t n, const char *needle)
{
	return memmem(hay, n, needle, strlen(needle) + 1) != NULL; /* with its NUL: a whole symbol name */
}

static void probed_compiles(const struct assemble_njl *njl)
{
	size_t len = 0;
	char *ptx = testlib_slurp(testlib_src("tests/fakecuda/kernels.ptx"), &len), *cause = NULL;
	struct probe *p = NULL;
	CHECKF(probe_load_file(testlib_src("probes/block_sched.toml"), &p, &cause) == 0, "%s", cause);
	struct engine_result res;
	memset(&res, 0, sizeof res);
	CHECKF(ptx && p && engine_instrument(ptx, len, "fill", &p, 1, 0, &res, &cause) == 0, "%s", cause);
	void *cubin = NULL;
	size_t size = 0;
	CHECKF(res.ptx && assemble_njl(njl, res.ptx, res.ptx_len, "sm_90", &cubin, &size, &cause) == 0, "%s", cause);
	const unsigned char *c = cubin;
	CHECKF(cubin && size > 64 && memcmp(c, "\177ELF", 4) == 0 && c[18] == EM_CUDA, "not a cubin (%zu bytes)", size);
	CHECKF(cubin && has(cubin, size, "fill"), "the cubin does not name fill");
	free(cubin);
	engine_result_done(&res);
	probe_free(p);
	free(ptx);
	free(cause);
}

static void refused_with_log(const struct assemble_njl *njl)
{
	static const char bad[] = ".version 8.0\n.target sm_80\n.address_size 64\n"
				  ".visible .entry k()\n{\n\tadd.u32 %r1, %r2;\n\tret;\n}\n";
	void *cubin = (void *)1;
	size_t size = 0;
	char *cause = NULL;
	CHECK(assemble_njl(njl, bad, sizeof bad - 1, "sm_90", &cubin, &size, &cause) < 0);
	CHECK(cubin == NULL);
	CHECKF(cause && strstr(cause, "nvJitLink") && strstr(cause, "%r1"), "cause: %s", cause ? cause : "(none)");
	free(cause);
}

int main(void)
{
	char path[4096];
	void *h = NULL;
	char *cause = NULL;
	CHECKF(reallib_open(&reallib_nvjitlink, (const void *)main, &h, path, sizeof path, &cause) == 0,
	       "the toolkit's nvJitLink: %s", cause);
	struct assemble_njl njl;
	CHECKF(h && assemble_njl_bind(&njl, h, &cause) == 0, "%s", cause ? cause : "no library");
	if (h) {
		probed_compiles(&njl);
		refused_with_log(&njl);
	}
	free(cause);
	return testlib_report();
}
