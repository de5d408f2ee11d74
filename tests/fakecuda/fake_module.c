/* fakecuda modules and launches: PTX is scanned for ".entry NAME(" with its
 * parameter list and for module-scope .global/.const variables; fatbins and
 * cubins get an empty module whose functions are made up on request. A
 * launch of a probed copy (same entry name as a first definition, more
 * parameters) fills its trailing map buffers with block_sched-style records:
 * one record per warp (or thread);
 * layout from FAKECUDA_MAP ("warp:24" by default: level:record bytes, cap 1),
 * records u64 start, u64 gstart, u32 elapsed, u32 smid (probes/
 * block_sched); counts only where the probed PTX stores them (engine.h:
 * count_static). A copy whose PTX folds a field (red.global: a block map,
 * tests/gpu/block_span.toml) gets one record per block (FAKECUDA_MAP
 * "block:BYTES", default 40) whose every u64 word is folded with max into
 * what the buffer held, and a line on stderr when that was not zero (the
 * hook clears such records before each launch). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "fake.h"
#include "fake_cubin.h"

struct fake_first {
	struct fake_first *next;
	char name[512];
	int n_params;
};

static struct fake_first *fake_firsts;
static int fake_launches;

int fake_first_param_count(const char *name)
{
	for (struct fake_first *f = fake_firsts; f; f = f->next)
		if (strcmp(f->name, name) == 0)
			return f->n_params;
	return -1;
}

static void fake_note_first(const struct fake_func *fn)
{
	if (fake_first_param_count(fn->name) >= 0)
		return;
	struct fake_first *f = calloc(1, sizeof *f);
	if (!f)
		return;
	snprintf(f->name, sizeof f->name, "%s", fn->name);
	f->n_params = fn->n_params;
	f->next = fake_firsts;
	fake_firsts = f;
}

static size_t fake_type_size(const char *t)
{
	if (strstr(t, "64"))
		return 8;
	if (strstr(t, "32"))
		return 4;
	if (strstr(t, "16"))
		return 2;
	return 1;
}

/* ".param .u64 name" or ".param .align 8 .b8 name[16]" */
static void fake_param(struct fake_func *fn, const char *decl, size_t *off)
{
	if (fn->n_params >= FAKE_MAX_PARAMS)
		return;
	size_t align, size;
	const char *al = strstr(decl, ".align");
	const char *br = strchr(decl, '[');
	const char *ty = strrchr(decl, '.');
	if (!ty)
		return;
	size = fake_type_size(ty);
	align = al ? strtoul(al + 6, NULL, 10) : size;
	if (br)
		size *= strtoul(br + 1, NULL, 10);
	if (align == 0)
		align = 1;
	*off = (*off + align - 1) / align * align;
	fn->params[fn->n_params].offset = *off;
	fn->params[fn->n_params].size = size;
	fn->n_params++;
	*off += size;
}

