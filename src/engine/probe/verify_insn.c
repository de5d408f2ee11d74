/* Instructions in a snippet: the allow-list and every rule that looks at
 * the opcode, then helper placement, SAVE layout, destination and sources.
 *
 * The allow-list (PTX ISA 9.0 names): arithmetic, logic, comparison, moves
 * and conversions into probe registers, reads of any register, loads (ld,
 * ldu from the global, const, param and local spaces or generic addresses),
 * L1/L2 prefetches, and membar/fence, which only order memory. Anything
 * else is refused; the rules 2-6 name the families a probe author is most
 * likely to try and say why. */
#include "engine/probe/verify_int.h"
#include "engine/probe/verify_save.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"

enum {
	A_DEST = 1,   /* operand 0 is written */
	A_LOAD = 2,   /* operand 1 is an [address] read */
	A_PREF = 4,   /* operand 0 is an [address] prefetched */
	A_NO_OPS = 8, /* takes no operands (here) */
};

struct allowed {
	const char *base;
	unsigned flags;
};

static const struct allowed allow_list[] = {
	{ "add", A_DEST },     { "sub", A_DEST },       { "mul", A_DEST },      { "mad", A_DEST },
	{ "mul24", A_DEST },   { "mad24", A_DEST },     { "sad", A_DEST },      { "div", A_DEST },
	{ "rem", A_DEST },     { "abs", A_DEST },       { "neg", A_DEST },      { "min", A_DEST },
	{ "max", A_DEST },     { "popc", A_DEST },      { "clz", A_DEST },      { "bfind", A_DEST },
	{ "fns", A_DEST },     { "brev", A_DEST },      { "bfe", A_DEST },      { "bfi", A_DEST },
	{ "bmsk", A_DEST },    { "szext", A_DEST },     { "dp4a", A_DEST },     { "dp2a", A_DEST },
	{ "and", A_DEST },     { "or", A_DEST },        { "xor", A_DEST },      { "not", A_DEST },
	{ "cnot", A_DEST },    { "lop3", A_DEST },      { "shf", A_DEST },      { "shl", A_DEST },
	{ "shr", A_DEST },     { "prmt", A_DEST },      { "copysign", A_DEST }, { "testp", A_DEST },
	{ "rcp", A_DEST },     { "sqrt", A_DEST },      { "rsqrt", A_DEST },    { "sin", A_DEST },
	{ "cos", A_DEST },     { "lg2", A_DEST },       { "ex2", A_DEST },      { "tanh", A_DEST },
	{ "fma", A_DEST },     { "selp", A_DEST },      { "set", A_DEST },      { "setp", A_DEST },
	{ "slct", A_DEST },    { "mov", A_DEST },       { "cvt", A_DEST },      { "cvta", A_DEST },
	{ "isspacep", A_DEST }, { "activemask", A_DEST }, { "ld", A_DEST | A_LOAD }, { "ldu", A_DEST | A_LOAD },
	{ "prefetch", A_PREF }, { "prefetchu", A_PREF }, { "membar", A_NO_OPS }, { "fence", A_NO_OPS },
};

/* Families refused by name, with the rule that says why. */
struct denied {
	const char *const *bases;
	enum rule rule;
	const char *why;
};

static const char *const flow_ops[] = { "bra", "brx", "ret", "exit", "trap", "brkpt", "bar", "barrier", NULL };
static const char *const call_ops[] = { "call", NULL };
static const char *const shared_ops[] = { "mbarrier", "ldmatrix", "stmatrix", "mapa", "getctarank", NULL };
static const char *const write_ops[] = { "st", "stu", "red", "atom", "cp", "multimem", "tensormap", "sust", "sured",
					 "discard", "applypriority", "st_async", "red_async", NULL };
static const char *const warp_ops[] = { "shfl", "vote", "match", "redux", "elect", "setmaxnreg", "alloca",
					"stacksave", "stackrestore", "griddepcontrol", "wgmma", "wmma", "mma",
					"tcgen05", "clusterlaunchcontrol", NULL };
static const char *const carry_ops[] = { "addc", "subc", "madc", NULL };

