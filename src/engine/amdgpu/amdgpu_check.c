/* The probed-object check (see amdgpu_check.h). */
#include "engine/amdgpu/amdgpu_check.h"

#include <stdlib.h>
#include <string.h>

#include "common/cause.h"

struct check {
	const struct amdgpu_func *f, *g;    /* original, probed */
	int n, gn, pos;                     /* instructions of each; where we are in g */
	const uint8_t *blocks;              /* inserted code assembled alone */
	const size_t *off;
	int *start;                         /* per original instruction: where its region starts in g */
	int *owner;                         /* per instruction of g: its block, or AMDGPU_CHECK_ORIGINAL */
	struct amdgpu_check_stats *st;
	char **cause;
};

/* The next instructions of g must be block b's bytes, exactly. */
static int check_block(struct check *c, int b)
{
	size_t at = c->off[b], end = c->off[b + 1];
	while (at < end) {
		if (c->pos >= c->gn)
			return cause_set(c->cause, "the probed code ends inside inserted block %d", b);
		const struct amdgpu_insn *in = &c->g->v[c->pos];
		if (at + in->size > end || memcmp(in->bytes, c->blocks + at, in->size))
			return cause_set(c->cause, "'%s' at 0x%llx is not the inserted code assembled alone", in->text,
					 (unsigned long long)in->addr);
		at += in->size;
		c->owner[c->pos++] = b;
		c->st->inserted++;
	}
	return 0;
}

static size_t check_mnemonic_len(const char *t)
{
	return strcspn(t, " ");
}

/* Original instruction i against the probed one at pos (or, when it was
 * replaced, the replacement block 2 + 2i). */
static int check_original(struct check *c, int i)
{
	if (c->off[2 + 2 * i] != c->off[3 + 2 * i]) {
		c->st->replaced++;
		return check_block(c, 2 + 2 * i);
	}
	const struct amdgpu_insn *a = &c->f->v[i], *b = c->pos < c->gn ? &c->g->v[c->pos] : NULL;
	if (!b)
		return cause_set(c->cause, "the probed code ends before '%s' (0x%llx)", a->text,
				 (unsigned long long)a->addr);
	int same;
	if (amdgpu_asm_branch_label(a) >= 0)
		same = amdgpu_asm_branch_label(b) >= 0 && check_mnemonic_len(a->text) == check_mnemonic_len(b->text) &&
		       !strncmp(a->text, b->text, check_mnemonic_len(a->text));
	else if (a->getpc == AMDGPU_GETPC_LO || a->getpc == AMDGPU_GETPC_HI)
		same = b->getpc == a->getpc && b->target == a->target && b->size == a->size && !memcmp(a->bytes, b->bytes, 4);
	else
		same = a->size == b->size && !memcmp(a->bytes, b->bytes, a->size) && !strcmp(a->text, b->text);
	if (!same)
		return cause_set(c->cause, "'%s' (0x%llx) became '%s' (0x%llx)", a->text, (unsigned long long)a->addr,
				 b->text, (unsigned long long)b->addr);
	c->st->original++;
	c->st->units += a->getpc == AMDGPU_GETPC_LO;
	c->owner[c->pos++] = AMDGPU_CHECK_ORIGINAL;
	return 0;
}

/* Every branch reaches the region (inserted code, then the instruction)
 * of its original target. */
static int check_branches(struct check *c, const int *at)
{
	for (int i = 0; i < c->n; i++) {
		int k = amdgpu_asm_branch_label(&c->f->v[i]);
		if (k < 0)
			continue;
		int t = 0, x = 0, k2 = amdgpu_asm_branch_label(&c->g->v[at[i]]);
		while (t < c->n && c->f->v[t].label != k)
			t++;
		while (x < c->gn && c->g->v[x].label != k2)
			x++;
		if (t == c->n || x == c->gn || x != c->start[t])
			return cause_set(c->cause, "'%s' (0x%llx) no longer reaches its target's code", c->f->v[i].text,
					 (unsigned long long)c->f->v[i].addr);
		c->st->branches++;
	}
	return 0;
}

