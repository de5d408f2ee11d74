/* The probe verifier. A snippet runs inside someone else's kernel, so it may
 * only observe: (1) it writes only registers it declared itself (not the
 * kernel's, not the carry flag), (2) it never changes control flow, (3) it
 * never touches shared memory, (4) it never calls a function, (5) it writes
 * memory only through SAVE, (6) it uses no warp collectives or resource
 * instructions, (7) it uses only instructions on the allow-list
 * (verify_insn.c), with operands of known forms. Helper use is checked
 * against the hook and the map.
 *
 * The checks run on the token stream ptxas reads (snippet.h), and the
 * instrumenter pastes that same canonical text, so no spelling (a form feed
 * inside an opcode, a comment between its parts) can mean one thing here and
 * another to ptxas. Checks are syntactic and conservative: a generic ld
 * through a pointer into shared memory is not seen, and a load from an
 * address that is not mapped faults the kernel.
 *
 * Errors read "FILE:LINE:COL: rule N (what): detail: statement;" where
 * LINE:COL is where the offending token was written in the TOML file. */
#include "engine/probe/verify_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"
#include "common/strbuf.h"
#include "engine/probe/verify_save.h"

/* Reads hook h (a refused byte is reported where it was written). */
static int read_hook(struct vctx *V, const struct probe_hook *h, struct snippet *sn)
{
	struct probe_pos bad;
	char why[160];
	if (snippet_read(h, sn, &bad, why, sizeof why) == 0)
		return 0;
	return cause_set(V->cause, "%s:%d:%d: %s: %s", verify_path(V), bad.line, bad.col, verify_rule_name(RULE_SYNTAX), why);
}

/* The .reg statements of one hook's text. */
static int collect_hook_decls(struct vctx *V, const struct probe_hook *h)
{
	struct snippet sn;
	if (read_hook(V, h, &sn) < 0)
		return -1;
	for (int i = 0; i < sn.n; i++) {
		const struct snippet_stmt *st = &sn.stmts[i];
		char why[160];
		int bad = 0;
		if (!snippet_tok_is(st, 0, ".reg"))
			continue;
		if (snippet_decl_parse(st, &V->regs, &V->n_regs, &bad, why, sizeof why) < 0) {
			enum rule r = strstr(why, "%ntop_") || strstr(why, "special") ? RULE_REGS : RULE_SYNTAX;
			verr(V, st, bad, r, "%s", why);
			snippet_free(&sn);
			return -1;
		}
	}
	snippet_free(&sn);
	return 0;
}

/* Pass 1: the declarations of every hook (any hook may use them) and the
 * loader's (p->decls: NEUTRINO's registers). */
static int collect_decls(struct vctx *V)
{
	struct probe_hook loader = { .name = "loader", .snippet = V->p->decls, .snippet_flat = 1 };
	if (V->p->decls && collect_hook_decls(V, &loader) < 0)
		return -1;
	for (int k = 0; k < V->p->n_hooks; k++)
		if (collect_hook_decls(V, &V->p->hooks[k]) < 0)
			return -1;
	return 0;
}

/* --- statements ------------------------------------------------------- */

static int is_label(const struct snippet_stmt *st)
{
	return st->n_toks >= 2 && st->toks[0].kind == SNIP_WORD && snippet_tok_is(st, 1, ":");
}

static int check_stmt(struct vctx *V, const struct snippet_stmt *st)
{
	if (!st->terminated)
		return verr(V, st, st->n_toks - 1, RULE_SYNTAX, "statement does not end with ';'");
	for (int i = 0; i < st->n_toks; i++)
		if (st->toks[i].kind == SNIP_WORD && strncmp(st->text + st->toks[i].off, "%ntop_", 6) == 0)
			return verr(V, st, i, RULE_REGS, "registers named %%ntop_* are reserved for the engine");
	if (snippet_tok_is(st, 0, "{") || snippet_tok_is(st, 0, "}"))
		return verr(V, st, 0, RULE_SYNTAX, "{ } blocks are not supported in snippets");
	if (is_label(st))
		return verr(V, st, 0, RULE_FLOW, "label definitions are not allowed (snippets cannot branch)");
	if (st->toks[0].kind == SNIP_DOT) {
		if (snippet_tok_is(st, 0, ".reg"))
			return 0; /* checked in pass 1 */
		if (strncmp(st->text, ".shared", 7) == 0)
			return verr(V, st, 0, RULE_SHARED, "snippets cannot declare shared memory");
		return verr(V, st, 0, RULE_SYNTAX, "only .reg declarations are allowed in snippets");
	}
	return verify_insn(V, st);
}

static int check_hook(struct vctx *V, const struct probe_hook *h)
{
	struct snippet sn;
	V->h = h;
	V->saved = 0;
	V->last_save = NULL;
	if (read_hook(V, h, &sn) < 0)
		return -1;
	int rc = 0;
	for (int i = 0; i < sn.n && rc == 0; i++)
		rc = check_stmt(V, &sn.stmts[i]);
	const struct probe_map *m = &V->p->map;
	char msg[256];
	if (rc == 0 && V->p->has_map && verify_save_total(m, V->saved, msg, sizeof msg) < 0)
		rc = verr(V, V->last_save, V->last_save_tok, RULE_HELPER, "%s", msg);
	snippet_free(&sn);
	return rc;
}

int verify_undeclared_writes(const struct probe *p, char **decls, char **cause)
{
	struct strbuf sb;
	strbuf_init(&sb);
	struct vctx V = { .p = p, .cause = cause };
	int r = collect_decls(&V);
	for (int k = 0; k < p->n_hooks && r == 0; k++) {
		struct snippet sn;
		r = read_hook(&V, &p->hooks[k], &sn);
		for (int i = 0; r == 0 && i < sn.n; i++)
			verify_implicit_dests(&V, &sn.stmts[i], &sb);
		if (r == 0)
			snippet_free(&sn);
	}
	free(V.regs);
	*decls = NULL;
	if (r < 0 || sb.len == 0) {
		strbuf_done(&sb);
		return r;
	}
	*decls = strbuf_finish(&sb, NULL);
	return *decls ? 0 : cause_set(cause, "out of memory");
}

int verify_probe_ptx(const struct probe *p, char **cause)
{
	struct vctx V = { .p = p, .cause = cause };
	int r = collect_decls(&V);
	for (int i = 0; i < p->n_hooks && r == 0; i++)
		r = check_hook(&V, &p->hooks[i]);
	free(V.regs);
	return r;
}