static void fake_scan_entry(struct fake_module *m, const char *p)
{
	struct fake_func *fn = calloc(1, sizeof *fn);
	if (!fn)
		return;
	p += strlen(".entry");
	while (isspace((unsigned char)*p))
		p++;
	size_t n = strcspn(p, " \t\r\n(");
	snprintf(fn->name, sizeof fn->name, "%.*s", (int)n, p);
	const char *open = strchr(p, '(');
	const char *brace = strchr(p, '{');
	const char *close = open ? strchr(open, ')') : NULL;
	size_t off = 0;
	if (open && close && (!brace || open < brace)) {
		for (const char *q = open + 1; q < close;) {
			const char *end = q + strcspn(q, ",)");
			char decl[256];
			snprintf(decl, sizeof decl, "%.*s", (int)(end - q), q);
			if (strstr(decl, ".param"))
				fake_param(fn, decl, &off);
			q = *end == ',' ? end + 1 : end;
			if (*end == ')')
				break;
		}
	}
	const char *next = brace ? strstr(brace, ".entry") : NULL;
	for (const char *q = brace; q && (q = strstr(q, ".reg .b64 %ntop_hc")) != NULL && (!next || q < next); q++)
		fn->kept_addrs++;
	const char *cs = brace ? strstr(brace, "st.global.u32 [%ntop_hc") : NULL;
	const char *ca = brace ? strstr(brace, "st.global.u32 [%ntop_ca]") : NULL;
	fn->stores_counts = (cs && (!next || cs < next)) || (ca && (!next || ca < next));
	const char *red = brace ? strstr(brace, "red.global.") : NULL;
	fn->block_map = red && (!next || red < next);
	const char *ny = brace ? strstr(brace, "%ntid.y") : NULL, *gy = brace ? strstr(brace, "%nctaid.y") : NULL;
	int probed = brace && strstr(brace, "ntop_map") && (!next || strstr(brace, "ntop_map") < next);
	fn->only_1d_block = probed && !(ny && (!next || ny < next));
	fn->only_1d_grid = probed && !(gy && (!next || gy < next));
	/* "@%ntop_sp<i> st.global.u32 [...": only kept blocks store counts */
	for (const char *q = brace; q && (q = strstr(q, "@%ntop_sp")) != NULL && (!next || q < next); q++) {
		const char *sp = q + strlen("@%ntop_sp");
		while (isdigit((unsigned char)*sp))
			sp++;
		if (!strncmp(sp, " st.global.u32 [", 16))
			fn->counts_kept_only = 1;
	}
	fn->mod = m;
	fn->next = m->funcs;
	m->funcs = fn;
	fake_note_first(fn);
}

/* ".global .align 4 .u32 name;" / ".const .align 4 .b8 name[64] = {...};" at line start. */
static void fake_scan_global(struct fake_module *m, const char *p)
{
	const char *end = p + strcspn(p, ";=\n");
	const char *name_end = end;
	while (name_end > p && isspace((unsigned char)name_end[-1]))
		name_end--;
	size_t count = 1;
	if (name_end > p && name_end[-1] == ']') {
		const char *br = name_end;
		while (br > p && *br != '[')
			br--;
		count = strtoul(br + 1, NULL, 10);
		name_end = br;
	}
	const char *name = name_end;
	while (name > p && !isspace((unsigned char)name[-1]))
		name--;
	const char *ty = name;
	while (ty > p && *ty != '.')
		ty--;
	struct fake_global *g = calloc(1, sizeof *g);
	if (!g || name_end <= name)
		return free(g);
	snprintf(g->name, sizeof g->name, "%.*s", (int)(name_end - name), name);
	g->size = fake_type_size(ty) * (count ? count : 1);
	g->data = calloc(1, g->size);
	g->next = m->globals;
	m->globals = g;
}

struct fake_module *fake_module_from_image(const void *image, int is_library)
{
	struct fake_module *m = fake_keep(calloc(1, sizeof *m));
	if (!m)
		return NULL;
	m->is_library = is_library;
	m->gen = fake_ctx_gen;
	const char *s = fake_cubin_ptx(image); /* a cubin of ours: the PTX it came from */
	const uint8_t *u = image;
	if (!s)
		s = image;
	if (s == image && (memcmp(s, "\177ELF", 4) == 0 || u[0] == 0xB1 || u[0] == 0x50)) {
		m->any_name = 1; /* cubin or fatbin: functions are made up on request */
		return m;
	}
	pthread_mutex_lock(&fake_lock);
	for (const char *p = s; (p = strstr(p, ".entry")) != NULL; p += 6)
		fake_scan_entry(m, p);
	for (const char *line = s; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		const char *t = line;
		while (*t == ' ' || *t == '\t')
			t++;
		if (strncmp(t, ".global ", 8) == 0 || strncmp(t, ".const ", 7) == 0 ||
		    strncmp(t, ".visible .global ", 17) == 0)
			fake_scan_global(m, t);
	}
	pthread_mutex_unlock(&fake_lock);
	return m;
}

/* The function name of a ".func" declaration line at p (after its return
 * parameter list, if any), copied into name; 0 when none. */
