/* What the traced instruction's operands mean to the helpers: BYTES (data
 * type times vector width, or the size operand of an async copy) and ADDR
 * (the global address operand, widened to 64 bits, which needs the widths
 * of the kernel's declared registers).
 *
 * Async copies (PTX ISA 9.0) name their destination state space, then the
 * source, and give the size after the two addresses:
 *   cp.async.ca.shared.global [dst], [src], cp-size{, src-size}   sm_80
 *   cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes
 *       [dst], [src], size, [mbar]{, ctaMask}{, policy}           sm_90
 *   cp.async.bulk.shared::cta.global... (same operands)           PTX 8.6
 *   cp.async.bulk.global.shared::cta.bulk_group [dst], [src], size{, policy}
 *   cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [dst], [src], size
 *   cp.async.bulk.prefetch.L2.global [src], size
 * The bulk size is a .u32 register or an immediate: BYTES stands for that
 * operand's text, so a snippet reads it like any u32 source. The tensor
 * forms (cp.async.bulk.tensor..., [tensorMap, {coords}]) have neither an
 * address nor a size; the walk skips them before asking. */
#include "engine/ptx/ptx_inject_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"

int ptx_inject_operand_type_bytes(const char *t)
{
	static const struct { const char *name; int bytes; } types[] = {
		{ "b8", 1 }, { "u8", 1 }, { "s8", 1 },
		{ "b16", 2 }, { "u16", 2 }, { "s16", 2 }, { "f16", 2 }, { "bf16", 2 },
		{ "b32", 4 }, { "u32", 4 }, { "s32", 4 }, { "f32", 4 }, { "f16x2", 4 },
		{ "bf16x2", 4 }, { "tf32", 4 },
		{ "b64", 8 }, { "u64", 8 }, { "s64", 8 }, { "f64", 8 },
		{ "b128", 16 },
	};
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
		if (!strcmp(t, types[i].name))
			return types[i].bytes;
	return 0;
}

/* cp-size (cp.async) or size (cp.async.bulk, cp.reduce.async.bulk): the
 * first plain operand after an address. A non-bulk cp.async may follow it
 * with src-size, the bytes actually read (the rest of the copy is zero
 * filled: Triton masks loads this way, src-size 0), or with the ignore-src
 * predicate, then a cache policy when .L2::cache_hint is given. src-size
 * is what the copy reads, so it is BYTES when present; a predicate (nvcc
 * and Triton name them %p<N>) is not a size. */
static int cp_async_bytes(const struct ptx_insn *insn, char *text, size_t text_len, char **cause)
{
	int seen_addr = 0, size_at = -1;
	for (int i = 0; i < insn->n_ops && size_at < 0; i++) {
		if (insn->ops[i].is_addr)
			seen_addr = 1;
		else if (seen_addr && !insn->ops[i].is_vec)
			size_at = i;
	}
	if (size_at < 0)
		return cause_set(cause, "BYTES: no size operand in '%s'", insn->opcode);
	int plain = !ptx_opcode_matches(insn->opcode, "cp.async.bulk") && !ptx_opcode_matches(insn->opcode, "cp.reduce");
	int hint = strstr(insn->opcode, "cache_hint") != NULL;
	int src_at = size_at + 1;
	const char *src = plain && src_at < insn->n_ops - hint ? insn->ops[src_at].text : NULL;
	if (src && !insn->ops[src_at].is_addr && !insn->ops[src_at].is_vec && strncmp(src, "%p", 2) && src[0] != '!')
		snprintf(text, text_len, "%s", src);
	else
		snprintf(text, text_len, "%s", insn->ops[size_at].text);
	return 0;
}

/* cp.async, cp.async.bulk and cp.reduce.async.bulk: "cp.async" matches all
 * three, since pattern parts match in order ("reduce" is skipped). */
static int is_async_copy(const char *op)
{
	return ptx_opcode_matches(op, "cp.async");
}

int ptx_inject_bytes(const struct ptx_insn *insn, char *text, size_t text_len, char **cause)
{
	const char *op = insn->opcode ? insn->opcode : "";
	if (is_async_copy(op))
		return cp_async_bytes(insn, text, text_len, cause);
	int bytes = 0, vec = 1;
	char part[32];
	for (const char *p = op; *p;) {
		size_t n = strcspn(p, ".");
		if (n < sizeof part) {
			memcpy(part, p, n);
			part[n] = 0;
			if (part[0] == 'v' && (!strcmp(part, "v2") || !strcmp(part, "v4") || !strcmp(part, "v8")))
				vec = atoi(part + 1);
			else if (ptx_inject_operand_type_bytes(part))
				bytes = ptx_inject_operand_type_bytes(part);
		}
		p += n;
		if (*p == '.')
			p++;
	}
	if (!bytes)
		return cause_set(cause, "BYTES: no data type in '%s'", op);
	snprintf(text, text_len, "%d", bytes * vec);
	return 0;
}

/* ---- kernel registers --------------------------------------------------- */

static int reg_type_bits(const char *t)
{
	if (!strcmp(t, "pred"))
		return 1;
	return ptx_inject_operand_type_bytes(t) * 8;
}

