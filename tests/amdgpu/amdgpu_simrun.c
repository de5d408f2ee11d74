/* Simulated launches of probed kernels (see amdgpu_simrun.h). */
#include "amdgpu_simrun.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/amdgpu/amdgpu_code.h"
#include "engine/amdgpu/amdgpu_isa.h"
#include "engine/amdgpu/amdgpu_map.h"
#include "engine/amdgpu/amdgpu_sim.h"

#define SR_KERNARG 0x7f0000001000ull
#define SR_MAP(i) (0x100000000ull * (uint64_t)((i) + 1))
#define SR_ADDR 0x5000000000ull
#define SR_CAP 64

struct sr_event {
	uint64_t addr, clock, gtime;
	uint32_t sizekind;
};

struct sr_point {             /* a warp_progress record */
	uint64_t clock;
	uint32_t smid, mark;
};

struct sr_unit {              /* what a work-item or wave meant to save */
	int n;                    /* dmat events (all of them, kept or not) */
	struct sr_event ev[SR_CAP];
	uint32_t bytes[3];        /* gmem_bytes: load, store, atomic */
	uint64_t start, gstart, end;
	uint32_t smid;
	int np;                   /* warp_progress points (kept or not) */
	struct sr_point pt[SR_CAP];
	uint32_t mfma, wmma;      /* tensorop_count */
};

struct sr {
	const struct amdgpu_instrumented *r;
	struct amdgpu_co co;
	const struct amdgpu_co_kernel *k;
	enum amdgpu_family fam;
	int lanes, packed, n_orig;
	int *orig;                /* index in g of original instruction i */
	uint32_t grid[3], block[3];
	uint8_t kernarg[1024];
	uint8_t *map[AMDGPU_MAX_MAPS];
	uint64_t map_len[AMDGPU_MAX_MAPS];
	int m_dmat, m_dmg, m_gmem, m_bs; /* map indices (m_dmg: dmat_global), -1 */
	int m_wp, m_tc;           /* warp_progress, tensorop_count */
	struct sr_unit *thr, *wav;    /* expected, per unit */
	uint64_t rng;
	struct simrun_tally *t;
	int printed;              /* failures printed for this kernel */
};

static uint32_t sr_rand(struct sr *s)
{
	s->rng = s->rng * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(s->rng >> 33);
}

__attribute__((format(printf, 2, 3)))
static void sr_fail(struct sr *s, const char *fmt, ...)
{
	s->t->failed++;
	if (s->printed++ < 3) {
		va_list ap;
		va_start(ap, fmt);
		printf("FAIL %s (%s): ", s->k->meta->name, s->r->proc);
		vprintf(fmt, ap);
		printf("\n");
		va_end(ap);
	}
}

static uint64_t sr_u64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static uint32_t sr_u32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

/* --- setup ------------------------------------------------------------ */

static int sr_setup(struct sr *s)
{
	const struct amdgpu_inject *in = &s->r->inj;
	s->fam = s->co.elf.family;
	s->lanes = s->k->kd.wave32 ? 32 : 64;
	s->packed = s->fam == AMDGPU_FAMILY_GFX90A || s->fam == AMDGPU_FAMILY_GFX94 || s->fam >= AMDGPU_FAMILY_GFX11;
	uint64_t blocks = (uint64_t)s->grid[0] * s->grid[1] * s->grid[2];
	uint32_t threads = s->block[0] * s->block[1] * s->block[2];
	uint32_t launch[8];
	amdgpu_map_launch(launch, s->grid, s->block, s->lanes);
	memset(s->kernarg, 0, sizeof s->kernarg);
	if (in->kernarg_size > sizeof s->kernarg)
		return -1;
	memcpy(s->kernarg + in->launch_offset, launch, sizeof launch);
	for (int i = 0; i < in->n_maps; i++) {
		uint64_t addr = SR_MAP(i);
		s->map_len[i] = amdgpu_map_bytes(&in->maps[i].map, blocks, threads, s->lanes);
		s->map[i] = malloc(s->map_len[i]);
		if (!s->map[i])
			return -1;
		memset(s->map[i], 0xab, s->map_len[i]);
		uint64_t units = amdgpu_map_units(&in->maps[i].map, blocks, threads, s->lanes);
		memset(s->map[i], 0, units * 4); /* the host zeroes the counts */
		memcpy(s->kernarg + in->maps[i].arg_offset, &addr, 8);
	}
	s->thr = calloc(blocks * threads + 1, sizeof *s->thr);
	s->wav = calloc(blocks * launch[5] + 1, sizeof *s->wav);
	return s->thr && s->wav ? 0 : -1;
}

