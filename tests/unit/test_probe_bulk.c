/* The shipped probes on sm_90 code: dmat, dmat_global and gmem_bytes on
 * bulk copies (cp.async.bulk global<->shared, cp.reduce.async.bulk; ADDR is
 * the global side, BYTES the size operand, a register or an immediate), TMA
 * tensor copies skipped, and warp_progress on every barrier form. Kernels
 * come from tests/corpus/ptx/bulk.sm_90a.ptx (nvcc 13) and a hand-written
 * module for the forms nvcc's inline asm there does not cover; every result
 * is assembled with ptxas for sm_90a. Expected operands are read from the
 * kernel's own instruction, so regenerating the corpus keeps this test
 * meaningful. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/ptx/assemble.h"
#include "engine/engine.h"
#include "engine/probe/probe.h"
#include "engine/ptx/ptx.h"
#include "engine/ptx/ptx_inject.h"
#include "testlib.h"

#define CORPUS "tests/corpus/ptx/bulk.sm_90a.ptx"
#define MAX_OPS 8

static struct probe *load(const char *rel)
{
	struct probe *p = NULL;
	char *cause = NULL;
	CHECKF(probe_load_file(testlib_src(rel), &p, &cause) == 0, "%s: %s", rel, cause ? cause : "");
	free(cause);
	return p;
}

static void check_assembles(const char *what, const char *ptx)
{
	struct assemble_info info = { .registers = -1 };
	char *cause = NULL;
	int rc = assemble_ptxas(ptx, strlen(ptx), "sm_90a", NULL, &info, &cause);
	CHECKF(rc == 0, "%s: ptxas: %s", what, cause ? cause : "");
	if (rc == 0)
		assemble_info_done(&info);
	free(cause);
}

/* Instruments `kernel` of ptx with probe p; the probed PTX or NULL. */
static char *probe_kernel(const char *ptx, const char *kernel, struct probe *p, struct engine_result *r)
{
	char *cause = NULL;
	int rc = engine_instrument(ptx, strlen(ptx), kernel, &p, 1, 0, r, &cause);
	CHECKF(rc == 0, "%s [%s]: %s", kernel, p ? p->name : "?", cause ? cause : "");
	free(cause);
	if (rc < 0)
		return NULL;
	char what[160];
	snprintf(what, sizeof what, "%s [%s]", kernel, p->name);
	check_assembles(what, r->ptx);
	return r->ptx;
}