static int fake_func_name(const char *p, char *name, size_t len)
{
	p = strstr(p, ".func") + 5;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == '(' && (p = strchr(p, ')')) != NULL)
		p++;
	while (p && (*p == ' ' || *p == '\t'))
		p++;
	size_t n = p ? strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$") : 0;
	if (!n || n >= len)
		return 0;
	memcpy(name, p, n);
	name[n] = 0;
	return 1;
}

static int fake_ptx_defines_func(const char *const *texts, int n, const char *name)
{
	for (int t = 0; t < n; t++)
		for (const char *q = strstr(texts[t], ".func"); q; q = strstr(q + 5, ".func")) {
			const char *line = q;
			while (line > texts[t] && line[-1] != '\n')
				line--;
			char got[256];
			if (!memmem(line, (size_t)(q - line), ".extern", 7) && fake_func_name(q, got, sizeof got) &&
			    strcmp(got, name) == 0)
				return 1;
		}
	return 0;
}

/* As the real JIT and linker do: every `.extern .func` of the texts must be
 * defined by one of them (or be a function the driver provides). */
static int fake_ptx_resolved(const char *const *texts, int n)
{
	static const char *const builtins[] = { "vprintf", "malloc", "free", "__assertfail", NULL };
	for (int t = 0; t < n; t++)
		for (const char *q = strstr(texts[t], ".extern .func"); q; q = strstr(q + 13, ".extern .func")) {
			char name[256];
			int builtin = 0;
			if (!fake_func_name(q + 8, name, sizeof name))
				continue;
			for (int b = 0; builtins[b]; b++)
				builtin |= strcmp(builtins[b], name) == 0;
			if (!builtin && !fake_ptx_defines_func(texts, n, name))
				return 0;
		}
	return 1;
}

FAKE_EXPORT CUresult cuModuleLoadData(CUmodule *mod, const void *image)
{
	const char *text = image;
	if (strncmp(text, "\177ELF", 4) != 0 && (uint8_t)text[0] != 0xB1 && (uint8_t)text[0] != 0x50 &&
	    !fake_ptx_resolved(&text, 1))
		return CUDA_ERROR_INVALID_PTX; /* unresolved extern function */
	*mod = (CUmodule)fake_module_from_image(image, 0);
	return *mod ? CUDA_SUCCESS : CUDA_ERROR_INVALID_IMAGE;
}

/* The driver's JIT holds other threads' launches, occupancy queries,
 * event records and module calls while it compiles (H200, driver 580:
 * bench/jit_hold.c). Launches and occupancy queries take this. */
static pthread_mutex_t fake_jit_hold = PTHREAD_MUTEX_INITIALIZER;

/* a fork child has no JIT under way, whatever its parent was compiling */
static void fake_jit_hold_child(void)
{
	pthread_mutex_init(&fake_jit_hold, NULL);
}

__attribute__((constructor)) static void fake_jit_hold_init(void)
{
	pthread_atfork(NULL, NULL, fake_jit_hold_child);
}

void fake_jit_wait(void)
{
	pthread_mutex_lock(&fake_jit_hold);
	pthread_mutex_unlock(&fake_jit_hold);
}

FAKE_EXPORT CUresult cuModuleLoadDataEx(CUmodule *mod, const void *image, unsigned int n, CUjit_option *o,
					void **v)
{
	(void)n, (void)o, (void)v;
	/* A PTX text the fake JIT refuses, so the hook's JIT failure path runs;
	 * FAKECUDA_JIT_FAIL_EXIT_FORM=1: every probed copy that computes map
	 * addresses at its exits (engine.h's ENGINE_ADDR_AT_EXIT). */
	const char *exit_form = getenv("FAKECUDA_JIT_FAIL_EXIT_FORM");
	if (strstr((const char *)image, "FAKECUDA_JIT_FAIL") ||
	    (exit_form && *exit_form == '1' && strstr((const char *)image, "ntop_map") &&
	     !strstr((const char *)image, ".reg .b64 %ntop_hc")))
		return CUDA_ERROR_INVALID_PTX;
	/* FAKECUDA_JIT_DELAY_MS=N: a probed copy's JIT takes N ms (a real
	 * driver's takes 10-200), so a test sees launches go by meanwhile,
	 * held as the driver holds them */
	const char *delay = getenv("FAKECUDA_JIT_DELAY_MS");
	if (delay && strstr((const char *)image, "%ntop_")) {
		pthread_mutex_lock(&fake_jit_hold);
		usleep((useconds_t)atoi(delay) * 1000);
		pthread_mutex_unlock(&fake_jit_hold);
	}
	return cuModuleLoadData(mod, image);
}

