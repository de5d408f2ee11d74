/* Runs probed PTX on the host: a small interpreter for the instructions the
 * instrumenter emits (and the few the test kernels use) executes every
 * thread of a launch, one after the other, against map buffers laid out as
 * engine.h says, calls into device functions included (frames, .param and
 * .reg parameters, the thread's local memory). Then every unit's count,
 * every record and every byte that must stay untouched is checked against
 * the host mirror of the layout (engine_map_unit_index /
 * engine_map_records_offset), for warp and thread maps, static and dynamic
 * cursors, cap overflow and odd block shapes; region records are checked
 * against the sequence each warp must write. No GPU needed: this is the
 * device-side contract checked in CI. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/probe/probe.h"
#include "engine/ptx/ptx.h"
#include "engine/ptx/ptx_inject.h"
#include "testlib.h"

#define MAX_INSNS 4096
#define MAX_REGS 512
#define MAX_OPS 8
#define FILL 0xAB /* bytes nobody may write */

/* ---- the program -------------------------------------------------------- */

struct insn {
	char pred[48];  /* "" or "%p" */
	int neg;        /* @!pred */
	char op[64];
	int n_ops;
	char ops[MAX_OPS][96];
	char label[48]; /* a label line: op is empty */
};

#define MAX_FUNCS 8
#define MAX_FORMALS 8

/* A function of the program: its instructions are v[first .. end). */
struct pfunc {
	char name[96];
	int first, end;
	int is_entry;
	char formal[MAX_FORMALS][96]; /* parameter names, in order */
	int formal_reg[MAX_FORMALS];  /* a .reg parameter (else .param) */
	int n_formals;
	char ret[MAX_FORMALS][96];    /* return parameter names */
	int ret_reg[MAX_FORMALS];
	int n_rets;
	char local[4][96];            /* .local arrays of its body */
	uint64_t local_size[4];
	int n_locals;
};

struct prog {
	struct insn *v;
	int n;
	struct pfunc f[MAX_FUNCS];
	int n_funcs;
};

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t' || *s == '\n')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n'))
		s[--n] = 0;
	return s;
}

/* Splits "a, {b, c}, [d+4]" at top-level commas. */
static int split_ops(char *s, struct insn *x)
{
	int depth = 0;
	char *start = s;
	for (char *p = s;; p++) {
		if (*p == '{' || *p == '[' || *p == '(')
			depth++;
		if (*p == '}' || *p == ']' || *p == ')')
			depth--;
		if ((*p == ',' && depth == 0) || !*p) {
			int end = !*p;
			*p = 0;
			char *t = trim(start);
			if (*t) {
				if (x->n_ops == MAX_OPS)
					return -1;
				snprintf(x->ops[x->n_ops++], sizeof x->ops[0], "%s", t);
			}
			if (end)
				return 0;
			start = p + 1;
		}
	}
}

static int parse_stmt(struct prog *pg, char *s)
{
	s = trim(s);
	if (!*s || *s == '.' || *s == '{' || *s == '}' || !strncmp(s, "//", 2))
		return 0;
	if (pg->n == MAX_INSNS)
		return -1;
	struct insn *x = &pg->v[pg->n++];
	memset(x, 0, sizeof *x);
	if (*s == '@') {
		s++;
		if (*s == '!') {
			x->neg = 1;
			s++;
		}
		size_t n = strcspn(s, " \t");
		snprintf(x->pred, sizeof x->pred, "%.*s", (int)n, s);
		s = trim(s + n);
	}
	size_t n = strcspn(s, " \t");
	snprintf(x->op, sizeof x->op, "%.*s", (int)n, s);
	return split_ops(s + n, x);
}

/* "[.reg|.param] .TYPE name" -> name, kind. */
static void formal_of(const char *decl, char *name, size_t n, int *is_reg)
{
	const char *sp = strrchr(decl, ' ');
	snprintf(name, n, "%s", sp ? sp + 1 : decl);
	*is_reg = strstr(decl, ".reg") != NULL;
}

/* ".func (.param .b32 r0, .reg .b32 r1) name": the return list. */
static void rets_of(const char *prefix, struct pfunc *f)
{
	const char *open = strchr(prefix, '('), *close = open ? strchr(open, ')') : NULL;
	if (!close)
		return;
	char list[512];
	snprintf(list, sizeof list, "%.*s", (int)(close - open - 1), open + 1);
	for (char *tok = strtok(list, ","); tok && f->n_rets < MAX_FORMALS; tok = strtok(NULL, ",")) {
		formal_of(trim(tok), f->ret[f->n_rets], sizeof f->ret[0], &f->ret_reg[f->n_rets]);
		f->n_rets++;
	}
}

/* `.local .align 8 .b8 name[N];` */
static void local_of(const char *text, struct pfunc *f)
{
	const char *br = strchr(text, '[');
	const char *sp = br ? br : text + strlen(text);
	while (sp > text && sp[-1] != ' ')
		sp--;
	if (!br || f->n_locals == 4)
		return;
	snprintf(f->local[f->n_locals], sizeof f->local[0], "%.*s", (int)(br - sp), sp);
	f->local_size[f->n_locals++] = strtoull(br + 1, NULL, 0);
}

static int load_func(struct prog *pg, const struct ptx_func *fn)
{
	if (pg->n_funcs == MAX_FUNCS)
		return -1;
	struct pfunc *f = &pg->f[pg->n_funcs++];
	memset(f, 0, sizeof *f);
	snprintf(f->name, sizeof f->name, "%s", fn->name);
	f->is_entry = fn->is_entry;
	f->first = pg->n;
	for (int i = 0; i < fn->n_params && i < MAX_FORMALS; i++) {
		formal_of(fn->params[i], f->formal[f->n_formals], sizeof f->formal[0], &f->formal_reg[f->n_formals]);
		f->n_formals++;
	}
	if (!fn->is_entry)
		rets_of(fn->prefix, f);
	for (int i = 0; i < fn->n_body; i++) {
		const struct ptx_stmt *st = &fn->body[i];
		char buf[1024];
		if (st->kind == PTX_DIRECTIVE && st->text && !strncmp(st->text, ".local", 6))
			local_of(st->text, f);
		if (st->kind == PTX_LABEL) {
			struct insn *x = &pg->v[pg->n++];
			memset(x, 0, sizeof *x);
			snprintf(x->label, sizeof x->label, "%.*s", (int)strcspn(st->text, ":"), st->text);
		} else if (st->kind == PTX_INSN) {
			snprintf(buf, sizeof buf, "%s", st->text);
			buf[strcspn(buf, ";")] = 0;
			for (char *c = buf; *c; c++) /* a call's operands may span lines */
				if (*c == '\n' || *c == '\t')
					*c = ' ';
			if (parse_stmt(pg, buf) < 0)
				return -1;
		}
		if (pg->n >= MAX_INSNS - 1)
			return -1;
	}
	f->end = pg->n;
	return 0;
}

/* Every function body of the emitted PTX (read back with the engine's own
 * parser: the interpreter sees what ptxas would). */
static int prog_load(struct prog *pg, const char *ptx)
{
	struct ptx_module *m = NULL;
	char *cause = NULL;
	memset(pg, 0, sizeof *pg);
	if (ptx_parse(ptx, strlen(ptx), &m, &cause) < 0) {
		free(cause);
		return -1;
	}
	pg->v = calloc(MAX_INSNS, sizeof *pg->v);
	int rc = 0;
	for (int t = 0; t < m->n_items && rc == 0; t++)
		if (m->items[t].kind == PTX_TOP_FUNC && !m->items[t].func->is_decl)
			rc = load_func(pg, m->items[t].func);
	ptx_free(m);
	return rc;
}

/* ---- one thread --------------------------------------------------------- */

struct mem {
	uint64_t base[ENGINE_MAX_MAPS + 1]; /* device addresses; last = the kernel's scratch */
	uint8_t *host[ENGINE_MAX_MAPS + 1];
	uint64_t size[ENGINE_MAX_MAPS + 1];
	int n;
};

#define LOCAL_BASE 0x10000000ull /* the thread's local memory, as a generic address */
#define LOCAL_SIZE 8192
#define MAX_DEPTH 6

/* One function's activation: its registers, .param space and locals. */
struct frame {
	const struct pfunc *fn;
	char names[MAX_REGS][96]; /* as long as an operand */
	uint64_t vals[MAX_REGS];
	int n_regs;
	char pn[32][96];          /* .param variables and parameters */
	uint64_t pv[32];
	int n_p;
	uint64_t local_at[4];     /* fn's .local arrays */
};

