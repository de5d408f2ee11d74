/* New bodies, for the kernel and each instrumented .func. One pass over a
 * body's statements builds a new array: original statements are moved over
 * unchanged, and the code we add goes in as extra statements (kind
 * PTX_DIRECTIVE, one per inserted chunk of lines, insn fields empty) so
 * ptx_emit writes them from their text like any other statement. A probed
 * instruction with a guard sits inside a predicate skip, so predicated-off
 * instructions record nothing. Before an instruction, in order: region
 * records (ptx_inject_region.c), the hooks, the exit code (kernel) or the
 * context store (a .func's ret, a call into an instrumented .func). */
#include "engine/ptx/ptx_inject_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"

/* ---- the new statement array ------------------------------------------ */

static int out_push_owned(struct inj *in, const struct ptx_stmt *s, int mine)
{
	if (in->n_out == in->cap_out) {
		int cap = in->cap_out ? in->cap_out * 2 : 64;
		struct ptx_stmt *o = realloc(in->out, (size_t)cap * sizeof *o);
		if (!o)
			return cause_set(in->cause, "out of memory");
		in->out = o;
		unsigned char *mn = realloc(in->mine, (size_t)cap);
		if (!mn)
			return cause_set(in->cause, "out of memory");
		in->mine = mn;
		in->cap_out = cap;
	}
	in->mine[in->n_out] = (unsigned char)mine;
	in->out[in->n_out++] = *s;
	return 0;
}

static int out_push(struct inj *in, const struct ptx_stmt *s)
{
	return out_push_owned(in, s, 0);
}

/* Moves sb into the new body as one statement: lines after the first get
 * the tab ptx_emit puts before each statement, so the output reads evenly.
 * One statement per chunk keeps a site to a single allocation. */
static int out_flush(struct inj *in, struct strbuf *sb)
{
	if (sb->failed) {
		strbuf_done(sb);
		return cause_set(in->cause, "out of memory");
	}
	if (sb->len == 0) {
		strbuf_done(sb);
		return 0;
	}
	size_t lines = 0;
	for (size_t i = 0; i < sb->len; i++)
		lines += sb->data[i] == '\n';
	char *text = malloc(sb->len + lines + 1);
	if (!text) {
		strbuf_done(sb);
		return cause_set(in->cause, "out of memory");
	}
	size_t o = 0;
	for (size_t i = 0; i < sb->len; i++) {
		if (sb->data[i] != '\n') {
			text[o++] = sb->data[i];
		} else if (i + 1 < sb->len) {
			text[o++] = '\n';
			text[o++] = '\t';
		}
	}
	text[o] = 0;
	strbuf_done(sb);
	struct ptx_stmt s;
	memset(&s, 0, sizeof s);
	s.kind = PTX_DIRECTIVE;
	s.text = text;
	if (out_push_owned(in, &s, 1) < 0) {
		free(text);
		return -1;
	}
	return 0;
}

/* Our registers and the probes' (renamed), declared once. */
static void prologue_regs(const struct inj *in, struct strbuf *sb)
{
	strbuf_puts(sb,
		".reg .b32 %ntop_w<7>;\n"
		".reg .b64 %ntop_d<6>;\n"
		".reg .b32 %ntop_tl, %ntop_end, %ntop_v<4>;\n"
		".reg .b64 %ntop_sa, %ntop_sb, %ntop_un, %ntop_ca, %ntop_addr, %ntop_bw, %ntop_x<2>;\n"
		".reg .b64 %ntop_bl, %ntop_nb;\n"
		".reg .b32 %ntop_pt, %ntop_ut, %ntop_pw, %ntop_uw;\n"
		".reg .pred %ntop_ok, %ntop_lane0;\n");
	for (int i = 0; i < in->n_maps; i++)
		if (in->maps[i].block) { /* thread 0's stores */
			strbuf_puts(sb, ".reg .pred %ntop_t0;\n");
			break;
		}
	for (int i = 0; i < in->n_maps; i++)
		if (in->maps[i].dynamic)
			strbuf_printf(sb, ".reg .b64 %%ntop_rec%d;\n.reg .b32 %%ntop_cur%d;\n", i, i);
	for (int i = 0; i < in->n_maps; i++) {
		if (in->maps[i].dynamic && in->maps[i].slot_major)
			strbuf_printf(sb, ".reg .b64 %%ntop_un%d;\n", i);
		if (in->maps[i].dynamic && in->maps[i].sampled)
			strbuf_printf(sb, ".reg .pred %%ntop_sp%d;\n", i);
	}
	for (int i = 0; i < in->n_maps && in->at_entry; i++)
		strbuf_printf(sb, ".reg .b64 %%ntop_hc%d, %%ntop_hr%d;\n", i, i);
	if (in->decls.data)
		strbuf_append(sb, in->decls.data, in->decls.len);
	if (in->decls.failed)
		sb->failed = 1;
}

