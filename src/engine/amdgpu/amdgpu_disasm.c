/* llvm-objdump output to functions of instructions (see amdgpu_disasm.h).
 * Lines read (LLVM 19):
 *   "0000000000001a64 <NAME>:"    a function, or label Lk inside one
 *   "\tTEXT   // 000000001A64: E0501000 80000503"   an instruction: its
 *                                 address and little-endian 32-bit words
 * Everything else (headers, blank lines) is skipped. */
#include "engine/amdgpu/amdgpu_disasm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"
#include "engine/amdgpu/amdgpu_target.h"
#include "engine/amdgpu/llvm_tool.h"

#define GETPC_WINDOW 6 /* instructions after s_getpc_b64 searched for its adds */

static struct amdgpu_func *disasm_new_func(struct amdgpu_disasm *d, const char *name, size_t len, uint64_t addr)
{
	if (d->n == d->cap) {
		int cap = d->cap ? d->cap * 2 : 16;
		struct amdgpu_func *v = realloc(d->f, (size_t)cap * sizeof *v);
		if (!v)
			return NULL;
		d->f = v;
		d->cap = cap;
	}
	struct amdgpu_func *f = &d->f[d->n];
	memset(f, 0, sizeof *f);
	f->name = strndup(name, len);
	f->addr = addr;
	if (!f->name)
		return NULL;
	d->n++;
	return f;
}

static struct amdgpu_insn *disasm_new_insn(struct amdgpu_func *f)
{
	if (f->n == f->cap) {
		int cap = f->cap ? f->cap * 2 : 64;
		struct amdgpu_insn *v = realloc(f->v, (size_t)cap * sizeof *v);
		if (!v)
			return NULL;
		f->v = v;
		f->cap = cap;
	}
	struct amdgpu_insn *in = &f->v[f->n++];
	memset(in, 0, sizeof *in);
	in->label = -1;
	return in;
}

/* "0000000000001a64 <NAME>:" -> function or label. */
static int disasm_header(struct amdgpu_disasm *d, const char *line, struct amdgpu_func **cur, int *pending,
			 char **cause)
{
	char *end;
	unsigned long long addr = strtoull(line, &end, 16);
	size_t n = strlen(end);
	if (end - line != 16 || strncmp(end, " <", 2) || n < 4 || strcmp(end + n - 2, ">:"))
		return 0;
	const char *name = end + 2;
	size_t len = n - 4;
	if (*cur && len >= 2 && name[0] == 'L' && strspn(name + 1, "0123456789") == len - 1) {
		*pending = atoi(name + 1);
		return 0;
	}
	*cur = disasm_new_func(d, name, len, addr);
	*pending = -1;
	return *cur ? 0 : cause_set(cause, "out of memory disassembling");
}

/* "\tTEXT    // 00000000190C: 7E040B01 ..." */
static int disasm_insn(struct amdgpu_func *f, char *line, int *pending, char **cause)
{
	char *cmt = strstr(line, "// ");
	if (!cmt)
		return 0;
	char *end;
	unsigned long long addr = strtoull(cmt + 3, &end, 16);
	if (*end != ':')
		return 0;
	struct amdgpu_insn *in = disasm_new_insn(f);
	if (!in)
		return cause_set(cause, "out of memory disassembling");
	in->addr = addr;
	for (char *w = end + 1; *w;) {
		while (*w == ' ')
			w++;
		char *we;
		unsigned long word = strtoul(w, &we, 16);
		if (we - w != 8)
			break;
		if (in->size + 4 > AMDGPU_INSN_MAX)
			return cause_set(cause, "instruction at 0x%llx longer than %d bytes", addr, AMDGPU_INSN_MAX);
		for (int b = 0; b < 4; b++)
			in->bytes[in->size++] = (uint8_t)(word >> (8 * b));
		w = we;
	}
	if (in->size == 0)
		return cause_set(cause, "no encoding for the instruction at 0x%llx", addr);
	char *t = line;
	while (*t == '\t' || *t == ' ')
		t++;
	char *te = cmt;
	while (te > t && (te[-1] == ' ' || te[-1] == '\t'))
		te--;
	in->text = strndup(t, (size_t)(te - t));
	in->label = *pending;
	*pending = -1;
	return in->text ? 0 : cause_set(cause, "out of memory disassembling");
}

static uint32_t disasm_literal(const struct amdgpu_insn *in)
{
	return (uint32_t)in->bytes[4] | (uint32_t)in->bytes[5] << 8 | (uint32_t)in->bytes[6] << 16 |
	       (uint32_t)in->bytes[7] << 24;
}

