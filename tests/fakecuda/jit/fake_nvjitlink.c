/* nvJitLink's test double (libnvJitLink.so.N): a "link" of PTX inputs
 * gives a cubin of the fake driver's kind made from the first (fake_cubin.h).
 * Its "LTO-IR" is FAKE_LTOIR_MAGIC followed by PTX: linked with -lto it
 * gives the cubin of that PTX, with -lto -ptx the PTX itself (the real
 * library's -ptx output), and without -lto it is refused as the real one
 * refuses LTO-IR.
 * Both names of each call are exported, as the real library does (the
 * header's inline wrappers call the versioned ones).
 * For the hook's builder, which compiles probed PTX with it where no ptxas
 * is found: FAKE_NVJITLINK_DELAY_MS=N, a compile takes N ms;
 * FAKE_NVJITLINK_FAIL=1, it refuses the PTX with an error log;
 * FAKE_NVJITLINK_LOG=FILE, each compile appends "nvjitlink ARCH" there,
 * and loading the library "loaded".
 * Like the real one, it has exit handlers of its own (registered when it
 * is loaded): a compile still under way when they have run aborts, as a
 * compiler torn down under a build does. */
#define NVJITLINK_NO_INLINE
#include <nvJitLink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "../fake_cubin.h"

#define FAKE_EXPORT __attribute__((visibility("default")))
/* Exported under both names: the plain one and __nvJitLink<Call>_13_0. */
#define BOTH(plain, call) __attribute__((alias(#plain))) FAKE_EXPORT
#define VERSIONED(call) __nvJitLink##call##_13_0

struct fake_link {
	char arch[32];
	char *ptx;
	uint8_t *cubin;
	size_t cubin_size;
	int lto, want_ptx, has_lto, failed;
};

FAKE_EXPORT nvJitLinkResult nvJitLinkVersion(unsigned int *major, unsigned int *minor)
{
	*major = 13;
	*minor = 0;
	return NVJITLINK_SUCCESS;
}

FAKE_EXPORT nvJitLinkResult nvJitLinkCreate(nvJitLinkHandle *h, uint32_t n, const char *const *opts)
{
	struct fake_link *l = calloc(1, sizeof *l);
	*h = (nvJitLinkHandle)l;
	if (!l)
		return NVJITLINK_ERROR_INTERNAL;
	for (uint32_t i = 0; i < n; i++) {
		l->lto |= strcmp(opts[i], "-lto") == 0;
		l->want_ptx |= strcmp(opts[i], "-ptx") == 0;
		if (strncmp(opts[i], "-arch=", 6) == 0)
			snprintf(l->arch, sizeof l->arch, "%s", opts[i] + 6);
	}
	return l->want_ptx && !l->lto ? NVJITLINK_ERROR_UNRECOGNIZED_OPTION : NVJITLINK_SUCCESS;
}

FAKE_EXPORT nvJitLinkResult nvJitLinkAddData(nvJitLinkHandle h, nvJitLinkInputType type, const void *data,
					     size_t size, const char *name)
{
	(void)name;
	struct fake_link *l = (struct fake_link *)h;
	size_t magic = strlen(FAKE_LTOIR_MAGIC);
	if (type == NVJITLINK_INPUT_LTOIR) {
		if (!l->lto || size < magic || memcmp(data, FAKE_LTOIR_MAGIC, magic) != 0)
			return NVJITLINK_ERROR_INVALID_INPUT;
		l->has_lto = 1;
		data = (const char *)data + magic;
		size -= magic;
		type = NVJITLINK_INPUT_PTX;
	}
	if (type == NVJITLINK_INPUT_PTX && !l->ptx)
		l->ptx = strndup(data, size);
	return NVJITLINK_SUCCESS;
}

FAKE_EXPORT nvJitLinkResult nvJitLinkAddFile(nvJitLinkHandle h, nvJitLinkInputType type, const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NVJITLINK_ERROR_INVALID_INPUT;
	char buf[65536];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	return nvJitLinkAddData(h, type, buf, n, path);
}

static int torn_down;

static void fake_teardown(void)
{
	torn_down = 1;
}

/* FAKE_NVJITLINK_LOG also gets "loaded" when the library is: whether a
 * process that never needed it mapped it. */
__attribute__((constructor)) static void fake_loaded(void)
{
	atexit(fake_teardown);
	const char *log = getenv("FAKE_NVJITLINK_LOG");
	FILE *f = log && *log ? fopen(log, "a") : NULL;
	if (f) {
		fputs("loaded\n", f);
		fclose(f);
	}
}

/* The builder's knobs (above), for a compile of PTX to a cubin: 0 to go on. */
static int fake_compile_knobs(const struct fake_link *l)
{
	const char *log = getenv("FAKE_NVJITLINK_LOG"), *delay = getenv("FAKE_NVJITLINK_DELAY_MS");
	FILE *f = log && *log ? fopen(log, "a") : NULL;
	if (f) {
		fprintf(f, "nvjitlink %s\n", l->arch);
		fclose(f);
	}
	if (delay && *delay) {
		long ms = atol(delay);
		struct timespec t = { ms / 1000, ms % 1000 * 1000000L };
		nanosleep(&t, NULL);
	}
	if (torn_down) {
		fprintf(stderr, "fake nvJitLink: torn down at exit under a compile\n");
		abort();
	}
	const char *fail = getenv("FAKE_NVJITLINK_FAIL");
	return fail && *fail == '1' ? -1 : 0;
}