static int prologue_entry_snips(struct inj *in, struct strbuf *sb, struct site *st)
{
	int any = 0;
	for (int k = 0; k < in->n_pr; k++)
		for (int h = 0; h < in->pr[k].p->n_hooks; h++)
			if (in->pr[k].p->hooks[h].kind == PROBE_TP_ENTRY) {
				any = 1;
				if (ptx_inject_site_snip(in, sb, &in->pr[k], h, st) < 0)
					return -1;
			}
	in->sites += any;
	return 0;
}

/* What a dynamic-cursor map keeps live from the entry: its unit's record
 * 0, cursor, (slot-major) units and (sampled) the kept-block test. */
static void prologue_dynamic(struct inj *in, struct strbuf *sb, struct site *st, int i)
{
	char reg[32];
	snprintf(reg, sizeof reg, "%%ntop_rec%d", i);
	ptx_inject_unit_addr(in, sb, st, i, 1, reg);
	if (in->maps[i].slot_major) {
		snprintf(reg, sizeof reg, "%%ntop_un%d", i);
		ptx_inject_unit_count(in, sb, st, i, reg);
	}
	if (in->maps[i].sampled) {
		snprintf(reg, sizeof reg, "%%ntop_sp%d", i);
		ptx_inject_unit_sampled(in, sb, st, i, reg);
	}
	strbuf_printf(sb, "mov.u32 %%ntop_cur%d, %u;\n", i, st->cur[i]);
}

/* Addresses kept from the entry (in->at_entry): the unit's count (unless
 * the kernel stores none), and a static cursor's record 0 (unit-major maps;
 * a slot-major one also needs its units and sampling test at the exit, so
 * it computes all there). */
static void prologue_at_entry(struct inj *in, struct strbuf *sb, struct site *st, int i)
{
	struct imap *m = &in->maps[i];
	char reg[32];
	snprintf(reg, sizeof reg, "%%ntop_hc%d", i);
	if (!m->count_static)
		ptx_inject_unit_addr(in, sb, st, i, 0, reg);
	if (m->dynamic || m->slot_major || m->entry_bytes >= m->cap_bytes || !ptx_inject_exit_bytes(in, i))
		return;
	snprintf(reg, sizeof reg, "%%ntop_hr%d", i);
	ptx_inject_unit_addr(in, sb, st, i, 1, reg);
	m->rec_at_entry = 1;
}

/* Registers, then the entry snippets first (so an entry clock reads as
 * early as possible), then what is kept live from the entry. */
static int emit_prologue(struct inj *in)
{
	struct strbuf sb;
	strbuf_init(&sb);
	prologue_regs(in, &sb);
	if (in->plain)
		ptx_inject_plain_branch(in, &sb);
	struct site st = ptx_inject_site_at(SITE_ENTRY, NULL);
	if (prologue_entry_snips(in, &sb, &st) < 0) {
		strbuf_done(&sb);
		return -1;
	}
	for (int i = 0; i < in->n_maps; i++) {
		in->maps[i].entry_bytes = st.cur[i];
		if (in->maps[i].dynamic)
			prologue_dynamic(in, &sb, &st, i);
		if (in->at_entry)
			prologue_at_entry(in, &sb, &st, i);
	}
	if (in->any_dyn_warp || (in->at_entry && in->any_warp))
		ptx_inject_unit_lane0(in, &sb, &st, "%ntop_lane0");
	ptx_inject_ctx_kernel_decl(in, &sb);
	return out_flush(in, &sb);
}