/* Launch registers of one wave; every other register random. */
static void sr_wave_init(struct sr *s, struct amdgpu_wave *w, const uint32_t wg[3], int wave)
{
	uint32_t threads = s->block[0] * s->block[1] * s->block[2];
	amdgpu_sim_init(w, s->fam, s->lanes);
	for (int i = 0; i < AMDGPU_SIM_SGPRS; i++)
		w->s[i] = sr_rand(s);
	for (int i = 0; i < AMDGPU_SIM_VGPRS; i++)
		for (int l = 0; l < 64; l++)
			w->v[i][l] = sr_rand(s);
	int K = amdgpu_kd_kernarg_sgpr(&s->k->kd);
	w->s[K] = (uint32_t)SR_KERNARG;
	w->s[K + 1] = (uint32_t)(SR_KERNARG >> 32);
	for (int d = 0; d < 3; d++)
		if (s->fam != AMDGPU_FAMILY_GFX12 && amdgpu_kd_wg_id_sgpr(&s->k->kd, d) >= 0)
			w->s[amdgpu_kd_wg_id_sgpr(&s->k->kd, d)] = wg[d];
	w->ttmp[9] = wg[0];
	w->ttmp[7] = wg[1] | wg[2] << 16;
	w->exec = 0;
	for (int l = 0; l < s->lanes; l++) {
		uint32_t t = (uint32_t)wave * (uint32_t)s->lanes + (uint32_t)l;
		if (t >= threads)
			break;
		w->exec |= 1ull << l;
		uint32_t x = t % s->block[0], y = t / s->block[0] % s->block[1], z = t / (s->block[0] * s->block[1]);
		if (s->packed) {
			w->v[0][l] = x | y << 10 | z << 20;
		} else {
			w->v[0][l] = x;
			w->v[1][l] = y;
			w->v[2][l] = z;
		}
	}
	w->hw_id = sr_rand(s);
	w->hw_id1 = sr_rand(s);
	w->xcc_id = sr_rand(s) & 7;
	w->clock = 0xfff00 + sr_rand(s) % 4096; /* near gfx11's 20-bit wrap */
	w->realtime = sr_rand(s);
}

/* The packed SMID the wave should report (doc/amdgpu.md). */
static uint32_t sr_smid(const struct sr *s, const struct amdgpu_wave *w)
{
	if (s->fam <= AMDGPU_FAMILY_GFX94) {
		uint32_t v = (w->hw_id >> 8 & 0x1f) | (w->hw_id >> 13 & 3) << 8;
		return s->fam == AMDGPU_FAMILY_GFX94 ? v | (w->xcc_id & 0xf) << 16 : v;
	}
	uint32_t se = s->fam == AMDGPU_FAMILY_GFX10_3 ? w->hw_id1 >> 18 & 3 : w->hw_id1 >> 18 & 7;
	return (w->hw_id1 >> 10 & 0xf) | (w->hw_id1 >> 16 & 1) << 4 | se << 8;
}

/* --- one wave ----------------------------------------------------------- */

/* NTOP_SIM_TRACE set: every instruction of the first wave, with the
 * registers its first operand names. */
static void sr_trace(const struct amdgpu_wave *w, const char *text)
{
	fprintf(stderr, "%-60s exec=%llx scc=%d |", text, (unsigned long long)w->exec, w->scc);
	const char *sp = strchr(text, ' ');
	struct amdgpu_reg r;
	char op[32];
	if (sp && sscanf(sp + 1, "%31[^,]", op) == 1 && amdgpu_code_reg(op, &r) == 0)
		for (int i = 0; i < r.count && i < 4; i++)
			fprintf(stderr, " %c%d=0x%x", r.file, r.first + i,
				r.file == 's' ? w->s[r.first + i] : r.file == 'v' ? w->v[r.first + i][0] : 0);
	fprintf(stderr, "\n");
}