struct thread {
	uint32_t tid[3], ntid[3], ctaid[3], nctaid[3];
	uint64_t clock;
	struct frame *fr;
	int depth;
	uint8_t local[LOCAL_SIZE];
	uint32_t local_used;
	const struct mem *mem;
	const char *const *param_names; /* the kernel's .param names, in order */
	const uint64_t *param_vals;
	int n_params;
	char err[256];
};

static uint64_t *reg_slot(struct thread *t, const char *name)
{
	struct frame *f = t->fr;
	for (int i = 0; i < f->n_regs; i++)
		if (!strcmp(f->names[i], name))
			return &f->vals[i];
	if (f->n_regs == MAX_REGS)
		return NULL;
	snprintf(f->names[f->n_regs], sizeof f->names[0], "%s", name);
	f->vals[f->n_regs] = 0;
	return &f->vals[f->n_regs++];
}

static uint64_t *param_slot(struct frame *f, const char *name, int create)
{
	for (int i = 0; i < f->n_p; i++)
		if (!strcmp(f->pn[i], name))
			return &f->pv[i];
	if (!create || f->n_p == 32)
		return NULL;
	snprintf(f->pn[f->n_p], sizeof f->pn[0], "%s", name);
	f->pv[f->n_p] = 0;
	return &f->pv[f->n_p++];
}

static int special(struct thread *t, const char *s, uint64_t *v)
{
	static const char *const dims[] = { "%tid.", "%ntid.", "%ctaid.", "%nctaid." };
	const uint32_t *arr[] = { t->tid, t->ntid, t->ctaid, t->nctaid };
	for (int k = 0; k < 4; k++) {
		size_t n = strlen(dims[k]);
		if (!strncmp(s, dims[k], n) && s[n] >= 'x' && s[n] <= 'z' && !s[n + 1]) {
			*v = arr[k][s[n] - 'x'];
			return 1;
		}
	}
	uint32_t tl = (t->tid[2] * t->ntid[1] + t->tid[1]) * t->ntid[0] + t->tid[0];
	if (!strcmp(s, "%laneid"))
		*v = tl % 32;
	else if (!strcmp(s, "%clock64") || !strcmp(s, "%globaltimer"))
		*v = t->clock += 10;
	else if (!strcmp(s, "%clock"))
		*v = (t->clock += 10) & 0xffffffffu;
	else if (!strcmp(s, "%smid"))
		*v = 7;
	else
		return 0;
	return 1;
}

/* A name that is no register: a .local array (its address) or a .reg
 * parameter (a register of the frame). */
static int named(struct thread *t, const char *s, uint64_t *v)
{
	const struct frame *f = t->fr;
	for (int i = 0; i < f->fn->n_locals; i++)
		if (!strcmp(f->fn->local[i], s)) {
			*v = f->local_at[i];
			return 1;
		}
	for (int i = 0; i < f->n_regs; i++)
		if (!strcmp(f->names[i], s)) {
			*v = f->vals[i];
			return 1;
		}
	return 0;
}

static int value(struct thread *t, const char *s, uint64_t *v)
{
	if (special(t, s, v) || named(t, s, v))
		return 0;
	if (*s == '%') {
		uint64_t *r = reg_slot(t, s);
		if (!r)
			return -1;
		*v = *r;
		return 0;
	}
	char *end;
	*v = (uint64_t)strtoll(s, &end, 0);
	if (*end == 0)
		return 0;
	*v = strtoull(s, &end, 0);
	return *end ? -1 : 0;
}

static int set(struct thread *t, const char *name, uint64_t v, int bits)
{
	uint64_t *r = reg_slot(t, name);
	if (!r)
		return -1;
	*r = bits == 64 ? v : bits == 1 ? (v != 0) : (v & 0xffffffffu);
	return 0;
}

static int has_part(const char *op, const char *part)
{
	size_t n = strlen(part);
	for (const char *p = strchr(op, '.'); p; p = strchr(p + 1, '.'))
		if (!strncmp(p + 1, part, n) && (p[1 + n] == '.' || !p[1 + n]))
			return 1;
	return 0;
}

static int op_bits(const char *op)
{
	if (has_part(op, "pred"))
		return 1;
	if (has_part(op, "u64") || has_part(op, "s64") || has_part(op, "b64") || has_part(op, "f64"))
		return 64;
	return 32;
}

/* "[reg+off]" -> address */
static int address(struct thread *t, const char *op, uint64_t *a)
{
	char addr[96];
	snprintf(addr, sizeof addr, "%s", op + 1);
	addr[strcspn(addr, "]")] = 0;
	char *plus = strchr(addr, '+');
	uint64_t off = 0;
	if (plus) {
		*plus = 0;
		off = strtoull(plus + 1, NULL, 0);
	}
	if (value(t, addr, a) < 0)
		return -1;
	*a += off;
	return 0;
}

/* The bytes at a (n of them): a map or scratch buffer, or local memory. */
static uint8_t *mem_at(struct thread *t, uint64_t a, int n)
{
	for (int m = 0; m < t->mem->n; m++)
		if (a >= t->mem->base[m] && a + (uint64_t)n <= t->mem->base[m] + t->mem->size[m])
			return t->mem->host[m] + (a - t->mem->base[m]);
	if (a >= LOCAL_BASE && a + (uint64_t)n <= LOCAL_BASE + t->local_used)
		return t->local + (a - LOCAL_BASE);
	return NULL;
}

/* Store (global, generic or local): every byte must land inside a known buffer. */
static int store(struct thread *t, const struct insn *x)
{
	uint64_t a;
	if (address(t, x->ops[0], &a) < 0)
		return -1;
	int bytes = op_bits(x->op) / 8;
	int n = has_part(x->op, "v4") ? 4 : has_part(x->op, "v2") ? 2 : 1;
	char vals[MAX_OPS][96];
	int nv = 0;
	if (n > 1) {
		char list[96];
		snprintf(list, sizeof list, "%s", x->ops[1] + 1);
		list[strcspn(list, "}")] = 0;
		struct insn tmp;
		memset(&tmp, 0, sizeof tmp);
		split_ops(list, &tmp);
		for (int i = 0; i < tmp.n_ops; i++)
			snprintf(vals[nv++], sizeof vals[0], "%s", tmp.ops[i]);
	} else {
		snprintf(vals[nv++], sizeof vals[0], "%s", x->ops[1]);
	}
	if (nv != n || a % (uint64_t)(bytes * n)) {
		snprintf(t->err, sizeof t->err, "misaligned or bad store %s at %#llx", x->op, (unsigned long long)a);
		return -1;
	}
	/* red.global.max/add: folds into what is there (threads run one at a time) */
	int red = !strncmp(x->op, "red.", 4), add = red && has_part(x->op, "add");
	for (int k = 0; k < n; k++, a += (uint64_t)bytes) {
		uint64_t v;
		if (value(t, vals[k], &v) < 0)
			return -1;
		uint8_t *at = mem_at(t, a, bytes);
		if (!at) {
			snprintf(t->err, sizeof t->err, "store outside every buffer at %#llx", (unsigned long long)a);
			return -1;
		}
		uint64_t was = 0;
		memcpy(&was, at, (size_t)bytes);
		if (red)
			v = add ? was + v : was > v ? was : v;
		memcpy(at, &v, (size_t)bytes);
	}
	return 0;
}

static int load(struct thread *t, const struct insn *x)
{
	uint64_t a, v = 0;
	int bytes = op_bits(x->op) / 8;
	uint8_t *at = address(t, x->ops[1], &a) < 0 ? NULL : mem_at(t, a, bytes);
	if (!at) {
		snprintf(t->err, sizeof t->err, "load outside every buffer: %s", x->ops[1]);
		return -1;
	}
	memcpy(&v, at, (size_t)bytes);
	return set(t, x->ops[0], v, bytes * 8);
}

/* ld.param and st.param: the frame's .param space (the kernel's from its
 * arguments). */
static int param_access(struct thread *t, const struct insn *x, int is_store)
{
	char name[96];
	snprintf(name, sizeof name, "%s", x->ops[is_store ? 0 : 1] + 1);
	name[strcspn(name, "]+")] = 0;
	uint64_t *slot = param_slot(t->fr, name, is_store);
	for (int i = 0; !slot && t->depth == 1 && i < t->n_params; i++)
		if (!strcmp(t->param_names[i], name)) {
			uint64_t v = t->param_vals[i];
			return set(t, x->ops[0], v, 64);
		}
	if (!slot) {
		snprintf(t->err, sizeof t->err, "unknown parameter %s", name);
		return -1;
	}
	if (!is_store)
		return set(t, x->ops[0], *slot, op_bits(x->op));
	return value(t, x->ops[1], slot);
}

