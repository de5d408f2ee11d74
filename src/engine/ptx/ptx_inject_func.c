/* Device functions. A .func the kernel calls is instrumented like the
 * kernel when a hook fires in it (or a region boundary falls in it), or
 * when it calls such a function. The state the snippets share across the
 * kernel (a dynamic map's record address and cursor, the probes' own
 * registers, e.g. gmem_bytes' counters) lives in registers, which a call
 * does not carry; so the kernel keeps a context in the thread's local
 * memory and passes its address as one extra .reg parameter: before a call
 * the caller stores the state there, the callee loads it at its start and
 * stores it back before each ret, and the caller loads it after the call.
 * Left alone (their sites counted, funcs_why says why): functions whose
 * address is taken (an indirect call could reach them without the
 * parameter), and all of them when the state holds a vector register or
 * needs more than CTX_MAX bytes. A function that ends the thread with
 * `exit` needs nothing more: the counts of such kernels are cleared by the
 * host (engine.h). */
#include "engine/ptx/ptx_inject_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"
#include "engine/ptx/ptx_int.h"

#define CTX_MAX 4096 /* bytes of context per thread */

/* ---- the context ------------------------------------------------------ */

static int ctx_add(struct inj *in, const char *reg, int bytes, int pred)
{
	struct ctx_slot *c = realloc(in->ctx, (size_t)(in->n_ctx + 1) * sizeof *c);
	if (!c)
		return cause_set(in->cause, "out of memory");
	in->ctx = c;
	c = &in->ctx[in->n_ctx++];
	memset(c, 0, sizeof *c);
	snprintf(c->reg, sizeof c->reg, "%s", reg);
	c->bytes = bytes;
	c->pred = pred;
	return 0;
}

/* Bytes a register of PTX type `type` (".b32", ".pred") needs; 0 for a
 * vector or an unknown type. */
static int type_bytes(const char *type, int *pred)
{
	const char *t = inject_skip_ws(type);
	*pred = !strcmp(t, ".pred");
	if (*pred)
		return 4;
	if (t[0] != '.' || t[1] == 'v')
		return 0;
	size_t n = strlen(t);
	if (n >= 3 && !strcmp(t + n - 2, "16"))
		return 2;
	if (n >= 3 && !strcmp(t + n - 2, "32"))
		return 4;
	if (n >= 3 && !strcmp(t + n - 2, "64"))
		return 8;
	return 0;
}

static int probe_crosses_calls(const struct probe *p)
{
	for (int h = 0; h < p->n_hooks; h++)
		if (p->hooks[h].kind == PROBE_TP_INSN || p->hooks[h].kind == PROBE_TP_REGION)
			return 1;
	return 0;
}

/* The probe registers of probes with hooks inside functions. */
static int ctx_probe_regs(struct inj *in)
{
	for (int k = 0; k < in->n_pr; k++) {
		const struct iprobe *ip = &in->pr[k];
		if (!probe_crosses_calls(ip->p))
			continue;
		for (int r = 0; r < ip->n_ren; r++) {
			const struct snippet_reg *g = &ip->ren[r];
			int pred, bytes = type_bytes(g->type, &pred);
			if (!bytes) {
				in->funcs_why = "a probe register of a vector type would cross a call";
				return 0;
			}
			long count = g->count ? g->count : 1;
			for (long j = 0; j < count; j++) {
				char name[96];
				if (g->count)
					snprintf(name, sizeof name, "%%ntop_p%d_%s%ld", ip->index, g->name + 1, j);
				else
					snprintf(name, sizeof name, "%%ntop_p%d_%s", ip->index, g->name + 1);
				if (ctx_add(in, name, bytes, pred) < 0)
					return -1;
			}
		}
	}
	return 0;
}

static int cmp_slot_size(const void *a, const void *b)
{
	return ((const struct ctx_slot *)b)->bytes - ((const struct ctx_slot *)a)->bytes;
}