struct sr_snap {
	uint32_t s[AMDGPU_SIM_SGPRS];
	uint64_t exec, vcc;
	int scc;
};

/* The kernel's registers must come through inserted code unchanged. */
static void sr_compare(struct sr *s, const struct amdgpu_wave *w, const struct sr_snap *a, const uint32_t *v, int at)
{
	int s0 = s->r->inj.alloc.sgpr, v0 = s->r->inj.alloc.vgpr;
	for (int i = 0; i < s0; i++)
		if (w->s[i] != a->s[i])
			sr_fail(s, "s%d changed by the code before instruction %d", i, at);
	for (int i = 0; i < v0; i++)
		if (memcmp(w->v[i], v + (size_t)i * 64, 64 * 4))
			sr_fail(s, "v%d changed by the code before instruction %d", i, at);
	if (w->exec != a->exec || w->vcc != a->vcc || w->scc != a->scc)
		sr_fail(s, "EXEC, VCC or SCC changed by the code before instruction %d", at);
}

/* The EXEC a site runs with: all, every other, half, none of the lanes. */
static uint64_t sr_site_exec(uint64_t present, int site)
{
	static const uint64_t pat[] = { ~0ull, 0x5555555555555555ull, 0x00000000ffffffffull, 0 };
	return present & pat[site % 4];
}

/* What a traced access means per lane: its address, and the lanes whose
 * access reaches memory (all for global and flat; buffer accesses below). */
struct sr_access {
	uint64_t addr[64];
	uint64_t lanes;
};

/* A buffer access's V# and offsets, one of seven cases by site and wave:
 * a plain raw buffer with every lane in range, odd lanes pushed out of
 * range as Triton masks them (offset 0x80000000), num_records ending
 * exactly at the middle lane's access; then V#s whose addresses the probes
 * must not claim (a stride, swizzling, a thread id added, gfx10+'s other
 * range checks): no lane is recorded. */
static void sr_buffer(struct sr *s, struct amdgpu_wave *w, const struct amdgpu_mem *m, uint64_t unit0, int site,
		      struct sr_access *acc)
{
	uint64_t base = SR_ADDR + ((uint64_t)site << 24) - 0x100000;
	int gfx9 = s->fam <= AMDGPU_FAMILY_GFX94, kase = (site + (int)s->t->waves) % 7;
	uint32_t *r = &w->s[m->srsrc], off[64];
	r[0] = (uint32_t)base;
	r[1] = (uint32_t)(base >> 32) & 0xffff;
	r[2] = 0x7ffffffe;
	r[3] = gfx9 ? 0x27000 : 0x31014000; /* LLVM's and Triton's raw buffer words */
	acc->lanes = 0;
	for (int l = 0; l < w->lanes; l++) {
		off[l] = m->vaddr < 0 ? (uint32_t)m->offset : (uint32_t)((unit0 + (uint64_t)l) * 64 + 4);
		if (m->vaddr >= 0)
			w->v[m->vaddr][l] = off[l] - (uint32_t)m->offset;
		if (kase == 1 && (l & 1) && m->vaddr >= 0) {
			w->v[m->vaddr][l] = 0x80000000u;
			off[l] = 0x80000000u + (uint32_t)m->offset;
		}
		acc->addr[l] = base + off[l];
	}
	if (kase == 2)
		r[2] = off[w->lanes / 2] + m->bytes;
	r[1] |= kase == 3 ? 16u << 16 : kase == 4 ? 1u << 31 : 0;
	r[3] |= kase == 5 ? 1u << 23 : 0;
	if (kase == 6 && !gfx9)
		r[3] = (r[3] & ~0x30000000u) | 0x10000000u; /* OOB_SELECT 1: structured */
	if (kase >= 3 && (kase < 6 || !gfx9))
		return;
	for (int l = 0; l < w->lanes; l++)
		if ((uint64_t)off[l] + m->bytes <= r[2])
			acc->lanes |= 1ull << l;
}