static int cmp(const char *op, uint64_t a, uint64_t b)
{
	if (has_part(op, "eq"))
		return a == b;
	if (has_part(op, "ne"))
		return a != b;
	if (has_part(op, "le"))
		return a <= b;
	if (has_part(op, "lt"))
		return a < b;
	if (has_part(op, "ge"))
		return a >= b;
	return a > b;
}

/* mov.b64 {%lo, %hi}, %x */
static int mov_unpack(struct thread *t, const struct insn *x)
{
	char list[96];
	struct insn tmp;
	uint64_t v;
	snprintf(list, sizeof list, "%s", x->ops[0] + 1);
	list[strcspn(list, "}")] = 0;
	memset(&tmp, 0, sizeof tmp);
	split_ops(list, &tmp);
	if (tmp.n_ops != 2 || value(t, x->ops[1], &v) < 0)
		return -1;
	return set(t, tmp.ops[0], v & 0xffffffffu, 32) < 0 ? -1 : set(t, tmp.ops[1], v >> 32, 32);
}

/* One non-branch instruction. */
static int exec_one(struct thread *t, const struct insn *x)
{
	const char *op = x->op;
	int bits = op_bits(op);
	uint64_t mask = bits == 64 ? UINT64_MAX : 0xffffffffu;
	uint64_t a = 0, b = 0, c = 0;
	if (!strncmp(op, "ld.param", 8) || !strncmp(op, "st.param", 8))
		return param_access(t, x, op[0] == 's');
	if (!strncmp(op, "st.", 3) || !strncmp(op, "red.global", 10))
		return store(t, x);
	if (!strncmp(op, "ld.", 3))
		return load(t, x);
	if (!strncmp(op, "mov", 3) && x->ops[0][0] == '{')
		return mov_unpack(t, x);
	for (int i = 1; i < x->n_ops; i++) {
		uint64_t *dst = i == 1 ? &a : i == 2 ? &b : &c;
		if (value(t, x->ops[i], dst) < 0) {
			snprintf(t->err, sizeof t->err, "bad operand %s", x->ops[i]);
			return -1;
		}
	}
	if (!strncmp(op, "cvt.", 4)) /* cvt.dst.src: source width, then destination's */
		return set(t, x->ops[0], a & (has_part(op + 8, "u64") ? UINT64_MAX : 0xffffffffu),
			   !strncmp(op, "cvt.u64", 7) ? 64 : 32);
	if (!strncmp(op, "mov", 3) || !strncmp(op, "cvta", 4))
		return set(t, x->ops[0], a, bits);
	if (!strncmp(op, "setp", 4))
		return set(t, x->ops[0], cmp(op, a & mask, b & mask), 1);
	if (!strcmp(op, "and.pred"))
		return set(t, x->ops[0], a && b, 1);
	if (!strncmp(op, "selp", 4))
		return set(t, x->ops[0], c ? a : b, bits);
	if (has_part(op, "wide")) { /* 32 x 32 -> 64 (+ 64) */
		uint64_t r = (a & 0xffffffffu) * (b & 0xffffffffu);
		return set(t, x->ops[0], !strncmp(op, "mad", 3) ? r + c : r, 64);
	}
	uint64_t r;
	if (!strncmp(op, "mad", 3))
		r = a * b + c;
	else if (!strncmp(op, "mul", 3))
		r = a * b;
	else if (!strncmp(op, "add", 3))
		r = a + b;
	else if (!strncmp(op, "sub", 3))
		r = a - b;
	else if (!strncmp(op, "shl", 3))
		r = a << b;
	else if (!strncmp(op, "shr", 3))
		r = (a & mask) >> b;
	else if (!strncmp(op, "and", 3))
		r = a & b;
	else if (!strncmp(op, "or", 2))
		r = a | b;
	else if (!strncmp(op, "min", 3))
		r = (a & mask) < (b & mask) ? a : b;
	else {
		snprintf(t->err, sizeof t->err, "unsupported instruction %s", op);
		return -1;
	}
	return set(t, x->ops[0], r & mask, bits);
}

static const struct pfunc *find_func(const struct prog *pg, const char *name)
{
	for (int i = 0; i < pg->n_funcs; i++)
		if (!strcmp(pg->f[i].name, name))
			return &pg->f[i];
	return NULL;
}

static int run_func(struct thread *t, const struct prog *pg, const struct pfunc *fn, const uint64_t *args, int n_args,
		    uint64_t *rets);

/* "(a, b)" -> the names in it */
static int list_of(const char *op, struct insn *tmp)
{
	char list[256];
	memset(tmp, 0, sizeof *tmp);
	if (op[0] != '(')
		return -1;
	snprintf(list, sizeof list, "%s", op + 1);
	list[strcspn(list, ")")] = 0;
	return split_ops(list, tmp);
}

/* call[.uni] [(rets),] f[, (args)]: arguments are .param variables of the
 * caller's frame or registers; results land the same way. */
static int exec_call(struct thread *t, const struct prog *pg, const struct insn *x)
{
	int o = 0;
	struct insn rl, al;
	memset(&rl, 0, sizeof rl);
	memset(&al, 0, sizeof al);
	if (x->ops[0][0] == '(')
		list_of(x->ops[o++], &rl);
	const struct pfunc *fn = find_func(pg, x->ops[o]);
	if (!fn) {
		snprintf(t->err, sizeof t->err, "call to unknown %s", x->ops[o]);
		return -1;
	}
	if (o + 1 < x->n_ops)
		list_of(x->ops[o + 1], &al);
	uint64_t args[MAX_OPS], rets[MAX_FORMALS];
	for (int i = 0; i < al.n_ops; i++) {
		uint64_t *ps = param_slot(t->fr, al.ops[i], 0);
		if (ps)
			args[i] = *ps;
		else if (value(t, al.ops[i], &args[i]) < 0)
			return -1;
	}
	if (al.n_ops != fn->n_formals || rl.n_ops != fn->n_rets) {
		snprintf(t->err, sizeof t->err, "call to %s: %d arguments for %d parameters", fn->name, al.n_ops,
			 fn->n_formals);
		return -1;
	}
	int rc = run_func(t, pg, fn, args, al.n_ops, rets);
	for (int i = 0; rc == 0 && i < rl.n_ops; i++) {
		uint64_t *ps = param_slot(t->fr, rl.ops[i], 0);
		if (ps)
			*ps = rets[i];
		else
			rc = set(t, rl.ops[i], rets[i], 64);
	}
	return rc;
}

/* 0 at ret, 1 at exit (the thread is done), -1 on error. */
static int run_body(struct thread *t, const struct prog *pg, const struct pfunc *fn)
{
	int steps = 0;
	for (int pc = fn->first; pc < fn->end;) {
		const struct insn *x = &pg->v[pc];
		if (++steps > 100000) {
			snprintf(t->err, sizeof t->err, "runs forever");
			return -1;
		}
		if (x->label[0]) {
			pc++;
			continue;
		}
		if (x->pred[0]) {
			uint64_t p;
			if (value(t, x->pred, &p) < 0)
				return -1;
			if ((p != 0) == x->neg) {
				pc++;
				continue;
			}
		}
		if (!strcmp(x->op, "ret"))
			return 0;
		if (!strcmp(x->op, "exit"))
			return 1;
		if (!strncmp(x->op, "bra", 3)) {
			int to = -1;
			for (int i = fn->first; i < fn->end && to < 0; i++)
				if (!strcmp(pg->v[i].label, x->ops[0]))
					to = i;
			if (to < 0) {
				snprintf(t->err, sizeof t->err, "no label %s", x->ops[0]);
				return -1;
			}
			pc = to;
			continue;
		}
		int rc = !strncmp(x->op, "call", 4) ? exec_call(t, pg, x) : exec_one(t, x);
		if (rc != 0) {
			if (rc < 0 && !t->err[0])
				snprintf(t->err, sizeof t->err, "failed at %s", x->op);
			return rc;
		}
		pc++;
	}
	return 0; /* fell off the end */
}

/* A new frame for fn: parameters bound, .local arrays placed. An exit in
 * a callee ends the whole thread (run_body's 1 travels up). */