/* Slots widest first, so every one is aligned to its size. */
static int ctx_layout(struct inj *in)
{
	for (int i = 0; i < in->n_maps; i++) {
		char r[32];
		if (!in->maps[i].dynamic)
			continue;
		snprintf(r, sizeof r, "%%ntop_rec%d", i);
		if (ctx_add(in, r, 8, 0) < 0)
			return -1;
		snprintf(r, sizeof r, "%%ntop_cur%d", i);
		if (ctx_add(in, r, 4, 0) < 0)
			return -1;
		snprintf(r, sizeof r, "%%ntop_un%d", i);
		if (in->maps[i].slot_major && ctx_add(in, r, 8, 0) < 0)
			return -1;
		if (!in->maps[i].sampled)
			continue;
		snprintf(r, sizeof r, "%%ntop_sp%d", i);
		if (ctx_add(in, r, 4, 1) < 0)
			return -1;
	}
	if (ctx_probe_regs(in) < 0)
		return -1;
	qsort(in->ctx, (size_t)in->n_ctx, sizeof *in->ctx, cmp_slot_size);
	uint32_t off = 0;
	for (int i = 0; i < in->n_ctx && off <= CTX_MAX; i++) {
		in->ctx[i].off = off;
		off += (uint32_t)in->ctx[i].bytes;
	}
	in->ctx_bytes = off ? off : 8;
	if (off > CTX_MAX)
		in->funcs_why = "the probes' state crossing calls would need more than 4 KiB per thread";
	return 0;
}

void ptx_inject_ctx_kernel_decl(const struct inj *in, struct strbuf *sb)
{
	if (!in->n_probed)
		return;
	strbuf_printf(sb, ".local .align 8 .b8 ntop_ctx[%u];\n.reg .b64 %%ntop_cx;\n", in->ctx_bytes);
	strbuf_puts(sb, "mov.u64 %ntop_cx, ntop_ctx;\ncvta.local.u64 %ntop_cx, %ntop_cx;\n");
}

void ptx_inject_ctx_store(const struct inj *in, struct strbuf *sb)
{
	for (int i = 0; i < in->n_ctx; i++) {
		const struct ctx_slot *c = &in->ctx[i];
		if (c->pred) {
			strbuf_printf(sb, "selp.u32 %%ntop_w0, 1, 0, %s;\n", c->reg);
			strbuf_printf(sb, "st.u32 [%%ntop_cx+%u], %%ntop_w0;\n", c->off);
		} else {
			strbuf_printf(sb, "st.b%d [%%ntop_cx+%u], %s;\n", c->bytes * 8, c->off, c->reg);
		}
	}
}

void ptx_inject_ctx_load(const struct inj *in, struct strbuf *sb)
{
	for (int i = 0; i < in->n_ctx; i++) {
		const struct ctx_slot *c = &in->ctx[i];
		if (c->pred) {
			strbuf_printf(sb, "ld.u32 %%ntop_w0, [%%ntop_cx+%u];\n", c->off);
			strbuf_printf(sb, "setp.ne.u32 %s, %%ntop_w0, 0;\n", c->reg);
		} else {
			strbuf_printf(sb, "ld.b%d %s, [%%ntop_cx+%u];\n", c->bytes * 8, c->reg, c->off);
		}
	}
}

/* ---- which functions -------------------------------------------------- */

/* The operand of a call naming its target: the first that is no (list). */
static int call_target(const struct ptx_insn *x)
{
	if (!x->opcode || !ptx_opcode_matches(x->opcode, "call"))
		return -1;
	for (int i = 0; i < x->n_ops; i++)
		if (x->ops[i].text[0] != '(')
			return i;
	return -1;
}

static int func_item(const struct inj *in, const char *name)
{
	for (int t = 0; t < in->mod->n_items; t++) {
		const struct ptx_top *it = &in->mod->items[t];
		if (it->kind == PTX_TOP_FUNC && it->func && !it->func->is_entry && !it->func->is_decl &&
		    !strcmp(it->func->name, name))
			return t;
	}
	return -1;
}

const struct ptx_func *ptx_inject_func_callee(const struct inj *in, const struct ptx_insn *x)
{
	int t = call_target(x);
	if (t < 0 || !in->n_probed)
		return NULL;
	int item = func_item(in, x->ops[t].text);
	return item >= 0 && in->probed[item] ? in->mod->items[item].func : NULL;
}