/* Adds the names of one ".reg .TYPE %a, %b<4>" declaration (p after ".reg"). */
static int kernel_regs_add(struct inj *in, const char *p, int bits)
{
	for (const char *q = strchr(p, '%'); q; q = strchr(q + 1, '%')) {
		if (q > p && q[-1] != ',' && !isspace((unsigned char)q[-1]))
			continue;
		size_t n = 1;
		while (inject_is_ident((unsigned char)q[n]))
			n++;
		if (n > 6 && !strncmp(q, "%ntop_", 6))
			return cause_set(in->cause, "%s already declares %.*s (the %%ntop_ prefix is reserved)", in->kernel->name,
					 (int)n, q);
		struct kreg *r = realloc(in->regs, (size_t)(in->n_regs + 1) * sizeof *r);
		if (!r)
			return cause_set(in->cause, "out of memory");
		in->regs = r;
		r[in->n_regs++] = (struct kreg){ q, n, q[n] == '<', bits };
	}
	return 0;
}

int ptx_inject_operand_kernel_regs(struct inj *in, const struct ptx_func *f)
{
	in->n_regs = 0;
	for (int i = 0; i < f->n_body; i++) {
		const struct ptx_stmt *s = &f->body[i];
		if (s->kind != PTX_DIRECTIVE || !s->text || strncmp(s->text, ".reg", 4) ||
		    !isspace((unsigned char)s->text[4]))
			continue;
		const char *p = inject_skip_ws(s->text + 4);
		if (!strncmp(p, ".v", 2)) /* vector registers: never addresses */
			continue;
		char type[16] = "";
		size_t tn = strcspn(p + 1, " \t%");
		if (*p == '.' && tn < sizeof type) {
			memcpy(type, p + 1, tn);
			type[tn] = 0;
		}
		if (kernel_regs_add(in, p, reg_type_bits(type)) < 0)
			return -1;
	}
	return 0;
}

static int kreg_bits(const struct inj *in, const char *name, size_t len)
{
	for (int i = 0; i < in->n_regs; i++) {
		const struct kreg *r = &in->regs[i];
		if (len < r->len || memcmp(name, r->name, r->len))
			continue;
		if (len == r->len && !r->range)
			return r->bits;
		size_t k = r->len;
		while (r->range && k < len && isdigit((unsigned char)name[k]))
			k++;
		if (r->range && k == len && len > r->len)
			return r->bits;
	}
	return 0;
}

/* ---- ADDR --------------------------------------------------------------- */

/* Which operand holds the traced instruction's memory address. For async
 * copies the global side: the source of global->shared copies (the first
 * space named is the destination), the destination of bulk shared->global
 * copies and reductions, the only address of the L2 prefetch. A
 * shared->shared copy has no global side and gives its destination. */
static const struct ptx_operand *addr_operand(const struct ptx_insn *insn)
{
	int want = 0;
	if (is_async_copy(insn->opcode)) {
		const char *g = strstr(insn->opcode, ".global");
		const char *s = strstr(insn->opcode, ".shared");
		want = g && s && s < g ? 1 : 0;
	}
	for (int i = 0; i < insn->n_ops; i++)
		if (insn->ops[i].is_addr && want-- == 0)
			return &insn->ops[i];
	return NULL;
}

/* "[%rd1+8]" -> base "%rd1" (bn bytes, terminated) and *off pointing at
 * the offset after '+' or at a '-' (NULL for none), both inside `base`. */
/* Splits "[%rd1+8]" / "[%rd1-8]" / "[sym+4]" into the base (in `base`) and
 * the signed offset (copied to `off`, "" when there is none). */
static int addr_split(struct inj *in, const struct ptx_insn *insn, char *base, size_t size,
		      size_t *bn, char *off, size_t off_size)
{
	const struct ptx_operand *op = addr_operand(insn);
	if (!op || !op->text)
		return cause_set(in->cause, "ADDR: '%s' has no memory operand", insn->opcode);
	size_t o = 0;
	for (const char *p = op->text; *p && o + 1 < size; p++)
		if (*p != '[' && *p != ']' && !isspace((unsigned char)*p))
			base[o++] = *p;
	base[o] = 0;
	if (!base[0] || strchr(base, ',') || strchr(base, '{'))
		return cause_set(in->cause, "ADDR: cannot use memory operand %s of '%s'", op->text, insn->opcode);
	size_t n = 1;
	while (base[n] && base[n] != '+' && base[n] != '-')
		n++;
	const char *o_start = base[n] == '+' ? base + n + 1 : base[n] == '-' ? base + n : NULL;
	if (o_start && (!*o_start || !strcmp(o_start, "-")))
		return cause_set(in->cause, "ADDR: bad offset in %s", op->text);
	snprintf(off, off_size, "%s", o_start ? o_start : "");
	base[n] = 0;
	*bn = n;
	return 0;
}

int ptx_inject_operand_addr(struct inj *in, struct strbuf *sb, const struct ptx_insn *insn)
{
	char base[256], off[256];
	size_t bn = 0;
	if (addr_split(in, insn, base, sizeof base, &bn, off, sizeof off) < 0)
		return -1;
	if (base[0] == '%') {
		int bits = kreg_bits(in, base, bn);
		if (bits != 32 && bits != 64)
			return cause_set(in->cause, "ADDR: address register %s of '%s' is not a declared 32/64-bit register",
					 base, insn->opcode);
		strbuf_puts(sb, bits == 32 ? "cvt.u64.u32 %ntop_addr, " : "mov.b64 %ntop_addr, ");
	} else {
		strbuf_puts(sb, "mov.u64 %ntop_addr, ");
	}
	strbuf_puts(sb, base);
	strbuf_puts(sb, ";\n");
	if (off[0]) {
		strbuf_puts(sb, "add.s64 %ntop_addr, %ntop_addr, ");
		strbuf_puts(sb, off);
		strbuf_puts(sb, ";\n");
	}
	return 0;
}
