/* The AMDGPU probe injector (see amdgpu_inject.h): probes checked and
 * read, the descriptor's launch state extended, arguments appended,
 * registers placed (amdgpu_frame.c), then code built per site
 * (amdgpu_emit.c) and padded (amdgpu_hazard.c). Sites:
 *  - entry: the prologue, ahead of instruction 0's label;
 *  - exit: before each s_endpgm, or before gfx11+'s "s_nop 0; s_sendmsg
 *    sendmsg(MSG_DEALLOC_VGPRS)" ahead of it (VGPRs are gone after it);
 *  - opcode hooks: before each instruction whose mnemonic matches a
 *    pattern ("global_load" matches global_load_dwordx4), ahead of an
 *    s_delay_alu hint glued to it (unless a branch lands between them).
 * A site inside an s_clause window (gfx10+: the next N memory
 * instructions form one clause, and other instructions may not sit inside)
 * drops that clause hint: the s_clause becomes s_nop 0. */
#include "engine/amdgpu/amdgpu_inject_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"
#include "engine/amdgpu/amdgpu_verify.h"

/* --- probes ------------------------------------------------------------ */

static int inject_probes(struct amdgpu_ictx *c, struct probe *const *probes, int n_probes)
{
	if (n_probes > AMDGPU_MAX_MAPS)
		return cause_set(c->cause, "at most %d probes at once on AMD GPUs", AMDGPU_MAX_MAPS);
	c->probes = calloc((size_t)(n_probes ? n_probes : 1), sizeof *c->probes);
	if (!c->probes)
		return cause_set(c->cause, "out of memory reading probes");
	for (int i = 0; i < n_probes; i++) {
		const struct probe *p = probes[i];
		struct amdgpu_iprobe *ip = &c->probes[i];
		ip->p = p;
		ip->map = -1;
		if (p->isa != PROBE_ISA_GCN)
			return cause_set(c->cause, "probe %s is written in PTX; AMD code objects take probes with isa = "
					 "\"gcn\" (the built-in ones are in probes/amd/)", p->name);
		if (amdgpu_verify_probe(p, c->cause) < 0 || amdgpu_snip_parse(p, &ip->snip, c->cause) < 0)
			return -1;
		c->n_probes++;
		if (!p->has_map)
			continue;
		struct amdgpu_map *m = &c->out->maps[c->out->n_maps];
		m->map = p->map;
		snprintf(m->probe, sizeof m->probe, "%s", p->name);
		ip->map = c->out->n_maps++;
	}
	return 0;
}

/* --- descriptor --------------------------------------------------------- */

/* User SGPRs the descriptor's properties load (the rest of its count is
 * padding: gfx1100/gfx1102 wave32 pad user and system SGPRs to 16). */
static int inject_real_user_sgprs(const struct amdgpu_kd *kd)
{
	static const struct {
		unsigned bit, n;
	} props[] = { { AMDGPU_KD_PRIVATE_SEGMENT_BUFFER, 4 }, { AMDGPU_KD_DISPATCH_PTR, 2 }, { AMDGPU_KD_QUEUE_PTR, 2 },
		      { AMDGPU_KD_KERNARG_SEGMENT_PTR, 2 }, { AMDGPU_KD_DISPATCH_ID, 2 },
		      { AMDGPU_KD_FLAT_SCRATCH_INIT, 2 }, { AMDGPU_KD_PRIVATE_SEGMENT_SIZE, 1 } };
	int n = kd->kernarg_preload & 0x7f;
	for (size_t i = 0; i < sizeof props / sizeof props[0]; i++)
		n += kd->properties & props[i].bit ? (int)props[i].n : 0;
	return n;
}

/* System SGPRs in launch order (workgroup ids x, y, z, info, private
 * segment wave offset): where the kernel has them, where they arrive once
 * all ids are enabled, and the moves that put the kernel's back. */