struct taken_ctx {
	const struct inj *in;
	unsigned char *taken;
};

static void mark_taken(void *ctx, const char *s, size_t n)
{
	struct taken_ctx *c = ctx;
	for (int t = 0; t < c->in->mod->n_items; t++) {
		const struct ptx_top *it = &c->in->mod->items[t];
		if (it->kind == PTX_TOP_FUNC && it->func && !it->func->is_entry && strlen(it->func->name) == n &&
		    !memcmp(it->func->name, s, n))
			c->taken[t] = 1;
	}
}

/* Functions named anywhere but as a direct call's target: in an operand
 * (mov %rd, f), or a variable's initialiser (a table of pointers). */
static void find_taken(const struct inj *in, unsigned char *taken)
{
	struct taken_ctx c = { in, taken };
	for (int t = 0; t < in->mod->n_items; t++) {
		const struct ptx_top *it = &in->mod->items[t];
		if (it->kind == PTX_TOP_VAR && it->text)
			ptx_names_scan(it->text, mark_taken, &c);
		if (it->kind != PTX_TOP_FUNC || !it->func)
			continue;
		for (int i = 0; i < it->func->n_body; i++) {
			const struct ptx_insn *x = &it->func->body[i].insn;
			if (it->func->body[i].kind != PTX_INSN)
				continue;
			int tgt = call_target(x);
			for (int o = 0; o < x->n_ops; o++)
				if (o != tgt)
					ptx_names_scan(x->ops[o].text, mark_taken, &c);
		}
	}
}

/* Does a hook fire, or a region boundary fall, in f? */
static int func_has_work(struct inj *in, struct ptx_func *f, int *work)
{
	struct inj_fn saved = in->fn;
	memset(&in->fn, 0, sizeof in->fn);
	in->fn.f = f;
	in->fn.is_func = 1;
	int rc = ptx_inject_region_mark(in);
	*work = 0;
	for (int i = 0; rc == 0 && i < f->n_body && !*work; i++) {
		int ua = 0, sk = 0;
		const struct ptx_stmt *s = &f->body[i];
		*work = s->kind == PTX_INSN && ((in->fn.rmask && in->fn.rmask[i]) ||
						(s->insn.opcode && ptx_inject_site_needs(in, &s->insn, &ua, &sk)));
	}
	free(in->fn.locs);
	free(in->fn.rmask);
	free(in->fn.rnext);
	free(in->fn.lbegin);
	in->fn = saved;
	return rc;
}

/* Marks callers of marked functions until nothing changes. */
static void spread_to_callers(const struct inj *in, unsigned char *want)
{
	for (int changed = 1; changed;) {
		changed = 0;
		for (int t = 0; t < in->mod->n_items; t++) {
			const struct ptx_top *it = &in->mod->items[t];
			if (want[t] || it->kind != PTX_TOP_FUNC || !it->func || it->func->is_entry || it->func->is_decl)
				continue;
			for (int i = 0; i < it->func->n_body && !want[t]; i++) {
				const struct ptx_insn *x = &it->func->body[i].insn;
				int tgt = it->func->body[i].kind == PTX_INSN ? call_target(x) : -1;
				int callee = tgt >= 0 ? func_item(in, x->ops[tgt].text) : -1;
				if (callee >= 0 && want[callee])
					want[t] = changed = 1;
			}
		}
	}
}

/* Sites in functions left alone are counted for the report. */
static void count_left_alone(struct inj *in, const unsigned char *work)
{
	for (int t = 0; t < in->mod->n_items; t++) {
		const struct ptx_top *it = &in->mod->items[t];
		if (!work[t] || in->probed[t])
			continue;
		for (int i = 0; i < it->func->n_body; i++) {
			int ua = 0, sk = 0;
			const struct ptx_stmt *s = &it->func->body[i];
			in->sites_in_funcs += s->kind == PTX_INSN && s->insn.opcode &&
					      ptx_inject_site_needs(in, &s->insn, &ua, &sk);
		}
	}
}

