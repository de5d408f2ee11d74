/* The probe verifier. A snippet runs inside someone else's kernel, so it may
 * only observe: (1) it writes only registers it declared itself, (2) it never
 * changes control flow, (3) it never touches shared memory, (4) it never
 * calls a function, (5) it writes memory only through SAVE, (6) it uses no
 * warp collectives or resource instructions. Helper use is checked against
 * the hook and the map.
 *
 * Snippets are read statement by statement: comments (// and block) are
 * dropped, statements end with ';', `.reg` lines declare the probe's
 * registers (any snippet of the probe may declare; all may use them). The
 * checks are syntactic and conservative:
 *  - the destination is the first operand, except for st, red, prefetch,
 *    fences and other instructions without one, and except when the first
 *    operand is an address; `{a, b}` checks each, `p|q` both predicates;
 *  - reading anything (kernel registers, special registers) is allowed;
 *  - generic ld/st cannot be traced to shared memory and are allowed: only
 *    explicit .shared state spaces, cvta to/from shared, and the instructions
 *    that only work on shared memory (mbarrier, ldmatrix, stmatrix) are caught;
 *  - probe registers may use any name: the instrumenter renames them.
 * Errors read "FILE:LINE: rule N (what): detail: instruction;" where LINE is
 * the snippet's line in the TOML file. */
#include "engine/verify.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"
#include "common/strbuf.h"
#include "engine/amdgpu_verify.h"
#include "engine/verify_save.h"

#define VERIFY_MAX_OPS 32
#define VERIFY_SAVE_MAX 32 /* values in one SAVE (the instrumenter's limit) */
#define VERIFY_MAX_REGS 4096

enum rule {
	RULE_REGS = 1,
	RULE_FLOW,
	RULE_SHARED,
	RULE_CALL,
	RULE_WRITE,
	RULE_WARP,
	RULE_HELPER,
	RULE_SYNTAX,
};

static const char *const rule_names[] = {
	[RULE_REGS] = "rule 1 (writes only its own registers)",
	[RULE_FLOW] = "rule 2 (no control flow)",
	[RULE_SHARED] = "rule 3 (no shared memory)",
	[RULE_CALL] = "rule 4 (no function calls)",
	[RULE_WRITE] = "rule 5 (writes memory only through SAVE)",
	[RULE_WARP] = "rule 6 (no warp-collective or resource instructions)",
	[RULE_HELPER] = "helper",
	[RULE_SYNTAX] = "syntax",
};

struct reg_decl {
	char name[64];
	long count; /* 0: the single register `name`; N: name0 .. name<N-1> */
};

struct stmt {
	char *text;  /* comment-free, whitespace collapsed, without ';' */
	int line;    /* in the TOML file */
	int terminated;
};

struct insn {
	char *opcode;
	char *ops[VERIFY_MAX_OPS];
	int n_ops;
};

struct vctx {
	const struct probe *p;
	const struct probe_hook *h;
	char **cause;
	struct reg_decl *regs;
	int n_regs;
	uint32_t saved;   /* bytes SAVEd so far by the current snippet */
	int last_save_line;
	char *last_save_text;
};

__attribute__((format(printf, 4, 5)))
static int verr(struct vctx *V, const struct stmt *s, enum rule r, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return cause_set(V->cause, "%s:%d: %s: %s: %s%s", V->p->path ? V->p->path : "<string>", s->line, rule_names[r],
			 msg, s->text, s->terminated ? ";" : "");
}

/* --- statements ------------------------------------------------------- */

/* Next statement of the snippet from *pos; 0 at the end, -1 on OOM. */
static int next_stmt(const struct probe_hook *h, size_t *pos, int *line_off, struct stmt *out)
{
	const char *s = h->snippet;
	size_t i = *pos;
	struct strbuf sb;
	int start_off = -1, space = 0;
	strbuf_init(&sb);
	out->terminated = 0;
	while (s[i]) {
		if (s[i] == '/' && s[i + 1] == '/') {
			while (s[i] && s[i] != '\n')
				i++;
			continue;
		}
		if (s[i] == '/' && s[i + 1] == '*') {
			for (i += 2; s[i] && !(s[i] == '*' && s[i + 1] == '/'); i++)
				*line_off += s[i] == '\n';
			i += s[i] ? 2 : 0;
			space = 1;
			continue;
		}
		char c = s[i++];
		if (c == '\n')
			(*line_off)++;
		if (c == ';' && start_off < 0)
			continue; /* an empty statement: keep going, never stop early */
		if (c == ';') {
			out->terminated = 1;
			break;
		}
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
			space = 1;
			continue;
		}
		if (start_off < 0)
			start_off = *line_off;
		else if (space)
			strbuf_append(&sb, " ", 1);
		space = 0;
		strbuf_append(&sb, &c, 1);
	}
	*pos = i;
	if (start_off < 0) {
		strbuf_done(&sb);
		return 0;
	}
	out->text = strbuf_finish(&sb, NULL);
	if (!out->text)
		return -1;
	out->line = h->snippet_line + (h->snippet_flat ? 0 : start_off);
	return 1;
}

