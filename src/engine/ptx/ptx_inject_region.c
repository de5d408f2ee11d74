/* Region boundaries: where a warp enters or leaves a region of the probe
 * with hooks at = "region" (probe.h: source lines, an instruction class, a
 * loop's iterations). A region is a set of instructions; a warp is in it
 * from the first of a run of them it executes to the point it leaves the
 * run. Walking a body in order with the regions the fall-through path is
 * in (`open`):
 *   - an instruction of region r when r is not open: BEGIN before it;
 *   - an instruction outside r when r is open: END before it;
 *   - a branch of r to a label where r goes on and jumps do not begin it
 *     (below): nothing, the warp stays in r (a loop inside a line range is
 *     one segment); any other branch, ret or exit of r: END before it,
 *     guarded by the branch's own predicate when it has one (only the
 *     taken path leaves; the fall through stays in r);
 *   - a label after which r goes on: jumps arriving there begin r when one
 *     of them comes from outside r (or the label heads a loop region); the
 *     fall through begins r before the label when it was outside, and
 *     jumps over the arrivals' BEGIN when it was inside;
 *   - a label after which r ends: END before it for the fall through.
 * So every path through the body records each entry and exit once, and a
 * region's records pair up per warp; a call into an instrumented function
 * may nest a run of the same region (readers count depth). A loop region
 * holds the instructions after the loop's head label up to its back edge
 * (the innermost loop with an instruction on the line given): one
 * BEGIN/END pair per iteration. A function with an indirect branch (brx)
 * treats every label as reachable from outside. */
#include "engine/ptx/ptx_inject_int.h"
#include "engine/ptx/ptx_srclines.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"

/* ---- membership --------------------------------------------------------- */

static int any_of(const char *op, const char *const *pats)
{
	for (; *pats; pats++)
		if (ptx_opcode_matches(op, *pats))
			return 1;
	return 0;
}

int ptx_class_has(enum probe_class c, const char *op)
{
	static const char *const tensor[] = { "mma", "wmma.mma", "wgmma.mma_async", "tcgen05.mma", NULL };
	static const char *const load[] = { "ld.global", "ldu.global", NULL };
	static const char *const store[] = { "st.global", "atom.global", "red.global", NULL };
	static const char *const wait[] = { "bar.sync", "bar.red", "barrier.sync", "barrier.red", "barrier.cluster.wait",
					    "mbarrier.try_wait", "mbarrier.test_wait", "cp.async.wait_group",
					    "cp.async.wait_all", "cp.async.bulk.wait_group", "wgmma.wait_group",
					    "tcgen05.wait", "fence", "membar", NULL };
	switch (c) {
	case PROBE_CLASS_TENSOR:
		return any_of(op, tensor);
	case PROBE_CLASS_LOAD:
		return any_of(op, load);
	case PROBE_CLASS_STORE:
		return any_of(op, store);
	case PROBE_CLASS_WAIT: /* "bar.sync" also matches __syncwarp's bar.warp.sync: not a wait */
		return any_of(op, wait) && !ptx_opcode_matches(op, "bar.warp");
	case PROBE_CLASS_ASYNC:
		return (ptx_opcode_matches(op, "cp.async") || ptx_opcode_matches(op, "cp.reduce.async")) &&
		       !strstr(op, "wait");
	}
	return 0;
}

/* The loop [head label, back edge] of f with a statement on file:line,
 * innermost first; 0 when none. */
static int find_loop(const struct inj *in, const struct probe_region *r, int *head, int *edge)
{
	const struct ptx_func *f = in->fn.f;
	int best = -1;
	for (int b = 0; b < f->n_body; b++) {
		int l = ptx_branch_target(f, b);
		if (l < 0 || l >= b)
			continue;
		int hit = 0;
		for (int s = l + 1; s <= b && !hit; s++)
			hit = f->body[s].kind == PTX_INSN && ptx_loc_in(&in->files, &in->fn.locs[s], r->file, r->first, r->last);
		if (hit && (best < 0 || b - l < best)) {
			best = b - l;
			*head = l;
			*edge = b;
		}
	}
	return best >= 0;
}

/* Instructions between two of a class's that a run absorbs, at most. */
#define CLASS_GAP 8

static int is_member(const struct inj *in, int i, int r)
{
	return in->fn.f->body[i].kind == PTX_INSN && (in->fn.rmask[i] >> r & 1);
}

/* A class region's runs: two of its instructions at most CLASS_GAP apart
 * in straight-line code (no label, no branch between: address arithmetic
 * between cp.async, a fence between wgmma) make one run, and a branch that
 * loops back over nothing but the class's instructions (a wait's spin
 * loop: try_wait, then back while not done) is the class's too. One
 * segment per burst of the class instead of one per instruction: fewer
 * records, and the time between them counted as the burst's. */
