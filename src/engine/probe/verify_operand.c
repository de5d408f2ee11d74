/* Operands of a snippet instruction, by form. A destination names only
 * registers the probe declared; a source is a register (any: reading the
 * kernel's is fine), a helper, a symbol name, a literal, a negated
 * predicate or a {vector} of those; an address is [base] or [base+N] with
 * base a register, ADDR or a symbol, and |N| at most VERIFY_MAX_OFFSET.
 * Constant expressions ("1+2", "(1<<40)") are refused: ptxas evaluates
 * them, the checks would have to as well. */
#include "engine/probe/verify_int.h"

#include <string.h>

static const char *const kernel_helpers[] = { "OUT", "IN1", "IN2", "IN3", "ADDR", "BYTES", NULL };
static const char *const special_helpers[] = { "CLOCK", "GTIMER", "SMID", "SITE", "REGION", NULL };

static const char *tok_text(const struct snippet_stmt *st, int i, size_t *len)
{
	*len = st->toks[i].len;
	return st->text + st->toks[i].off;
}

static int is_punct(const struct snippet_stmt *st, int i, char c)
{
	return st->toks[i].kind == SNIP_PUNCT && st->text[st->toks[i].off] == c;
}

static const char *helper_in(const char *s, size_t n, const char *const *list)
{
	for (; *list; list++)
		if (strlen(*list) == n && memcmp(s, *list, n) == 0)
			return *list;
	return NULL;
}

const char *verify_helper(const struct snippet_stmt *st, int i)
{
	size_t len;
	const char *s = tok_text(st, i, &len);
	if (st->toks[i].kind != SNIP_WORD)
		return NULL;
	size_t n = strcspn(s, ". ");
	if (n > len)
		n = len;
	const char *h = helper_in(s, n, kernel_helpers);
	return h ? h : helper_in(s, n, special_helpers);
}

/* ---- literals ---- */