static int run_func(struct thread *t, const struct prog *pg, const struct pfunc *fn, const uint64_t *args, int n_args,
		    uint64_t *rets)
{
	if (t->depth == MAX_DEPTH) {
		snprintf(t->err, sizeof t->err, "calls nest too deep");
		return -1;
	}
	struct frame *f = calloc(1, sizeof *f), *caller = t->fr;
	f->fn = fn;
	t->fr = f;
	t->depth++;
	for (int i = 0; i < n_args; i++) {
		if (fn->formal_reg[i])
			set(t, fn->formal[i], args[i], 64);
		else
			*param_slot(f, fn->formal[i], 1) = args[i];
	}
	int rc = 0;
	for (int i = 0; i < fn->n_locals; i++) {
		uint32_t at = (t->local_used + 7) & ~7u;
		if (at + fn->local_size[i] > LOCAL_SIZE) {
			snprintf(t->err, sizeof t->err, "out of local memory");
			rc = -1;
			break;
		}
		f->local_at[i] = LOCAL_BASE + at;
		t->local_used = at + (uint32_t)fn->local_size[i];
	}
	if (rc == 0)
		rc = run_body(t, pg, fn);
	for (int i = 0; rc >= 0 && rets && i < fn->n_rets; i++) {
		uint64_t *ps = fn->ret_reg[i] ? NULL : param_slot(f, fn->ret[i], 0);
		if (ps)
			rets[i] = *ps;
		else if (value(t, fn->ret[i], &rets[i]) < 0)
			rc = -1;
	}
	t->depth--;
	t->fr = caller;
	free(f);
	return rc;
}

static int run_thread(struct thread *t, const struct prog *pg)
{
	for (int i = 0; i < pg->n_funcs; i++)
		if (pg->f[i].is_entry)
			return run_func(t, pg, &pg->f[i], NULL, 0, NULL) < 0 ? -1 : 0;
	snprintf(t->err, sizeof t->err, "no kernel");
	return -1;
}

/* ---- launches and checks ------------------------------------------------ */

static const char *HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n\n";

/* A loop that stores min(tid.x % 4 + blockIdx.x, 5) times, then returns
 * (lane-dependent trip counts: warps diverge). */
static const char *K_LOOP =
	".visible .entry k_loop(\n"
	"\t.param .u64 k_loop_param_0\n"
	")\n{\n"
	"\t.reg .pred %p<3>;\n"
	"\t.reg .b32 %r<6>;\n"
	"\t.reg .b64 %rd<3>;\n"
	"\tld.param.u64 %rd1, [k_loop_param_0];\n"
	"\tmov.u32 %r1, %tid.x;\n"
	"\tand.b32 %r2, %r1, 3;\n"
	"\tmov.u32 %r4, %ctaid.x;\n"
	"\tadd.u32 %r2, %r2, %r4;\n"
	"\tmin.u32 %r2, %r2, 5;\n"
	"\tmov.u32 %r3, 0;\n"
	"$L_top:\n"
	"\tsetp.ge.u32 %p1, %r3, %r2;\n"
	"\t@%p1 bra $L_end;\n"
	"\tst.global.u32 [%rd1], %r3;\n"
	"\tadd.u32 %r3, %r3, 1;\n"
	"\tbra $L_top;\n"
	"$L_end:\n"
	"\tsetp.eq.u32 %p2, %r1, 1;\n"
	"\t@%p2 ret;\n"
	"}\n";

static const uint32_t LOOP_MAX = 5;

/* k_loop's loop inside a device function: the kernel stores once (100),
 * calls helper with its trip count (the stores of k_loop), stores again
 * (200). Hooks inside helper reach the kernel's maps and registers. */
static const char *K_CALL =
	".func helper(\n"
	"\t.param .b64 helper_param_0,\n"
	"\t.param .b32 helper_param_1\n"
	")\n{\n"
	"\t.reg .pred %p<2>;\n"
	"\t.reg .b32 %r<4>;\n"
	"\t.reg .b64 %rd<2>;\n"
	"\tld.param.u64 %rd1, [helper_param_0];\n"
	"\tld.param.u32 %r1, [helper_param_1];\n"
	"\tmov.u32 %r2, 0;\n"
	"$H_top:\n"
	"\tsetp.ge.u32 %p1, %r2, %r1;\n"
	"\t@%p1 bra $H_end;\n"
	"\tst.global.u32 [%rd1], %r2;\n"
	"\tadd.u32 %r2, %r2, 1;\n"
	"\tbra $H_top;\n"
	"$H_end:\n"
	"\tret;\n"
	"}\n"
	".visible .entry k_call(\n"
	"\t.param .u64 k_call_param_0\n"
	")\n{\n"
	"\t.reg .pred %p<3>;\n"
	"\t.reg .b32 %r<6>;\n"
	"\t.reg .b64 %rd<3>;\n"
	"\tld.param.u64 %rd1, [k_call_param_0];\n"
	"\tmov.u32 %r1, %tid.x;\n"
	"\tand.b32 %r2, %r1, 3;\n"
	"\tmov.u32 %r4, %ctaid.x;\n"
	"\tadd.u32 %r2, %r2, %r4;\n"
	"\tmin.u32 %r2, %r2, 5;\n"
	"\tmov.u32 %r3, 100;\n"
	"\tst.global.u32 [%rd1], %r3;\n"
	"\t{\n"
	"\t.param .b64 param0;\n"
	"\tst.param.b64 [param0+0], %rd1;\n"
	"\t.param .b32 param1;\n"
	"\tst.param.b32 [param1+0], %r2;\n"
	"\tcall.uni \n\thelper, \n\t(\n\tparam0, \n\tparam1\n\t);\n"
	"\t}\n"
	"\tmov.u32 %r3, 200;\n"
	"\tst.global.u32 [%rd1], %r3;\n"
	"\tsetp.eq.u32 %p2, %r1, 1;\n"
	"\t@%p2 ret;\n"
	"}\n";

/* The kernel under test (run_form, check_launch): k_loop unless a case
 * says otherwise. */
static const char *cur_body, *cur_kernel = "k_loop", *cur_param = "k_loop_param_0";

struct probe_spec {
	enum probe_level level;
	uint32_t cap, rec;
	const char *entry, *insn, *exit; /* snippets (NULL: no hook) */
	const char *opcode;              /* of the insn hook (NULL: st.global) */
	int after, no_pred, after_jump_before; /* the insn hook's */
	enum probe_fold fold;            /* a block map's: fields w0, w1, ... (u32), */
	int fold_word;                   /* this one folded */
};

static struct probe *mk_probe(const struct probe_spec *sp)
{
	struct probe *p = calloc(1, sizeof *p);
	snprintf(p->name, sizeof p->name, "exec");
	p->path = strdup("<test>");
	p->has_map = 1;
	snprintf(p->map.name, sizeof p->map.name, "exec");
	p->map.level = sp->level;
	p->map.cap = sp->cap;
	p->map.rec_size = sp->rec;
	for (uint32_t w = 0; sp->fold && w < sp->rec / 4; w++) {
		struct probe_field *f = &p->map.fields[p->map.n_fields++];
		snprintf(f->name, sizeof f->name, "w%u", w);
		f->type = PROBE_U32;
		f->offset = 4 * w;
		f->fold = (int)w == sp->fold_word ? sp->fold : PROBE_FOLD_NONE;
	}
	const char *snips[3] = { sp->entry, sp->insn, sp->exit };
	const enum probe_tp_kind kinds[3] = { PROBE_TP_ENTRY, PROBE_TP_INSN, PROBE_TP_EXIT };
	p->hooks = calloc(3, sizeof *p->hooks);
	for (int i = 0; i < 3; i++) {
		if (!snips[i])
			continue;
		struct probe_hook *h = &p->hooks[p->n_hooks++];
		snprintf(h->name, sizeof h->name, "h%d", i);
		h->kind = kinds[i];
		h->snippet = strdup(snips[i]);
		if (kinds[i] == PROBE_TP_INSN) {
			h->opcodes = calloc(1, sizeof *h->opcodes);
			h->opcodes[0] = strdup(sp->opcode ? sp->opcode : "st.global");
			h->n_opcodes = 1;
			h->after = sp->after;
			h->no_pred = sp->no_pred;
			h->after_jump_before = sp->after_jump_before;
		}
	}
	return p;
}

/* What the engine said of map 0's counts (engine.h): not stored, and the
 * constant every unit's count then is. */
struct counts_said {
	int is_static;
	uint32_t bytes;
};