static void inject_system_sgprs(struct amdgpu_ictx *c, struct amdgpu_kd *kd)
{
	int en[5] = { kd->wg_id[0], kd->wg_id[1], kd->wg_id[2], kd->wg_info, kd->private_segment };
	int u_old = (int)kd->user_sgprs, u_new = u_old, sys_old = 0, sys_new = 2 + en[3] + en[4] + 1;
	for (int j = 0; j < 5; j++)
		sys_old += en[j];
	int real = inject_real_user_sgprs(kd);
	if (u_old + sys_old == 16 && u_old > real) /* padded to 16 (gfx11 wave32): keep the total */
		u_new = 16 - sys_new > real ? 16 - sys_new : real;
	int old_pos = u_old, new_pos = u_new, shift_moves = 0;
	for (int j = 0; j < 5; j++) {
		int there = j < 3 || en[j];
		if (j < 3)
			c->wg_sgpr[j] = new_pos;
		if (en[j] && (old_pos != new_pos || j < 3)) {
			int *m = c->moves[c->n_moves++];
			m[0] = old_pos;
			m[1] = j < 3 ? -1 : new_pos;
			m[2] = j;
			shift_moves += j >= 3;
		}
		old_pos += en[j];
		new_pos += there;
	}
	/* info and wave offset move by the same distance: the later one first
	 * when they move up, so each source is read before it is written */
	if (shift_moves == 2 && c->moves[c->n_moves - 1][0] > c->moves[c->n_moves - 1][1]) {
		int t[3];
		memcpy(t, c->moves[c->n_moves - 1], sizeof t);
		memcpy(c->moves[c->n_moves - 1], c->moves[c->n_moves - 2], sizeof t);
		memcpy(c->moves[c->n_moves - 2], t, sizeof t);
	}
	kd->rsrc2 = (kd->rsrc2 & ~(0x1fu << 1)) | (unsigned)u_new << 1;
	kd->rsrc2 |= 7u << 7;
}

/* Enables all three workgroup ids (except on gfx12, which reads TTMPs) and
 * all three work-item ids. */
static void inject_launch_state(struct amdgpu_ictx *c)
{
	struct amdgpu_kd kd = c->k->kd;
	enum amdgpu_family f = c->isa.family;
	c->tid_ids_orig = kd.vgpr_workitem_ids;
	c->packed_tid = f == AMDGPU_FAMILY_GFX90A || f == AMDGPU_FAMILY_GFX94 || f >= AMDGPU_FAMILY_GFX11;
	if (f != AMDGPU_FAMILY_GFX12)
		inject_system_sgprs(c, &kd);
	else
		c->wg_sgpr[0] = c->wg_sgpr[1] = c->wg_sgpr[2] = -1;
	kd.rsrc2 = (kd.rsrc2 & ~(3u << 11)) | 2u << 11;
	uint8_t raw[AMDGPU_KD_SIZE];
	amdgpu_kd_encode(&kd, raw);
	amdgpu_kd_decode(raw, f, &c->out->kd);
}

/* --- metadata ------------------------------------------------------------ */

static int inject_args(struct amdgpu_ictx *c, struct amdgpu_meta *m)
{
	const char *name = c->k->meta->name;
	struct amdgpu_inject *o = c->out;
	if (amdgpu_meta_read(c->co->elf.meta, c->co->elf.meta_len, m, c->cause) < 0)
		return -1;
	if (amdgpu_meta_append_value(m, name, "ntop_launch", AMDGPU_LAUNCH_BYTES, &o->launch_offset, c->cause) < 0)
		return -1;
	for (int i = 0; i < o->n_maps; i++) {
		char arg[PROBE_NAME_MAX + 16];
		snprintf(arg, sizeof arg, "ntop_map_%s", o->maps[i].map.name);
		if (amdgpu_meta_append_buffer(m, name, arg, &o->maps[i].arg_offset, c->cause) < 0)
			return -1;
	}
	o->kernarg_size = amdgpu_meta_kernel(m, name)->kernarg_size;
	return 0;
}

static int inject_counts(struct amdgpu_ictx *c, struct amdgpu_meta *m)
{
	const char *name = c->k->meta->name;
	struct amdgpu_inject *o = c->out;
	amdgpu_regs_apply(c->co, &o->alloc, &o->kd);
	o->kd.kernarg_size = o->kernarg_size;
	if (amdgpu_meta_set_count(m, name, ".sgpr_count", o->alloc.kd_sgprs, c->cause) < 0 ||
	    amdgpu_meta_set_count(m, name, ".vgpr_count", o->alloc.kd_vgprs, c->cause) < 0)
		return -1;
	return amdgpu_meta_write(m, &o->meta, &o->meta_len, c->cause);
}

