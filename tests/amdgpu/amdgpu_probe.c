/* Test tool: writes probed AMDGPU code objects and checks them.
 *   amdgpu_probe write OUTDIR FILE...   for every kernel of every object:
 *       a map argument appended (metadata and descriptor kernarg size),
 *       2 SGPRs allocated above the kernel's registers and loaded with the
 *       map pointer ahead of its first instruction, an s_nop before every
 *       vector memory instruction and every program end; the object is
 *       written (amdgpu_write_object), checked (amdgpu_check_probed: its
 *       disassembly is the original plus exactly the inserted code) and
 *       saved as OUTDIR/N.co, listed as "N PROC KERNEL" in OUTDIR/list
 *       for the regress script's checks with LLVM's tools. Kernels the
 *       engine refuses are printed with their reason ("refused KERNEL:
 *       cause") and counted. With --every N first, only every Nth kernel
 *       (a sample of big libraries). Exit 1 when any kernel fails.
 *   amdgpu_probe run [--every N] OUTDIR PROBES FILE...   every kernel
 *       probed with the GCN probes PROBES (comma-separated .toml files)
 *       through amdgpu_instrument (inject, write, check), saved and listed
 *       as for write; prints "run: K kernels: W probed and checked (...),
 *       R refused, F failed" and one "refused KERNEL: cause" line per
 *       refusal. A refusal is one of the engine's named reasons (no free
 *       registers, a family it does not probe, a branch out of the
 *       kernel...); anything else (our code not assembling, the check
 *       failing) is a failure.
 *   amdgpu_probe sim [--every N] PROBES FILE...   every kernel probed as for run,
 *       then its inserted code run per simulated wave over three small
 *       launches (amdgpu_simrun.h): prints "sim: K kernels: W waves, S
 *       sites, U units, R records checked, F differences", then the MFMA
 *       and WMMA issues tensorop_count's records hold when there are some. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "engine/amdgpu/amdgpu_check.h"
#include "engine/amdgpu/amdgpu_co.h"
#include "engine/amdgpu/amdgpu_instrument.h"
#include "engine/amdgpu/amdgpu_isa.h"
#include "engine/amdgpu/amdgpu_regs.h"
#include "engine/amdgpu/amdgpu_write.h"
#include "engine/probe/probe.h"
#include "engine/probe/verify.h"
#include "amdgpu_files.h"
#include "amdgpu_simrun.h"

struct wr_tally {
	int kernels, written, refused, failed;
	int every, seen;
	struct probe **probes;   /* run: the probes */
	int n_probes;
	struct amdgpu_inject_stats sites;
	int sim;                 /* sim: run the probed code too */
	struct simrun_tally simt;
	struct amdgpu_check_stats sum;
	FILE *list;
	const char *dir;
};

static void wr_fail(struct wr_tally *t, const char *kernel, const char *why)
{
	if (t->failed++ < 20)
		printf("FAIL %s: %s\n", kernel, why);
}

/* The new metadata: the map argument, and the register counts the
 * descriptor will allow. */
static int wr_meta(const struct amdgpu_co *co, const struct amdgpu_co_kernel *k, const struct amdgpu_alloc *a,
		   uint32_t *arg, uint32_t *kernarg, uint8_t **out, size_t *len, char **cause)
{
	struct amdgpu_meta m;
	if (amdgpu_meta_read(co->elf.meta, co->elf.meta_len, &m, cause) < 0)
		return -1;
	const char *name = k->meta->name;
	int r = amdgpu_meta_append_buffer(&m, name, "ntop_map0", arg, cause);
	if (r == 0)
		r = amdgpu_meta_set_count(&m, name, ".sgpr_count", a->kd_sgprs, cause);
	if (r == 0)
		r = amdgpu_meta_set_count(&m, name, ".vgpr_count", a->kd_vgprs, cause);
	if (r == 0) {
		*kernarg = amdgpu_meta_kernel(&m, name)->kernarg_size;
		r = amdgpu_meta_write(&m, out, len, cause);
	}
	amdgpu_meta_done(&m);
	return r;
}

