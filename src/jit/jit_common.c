/* What both JIT stand-ins share (jit.h): finding the real library, filling
 * the dispatch slots, and the channel to the driver stand-in. Never prints,
 * never exits: without a real library every call returns the library's
 * internal error (ntop's launcher only puts a stand-in on the search path
 * after finding the real one). */
#include "jit/jit.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*jit_output_fn)(const char *jit, const void *cubin, size_t size, const char *ptx, size_t len);
typedef void (*jit_note_fn)(const char *jit, const char *msg);

static struct {
	const struct jit_lib *lib;
	void *real;
	char real_path[4096];
	pthread_once_t once;
	jit_output_fn out;
	jit_note_fn note;
} jit = { .once = PTHREAD_ONCE_INIT };

void *jit_real(const char *name)
{
	return jit.real ? dlsym(jit.real, name) : NULL;
}

void jit_init(const struct jit_lib *lib)
{
	char *cause = NULL;
	jit.lib = lib;
	if (reallib_open(lib->spec, (const void *)ntop_hook_marker, &jit.real, jit.real_path, sizeof jit.real_path,
			 &cause) < 0)
		jit.real = NULL;
	free(cause);
	for (int i = 0; i < jit_export_count; i++) {
		void *fn = NULL;
		for (int r = 0; r < lib->n_rows && !fn; r++)
			if (strcmp(lib->rows[r].name, jit_export_names[i]) == 0)
				fn = lib->rows[r].handler;
		if (!fn)
			fn = jit_real(jit_export_names[i]);
		jit_dispatch[i] = fn ? fn : lib->stub;
	}
}

/* The driver stand-in's entry, when the process's libcuda.so.1 is ours:
 * the loaded one, else the one the search path (or ntop's loader audit
 * module) gives, ntop's. */
static void jit_find_output(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (!h)
		h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	jit.out = h ? (jit_output_fn)dlsym(h, "ntop_hook_jit_output") : NULL;
	jit.note = jit.out ? (jit_note_fn)dlsym(h, "ntop_hook_jit_note") : NULL;
	if (jit.out)
		jit.out(jit.lib->name, NULL, 0, NULL, 0); /* hello: the stand-in is in use */
}

void jit_output(const void *cubin, size_t size, const char *ptx, size_t len)
{
	pthread_once(&jit.once, jit_find_output);
	if (jit.out && cubin && size && ptx && len)
		jit.out(jit.lib->name, cubin, size, ptx, len);
}

void jit_note(const char *fmt, ...)
{
	pthread_once(&jit.once, jit_find_output);
	if (!jit.note)
		return;
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	jit.note(jit.lib->name, msg);
}