static char *instrument(const char *body, const char *kernel, struct probe *p, unsigned flags,
			struct counts_said *said)
{
	size_t blen = strlen(HEADER) + strlen(body);
	char *src = malloc(blen + 1);
	snprintf(src, blen + 1, "%s%s", HEADER, body);
	struct ptx_module *m = NULL;
	struct ptx_inject_result ir;
	char *cause = NULL, *out = NULL;
	if (ptx_parse(src, blen, &m, &cause) == 0 && ptx_prune(m, kernel, &cause) == 0 &&
	    ptx_inject(m, kernel, &p, 1, flags, &ir, NULL, &cause) == 0) {
		out = ptx_emit(m, NULL);
		said->is_static = ir.count_static[0];
		said->bytes = ir.count_bytes[0];
	}
	CHECKF(out != NULL, "%s: %s", kernel, cause ? cause : "");
	ptx_free(m);
	free(src);
	free(cause);
	return out;
}

/* What one thread is expected to have tried to save, record by record:
 * each record is rec bytes of u32 words (the probes below save u32 only). */
struct expect {
	uint32_t words[16][8];
	int n;        /* records tried */
	int kept;     /* records stored; -1: the first min(n, cap) (a snippet's
			 records are dropped whole, so a later one may still fit) */
};

typedef void (*expect_fn)(const uint32_t tid[3], const uint32_t ctaid[3], struct expect *e);

/* A block map's expected record bytes from one thread: every warp's lane 0
 * folds the folded word into the block's records, thread 0 alone stores
 * the others (probe.h). */
static void expect_block(const struct probe_spec *sp, uint8_t *recs, uint64_t block_index, const uint32_t tid[3],
			 const uint32_t ctaid[3], const uint32_t block[3], expect_fn fn)
{
	uint32_t tl = (tid[2] * block[1] + tid[1]) * block[0] + tid[0];
	if (tl % 32)
		return;
	struct expect e;
	memset(&e, 0, sizeof e);
	fn(tid, ctaid, &e);
	for (uint32_t k = 0; k < (uint32_t)e.n && k < sp->cap; k++)
		for (uint32_t w = 0; w < sp->rec / 4; w++) {
			uint8_t *at = recs + (block_index * sp->cap + k) * sp->rec + 4 * w;
			uint32_t v = e.words[k][w], was;
			memcpy(&was, at, 4);
			if ((int)w == sp->fold_word)
				v = sp->fold == PROBE_FOLD_ADD ? was + v : was > v ? was : v;
			else if (tl != 0)
				continue;
			memcpy(at, &v, 4);
		}
}

/* Runs the launch and compares every map byte with what engine.h implies:
 * counts the kernel does not store (said) stay as they were, and every
 * unit would have stored the constant the engine gave instead; a block
 * that block sampling skipped stores no count either. */
static void check_launch(const char *what, const struct probe_spec *sp, const char *ptx, const struct counts_said *said,
			 const uint32_t grid[3], const uint32_t block[3], uint32_t shift, expect_fn fn)
{
	struct probe_map pm = { .level = sp->level, .cap = sp->cap, .rec_size = sp->rec };
	uint64_t blocks = (uint64_t)grid[0] * grid[1] * grid[2];
	uint32_t threads = block[0] * block[1] * block[2];
	uint64_t bytes = engine_map_bytes(&pm, blocks, threads, shift);
	uint64_t rec_units = engine_map_rec_units(&pm, blocks, threads, shift);
	uint64_t roff = engine_map_records_offset(&pm, blocks, threads);
	struct mem mem = { .n = 2 };
	mem.base[0] = 0x7f0000100000ull; /* 256-aligned, like the hook's buffers */
	mem.size[0] = bytes;
	mem.host[0] = malloc(bytes);
	memset(mem.host[0], FILL, bytes);
	mem.base[1] = 0x7f0000000000ull;
	mem.size[1] = 64;
	mem.host[1] = calloc(1, 64);
	uint8_t *want = malloc(bytes);
	memset(want, FILL, bytes);
	if (sp->fold) { /* the hook clears a folded map's records (engine_map_records_clear) */
		memset(mem.host[0] + roff, 0, bytes - roff);
		memset(want + roff, 0, bytes - roff);
	}

	struct prog pg;
	CHECKF(prog_load(&pg, ptx) == 0, "%s: cannot read the probed PTX", what);
	const char *pnames[2] = { cur_param, "ntop_map0" };
	uint64_t pvals[2] = { mem.base[1], mem.base[0] | shift }; /* engine.h: the shift rides in the pointer */
	struct thread *t = malloc(sizeof *t);
	int failures = 0;
	uint32_t c[3], d[3];
	for (c[2] = 0; c[2] < grid[2]; c[2]++)
	for (c[1] = 0; c[1] < grid[1]; c[1]++)
	for (c[0] = 0; c[0] < grid[0]; c[0]++)
	for (d[2] = 0; d[2] < block[2]; d[2]++)
	for (d[1] = 0; d[1] < block[1]; d[1]++)
	for (d[0] = 0; d[0] < block[0]; d[0]++) {
		memset(t, 0, sizeof *t);
		memcpy(t->tid, d, sizeof d);
		memcpy(t->ctaid, c, sizeof c);
		memcpy(t->ntid, block, sizeof t->ntid);
		memcpy(t->nctaid, grid, sizeof t->nctaid);
		t->mem = &mem;
		t->param_names = pnames;
		t->param_vals = pvals;
		t->n_params = 2;
		if (run_thread(t, &pg) < 0 && failures++ < 3)
			CHECKF(0, "%s: thread (%u,%u,%u) of block (%u,%u,%u): %s", what, d[0], d[1], d[2],
			       c[0], c[1], c[2], t->err);
		/* the expected bytes: the storing thread's count and records */
		int lane0 = 0;
		uint64_t u = engine_map_unit_index(&pm, grid, block, c, d, &lane0);
		if (sp->level == PROBE_LEVEL_BLOCK)
			expect_block(sp, want + roff, u, d, c, block, fn);
		if (!lane0 || sp->level == PROBE_LEVEL_BLOCK)
			continue;
		struct expect e;
		memset(&e, 0, sizeof e);
		e.kept = -1;
		fn(d, c, &e);
		uint32_t count = (uint32_t)e.n * sp->rec;
		uint64_t ku = engine_map_kept_unit(&pm, blocks, threads, shift, u);
		/* a block sampling skipped stores no count (engine.h) */
		if (!said->is_static) {
			if (ku != UINT64_MAX)
				memcpy(want + u * 4, &count, 4);
		} else if (count != said->bytes && failures++ < 3)
			CHECKF(0, "%s: unit %llu would count %u bytes, the engine said every unit counts %u", what,
			       (unsigned long long)u, count, said->bytes);
		uint32_t kept = e.kept >= 0 ? (uint32_t)e.kept : (uint32_t)e.n;
		for (uint32_t k = 0; ku != UINT64_MAX && k < kept && k < sp->cap; k++)
			memcpy(want + roff + engine_map_record_index(&pm, rec_units, ku, k) * sp->rec, e.words[k],
			       sp->rec);
	}
	uint64_t bad = 0, first = UINT64_MAX;
	for (uint64_t i = 0; i < bytes; i++)
		if (mem.host[0][i] != want[i]) {
			bad++;
			if (first == UINT64_MAX)
				first = i;
		}
	CHECKF(bad == 0, "%s shift %u: %llu of %llu map bytes differ, first at %llu (%s, record area %llu units)",
	       what, shift, (unsigned long long)bad, (unsigned long long)bytes, (unsigned long long)first,
	       first < roff ? "counts" : "records", (unsigned long long)rec_units);
	free(t);
	free(pg.v);
	free(want);
	free(mem.host[0]);
	free(mem.host[1]);
}

static const uint32_t SHAPES[][6] = {
	{ 2, 1, 1, 64, 1, 1 },  /* whole warps */
	{ 3, 1, 1, 33, 1, 1 },  /* a one-thread last warp */
	{ 2, 2, 1, 7, 3, 2 },   /* 3-D block of 42 threads: 2 warps, the second partial */
	{ 2, 1, 3, 5, 5, 5 },   /* 3-D grid and block, 125 threads */
	{ 1, 3, 2, 16, 2, 1 },
	{ 2, 3, 1, 40, 1, 1 },  /* 2-D grid of 1-D blocks */
	{ 3, 1, 1, 8, 4, 1 },   /* 1-D grid of 2-D blocks */
};

/* entry + exit SAVEs, static cursor: records say who wrote them */
static void expect_entry_exit(const uint32_t tid[3], const uint32_t ctaid[3], struct expect *e)
{
	uint32_t r0[4] = { tid[0], tid[1], tid[2], ctaid[0] };
	uint32_t r1[4] = { ctaid[1], ctaid[2], 7, 42 };
	memcpy(e->words[0], r0, sizeof r0);
	memcpy(e->words[1], r1, sizeof r1);
	e->n = 2;
}