static const struct denied denied[] = {
	{ call_ops, RULE_CALL, "snippets cannot call functions" },
	{ flow_ops, RULE_FLOW, "changes control flow or synchronises threads" },
	{ shared_ops, RULE_SHARED, "works on shared memory only" },
	{ write_ops, RULE_WRITE, "writes memory (or drops cached data); record values with SAVE" },
	{ warp_ops, RULE_WARP, "synchronises or reconfigures the warp" },
	{ carry_ops, RULE_REGS, "reads or writes the carry flag, which belongs to the kernel" },
};

static int in_list(const char *base, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(base, *list) == 0)
			return 1;
	return 0;
}

static const struct allowed *find_allowed(const char *base)
{
	for (size_t i = 0; i < sizeof allow_list / sizeof allow_list[0]; i++)
		if (strcmp(base, allow_list[i].base) == 0)
			return &allow_list[i];
	return NULL;
}

/* Dotted part k (0 = base) of the opcode into buf; 0 when there is none. */
static int opcode_part(const struct vinsn *in, int k, char *buf, size_t cap)
{
	const struct snippet_tok *t = &in->st->toks[in->op];
	const char *s = in->st->text + t->off, *end = s + t->len;
	for (; k > 0 && s < end; k--) {
		s = memchr(s, '.', (size_t)(end - s));
		if (!s)
			return 0;
		s++;
	}
	if (k > 0 || s >= end)
		return 0;
	size_t n = strcspn(s, ". ");
	if (n > (size_t)(end - s))
		n = (size_t)(end - s);
	snprintf(buf, cap, "%.*s", (int)n, s);
	return 1;
}

/* Splits "@!%p op a, {b, c}, [d]" into guard, opcode and operand token ranges. */
static int split_insn(struct vctx *V, const struct snippet_stmt *st, struct vinsn *in)
{
	int i = 0;
	memset(in, 0, sizeof *in);
	in->st = st;
	in->guard = -1;
	if (snippet_tok_is(st, 0, "@")) {
		i = 1 + snippet_tok_is(st, 1, "!");
		if (i >= st->n_toks || st->toks[i].kind != SNIP_WORD || st->text[st->toks[i].off] != '%')
			return verr(V, st, i, RULE_SYNTAX, "a guard is @%%p or @!%%p");
		in->guard = i++;
	}
	if (i >= st->n_toks || st->toks[i].kind != SNIP_WORD || st->text[st->toks[i].off] == '%')
		return verr(V, st, i, RULE_SYNTAX, "cannot read this instruction (no opcode)");
	in->op = i++;
	opcode_part(in, 0, in->base, sizeof in->base);
	int depth = 0, start = i;
	for (; i <= st->n_toks; i++) {
		int end = i == st->n_toks;
		if (!end && st->toks[i].kind == SNIP_PUNCT) {
			char c = st->text[st->toks[i].off];
			depth += (c == '[' || c == '{' || c == '(') - (c == ']' || c == '}' || c == ')');
			if (depth < 0)
				return verr(V, st, i, RULE_SYNTAX, "'%c' closes nothing", c);
		}
		if (!end && !(depth == 0 && snippet_tok_is(st, i, ",")))
			continue;
		if (end && start == i && in->n_ops == 0)
			break; /* no operands */
		if (start == i)
			return verr(V, st, i < st->n_toks ? i : i - 1, RULE_SYNTAX, "empty operand");
		if (in->n_ops == VERIFY_MAX_OPS)
			return verr(V, st, i, RULE_SYNTAX, "more than %d operands", VERIFY_MAX_OPS);
		in->ops[in->n_ops++] = (struct vop){ start, i };
		start = i + 1;
	}
	return depth == 0 ? 0 : verr(V, st, st->n_toks - 1, RULE_SYNTAX, "unbalanced brackets");
}

/* ---- opcodes ---- */

/* ld/ldu qualifiers: state spaces that cannot be written through, memory
 * semantics and scopes, cache hints, vector widths and types. */
