/* What the fake-driver test apps share: a checked driver call that counts
 * failures and says which call failed (with the pid: some apps fork),
 * reading the kernels' PTX file, and finding the fake driver's test hooks.
 * Header-only (static inline: an app uses what it needs): each app is one
 * file. */
#ifndef FAKECUDA_APP_UTIL_H
#define FAKECUDA_APP_UTIL_H
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cuda.h>

static int failures;

#define CK(call) app_check((call), #call, __LINE__)

static inline void app_check(CUresult rc, const char *what, int line)
{
	if (rc != CUDA_SUCCESS) {
		printf("FAIL pid %d line %d: %s -> %d\n", (int)getpid(), line, what, (int)rc);
		failures++;
	}
}

/* The whole file, NUL-terminated; NULL when unreadable. */
static inline char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
	if (s && fread(s, 1, (size_t)n, f) == (size_t)n) {
		s[n] = 0;
	} else {
		free(s); /* a short read: no text rather than one without its end */
		s = NULL;
	}
	fclose(f);
	return s;
}

/* A symbol of the fake driver itself, never the hook's export of the same
 * name (loaded by the hook with RTLD_LOCAL: asked through its path,
 * NTOP_REAL_LIBCUDA). The path goes in the form the hook opened it,
 * DIR/./FILE: under ntop's loader audit module the plain path names the
 * hook (src/hook/audit/rtld_audit.c). */
static inline void *fake_own_sym(const char *name)
{
	const char *path = getenv("NTOP_REAL_LIBCUDA");
	const char *slash = path ? strrchr(path, '/') : NULL;
	char form[4096];
	if (!slash || snprintf(form, sizeof form, "%.*s/.%s", (int)(slash - path), path, slash) >= (int)sizeof form)
		return NULL;
	void *h = dlopen(form, RTLD_NOW | RTLD_NOLOAD);
	return h ? dlsym(h, name) : NULL; /* the handle stays open: the fake stays loaded anyway */
}

/* A test hook of the fake driver: from the global scope when the fake is
 * there, else from the fake itself. */
static inline void *fake_sym(const char *name)
{
	void *p = dlsym(RTLD_DEFAULT, name);
	return p ? p : fake_own_sym(name);
}

#endif