int ptx_inject_func_plan(struct inj *in)
{
	int n = in->mod->n_items;
	unsigned char *work = calloc((size_t)(n ? n : 1), 1), *taken = calloc((size_t)(n ? n : 1), 1);
	in->probed = calloc((size_t)(n ? n : 1), 1);
	if (!work || !taken || !in->probed) {
		free(work);
		free(taken);
		return cause_set(in->cause, "out of memory");
	}
	int rc = 0, any = 0;
	for (int t = 0; t < n && rc == 0; t++) {
		struct ptx_top *it = &in->mod->items[t];
		int w = 0;
		if (it->kind == PTX_TOP_FUNC && it->func && !it->func->is_entry && !it->func->is_decl)
			rc = func_has_work(in, it->func, &w);
		work[t] = (unsigned char)w;
		any |= w;
	}
	if (rc == 0 && any) {
		find_taken(in, taken);
		unsigned char *want = malloc((size_t)n);
		rc = want ? 0 : cause_set(in->cause, "out of memory");
		for (int t = 0; rc == 0 && t < n; t++)
			want[t] = work[t] && !taken[t];
		if (rc == 0) {
			spread_to_callers(in, want);
			for (int t = 0; t < n; t++)
				if (want[t] && taken[t]) /* a caller of a probed one, itself reachable indirectly */
					want[t] = 0;
			rc = ctx_layout(in);
		}
		for (int t = 0; rc == 0 && t < n; t++) {
			in->probed[t] = want[t] && !in->funcs_why;
			in->n_probed += in->probed[t];
			if (work[t] && taken[t] && !in->funcs_why)
				in->funcs_why = "its address is taken (an indirect call could reach it)";
		}
		free(want);
		if (rc == 0)
			count_left_alone(in, work);
	}
	free(work);
	free(taken);
	return rc;
}

/* Is item t an instrumented .func, or a declaration of one (a prototype
 * before its body, which must list the same parameters)? */
static int gets_ctx_param(const struct inj *in, int t)
{
	const struct ptx_top *it = &in->mod->items[t];
	if (it->kind != PTX_TOP_FUNC || !it->func || it->func->is_entry)
		return 0;
	if (!it->func->is_decl)
		return in->probed[t];
	int item = func_item(in, it->func->name);
	return item >= 0 && in->probed[item];
}

int ptx_inject_func_params(struct inj *in)
{
	for (int t = 0; t < in->mod->n_items; t++) {
		struct ptx_func *f = gets_ctx_param(in, t) ? in->mod->items[t].func : NULL;
		if (!f)
			continue;
		char **p = realloc(f->params, (size_t)(f->n_params + 1) * sizeof *p);
		if (!p)
			return cause_set(in->cause, "out of memory");
		f->params = p;
		if (!(f->params[f->n_params] = strdup(".reg .b64 ntop_cxp")))
			return cause_set(in->cause, "out of memory");
		f->n_params++;
		f->has_param_list = 1;
	}
	return 0;
}

/* "[@p ]call.uni (r), f, (a, b, %ntop_cx);" */
int ptx_inject_func_call_text(struct inj *in, const struct ptx_insn *x, char **text)
{
	struct strbuf sb;
	strbuf_init(&sb);
	if (x->pred)
		strbuf_printf(&sb, "@%s ", x->pred);
	strbuf_printf(&sb, "%s ", x->opcode);
	int tgt = call_target(x), args = 0;
	for (int o = 0; o < x->n_ops; o++) {
		const char *op = x->ops[o].text;
		strbuf_puts(&sb, o ? ", " : "");
		if (o == tgt + 1 && op[0] == '(') {
			size_t n = strlen(op);
			const char *in_list = inject_skip_ws(op + 1);
			strbuf_append(&sb, op, n - 1); /* without ')' */
			strbuf_puts(&sb, *in_list == ')' ? "%ntop_cx)" : ", %ntop_cx)");
			args = 1;
		} else {
			strbuf_puts(&sb, op);
		}
	}
	if (!args)
		strbuf_puts(&sb, ", (%ntop_cx)");
	strbuf_puts(&sb, ";");
	*text = strbuf_finish(&sb, NULL);
	return *text ? 0 : cause_set(in->cause, "out of memory");
}