/* Calls fn for every statement of hook h. */
static int each_stmt(struct vctx *V, const struct probe_hook *h, int (*fn)(struct vctx *, struct stmt *))
{
	size_t pos = 0;
	int line_off = 0, r;
	struct stmt st;
	V->h = h;
	while ((r = next_stmt(h, &pos, &line_off, &st)) > 0) {
		r = fn(V, &st);
		free(st.text);
		if (r < 0)
			return -1;
	}
	if (r < 0)
		return cause_set(V->cause, "%s: out of memory", V->p->path);
	return 0;
}

/* Splits "@!%p op a, {b, c}, [d]" into opcode and top-level operands (in place). */
static int split_insn(char *text, struct insn *in)
{
	char *s = text;
	if (*s == '@') {
		s = strchr(s, ' ');
		if (!s)
			return -1;
		s++;
	}
	in->opcode = s;
	in->n_ops = 0;
	s += strcspn(s, " ");
	if (!*s)
		return 0;
	*s++ = 0;
	int depth = 0;
	char *start = s;
	for (;; s++) {
		if (*s == '{' || *s == '[' || *s == '(')
			depth++;
		else if (*s == '}' || *s == ']' || *s == ')')
			depth--;
		if ((*s == ',' && depth == 0) || !*s) {
			int end = !*s;
			*s = 0;
			if (in->n_ops == VERIFY_MAX_OPS)
				return -1;
			while (*start == ' ')
				start++;
			size_t l = strlen(start);
			while (l && start[l - 1] == ' ')
				start[--l] = 0;
			in->ops[in->n_ops++] = start;
			if (end)
				break;
			start = s + 1;
		}
	}
	return depth == 0 ? 0 : -1;
}

/* --- names ------------------------------------------------------------ */

static int is_name_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$';
}

/* Is `word` in s as a whole word (not part of %name, .name or longer names)? */
static int has_word(const char *s, const char *word)
{
	size_t wl = strlen(word);
	for (const char *q = strstr(s, word); q; q = strstr(q + 1, word)) {
		int before = q > s && (is_name_char(q[-1]) || q[-1] == '%' || q[-1] == '.');
		if (!before && !is_name_char(q[wl]))
			return 1;
	}
	return 0;
}

/* First dotted part of an opcode equals `base`. */
static int opcode_base(const char *op, const char *base)
{
	size_t n = strlen(base);
	return strncmp(op, base, n) == 0 && (op[n] == 0 || op[n] == '.');
}

static int opcode_base_in(const char *op, const char *const *bases)
{
	for (; *bases; bases++)
		if (opcode_base(op, *bases))
			return 1;
	return 0;
}

static int declared(const struct vctx *V, const char *name, size_t len)
{
	for (int i = 0; i < V->n_regs; i++) {
		const struct reg_decl *r = &V->regs[i];
		size_t rl = strlen(r->name);
		if (r->count == 0) {
			if (rl == len && memcmp(r->name, name, len) == 0)
				return 1;
			continue;
		}
		if (len <= rl || memcmp(r->name, name, rl) != 0)
			continue;
		const char *d = name + rl;
		size_t dl = len - rl;
		if (dl > 9 || (dl > 1 && d[0] == '0'))
			continue;
		long v = 0;
		size_t k = 0;
		for (; k < dl && d[k] >= '0' && d[k] <= '9'; k++)
			v = v * 10 + (d[k] - '0');
		if (k == dl && v < r->count)
			return 1;
	}
	return 0;
}

/* --- .reg declarations (pass 1) --------------------------------------- */