static void class_runs(struct inj *in, int r)
{
	const struct ptx_func *f = in->fn.f;
	int last = -1, between = 0;
	for (int i = 0; i < f->n_body; i++) {
		const struct ptx_stmt *s = &f->body[i];
		if (s->kind == PTX_LABEL || (s->kind == PTX_INSN && s->insn.opcode && ptx_inject_is_transfer(&s->insn) &&
					     !is_member(in, i, r))) {
			last = -1;
			continue;
		}
		if (s->kind != PTX_INSN)
			continue;
		if (!is_member(in, i, r)) {
			between++;
			continue;
		}
		for (int k = last + 1; last >= 0 && between <= CLASS_GAP && k < i; k++)
			if (f->body[k].kind == PTX_INSN)
				in->fn.rmask[k] |= 1u << r;
		last = i;
		between = 0;
	}
	for (int i = 0; i < f->n_body; i++) {
		int j = in->fn.rnext[i], l;
		if (!is_member(in, i, r) || j >= f->n_body || is_member(in, j, r) || (l = ptx_branch_target(f, j)) < 0 || l > i ||
		    i - l > CLASS_GAP + 2)
			continue;
		int all = 1;
		for (int k = l + 1; k < j && all; k++)
			all = f->body[k].kind != PTX_INSN || is_member(in, k, r);
		if (all)
			in->fn.rmask[j] |= 1u << r;
	}
}

static void mark_region(struct inj *in, int r, const struct probe_region *pr)
{
	const struct ptx_func *f = in->fn.f;
	int head = -1, edge = -1;
	if (pr->kind == PROBE_REGION_LOOP && !find_loop(in, pr, &head, &edge))
		return;
	if (head >= 0) /* every trip begins anew */
		in->fn.lbegin[head] |= 1u << r;
	for (int i = 0; i < f->n_body; i++) {
		const struct ptx_stmt *s = &f->body[i];
		int in_r = 0;
		if (s->kind != PTX_INSN || !s->insn.opcode)
			continue;
		if (pr->kind == PROBE_REGION_LINES)
			in_r = ptx_loc_in(&in->files, &in->fn.locs[i], pr->file, pr->first, pr->last);
		else if (pr->kind == PROBE_REGION_CLASS)
			in_r = ptx_class_has(pr->cls, s->insn.opcode);
		else
			in_r = i > head && i <= edge;
		if (in_r)
			in->fn.rmask[i] |= 1u << r;
	}
	if (pr->kind == PROBE_REGION_CLASS)
		class_runs(in, r);
}

/* The regions jumps arriving at each label begin: those going on after it
 * that some branch enters from outside (all of them when an indirect
 * branch could come from anywhere). */
static void mark_label_begins(struct inj *in)
{
	const struct ptx_func *f = in->fn.f;
	int indirect = 0;
	for (int i = 0; i < f->n_body; i++)
		indirect |= f->body[i].kind == PTX_INSN && f->body[i].insn.opcode &&
			    ptx_opcode_matches(f->body[i].insn.opcode, "brx");
	for (int i = 0; i < f->n_body; i++) {
		int l = indirect ? -1 : ptx_branch_target(f, i);
		if (l >= 0 && in->fn.rnext[l] < f->n_body)
			in->fn.lbegin[l] |= in->fn.rmask[in->fn.rnext[l]] & ~in->fn.rmask[i];
	}
	for (int l = 0; indirect && l < f->n_body; l++)
		if (f->body[l].kind == PTX_LABEL && in->fn.rnext[l] < f->n_body)
			in->fn.lbegin[l] |= in->fn.rmask[in->fn.rnext[l]];
}

int ptx_inject_region_mark(struct inj *in)
{
	const struct ptx_func *f = in->fn.f;
	size_t n = (size_t)(f->n_body ? f->n_body : 1);
	in->fn.locs = ptx_func_locs(f);
	in->fn.rmask = calloc(n, sizeof *in->fn.rmask);
	in->fn.rnext = calloc(n, sizeof *in->fn.rnext);
	in->fn.lbegin = calloc(n, sizeof *in->fn.lbegin);
	if (!in->fn.locs || !in->fn.rmask || !in->fn.rnext || !in->fn.lbegin)
		return cause_set(in->cause, "out of memory");
	for (int i = f->n_body - 1, next = f->n_body; i >= 0; i--) {
		in->fn.rnext[i] = next;
		if (f->body[i].kind == PTX_INSN)
			next = i;
	}
	const struct probe *p = in->rprobe ? in->rprobe->p : NULL;
	for (int r = 0; p && r < p->n_regions; r++)
		mark_region(in, r, &p->regions[r]);
	if (p)
		mark_label_begins(in);
	return 0;
}

/* ---- boundaries ----------------------------------------------------------- */

/* The region hooks of one side (end = 0 begin, 1 end) for region r at
 * site statement i, behind `pred` when given (a branch's guard), and in a
 * sampled map behind the kept-block test (engine.h: a block not kept
 * branches around them, uniformly). */