/* "s_add_u32 s4, s4, ..." on register r with a 32-bit literal? */
static int disasm_is_add(const struct amdgpu_insn *in, const char *op, int r)
{
	char want[48];
	snprintf(want, sizeof want, "%s s%d, s%d, ", op, r, r);
	return in->size == 8 && strncmp(in->text, want, strlen(want)) == 0;
}

static void disasm_units(struct amdgpu_func *f)
{
	for (int i = 0; i < f->n; i++) {
		int lo_r, hi_r;
		if (sscanf(f->v[i].text, "s_getpc_b64 s[%d:%d]", &lo_r, &hi_r) != 2 || hi_r != lo_r + 1)
			continue;
		int lo = -1, hi = -1;
		for (int j = i + 1; j < f->n && j <= i + GETPC_WINDOW && (lo < 0 || hi < 0); j++) {
			/* gfx12 spells them s_add_co_u32 / s_add_co_ci_u32 */
			if (lo < 0 && (disasm_is_add(&f->v[j], "s_add_u32", lo_r) ||
				       disasm_is_add(&f->v[j], "s_add_co_u32", lo_r)))
				lo = j;
			else if (hi < 0 && (disasm_is_add(&f->v[j], "s_addc_u32", hi_r) ||
					    disasm_is_add(&f->v[j], "s_add_co_ci_u32", hi_r)))
				hi = j;
		}
		if (lo < 0 || hi < 0 || hi < lo)
			continue;
		uint64_t pc = f->v[i].addr + f->v[i].size;
		int64_t off = (int64_t)((uint64_t)disasm_literal(&f->v[hi]) << 32 | disasm_literal(&f->v[lo]));
		int u = f->units++;
		f->v[i].getpc = AMDGPU_GETPC_GET;
		f->v[lo].getpc = AMDGPU_GETPC_LO;
		f->v[hi].getpc = AMDGPU_GETPC_HI;
		f->v[i].unit = f->v[lo].unit = f->v[hi].unit = u;
		f->v[lo].target = f->v[hi].target = pc + (uint64_t)off;
	}
}

int amdgpu_disasm_parse(char *text, struct amdgpu_disasm *d, char **cause)
{
	struct amdgpu_func *cur = NULL;
	int pending = -1;
	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		int r = 0;
		if (line[0] >= '0' && line[0] <= '9')
			r = disasm_header(d, line, &cur, &pending, cause);
		else if (line[0] == '\t' && cur)
			r = disasm_insn(cur, line, &pending, cause);
		if (r < 0)
			return -1;
	}
	for (int i = 0; i < d->n; i++)
		disasm_units(&d->f[i]);
	return 0;
}

int amdgpu_disasm_object(const uint8_t *co, size_t size, const char *proc, struct amdgpu_disasm *d,
			 char **cause)
{
	memset(d, 0, sizeof *d);
	snprintf(d->mcpu, sizeof d->mcpu, "%s", proc);
	char dir[LLVM_TOOL_DIR_MAX], in[LLVM_TOOL_DIR_MAX + 16], out[LLVM_TOOL_DIR_MAX + 16],
		err[LLVM_TOOL_DIR_MAX + 16], mcpu[48], mattr[48];
	if (llvm_tool_tmpdir(dir, cause) < 0)
		return -1;
	snprintf(in, sizeof in, "%s/in.co", dir);
	snprintf(out, sizeof out, "%s/out.s", dir);
	snprintf(err, sizeof err, "%s/err", dir);
	amdgpu_target_tool_args(proc, mcpu, mattr);
	char *argv[] = { "llvm-objdump", "-d", "--symbolize-operands", mcpu, in, mattr[0] ? mattr : NULL, NULL };
	int r = llvm_tool_write(in, co, size, cause);
	if (r == 0)
		r = llvm_tool_run("llvm-objdump", argv, out, err, cause);
	char *text = r == 0 ? llvm_tool_slurp(out, NULL) : NULL;
	if (r == 0 && !text)
		r = cause_set(cause, "cannot read llvm-objdump's output");
	if (r == 0)
		r = amdgpu_disasm_parse(text, d, cause);
	free(text);
	llvm_tool_rmdir(dir);
	if (r < 0)
		amdgpu_disasm_done(d);
	return r;
}

void amdgpu_disasm_done(struct amdgpu_disasm *d)
{
	for (int i = 0; i < d->n; i++) {
		for (int k = 0; k < d->f[i].n; k++)
			free(d->f[i].v[k].text);
		free(d->f[i].v);
		free(d->f[i].name);
	}
	free(d->f);
	memset(d, 0, sizeof *d);
}

const struct amdgpu_func *amdgpu_disasm_func(const struct amdgpu_disasm *d, const char *name)
{
	for (int i = 0; i < d->n; i++)
		if (strcmp(d->f[i].name, name) == 0)
			return &d->f[i];
	return NULL;
}