/* A .func's prologue: the registers, the state from its caller's context. */
static int emit_func_prologue(struct inj *in)
{
	struct strbuf sb;
	strbuf_init(&sb);
	prologue_regs(in, &sb);
	strbuf_puts(&sb, ".reg .b64 %ntop_cx;\nmov.b64 %ntop_cx, ntop_cxp;\n");
	ptx_inject_ctx_load(in, &sb);
	struct site st = ptx_inject_site_at(SITE_ENTRY, NULL);
	if (in->any_dyn_warp)
		ptx_inject_unit_lane0(in, &sb, &st, "%ntop_lane0");
	return out_flush(in, &sb);
}

/* ---- the body walk ------------------------------------------------------ */

static int is_exit_insn(const struct ptx_insn *x)
{
	return ptx_opcode_matches(x->opcode, "ret") || ptx_opcode_matches(x->opcode, "exit");
}

int ptx_inject_is_transfer(const struct ptx_insn *x)
{
	return is_exit_insn(x) || ptx_opcode_matches(x->opcode, "bra") ||
	       ptx_opcode_matches(x->opcode, "brx") || ptx_opcode_matches(x->opcode, "trap");
}

static int hook_matches(const struct probe_hook *h, const struct ptx_insn *x)
{
	if (h->kind != PROBE_TP_INSN || !x->opcode)
		return 0;
	for (int i = 0; i < h->n_opcodes; i++)
		if (h->opcodes[i] && (h->anywhere ? ptx_opcode_matches_within(x->opcode, h->opcodes[i])
						  : ptx_opcode_matches(x->opcode, h->opcodes[i])))
			return 1;
	return 0;
}

/* Where hook h runs at x: 0 before, 1 after, -1 nowhere (after a control
 * transfer nothing runs, unless the hook asks to run before it instead). */
static int hook_place(const struct probe_hook *h, const struct ptx_insn *x)
{
	if (!h->after)
		return 0;
	if (!ptx_inject_is_transfer(x))
		return 1;
	return h->after_jump_before ? 0 : -1;
}

/* Does hook h of probe k fire on x? Hooks that use ADDR skip .param-space
 * accesses: call arguments and kernel parameters have no memory address
 * (ptxas refuses to take one), and a made-up 0 would pollute a DMAT. */
/* A hook that uses ADDR or BYTES skips instructions that have no plain
 * address: .param accesses (ptxas refuses to take their address) and bulk
 * tensor copies, whose operand is a tensor map plus coordinates. */
static int hook_unaddressable(const struct iprobe *ip, int h, const struct ptx_insn *x)
{
	const struct snip *sn = &ip->snips[h];
	if (sn->uses_addr && strstr(x->opcode, ".param"))
		return 1;
	return (sn->uses_addr || sn->uses_bytes) && strstr(x->opcode, ".tensor");
}

static int hook_fires(const struct iprobe *ip, int h, const struct ptx_insn *x)
{
	return hook_matches(&ip->p->hooks[h], x) && !hook_unaddressable(ip, h, x);
}

int ptx_inject_site_needs(const struct inj *in, const struct ptx_insn *x, int *uses_addr, int *skipped)
{
	int any = 0;
	for (int k = 0; k < in->n_pr; k++)
		for (int h = 0; h < in->pr[k].p->n_hooks; h++) {
			const struct probe_hook *hk = &in->pr[k].p->hooks[h];
			if (hook_matches(hk, x) && hook_unaddressable(&in->pr[k], h, x))
				*skipped = 1;
			if (hook_fires(&in->pr[k], h, x) && hook_place(hk, x) >= 0) {
				any = 1;
				*uses_addr |= in->pr[k].snips[h].uses_addr;
			}
		}
	return any;
}

