/* The verifier's errors: "FILE:LINE:COL: rule N (what): detail:
 * statement;", LINE:COL where the offending token was written in the probe
 * file. Shared by the PTX rules (verify*.c) and the GCN ones. */
#include "engine/probe/verify_int.h"

#include <stdarg.h>
#include <stdio.h>

#include "common/cause.h"

static const char *const rule_names[] = {
	[RULE_REGS] = "rule 1 (writes only its own registers)",
	[RULE_FLOW] = "rule 2 (no control flow)",
	[RULE_SHARED] = "rule 3 (no shared memory)",
	[RULE_CALL] = "rule 4 (no function calls)",
	[RULE_WRITE] = "rule 5 (writes memory only through SAVE)",
	[RULE_WARP] = "rule 6 (no warp-collective or resource instructions)",
	[RULE_ALLOW] = "rule 7 (only instructions and operands known to be safe)",
	[RULE_HELPER] = "helper",
	[RULE_SYNTAX] = "syntax",
};

const char *verify_path(const struct vctx *V)
{
	return V->p->path ? V->p->path : "<string>";
}

const char *verify_rule_name(enum rule r)
{
	return rule_names[r];
}

int verr(struct vctx *V, const struct snippet_stmt *st, int tok, enum rule r, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	struct probe_pos at = tok >= 0 && tok < st->n_toks ? st->toks[tok].pos : st->pos;
	return cause_set(V->cause, "%s:%d:%d: %s: %s: %s%s", verify_path(V), at.line, at.col, rule_names[r], msg, st->text,
			 st->terminated ? ";" : "");
}