/* Address registers of the traced instruction set for lanes' addresses. */
static void sr_addresses(struct sr *s, struct amdgpu_wave *w, const struct amdgpu_mem *m, uint64_t unit0, int site,
			 struct sr_access *acc)
{
	if (m->srsrc >= 0) {
		sr_buffer(s, w, m, unit0, site, acc);
		return;
	}
	/* a scalar base below the lanes' addresses: the VGPR part is an unsigned offset */
	uint64_t base = SR_ADDR + ((uint64_t)site << 24) - 0x100000;
	if (m->saddr >= 0) {
		w->s[m->saddr] = (uint32_t)base;
		w->s[m->saddr + 1] = (uint32_t)(base >> 32);
	}
	acc->lanes = ~0ull;
	for (int l = 0; l < w->lanes; l++) {
		uint64_t a = SR_ADDR + ((uint64_t)site << 24) + (unit0 + (uint64_t)l) * 64 + 4;
		acc->addr[l] = a;
		if (m->saddr >= 0) {
			w->v[m->vaddr][l] = (uint32_t)(a - base - (uint64_t)(int64_t)m->offset);
		} else {
			uint64_t v = a - (uint64_t)(int64_t)m->offset;
			w->v[m->vaddr][l] = (uint32_t)v;
			w->v[m->vaddr + 1][l] = (uint32_t)(v >> 32);
		}
	}
}

static int sr_is_exit(const struct amdgpu_func *g, int at)
{
	const char *t = g->v[at].text;
	return amdgpu_isa_is_endpgm(t) || amdgpu_isa_is_dealloc(t) ||
	       (!strcmp(t, "s_nop 0") && at + 1 < g->n && amdgpu_isa_is_dealloc(g->v[at + 1].text));
}

/* What a site meant for each active lane (dmat, dmat_global and gmem_bytes). */
static void sr_expect_site(struct sr *s, const struct amdgpu_wave *w, const struct amdgpu_mem *m,
			   const struct sr_access *acc, uint64_t unit0, uint64_t clock, uint64_t gtime)
{
	int hooked = m->kind != AMDGPU_MEM_NONE && (m->srsrc < 0 || m->has_addr);
	for (int l = 0; hooked && l < w->lanes; l++) {
		if (!((w->exec & acc->lanes) >> l & 1))
			continue;
		struct sr_unit *u = &s->thr[unit0 + (uint64_t)l];
		if (u->n < SR_CAP)
			u->ev[u->n] = (struct sr_event){ acc->addr[l], clock, gtime, m->bytes | (uint32_t)m->kind << 24 };
		u->n++;
		u->bytes[m->kind - 1] += m->bytes;
	}
}

/* A progress point the wave passed (warp_progress). */
static void sr_point(struct sr *s, const struct amdgpu_wave *w, uint64_t wunit, uint64_t clock, uint32_t mark)
{
	struct sr_unit *u = &s->wav[wunit];
	if (s->m_wp < 0)
		return;
	if (u->np < SR_CAP)
		u->pt[u->np] = (struct sr_point){ clock, sr_smid(s, w), mark };
	u->np++;
}

/* The instructions warp_progress and tensorop_count trace. */
static int sr_is_barrier(const char *t)
{
	return amdgpu_isa_match(t, "s_barrier$") || amdgpu_isa_match(t, "s_barrier_signal");
}

static int sr_is_mfma(const char *t)
{
	return amdgpu_isa_match(t, "v_mfma") || amdgpu_isa_match(t, "v_smfmac");
}

static int sr_is_wmma(const char *t)
{
	return amdgpu_isa_match(t, "v_wmma") || amdgpu_isa_match(t, "v_swmmac");
}

/* What a site meant for its wave (warp_progress, tensorop_count): by the
 * traced instruction's mnemonic, whatever the EXEC. */
static void sr_expect_wave(struct sr *s, const struct amdgpu_wave *w, const char *text, uint64_t wunit,
			   uint64_t clock)
{
	if (sr_is_barrier(text))
		sr_point(s, w, wunit, clock, 0x02000000);
	s->wav[wunit].mfma += (uint32_t)sr_is_mfma(text);
	s->wav[wunit].wmma += (uint32_t)sr_is_wmma(text);
}

/* An instruction the wave-map probes trace must have code before it. */
static void sr_unprobed(struct sr *s, int i)
{
	const char *t = s->r->regions.g->v[s->orig[i]].text;
	if ((s->m_wp >= 0 && sr_is_barrier(t)) || (s->m_tc >= 0 && (sr_is_mfma(t) || sr_is_wmma(t))))
		sr_fail(s, "no probe code before instruction %d (%s)", i, t);
}