/* The hooks that run at x in one place (after), guarded or not (no_pred);
 * `index` is x's site. */
static int emit_hooks(struct inj *in, struct strbuf *sb, const struct ptx_insn *x, int index, int after, int no_pred)
{
	struct site st = ptx_inject_site_at(SITE_INSN, x);
	st.index = index;
	for (int k = 0; k < in->n_pr; k++)
		for (int h = 0; h < in->pr[k].p->n_hooks; h++) {
			const struct probe_hook *hk = &in->pr[k].p->hooks[h];
			if (hook_fires(&in->pr[k], h, x) && hook_place(hk, x) == after && !hk->no_pred == !no_pred &&
			    ptx_inject_site_snip(in, sb, &in->pr[k], h, &st) < 0)
				return -1;
		}
	return 0;
}

static void invert_pred(struct strbuf *sb, const char *pred)
{
	const char *p = inject_skip_ws(pred);
	if (*p == '!')
		strbuf_puts(sb, inject_skip_ws(p + 1));
	else
		strbuf_printf(sb, "!%s", p);
}

int ptx_inject_guard_open(struct inj *in, struct strbuf *sb, const char *pred)
{
	int skip = in->skip_n++;
	strbuf_puts(sb, "@");
	invert_pred(sb, pred);
	strbuf_printf(sb, " bra $ntop_skip_%d;\n", skip);
	return skip;
}

/* A guarded instruction's instrumentation sits behind a branch around it,
 * taken when the guard is false. Returns the skip label's number, or -1
 * when x is unguarded. */
static int guard_open(struct inj *in, struct strbuf *sb, const struct ptx_insn *x)
{
	if (!x->pred || !*x->pred)
		return -1;
	return ptx_inject_guard_open(in, sb, x->pred);
}

/* Where the walk stands at one instruction. */
struct at_insn {
	const struct ptx_insn *x;
	int probed;      /* a hook fires here */
	int uses_addr;
	int exit_site;   /* the kernel's exit code goes before it */
	int ctx_store;   /* a .func's ret, or a call into an instrumented .func */
	const struct ptx_func *callee;
	int index;       /* the site's index when probed */
	int skip;        /* the guard's skip label, -1 when unguarded */
};

/* What goes before x: ADDR (arithmetic only, harmless when the guard is
 * false, so unguarded hooks can read it too), the no_pred hooks, the skip
 * around the guarded part, the other hooks, the exit code or the context
 * store. */
static int walk_before(struct inj *in, struct strbuf *sb, struct at_insn *a)
{
	const struct ptx_insn *x = a->x;
	a->skip = -1;
	if ((a->uses_addr && ptx_inject_operand_addr(in, sb, x) < 0) ||
	    (a->probed && emit_hooks(in, sb, x, a->index, 0, 1) < 0))
		return -1;
	a->skip = a->probed || a->exit_site ? guard_open(in, sb, x) : -1;
	if ((a->probed && emit_hooks(in, sb, x, a->index, 0, 0) < 0) ||
	    (a->exit_site && ptx_inject_exit_emit(in, sb) < 0))
		return -1;
	if (a->skip >= 0 && a->callee) { /* the call's own guard keeps it; the store is harmless */
		strbuf_printf(sb, "$ntop_skip_%d:\n", a->skip);
		a->skip = -1;
	}
	if (a->ctx_store)
		ptx_inject_ctx_store(in, sb);
	return 0;
}

static int walk_after(struct inj *in, struct strbuf *sb, const struct at_insn *a)
{
	if (a->callee)
		ptx_inject_ctx_load(in, sb);
	if (a->probed && emit_hooks(in, sb, a->x, a->index, 1, 0) < 0)
		return -1;
	if (a->skip >= 0)
		strbuf_printf(sb, "$ntop_skip_%d:\n", a->skip);
	return a->probed ? emit_hooks(in, sb, a->x, a->index, 1, 1) : 0;
}