static int hex_val(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Digits of base `base` in s[0..n) (a trailing U allowed): 0 and the value
 * (saturated) in *v, -1 when not a literal of that base. */
static int digits(const char *s, size_t n, int base, uint64_t *v)
{
	if (n && s[n - 1] == 'U')
		n--;
	if (!n)
		return -1;
	*v = 0;
	for (size_t i = 0; i < n; i++) {
		int d = hex_val(s[i]);
		if (d < 0 || d >= base)
			return -1;
		*v = *v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base ? UINT64_MAX : *v * (uint64_t)base + (uint64_t)d;
	}
	return 0;
}

/* A PTX literal: integer (decimal, 0x, 0b, 0 octal; U suffix), 0f/0d hex
 * float, or a decimal float. *v: the integer's value, *is_int. */
static int literal(const char *s, size_t n, uint64_t *v, int *is_int)
{
	*is_int = 1;
	*v = 0;
	if (n >= 2 && s[0] == '0' && (s[1] == 'f' || s[1] == 'F' || s[1] == 'd' || s[1] == 'D')) {
		*is_int = 0;
		size_t want = s[1] == 'f' || s[1] == 'F' ? 8 : 16;
		return n == want + 2 && digits(s + 2, n - 2, 16, v) == 0 && s[n - 1] != 'U' ? 0 : -1;
	}
	if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		return digits(s + 2, n - 2, 16, v);
	if (n >= 2 && s[0] == '0' && (s[1] == 'b' || s[1] == 'B'))
		return digits(s + 2, n - 2, 2, v);
	const char *dot = memchr(s, '.', n);
	if (dot) {
		*is_int = 0;
		uint64_t ignore;
		size_t ip = (size_t)(dot - s), fp = n - ip - 1;
		return ip && digits(s, ip, 10, &ignore) == 0 && s[ip - 1] != 'U' &&
			       (fp == 0 || (digits(dot + 1, fp, 10, &ignore) == 0 && s[n - 1] != 'U'))
			       ? 0
			       : -1;
	}
	return digits(s, n, s[0] == '0' && n > 1 && s[1] != 'U' ? 8 : 10, v);
}

/* ---- destinations ---- */

static int dest_name(struct vctx *V, const struct vinsn *in, int i)
{
	const struct snippet_stmt *st = in->st;
	size_t len;
	const char *s = tok_text(st, i, &len);
	if (st->toks[i].kind != SNIP_WORD)
		return verr(V, st, i, RULE_SYNTAX, "cannot read the destination operand");
	if (len == 1 && s[0] == '_')
		return 0;
	const char *h = verify_helper(st, i);
	if (h && helper_in(h, strlen(h), kernel_helpers))
		return verr(V, st, i, RULE_REGS, "writes %s, which stands for the traced instruction's operand", h);
	if (h)
		return verr(V, st, i, RULE_REGS, "writes %s, a read-only special register", h);
	size_t base = strcspn(s, ". ");
	if (base > len)
		base = len;
	if (base < len) { /* a vector register's component */
		const char *c = s + base + 1;
		size_t cl = len - base - 1;
		if (cl != 1 || !strchr("xyzwrgba", c[0]))
			return verr(V, st, i, RULE_SYNTAX, "'%.*s': a destination's only .part is a component (.x .y .z .w)",
				    (int)len, s);
	}
	if (s[0] != '%' || !snippet_reg_find(V->regs, V->n_regs, s, base))
		return verr(V, st, i, RULE_REGS, "writes %.*s, which the probe did not declare with .reg", (int)base, s);
	return 0;
}

int verify_dest(struct vctx *V, const struct vinsn *in, const struct vop *o)
{
	const struct snippet_stmt *st = in->st;
	int n = o->b - o->a;
	if (n == 1)
		return dest_name(V, in, o->a);
	if (n == 3 && is_punct(st, o->a + 1, '|'))
		return dest_name(V, in, o->a) < 0 ? -1 : dest_name(V, in, o->a + 2);
	if (n >= 3 && is_punct(st, o->a, '{') && is_punct(st, o->b - 1, '}')) {
		for (int i = o->a + 1; i < o->b - 1; i += 2) {
			if (dest_name(V, in, i) < 0)
				return -1;
			if (i + 1 < o->b - 1 && !is_punct(st, i + 1, ','))
				return verr(V, st, i + 1, RULE_SYNTAX, "cannot read the destination operand");
		}
		return 0;
	}
	return verr(V, st, o->a, RULE_SYNTAX, "cannot read the destination operand");
}

/* ---- sources ---- */

int verify_scalar(struct vctx *V, const struct vinsn *in, const struct vop *o)
{
	const struct snippet_stmt *st = in->st;
	int n = o->b - o->a, i = o->b - 1;
	size_t len;
	const char *s = n > 0 ? tok_text(st, i, &len) : "";
	uint64_t v;
	int is_int;
	if (n == 2 && is_punct(st, o->a, '!') && st->toks[i].kind == SNIP_WORD && s[0] == '%')
		return 0;
	if ((n == 2 && is_punct(st, o->a, '-') && st->toks[i].kind == SNIP_NUM) || (n == 1 && st->toks[i].kind == SNIP_NUM)) {
		if (literal(s, len, &v, &is_int) < 0)
			return verr(V, st, i, RULE_SYNTAX, "'%.*s' is not a PTX literal", (int)len, s);
		return 0;
	}
	if (n == 1 && st->toks[i].kind == SNIP_WORD) {
		const char *h = verify_helper(st, i);
		if (h && strlen(h) != len)
			return verr(V, st, i, RULE_SYNTAX, "the helper %s takes no .part", h);
		if (!h && s[0] != '%' && memchr(s, '.', len))
			return verr(V, st, i, RULE_SYNTAX, "'%.*s': a name has no .part", (int)len, s);
		if (len == 1 && s[0] == '_')
			return verr(V, st, i, RULE_SYNTAX, "'_' is only a destination");
		return 0;
	}
	return verr(V, st, n > 0 ? o->a : o->b, RULE_SYNTAX, "cannot read this operand: registers, helpers, names and "
		    "literals only, no constant expressions");
}

/* [base], [base+N], [base+-N] */
static int check_address(struct vctx *V, const struct vinsn *in, const struct vop *o)
{
	const struct snippet_stmt *st = in->st;
	int n = o->b - o->a, b = o->a + 1;
	int form = n == 3 || (n == 5 && is_punct(st, b + 1, '+')) || (n == 6 && is_punct(st, b + 1, '+') && is_punct(st, b + 2, '-'));
	size_t len;
	const char *s = tok_text(st, b, &len);
	const char *h = verify_helper(st, b);
	if (!form || !is_punct(st, o->b - 1, ']') || st->toks[b].kind != SNIP_WORD || (h && strcmp(h, "ADDR") != 0) ||
	    memchr(s, '.', len) || (n > 3 && st->toks[o->b - 2].kind != SNIP_NUM))
		return verr(V, st, o->a, RULE_SYNTAX, "an address is [register], [register+N], [ADDR+N] or [name+N]");
	if (n == 3)
		return 0;
	uint64_t v;
	int is_int;
	int k = o->b - 2;
	s = tok_text(st, k, &len);
	if (literal(s, len, &v, &is_int) < 0 || !is_int)
		return verr(V, st, k, RULE_SYNTAX, "'%.*s' is not an integer offset", (int)len, s);
	if (v > VERIFY_MAX_OFFSET)
		return verr(V, st, k, RULE_ALLOW, "offset %.*s is more than %d bytes from the address: a probe reads only "
			    "near addresses the kernel computed", (int)len, s, VERIFY_MAX_OFFSET);
	return 0;
}

int verify_source(struct vctx *V, const struct vinsn *in, const struct vop *o, int addr)
{
	const struct snippet_stmt *st = in->st;
	int bracket = is_punct(st, o->a, '[');
	if (addr && !bracket)
		return verr(V, st, o->a, RULE_SYNTAX, "'%s' reads through an [address] here", in->base);
	if (bracket && !addr)
		return verr(V, st, o->a, RULE_ALLOW, "only ld, ldu and prefetch take an [address] in a probe");
	if (bracket)
		return check_address(V, in, o);
	if (!is_punct(st, o->a, '{'))
		return verify_scalar(V, in, o);
	if (o->b - o->a < 3 || !is_punct(st, o->b - 1, '}'))
		return verr(V, st, o->a, RULE_SYNTAX, "cannot read this vector operand");
	for (int a = o->a + 1, i = a; i <= o->b - 1; i++) {
		if (i < o->b - 1 && !is_punct(st, i, ','))
			continue;
		if (verify_scalar(V, in, &(struct vop){ a, i }) < 0)
			return -1;
		a = i + 1;
	}
	return 0;
}