/* --- sites ------------------------------------------------------------- */

/* The message llvm-mc gave for line N of its input ("in.s:N:C: error:
 * MSG"): N, and MSG into msg; 0 when the cause holds none. */
static int inject_mc_line(const char *cause, char *msg, size_t len)
{
	const char *at = cause ? strstr(cause, ".s:") : NULL;
	if (!at)
		return 0;
	int line = atoi(at + 3);
	const char *err = strstr(at, "error: ");
	snprintf(msg, len, "%.*s", err ? (int)strcspn(err + 7, "\n") : 0, err ? err + 7 : "");
	return line;
}

/* A hook's code the first time it is placed, assembled alone: an error is
 * reported at the probe file's line it came from. */
static int inject_trial(struct amdgpu_ictx *c, const struct amdgpu_iprobe *ip, const struct amdgpu_code *one)
{
	char *text = amdgpu_code_text(one), *cause = NULL, msg[256];
	uint8_t *bytes = NULL;
	size_t len, off[2];
	const char *t[1] = { text };
	if (!text)
		return one->n ? cause_set(c->cause, "out of memory checking probe code") : 0;
	int r = amdgpu_asm_blocks(t, 1, c->proc, &bytes, &len, off, &cause);
	free(text);
	free(bytes);
	if (r == 0)
		return 0;
	/* the text llvm-mc read: ".text", "ntop_block0:", then our lines */
	int line = inject_mc_line(cause, msg, sizeof msg) - 3;
	if (line >= 0 && line < one->n && one->origin[line] > 0) {
		cause_set(c->cause, "%s:%d: the assembler refuses this for %s: %s: %s",
			  ip->p->path ? ip->p->path : "<string>", one->origin[line], c->proc, msg, one->line[line]);
		free(cause);
		return -1;
	}
	*c->cause = cause;
	return cause_wrap(c->cause, "probe %s", ip->p->name);
}

/* Hook h of probe p at a site, appended to raw. */
static int inject_hook(struct amdgpu_ictx *c, int p, int h, const struct amdgpu_site *st, struct amdgpu_code *raw)
{
	struct amdgpu_code one = { 0 };
	int r = amdgpu_emit_hook(c, &c->probes[p], h, st, &one);
	if (r == 0 && h < 64 && !c->tried[p][h]) {
		c->tried[p][h] = 1;
		r = inject_trial(c, &c->probes[p], &one);
	}
	if (r == 0)
		amdgpu_code_cat(raw, &one);
	amdgpu_code_done(&one);
	return r;
}

/* The instruction exit code goes before, for the s_endpgm at e; -1 when a
 * branch lands inside gfx11's epilogue. */
static int inject_exit_site(const struct amdgpu_ictx *c, int e)
{
	const struct amdgpu_insn *v = c->f->v;
	int site = e;
	if (site > 0 && amdgpu_isa_is_dealloc(v[site - 1].text)) {
		site--;
		if (site > 0 && !strcmp(v[site - 1].text, "s_nop 0"))
			site--;
	}
	for (int i = site + 1; i <= e; i++)
		if (v[i].label >= 0)
			return -1;
	return site;
}

static int inject_matches(const struct probe_hook *h, const char *text)
{
	for (int i = 0; i < h->n_opcodes; i++)
		if (amdgpu_isa_match(text, h->opcodes[i]))
			return 1;
	return 0;
}

static int inject_uses(const struct amdgpu_shook *hk, const char *helper)
{
	for (int i = 0; i < hk->n; i++)
		for (int k = 0; k < hk->v[i].n_ops; k++)
			if (!strcmp(hk->v[i].ops[k], helper))
				return 1;
	return 0;
}