/* Runs region `b` (inserted before original instruction i); returns the
 * first clock read in it (0 when none), *gtime the first real-time counter
 * read (0 when none). */
static uint64_t sr_region(struct sr *s, struct amdgpu_wave *w, int b, int *ok, uint64_t *gtime)
{
	const struct amdgpu_regions *rg = &s->r->regions;
	int n0 = w->n_clock_reads, g0 = w->n_realtime_reads;
	char *cause = NULL;
	for (int x = 0; x < rg->gn && *ok; x++)
		if (rg->owner[x] == b && amdgpu_sim_step(w, rg->g->v[x].text, &cause) < 0) {
			sr_fail(s, "%s", cause);
			*ok = 0;
		}
	free(cause);
	*gtime = w->n_realtime_reads > g0 ? w->realtime_reads[g0] : 0;
	return w->n_clock_reads > n0 ? w->clock_reads[n0] : 0;
}

/* One site; returns 1 when it was the program's end. */
static int sr_site(struct sr *s, struct amdgpu_wave *w, int i, uint64_t tunit0, uint64_t wunit, uint32_t *vsnap,
		   int *ok)
{
	const struct amdgpu_func *g = s->r->regions.g;
	int j = i;
	while (j < s->n_orig - 1 && !strncmp(g->v[s->orig[j]].text, "s_delay_alu", 11))
		j++;
	int exit = sr_is_exit(g, s->orig[j]);
	uint64_t present = w->exec;
	struct amdgpu_mem m;
	struct sr_access acc = { .lanes = ~0ull };
	memset(&m, 0, sizeof m);
	if (!exit && amdgpu_isa_mem(g->v[s->orig[j]].text, &m) == 0 && m.has_addr)
		sr_addresses(s, w, &m, tunit0, i, &acc);
	w->exec = exit ? present & 0x3333333333333333ull : sr_site_exec(present, i);
	w->scc = (int)(sr_rand(s) & 1);
	struct sr_snap a;
	memcpy(a.s, w->s, sizeof a.s);
	a.exec = w->exec;
	a.vcc = w->vcc;
	a.scc = w->scc;
	for (int r = 0; r < s->r->inj.alloc.vgpr; r++)
		memcpy(vsnap + (size_t)r * 64, w->v[r], 64 * 4);
	uint64_t gtime, clock = sr_region(s, w, 1 + 2 * i, ok, &gtime);
	if (!exit) {
		sr_expect_site(s, w, &m, &acc, tunit0, clock, gtime);
		sr_expect_wave(s, w, g->v[s->orig[j]].text, wunit, clock);
	} else {
		sr_point(s, w, wunit, clock, 0x03000000);
	}
	if (exit && s->m_bs >= 0) {
		s->wav[wunit].end = w->clock_reads[w->n_clock_reads - 1];
		s->wav[wunit].smid = sr_smid(s, w);
	}
	sr_compare(s, w, &a, vsnap, i);
	w->exec = present;
	s->t->sites++;
	return exit;
}