FAKE_EXPORT nvJitLinkResult nvJitLinkComplete(nvJitLinkHandle h)
{
	struct fake_link *l = (struct fake_link *)h;
	if (!l->want_ptx && fake_compile_knobs(l) < 0) {
		l->failed = 1;
		return NVJITLINK_ERROR_PTX_COMPILE;
	}
	if (l->want_ptx)
		return l->has_lto && l->ptx ? NVJITLINK_SUCCESS : NVJITLINK_ERROR_PTX_COMPILE;
	free(l->cubin);
	l->cubin = fake_cubin_make(l->ptx, &l->cubin_size);
	return l->cubin ? NVJITLINK_SUCCESS : NVJITLINK_ERROR_INTERNAL;
}

FAKE_EXPORT nvJitLinkResult nvJitLinkGetLinkedCubinSize(nvJitLinkHandle h, size_t *size)
{
	struct fake_link *l = (struct fake_link *)h;
	*size = l->cubin_size;
	return l->cubin ? NVJITLINK_SUCCESS : NVJITLINK_ERROR_INTERNAL;
}

FAKE_EXPORT nvJitLinkResult nvJitLinkGetLinkedCubin(nvJitLinkHandle h, void *cubin)
{
	struct fake_link *l = (struct fake_link *)h;
	if (!l->cubin)
		return NVJITLINK_ERROR_INTERNAL;
	memcpy(cubin, l->cubin, l->cubin_size);
	return NVJITLINK_SUCCESS;
}

FAKE_EXPORT nvJitLinkResult nvJitLinkGetLinkedPtxSize(nvJitLinkHandle h, size_t *size)
{
	struct fake_link *l = (struct fake_link *)h;
	if (!l->want_ptx || !l->ptx)
		return NVJITLINK_ERROR_INTERNAL;
	*size = strlen(l->ptx) + 1;
	return NVJITLINK_SUCCESS;
}

FAKE_EXPORT nvJitLinkResult nvJitLinkGetLinkedPtx(nvJitLinkHandle h, char *ptx)
{
	struct fake_link *l = (struct fake_link *)h;
	if (!l->want_ptx || !l->ptx)
		return NVJITLINK_ERROR_INTERNAL;
	memcpy(ptx, l->ptx, strlen(l->ptx) + 1);
	return NVJITLINK_SUCCESS;
}

#define FAKE_ERROR_LOG "ptxas fatal   : Unresolved extern function 'fake' (FAKE_NVJITLINK_FAIL)"

FAKE_EXPORT nvJitLinkResult nvJitLinkGetErrorLogSize(nvJitLinkHandle h, size_t *size)
{
	*size = ((struct fake_link *)h)->failed ? sizeof FAKE_ERROR_LOG : 0;
	return NVJITLINK_SUCCESS;
}

FAKE_EXPORT nvJitLinkResult nvJitLinkGetErrorLog(nvJitLinkHandle h, char *log)
{
	if (((struct fake_link *)h)->failed)
		memcpy(log, FAKE_ERROR_LOG, sizeof FAKE_ERROR_LOG);
	return NVJITLINK_SUCCESS;
}

FAKE_EXPORT nvJitLinkResult nvJitLinkDestroy(nvJitLinkHandle *h)
{
	struct fake_link *l = (struct fake_link *)*h;
	if (l) {
		free(l->ptx);
		free(l->cubin);
		free(l);
	}
	*h = NULL;
	return NVJITLINK_SUCCESS;
}

BOTH(nvJitLinkCreate, Create) nvJitLinkResult VERSIONED(Create)(nvJitLinkHandle *, uint32_t, const char *const *);
BOTH(nvJitLinkAddData, AddData) nvJitLinkResult VERSIONED(AddData)(nvJitLinkHandle, nvJitLinkInputType,
								   const void *, size_t, const char *);
BOTH(nvJitLinkAddFile, AddFile) nvJitLinkResult VERSIONED(AddFile)(nvJitLinkHandle, nvJitLinkInputType,
								   const char *);
BOTH(nvJitLinkComplete, Complete) nvJitLinkResult VERSIONED(Complete)(nvJitLinkHandle);
BOTH(nvJitLinkGetLinkedCubinSize, GetLinkedCubinSize) nvJitLinkResult
	VERSIONED(GetLinkedCubinSize)(nvJitLinkHandle, size_t *);
BOTH(nvJitLinkGetLinkedCubin, GetLinkedCubin) nvJitLinkResult VERSIONED(GetLinkedCubin)(nvJitLinkHandle, void *);
BOTH(nvJitLinkGetLinkedPtxSize, GetLinkedPtxSize) nvJitLinkResult
	VERSIONED(GetLinkedPtxSize)(nvJitLinkHandle, size_t *);
BOTH(nvJitLinkGetLinkedPtx, GetLinkedPtx) nvJitLinkResult VERSIONED(GetLinkedPtx)(nvJitLinkHandle, char *);
BOTH(nvJitLinkGetErrorLogSize, GetErrorLogSize) nvJitLinkResult VERSIONED(GetErrorLogSize)(nvJitLinkHandle, size_t *);
BOTH(nvJitLinkGetErrorLog, GetErrorLog) nvJitLinkResult VERSIONED(GetErrorLog)(nvJitLinkHandle, char *);
BOTH(nvJitLinkDestroy, Destroy) nvJitLinkResult VERSIONED(Destroy)(nvJitLinkHandle *);