static int check_load_quals(struct vctx *V, const struct vinsn *in)
{
	static const char *const ok[] = {
		"global", "const", "param", "local", "param::entry", "param::func", "weak", "relaxed", "acquire",
		"volatile", "cta", "gpu", "sys", "cluster", "nc", "ca", "cg", "cs", "lu", "cv", "L1::evict_normal",
		"L1::evict_unchanged", "L1::evict_first", "L1::evict_last", "L1::no_allocate", "L2::evict_normal",
		"L2::evict_first", "L2::evict_last", "L2::cache_hint", "L2::64B", "L2::128B", "L2::256B", "v2", "v4",
		"v8", "b8", "b16", "b32", "b64", "b128", "u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "f16",
		"f16x2", "bf16", "bf16x2", "f32", "f64", NULL
	};
	char part[64];
	for (int k = 1; opcode_part(in, k, part, sizeof part); k++) {
		if (strcmp(part, "mmio") == 0)
			return verr(V, in->st, in->op, RULE_ALLOW, "'.mmio' loads read device registers, which can have side "
				    "effects");
		if (!in_list(part, ok))
			return verr(V, in->st, in->op, RULE_ALLOW, "'.%s' is not a load qualifier probes may use", part);
	}
	return 0;
}

/* prefetch[.global|.local].L1|.L2 and prefetchu.L1 only: the tensormap and
 * eviction-priority forms change what the kernel keeps cached. */
static int check_prefetch_quals(struct vctx *V, const struct vinsn *in)
{
	char p1[64] = "", p2[64] = "", p3[64] = "";
	opcode_part(in, 1, p1, sizeof p1);
	opcode_part(in, 2, p2, sizeof p2);
	opcode_part(in, 3, p3, sizeof p3);
	int level1 = !strcmp(p1, "L1") || !strcmp(p1, "L2");
	int level2 = (!strcmp(p1, "global") || !strcmp(p1, "local")) && (!strcmp(p2, "L1") || !strcmp(p2, "L2"));
	int ok = strcmp(in->base, "prefetchu") == 0 ? !strcmp(p1, "L1") && !*p2
						     : ((level1 && !*p2) || (level2 && !*p3));
	if (!ok)
		return verr(V, in->st, in->op, RULE_ALLOW, "probes may prefetch only with prefetch[.global|.local].L1/.L2 "
			    "or prefetchu.L1");
	return 0;
}

static int check_opcode(struct vctx *V, const struct vinsn *in, const struct allowed **a)
{
	char part[64];
	for (int k = 1; opcode_part(in, k, part, sizeof part); k++)
		if (strncmp(part, "shared", 6) == 0)
			return verr(V, in->st, in->op, RULE_SHARED, "'.%s' is shared memory", part);
	for (size_t i = 0; i < sizeof denied / sizeof denied[0]; i++)
		if (in_list(in->base, denied[i].bases))
			return verr(V, in->st, in->op, denied[i].rule, "'%.*s' %s", (int)in->st->toks[in->op].len,
				    in->st->text + in->st->toks[in->op].off, denied[i].why);
	for (int k = 1; opcode_part(in, k, part, sizeof part); k++)
		if (strcmp(part, "cc") == 0)
			return verr(V, in->st, in->op, RULE_REGS, "'.cc' writes the carry flag, which belongs to the kernel "
				    "(its own add.cc/addc pairs would break)");
	*a = find_allowed(in->base);
	if (!*a)
		return verr(V, in->st, in->op, RULE_ALLOW, "'%s' is not on the list of instructions probes may use "
			    "(doc/probes.md)", in->base);
	if ((*a)->flags & A_LOAD)
		return check_load_quals(V, in);
	if ((*a)->flags & A_PREF)
		return check_prefetch_quals(V, in);
	if (((*a)->flags & A_NO_OPS) && in->n_ops)
		return verr(V, in->st, in->ops[0].a, RULE_ALLOW, "'%s' takes no operands in a probe", in->base);
	return 0;
}

/* ---- helpers ---- */

static int is_memory_opcode(const char *op)
{
	static const char *const mem[] = { "ld", "ldu", "st", "atom", "red", "prefetch", "prefetchu", NULL };
	size_t n = strcspn(op, ".");
	for (const char *const *m = mem; *m; m++)
		if (strlen(*m) == n && strncmp(op, *m, n) == 0)
			return 1;
	return strncmp(op, "cp.async", 8) == 0 || strncmp(op, "cp.reduce.async", 15) == 0;
}

