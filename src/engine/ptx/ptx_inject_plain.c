/* The kernel's own body, kept beside the probed one for the blocks block
 * sampling does not keep (engine.h). Blocks not kept store nothing, yet a
 * probed body still costs them: every clock read and hook branch splits
 * the code ptxas schedules, and a pipelined loop (a Triton matmul) loses
 * ~20% with every record store predicated off. So when every map of the
 * kernel is sampled the same way (all slot-major: 1 block in 2^s; all warp
 * maps: the first blocks), the prologue tests the kept-block predicate
 * first and the blocks not kept branch to a copy of the original body at
 * the end of the kernel: labels renamed, top-level declarations left out
 * (the probed body declares them), nothing added. A call into an
 * instrumented .func (whose signature gained the context) goes to a copy
 * of that function's original text, NAME_ntop_plain, put before the kernel
 * with the others (declared first, so that they may call each other). Not
 * done when the kernel has an indirect branch or call (their target tables
 * name labels). Every block in the probed body is then kept, so its hooks
 * test nothing more. */
#include "engine/ptx/ptx_inject_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"
#include "engine/ptx/ptx_int.h"

#define PLAIN_SUFFIX "_ntop_plain"

static int starts_with(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

static int blocks_copy(const struct ptx_stmt *s)
{
	if (s->kind == PTX_DIRECTIVE)
		return strstr(s->text, ".branchtargets") || strstr(s->text, ".callprototype") ||
		       strstr(s->text, ".calltargets");
	return s->kind == PTX_INSN && s->insn.opcode && ptx_opcode_matches(s->insn.opcode, "brx");
}

/* Where f's name stands in its prefix (".func (.param .b32 r) NAME"). */
static const char *name_in_prefix(const struct ptx_func *f)
{
	const char *at = NULL;
	for (const char *p = f->prefix; p && (p = strstr(p, f->name)); p++)
		at = p;
	return at;
}

int ptx_inject_plain_wanted(const struct inj *in)
{
	const struct ptx_func *f = in->kernel;
	if (in->n_maps == 0)
		return 0;
	for (int i = 0; i < in->n_maps; i++) /* one kept-block test for all (ptx_inject_plain_branch) */
		if (!in->maps[i].sampled || in->maps[i].slot_major != in->maps[0].slot_major)
			return 0;
	for (int i = 0; i < f->n_body; i++)
		if (blocks_copy(&f->body[i]))
			return 0;
	for (int t = 0; t < in->mod->n_items; t++)
		if (in->probed[t] && !name_in_prefix(in->mod->items[t].func))
			return 0;
	return 1;
}

/* Every sampled map of a launch carries the same shift (the hook's), and
 * ptx_inject_plain_wanted asked them to keep blocks the same way, so map
 * 0's kept-block test stands for all of them. */
void ptx_inject_plain_branch(struct inj *in, struct strbuf *sb)
{
	struct site st = ptx_inject_site_at(SITE_ENTRY, NULL);
	ptx_inject_unit_sampled(in, sb, &st, 0, "%ntop_ok");
	strbuf_puts(sb, "@!%ntop_ok bra $ntop_plain;\n");
}

/* A declaration at the body's top level: the probed body has it. */
static int is_top_decl(const char *text)
{
	static const char *const decl[] = { ".reg", ".local", ".shared", ".param", ".const", ".global", ".tex",
					    ".surfref", ".texref", ".samplerref", NULL };
	const char *t = inject_skip_ws(text);
	for (int i = 0; decl[i]; i++)
		if (starts_with(t, decl[i]))
			return 1;
	return 0;
}

/* A label statement renamed: "$L__BB0_4" of "$L__BB0_4:" and the suffix. */
static void copy_label(struct strbuf *sb, const char *text)
{
	const char *t = inject_skip_ws(text);
	strbuf_printf(sb, "%.*s" PLAIN_SUFFIX ":\n", (int)strcspn(t, ": \t"), t);
}

/* x written again with operand `op` renamed (a branch's label, a call's
 * instrumented callee). */
static void copy_renamed(struct strbuf *sb, const struct ptx_insn *x, int op)
{
	if (x->pred)
		strbuf_printf(sb, "@%s ", x->pred);
	strbuf_puts(sb, x->opcode);
	for (int i = 0; i < x->n_ops; i++)
		strbuf_printf(sb, "%s%s%s", i ? ", " : " ", x->ops[i].text, i == op ? PLAIN_SUFFIX : "");
	strbuf_puts(sb, ";\n");
}

static void copy_insn(const struct inj *in, struct strbuf *sb, const struct ptx_stmt *s, int labels)
{
	const struct ptx_insn *x = &s->insn;
	const struct ptx_func *callee = x->opcode ? ptx_inject_func_callee(in, x) : NULL;
	for (int i = 0; callee && i < x->n_ops; i++)
		if (!strcmp(x->ops[i].text, callee->name)) {
			copy_renamed(sb, x, i);
			return;
		}
	if (labels && x->opcode && ptx_opcode_matches(x->opcode, "bra") && x->n_ops == 1)
		copy_renamed(sb, x, 0);
	else
		strbuf_printf(sb, "%s\n", s->text);
}

/* f's body; the kernel's (labels = 1) with labels renamed and top-level
 * declarations left out. */
static void copy_body(const struct inj *in, struct strbuf *sb, const struct ptx_func *f, int labels)
{
	int depth = 0;
	for (int i = 0; i < f->n_body; i++) {
		const struct ptx_stmt *s = &f->body[i];
		switch (s->kind) {
		case PTX_OPEN:
			depth++;
			strbuf_puts(sb, "{\n");
			break;
		case PTX_CLOSE:
			depth--;
			strbuf_puts(sb, "}\n");
			break;
		case PTX_LABEL:
			if (labels)
				copy_label(sb, s->text);
			else
				strbuf_printf(sb, "%s\n", s->text);
			break;
		case PTX_DIRECTIVE:
			if (!labels || depth > 0 || !is_top_decl(s->text))
				strbuf_printf(sb, "%s\n", s->text);
			break;
		case PTX_INSN:
			copy_insn(in, sb, s, labels);
			break;
		}
	}
}

/* An instrumented .func's original head under its copy's name. */
static void copy_func_head(struct strbuf *sb, const struct ptx_func *f)
{
	const char *at = name_in_prefix(f);
	strbuf_printf(sb, "%.*s%s" PLAIN_SUFFIX "%s", (int)(at - f->prefix), f->prefix, f->name, at + strlen(f->name));
	ptx_emit_func_tail(sb, f);
}

/* The instrumented functions' original copies, declared, then defined. */
static void copy_funcs(struct inj *in)
{
	for (int pass = 0; pass < 2; pass++)
		for (int t = 0; t < in->mod->n_items; t++) {
			const struct ptx_func *f = in->mod->items[t].func;
			if (!in->probed[t])
				continue;
			copy_func_head(&in->plain_funcs, f);
			if (pass == 0) {
				strbuf_puts(&in->plain_funcs, ";\n");
				continue;
			}
			strbuf_puts(&in->plain_funcs, "\n{\n");
			copy_body(in, &in->plain_funcs, f, 0);
			strbuf_puts(&in->plain_funcs, "}\n");
		}
}

int ptx_inject_plain_emit(struct inj *in, struct strbuf *sb)
{
	strbuf_puts(sb, "ret;\n$ntop_plain:\n");
	copy_body(in, sb, in->kernel, 1);
	copy_funcs(in);
	return sb->failed || in->plain_funcs.failed ? cause_set(in->cause, "out of memory") : 0;
}

int ptx_inject_plain_funcs(struct inj *in)
{
	if (!in->plain_funcs.len)
		return 0;
	int k = 0;
	while (k < in->mod->n_items && in->mod->items[k].func != in->kernel)
		k++;
	struct ptx_top *items = realloc(in->mod->items, (size_t)(in->mod->n_items + 1) * sizeof *items);
	if (!items)
		return cause_set(in->cause, "out of memory");
	in->mod->items = items;
	memmove(&items[k + 1], &items[k], (size_t)(in->mod->n_items - k) * sizeof *items);
	memset(&items[k], 0, sizeof *items);
	items[k].kind = PTX_TOP_DIRECTIVE;
	items[k].text = strbuf_finish(&in->plain_funcs, NULL);
	in->mod->n_items++;
	return items[k].text ? 0 : cause_set(in->cause, "out of memory");
}