static int add_reg(struct vctx *V, struct stmt *s, const char *name, size_t len, long count)
{
	char buf[64];
	/* '%' always: the instrumenter renames %names, so bare ones could meet the kernel's */
	if (len < 2 || len >= sizeof buf || name[0] != '%')
		return verr(V, s, RULE_SYNTAX, "bad register name in .reg: probe registers are written %%name");
	for (size_t i = 1; i < len; i++)
		if (!is_name_char(name[i]))
			return verr(V, s, RULE_SYNTAX, "bad register name in .reg");
	memcpy(buf, name, len);
	buf[len] = 0;
	if (strncmp(buf, "%ntop_", 6) == 0)
		return verr(V, s, RULE_REGS, "registers named %%ntop_* are reserved for the engine");
	if (V->n_regs >= VERIFY_MAX_REGS)
		return verr(V, s, RULE_SYNTAX, "too many register declarations");
	if (V->n_regs % 64 == 0) {
		struct reg_decl *r = realloc(V->regs, (size_t)(V->n_regs + 64) * sizeof *r);
		if (!r)
			return cause_set(V->cause, "out of memory");
		V->regs = r;
	}
	snprintf(V->regs[V->n_regs].name, sizeof V->regs[V->n_regs].name, "%s", buf);
	V->regs[V->n_regs++].count = count;
	return 0;
}

/* ".reg .b32 %a, %b<4>" */
static int parse_reg_decl(struct vctx *V, struct stmt *s)
{
	const char *q = s->text + 4;
	for (;;) { /* types, vector widths, .align N */
		while (*q == ' ')
			q++;
		if (*q == '.')
			q += strcspn(q, " ");
		else if (*q >= '0' && *q <= '9')
			q += strspn(q, "0123456789");
		else
			break;
	}
	if (!*q)
		return verr(V, s, RULE_SYNTAX, ".reg declares no register");
	while (*q) {
		while (*q == ' ')
			q++;
		size_t n = strcspn(q, " ,<");
		const char *name = q;
		long count = 0;
		q += n;
		while (*q == ' ')
			q++;
		if (*q == '<') {
			char *end;
			count = strtol(q + 1, &end, 10);
			if (end == q + 1 || *end != '>' || count < 1 || count > 100000)
				return verr(V, s, RULE_SYNTAX, "bad register range <N>");
			q = end + 1;
			while (*q == ' ')
				q++;
		}
		if (add_reg(V, s, name, n, count) < 0)
			return -1;
		if (*q && *q != ',')
			return verr(V, s, RULE_SYNTAX, "unexpected text in .reg");
		if (*q)
			q++;
	}
	return 0;
}

static int collect_decl(struct vctx *V, struct stmt *s)
{
	if (strncmp(s->text, ".reg ", 5) == 0)
		return parse_reg_decl(V, s);
	return 0;
}

/* --- instruction rules (pass 2) --------------------------------------- */

static int has_shared_space(const char *opcode)
{
	static const char *const shared_only[] = { "mbarrier", "ldmatrix", "stmatrix", NULL };
	if (opcode_base_in(opcode, shared_only))
		return 1;
	for (const char *q = strstr(opcode, ".shared"); q; q = strstr(q + 1, ".shared"))
		if (q[7] == 0 || q[7] == '.' || q[7] == ':')
			return 1;
	return 0;
}

/* A probe shares the kernel's memory and warps: a stray store would corrupt
 * the app's data, and a warp collective inside divergent code deadlocks or is
 * undefined, so both are refused even though they are not control flow. */
static int check_side_effects(struct vctx *V, struct stmt *s, const struct insn *in)
{
	static const char *const writes[] = { "st", "red", "atom", "cp", "multimem", "stmatrix", "tensormap",
					      NULL };
	static const char *const warp[] = { "shfl", "vote", "match", "redux", "elect", "setmaxnreg", "alloca",
					    "stacksave", "stackrestore", "griddepcontrol", "mbarrier", "wgmma",
					    "wmma", "mma", "tcgen05", NULL };
	if (opcode_base_in(in->opcode, writes))
		return verr(V, s, RULE_WRITE, "'%s' writes memory; record values with SAVE", in->opcode);
	if (opcode_base_in(in->opcode, warp))
		return verr(V, s, RULE_WARP, "'%s' synchronises or reconfigures the warp", in->opcode);
	return 0;
}

static int check_flow(struct vctx *V, struct stmt *s, const struct insn *in)
{
	static const char *const flow[] = { "bra", "brx", "ret", "exit", "trap", "brkpt", "bar", "barrier", NULL };
	if (opcode_base(in->opcode, "call"))
		return verr(V, s, RULE_CALL, "snippets cannot call functions");
	if (opcode_base_in(in->opcode, flow))
		return verr(V, s, RULE_FLOW, "'%s' changes control flow or synchronises threads", in->opcode);
	if (has_shared_space(in->opcode))
		return verr(V, s, RULE_SHARED, "'%s' uses shared memory", in->opcode);
	return check_side_effects(V, s, in);
}