/* Opcode hooks at instruction i; *kvg set when one reads kernel VGPRs. */
static int inject_opcode_hooks(struct amdgpu_ictx *c, int i, struct amdgpu_code *raw, int *kvg)
{
	struct amdgpu_site st = { .in = &c->f->v[i] };
	st.is_mem = amdgpu_isa_mem(st.in->text, &st.mem) == 0;
	for (int p = 0; p < c->n_probes; p++) {
		const struct amdgpu_iprobe *ip = &c->probes[p];
		for (int h = 0; h < ip->p->n_hooks; h++) {
			const struct probe_hook *hook = &ip->p->hooks[h];
			if (hook->kind != PROBE_TP_INSN || !inject_matches(hook, st.in->text))
				continue;
			int addr = inject_uses(&ip->snip.hooks[h], "ADDR"), bytes = inject_uses(&ip->snip.hooks[h], "BYTES");
			/* a buffer access's bytes count only where its address is known to be in range */
			int buf = st.is_mem && st.mem.srsrc >= 0 && (addr || bytes);
			if ((addr && (!st.is_mem || !st.mem.has_addr)) || (bytes && (!st.is_mem || !st.mem.bytes)) ||
			    (buf && !st.mem.has_addr)) {
				if (!c->out->stats.sites_no_addr++)
					c->out->stats.no_addr_why = st.is_mem ? st.mem.why : NULL;
				continue;
			}
			*kvg |= addr || buf;
			st.guard = buf;
			c->out->stats.sites++;
			if (inject_hook(c, p, h, &st, raw) < 0)
				return -1;
		}
	}
	return 0;
}

static int inject_exit(struct amdgpu_ictx *c, struct amdgpu_code *raw)
{
	struct amdgpu_site st = { .exit = 1 };
	amdgpu_emit_exit_head(c, raw);
	for (int p = 0; p < c->n_probes; p++)
		for (int h = 0; h < c->probes[p].p->n_hooks; h++)
			if (c->probes[p].p->hooks[h].kind == PROBE_TP_EXIT && inject_hook(c, p, h, &st, raw) < 0)
				return -1;
	amdgpu_emit_exit_tail(c, raw);
	c->out->stats.exits++;
	return 0;
}

/* Where code for instruction i goes: ahead of s_delay_alu hints glued to it. */
static int inject_anchor(const struct amdgpu_ictx *c, int i)
{
	const struct amdgpu_insn *v = c->f->v;
	while (i > 0 && v[i].label < 0 && !strncmp(v[i - 1].text, "s_delay_alu", 11))
		i--;
	return i;
}

static int inject_place(struct amdgpu_ictx *c, int at, const struct amdgpu_code *raw, int kvg)
{
	struct amdgpu_code fixed = { 0 };
	amdgpu_hazard_fix(c, raw, kvg, 0, &fixed);
	char *text = amdgpu_code_text(&fixed);
	amdgpu_code_done(&fixed);
	if (!text)
		return cause_set(c->cause, "out of memory placing probe code");
	char *old = c->out->before[at];
	if (old) { /* an exit and an opcode site share the anchor: both run, in order */
		char *both = NULL;
		if (asprintf(&both, "%s\n%s", old, text) < 0)
			both = NULL;
		free(text);
		text = both;
		free(old);
		if (!text)
			return cause_set(c->cause, "out of memory placing probe code");
	}
	c->out->before[at] = text;
	return 0;
}

static int inject_sites(struct amdgpu_ictx *c)
{
	for (int i = 0; i < c->n; i++) {
		struct amdgpu_code raw = { 0 };
		int kvg = 0, r = 0;
		if (amdgpu_isa_is_endpgm(c->f->v[i].text)) {
			int site = inject_exit_site(c, i);
			if (site < 0)
				return cause_set(c->cause, "a branch lands inside the end of the program at 0x%llx",
						 (unsigned long long)c->f->v[i].addr);
			r = inject_exit(c, &raw);
			if (r == 0)
				r = inject_place(c, site, &raw, 0);
			amdgpu_code_done(&raw);
			if (r < 0)
				return -1;
			continue;
		}
		r = inject_opcode_hooks(c, i, &raw, &kvg);
		if (r == 0 && raw.n)
			r = inject_place(c, inject_anchor(c, i), &raw, kvg);
		amdgpu_code_done(&raw);
		if (r < 0)
			return -1;
	}
	return 0;
}