static int sr_wave(struct sr *s, const uint32_t wg[3], int wave)
{
	struct amdgpu_wave *w = malloc(sizeof *w);
	uint32_t *vsnap = malloc(sizeof(uint32_t) * AMDGPU_SIM_VGPRS * 64);
	int ok = w && vsnap;
	uint32_t threads = s->block[0] * s->block[1] * s->block[2], wpb = (threads + (uint32_t)s->lanes - 1) / (uint32_t)s->lanes;
	uint64_t block = wg[0] + (uint64_t)s->grid[0] * (wg[1] + (uint64_t)s->grid[1] * wg[2]);
	uint64_t tunit0 = block * threads + (uint64_t)wave * (uint64_t)s->lanes, wunit = block * wpb + (uint64_t)wave;
	if (ok) {
		sr_wave_init(s, w, wg, wave);
		if (getenv("NTOP_SIM_TRACE") && s->t->waves < atoi(getenv("NTOP_SIM_TRACE")))
			w->trace = sr_trace;
		for (int i = 0; i < s->r->inj.n_maps; i++)
			amdgpu_sim_map(w, SR_MAP(i), s->map[i], s->map_len[i]);
		amdgpu_sim_map(w, SR_KERNARG, s->kernarg, sizeof s->kernarg);
		uint64_t gtime, clock = sr_region(s, w, 0, &ok, &gtime);
		sr_point(s, w, wunit, clock, 0x01000000);
		if (s->m_bs >= 0 && w->n_clock_reads && w->n_realtime_reads) {
			s->wav[wunit].start = w->clock_reads[0];
			s->wav[wunit].gstart = w->realtime_reads[0];
		}
	}
	for (int i = 0; ok && i < s->n_orig; i++) {
		int has = 0;
		for (int x = 0; x < s->r->regions.gn && !has; x++)
			has = s->r->regions.owner[x] == 1 + 2 * i;
		if (!has)
			sr_unprobed(s, i);
		else if (sr_site(s, w, i, tunit0, wunit, vsnap, &ok))
			break; /* a wave ends at its first program end */
	}
	s->t->waves++;
	free(w);
	free(vsnap);
	return ok ? 0 : -1;
}

/* --- the maps afterwards ------------------------------------------------ */

static void sr_check_thread_maps(struct sr *s, uint64_t units)
{
	const struct amdgpu_inject *in = &s->r->inj;
	for (int i = 0; i < in->n_maps; i++) {
		const struct probe_map *m = &in->maps[i].map;
		if (i != s->m_dmat && i != s->m_dmg && i != s->m_gmem)
			continue;
		const uint8_t *rec0 = s->map[i] + amdgpu_map_records_offset(units);
		for (uint64_t u = 0; u < units; u++) {
			const struct sr_unit *e = &s->thr[u];
			uint32_t count = sr_u32(s->map[i] + u * 4);
			uint32_t want = i == s->m_gmem ? 20u : (i == s->m_dmat ? 16u : 24u) * (uint32_t)e->n;
			s->t->units++;
			if (count != want)
				sr_fail(s, "map %d unit %llu counts %u bytes, %u expected", i, (unsigned long long)u, count, want);
			for (int k = 0; i == s->m_dmat && k < e->n && k < (int)m->cap; k++) {
				const uint8_t *r = rec0 + amdgpu_map_record_index(m, units, u, (uint32_t)k) * m->rec_size;
				const struct sr_event *ev = &e->ev[k];
				s->t->records++;
				if (sr_u64(r) != ev->addr || sr_u32(r + 8) != (uint32_t)ev->clock || sr_u32(r + 12) != ev->sizekind)
					sr_fail(s, "dmat record %d of work-item %llu: 0x%llx %u 0x%x, expected 0x%llx %u 0x%x", k,
						(unsigned long long)u, (unsigned long long)sr_u64(r), sr_u32(r + 8), sr_u32(r + 12),
						(unsigned long long)ev->addr, (uint32_t)ev->clock, ev->sizekind);
			}
			/* dmat_global: addr, gtime (the real-time counter), clock, sizekind */
			for (int k = 0; i == s->m_dmg && k < e->n && k < (int)m->cap; k++) {
				const uint8_t *r = rec0 + amdgpu_map_record_index(m, units, u, (uint32_t)k) * m->rec_size;
				const struct sr_event *ev = &e->ev[k];
				s->t->records++;
				if (sr_u64(r) != ev->addr || sr_u64(r + 8) != ev->gtime || sr_u32(r + 16) != (uint32_t)ev->clock ||
				    sr_u32(r + 20) != ev->sizekind || !ev->gtime)
					sr_fail(s, "dmat_global record %d of work-item %llu: 0x%llx %llu %u 0x%x, expected 0x%llx %llu %u "
						"0x%x", k, (unsigned long long)u, (unsigned long long)sr_u64(r),
						(unsigned long long)sr_u64(r + 8), sr_u32(r + 16), sr_u32(r + 20),
						(unsigned long long)ev->addr, (unsigned long long)ev->gtime, (uint32_t)ev->clock,
						ev->sizekind);
			}
			if (i == s->m_gmem) {
				const uint8_t *r = rec0 + u * m->rec_size;
				s->t->records++;
				if (sr_u32(r) != e->bytes[0] || sr_u32(r + 4) != e->bytes[1] || sr_u32(r + 8) != e->bytes[2] ||
				    sr_u32(r + 12) || sr_u32(r + 16))
					sr_fail(s, "gmem_bytes record of work-item %llu: %u %u %u, expected %u %u %u",
						(unsigned long long)u, sr_u32(r), sr_u32(r + 4), sr_u32(r + 8), e->bytes[0], e->bytes[1],
						e->bytes[2]);
			}
		}
	}
}