static int check_helpers(struct vctx *V, const struct snippet_stmt *st)
{
	const struct probe_hook *h = V->h;
	for (int i = 0; i < st->n_toks; i++) {
		const char *w = verify_helper(st, i);
		if (!w)
			continue;
		int mem = !strcmp(w, "ADDR") || !strcmp(w, "BYTES");
		int insn = mem || !strcmp(w, "OUT") || !strncmp(w, "IN", 2);
		if (mem && h->kind != PROBE_TP_INSN)
			return verr(V, st, i, RULE_HELPER, "%s is only defined in hooks on memory instructions, not at "
				    "%s", w, h->kind == PROBE_TP_ENTRY ? "kernel entry" : h->kind == PROBE_TP_EXIT ?
				    "kernel exit" : "a region boundary");
		if (!strcmp(w, "SITE") && h->kind != PROBE_TP_INSN && h->kind != PROBE_TP_REGION)
			return verr(V, st, i, RULE_HELPER, "SITE names the traced instruction's site: only in opcode and "
				    "region hooks");
		if (!strcmp(w, "REGION") && h->kind != PROBE_TP_REGION)
			return verr(V, st, i, RULE_HELPER, "REGION is the region's number: only in hooks at = \"region\"");
		if (insn && h->kind != PROBE_TP_INSN)
			return verr(V, st, i, RULE_HELPER, "%s names an operand of the traced instruction: only in opcode "
				    "hooks", w);
		for (int k = 0; mem && k < h->n_opcodes; k++)
			if (!is_memory_opcode(h->opcodes[k]))
				return verr(V, st, i, RULE_HELPER, "%s is only defined on memory instructions (ld, st, atom, "
					    "red, cp.async, prefetch), and this hook also runs at '%s'", w, h->opcodes[k]);
	}
	return 0;
}

/* ---- SAVE ---- */

/* SAVE.u32/.u64 {a, b, ...}: each value's place in the record (the rules
 * verify_save.c holds for both dialects). */
static int check_save_layout(struct vctx *V, const struct vinsn *in, enum probe_type t, int n)
{
	char msg[256];
	if (verify_save_values(&V->p->map, V->saved, t, n, msg, sizeof msg) < 0)
		return verr(V, in->st, in->op, RULE_HELPER, "%s", msg);
	return 0;
}

static int check_save(struct vctx *V, const struct vinsn *in)
{
	const struct snippet_stmt *st = in->st;
	enum probe_type t;
	if (snippet_tok_is(st, in->op, "SAVE.u32"))
		t = PROBE_U32;
	else if (snippet_tok_is(st, in->op, "SAVE.u64"))
		t = PROBE_U64;
	else
		return verr(V, st, in->op, RULE_HELPER, "SAVE takes .u32 or .u64, not '%.*s'", (int)st->toks[in->op].len,
			    st->text + st->toks[in->op].off);
	if (!V->p->has_map)
		return verr(V, st, in->op, RULE_HELPER, "SAVE needs a map, and this probe has none (datamodel / [map])");
	if (V->p->map.level == PROBE_LEVEL_BLOCK && (V->h->kind == PROBE_TP_INSN || V->h->kind == PROBE_TP_REGION))
		return verr(V, st, in->op, RULE_HELPER, "a block map's SAVEs sit in entry or exit hooks (its warps share "
			    "one record and no cursor)");
	struct vop list = in->n_ops == 1 ? in->ops[0] : (struct vop){ 0, 0 };
	int braced = list.b > list.a && snippet_tok_is(st, list.a, "{");
	if (in->n_ops != 1 || (braced && (list.b - list.a < 3 || !snippet_tok_is(st, list.b - 1, "}"))))
		return verr(V, st, in->op, RULE_HELPER, "SAVE takes one list of values: SAVE.u%d {a, b, ...}", 8 * (int)t);
	if (in->guard >= 0)
		return verr(V, st, 0, RULE_HELPER, "a SAVE cannot be guarded: it always writes whole records");
	int n = 0;
	for (int a = list.a + braced, i = a; i <= list.b - braced; i++) {
		if (i < list.b - braced && !snippet_tok_is(st, i, ","))
			continue;
		if (++n > VERIFY_SAVE_MAX)
			return verr(V, st, in->op, RULE_HELPER, "SAVE takes at most %d values", VERIFY_SAVE_MAX);
		if (verify_scalar(V, in, &(struct vop){ a, i }) < 0)
			return -1;
		a = i + 1;
	}
	if (check_save_layout(V, in, t, n) < 0)
		return -1;
	V->saved += (uint32_t)n * (uint32_t)t;
	V->last_save = st;
	V->last_save_tok = in->op;
	return 0;
}