FAKE_EXPORT CUresult cuModuleUnload(CUmodule mod)
{
	/* kept: handles must stay unique in the test */
	return fake_module_alive((struct fake_module *)mod, "cuModuleUnload");
}

static CUresult fake_get_func(struct fake_func **out, struct fake_module *m, const char *name)
{
	if (fake_module_alive(m, "a module (getting a function)") != CUDA_SUCCESS)
		return CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&fake_lock);
	struct fake_func *fn;
	for (fn = m->funcs; fn && strcmp(fn->name, name) != 0; fn = fn->next)
		;
	if (!fn && m->any_name && (fn = calloc(1, sizeof *fn)) != NULL) {
		snprintf(fn->name, sizeof fn->name, "%s", name);
		fn->mod = m;
		fn->next = m->funcs;
		m->funcs = fn;
	}
	pthread_mutex_unlock(&fake_lock);
	if (!fn)
		return CUDA_ERROR_NOT_FOUND;
	*out = fn;
	return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuModuleGetFunction(CUfunction *f, CUmodule mod, const char *name)
{
	return fake_get_func((struct fake_func **)f, (struct fake_module *)mod, name);
}

static CUresult fake_get_global(struct fake_module *m, const char *name, CUdeviceptr *p, size_t *size)
{
	if (fake_module_alive(m, "a module (getting a global)") != CUDA_SUCCESS)
		return CUDA_ERROR_INVALID_HANDLE;
	for (struct fake_global *g = m->globals; g; g = g->next)
		if (strcmp(g->name, name) == 0) {
			if (p)
				*p = (CUdeviceptr)(uintptr_t)g->data;
			if (size)
				*size = g->size;
			return CUDA_SUCCESS;
		}
	return CUDA_ERROR_NOT_FOUND;
}

FAKE_EXPORT CUresult cuModuleGetGlobal_v2(CUdeviceptr *p, size_t *size, CUmodule mod, const char *name)
{
	return fake_get_global((struct fake_module *)mod, name, p, size);
}

FAKE_EXPORT CUresult cuLibraryLoadData(CUlibrary *lib, const void *code, CUjit_option *jo, void **jv,
				       unsigned int nj, CUlibraryOption *lo, void **lv, unsigned int nl)
{
	(void)jo, (void)jv, (void)nj, (void)lo, (void)lv, (void)nl;
	*lib = (CUlibrary)fake_module_from_image(code, 1);
	return *lib ? CUDA_SUCCESS : CUDA_ERROR_INVALID_IMAGE;
}