static void sr_check_wave_map(struct sr *s, uint64_t units)
{
	if (s->m_bs < 0)
		return;
	const uint8_t *buf = s->map[s->m_bs], *rec0 = buf + amdgpu_map_records_offset(units);
	if (getenv("NTOP_SIM_DUMP"))
		for (int b = 0; b < 96; b += 4)
			fprintf(stderr, "%3d: %08x\n", b, sr_u32(buf + b));
	for (uint64_t u = 0; u < units; u++) {
		const struct sr_unit *e = &s->wav[u];
		const uint8_t *r = rec0 + u * 24;
		s->t->units++;
		s->t->records++;
		if (sr_u32(buf + u * 4) != 24)
			sr_fail(s, "block_sched wave %llu counts %u bytes", (unsigned long long)u, sr_u32(buf + u * 4));
		if (sr_u64(r) != e->start || sr_u64(r + 8) != e->gstart || sr_u32(r + 16) != (uint32_t)(e->end - e->start) ||
		    sr_u32(r + 20) != e->smid)
			sr_fail(s, "block_sched record of wave %llu: start %llu gstart %llu elapsed %u smid 0x%x, expected %llu %llu "
				"%u 0x%x", (unsigned long long)u, (unsigned long long)sr_u64(r), (unsigned long long)sr_u64(r + 8),
				sr_u32(r + 16), sr_u32(r + 20), (unsigned long long)e->start, (unsigned long long)e->gstart,
				(uint32_t)(e->end - e->start), e->smid);
	}
}

/* warp_progress: the wave's points in order, the first cap of them kept. */
static void sr_check_progress(struct sr *s, uint64_t units)
{
	if (s->m_wp < 0)
		return;
	const struct probe_map *m = &s->r->inj.maps[s->m_wp].map;
	const uint8_t *buf = s->map[s->m_wp], *rec0 = buf + amdgpu_map_records_offset(units);
	for (uint64_t u = 0; u < units; u++) {
		const struct sr_unit *e = &s->wav[u];
		s->t->units++;
		if (sr_u32(buf + u * 4) != 16u * (uint32_t)e->np)
			sr_fail(s, "warp_progress wave %llu counts %u bytes, %u points expected", (unsigned long long)u,
				sr_u32(buf + u * 4), e->np);
		for (int k = 0; k < e->np && k < (int)m->cap; k++) {
			const uint8_t *r = rec0 + amdgpu_map_record_index(m, units, u, (uint32_t)k) * m->rec_size;
			const struct sr_point *p = &e->pt[k];
			s->t->records++;
			if (sr_u64(r) != p->clock || sr_u32(r + 8) != p->smid || sr_u32(r + 12) != p->mark)
				sr_fail(s, "warp_progress record %d of wave %llu: %llu 0x%x 0x%x, expected %llu 0x%x 0x%x", k,
					(unsigned long long)u, (unsigned long long)sr_u64(r), sr_u32(r + 8), sr_u32(r + 12),
					(unsigned long long)p->clock, p->smid, p->mark);
		}
	}
}

/* tensorop_count: MFMA and WMMA issues per wave, wgmma and tcgen05 0. */
static void sr_check_tensorop(struct sr *s, uint64_t units)
{
	if (s->m_tc < 0)
		return;
	const uint8_t *buf = s->map[s->m_tc], *rec0 = buf + amdgpu_map_records_offset(units);
	for (uint64_t u = 0; u < units; u++) {
		const struct sr_unit *e = &s->wav[u];
		const uint8_t *r = rec0 + u * 16;
		s->t->units++;
		s->t->records++;
		s->t->mfma += sr_u32(r);
		s->t->wmma += sr_u32(r + 4);
		if (sr_u32(buf + u * 4) != 16 || sr_u32(r) != e->mfma || sr_u32(r + 4) != e->wmma || sr_u32(r + 8) ||
		    sr_u32(r + 12))
			sr_fail(s, "tensorop_count record of wave %llu (%u bytes): %u %u %u %u, expected %u %u 0 0",
				(unsigned long long)u, sr_u32(buf + u * 4), sr_u32(r), sr_u32(r + 4), sr_u32(r + 8),
				sr_u32(r + 12), e->mfma, e->wmma);
	}
}