/* The inserted code: the map pointer loaded at entry, s_nop markers. */
static char *wr_insert(const struct amdgpu_isa *isa, const struct amdgpu_func *f, int n, const struct amdgpu_alloc *a,
		       uint32_t arg, const char **before)
{
	struct strbuf sb;
	strbuf_init(&sb);
	strbuf_printf(&sb, "\t%s s[%d:%d], s[%d:%d], 0x%x\n\t%s", isa->sload2, a->sgpr, a->sgpr + 1, a->kernarg_sgpr,
		      a->kernarg_sgpr + 1, arg, isa->wait_smem);
	for (int i = 0; i < n; i++) {
		struct amdgpu_mem m;
		if (amdgpu_isa_mem(f->v[i].text, &m) == 0 || amdgpu_isa_is_endpgm(f->v[i].text))
			before[i] = "\ts_nop 0";
	}
	return strbuf_finish(&sb, NULL);
}

static int wr_save(struct wr_tally *t, const struct amdgpu_written *w, const char *proc, const char *kernel)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%d.co", t->dir, t->written);
	if (amdgpu_files_write(path, w->elf, w->len) < 0)
		return -1;
	fprintf(t->list, "%d %s %s\n", t->written, proc, kernel);
	return 0;
}

static void wr_sum(struct amdgpu_check_stats *s, const struct amdgpu_check_stats *k)
{
	s->original += k->original;
	s->inserted += k->inserted;
	s->branches += k->branches;
	s->units += k->units;
}

/* Writes and checks one probed kernel: 0, 1 refused (cause says why), -1. */
static int wr_kernel(struct wr_tally *t, const struct amdgpu_co *co, const struct amdgpu_co_kernel *k,
		     const struct amdgpu_func *f, const char *proc, char **cause)
{
	struct amdgpu_isa isa;
	struct amdgpu_regs used;
	struct amdgpu_alloc a;
	int n = amdgpu_asm_count(f, k->sym->code_size);
	if (amdgpu_isa_init(&isa, co->elf.family, k->kd.wave32, cause) < 0 || amdgpu_asm_movable(f, n, cause) < 0)
		return 1;
	amdgpu_regs_scan(f, n, &used);
	if (amdgpu_regs_alloc(co, k, &used, 2, 0, &a, cause) < 0)
		return 1;
	uint8_t *meta = NULL;
	size_t meta_len = 0;
	uint32_t arg = 0, kernarg = 0;
	const char **before = calloc((size_t)n + 1, sizeof *before);
	char *prologue = NULL;
	struct amdgpu_written w = { 0 };
	struct amdgpu_check_stats st;
	int r = before ? wr_meta(co, k, &a, &arg, &kernarg, &meta, &meta_len, cause) : -1;
	if (r == 0 && !(prologue = wr_insert(&isa, f, n, &a, arg, before)))
		r = -1;
	if (r == 0) {
		struct amdgpu_kd kd = k->kd;
		amdgpu_regs_apply(co, &a, &kd);
		kd.kernarg_size = kernarg;
		struct amdgpu_asm_ins ins = { .prologue = prologue, .before = before };
		struct amdgpu_write wp = { .co = co, .k = k, .f = f, .n = n, .ins = &ins, .kd = &kd, .meta = meta,
					   .meta_len = meta_len };
		r = amdgpu_write_object(&wp, &w, cause);
		if (r == 0)
			r = amdgpu_check_probed(f, n, &ins, w.elf, w.len, proc, k->sym->name, w.code_len, &st, cause);
	}
	if (r == 0 && (r = wr_save(t, &w, proc, k->sym->name)) == 0)
		wr_sum(&t->sum, &st);
	amdgpu_written_done(&w);
	free(meta);
	free(prologue);
	free(before);
	return r;
}

/* Named refusals of the engine; any other failure is a defect. */
static int wr_refusal(const char *cause)
{
	static const char *const named[] = { "no free SGPRs", "no free VGPRs", "no kernarg pointer", "is not probed",
					     "branch out of the function", "relocation patches", "branch lands inside",
					     "cannot decode it", NULL };
	for (int i = 0; cause && named[i]; i++)
		if (strstr(cause, named[i]))
			return 1;
	return 0;
}