/* The instruction itself: moved over, or (a call into an instrumented
 * .func) rewritten to pass the context and the original dropped. */
static int walk_push_insn(struct inj *in, int i, const struct at_insn *a)
{
	if (!a->callee)
		return out_push(in, &in->fn.f->body[i]);
	char *text = NULL;
	if (ptx_inject_func_call_text(in, a->x, &text) < 0)
		return -1;
	int *d = realloc(in->fn.dropped, (size_t)(in->fn.n_dropped + 1) * sizeof *d);
	if (!d) {
		free(text);
		return cause_set(in->cause, "out of memory");
	}
	in->fn.dropped = d;
	d[in->fn.n_dropped++] = i;
	struct strbuf sb;
	strbuf_init(&sb);
	strbuf_puts(&sb, text);
	free(text);
	return out_flush(in, &sb);
}

static void at_insn_init(struct inj *in, int i, struct at_insn *a, int *skipped)
{
	const struct ptx_insn *x = &in->fn.f->body[i].insn;
	memset(a, 0, sizeof *a);
	a->x = x;
	a->index = -1;
	if (!x->opcode)
		return;
	a->probed = ptx_inject_site_needs(in, x, &a->uses_addr, skipped);
	a->exit_site = !in->fn.is_func && is_exit_insn(x) && in->has_exit_work;
	a->callee = ptx_inject_func_callee(in, x);
	a->ctx_store = a->callee || (in->fn.is_func && ptx_opcode_matches(x->opcode, "ret"));
}

/* Statement i, an instruction: region records, then instrumentation around
 * it (inside a predicate skip when it is guarded, so predicated-off
 * instructions record nothing; no_pred hooks sit outside the skip). */
static int walk_insn(struct inj *in, int i, uint32_t *open)
{
	struct at_insn a;
	int skipped = 0;
	at_insn_init(in, i, &a, &skipped);
	in->sites_no_addr += skipped;
	struct strbuf sb, none;
	strbuf_init(&sb);
	strbuf_init(&none);
	int rc = ptx_inject_region_before(in, &sb, i, open, &none);
	if (rc == 0 && a.probed && (a.index = ptx_inject_site_add(in, i, ENGINE_SITE_INSN, -1)) < 0)
		rc = -1;
	if (rc == 0 && (walk_before(in, &sb, &a) < 0 || out_flush(in, &sb) < 0 || walk_push_insn(in, i, &a) < 0))
		rc = -1;
	strbuf_done(&none);
	if (rc < 0) {
		strbuf_done(&sb);
		return cause_wrap(in->cause, "line %d", in->fn.f->body[i].line);
	}
	strbuf_init(&sb);
	if (walk_after(in, &sb, &a) < 0) {
		strbuf_done(&sb);
		return cause_wrap(in->cause, "line %d", in->fn.f->body[i].line);
	}
	in->sites += a.probed + a.exit_site;
	return out_flush(in, &sb);
}

/* Statement i, not an instruction: a label may need region records around
 * it; the rest moves over. */
static int walk_other(struct inj *in, int i, uint32_t *open)
{
	struct strbuf sb, after;
	strbuf_init(&sb);
	strbuf_init(&after);
	if (ptx_inject_region_before(in, &sb, i, open, &after) < 0 || out_flush(in, &sb) < 0 ||
	    out_push(in, &in->fn.f->body[i]) < 0) {
		strbuf_done(&sb);
		strbuf_done(&after);
		return cause_wrap(in->cause, "line %d", in->fn.f->body[i].line);
	}
	return out_flush(in, &after);
}

/* Can control reach the closing brace? Not when the last instruction is an
 * unguarded ret/exit/bra (a trailing label may be a branch target). */