/* one record per loop store (value stored, tid.x), then an exit record
 * (tid.x == 1 leaves through `@%p2 ret`, the others off the end) */
static void expect_loop(const uint32_t tid[3], const uint32_t ctaid[3], struct expect *e)
{
	uint32_t trips = (tid[0] & 3) + ctaid[0];
	if (trips > LOOP_MAX)
		trips = LOOP_MAX;
	for (uint32_t i = 0; i < trips; i++) {
		e->words[e->n][0] = i;
		e->words[e->n][1] = tid[0];
		e->n++;
	}
	e->words[e->n][0] = 99;
	e->words[e->n][1] = tid[1] * 100 + tid[2];
	e->n++;
}

/* k_call: the kernel's store, helper's loop stores, the kernel's second
 * store (IN1, tid.x each), then the exit record */
static void expect_call(const uint32_t tid[3], const uint32_t ctaid[3], struct expect *e)
{
	uint32_t trips = (tid[0] & 3) + ctaid[0];
	if (trips > LOOP_MAX)
		trips = LOOP_MAX;
	e->words[e->n][0] = 100;
	e->words[e->n++][1] = tid[0];
	for (uint32_t i = 0; i < trips; i++) {
		e->words[e->n][0] = i;
		e->words[e->n++][1] = tid[0];
	}
	e->words[e->n][0] = 200;
	e->words[e->n++][1] = tid[0];
	e->words[e->n][0] = 99;
	e->words[e->n][1] = tid[1] * 100 + tid[2];
	e->n++;
}

/* k_call, counted in a probe register across the call: every store */
static void expect_call_count(const uint32_t tid[3], const uint32_t ctaid[3], struct expect *e)
{
	uint32_t trips = (tid[0] & 3) + ctaid[0];
	e->words[0][0] = (trips > LOOP_MAX ? LOOP_MAX : trips) + 2;
	e->words[0][1] = tid[0];
	e->n = 1;
}

/* entry and exit SAVEs of two 8-byte records each (static cursor: the
 * records of one snippet are units records apart when slot-major) */
static void expect_entry_exit_pairs(const uint32_t tid[3], const uint32_t ctaid[3], struct expect *e)
{
	uint32_t w[8] = { tid[0], tid[1], tid[2], ctaid[0], ctaid[1], ctaid[2], 7, 42 };
	for (int k = 0; k < 4; k++)
		memcpy(e->words[k], w + 2 * k, 8);
	e->n = 4;
}

/* the same with cap 3: the exit pair does not fit and is dropped whole */
static void expect_entry_exit_pairs_cap3(const uint32_t tid[3], const uint32_t ctaid[3], struct expect *e)
{
	expect_entry_exit_pairs(tid, ctaid, e);
	e->kept = 2;
}

/* two 8-byte records per loop store (dynamic cursor), then the exit record */
static void expect_loop_pairs(const uint32_t tid[3], const uint32_t ctaid[3], struct expect *e)
{
	uint32_t trips = (tid[0] & 3) + ctaid[0];
	if (trips > LOOP_MAX)
		trips = LOOP_MAX;
	for (uint32_t i = 0; i < trips; i++) {
		e->words[e->n][0] = i;
		e->words[e->n][1] = tid[0];
		e->words[e->n + 1][0] = 5;
		e->words[e->n + 1][1] = tid[1];
		e->n += 2;
	}
	e->words[e->n][0] = 99;
	e->words[e->n][1] = tid[1] * 100 + tid[2];
	e->n++;
}

/* One record per branch a thread runs whose guard holds: `bra $L_top` once
 * per trip, `@%p1 bra $L_end` once, when it leaves the loop (NEUTRINO's
 * meaning of a snippet at a guarded instruction); then the exit record. */
static void expect_branches(const uint32_t tid[3], const uint32_t ctaid[3], struct expect *e, int no_pred)
{
	uint32_t trips = (tid[0] & 3) + ctaid[0];
	if (trips > LOOP_MAX)
		trips = LOOP_MAX;
	/* no_pred: also the trips times `@%p1 bra` was reached with %p1 false */
	uint32_t n = (no_pred ? 2 * trips : trips) + 1;
	for (uint32_t i = 0; i < n; i++) {
		e->words[e->n][0] = tid[0];
		e->words[e->n][1] = 3;
		e->n++;
	}
	e->words[e->n][0] = 99;
	e->words[e->n][1] = tid[1] * 100 + tid[2];
	e->n++;
}

static void expect_branches_taken(const uint32_t tid[3], const uint32_t ctaid[3], struct expect *e)
{
	expect_branches(tid, ctaid, e, 0);
}

static void expect_branches_reached(const uint32_t tid[3], const uint32_t ctaid[3], struct expect *e)
{
	expect_branches(tid, ctaid, e, 1);
}

/* An `after` hook at a branch that was not asked to run before it: never. */
static void expect_exit_only(const uint32_t tid[3], const uint32_t ctaid[3], struct expect *e)
{
	(void)ctaid;
	e->words[0][0] = 99;
	e->words[0][1] = tid[1] * 100 + tid[2];
	e->n = 1;
}

/* Every form (engine.h): map addresses kept from the entry, or computed at
 * each exit; for any launch shape or for 1D blocks and/or grids only (run
 * on the shapes it is for). */
static void run_form(const char *name, const struct probe_spec *sp, expect_fn fn, unsigned flags)
{
	struct probe *p = mk_probe(sp);
	struct counts_said said = { 0, 0 };
	char *ptx = instrument(cur_body ? cur_body : K_LOOP, cur_kernel, p, flags, &said);
	/* no .func exits: a static cursor's counts are never stored */
	CHECKF(said.is_static == (sp->insn == NULL || !strstr(sp->insn, "SAVE")), "%s: counts %s", name,
	       said.is_static ? "not stored" : "stored");
	/* the probes' snippets read %tid.y and %ctaid.y, never these */
	CHECKF(!ptx || !strstr(ptx, "%ntid.y") == !!(flags & ENGINE_BLOCK_1D), "%s (flags %u): %%ntid.y read", name,
	       flags);
	CHECKF(!ptx || !strstr(ptx, "%nctaid.y") == !!(flags & ENGINE_GRID_1D), "%s (flags %u): %%nctaid.y read",
	       name, flags);
	unsigned shape_flags = flags & (ENGINE_BLOCK_1D | ENGINE_GRID_1D);
	for (size_t s = 0; ptx && s < sizeof SHAPES / sizeof SHAPES[0]; s++) {
		if ((engine_shape_of(SHAPES[s], SHAPES[s] + 3) & shape_flags) != shape_flags)
			continue;
		char what[160];
		snprintf(what, sizeof what, "%s (addresses at %s, flags %u) grid %ux%ux%u block %ux%ux%u", name,
			 flags & ENGINE_ADDR_AT_EXIT ? "exit" : "entry", flags, SHAPES[s][0],
			 SHAPES[s][1], SHAPES[s][2], SHAPES[s][3], SHAPES[s][4], SHAPES[s][5]);
		struct probe_map pm = { .level = sp->level, .cap = sp->cap };
		/* sampled maps: every block, 1 in 2 and 1 in 4 (the grids have 2-6 blocks) */
		uint32_t shifts = engine_map_sampled(&pm) ? 3 : 1;
		for (uint32_t k = 0; k < shifts; k++)
			check_launch(what, sp, ptx, &said, SHAPES[s], SHAPES[s] + 3, k, fn);
	}
	free(ptx);
	probe_free(p);
}

static void run_case(const char *name, const struct probe_spec *sp, expect_fn fn)
{
	for (unsigned shape = 0; shape <= (ENGINE_BLOCK_1D | ENGINE_GRID_1D); shape += ENGINE_BLOCK_1D) {
		run_form(name, sp, fn, shape);
		run_form(name, sp, fn, ENGINE_ADDR_AT_EXIT | shape);
	}
}

/* ---- regions ------------------------------------------------------------ */

/* Warp w loops w + 1 times over lines 20-21 (one store each), then calls
 * rstore, which stores once on line 40. */