static int is_memory_opcode(const char *op)
{
	static const char *const mem[] = { "ld", "ldu", "st", "atom", "red", "prefetch", "prefetchu", NULL };
	return opcode_base_in(op, mem) || strncmp(op, "cp.async", 8) == 0 || strncmp(op, "cp.reduce.async", 15) == 0;
}

static int check_helpers(struct vctx *V, struct stmt *s, const char *full)
{
	static const char *const mem_helpers[] = { "ADDR", "BYTES", NULL };
	static const char *const insn_helpers[] = { "OUT", "IN1", "IN2", "IN3", NULL };
	const struct probe_hook *h = V->h;
	for (const char *const *w = mem_helpers; *w; w++) {
		if (!has_word(full, *w))
			continue;
		if (h->kind != PROBE_TP_INSN)
			return verr(V, s, RULE_HELPER, "%s is only defined in hooks on memory instructions, not at kernel %s",
				    *w, h->kind == PROBE_TP_ENTRY ? "entry" : "exit");
		for (int i = 0; i < h->n_opcodes; i++)
			if (!is_memory_opcode(h->opcodes[i]))
				return verr(V, s, RULE_HELPER,
					    "%s is only defined on memory instructions (ld, st, atom, red, cp.async, "
					    "prefetch), and this hook also runs at '%s'", *w, h->opcodes[i]);
	}
	for (const char *const *w = insn_helpers; *w; w++)
		if (has_word(full, *w) && h->kind != PROBE_TP_INSN)
			return verr(V, s, RULE_HELPER, "%s names an operand of the traced instruction: only in opcode hooks",
				    *w);
	return 0;
}

/* One SAVE.u32/.u64 {a, b, ...}: size, alignment and field types. */
static int check_save(struct vctx *V, struct stmt *s, const struct insn *in)
{
	const struct probe_map *m = &V->p->map;
	enum probe_type t;
	if (strcmp(in->opcode, "SAVE.u32") == 0)
		t = PROBE_U32;
	else if (strcmp(in->opcode, "SAVE.u64") == 0)
		t = PROBE_U64;
	else
		return verr(V, s, RULE_HELPER, "SAVE takes .u32 or .u64, not '%s'", in->opcode);
	if (!V->p->has_map)
		return verr(V, s, RULE_HELPER, "SAVE needs a map, and this probe has none (datamodel / [map])");
	if (in->n_ops != 1 || !in->ops[0][0] || (in->ops[0][0] == '{' && strlen(in->ops[0]) <= 2))
		return verr(V, s, RULE_HELPER, "SAVE takes one list of values: SAVE%s {a, b, ...}", in->opcode + 4);
	int n = 1;
	for (const char *q = in->ops[0]; *q; q++)
		n += *q == ',';
	if (n > VERIFY_SAVE_MAX)
		return verr(V, s, RULE_HELPER, "SAVE takes at most %d values", VERIFY_SAVE_MAX);
	if (s->text[0] == '@')
		return verr(V, s, RULE_HELPER, "a SAVE cannot be guarded: it always writes whole records");
	char msg[256];
	if (verify_save_values(m, V->saved, t, n, msg, sizeof msg) < 0)
		return verr(V, s, RULE_HELPER, "%s", msg);
	V->saved += (uint32_t)n * (uint32_t)t;
	V->last_save_line = s->line;
	free(V->last_save_text);
	V->last_save_text = strdup(s->text);
	return 0;
}

static int check_dest_name(struct vctx *V, struct stmt *s, const char *name, size_t len)
{
	static const char *const kernel_helpers[] = { "OUT", "IN1", "IN2", "IN3", "ADDR", "BYTES", NULL };
	static const char *const special_helpers[] = { "CLOCK", "GTIMER", "SMID", NULL };
	if (len == 1 && name[0] == '_')
		return 0;
	for (const char *const *w = kernel_helpers; *w; w++)
		if (strlen(*w) == len && memcmp(name, *w, len) == 0)
			return verr(V, s, RULE_REGS, "writes %s, which stands for the traced instruction's operand", *w);
	for (const char *const *w = special_helpers; *w; w++)
		if (strlen(*w) == len && memcmp(name, *w, len) == 0)
			return verr(V, s, RULE_REGS, "writes %s, a read-only special register", *w);
	if (!declared(V, name, len))
		return verr(V, s, RULE_REGS, "writes %.*s, which the probe did not declare with .reg", (int)len, name);
	return 0;
}

