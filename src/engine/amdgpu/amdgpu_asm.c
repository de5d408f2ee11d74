/* Reassembly through llvm-mc (see amdgpu_asm.h). Symbols the text defines
 * for the patch step: ntop_pcU right after unit U's s_getpc_b64 (the PC it
 * reads) and ntop_loU / ntop_hiU at its two adds. */
#include "engine/amdgpu/amdgpu_asm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"
#include "common/strbuf.h"
#include "engine/amdgpu/amdgpu_elf.h"
#include "engine/image/elf_image.h"
#include "engine/amdgpu/llvm_tool.h"

int amdgpu_asm_count(const struct amdgpu_func *f, uint64_t size)
{
	int n = 0;
	while (n < f->n && f->v[n].addr + f->v[n].size <= f->addr + size)
		n++;
	return n;
}

static void asm_words(struct strbuf *sb, const struct amdgpu_insn *in)
{
	for (uint32_t b = 0; b + 4 <= in->size; b += 4)
		strbuf_printf(sb, "\t.long 0x%02x%02x%02x%02x\n", in->bytes[b + 3], in->bytes[b + 2],
			       in->bytes[b + 1], in->bytes[b]);
}

int amdgpu_asm_branch_label(const struct amdgpu_insn *in)
{
	if (strncmp(in->text, "s_branch ", 9) && strncmp(in->text, "s_cbranch_", 10))
		return -1;
	const char *sp = strchr(in->text, ' ');
	if (!sp)
		return -1;
	return sp[1] == 'L' && sp[2] && strspn(sp + 2, "0123456789") == strlen(sp + 2) ? atoi(sp + 2) : -1;
}

int amdgpu_asm_movable(const struct amdgpu_func *f, int n, char **cause)
{
	for (int i = 0; i < n; i++) {
		const char *t = f->v[i].text;
		/* objdump prints a word it cannot decode as .long and goes on at
		 * the next word, so what follows may be an operand read as an
		 * instruction: neither registers nor insertion points are known */
		if (!strncmp(t, ".long ", 6))
			return cause_set(cause, "word %s at 0x%llx: LLVM 19's disassembler cannot decode it (not instrumented)",
					 t + 6, (unsigned long long)f->v[i].addr);
		if ((!strncmp(t, "s_branch ", 9) || !strncmp(t, "s_cbranch_", 10)) && amdgpu_asm_branch_label(&f->v[i]) < 0)
			return cause_set(cause, "%s at 0x%llx: a branch out of the function (not instrumented)", t,
					 (unsigned long long)f->v[i].addr);
	}
	return 0;
}

const char *amdgpu_asm_diff_field(const struct amdgpu_insn *in, const uint8_t *got, enum amdgpu_family f)
{
	if (memcmp(in->bytes, got, in->size) == 0)
		return NULL;
	if (f >= AMDGPU_FAMILY_GFX10_1 && strncmp(in->text, "v_cmpx_", 7) == 0 && strstr(in->text, "_e64 ") &&
	    in->size >= 8 && memcmp(in->bytes + 1, got + 1, in->size - 1) == 0)
		return "vopc_cmpx_vdst";
	return "";
}

char *amdgpu_asm_text(const struct amdgpu_func *f, int n, const struct amdgpu_asm_ins *ins,
		      enum amdgpu_asm_mode mode)
{
	struct strbuf sb;
	strbuf_init(&sb);
	strbuf_puts(&sb, "\t.text\n");
	if (ins && ins->prologue)
		strbuf_printf(&sb, "%s\n", ins->prologue);
	for (int i = 0; i < n; i++) {
		const struct amdgpu_insn *in = &f->v[i];
		if (in->label >= 0)
			strbuf_printf(&sb, "L%d:\n", in->label);
		if (ins && ins->before && ins->before[i])
			strbuf_printf(&sb, "%s\n", ins->before[i]);
		if (ins && ins->replace && ins->replace[i]) {
			strbuf_printf(&sb, "%s\n", ins->replace[i]);
			continue;
		}
		switch (in->getpc) {
		case AMDGPU_GETPC_GET:
			strbuf_printf(&sb, "\t%s\nntop_pc%d:\n", in->text, in->unit);
			break;
		case AMDGPU_GETPC_LO:
		case AMDGPU_GETPC_HI:
			strbuf_printf(&sb, "ntop_%s%d:\n", in->getpc == AMDGPU_GETPC_LO ? "lo" : "hi", in->unit);
			asm_words(&sb, in);
			break;
		default:
			if (mode == AMDGPU_ASM_WORDS && amdgpu_asm_branch_label(in) < 0)
				asm_words(&sb, in);
			else
				strbuf_printf(&sb, "\t%s\n", in->text);
		}
	}
	return strbuf_finish(&sb, NULL);
}

static void asm_put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Recomputes every unit's literals for code placed at base. */
static int asm_patch_units(const struct amdgpu_func *f, int n, const uint8_t *obj, size_t obj_len, uint8_t *code,
			   size_t len, uint64_t base, char **cause)
{
	for (int i = 0; i < n; i++) {
		const struct amdgpu_insn *in = &f->v[i];
		if (in->getpc != AMDGPU_GETPC_LO && in->getpc != AMDGPU_GETPC_HI)
			continue;
		char pc_name[32], at_name[32];
		snprintf(pc_name, sizeof pc_name, "ntop_pc%d", in->unit);
		snprintf(at_name, sizeof at_name, "ntop_%s%d", in->getpc == AMDGPU_GETPC_LO ? "lo" : "hi", in->unit);
		uint64_t pc, at;
		if (amdgpu_elf_symbol(obj, obj_len, pc_name, &pc, cause) != 0 ||
		    amdgpu_elf_symbol(obj, obj_len, at_name, &at, cause) != 0)
			return cause_set(cause, "assembler output lacks the s_getpc_b64 unit %d's symbols", in->unit);
		if (at + 8 > len)
			return cause_set(cause, "s_getpc_b64 unit %d outside the assembled code", in->unit);
		uint64_t off = in->target - (base + pc);
		asm_put32(code + at + 4, in->getpc == AMDGPU_GETPC_LO ? (uint32_t)off : (uint32_t)(off >> 32));
	}
	return 0;
}