/* s_clause hints with inserted code inside their window become s_nop 0. */
static void inject_clauses(struct amdgpu_ictx *c)
{
	for (int i = 0; i < c->n; i++) {
		if (strncmp(c->f->v[i].text, "s_clause ", 9))
			continue;
		int len = (int)(strtol(c->f->v[i].text + 9, NULL, 0) & 0x3f) + 1;
		for (int j = i + 1; j <= i + len && j < c->n; j++)
			if (c->out->before[j]) {
				c->out->replace[i] = strdup("\ts_nop 0");
				c->out->stats.clauses_dropped++;
				break;
			}
	}
}

static int inject_prologue(struct amdgpu_ictx *c)
{
	struct amdgpu_code raw = { 0 }, fixed = { 0 };
	struct amdgpu_site st = { 0 };
	amdgpu_emit_prologue(c, &raw);
	for (int p = 0; p < c->n_probes; p++)
		for (int h = 0; h < c->probes[p].p->n_hooks; h++)
			if (c->probes[p].p->hooks[h].kind == PROBE_TP_ENTRY && inject_hook(c, p, h, &st, &raw) < 0) {
				amdgpu_code_done(&raw);
				return -1;
			}
	amdgpu_hazard_fix(c, &raw, 0, 1, &fixed);
	c->out->prologue = amdgpu_code_text(&fixed);
	amdgpu_code_done(&raw);
	amdgpu_code_done(&fixed);
	return c->out->prologue ? 0 : cause_set(c->cause, "out of memory building the prologue");
}

static int inject_run(struct amdgpu_ictx *c, struct probe *const *probes, int n_probes)
{
	struct amdgpu_meta m;
	memset(&m, 0, sizeof m);
	int r = amdgpu_asm_movable(c->f, c->n, c->cause);
	if (r == 0)
		r = inject_probes(c, probes, n_probes);
	if (r == 0) {
		inject_launch_state(c);
		r = inject_args(c, &m);
	}
	if (r == 0)
		r = amdgpu_frame_build(c);
	if (r == 0)
		r = inject_counts(c, &m);
	if (r == 0)
		r = inject_sites(c);
	if (r == 0)
		r = inject_prologue(c);
	if (r == 0)
		inject_clauses(c);
	amdgpu_meta_done(&m);
	return r;
}

int amdgpu_inject_kernel(const struct amdgpu_co *co, const struct amdgpu_co_kernel *k, const struct amdgpu_func *f,
			 int n, struct probe *const *probes, int n_probes, struct amdgpu_inject *out, char **cause)
{
	memset(out, 0, sizeof *out);
	struct amdgpu_ictx c = { .co = co, .k = k, .f = f, .n = n, .out = out, .cause = cause };
	out->n = n;
	out->before = calloc((size_t)n + 1, sizeof *out->before);
	out->replace = calloc((size_t)n + 1, sizeof *out->replace);
	int r = out->before && out->replace ? 0 : cause_set(cause, "out of memory instrumenting");
	if (r == 0)
		r = amdgpu_isa_init(&c.isa, co->elf.family, k->kd.wave32, cause);
	amdgpu_co_proc(co, c.proc);
	if (r == 0)
		r = inject_run(&c, probes, n_probes);
	out->wave = c.isa.wave64 ? 64 : 32;
	for (int i = 0; i < c.n_probes; i++) {
		amdgpu_snip_done(&c.probes[i].snip);
		free(c.fr.preg[i]);
	}
	free(c.probes);
	out->ins.prologue = out->prologue;
	out->ins.before = (const char *const *)out->before;
	out->ins.replace = (const char *const *)out->replace;
	if (r < 0) {
		amdgpu_inject_done(out);
		return cause_wrap(cause, "kernel %s", k->meta->name);
	}
	return 0;
}

void amdgpu_inject_done(struct amdgpu_inject *out)
{
	for (int i = 0; i < out->n; i++) {
		if (out->before)
			free(out->before[i]);
		if (out->replace)
			free(out->replace[i]);
	}
	free(out->before);
	free(out->replace);
	free(out->prologue);
	free(out->meta);
	memset(out, 0, sizeof *out);
}