/* ---- the instruction ---- */

int verify_insn(struct vctx *V, const struct snippet_stmt *st)
{
	struct vinsn in;
	const struct allowed *a = NULL;
	if (split_insn(V, st, &in) < 0 || check_helpers(V, st) < 0)
		return -1;
	if (strcmp(in.base, "SAVE") == 0)
		return check_save(V, &in);
	if (check_opcode(V, &in, &a) < 0)
		return -1;
	if (in.guard >= 0 && verify_source(V, &in, &(struct vop){ in.guard, in.guard + 1 }, 0) < 0)
		return -1;
	for (int i = 0; i < in.n_ops; i++) {
		int addr = ((a->flags & A_LOAD) && i == 1) || ((a->flags & A_PREF) && i == 0);
		int rc = i == 0 && (a->flags & A_DEST) ? verify_dest(V, &in, &in.ops[0])
						       : verify_source(V, &in, &in.ops[i], addr);
		if (rc < 0)
			return -1;
	}
	if ((a->flags & (A_LOAD | A_PREF)) && in.n_ops < 1 + !!(a->flags & A_LOAD))
		return verr(V, st, in.op, RULE_SYNTAX, "'%s' needs an [address] operand", in.base);
	return 0;
}

/* ---- registers NEUTRINO's snippets write undeclared ---- */

/* Register type for what opcode writes: ".b64" for mov.u64 and
 * mul.wide.u32, ".pred" for setp; NULL when no part names a type. */
static const char *dest_reg_type(const char *opcode)
{
	if (strncmp(opcode, "setp.", 5) == 0)
		return ".pred";
	int wide = strstr(opcode, ".wide") != NULL;
	for (const char *q = strchr(opcode, '.'); q; q = strchr(q + 1, '.')) {
		if (strncmp(q, ".pred", 5) == 0 && (q[5] == 0 || q[5] == '.'))
			return ".pred";
		char c = q[1], *end;
		long n = (c == 'u' || c == 's' || c == 'b' || c == 'f') ? strtol(q + 2, &end, 10) : 0;
		if (n <= 0 || (*end && *end != '.'))
			continue;
		n *= wide ? 2 : 1;
		return n <= 16 ? ".b16" : n == 32 ? ".b32" : n == 64 ? ".b64" : n == 128 ? ".b128" : NULL;
	}
	return NULL;
}

void verify_implicit_dests(struct vctx *V, const struct snippet_stmt *st, struct strbuf *decls)
{
	struct vinsn in;
	char **cause = V->cause, why[160], opcode[128];
	V->cause = NULL; /* a statement that does not split is verify_probe's to report */
	int ok = st->toks[0].kind != SNIP_DOT && split_insn(V, st, &in) == 0;
	V->cause = cause;
	const struct allowed *a = ok ? find_allowed(in.base) : NULL;
	if (!a || !(a->flags & A_DEST) || in.n_ops == 0)
		return;
	snprintf(opcode, sizeof opcode, "%.*s", (int)st->toks[in.op].len, st->text + st->toks[in.op].off);
	const char *type = dest_reg_type(opcode);
	for (int i = in.ops[0].a; type && i < in.ops[0].b; i++) {
		const char *s = st->text + st->toks[i].off;
		size_t len = strcspn(s, ". ,|}");
		if (st->toks[i].kind != SNIP_WORD || len > st->toks[i].len || s[0] != '%' ||
		    snippet_reg_find(V->regs, V->n_regs, s, len) || snippet_reg_check(s, len, why, sizeof why) < 0)
			continue;
		if (snippet_reg_add(&V->regs, &V->n_regs, s, len, 0, type) == 0)
			strbuf_printf(decls, ".reg %s %.*s;\n", type, (int)len, s);
	}
}