static int emit_edge(struct inj *in, struct strbuf *sb, int r, int i, int end, const char *pred)
{
	const struct iprobe *ip = in->rprobe;
	int idx = ptx_inject_site_add(in, i, end ? ENGINE_SITE_END : ENGINE_SITE_BEGIN, r);
	if (idx < 0)
		return -1;
	int kept = -1;
	if (!in->plain && ip->map >= 0 && in->maps[ip->map].sampled && in->maps[ip->map].dynamic) {
		char sp[32];
		snprintf(sp, sizeof sp, "%%ntop_sp%d", ip->map);
		kept = ptx_inject_guard_open(in, sb, sp);
	}
	int skip = pred ? ptx_inject_guard_open(in, sb, pred) : -1;
	struct site st = ptx_inject_site_at(SITE_INSN, NULL);
	st.index = idx;
	st.region = r;
	st.kept_only = kept >= 0;
	for (int h = 0; h < ip->p->n_hooks; h++)
		if (ip->p->hooks[h].kind == PROBE_TP_REGION && ip->p->hooks[h].after == end &&
		    ptx_inject_site_snip(in, sb, ip, h, &st) < 0)
			return -1;
	if (skip >= 0)
		strbuf_printf(sb, "$ntop_skip_%d:\n", skip);
	if (kept >= 0)
		strbuf_printf(sb, "$ntop_skip_%d:\n", kept);
	in->sites++;
	return 0;
}

static int emit_all(struct inj *in, struct strbuf *sb, uint32_t which, const int *site, int i, int end,
		    const char *pred)
{
	for (int r = 0; which; r++, which >>= 1)
		if ((which & 1) && emit_edge(in, sb, r, site ? site[r] : i, end, pred) < 0)
			return -1;
	return 0;
}

static int at_label(struct inj *in, struct strbuf *sb, int i, uint32_t *open, struct strbuf *after)
{
	int j = in->fn.rnext[i];
	uint32_t need = j < in->fn.f->n_body ? in->fn.rmask[j] : 0, arrive = in->fn.lbegin[i] & need;
	if (emit_all(in, sb, *open & ~need, in->fn.rlast, i, 1, NULL) < 0 || /* the fall through leaves */
	    emit_all(in, sb, need & ~*open, NULL, j, 0, NULL) < 0)          /* ... or enters */
		return -1;
	if (arrive) { /* arriving jumps begin; the fall through is in already */
		int n = in->rj_n++;
		strbuf_printf(sb, "bra.uni $ntop_rj_%d;\n", n);
		if (emit_all(in, after, arrive, NULL, j, 0, NULL) < 0)
			return -1;
		strbuf_printf(after, "$ntop_rj_%d:\n", n);
	}
	*open = need;
	return 0;
}

/* Regions a branch at i leaves: all it is in, but those going on at its
 * label that jumps do not begin again (the warp stays in them). */
static uint32_t branch_leaves(const struct inj *in, int i, uint32_t m)
{
	int l = ptx_branch_target(in->fn.f, i);
	if (l < 0 || in->fn.rnext[l] >= in->fn.f->n_body)
		return m;
	return m & ~(in->fn.rmask[in->fn.rnext[l]] & ~in->fn.lbegin[l]);
}

static int at_insn(struct inj *in, struct strbuf *sb, int i, uint32_t *open)
{
	const struct ptx_insn *x = &in->fn.f->body[i].insn;
	uint32_t m = in->fn.rmask[i];
	if (emit_all(in, sb, *open & ~m, in->fn.rlast, i, 1, NULL) < 0 || emit_all(in, sb, m & ~*open, NULL, i, 0, NULL) < 0)
		return -1;
	*open = m;
	for (int r = 0; r < 32; r++)
		if (m & (1u << r))
			in->fn.rlast[r] = i;
	if (!m || !x->opcode || !ptx_inject_is_transfer(x))
		return 0;
	int guarded = x->pred && *x->pred;
	if (emit_all(in, sb, branch_leaves(in, i, m), NULL, i, 1, guarded ? x->pred : NULL) < 0)
		return -1;
	if (!guarded)
		*open = 0;
	return 0;
}

int ptx_inject_region_before(struct inj *in, struct strbuf *sb, int i, uint32_t *open, struct strbuf *after)
{
	if (!in->rprobe)
		return 0;
	if (i >= in->fn.f->n_body) /* the closing brace: whatever is open ends */
		return emit_all(in, sb, *open, in->fn.rlast, i, 1, NULL);
	const struct ptx_stmt *s = &in->fn.f->body[i];
	if (s->kind == PTX_LABEL)
		return at_label(in, sb, i, open, after);
	if (s->kind == PTX_INSN && s->insn.opcode)
		return at_insn(in, sb, i, open);
	return 0;
}