static int asm_extract(const struct amdgpu_func *f, int n, const uint8_t *obj, size_t obj_len, uint64_t base,
		       uint8_t **code, size_t *len, char **cause)
{
	const uint8_t *text;
	size_t text_len;
	int r = elf_image_section(obj, obj_len, ".text", &text, &text_len, cause);
	if (r != 0)
		return r < 0 ? -1 : cause_set(cause, "llvm-mc's output has no .text");
	*code = malloc(text_len ? text_len : 1);
	if (!*code)
		return cause_set(cause, "out of memory reassembling");
	memcpy(*code, text, text_len);
	*len = text_len;
	r = asm_patch_units(f, n, obj, obj_len, *code, text_len, base, cause);
	if (r < 0) {
		free(*code);
		*code = NULL;
	}
	return r;
}

/* llvm-mc on `text` for `proc`: the object file's bytes (malloc'd). */
static uint8_t *asm_run(const char *text, const char *proc, size_t *obj_len, char **cause)
{
	char dir[LLVM_TOOL_DIR_MAX], src[LLVM_TOOL_DIR_MAX + 16], obj[LLVM_TOOL_DIR_MAX + 16],
		err[LLVM_TOOL_DIR_MAX + 16], mcpu[48], mattr[48], out_opt[LLVM_TOOL_DIR_MAX + 32];
	if (llvm_tool_tmpdir(dir, cause) < 0)
		return NULL;
	snprintf(src, sizeof src, "%s/in.s", dir);
	snprintf(obj, sizeof obj, "%s/out.o", dir);
	snprintf(err, sizeof err, "%s/err", dir);
	amdgpu_target_tool_args(proc, mcpu, mattr);
	snprintf(out_opt, sizeof out_opt, "-o=%s", obj);
	char *argv[] = { "llvm-mc", "-triple=amdgcn-amd-amdhsa", mcpu, "-filetype=obj", out_opt, src,
			 mattr[0] ? mattr : NULL, NULL };
	uint8_t *bytes = NULL;
	if (llvm_tool_write(src, text, strlen(text), cause) == 0 && llvm_tool_run("llvm-mc", argv, err, err, cause) == 0) {
		bytes = (uint8_t *)llvm_tool_slurp(obj, obj_len);
		if (!bytes)
			cause_set(cause, "cannot read llvm-mc's output");
	}
	llvm_tool_rmdir(dir);
	return bytes;
}

int amdgpu_asm_func(const struct amdgpu_func *f, int n, const struct amdgpu_asm_ins *ins, enum amdgpu_asm_mode mode,
		    const char *proc, uint64_t base, uint8_t **code, size_t *len, char **cause)
{
	char *text = amdgpu_asm_text(f, n, ins, mode);
	if (!text)
		return cause_set(cause, "out of memory reassembling");
	size_t obj_len = 0;
	uint8_t *obj = asm_run(text, proc, &obj_len, cause);
	free(text);
	if (!obj)
		return -1;
	int r = asm_extract(f, n, obj, obj_len, base, code, len, cause);
	free(obj);
	return r;
}

int amdgpu_asm_blocks(const char *const *texts, int n, const char *proc, uint8_t **code, size_t *len, size_t *off,
		      char **cause)
{
	struct strbuf sb;
	strbuf_init(&sb);
	strbuf_puts(&sb, "\t.text\n");
	for (int i = 0; i < n; i++)
		strbuf_printf(&sb, "ntop_block%d:\n%s\n", i, texts[i] ? texts[i] : "");
	strbuf_printf(&sb, "ntop_block%d:\n", n);
	char *text = strbuf_finish(&sb, NULL);
	if (!text)
		return cause_set(cause, "out of memory assembling");
	size_t obj_len = 0;
	uint8_t *obj = asm_run(text, proc, &obj_len, cause);
	free(text);
	if (!obj)
		return -1;
	const uint8_t *t = NULL;
	size_t t_len = 0;
	int r = elf_image_section(obj, obj_len, ".text", &t, &t_len, cause);
	if (r > 0) { /* nothing assembled: no .text */
		r = 0;
		t_len = 0;
	}
	for (int i = 0; r >= 0 && i <= n; i++) {
		char name[32];
		uint64_t v;
		snprintf(name, sizeof name, "ntop_block%d", i);
		if (amdgpu_elf_symbol(obj, obj_len, name, &v, cause) != 0 || v > t_len)
			r = cause_set(cause, "assembler output lacks block %d", i);
		else
			off[i] = (size_t)v;
	}
	if (r >= 0) {
		*code = malloc(t_len ? t_len : 1);
		if (!*code)
			r = cause_set(cause, "out of memory assembling");
		else if (t_len)
			memcpy(*code, t, t_len);
		*len = t_len;
	}
	free(obj);
	return r < 0 ? -1 : 0;
}
