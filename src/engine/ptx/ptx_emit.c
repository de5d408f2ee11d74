/* Writes a module model back as PTX text. Statements are written from their
 * text, so an untouched parse assembles like the original; a statement the
 * instrumenter built without text is formatted from its parts. */
#include "engine/ptx/ptx.h"
#include "engine/ptx/ptx_int.h"

#include "common/strbuf.h"

#include <string.h>

static void ptx_emit_insn(struct strbuf *sb, const struct ptx_insn *in)
{
	if (in->pred)
		strbuf_printf(sb, "@%s ", in->pred);
	strbuf_puts(sb, in->opcode ? in->opcode : "");
	for (int i = 0; i < in->n_ops; i++) {
		strbuf_puts(sb, i ? ", " : " ");
		strbuf_puts(sb, in->ops[i].text);
	}
	strbuf_puts(sb, ";");
}

static void ptx_emit_stmt(struct strbuf *sb, const struct ptx_stmt *s)
{
	if (s->kind != PTX_LABEL)
		strbuf_puts(sb, "\t");
	if (s->text)
		strbuf_puts(sb, s->text);
	else if (s->kind == PTX_INSN)
		ptx_emit_insn(sb, &s->insn);
	else if (s->kind == PTX_OPEN || s->kind == PTX_CLOSE)
		strbuf_puts(sb, s->kind == PTX_OPEN ? "{" : "}");
	strbuf_puts(sb, "\n");
}

void ptx_emit_func_tail(struct strbuf *sb, const struct ptx_func *f)
{
	if (f->has_param_list || f->n_params) {
		strbuf_puts(sb, "(\n");
		for (int i = 0; i < f->n_params; i++)
			strbuf_printf(sb, "\t%s%s\n", f->params[i], i + 1 < f->n_params ? "," : "");
		strbuf_puts(sb, ")");
	}
	if (f->suffix && *f->suffix)
		strbuf_printf(sb, "\n%s", f->suffix);
}

static void ptx_emit_func(struct strbuf *sb, const struct ptx_func *f)
{
	strbuf_puts(sb, f->prefix);
	ptx_emit_func_tail(sb, f);
	if (f->is_decl) {
		strbuf_puts(sb, "\n;\n");
		return;
	}
	strbuf_puts(sb, "\n{\n");
	for (int i = 0; i < f->n_body; i++)
		ptx_emit_stmt(sb, &f->body[i]);
	strbuf_puts(sb, "}\n");
}

char *ptx_emit(const struct ptx_module *m, size_t *len)
{
	struct strbuf sb;
	strbuf_init(&sb);
	for (int i = 0; i < m->n_items; i++) {
		const struct ptx_top *t = &m->items[i];
		if (t->kind == PTX_TOP_FUNC) {
			strbuf_puts(&sb, "\n");
			ptx_emit_func(&sb, t->func);
		} else {
			strbuf_puts(&sb, t->text);
			strbuf_puts(&sb, "\n");
		}
	}
	return strbuf_finish(&sb, len);
}