/* Probes one kernel through amdgpu_instrument: 0, 1 refused, -1. */
static int run_kernel(struct wr_tally *t, const struct amdgpu_object *obj, const struct amdgpu_co_kernel *k,
		      char **cause)
{
	struct amdgpu_instrumented out;
	if (amdgpu_instrument(obj->data, obj->size, k->sym->name, t->probes, t->n_probes, &out, cause) < 0)
		return wr_refusal(*cause) ? 1 : -1;
	if (t->sim) {
		long before = t->simt.failed;
		int s = simrun_kernel(&out, &t->simt);
		amdgpu_instrumented_done(&out);
		if (s < 0 || t->simt.failed > before)
			*cause = strdup(s < 0 ? "the simulation could not run" : "records differ (above)");
		return s < 0 || t->simt.failed > before ? -1 : 0;
	}
	int r = wr_save(t, &out.obj, out.proc, k->sym->name);
	if (r == 0) {
		wr_sum(&t->sum, &out.check);
		t->sites.sites += out.inj.stats.sites;
		t->sites.sites_no_addr += out.inj.stats.sites_no_addr;
		t->sites.exits += out.inj.stats.exits;
		t->sites.clauses_dropped += out.inj.stats.clauses_dropped;
	}
	amdgpu_instrumented_done(&out);
	return r;
}

static void wr_object(struct wr_tally *t, const struct amdgpu_object *obj)
{
	struct amdgpu_co co;
	struct amdgpu_disasm d;
	char *cause = NULL, proc[32];
	if (amdgpu_co_open(obj->data, obj->size, &co, &cause) < 0) {
		wr_fail(t, obj->id, cause);
		free(cause);
		return;
	}
	amdgpu_co_proc(&co, proc);
	if (!t->probes && amdgpu_disasm_object(obj->data, obj->size, proc, &d, &cause) < 0) {
		wr_fail(t, obj->id, cause);
		free(cause);
		amdgpu_co_done(&co);
		return;
	}
	const char *only = getenv("AMDGPU_PROBE_KERNEL"); /* debugging: one kernel */
	for (int i = 0; i < co.n; i++) {
		if (only && !strstr(co.k[i].sym->name, only))
			continue;
		if (t->seen++ % t->every)
			continue;
		t->kernels++;
		int r;
		if (t->probes) {
			r = run_kernel(t, obj, &co.k[i], &cause);
		} else {
			const struct amdgpu_func *f = amdgpu_disasm_func(&d, co.k[i].sym->name);
			r = f ? wr_kernel(t, &co, &co.k[i], f, proc, &cause) : -1;
		}
		if (r == 0)
			t->written++;
		else if (r > 0 && ++t->refused)
			printf("refused %s: %s\n", co.k[i].meta->name, cause);
		else if (r < 0)
			wr_fail(t, co.k[i].meta->name, cause ? cause : "not disassembled");
		free(cause);
		cause = NULL;
	}
	if (!t->probes)
		amdgpu_disasm_done(&d);
	amdgpu_co_done(&co);
}

static int wr_files(struct wr_tally *t, int argc, char **argv)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/list", t->dir);
	t->list = fopen(path, "w");
	if (!t->list) {
		printf("FAIL cannot write %s\n", path);
		return -1;
	}
	for (int a = 0; a < argc; a++) {
		struct amdgpu_files fo;
		if (amdgpu_files_open(argv[a], &fo) < 0)
			return -1;
		for (int i = 0; i < fo.o.n; i++)
			wr_object(t, &fo.o.v[i]);
		amdgpu_files_close(&fo);
	}
	fclose(t->list);
	return 0;
}

static int cmd_write(const char *dir, int every, int argc, char **argv)
{
	struct wr_tally t = { .dir = dir, .every = every > 0 ? every : 1 };
	if (wr_files(&t, argc, argv) < 0)
		return 1;
	printf("write: %d kernels: %d written and checked (%d original instructions, %d inserted, %d branches, "
	       "%d s_getpc_b64 units), %d refused, %d failed\n", t.kernels, t.written, t.sum.original, t.sum.inserted,
	       t.sum.branches, t.sum.units, t.refused, t.failed);
	return t.failed || !t.written ? 1 : 0;
}