/* Destination operand: "%a", "{%a, %b}", "%p|%q", "%v.x". */
static int check_dest(struct vctx *V, struct stmt *s, const char *op)
{
	const char *q = op + (op[0] == '{');
	while (*q && *q != '}') {
		q += strspn(q, " ");
		size_t n = strcspn(q, " ,|}.");
		if (n == 0)
			return verr(V, s, RULE_SYNTAX, "cannot read the destination operand");
		if (check_dest_name(V, s, q, n) < 0)
			return -1;
		q += n;
		q += strcspn(q, ",|}"); /* skip a component suffix such as .x */
		if (*q == ',' || *q == '|')
			q++;
	}
	return 0;
}

static int has_dest(const struct insn *in)
{
	static const char *const no_dest[] = { "st", "red", "prefetch", "prefetchu", "membar", "fence", "nanosleep",
					       "pmevent", "discard", "applypriority", "griddepcontrol", "cp", NULL };
	if (in->n_ops == 0 || opcode_base_in(in->opcode, no_dest))
		return 0;
	if (opcode_base(in->opcode, "multimem") && !strstr(in->opcode, "ld_reduce"))
		return 0;
	return in->ops[0][0] != '[';
}

static int check_insn(struct vctx *V, struct stmt *s)
{
	struct insn in;
	char *copy = strdup(s->text);
	int r = -1;
	if (!copy)
		return cause_set(V->cause, "out of memory");
	if (split_insn(copy, &in) < 0) {
		verr(V, s, RULE_SYNTAX, "cannot read this instruction");
		goto out;
	}
	if (check_flow(V, s, &in) < 0 || check_helpers(V, s, s->text) < 0)
		goto out;
	if (opcode_base(in.opcode, "SAVE")) {
		r = check_save(V, s, &in);
		goto out;
	}
	r = has_dest(&in) ? check_dest(V, s, in.ops[0]) : 0;
out:
	free(copy);
	return r;
}

static int is_label(const char *t)
{
	size_t n = 0;
	while (is_name_char(t[n]) || (n == 0 && t[n] == '%'))
		n++;
	while (t[n] == ' ')
		n++;
	return n > 0 && t[n] == ':' && t[n + 1] != ':';
}

static int check_stmt(struct vctx *V, struct stmt *s)
{
	const char *t = s->text;
	if (!s->terminated)
		return verr(V, s, RULE_SYNTAX, "statement does not end with ';'");
	if (strstr(t, "%ntop_"))
		return verr(V, s, RULE_REGS, "registers named %%ntop_* are reserved for the engine");
	if (t[0] == '{' || t[0] == '}')
		return verr(V, s, RULE_SYNTAX, "{ } blocks are not supported in snippets");
	if (is_label(t))
		return verr(V, s, RULE_FLOW, "label definitions are not allowed (snippets cannot branch)");
	if (t[0] == '.') {
		if (strncmp(t, ".reg ", 5) == 0)
			return 0;
		if (strncmp(t, ".shared", 7) == 0)
			return verr(V, s, RULE_SHARED, "snippets cannot declare shared memory");
		return verr(V, s, RULE_SYNTAX, "only .reg declarations are allowed in snippets");
	}
	return check_insn(V, s);
}

static int check_hook(struct vctx *V, const struct probe_hook *h)
{
	V->saved = 0;
	V->last_save_line = 0;
	if (each_stmt(V, h, check_stmt) < 0)
		return -1;
	const struct probe_map *m = &V->p->map;
	struct stmt s = { .text = V->last_save_text ? V->last_save_text : (char *)"SAVE", .line = V->last_save_line,
			  .terminated = 1 };
	char msg[256];
	if (V->p->has_map && verify_save_total(m, V->saved, msg, sizeof msg) < 0)
		return verr(V, &s, RULE_HELPER, "%s", msg);
	return 0;
}

int verify_probe(const struct probe *p, char **cause)
{
	if (p->isa == PROBE_ISA_GCN)
		return amdgpu_verify_probe(p, cause);
	struct vctx V = { .p = p, .cause = cause };
	int r = 0;
	for (int i = 0; i < p->n_hooks && r == 0; i++)
		r = each_stmt(&V, &p->hooks[i], collect_decl);
	for (int i = 0; i < p->n_hooks && r == 0; i++)
		r = check_hook(&V, &p->hooks[i]);
	free(V.regs);
	free(V.last_save_text);
	return r;
}