static const char *K_REGIONS =
	".func rstore(\n"
	"\t.param .b64 rstore_param_0\n"
	")\n{\n"
	"\t.reg .b32 %r<2>;\n"
	"\t.reg .b64 %rd<2>;\n"
	"\t.loc 1 40 1\n"
	"\tld.param.u64 %rd1, [rstore_param_0];\n"
	"\tmov.u32 %r1, 7;\n"
	"\tst.global.u32 [%rd1], %r1;\n"
	"\t.loc 1 41 1\n"
	"\tret;\n"
	"}\n"
	".visible .entry k_reg(\n"
	"\t.param .u64 k_reg_param_0\n"
	")\n{\n"
	"\t.reg .pred %p<2>;\n"
	"\t.reg .b32 %r<5>;\n"
	"\t.reg .b64 %rd<2>;\n"
	"\t.loc 1 10 1\n"
	"\tld.param.u64 %rd1, [k_reg_param_0];\n"
	"\tmov.u32 %r1, %tid.x;\n"
	"\tshr.u32 %r2, %r1, 5;\n"
	"\tadd.u32 %r2, %r2, 1;\n"
	"\tmov.u32 %r3, 0;\n"
	"$L_top:\n"
	"\t.loc 1 20 1\n"
	"\tst.global.u32 [%rd1], %r3;\n"
	"\t.loc 1 21 1\n"
	"\tadd.u32 %r3, %r3, 1;\n"
	"\tsetp.lt.u32 %p1, %r3, %r2;\n"
	"\t@%p1 bra $L_top;\n"
	"\t.loc 1 30 1\n"
	"\t{\n"
	"\t.param .b64 param0;\n"
	"\tst.param.b64 [param0+0], %rd1;\n"
	"\tcall.uni rstore, (param0);\n"
	"\t}\n"
	"\tret;\n"
	"}\n"
	".file 1 \"/src/k.cu\"\n";

enum { RB, RE }; /* a region record's side */

/* What lane 0 of warp w must write after the entry pair: the lines
 * region (lines, 0) once over all trips (its back edge stays inside it),
 * the loop region (loop, 1) once per trip, the store region (store, 2)
 * around each store; lines and loop end where the loop falls through;
 * then store's pair inside rstore, then the exit record. */
static int expected_regions(uint32_t warp, uint32_t (*want)[2])
{
	static const uint32_t first[4][2] = { { RB, 0 }, { RB, 1 }, { RB, 2 }, { RE, 2 } };
	static const uint32_t again[4][2] = { { RE, 1 }, { RB, 1 }, { RB, 2 }, { RE, 2 } };
	static const uint32_t tail[4][2] = { { RE, 0 }, { RE, 1 }, { RB, 2 }, { RE, 2 } };
	int n = 0;
	memcpy(want[n], first, sizeof first);
	n += 4;
	for (uint32_t trip = 1; trip <= warp; trip++, n += 4) /* the taken back edge, the next trip */
		memcpy(want[n], again, sizeof again);
	memcpy(want[n], tail, sizeof tail);
	return n + 4;
}

/* Warp `warp`'s records (count bytes of them at recs) against the
 * expected sequence; sites name the instruction each boundary is at. */
static void check_warp_regions(uint32_t warp, const uint8_t *recs, uint32_t count, const struct engine_sites *sites)
{
	uint32_t want[64][2], rec[2], hi = 0;
	int n = expected_regions(warp, want);
	CHECKF(count == (uint32_t)(n + 3) * 8, "warp %u: %u bytes of region records, want %d", warp, count, (n + 3) * 8);
	if (count != (uint32_t)(n + 3) * 8)
		return;
	memcpy(rec, recs, 8);
	CHECKF(rec[1] == (0x80000000u | 7), "warp %u: entry record tag %#x", warp, rec[1]);
	memcpy(rec, recs + 8, 8);
	hi = rec[0];
	CHECKF(rec[1] == 0xA0000000u && hi == 0, "warp %u: entry high record %#x %#x", warp, rec[0], rec[1]);
	uint32_t last = 0;
	memcpy(&last, recs, 4);
	for (int k = 0; k < n; k++) {
		memcpy(rec, recs + 16 + 8 * k, 8);
		uint32_t kind = rec[1] >> 30, region = (rec[1] >> 24) & 63, site = rec[1] & 0xffffff;
		CHECKF(kind == want[k][0] && region == want[k][1], "warp %u record %d: kind %u region %u, want %u %u",
		       warp, k, kind, region, want[k][0], want[k][1]);
		CHECKF(rec[0] > last, "warp %u record %d: clock %u after %u", warp, k, rec[0], last);
		last = rec[0];
		const struct engine_site *st = site < (uint32_t)sites->n ? &sites->s[site] : NULL;
		CHECKF(st && st->region == (int)region && st->kind == (kind == RB ? ENGINE_SITE_BEGIN : ENGINE_SITE_END),
		       "warp %u record %d: site %u is not that boundary", warp, k, site);
		/* BEGINs sit at the stores: line 20 in the kernel, 40 in rstore */
		if (st && kind == RB)
			CHECKF(st->line == (k == n - 2 ? 40 : 20) && st->func == (k == n - 2 ? 1 : 0),
			       "warp %u record %d: begins at line %d of function %d", warp, k, st->line, st->func);
		/* the lines region ends once, where the loop falls through */
		if (st && kind == RE && region == 0)
			CHECKF(k == n - 4, "warp %u record %d: the lines region ended inside the loop", warp, k);
	}
	memcpy(rec, recs + 16 + 8 * n, 8);
	CHECKF(rec[1] == 0xC0000000u && rec[0] > last, "warp %u: exit record %#x %#x", warp, rec[0], rec[1]);
}

static void test_regions(void)
{
	struct probe *p = NULL;
	char *cause = NULL;
	CHECKF(probe_load_file(testlib_src("probes/regions.toml"), &p, &cause) == 0, "%s", cause ? cause : "");
	const char *specs[] = { "lines=k.cu:20-21", "loop=@loop:k.cu:21", "store=@store" };
	if (!p || probe_set_regions(p, specs, 3, &cause) < 0) {
		CHECKF(0, "regions: %s", cause ? cause : "");
		probe_free(p);
		free(cause);
		return;
	}
	size_t blen = strlen(HEADER) + strlen(K_REGIONS);
	char *src = malloc(blen + 1);
	snprintf(src, blen + 1, "%s%s", HEADER, K_REGIONS);
	struct engine_result r;
	CHECKF(engine_instrument(src, blen, "k_reg", &p, 1, 0, &r, &cause) == 0, "%s", cause ? cause : "");
	free(src);
	if (!r.ptx)
		goto out;
	CHECK_EQ_INT(r.stats.funcs_probed, 1);
	CHECK(r.sites.n_funcs == 2 && !strcmp(r.sites.funcs[1], "rstore") && r.sites.n_files == 1 &&
	      !strcmp(r.sites.files[0], "/src/k.cu"));
	/* two warps of 64 threads, one block */
	const uint32_t grid[3] = { 1, 1, 1 }, block[3] = { 64, 1, 1 };
	const struct probe_map *pm = &r.maps[0].map;
	uint64_t bytes = engine_map_bytes(pm, 1, 64, 0), roff = engine_map_records_offset(pm, 1, 64);
	struct mem mem = { .n = 2 };
	mem.base[0] = 0x7f0000100000ull;
	mem.size[0] = bytes;
	mem.host[0] = calloc(1, bytes);
	mem.base[1] = 0x7f0000000000ull;
	mem.size[1] = 64;
	mem.host[1] = calloc(1, 64);
	struct prog pg;
	CHECK(prog_load(&pg, r.ptx) == 0);
	const char *pnames[2] = { "k_reg_param_0", "ntop_map0" };
	uint64_t pvals[2] = { mem.base[1], mem.base[0] };
	struct thread *t = malloc(sizeof *t);
	for (uint32_t x = 0; x < block[0]; x++) {
		memset(t, 0, sizeof *t);
		t->tid[0] = x;
		memcpy(t->ntid, block, sizeof t->ntid);
		memcpy(t->nctaid, grid, sizeof t->nctaid);
		t->mem = &mem;
		t->param_names = pnames;
		t->param_vals = pvals;
		t->n_params = 2;
		CHECKF(run_thread(t, &pg) == 0, "thread %u: %s", x, t->err);
	}
	for (uint32_t w = 0; w < 2; w++) {
		uint32_t count;
		memcpy(&count, mem.host[0] + 4 * w, 4);
		check_warp_regions(w, mem.host[0] + roff + (uint64_t)w * pm->cap * pm->rec_size, count, &r.sites);
	}
	free(t);
	free(pg.v);
	free(mem.host[0]);
	free(mem.host[1]);
out:
	engine_result_done(&r);
	probe_free(p);
	free(cause);
}