/* "a.toml,b.toml": loaded and verified. */
static int run_load(struct wr_tally *t, char *list)
{
	for (char *p = strtok(list, ","); p; p = strtok(NULL, ",")) {
		char *cause = NULL;
		struct probe *pr = NULL;
		struct probe **v = realloc(t->probes, (size_t)(t->n_probes + 1) * sizeof *v);
		if (!v || probe_load_file(p, &pr, &cause) < 0 || verify_probe(pr, &cause) < 0) {
			printf("FAIL probe %s: %s\n", p, cause ? cause : "out of memory");
			free(cause);
			if (v)
				t->probes = v;
			probe_free(pr);
			return -1;
		}
		t->probes = v;
		t->probes[t->n_probes++] = pr;
	}
	return 0;
}

static int cmd_sim(int every, char *probes, int argc, char **argv)
{
	struct wr_tally t = { .dir = "/dev/null", .every = every > 0 ? every : 1, .sim = 1 };
	int rc = run_load(&t, probes) < 0;
	for (int a = 0; !rc && a < argc; a++) {
		struct amdgpu_files fo;
		if (amdgpu_files_open(argv[a], &fo) < 0)
			return 1;
		for (int i = 0; i < fo.o.n; i++)
			wr_object(&t, &fo.o.v[i]);
		amdgpu_files_close(&fo);
	}
	printf("sim: %d kernels: %d simulated, %d refused, %d failed; %ld waves, %ld sites, %ld units, %ld records "
	       "checked, %ld differences\n", t.kernels, t.written, t.refused, t.failed, t.simt.waves, t.simt.sites,
	       t.simt.units, t.simt.records, t.simt.failed);
	if (t.simt.mfma || t.simt.wmma)
		printf("tensorop_count: %ld MFMA and %ld WMMA issues in the records checked\n", t.simt.mfma, t.simt.wmma);
	for (int i = 0; i < t.n_probes; i++)
		probe_free(t.probes[i]);
	free(t.probes);
	return rc || t.failed || t.simt.failed || !t.written ? 1 : 0;
}

static int cmd_run(const char *dir, int every, char *probes, int argc, char **argv)
{
	struct wr_tally t = { .dir = dir, .every = every > 0 ? every : 1 };
	int rc = run_load(&t, probes) < 0 || wr_files(&t, argc, argv) < 0;
	if (!rc)
		printf("run: %d kernels: %d probed and checked (%d sites, %d without a plain address, %d exits, "
		       "%d clause hints dropped; %d original instructions, %d inserted, %d branches, %d s_getpc_b64 "
		       "units), %d refused, %d failed\n", t.kernels, t.written, t.sites.sites, t.sites.sites_no_addr,
		       t.sites.exits, t.sites.clauses_dropped, t.sum.original, t.sum.inserted, t.sum.branches,
		       t.sum.units, t.refused, t.failed);
	for (int i = 0; i < t.n_probes; i++)
		probe_free(t.probes[i]);
	free(t.probes);
	return rc || t.failed || !t.kernels ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc >= 6 && strcmp(argv[1], "write") == 0 && strcmp(argv[2], "--every") == 0)
		return cmd_write(argv[4], atoi(argv[3]), argc - 5, argv + 5);
	if (argc >= 4 && strcmp(argv[1], "write") == 0)
		return cmd_write(argv[2], 1, argc - 3, argv + 3);
	if (argc >= 7 && strcmp(argv[1], "run") == 0 && strcmp(argv[2], "--every") == 0)
		return cmd_run(argv[4], atoi(argv[3]), argv[5], argc - 6, argv + 6);
	if (argc >= 5 && strcmp(argv[1], "run") == 0)
		return cmd_run(argv[2], 1, argv[3], argc - 4, argv + 4);
	if (argc >= 6 && strcmp(argv[1], "sim") == 0 && strcmp(argv[2], "--every") == 0)
		return cmd_sim(atoi(argv[3]), argv[4], argc - 5, argv + 5);
	if (argc >= 4 && strcmp(argv[1], "sim") == 0)
		return cmd_sim(1, argv[2], argc - 3, argv + 3);
	fprintf(stderr, "usage: amdgpu_probe write [--every N] OUTDIR FILE...\n"
			"       amdgpu_probe run [--every N] OUTDIR PROBE[,PROBE...] FILE...\n"
			"       amdgpu_probe sim [--every N] PROBE[,PROBE...] FILE...\n");
	return 2;
}
