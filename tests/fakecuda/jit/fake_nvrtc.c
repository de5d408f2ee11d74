/* NVRTC's test double (libnvrtc.so.N, in a directory of its own): a
 * "compile" takes the source as the PTX (the tests hand it PTX text) and
 * makes a cubin of the fake driver's kind from it (fake_cubin.h), so the
 * driver stand-in's match by content and the probed launch can run on the
 * CPU. Only what the tests call is there; the NVRTC stand-in's dispatch
 * gives the rest its missing-function stub. */
#include <nvrtc.h>
#include <stdlib.h>
#include <string.h>
#include "../fake_cubin.h"

#define FAKE_EXPORT __attribute__((visibility("default")))

struct fake_prog {
	char *src;
	uint8_t *cubin;
	size_t cubin_size;
	int compiled;
};

FAKE_EXPORT nvrtcResult nvrtcVersion(int *major, int *minor)
{
	*major = 13;
	*minor = 0;
	return NVRTC_SUCCESS;
}

FAKE_EXPORT const char *nvrtcGetErrorString(nvrtcResult r)
{
	return r == NVRTC_SUCCESS ? "NVRTC_SUCCESS" : "NVRTC_ERROR (fake)";
}

FAKE_EXPORT nvrtcResult nvrtcCreateProgram(nvrtcProgram *prog, const char *src, const char *name, int n,
					   const char *const *headers, const char *const *names)
{
	(void)name, (void)n, (void)headers, (void)names;
	struct fake_prog *p = calloc(1, sizeof *p);
	if (!p || !src || !(p->src = strdup(src))) {
		free(p);
		return NVRTC_ERROR_OUT_OF_MEMORY;
	}
	*prog = (nvrtcProgram)p;
	return NVRTC_SUCCESS;
}

FAKE_EXPORT nvrtcResult nvrtcCompileProgram(nvrtcProgram prog, int n, const char *const *opts)
{
	(void)n, (void)opts;
	struct fake_prog *p = (struct fake_prog *)prog;
	free(p->cubin);
	p->cubin = fake_cubin_make(p->src, &p->cubin_size);
	p->compiled = p->cubin != NULL;
	return p->compiled ? NVRTC_SUCCESS : NVRTC_ERROR_OUT_OF_MEMORY;
}

FAKE_EXPORT nvrtcResult nvrtcGetPTXSize(nvrtcProgram prog, size_t *size)
{
	struct fake_prog *p = (struct fake_prog *)prog;
	if (!p->compiled)
		return NVRTC_ERROR_INVALID_PROGRAM;
	*size = strlen(p->src) + 1;
	return NVRTC_SUCCESS;
}

FAKE_EXPORT nvrtcResult nvrtcGetPTX(nvrtcProgram prog, char *ptx)
{
	struct fake_prog *p = (struct fake_prog *)prog;
	if (!p->compiled)
		return NVRTC_ERROR_INVALID_PROGRAM;
	memcpy(ptx, p->src, strlen(p->src) + 1);
	return NVRTC_SUCCESS;
}

FAKE_EXPORT nvrtcResult nvrtcGetCUBINSize(nvrtcProgram prog, size_t *size)
{
	struct fake_prog *p = (struct fake_prog *)prog;
	if (!p->compiled)
		return NVRTC_ERROR_INVALID_PROGRAM;
	*size = p->cubin_size;
	return NVRTC_SUCCESS;
}

FAKE_EXPORT nvrtcResult nvrtcGetCUBIN(nvrtcProgram prog, char *cubin)
{
	struct fake_prog *p = (struct fake_prog *)prog;
	if (!p->compiled)
		return NVRTC_ERROR_INVALID_PROGRAM;
	memcpy(cubin, p->cubin, p->cubin_size);
	return NVRTC_SUCCESS;
}

FAKE_EXPORT nvrtcResult nvrtcDestroyProgram(nvrtcProgram *prog)
{
	struct fake_prog *p = (struct fake_prog *)*prog;
	if (p) {
		free(p->src);
		free(p->cubin);
		free(p);
	}
	*prog = NULL;
	return NVRTC_SUCCESS;
}