static int sr_launch(struct sr *s)
{
	uint32_t wg[3];
	uint32_t threads = s->block[0] * s->block[1] * s->block[2];
	uint64_t blocks = (uint64_t)s->grid[0] * s->grid[1] * s->grid[2];
	if (sr_setup(s) < 0)
		return -1;
	int waves = (int)((threads + (uint32_t)s->lanes - 1) / (uint32_t)s->lanes);
	for (wg[2] = 0; wg[2] < s->grid[2]; wg[2]++)
		for (wg[1] = 0; wg[1] < s->grid[1]; wg[1]++)
			for (wg[0] = 0; wg[0] < s->grid[0]; wg[0]++)
				for (int wv = 0; wv < waves; wv++)
					if (sr_wave(s, wg, wv) < 0)
						return -1;
	sr_check_thread_maps(s, blocks * threads);
	sr_check_wave_map(s, blocks * (uint64_t)waves);
	sr_check_progress(s, blocks * (uint64_t)waves);
	sr_check_tensorop(s, blocks * (uint64_t)waves);
	return 0;
}

static void sr_done(struct sr *s)
{
	for (int i = 0; i < AMDGPU_MAX_MAPS; i++)
		free(s->map[i]);
	free(s->thr);
	free(s->wav);
	memset(s->map, 0, sizeof s->map);
	s->thr = s->wav = NULL;
}

int simrun_kernel(const struct amdgpu_instrumented *r, struct simrun_tally *t)
{
	static const uint32_t configs[][6] = { { 2, 2, 1, 100, 1, 1 }, { 2, 1, 2, 8, 4, 2 }, { 1, 1, 1, 33, 1, 1 } };
	struct sr s = { .r = r, .t = t, .rng = 12345, .m_dmat = -1, .m_dmg = -1, .m_gmem = -1, .m_bs = -1,
			.m_wp = -1, .m_tc = -1 };
	if (amdgpu_co_open(r->obj.elf, r->obj.len, &s.co, NULL) < 0)
		return -1;
	s.k = amdgpu_co_kernel(&s.co, r->regions.g->name);
	for (int i = 0; i < r->inj.n_maps; i++) {
		const char *p = r->inj.maps[i].probe;
		s.m_dmat = strcmp(p, "dmat") ? s.m_dmat : i;
		s.m_dmg = strcmp(p, "dmat_global") ? s.m_dmg : i;
		s.m_gmem = strcmp(p, "gmem_bytes") ? s.m_gmem : i;
		s.m_bs = strcmp(p, "block_sched") ? s.m_bs : i;
		s.m_wp = strcmp(p, "warp_progress") ? s.m_wp : i;
		s.m_tc = strcmp(p, "tensorop_count") ? s.m_tc : i;
	}
	s.orig = calloc((size_t)r->regions.gn + 1, sizeof *s.orig);
	/* original instruction i: itself, or the first of its replacement */
	for (int x = 0; s.orig && x < r->regions.gn; x++) {
		int o = r->regions.owner[x];
		if (o == AMDGPU_CHECK_ORIGINAL || (o >= 2 && o % 2 == 0 && (x == 0 || r->regions.owner[x - 1] != o)))
			s.orig[s.n_orig++] = x;
	}
	int rc = s.k && s.orig ? 0 : -1;
	for (size_t c = 0; rc == 0 && c < sizeof configs / sizeof configs[0]; c++) {
		memcpy(s.grid, configs[c], sizeof s.grid);
		memcpy(s.block, configs[c] + 3, sizeof s.block);
		rc = sr_launch(&s);
		sr_done(&s);
	}
	free(s.orig);
	amdgpu_co_done(&s.co);
	return rc;
}
