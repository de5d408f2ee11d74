/* One kernel probed end to end (see amdgpu_instrument.h). */
#include "engine/amdgpu/amdgpu_instrument.h"

#include <string.h>
#include <time.h>

#include "common/cause.h"

static double instr_ms(const struct timespec *a)
{
	struct timespec b;
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (double)(b.tv_sec - a->tv_sec) * 1e3 + (double)(b.tv_nsec - a->tv_nsec) / 1e6;
}

static int instr_kernel(const struct amdgpu_co *co, const struct amdgpu_co_kernel *k, const struct amdgpu_func *f,
			struct probe *const *probes, int n_probes, struct amdgpu_instrumented *out, char **cause)
{
	struct timespec t;
	int n = amdgpu_asm_count(f, k->sym->code_size);
	out->n_insns = n;
	clock_gettime(CLOCK_MONOTONIC, &t);
	if (amdgpu_inject_kernel(co, k, f, n, probes, n_probes, &out->inj, cause) < 0)
		return -1;
	out->ms_inject = instr_ms(&t);
	clock_gettime(CLOCK_MONOTONIC, &t);
	struct amdgpu_write w = { .co = co, .k = k, .f = f, .n = n, .ins = &out->inj.ins, .kd = &out->inj.kd,
				  .meta = out->inj.meta, .meta_len = out->inj.meta_len };
	if (amdgpu_write_object(&w, &out->obj, cause) < 0)
		return cause_wrap(cause, "writing the probed %s", k->meta->name);
	out->ms_write = instr_ms(&t);
	clock_gettime(CLOCK_MONOTONIC, &t);
	if (amdgpu_check_regions(f, n, &out->inj.ins, out->obj.elf, out->obj.len, out->proc, k->sym->name,
				 out->obj.code_len, &out->check, &out->regions, cause) < 0)
		return -1;
	out->ms_check = instr_ms(&t);
	return 0;
}

int amdgpu_instrument(const uint8_t *bytes, size_t size, const char *kernel, struct probe *const *probes, int n_probes,
		      struct amdgpu_instrumented *out, char **cause)
{
	struct amdgpu_co co;
	struct amdgpu_disasm d;
	struct timespec t;
	memset(out, 0, sizeof *out);
	if (amdgpu_co_open(bytes, size, &co, cause) < 0)
		return -1;
	const struct amdgpu_co_kernel *k = amdgpu_co_kernel(&co, kernel);
	if (!k) {
		amdgpu_co_done(&co);
		return cause_set(cause, "the code object has no kernel %s", kernel);
	}
	amdgpu_co_proc(&co, out->proc);
	clock_gettime(CLOCK_MONOTONIC, &t);
	int r = amdgpu_disasm_object(bytes, size, out->proc, &d, cause);
	out->ms_disasm = instr_ms(&t);
	if (r == 0) {
		const struct amdgpu_func *f = amdgpu_disasm_func(&d, k->sym->name);
		r = f && k->sym->code_size ? instr_kernel(&co, k, f, probes, n_probes, out, cause)
					   : cause_set(cause, "kernel %s is not in the disassembly", kernel);
		amdgpu_disasm_done(&d);
	}
	amdgpu_co_done(&co);
	if (r < 0)
		amdgpu_instrumented_done(out);
	return r;
}

void amdgpu_instrumented_done(struct amdgpu_instrumented *out)
{
	amdgpu_written_done(&out->obj);
	amdgpu_inject_done(&out->inj);
	amdgpu_regions_done(&out->regions);
	memset(out, 0, sizeof *out);
}