static int check_walk(struct check *c)
{
	int *at = calloc((size_t)c->n + 1, sizeof *at);
	if (!at)
		return cause_set(c->cause, "out of memory checking the probed code");
	int r = check_block(c, 0);
	for (int i = 0; r == 0 && i < c->n; i++) {
		c->start[i] = c->pos;
		r = check_block(c, 1 + 2 * i);
		at[i] = c->pos;
		if (r == 0)
			r = check_original(c, i);
	}
	if (r == 0 && c->pos != c->gn)
		r = cause_set(c->cause, "%d instructions after the kernel's last one", c->gn - c->pos);
	if (r == 0)
		r = check_branches(c, at);
	free(at);
	return r;
}

int amdgpu_check_regions(const struct amdgpu_func *f, int n, const struct amdgpu_asm_ins *ins, const uint8_t *obj,
			 size_t len, const char *proc, const char *kernel, uint64_t code_len,
			 struct amdgpu_check_stats *st, struct amdgpu_regions *rg, char **cause)
{
	const char **texts = calloc(2 * (size_t)n + 1, sizeof *texts);
	size_t *off = calloc(2 * (size_t)n + 2, sizeof *off);
	int *start = calloc((size_t)n + 1, sizeof *start);
	uint8_t *blocks = NULL;
	size_t blen = 0;
	memset(st, 0, sizeof *st);
	memset(rg, 0, sizeof *rg);
	int r = texts && off && start ? 0 : cause_set(cause, "out of memory checking the probed code");
	for (int i = 0; r == 0 && ins && i < n; i++) {
		texts[1 + 2 * i] = ins->before ? ins->before[i] : NULL;
		texts[2 + 2 * i] = ins->replace ? ins->replace[i] : NULL;
	}
	if (r == 0 && ins)
		texts[0] = ins->prologue;
	if (r == 0)
		r = amdgpu_asm_blocks(texts, 2 * n + 1, proc, &blocks, &blen, off, cause);
	if (r == 0)
		r = amdgpu_disasm_object(obj, len, proc, &rg->d, cause);
	rg->g = r == 0 ? amdgpu_disasm_func(&rg->d, kernel) : NULL;
	if (r == 0 && !rg->g)
		r = cause_set(cause, "the probed object does not disassemble kernel %s", kernel);
	if (r == 0) {
		rg->gn = amdgpu_asm_count(rg->g, code_len);
		rg->owner = calloc((size_t)rg->gn + 1, sizeof *rg->owner);
		struct check c = { .f = f, .g = rg->g, .n = n, .gn = rg->gn, .blocks = blocks, .off = off,
				   .start = start, .owner = rg->owner, .st = st, .cause = cause };
		r = rg->owner ? check_walk(&c) : cause_set(cause, "out of memory checking the probed code");
	}
	free(blocks);
	free(texts);
	free(off);
	free(start);
	if (r < 0) {
		amdgpu_regions_done(rg);
		return cause_wrap(cause, "probed kernel %s", kernel);
	}
	return 0;
}

void amdgpu_regions_done(struct amdgpu_regions *rg)
{
	amdgpu_disasm_done(&rg->d);
	free(rg->owner);
	memset(rg, 0, sizeof *rg);
}

int amdgpu_check_probed(const struct amdgpu_func *f, int n, const struct amdgpu_asm_ins *ins, const uint8_t *obj,
			size_t len, const char *proc, const char *kernel, uint64_t code_len,
			struct amdgpu_check_stats *st, char **cause)
{
	struct amdgpu_regions rg;
	int r = amdgpu_check_regions(f, n, ins, obj, len, proc, kernel, code_len, st, &rg, cause);
	if (r == 0)
		amdgpu_regions_done(&rg);
	return r;
}