FAKE_EXPORT CUresult cuLibraryUnload(CUlibrary lib)
{
	(void)lib;
	return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuLibraryGetKernel(CUkernel *k, CUlibrary lib, const char *name)
{
	return fake_get_func((struct fake_func **)k, (struct fake_module *)lib, name);
}

FAKE_EXPORT CUresult cuLibraryGetModule(CUmodule *mod, CUlibrary lib)
{
	*mod = (CUmodule)lib;
	return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuLibraryGetGlobal(CUdeviceptr *p, size_t *size, CUlibrary lib, const char *name)
{
	return fake_get_global((struct fake_module *)lib, name, p, size);
}

struct fake_func *fake_ctx_function(struct fake_func *f)
{
	if (!f || f->base || !f->mod || !f->mod->is_library)
		return f;
	struct fake_func *made = NULL;
	pthread_mutex_lock(&fake_lock);
	if (!f->ctx_fn && (made = malloc(sizeof *made)) != NULL) {
		*made = *f;
		made->next = NULL;
		made->base = f;
		made->ctx_fn = NULL;
		f->ctx_fn = made;
	}
	pthread_mutex_unlock(&fake_lock);
	fake_keep(made); /* takes fake_lock itself */
	return f->ctx_fn ? f->ctx_fn : f;
}

FAKE_EXPORT CUresult cuKernelGetFunction(CUfunction *f, CUkernel k)
{
	*f = (CUfunction)fake_ctx_function((struct fake_func *)k);
	return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuFuncGetName(const char **name, CUfunction f)
{
	*name = fake_fn(f)->name;
	return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuKernelGetName(const char **name, CUkernel k)
{
	return cuFuncGetName(name, (CUfunction)k);
}

FAKE_EXPORT CUresult cuFuncGetParamInfo(CUfunction f, size_t i, size_t *off, size_t *size)
{
	struct fake_func *fn = fake_fn(f);
	if (fake_module_alive(fn->mod, "cuFuncGetParamInfo") != CUDA_SUCCESS)
		return CUDA_ERROR_INVALID_HANDLE;
	if (i >= (size_t)fn->n_params)
		return CUDA_ERROR_INVALID_VALUE;
	*off = fn->params[i].offset;
	*size = fn->params[i].size;
	return CUDA_SUCCESS;
}

/* 16 + 2 per parameter, and FAKECUDA_ENTRY_REGS (default 4) per map whose
 * addresses a probed copy keeps from its entry: the price that form pays. */
int fake_regs(const struct fake_func *fn)
{
	const char *e = getenv("FAKECUDA_ENTRY_REGS");
	int per = e && *e ? atoi(e) : 4;
	return 16 + 2 * fn->n_params + per * fn->kept_addrs;
}

FAKE_EXPORT CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, CUfunction f, int threads, size_t smem)
{
	(void)smem;
	if (threads <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	fake_jit_wait();
	if (fake_module_alive(fake_fn(f)->mod, "cuOccupancyMaxActiveBlocksPerMultiprocessor") != CUDA_SUCCESS)
		return CUDA_ERROR_INVALID_HANDLE;
	int by_threads = 2048 / threads, by_regs = 65536 / (fake_regs(fake_fn(f)) * threads);
	int v = by_threads < by_regs ? by_threads : by_regs;
	*n = v > 32 ? 32 : v;
	return CUDA_SUCCESS;
}

/* --- cuLink*: the "cubin" holds the PTX (fake_cubin.h). */
struct fake_link {
	char *ptx;        /* the first PTX input: what the "cubin" holds */
	char *inputs[16]; /* every PTX input, for the extern check */
	int n_inputs;
	uint8_t *cubin;
};

FAKE_EXPORT CUresult cuLinkCreate_v2(unsigned int n, CUjit_option *o, void **v, CUlinkState *st)
{
	(void)n, (void)o, (void)v;
	*st = calloc(1, sizeof(struct fake_link));
	return *st ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

FAKE_EXPORT CUresult cuLinkAddData_v2(CUlinkState st, CUjitInputType type, void *data, size_t size,
				      const char *name, unsigned int n, CUjit_option *o, void **v)
{
	(void)size, (void)name, (void)n, (void)o, (void)v;
	struct fake_link *l = (struct fake_link *)st;
	if (type == CU_JIT_INPUT_PTX && !l->ptx)
		l->ptx = strdup(data);
	if (type == CU_JIT_INPUT_PTX && l->n_inputs < 16)
		l->inputs[l->n_inputs++] = strdup(data);
	return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuLinkComplete(CUlinkState st, void **cubin, size_t *size)
{
	struct fake_link *l = (struct fake_link *)st;
	if (!fake_ptx_resolved((const char *const *)l->inputs, l->n_inputs))
		return CUDA_ERROR_INVALID_PTX;
	l->cubin = fake_keep(fake_cubin_make(l->ptx, size));
	if (!l->cubin)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*cubin = l->cubin;
	return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuLinkDestroy(CUlinkState st)
{
	struct fake_link *l = (struct fake_link *)st;
	free(l->ptx);
	for (int i = 0; i < l->n_inputs; i++)
		free(l->inputs[i]);
	/* the cubin stays: modules loaded from it keep their functions */
	free(l);
	return CUDA_SUCCESS;
}

/* --- launches */
static uint64_t fake_param_value(const struct fake_func *fn, int i, void **params, void **extra)
{
	uint64_t v = 0;
	if (params) {
		memcpy(&v, params[i], fn->params[i].size < 8 ? fn->params[i].size : 8);
		return v;
	}
	uint8_t *buf = NULL;
	for (int k = 0; extra && extra[k] != CU_LAUNCH_PARAM_END; k += 2)
		if (extra[k] == CU_LAUNCH_PARAM_BUFFER_POINTER)
			buf = extra[k + 1];
	if (buf)
		memcpy(&v, buf + fn->params[i].offset, 8);
	return v;
}

/* One record of rec bytes per block, every u64 word folded in with max. */
static void fake_fill_blocks(uint8_t *base, uint64_t blocks, uint32_t rec, int counts)
{
	uint8_t *records = base + ((blocks * 4 + 15) & ~(uint64_t)15);
	int stale = 0;
	for (uint64_t b = 0; b < blocks; b++) {
		uint8_t *r = records + b * rec;
		if (counts)
			memcpy(base + b * 4, &rec, 4);
		for (uint32_t w = 0; w + 8 <= rec; w += 8) {
			uint64_t v = 1000 + (b / FAKE_SMS) * 5000 + w, was;
			memcpy(&was, r + w, 8);
			stale |= was != 0;
			v = was > v ? was : v;
			memcpy(r + w, &v, 8);
		}
	}
	if (stale)
		fprintf(stderr, "fakecuda: a folded field was not zero before the launch\n");
}

/* FAKECUDA_MAP=regions:CAP: per warp (unit-major, CAP 8-byte records) what
 * probes/regions.toml writes: the entry pair, region 0 from +100 to +300,
 * region 1 from +300 to +700 (sites 0..3), the exit at +1000; only the
 * warps of the first ceil(blocks / 2^shift) blocks (kept by the sampling
 * shift), the others' counts absurd (engine.h: they store none, the hook
 * must not read them). */
static void fake_fill_regions(uint8_t *base, uint64_t blocks, uint64_t upb, unsigned shift, uint32_t cap)
{
	static const uint32_t at[5] = { 100, 300, 300, 700, 1000 };
	static const uint32_t tag[5] = { 0u << 24 | 0, 0x40000000u | 0u << 24 | 1, 1u << 24 | 2, 0x40000000u | 1u << 24 | 3,
					 0xC0000000u };
	uint64_t warps = blocks * upb;
	uint8_t *records = base + ((warps * 4 + 15) & ~(uint64_t)15);
	for (uint64_t u = 0; u < warps && cap >= 7; u++) {
		uint32_t r[14], n = 7 * 8, absurd = 0x7fffffffu;
		if (u / upb >= (blocks + (1ull << shift) - 1) >> shift) {
			memcpy(base + u * 4, &absurd, 4);
			continue;
		}
		uint64_t t0 = 1000 + u * 10;
		r[0] = (uint32_t)t0;
		r[1] = 0x80000000u | (uint32_t)(u % FAKE_SMS);
		r[2] = 0;
		r[3] = 0xA0000000u;
		for (int k = 0; k < 5; k++) {
			r[4 + 2 * k] = (uint32_t)t0 + at[k];
			r[5 + 2 * k] = tag[k];
		}
		memcpy(base + u * 4, &n, 4);
		memcpy(records + u * cap * 8, r, sizeof r);
	}
}

/* FAKECUDA_MAP=dmat: one dmat record (addr, clock, access) per thread, a
 * 4-byte load of site 0 at base + 4 * thread: 4 sectors per warp request. */
static void fake_fill_dmat(uint8_t *base, uint64_t threads)
{
	uint8_t *records = base + ((threads * 4 + 15) & ~(uint64_t)15);
	for (uint64_t u = 0; u < threads; u++) {
		uint32_t n = 16, clock = (uint32_t)(100 + u), access = 4 | 1u << 18;
		uint64_t addr = 0x7f0000000000ull + 4 * u;
		memcpy(base + u * 4, &n, 4);
		memcpy(records + u * 16, &addr, 8);
		memcpy(records + u * 16 + 8, &clock, 4);
		memcpy(records + u * 16 + 12, &access, 4);
	}
}

/* base: the map pointer as the hook passed it; a sampled map's low bits
 * carry the block-sampling shift (engine.h): records only for kept blocks.
 * A probed copy whose PTX stores no counts (count_static) leaves them 0,
 * so a hook that read them back instead of taking the plan's constant
 * would find no records; one whose blocks not kept store none leaves an
 * absurd count there. */
static void fake_fill_map(uint64_t ptr, const unsigned grid[3], const unsigned block[3], int counts, int kept_only,
			  int block_map)
{
	uint8_t *base = (uint8_t *)(uintptr_t)(ptr & ~(uint64_t)255);
	unsigned shift = (unsigned)(ptr & 31);
	const char *spec = getenv("FAKECUDA_MAP");
	if (block_map) {
		uint32_t rec = spec && !strncmp(spec, "block:", 6) ? (uint32_t)strtoul(spec + 6, NULL, 10) : 40;
		fake_fill_blocks(base, (uint64_t)grid[0] * grid[1] * grid[2], rec, counts);
		return;
	}
	int warp = !spec || strncmp(spec, "thread", 6) != 0;
	const char *colon = spec ? strchr(spec, ':') : NULL;
	unsigned rec = colon ? (unsigned)strtoul(colon + 1, NULL, 10) : 24;
	uint64_t blocks = (uint64_t)grid[0] * grid[1] * grid[2];
	unsigned threads = block[0] * block[1] * block[2];
	if (spec && !strncmp(spec, "regions:", 8)) {
		fake_fill_regions(base, blocks, (threads + 31) / 32, shift, rec);
		return;
	}
	if (spec && !strcmp(spec, "dmat")) {
		fake_fill_dmat(base, blocks * threads);
		return;
	}
	uint64_t upb = warp ? (threads + 31) / 32 : threads, units = blocks * upb;
	uint8_t *records = base + ((units * 4 + 15) & ~(uint64_t)15);
	/* Unit u's record 0 sits at u * rec in either layout (engine.h): the
	 * fake fills record 0 only, so cap > 1 thread maps read right too (warp maps
	 * unit-major with cap > 1 would put it at u * cap * rec: not faked). */
	for (uint64_t u = 0; u < units; u++) {
		uint64_t b = u / upb;
		uint32_t count = counts ? rec : 0, smid = (uint32_t)(b % FAKE_SMS), elapsed = 4000 + (uint32_t)(u % 7) * 10;
		uint64_t start = 1000 + (b / FAKE_SMS) * 5000 + (u % upb) * 10;
		if (b & ((1ull << shift) - 1)) {
			/* not kept: counted, or (kept_only) its count left as found,
			 * which the fake makes absurd */
			uint32_t left = kept_only ? 0x7fffffffu : count;
			memcpy(base + u * 4, &left, 4);
			continue;
		}
		memcpy(base + u * 4, &count, 4);
		uint8_t *r = records + ((b >> shift) * upb + u % upb) * rec;
		uint64_t gstart = 1700000000000000000ull + start; /* ns, like %globaltimer */
		if (rec >= 16) { /* a 16-byte record (dmat's size) gets the times */
			memcpy(r, &start, 8);
			memcpy(r + 8, &gstart, 8);
		}
		if (rec >= 24) {
			memcpy(r + 16, &elapsed, 4);
			memcpy(r + 20, &smid, 4);
		}
	}
}

static CUresult fake_launch(CUfunction f, const unsigned grid[3], const unsigned block[3], unsigned smem,
			    CUstream s, void **params, void **extra)
{
	struct fake_func *fn = fake_fn(f);
	if (!fn || (params && extra) || block[0] * block[1] * block[2] == 0 || block[0] * block[1] * block[2] > 1024)
		return CUDA_ERROR_INVALID_VALUE;
	fake_jit_wait();
	if (fake_module_alive(fn->mod, "a launch") != CUDA_SUCCESS)
		return CUDA_ERROR_INVALID_HANDLE;
	if (fake_smem_ok(fn, smem) != CUDA_SUCCESS)
		return CUDA_ERROR_INVALID_VALUE;
	if (fn->n_params > 0 && !params && !extra)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&fake_lock);
	fake_launches++;
	int captured = fake_capture_blocks(s);
	if (captured)
		((struct fake_stream *)s)->nodes++;
	int first = fake_first_param_count(fn->name);
	pthread_mutex_unlock(&fake_lock);
	if (captured) /* a node of the stream's graph, not run */
		return params ? fake_graph_capture(s, f, grid, block, smem, params) : CUDA_SUCCESS;
	if (first >= 0 && fn->n_params > first) {
		fake_attr_note_probed(fn);
		/* what the GPU would do is store records at wrong addresses */
		if ((fn->only_1d_block && (block[1] != 1 || block[2] != 1)) ||
		    (fn->only_1d_grid && (grid[1] != 1 || grid[2] != 1))) {
			fprintf(stderr, "fakecuda: a probed copy built for 1-D launches launched as %ux%ux%u x %ux%ux%u\n",
				grid[0], grid[1], grid[2], block[0], block[1], block[2]);
			return CUDA_ERROR_ILLEGAL_ADDRESS;
		}
	}
	for (int i = first >= 0 ? first : fn->n_params; i < fn->n_params; i++) {
		uint64_t p = fake_param_value(fn, i, params, extra);
		if (!p)
			return CUDA_ERROR_ILLEGAL_ADDRESS;
		fake_fill_map(p, grid, block, fn->stores_counts, fn->counts_kept_only, fn->block_map);
	}
	return CUDA_SUCCESS;
}

CUresult fake_launch_node(CUfunction f, const unsigned grid[3], const unsigned block[3], unsigned smem, CUstream s,
			  void **params)
{
	return fake_launch(f, grid, block, smem, s, params, NULL);
}

#define FAKE_LAUNCH_ARGS CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, \
	unsigned bz, unsigned smem, CUstream s

FAKE_EXPORT CUresult cuLaunchKernel(FAKE_LAUNCH_ARGS, void **params, void **extra)
{
	return fake_launch(f, (unsigned[]){ gx, gy, gz }, (unsigned[]){ bx, by, bz }, smem, s, params, extra);
}

FAKE_EXPORT CUresult cuLaunchKernel_ptsz(FAKE_LAUNCH_ARGS, void **params, void **extra)
{
	return cuLaunchKernel(f, gx, gy, gz, bx, by, bz, smem, s, params, extra);
}

FAKE_EXPORT CUresult cuLaunchCooperativeKernel(FAKE_LAUNCH_ARGS, void **params)
{
	return fake_launch(f, (unsigned[]){ gx, gy, gz }, (unsigned[]){ bx, by, bz }, smem, s, params, NULL);
}

FAKE_EXPORT CUresult cuLaunchCooperativeKernel_ptsz(FAKE_LAUNCH_ARGS, void **params)
{
	return cuLaunchCooperativeKernel(f, gx, gy, gz, bx, by, bz, smem, s, params);
}

FAKE_EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **params, void **extra)
{
	return fake_launch(f, (unsigned[]){ c->gridDimX, c->gridDimY, c->gridDimZ },
			   (unsigned[]){ c->blockDimX, c->blockDimY, c->blockDimZ }, c->sharedMemBytes, c->hStream, params,
			   extra);
}

FAKE_EXPORT CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *c, CUfunction f, void **params, void **extra)
{
	return cuLaunchKernelEx(c, f, params, extra);
}