static int count_str(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* Start of the line holding the n-th (0-based) instruction whose opcode
 * starts with `opcode` (after indentation), or NULL. */
static const char *find_insn(const char *ptx, const char *opcode, int n)
{
	size_t len = strlen(opcode);
	for (const char *l = ptx; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *s = l + strspn(l, " \t");
		if (!strncmp(s, opcode, len) && (s[len] == '.' || s[len] == ' ' || s[len] == '\t' || s[len] == ';') &&
		    n-- == 0)
			return s;
	}
	return NULL;
}

/* Operands of the instruction at `line`, split at top-level commas. */
static int insn_ops(const char *line, char ops[MAX_OPS][64])
{
	const char *p = line + strcspn(line, " \t");
	int n = 0, depth = 0;
	size_t o = 0;
	for (; *p && *p != ';' && *p != '\n'; p++) {
		if (*p == '[' || *p == '{')
			depth++;
		else if (*p == ']' || *p == '}')
			depth--;
		if (*p == ',' && depth == 0) {
			ops[n][o] = 0;
			o = 0;
			if (++n == MAX_OPS)
				return n;
			continue;
		}
		if ((*p != ' ' && *p != '\t') && o + 1 < 64)
			ops[n][o++] = *p;
	}
	ops[n][o] = 0;
	return o ? n + 1 : n;
}

/* The last line before `at` that starts with `prefix` (after indentation),
 * copied without its indentation and newline; "" when there is none. */
static const char *last_before(const char *ptx, const char *at, const char *prefix)
{
	static char line[256];
	const char *hit = NULL;
	for (const char *l = ptx; l && l < at; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *s = l + strspn(l, " \t");
		if (!strncmp(s, prefix, strlen(prefix)))
			hit = s;
	}
	line[0] = 0;
	if (hit)
		snprintf(line, sizeof line, "%.*s", (int)strcspn(hit, "\n"), hit);
	return line;
}

static int line_is(const char *got, const char *fmt, const char *arg)
{
	char want[256];
	snprintf(want, sizeof want, fmt, arg);
	return !strcmp(got, want);
}

/* "[%rd4]" -> "%rd4" */
static const char *bracket_base(const char *op)
{
	static char base[64];
	snprintf(base, sizeof base, "%s", op[0] == '[' ? op + 1 : op);
	base[strcspn(base, "]+")] = 0;
	return base;
}

/* At the n-th `opcode` of ptx: ADDR came from operand addr_op, the size
 * register/immediate from operand size_op, and the record's kind is `kind`
 * (dmat-style probe with registers <pre>_sk for the access word and
 * <pre>_by for its size). */
static void check_access(const char *what, const char *ptx, const char *opcode, int n, int addr_op,
			 int size_op, const char *sk, const char *kind)
{
	const char *at = find_insn(ptx, opcode, n);
	CHECKF(at, "%s: no %s", what, opcode);
	if (!at)
		return;
	char ops[MAX_OPS][64];
	int nops = insn_ops(at, ops);
	CHECKF(nops > addr_op && nops > size_op, "%s: %d operands", what, nops);
	if (nops <= addr_op || nops <= size_op)
		return;
	const char *l = last_before(ptx, at, "mov.b64 %ntop_addr, ");
	CHECKF(line_is(l, "mov.b64 %%ntop_addr, %s;", bracket_base(ops[addr_op])), "%s: ADDR '%s' for %s", what, l,
	       ops[addr_op]);
	char pre[96], by[64];
	snprintf(by, sizeof by, "%.*s_by", (int)strlen(sk) - 3, sk); /* <pre>_sk -> <pre>_by */
	snprintf(pre, sizeof pre, "and.b32 %s, ", by);
	l = last_before(ptx, at, pre);
	char size[96];
	snprintf(size, sizeof size, "%s, 0x3ffff", ops[size_op]);
	CHECKF(!strncmp(l, pre, strlen(pre)) && line_is(l + strlen(pre), "%s;", size), "%s: BYTES '%s' for %s",
	       what, l, ops[size_op]);
	snprintf(pre, sizeof pre, "or.b32 %s, %s, ", sk, sk);
	l = last_before(ptx, at, pre);
	CHECKF(!strncmp(l, pre, strlen(pre)) && line_is(l + strlen(pre), "%s;", kind), "%s: kind '%s'", what, l);
	/* the address is saved after it is computed, before the access */
	l = last_before(ptx, at, "mov.b64 %ntop_x0, %ntop_addr;");
	CHECKF(l[0], "%s: ADDR never saved", what);
}

static char *corpus;

static void test_dmat(const char *file, const char *sk, int rec_size)
{
	struct probe *p = load(file);
	if (!p)
		return;
	CHECK_EQ_INT(p->map.rec_size, rec_size);
	struct engine_result r;
	char *out = probe_kernel(corpus, "_Z9bulk_loadPK6float4Pfjm", p, &r);
	if (out) {
		check_access(file, out, "cp.async.bulk.shared::cluster.global", 0, 1, 2, sk, "0x100000");
		check_access(file, out, "cp.async.bulk.shared::cta.global", 0, 1, 2, sk, "0x100000");
		CHECK_EQ_INT(count_str(out, ", 0x100000;"), 2);
		CHECK_EQ_INT(r.stats.sites_no_addr, 0);
		/* the immediate size of the ::cta form reaches the record as is */
		const char *at = find_insn(out, "cp.async.bulk.shared::cta.global", 0);
		char want[96];
		snprintf(want, sizeof want, "and.b32 %.*s_by, 4096, 0x3ffff;", (int)strlen(sk) - 3, sk);
		CHECK(at && !strcmp(last_before(out, at, want), want));
		if (!strcmp(p->name, "dmat_global"))
			CHECK(at && !strcmp(last_before(out, at, "mov.u64 %ntop_p0_dg_gtime, "),
					    "mov.u64 %ntop_p0_dg_gtime, %globaltimer;"));
		engine_result_done(&r);
	}
	out = probe_kernel(corpus, "_Z10bulk_storeP6float4Pfj", p, &r);
	if (out) {
		/* shared->global: ADDR is the destination, operand 0 */
		check_access(file, out, "cp.async.bulk.global.shared::cta", 0, 0, 2, sk, "0x140000");
		check_access(file, out, "cp.reduce.async.bulk.global.shared::cta", 0, 0, 2, sk, "0x140000");
		/* one record each: the store pattern also matches the reduction */
		CHECK_EQ_INT(count_str(out, ", 0x140000;"), 2);
		CHECK_EQ_INT(count_str(out, ", 0xc0000;"), 0);
		engine_result_done(&r);
	}
	out = probe_kernel(corpus, "_Z12tensor_storemPf", p, &r);
	if (out) {
		/* the TMA store matches the bulk pattern but has no address */
		CHECK_EQ_INT(r.stats.sites_no_addr, 1);
		CHECK_EQ_INT(count_str(out, ", 0x140000;"), 0);
		CHECK_EQ_INT(count_str(out, ", 0x80000;"), 1); /* the st.global.f32 */
		engine_result_done(&r);
	}
	probe_free(p);
}

static void test_gmem_bytes(void)
{
	struct probe *p = load("probes/gmem_bytes.toml");
	if (!p)
		return;
	CHECK_EQ_INT(p->map.rec_size, 20);
	CHECK(p->map.n_fields == 5 && !strcmp(p->map.fields[4].name, "async_st") && p->map.fields[4].offset == 16);
	struct engine_result r;
	char *out = probe_kernel(corpus, "_Z9bulk_loadPK6float4Pfjm", p, &r);
	if (out) {
		const char *at = find_insn(out, "cp.async.bulk.shared::cluster.global", 0);
		char ops[MAX_OPS][64];
		if (at && insn_ops(at, ops) == 4)
			CHECK(line_is(last_before(out, at, "add.u32 %ntop_p0_gb_as, "),
				      "add.u32 %%ntop_p0_gb_as, %%ntop_p0_gb_as, %s;", ops[2]));
		at = find_insn(out, "cp.async.bulk.shared::cta.global", 0);
		CHECK(at && !strcmp(last_before(out, at, "add.u32 %ntop_p0_gb_as, "),
				    "add.u32 %ntop_p0_gb_as, %ntop_p0_gb_as, 4096;"));
		CHECK_EQ_INT(count_str(out, "add.u32 %ntop_p0_gb_as, "), 2);
		CHECK_EQ_INT(count_str(out, "add.u32 %ntop_p0_gb_ast, "), 0);
		engine_result_done(&r);
	}
	out = probe_kernel(corpus, "_Z10bulk_storeP6float4Pfj", p, &r);
	if (out) {
		const char *at = find_insn(out, "cp.reduce.async.bulk", 0);
		char ops[MAX_OPS][64];
		if (at && insn_ops(at, ops) == 3)
			CHECK(line_is(last_before(out, at, "add.u32 %ntop_p0_gb_ast, "),
				      "add.u32 %%ntop_p0_gb_ast, %%ntop_p0_gb_ast, %s;", ops[2]));
		/* the bulk copy and the bulk reduction, each once */
		CHECK_EQ_INT(count_str(out, "add.u32 %ntop_p0_gb_ast, "), 2);
		CHECK_EQ_INT(count_str(out, "add.u32 %ntop_p0_gb_at, "), 0);
		engine_result_done(&r);
	}
	out = probe_kernel(corpus, "_Z12tensor_storemPf", p, &r);
	if (out) {
		CHECK_EQ_INT(count_str(out, "add.u32 %ntop_p0_gb_ast, "), 0);
		CHECK_EQ_INT(r.stats.sites_no_addr, 1);
		engine_result_done(&r);
	}
	probe_free(p);
}

static void test_warp_progress(void)
{
	struct probe *p = load("probes/warp_progress.toml");
	if (!p)
		return;
	CHECK(p->has_map && p->map.level == PROBE_LEVEL_WARP && p->map.cap == 32 && p->map.rec_size == 16);
	CHECK(p->map.n_fields == 3 && !strcmp(p->map.fields[0].name, "clock") && p->map.fields[0].type == PROBE_U64 &&
	      !strcmp(p->map.fields[1].name, "smid") && !strcmp(p->map.fields[2].name, "mark"));
	struct engine_result r;
	char *out = probe_kernel(corpus, "_Z8barriersPfj", p, &r);
	if (out) {
		static const char mark[] = "or.b32 %ntop_p0_wp_mark, %ntop_p0_wp_mark, 0x02000000;";
		/* bar.sync 0, bar.warp.sync -1 (same pattern), bar.sync %r, %r */
		CHECK_EQ_INT(count_str(out, mark), 3);
		CHECK_EQ_INT(count_str(out, "mov.u32 %ntop_p0_wp_mark, 0x01000000;"), 1);
		CHECK(count_str(out, "mov.u32 %ntop_p0_wp_mark, 0x03000000;") >= 1);
		CHECK_EQ_INT(count_str(out, "mov.u32 %ntop_p0_wp_mark, 0x04000000;"), 1);
		/* the barrier id operand, immediate or register */
		const char *at = find_insn(out, "bar.sync", 0);
		char ops[MAX_OPS][64];
		CHECK(at && insn_ops(at, ops) == 1 &&
		      line_is(last_before(out, at, "mov.u32 %ntop_p0_wp_mark, "), "mov.u32 %%ntop_p0_wp_mark, %s;", ops[0]));
		at = find_insn(out, "bar.sync", 1);
		CHECK(at && insn_ops(at, ops) == 2 && ops[0][0] == '%' &&
		      line_is(last_before(out, at, "mov.u32 %ntop_p0_wp_mark, "), "mov.u32 %%ntop_p0_wp_mark, %s;", ops[0]));
		CHECK(at && !strcmp(last_before(out, at, "or.b32 %ntop_p0_wp_mark, "), mark));
		/* the cluster point sits between arrive and wait */
		const char *arrive = find_insn(out, "barrier.cluster.arrive", 0);
		const char *wait = find_insn(out, "barrier.cluster.wait", 0);
		const char *cl = strstr(out, "mov.u32 %ntop_p0_wp_mark, 0x04000000;");
		CHECK(arrive && wait && cl && arrive < cl && cl < wait);
		/* lane 0 stores: the clock and the two words of each point */
		CHECK(strstr(out, "mov.u64 %ntop_p0_wp_clock, %clock64;") != NULL);
		CHECK(strstr(out, "mov.u32 %ntop_p0_wp_smid, %smid;") != NULL);
		engine_result_done(&r);
	}
	/* a kernel with no barrier: entry and exit points only */
	out = probe_kernel(corpus, "_Z12tensor_storemPf", p, &r);
	if (out) {
		CHECK_EQ_INT(count_str(out, ", 0x02000000;"), 1); /* its __syncthreads */
		CHECK_EQ_INT(count_str(out, "mov.u32 %ntop_p0_wp_mark, 0x04000000;"), 0);
		engine_result_done(&r);
	}
	probe_free(p);
}

/* Forms the corpus lacks: multicast with a cta mask, an address with an
 * offset, a guarded copy, and bulk instructions dmat must leave alone (L2
 * prefetch, shared->shared::cluster, commit/wait). */
static const char K_FORMS[] =
	".version 8.6\n.target sm_90a\n.address_size 64\n\n"
	".visible .entry k_forms(\n\t.param .u64 k_forms_param_0,\n\t.param .u32 k_forms_param_1\n)\n{\n"
	"\t.reg .pred %p<2>;\n"
	"\t.reg .b16 %rs<2>;\n"
	"\t.reg .b32 %r<8>;\n"
	"\t.reg .b64 %rd<4>;\n"
	"\t.shared .align 128 .b8 buf[8192];\n"
	"\t.shared .align 8 .b64 bar;\n"
	"\tld.param.u64 %rd1, [k_forms_param_0];\n"
	"\tld.param.u32 %r1, [k_forms_param_1];\n"
	"\tmov.u32 %r2, buf;\n"
	"\tmov.u32 %r3, bar;\n"
	"\tmov.u16 %rs1, 3;\n"
	"\tmov.u32 %r4, %tid.x;\n"
	"\tsetp.eq.u32 %p1, %r4, 0;\n"
	"\tcp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster "
	"[%r2], [%rd1+256], %r1, [%r3], %rs1;\n"
	"\t@%p1 cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes [%r2], [%rd1], 512, [%r3];\n"
	"\tcp.async.bulk.prefetch.L2.global [%rd1], 1024;\n"
	"\tcp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%r2], [%r2], 16, [%r3];\n"
	"\tcp.async.bulk.global.shared::cta.bulk_group.L2::cache_hint [%rd1+4096], [%r2], 2048, %rd1;\n"
	"\tcp.async.bulk.commit_group;\n"
	"\tcp.async.bulk.wait_group 0;\n"
	"\tret;\n}\n";

static void test_forms(void)
{
	struct probe *p = load("probes/dmat.toml");
	if (!p)
		return;
	struct engine_result r;
	char *out = probe_kernel(K_FORMS, "k_forms", p, &r);
	if (out) {
		const char *at = find_insn(out, "cp.async.bulk.shared::cluster.global", 0);
		CHECK(at && strstr(last_before(out, at, "mov.b64 %ntop_addr, "), "%rd1;"));
		CHECK(at && !strcmp(last_before(out, at, "add.s64 %ntop_addr, "), "add.s64 %ntop_addr, %ntop_addr, 256;"));
		CHECK(at && !strcmp(last_before(out, at, "and.b32 %ntop_p0_dm_by, "), "and.b32 %ntop_p0_dm_by, %r1, 0x3ffff;"));
		/* the guarded copy records only when its guard holds */
		at = find_insn(out, "@%p1", 0);
		CHECK(at && strstr(last_before(out, at, "@!%p1 bra $ntop_skip_"), "$ntop_skip_"));
		CHECK(at && !strcmp(last_before(out, at, "and.b32 %ntop_p0_dm_by, "), "and.b32 %ntop_p0_dm_by, 512, 0x3ffff;"));
		at = find_insn(out, "cp.async.bulk.global.shared::cta", 0);
		CHECK(at && !strcmp(last_before(out, at, "add.s64 %ntop_addr, "), "add.s64 %ntop_addr, %ntop_addr, 4096;"));
		CHECK(at && !strcmp(last_before(out, at, "and.b32 %ntop_p0_dm_by, "), "and.b32 %ntop_p0_dm_by, 2048, 0x3ffff;"));
		/* two loads and one store recorded; prefetch, shared->shared and
		 * commit/wait not */
		CHECK_EQ_INT(count_str(out, ", 0x100000;"), 2);
		CHECK_EQ_INT(count_str(out, ", 0x140000;"), 1);
		CHECK(!strstr(out, "and.b32 %ntop_p0_dm_by, 1024, 0x3ffff;") && !strstr(out, "and.b32 %ntop_p0_dm_by, 16, 0x3ffff;"));
		CHECK_EQ_INT(r.stats.sites_no_addr, 0);
		engine_result_done(&r);
	}
	probe_free(p);
}

/* BYTES of an async copy is its size operand, whatever the data type in
 * the opcode (the bulk reduction's .f32 is not its size). */
static void test_bytes(void)
{
	static const struct { const char *text, *want; } cases[] = {
		{ "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r5], [%rd3], %r6, [%r2];", "%r6" },
		{ "cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes.L2::cache_hint [%r1], [%rd1], 4096, [%r2], %rd2;",
		  "4096" },
		{ "cp.async.bulk.global.shared::cta.bulk_group [%rd1], [%r1], %r2;", "%r2" },
		{ "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%rd1], [%r1], %r7;", "%r7" },
		{ "cp.reduce.async.bulk.global.shared::cta.bulk_group.L2::cache_hint.add.noftz.bf16 [%rd1], [%r1], 64, %rd2;",
		  "64" },
		{ "cp.async.cg.shared.global [%r1], [%rd1], 16, %r3;", "%r3" }, /* src-size: the bytes read */
		{ "cp.async.cg.shared.global [%r1], [%rd1], 16, %p3;", "16" },  /* ignore-src */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct ptx_stmt s = { .kind = PTX_INSN };
		char *cause = NULL, buf[64] = "";
		CHECKF(ptx_insn_parse(cases[i].text, &s.insn, &cause) == 0, "%s: %s", cases[i].text, cause ? cause : "");
		CHECKF(ptx_inject_bytes(&s.insn, buf, sizeof buf, &cause) == 0 && !strcmp(buf, cases[i].want),
		       "%s -> '%s' (%s)", cases[i].text, buf, cause ? cause : "");
		ptx_stmt_clear(&s);
		free(cause);
	}
	struct ptx_stmt s = { .kind = PTX_INSN };
	char *cause = NULL, buf[64];
	CHECK(ptx_insn_parse("cp.async.bulk.commit_group;", &s.insn, &cause) == 0);
	CHECK(ptx_inject_bytes(&s.insn, buf, sizeof buf, &cause) < 0 && cause && strstr(cause, "no size operand"));
	ptx_stmt_clear(&s);
	free(cause);
}

int main(void)
{
	size_t len = 0;
	corpus = testlib_slurp(testlib_src(CORPUS), &len);
	CHECKF(corpus != NULL, "cannot read %s", CORPUS);
	test_bytes();
	if (corpus) {
		test_dmat("probes/dmat.toml", "%ntop_p0_dm_sk", 16);
		test_dmat("probes/dmat_global.toml", "%ntop_p0_dg_sk", 24);
		test_gmem_bytes();
		test_warp_progress();
	}
	test_forms();
	free(corpus);
	return testlib_report();
}
