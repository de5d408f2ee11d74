/* The NVRTC stand-in (libnvrtc.so.N): after a successful
 * nvrtcCompileProgram it keeps the program's PTX (nvrtcGetPTX of the real
 * library), and when the application takes the program's cubin
 * (nvrtcGetCUBIN) it hands cubin and PTX to the driver stand-in: CuPy's
 * RawKernel, the CUDA samples' *_nvrtc then load a cubin the hook can probe
 * from that PTX. A program compiled for a virtual architecture gives PTX
 * only, which the driver sees anyway. */
#include <nvrtc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "jit/jit.h"

typedef nvrtcResult (*compile_fn)(nvrtcProgram, int, const char *const *);
typedef nvrtcResult (*size_fn)(nvrtcProgram, size_t *);
typedef nvrtcResult (*get_fn)(nvrtcProgram, char *);
typedef nvrtcResult (*destroy_fn)(nvrtcProgram *);

/* PTX of each compiled program, until it is destroyed. */
struct nvrtc_prog {
	struct nvrtc_prog *next;
	nvrtcProgram prog;
	char *ptx;
	size_t len;        /* with its NUL */
};

static struct nvrtc_prog *progs;
static pthread_mutex_t progs_lock = PTHREAD_MUTEX_INITIALIZER;

/* Takes the list entry for prog out (the caller frees it); NULL if none. */
static struct nvrtc_prog *nvrtc_take(nvrtcProgram prog)
{
	struct nvrtc_prog **pp = &progs, *p;
	while ((p = *pp) && p->prog != prog)
		pp = &p->next;
	if (p)
		*pp = p->next;
	return p;
}

static void nvrtc_forget(nvrtcProgram prog)
{
	pthread_mutex_lock(&progs_lock);
	struct nvrtc_prog *p = nvrtc_take(prog);
	pthread_mutex_unlock(&progs_lock);
	if (p)
		free(p->ptx);
	free(p);
}

static nvrtcResult nvrtc_compile(nvrtcProgram prog, int n, const char *const *opts)
{
	compile_fn real = (compile_fn)jit_real("nvrtcCompileProgram");
	size_fn ptx_size = (size_fn)jit_real("nvrtcGetPTXSize");
	get_fn get_ptx = (get_fn)jit_real("nvrtcGetPTX");
	if (!real)
		return NVRTC_ERROR_INTERNAL_ERROR;
	nvrtcResult rc = real(prog, n, opts);
	jit_output(NULL, 0, NULL, 0);
	nvrtc_forget(prog); /* compiled again: the new PTX replaces the old */
	struct nvrtc_prog *p = calloc(1, sizeof *p);
	if (rc != NVRTC_SUCCESS || !p || !ptx_size || !get_ptx || ptx_size(prog, &p->len) != NVRTC_SUCCESS ||
	    p->len < 2 || !(p->ptx = malloc(p->len + 1)) || get_ptx(prog, p->ptx) != NVRTC_SUCCESS) {
		if (p)
			free(p->ptx);
		free(p);
		return rc;
	}
	p->ptx[p->len] = 0;
	p->len = strlen(p->ptx) + 1;
	p->prog = prog;
	pthread_mutex_lock(&progs_lock);
	p->next = progs;
	progs = p;
	pthread_mutex_unlock(&progs_lock);
	return rc;
}

static nvrtcResult nvrtc_get_cubin(nvrtcProgram prog, char *cubin)
{
	get_fn real = (get_fn)jit_real("nvrtcGetCUBIN");
	size_fn cubin_size = (size_fn)jit_real("nvrtcGetCUBINSize");
	if (!real)
		return NVRTC_ERROR_INTERNAL_ERROR;
	nvrtcResult rc = real(prog, cubin);
	size_t size = 0;
	if (rc != NVRTC_SUCCESS || !cubin || !cubin_size || cubin_size(prog, &size) != NVRTC_SUCCESS)
		return rc;
	pthread_mutex_lock(&progs_lock);
	for (struct nvrtc_prog *p = progs; p; p = p->next)
		if (p->prog == prog) {
			jit_output(cubin, size, p->ptx, p->len);
			break;
		}
	pthread_mutex_unlock(&progs_lock);
	return rc;
}

static nvrtcResult nvrtc_destroy(nvrtcProgram *prog)
{
	destroy_fn real = (destroy_fn)jit_real("nvrtcDestroyProgram");
	if (prog)
		nvrtc_forget(*prog);
	return real ? real(prog) : NVRTC_ERROR_INTERNAL_ERROR;
}

static nvrtcResult nvrtc_missing(void)
{
	return NVRTC_ERROR_INTERNAL_ERROR;
}

static const struct jit_row nvrtc_rows[] = {
	{ "nvrtcCompileProgram", (void *)nvrtc_compile },
	{ "nvrtcGetCUBIN", (void *)nvrtc_get_cubin },
	{ "nvrtcDestroyProgram", (void *)nvrtc_destroy },
};

static const struct jit_lib nvrtc_lib = {
	.name = "nvrtc",
	.spec = &reallib_nvrtc,
	.rows = nvrtc_rows,
	.n_rows = sizeof nvrtc_rows / sizeof nvrtc_rows[0],
	.stub = (void *)nvrtc_missing,
};

__attribute__((constructor)) static void nvrtc_init(void)
{
	jit_init(&nvrtc_lib);
}