int main(void)
{
	static const char *ENTRY = "SAVE.u32 {%tid.x, %tid.y, %tid.z, %ctaid.x};";
	static const char *EXIT = ".reg .b32 %k;\nmov.u32 %k, 42;\nSAVE.u32 {%ctaid.y, %ctaid.z, SMID, %k};";
	static const char *INSN = "SAVE.u32 {IN1, %tid.x};";
	static const char *EXIT2 = ".reg .b32 %e;\nmad.lo.u32 %e, %tid.y, 100, %tid.z;\nSAVE.u32 {99, %e};";
	struct probe_spec cases[] = {
		/* static cursor: entry and exit SAVEs, both records fit / the second dropped */
		{ PROBE_LEVEL_WARP, 2, 16, ENTRY, NULL, EXIT, NULL, 0, 0, 0, PROBE_FOLD_NONE, 0 },
		{ PROBE_LEVEL_WARP, 1, 16, ENTRY, NULL, EXIT, NULL, 0, 0, 0, PROBE_FOLD_NONE, 0 },
		{ PROBE_LEVEL_THREAD, 2, 16, ENTRY, NULL, EXIT, NULL, 0, 0, 0, PROBE_FOLD_NONE, 0 },
		{ PROBE_LEVEL_THREAD, 1, 16, ENTRY, NULL, EXIT, NULL, 0, 0, 0, PROBE_FOLD_NONE, 0 },
	};
	run_case("warp cap 2 entry+exit", &cases[0], expect_entry_exit);
	run_case("warp cap 1 entry+exit", &cases[1], expect_entry_exit);
	run_case("thread cap 2 entry+exit", &cases[2], expect_entry_exit);
	run_case("thread cap 1 entry+exit", &cases[3], expect_entry_exit);
	/* dynamic cursor: SAVEs at an instruction tracepoint inside a loop,
	 * cap 3 so threads with more trips drop their last records */
	struct probe_spec loop_t = { PROBE_LEVEL_THREAD, 3, 8, NULL, INSN, EXIT2, NULL, 0, 0, 0, PROBE_FOLD_NONE, 0 };
	struct probe_spec loop_w = { PROBE_LEVEL_WARP, 3, 8, NULL, INSN, EXIT2, NULL, 0, 0, 0, PROBE_FOLD_NONE, 0 };
	struct probe_spec loop_big = { PROBE_LEVEL_THREAD, 8, 8, NULL, INSN, EXIT2, NULL, 0, 0, 0, PROBE_FOLD_NONE, 0 };
	run_case("thread cap 3 loop", &loop_t, expect_loop);
	run_case("warp cap 3 loop", &loop_w, expect_loop);
	run_case("thread cap 8 loop", &loop_big, expect_loop);
	/* snippets of two records each: slot-major thread maps put them units
	 * records apart; cap 3 drops the whole exit pair, cap 4 (loop) drops
	 * whole pairs and keeps the exit record only while it fits */
	static const char *ENTRY2 = "SAVE.u32 {%tid.x, %tid.y, %tid.z, %ctaid.x};";
	static const char *INSN2 = "SAVE.u32 {IN1, %tid.x};\nSAVE.u32 {5, %tid.y};";
	struct probe_spec pairs[] = {
		{ PROBE_LEVEL_THREAD, 4, 8, ENTRY2, NULL, EXIT, NULL, 0, 0, 0, PROBE_FOLD_NONE, 0 },
		{ PROBE_LEVEL_THREAD, 3, 8, ENTRY2, NULL, EXIT, NULL, 0, 0, 0, PROBE_FOLD_NONE, 0 },
		{ PROBE_LEVEL_WARP, 4, 8, ENTRY2, NULL, EXIT, NULL, 0, 0, 0, PROBE_FOLD_NONE, 0 },
		{ PROBE_LEVEL_THREAD, 4, 8, NULL, INSN2, EXIT2, NULL, 0, 0, 0, PROBE_FOLD_NONE, 0 },
		{ PROBE_LEVEL_WARP, 4, 8, NULL, INSN2, EXIT2, NULL, 0, 0, 0, PROBE_FOLD_NONE, 0 },
	};
	run_case("thread cap 4 entry+exit pairs", &pairs[0], expect_entry_exit_pairs);
	run_case("thread cap 3 entry+exit pairs", &pairs[1], expect_entry_exit_pairs_cap3);
	run_case("warp cap 4 entry+exit pairs", &pairs[2], expect_entry_exit_pairs);
	run_case("thread cap 4 loop pairs", &pairs[3], expect_loop_pairs);
	run_case("warp cap 4 loop pairs", &pairs[4], expect_loop_pairs);
	/* NEUTRINO's hooks at branches: guarded (runs when the guard holds),
	 * no_pred (runs whenever reached), `after` moved before the branch */
	static const char *BRA = "SAVE.u32 {%tid.x, 3};";
	struct probe_spec bra[] = {
		{ PROBE_LEVEL_THREAD, 16, 8, NULL, BRA, EXIT2, "bra", 0, 0, 0, PROBE_FOLD_NONE, 0 },
		{ PROBE_LEVEL_THREAD, 16, 8, NULL, BRA, EXIT2, "bra", 0, 1, 0, PROBE_FOLD_NONE, 0 },
		{ PROBE_LEVEL_THREAD, 16, 8, NULL, BRA, EXIT2, "bra", 1, 1, 1, PROBE_FOLD_NONE, 0 },
		{ PROBE_LEVEL_THREAD, 16, 8, NULL, BRA, EXIT2, "bra", 1, 0, 1, PROBE_FOLD_NONE, 0 },
		{ PROBE_LEVEL_THREAD, 16, 8, NULL, BRA, EXIT2, "bra", 1, 0, 0, PROBE_FOLD_NONE, 0 },
	};
	run_case("bra guarded", &bra[0], expect_branches_taken);
	run_case("bra no_pred", &bra[1], expect_branches_reached);
	run_case("bra after no_pred, run before", &bra[2], expect_branches_reached);
	run_case("bra after guarded, run before", &bra[3], expect_branches_taken);
	run_case("bra after", &bra[4], expect_exit_only);
	/* block maps: thread 0 stores, every warp's lane 0 folds one word
	 * (tid.x by max in the entry's record and ctaid.y in the exit's; tid.y
	 * and ctaid.z summed over the warps) */
	struct probe_spec blk[] = {
		{ PROBE_LEVEL_BLOCK, 2, 16, ENTRY, NULL, EXIT, NULL, 0, 0, 0, PROBE_FOLD_MAX, 0 },
		{ PROBE_LEVEL_BLOCK, 2, 16, ENTRY, NULL, EXIT, NULL, 0, 0, 0, PROBE_FOLD_ADD, 1 },
		{ PROBE_LEVEL_BLOCK, 1, 16, ENTRY, NULL, EXIT, NULL, 0, 0, 0, PROBE_FOLD_MAX, 3 },
	};
	run_case("block cap 2 entry+exit, max", &blk[0], expect_entry_exit);
	run_case("block cap 2 entry+exit, add", &blk[1], expect_entry_exit);
	run_case("block cap 1 entry+exit (exit dropped), max", &blk[2], expect_entry_exit);
	/* device functions: helper's stores recorded through the context (map
	 * cursor and record address in and out), and a count kept in a probe
	 * register across the call */
	cur_body = K_CALL;
	cur_kernel = "k_call";
	cur_param = "k_call_param_0";
	struct probe_spec call_t = { PROBE_LEVEL_THREAD, 8, 8, NULL, INSN, EXIT2, NULL, 0, 0, 0, PROBE_FOLD_NONE, 0 };
	struct probe_spec call_w = { PROBE_LEVEL_WARP, 3, 8, NULL, INSN, EXIT2, NULL, 0, 0, 0, PROBE_FOLD_NONE, 0 };
	static const char *CNT_ENTRY = ".reg .b32 %n;\nmov.u32 %n, 0;";
	static const char *CNT_INSN = "add.u32 %n, %n, 1;";
	static const char *CNT_EXIT = "SAVE.u32 {%n, %tid.x};";
	struct probe_spec call_n = { PROBE_LEVEL_THREAD, 1, 8, CNT_ENTRY, CNT_INSN, CNT_EXIT, NULL, 0, 0, 0,
				     PROBE_FOLD_NONE, 0 };
	run_case("thread cap 8 call", &call_t, expect_call);
	run_case("warp cap 3 call", &call_w, expect_call);
	run_case("thread count across a call", &call_n, expect_call_count);
	test_regions();
	return testlib_report();
}
