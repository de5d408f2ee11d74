/* The kernel's own body, kept beside the probed one for the blocks block
 * sampling does not keep (engine.h). Blocks not kept store nothing, yet a
 * probed body still costs them: every clock read and hook branch splits
 * the code ptxas schedules, and a pipelined loop (a Triton matmul) loses
 * ~20% with every record store predicated off. So when every map of the
 * kernel can be sampled, the prologue tests the kept-block predicate
 * first and the blocks not kept branch to a copy of the original body at
 * the end of the kernel: labels renamed, top-level declarations left out
 * (the probed body declares them), nothing added. Not done when the copy
 * could not be the original code: a call into an instrumented .func (its
 * signature gained the context), an indirect branch or call (their target
 * tables name labels). Every block in the probed body is then kept, so its
 * hooks test nothing more. */
#include "engine/ptx/ptx_inject_int.h"

#include <stdio.h>
#include <string.h>

#include "common/cause.h"

#define PLAIN_SUFFIX "_ntop_plain"

static int starts_with(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

static int blocks_copy(const struct inj *in, const struct ptx_stmt *s)
{
	if (s->kind == PTX_DIRECTIVE)
		return strstr(s->text, ".branchtargets") || strstr(s->text, ".callprototype") ||
		       strstr(s->text, ".calltargets");
	if (s->kind != PTX_INSN || !s->insn.opcode)
		return 0;
	return ptx_opcode_matches(s->insn.opcode, "brx") || ptx_inject_func_callee(in, &s->insn) != NULL;
}

int ptx_inject_plain_wanted(const struct inj *in)
{
	const struct ptx_func *f = in->kernel;
	if (in->n_maps == 0)
		return 0;
	for (int i = 0; i < in->n_maps; i++)
		if (!in->maps[i].sampled)
			return 0;
	for (int i = 0; i < f->n_body; i++)
		if (blocks_copy(in, &f->body[i]))
			return 0;
	return 1;
}

/* Every sampled map of a launch carries the same shift (the hook's), so
 * map 0's kept-block test stands for all of them. */
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

static void copy_insn(struct strbuf *sb, const struct ptx_insn *x, const char *text)
{
	if (!x->opcode || !ptx_opcode_matches(x->opcode, "bra") || x->n_ops != 1) {
		strbuf_printf(sb, "%s\n", text);
		return;
	}
	if (x->pred)
		strbuf_printf(sb, "@%s ", x->pred);
	strbuf_printf(sb, "%s %s" PLAIN_SUFFIX ";\n", x->opcode, x->ops[0].text);
}

int ptx_inject_plain_emit(struct inj *in, struct strbuf *sb)
{
	const struct ptx_func *f = in->kernel;
	int depth = 0;
	strbuf_puts(sb, "ret;\n$ntop_plain:\n");
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
			copy_label(sb, s->text);
			break;
		case PTX_DIRECTIVE:
			if (depth > 0 || !is_top_decl(s->text))
				strbuf_printf(sb, "%s\n", s->text);
			break;
		case PTX_INSN:
			copy_insn(sb, &s->insn, s->text);
			break;
		}
	}
	return sb->failed ? cause_set(in->cause, "out of memory") : 0;
}