static int falls_off_end(const struct ptx_func *f)
{
	for (int i = f->n_body - 1; i >= 0; i--) {
		const struct ptx_stmt *s = &f->body[i];
		if (s->kind == PTX_CLOSE || s->kind == PTX_DIRECTIVE || s->kind == PTX_OPEN)
			continue;
		if (s->kind == PTX_LABEL)
			return 1;
		return !(!s->insn.pred && s->insn.opcode && ptx_inject_is_transfer(&s->insn));
	}
	return 1;
}

/* The statements of in->fn, then what goes before the closing brace when
 * control can reach it: open regions end, then the exit code (kernel) or
 * the context store (.func). */
static int walk_statements(struct inj *in)
{
	struct ptx_func *f = in->fn.f;
	uint32_t open = 0;
	for (int i = 0; i < f->n_body; i++) {
		int rc = f->body[i].kind == PTX_INSN ? walk_insn(in, i, &open) : walk_other(in, i, &open);
		if (rc < 0)
			return -1;
	}
	if (!falls_off_end(f) || (!open && !in->fn.is_func && !in->has_exit_work))
		return 0;
	struct strbuf sb;
	strbuf_init(&sb);
	int rc = ptx_inject_region_before(in, &sb, f->n_body, &open, NULL);
	if (rc == 0 && in->fn.is_func)
		ptx_inject_ctx_store(in, &sb);
	else if (rc == 0 && in->has_exit_work && (rc = ptx_inject_exit_emit(in, &sb)) == 0)
		in->sites++;
	if (rc < 0) {
		strbuf_done(&sb);
		return cause_wrap(in->cause, "end of %s", f->name);
	}
	return out_flush(in, &sb);
}

static int emit_plain(struct inj *in)
{
	struct strbuf sb;
	strbuf_init(&sb);
	if (ptx_inject_plain_emit(in, &sb) < 0) {
		strbuf_done(&sb);
		return -1;
	}
	return out_flush(in, &sb);
}

/* Keeps the body just built for the swap (ptx_inject.c), and resets the
 * walk's per-function state. */
static int walk_keep(struct inj *in)
{
	struct walked_body *b = realloc(in->bodies, (size_t)(in->n_bodies + 1) * sizeof *b);
	if (!b)
		return cause_set(in->cause, "out of memory");
	in->bodies = b;
	b = &in->bodies[in->n_bodies++];
	b->f = in->fn.f;
	b->out = in->out;
	b->mine = in->mine;
	b->n_out = in->n_out;
	b->dropped = in->fn.dropped;
	b->n_dropped = in->fn.n_dropped;
	in->out = NULL;
	in->mine = NULL;
	in->n_out = in->cap_out = 0;
	in->fn.dropped = NULL;
	in->fn.n_dropped = 0;
	return 0;
}

static void walk_fn_done(struct inj *in)
{
	free(in->fn.locs);
	free(in->fn.rmask);
	free(in->fn.rnext);
	free(in->fn.lbegin);
	free(in->fn.dropped);
	memset(&in->fn, 0, sizeof in->fn);
}

static int walk_fn(struct inj *in, struct ptx_func *f, int is_func)
{
	memset(&in->fn, 0, sizeof in->fn);
	in->fn.f = f;
	in->fn.is_func = is_func;
	int rc = ptx_inject_sites_func(in, f->name);
	if (rc == 0)
		rc = ptx_inject_operand_kernel_regs(in, f);
	if (rc == 0)
		rc = ptx_inject_region_mark(in);
	in->plain = !is_func && ptx_inject_plain_wanted(in);
	if (rc == 0)
		rc = is_func ? emit_func_prologue(in) : emit_prologue(in);
	if (rc == 0)
		rc = walk_statements(in);
	if (rc == 0 && in->plain)
		rc = emit_plain(in);
	if (rc == 0)
		rc = walk_keep(in);
	walk_fn_done(in);
	return rc;
}

int ptx_inject_walk_body(struct inj *in)
{
	return walk_fn(in, in->kernel, 0);
}

int ptx_inject_walk_func(struct inj *in, struct ptx_func *f)
{
	return walk_fn(in, f, 1);
}
