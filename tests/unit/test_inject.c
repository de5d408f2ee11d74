/* The instrumenter on hand-written kernels with hand-built probes: the shape
 * of the probed PTX (parameters, prologue, exit sites, predicate skips, .func
 * bodies left alone), ptxas accepting every result, the helpers, the map
 * layout arithmetic, and a host emulation of the unit indices the prologue
 * computes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/ptx/assemble.h"
#include "engine/engine.h"
#include "engine/probe/probe.h"
#include "engine/ptx/ptx.h"
#include "engine/ptx/ptx_inject.h"
#include "testlib.h"

static const char *HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n\n";

static const char *K_NORET =
	".visible .entry k_noret(\n"
	"\t.param .u64 k_noret_param_0\n"
	")\n{\n"
	"\t.reg .b32 %r<4>;\n"
	"\t.reg .b64 %rd<4>;\n"
	"\tld.param.u64 %rd1, [k_noret_param_0];\n"
	"\tcvta.to.global.u64 %rd2, %rd1;\n"
	"\tmov.u32 %r1, %tid.x;\n"
	"\tmul.wide.u32 %rd3, %r1, 4;\n"
	"\tadd.s64 %rd2, %rd2, %rd3;\n"
	"\tld.global.u32 %r2, [%rd2];\n"
	"\tadd.s32 %r3, %r2, 1;\n"
	"\tst.global.u32 [%rd2+4], %r3;\n"
	"}\n";

static const char *K_RETS =
	".visible .entry k_rets(\n"
	"\t.param .u64 k_rets_param_0,\n"
	"\t.param .u32 k_rets_param_1\n"
	")\n{\n"
	"\t.reg .pred %p<3>;\n"
	"\t.reg .b32 %r<6>;\n"
	"\t.reg .b64 %rd<5>;\n"
	"\tld.param.u64 %rd1, [k_rets_param_0];\n"
	"\tld.param.u32 %r1, [k_rets_param_1];\n"
	"\tmov.u32 %r2, %tid.x;\n"
	"\tsetp.ge.u32 %p1, %r2, %r1;\n"
	"\t@%p1 ret;\n"
	"\tsetp.eq.u32 %p2, %r2, 5;\n"
	"\t@!%p2 bra $L__BB1_2;\n"
	"\tcvta.to.global.u64 %rd2, %rd1;\n"
	"\tld.global.u32 %r3, [%rd2+-4];\n"
	"\tst.global.u32 [%rd2], %r3;\n"
	"\tret;\n"
	"$L__BB1_2:\n"
	"\tcvta.to.global.u64 %rd3, %rd1;\n"
	"\t@!%p2 st.global.u32 [%rd3], %r2;\n"
	"\tret;\n"
	"}\n";

static const char *K_EXIT =
	".visible .entry k_exit(\n"
	"\t.param .u64 k_exit_param_0\n"
	")\n{\n"
	"\t.reg .pred %p<2>;\n"
	"\t.reg .b32 %r<3>;\n"
	"\t.reg .b64 %rd<3>;\n"
	"\tmov.u32 %r1, %tid.x;\n"
	"\tsetp.eq.u32 %p1, %r1, 3;\n"
	"\t@%p1 exit;\n"
	"\tld.param.u64 %rd1, [k_exit_param_0];\n"
	"\tcvta.to.global.u64 %rd2, %rd1;\n"
	"\tst.global.u32 [%rd2], %r1;\n"
	"\texit;\n"
	"}\n";

/* 3-D block, 32-bit shared addresses, [sym+8], vectors, cp.async. */
static const char *K_3D =
	".shared .align 16 .b8 smem[256];\n"
	".visible .entry k_3d(\n"
	"\t.param .u64 k_3d_param_0\n"
	")\n.reqntid 7, 3, 2\n{\n"
	"\t.reg .b32 %r<8>;\n"
	"\t.reg .f32 %f<5>;\n"
	"\t.reg .b64 %rd<4>;\n"
	"\tmov.u32 %r1, %tid.x;\n"
	"\tmov.u32 %r2, %tid.y;\n"
	"\tmov.u32 %r3, %tid.z;\n"
	"\tld.param.u64 %rd1, [k_3d_param_0];\n"
	"\tcvta.to.global.u64 %rd2, %rd1;\n"
	"\tmov.u32 %r4, smem;\n"
	"\tcp.async.ca.shared.global [%r4], [%rd2+16], 16;\n"
	"\tcp.async.wait_all;\n"
	"\tbar.sync 0;\n"
	"\tld.shared.u32 %r5, [%r4];\n"
	"\tld.shared.u32 %r6, [smem+8];\n"
	"\tld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd2+32];\n"
	"\tadd.s32 %r7, %r5, %r6;\n"
	"\tadd.s32 %r7, %r7, %r2;\n"
	"\tadd.s32 %r7, %r7, %r3;\n"
	"\tst.global.u32 [%rd2], %r7;\n"
	"\tst.global.v4.f32 [%rd2+16], {%f1, %f2, %f3, %f4};\n"
	"\tret;\n"
	"}\n";

static const char *K_CALL =
	".func (.param .b32 func_retval0) helper(\n"
	"\t.param .b64 helper_param_0\n"
	")\n{\n"
	"\t.reg .b32 %r<2>;\n"
	"\t.reg .b64 %rd<2>;\n"
	"\tld.param.u64 %rd1, [helper_param_0];\n"
	"\tld.global.u32 %r1, [%rd1];\n"
	"\tst.param.b32 [func_retval0+0], %r1;\n"
	"\tret;\n"
	"}\n"
	".visible .entry k_call(\n"
	"\t.param .u64 k_call_param_0\n"
	")\n{\n"
	"\t.reg .b32 %r<2>;\n"
	"\t.reg .b64 %rd<3>;\n"
	"\tld.param.u64 %rd1, [k_call_param_0];\n"
	"\tcvta.to.global.u64 %rd2, %rd1;\n"
	"\t{\n"
	"\t.param .b64 param0;\n"
	"\tst.param.b64 [param0], %rd2;\n"
	"\t.param .b32 retval0;\n"
	"\tcall.uni (retval0), helper, (param0);\n"
	"\tld.param.b32 %r1, [retval0];\n"
	"\t}\n"
	"\tst.global.u32 [%rd2], %r1;\n"
	"\tret;\n"
	"}\n";

static const char *K_NOPARAM =
	".visible .entry k_noparam\n{\n"
	"\t.reg .b32 %r<2>;\n"
	"\tmov.u32 %r1, %tid.x;\n"
	"\tret;\n"
	"}\n";

/* ---- hand-built probes -------------------------------------------------- */

static struct probe *mk_probe(const char *name, int has_map, enum probe_level level,
			      uint32_t cap, uint32_t rec)
{
	struct probe *p = calloc(1, sizeof *p);
	snprintf(p->name, sizeof p->name, "%s", name);
	p->path = strdup("<test>");
	p->has_map = has_map;
	snprintf(p->map.name, sizeof p->map.name, "%s", name);
	p->map.level = level;
	p->map.cap = cap;
	p->map.rec_size = rec;
	return p;
}

static void add_hook(struct probe *p, enum probe_tp_kind kind, int after, const char *opcode,
		     const char *snippet)
{
	p->hooks = realloc(p->hooks, (size_t)(p->n_hooks + 1) * sizeof *p->hooks);
	struct probe_hook *h = &p->hooks[p->n_hooks++];
	memset(h, 0, sizeof *h);
	snprintf(h->name, sizeof h->name, "%.40s%d", p->name, p->n_hooks);
	h->kind = kind;
	h->after = after;
	if (opcode) {
		h->opcodes = calloc(1, sizeof *h->opcodes);
		h->opcodes[0] = strdup(opcode);
		h->n_opcodes = 1;
	}
	h->snippet = strdup(snippet);
}

/* NEUTRINO's block_sched: one 16-byte record per warp. */
static struct probe *probe_block_sched(void)
{
	struct probe *p = mk_probe("block_sched", 1, PROBE_LEVEL_WARP, 1, 16);
	add_hook(p, PROBE_TP_ENTRY, 0, NULL,
		 ".reg .b64 %lstart; // local start time (unit: cycle)\n"
		 ".reg .b64 %lend;\n.reg .b64 %elapsed;\n.reg .b32 %elapse;\n"
		 "mov.u64 %lstart, %clock64;");
	add_hook(p, PROBE_TP_EXIT, 0, NULL,
		 "mov.u64 %lend, CLOCK;\nsub.u64 %elapsed, %lend, %lstart;\n"
		 "cvt.u32.u64 %elapse, %elapsed; /* to u32 */\n"
		 "SAVE.u64 {%lstart}; // start\nSAVE.u32 {%elapse, SMID};");
	return p;
}

/* Memory trace: address and clock of every global access, 8 per thread. */
static struct probe *probe_memtrace(const char *opcode)
{
	struct probe *p = mk_probe("memtrace", 1, PROBE_LEVEL_THREAD, 8, 16);
	add_hook(p, PROBE_TP_INSN, 0, opcode,
		 ".reg .b64 %t<2>;\nmov.u64 %t1, CLOCK;\nSAVE.u64 {ADDR, %t1};");
	return p;
}

/* Bytes moved per thread: counts after each access, saves at exit. */
static struct probe *probe_bytes(const char *opcode)
{
	struct probe *p = mk_probe("bytes", 1, PROBE_LEVEL_THREAD, 1, 8);
	add_hook(p, PROBE_TP_ENTRY, 0, NULL, ".reg .b64 %sum;\n.reg .b32 %n;\nmov.u64 %sum, 0;");
	add_hook(p, PROBE_TP_INSN, 1, opcode,
		 "mov.u32 %n, BYTES;\nadd.u64 %sum, %sum, 1;\ncvt.u64.u32 %n_wide, %n;");
	/* %n_wide is declared in the exit snippet: hoisting makes it visible */
	add_hook(p, PROBE_TP_EXIT, 0, NULL, ".reg .b64 %n_wide;\nSAVE.u64 {%sum};");
	return p;
}

/* ---- helpers ------------------------------------------------------------ */

static int count_str(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* The text of function `name` in emitted PTX, from its name to its closing brace. */
static char *func_text(const char *ptx, const char *name)
{
	char pat[128];
	snprintf(pat, sizeof pat, "%s(", name);
	const char *p = strstr(ptx, pat);
	if (!p) {
		snprintf(pat, sizeof pat, "%s\n", name);
		p = strstr(ptx, pat);
	}
	if (!p)
		return strdup("");
	const char *e = strstr(p, "\n}");
	size_t n = e ? (size_t)(e - p) + 2 : strlen(p);
	char *r = malloc(n + 1);
	memcpy(r, p, n);
	r[n] = 0;
	return r;
}

static int n_assembled;

static void check_assembles(const char *what, const char *ptx)
{
	char arch[32];
	CHECKF(assemble_pick_arch(ptx, 0, arch, sizeof arch) == 0, "%s: no arch", what);
	/* the cubin handed back, as the hook's builder loads it */
	struct assemble_info info = { .registers = -1, .want_cubin = 1 };
	char *cause = NULL;
	int rc = assemble_ptxas(ptx, strlen(ptx), arch, NULL, &info, &cause);
	CHECKF(rc == 0, "%s: ptxas: %s\n%s", what, cause ? cause : "", ptx);
	if (rc == 0) {
		n_assembled++;
		CHECKF(info.registers > 0, "%s: registers %d", what, info.registers);
		CHECKF(info.cubin && info.cubin_len > 4 && memcmp(info.cubin, "\177ELF", 4) == 0, "%s: no ELF cubin back",
		       what);
	}
	assemble_info_done(&info);
	free(cause);
}

/* Parses HEADER+body, injects, emits; NULL on failure (cause kept). */
static char *instrument_form(const char *body, const char *kernel, struct probe **probes, int n, unsigned flags,
			     struct ptx_inject_result *ir, char **cause)
{
	size_t blen = strlen(HEADER) + strlen(body);
	char *src = malloc(blen + 1);
	snprintf(src, blen + 1, "%s%s", HEADER, body);
	struct ptx_module *m = NULL;
	char *out = NULL;
	if (ptx_parse(src, blen, &m, cause) == 0 && ptx_prune(m, kernel, cause) == 0 &&
	    ptx_inject(m, kernel, probes, n, flags, ir, NULL, cause) == 0)
		out = ptx_emit(m, NULL);
	ptx_free(m);
	free(src);
	return out;
}

static char *instrument(const char *body, const char *kernel, struct probe **probes, int n,
			struct ptx_inject_result *ir, char **cause)
{
	return instrument_form(body, kernel, probes, n, 0, ir, cause);
}

static const char *pos(const char *hay, const char *needle)
{
	const char *p = strstr(hay, needle);
	return p ? p : hay + strlen(hay) + 1;
}

/* ---- structure tests ---------------------------------------------------- */

static void test_noret(void)
{
	struct probe *p = probe_block_sched();
	struct ptx_inject_result ir;
	char *cause = NULL;
	char *out = instrument(K_NORET, "k_noret", &p, 1, &ir, &cause);
	CHECKF(out, "%s", cause ? cause : "");
	if (out) {
		CHECK_EQ_INT(ir.n_params_orig, 1);
		CHECK_EQ_INT(ir.n_maps, 1);
		CHECK_EQ_INT(ir.map_probe[0], 0);
		CHECK_EQ_INT(count_str(out, ".param .u64 ntop_map0"), 1);
		CHECK(pos(out, "k_noret_param_0") < pos(out, "ntop_map0"));
		CHECK_EQ_INT(count_str(out, ".reg .b32 %ntop_w<7>;"), 1);
		CHECK_EQ_INT(count_str(out, ".reg .b64 %ntop_p0_lstart;"), 1);
		/* SAVEs only at entry/exit: the cursor is known here, no register */
		CHECK(strstr(out, "%ntop_cur") == NULL && strstr(out, "%ntop_rec") == NULL);
		/* lane 0 alone runs the warp map's exit code: one branch around it,
		 * the record stored unguarded inside; no count store: every warp
		 * tried 16 bytes, and the engine says so instead (engine.h) */
		const char *lane = strstr(out, "@!%ntop_lane0 bra $ntop_lane_0;");
		CHECK(lane != NULL);
		CHECK(lane && pos(lane, "st.global.cs.b64 [%ntop_sa], %ntop_x0;") < pos(lane, "$ntop_lane_0:"));
		CHECK(strstr(out, "%ntop_hc0]") == NULL && strstr(out, "mad.wide.u32 %ntop_hc0") == NULL);
		CHECK_EQ_INT(ir.count_static[0], 1);
		CHECK_EQ_INT((int)ir.count_bytes[0], 16);
		CHECK(strstr(out, "@%ntop_ok") == NULL);
		/* exit code sits after the last kernel instruction, before the brace */
		CHECK(pos(out, "st.global.u32 [%rd2+4], %r3;") < pos(out, "mov.b64 %ntop_sa, %ntop_hr0;"));
		/* nothing before the entry snippet: its clock reads first */
		CHECK(pos(out, "mov.u64 %ntop_p0_lstart, %clock64;") < pos(out, "ld.param.u64 %rd1"));
		CHECK(pos(out, "mov.u64 %ntop_p0_lstart, %clock64;") < pos(out, "%ctaid"));
		CHECK(pos(out, "mov.u64 %ntop_p0_lstart, %clock64;") < pos(out, "%tid.x"));
		CHECK(strstr(out, "mov.u64 %ntop_p0_lend, %clock64;") != NULL);
		/* SAVE.u32 {elapse, SMID} at record byte 8 of 16: one 8-byte vector store */
		CHECK(strstr(out, "mov.b32 %ntop_v1, %smid;") != NULL);
		CHECK(strstr(out, "st.global.cs.v2.b32 [%ntop_sa+8], {%ntop_v0, %ntop_v1};") != NULL);
		CHECK(strstr(out, "st.global.cs.b64 [%ntop_sa], %ntop_x0;") != NULL);
		CHECK_EQ_INT(ir.sites, 2);
		check_assembles("noret", out);
	}
	free(out);
	free(cause);
	probe_free(p);
}

/* The two forms of one probe (engine.h): by default the unit's count and
 * record addresses and the lane-0 test are computed once, after the entry
 * snippet and before the kernel's own code, so the exit is stores alone;
 * ENGINE_ADDR_AT_EXIT computes them at the exit instead. Both assemble. */
static void test_exit_forms(void)
{
	struct probe *p = probe_block_sched();
	struct ptx_inject_result ir;
	char *cause = NULL;
	char *out = instrument_form(K_NORET, "k_noret", &p, 1, 0, &ir, &cause);
	CHECKF(out, "%s", cause ? cause : "");
	if (out) {
		const char *body = strstr(out, "ld.param.u64 %rd1");
		const char *lane = strstr(out, "@!%ntop_lane0 bra $ntop_lane_0;");
		CHECK(pos(out, "mov.u64 %ntop_p0_lstart, %clock64;") < pos(out, "[ntop_map0]"));
		CHECK(pos(out, "mad.wide.u32 %ntop_hr0, %ntop_uw, 16, %ntop_d0;") < pos(out, "ld.param.u64 %rd1"));
		CHECK(pos(out, "setp.eq.u32 %ntop_lane0,") < pos(out, "ld.param.u64 %rd1"));
		CHECK(body && strstr(body, "[ntop_map0]") == NULL && strstr(body, "%ntop_tl") == NULL);
		CHECK(lane && pos(lane, "mov.b64 %ntop_sa, %ntop_hr0;") < pos(lane, "$ntop_lane_0:"));
		CHECK(strstr(out, "[%ntop_ca]") == NULL);
		check_assembles("exit forms: at entry", out);
	}
	free(out);
	free(cause);
	cause = NULL;
	out = instrument_form(K_NORET, "k_noret", &p, 1, ENGINE_ADDR_AT_EXIT, &ir, &cause);
	CHECKF(out, "%s", cause ? cause : "");
	if (out) {
		const char *body = strstr(out, "ld.param.u64 %rd1");
		CHECK(strstr(out, "%ntop_hc") == NULL && strstr(out, "%ntop_hr") == NULL);
		CHECK(pos(out, "ld.param.u64 %rd1") < pos(out, "[ntop_map0]"));
		CHECK(body && pos(body, "setp.eq.u32 %ntop_lane0,") < pos(body, "@!%ntop_lane0 bra $ntop_lane_0;"));
		CHECK(strstr(out, "[%ntop_ca]") == NULL);
		CHECK_EQ_INT(count_str(out, "st.global.cs.b64 [%ntop_sa], %ntop_x0;"), 1);
		CHECK_EQ_INT(ir.count_static[0], 1);
		check_assembles("exit forms: at exit", out);
	}
	free(out);
	free(cause);
	probe_free(p);
}

static void test_rets(void)
{
	struct probe *ps[2] = { probe_block_sched(), probe_memtrace("ld.global") };
	struct ptx_inject_result ir;
	char *cause = NULL;
	char *out = instrument(K_RETS, "k_rets", ps, 2, &ir, &cause);
	CHECKF(out, "%s", cause ? cause : "");
	if (out) {
		CHECK_EQ_INT(ir.n_params_orig, 2);
		CHECK_EQ_INT(ir.n_maps, 2);
		CHECK_EQ_INT(count_str(out, ".param .u64 ntop_map0"), 1);
		CHECK_EQ_INT(count_str(out, ".param .u64 ntop_map1"), 1);
		/* three rets -> three exit sites: the warp map's record behind a
		 * lane-0 branch (its count, static, is not stored), the thread
		 * map's count (dynamic: SAVEs at ld.global) from its cursor, in
		 * the blocks block sampling keeps */
		CHECK_EQ_INT(count_str(out, "mov.b64 %ntop_sa, %ntop_hr0;"), 3);
		CHECK(strstr(out, "%ntop_hc0]") == NULL);
		CHECK(ir.count_static[0] == 1 && ir.count_static[1] == 0);
		/* every unit stores its own count at its exit: nothing to clear */
		CHECK(ir.count_clear[0] == 0 && ir.count_clear[1] == 0);
		CHECK_EQ_INT(count_str(out, "@!%ntop_lane0 bra $ntop_lane_"), 3);
		/* only a block sampling keeps stores its count (engine.h) */
		CHECK_EQ_INT(count_str(out, "\t@%ntop_sp1 st.global.u32 [%ntop_hc1], %ntop_cur1;"), 3);
		CHECK_EQ_INT(count_str(out, ".reg .b32 %ntop_cur1;"), 1);
		CHECK(strstr(out, "%ntop_cur0") == NULL);
		/* the instruction site stores through the live record address; the
		 * thread map (cap > 1) is slot-major: the cursor's record is cursor
		 * * units bytes past the unit's record 0 (engine.h) */
		CHECK(strstr(out, "mad.lo.u64 %ntop_sa, %ntop_sa, %ntop_un1, %ntop_rec1;") != NULL);
		CHECK_EQ_INT(count_str(out, ".reg .b64 %ntop_un1;"), 1);
		CHECK(strstr(out, "%ntop_un0") == NULL);
		CHECK(strstr(out, "@%ntop_ok st.global.cs.v2.b64 [%ntop_sa], {%ntop_x0, %ntop_x1};") != NULL);
		/* the guarded ret: exit code skipped unless %p1 holds */
		const char *skip = strstr(out, "@!%p1 bra $ntop_skip_0;");
		CHECK(skip != NULL);
		CHECK(skip && pos(skip, "mov.b64 %ntop_sa, %ntop_hr0;") < pos(skip, "@%p1 ret;"));
		CHECK(skip && pos(skip, "@%p1 ret;") < pos(skip, "$ntop_skip_0:"));
		/* one ld.global with [%rd2+-4]: ADDR = %rd2 - 4 */
		CHECK(strstr(out, "mov.b64 %ntop_addr, %rd2;\n\tadd.s64 %ntop_addr, %ntop_addr, -4;") != NULL);
		CHECK_EQ_INT(count_str(out, "mov.u64 %ntop_p1_t1, %clock64;"), 1);
		CHECK_EQ_INT(ir.sites, 1 + 3 + 1);
		CHECK_EQ_INT(count_str(out, ".reg .b64 %ntop_p1_t<2>;"), 1);
		check_assembles("rets", out);
	}
	free(out);
	free(cause);
	probe_free(ps[0]);
	probe_free(ps[1]);

	/* a guarded store with a negated guard gets a positive skip */
	struct probe *st = probe_memtrace("st.global");
	out = instrument(K_RETS, "k_rets", &st, 1, &ir, &cause);
	CHECKF(out, "%s", cause ? cause : "");
	if (out) {
		CHECK(strstr(out, "@%p2 bra $ntop_skip_") != NULL);
		CHECK_EQ_INT(count_str(out, "mov.u64 %ntop_p0_t1, %clock64;"), 2);
		CHECK_EQ_INT(count_str(out, "bra $ntop_skip_"), 2); /* @%p1 ret and @!%p2 st */
		check_assembles("rets/st", out);
	}
	free(out);
	free(cause);
	probe_free(st);
}

static void test_exit(void)
{
	struct probe *p = probe_block_sched();
	struct ptx_inject_result ir;
	char *cause = NULL;
	char *out = instrument(K_EXIT, "k_exit", &p, 1, &ir, &cause);
	CHECKF(out, "%s", cause ? cause : "");
	if (out) {
		CHECK_EQ_INT(count_str(out, "mov.b64 %ntop_sa, %ntop_hr0;"), 2);
		CHECK(strstr(out, "@!%p1 bra $ntop_skip_0;") != NULL);
		CHECK(pos(out, "mov.b64 %ntop_sa, %ntop_hr0;") < pos(out, "@%p1 exit;"));
		/* ends in an unguarded exit: nothing added after it */
		const char *last = strstr(out, "\texit;");
		CHECK(last && strstr(last, "ntop") == NULL);
		check_assembles("exit", out);
	}
	free(out);
	free(cause);
	probe_free(p);
}

static void test_3d_helpers(void)
{
	struct probe *ps[3] = { probe_memtrace("ld"), probe_bytes("ld"), probe_block_sched() };
	add_hook(ps[0], PROBE_TP_INSN, 0, "cp.async.ca",
		 "SAVE.u64 {ADDR}; SAVE.u32 {BYTES, IN1};");
	struct ptx_inject_result ir;
	char *cause = NULL;
	char *out = instrument(K_3D, "k_3d", ps, 3, &ir, &cause);
	CHECKF(out, "%s", cause ? cause : "");
	if (out) {
		CHECK(strstr(out, "cvt.u64.u32 %ntop_addr, %r4;") != NULL);        /* 32-bit shared address */
		CHECK(strstr(out, "mov.u64 %ntop_addr, smem;\n\tadd.s64 %ntop_addr, %ntop_addr, 8;") != NULL);
		CHECK(strstr(out, "mov.b64 %ntop_addr, %rd2;\n\tadd.s64 %ntop_addr, %ntop_addr, 16;") != NULL);
		CHECK(strstr(out, "mov.u32 %ntop_p1_n, 16;") != NULL);              /* v4.f32 */
		CHECK(strstr(out, "mov.u32 %ntop_p1_n, 4;") != NULL);               /* u32 */
		CHECK(strstr(out, "mov.b32 %ntop_v0, 16;") != NULL);                /* cp.async size */
		CHECK(strstr(out, "mov.b32 %ntop_v1, [%rd2+16];") != NULL);         /* IN1 text */
		/* "ld" matches the three loads; the ADDR hook skips the ld.param
		 * (no address), the BYTES-only hook does not */
		CHECK_EQ_INT(count_str(out, "mov.u64 %ntop_p0_t1, %clock64;"), 3);
		CHECK_EQ_INT(count_str(out, "mov.u32 %ntop_p1_n, 8;"), 1);
		/* declared once though inserted at three sites; cross-hook register too */
		CHECK_EQ_INT(count_str(out, ".reg .b64 %ntop_p0_t<2>;"), 1);
		CHECK_EQ_INT(count_str(out, ".reg .b64 %ntop_p1_n_wide;"), 1);
		CHECK_EQ_INT(count_str(out, "cvt.u64.u32 %ntop_p1_n_wide, %ntop_p1_n;"), 4); /* + ld.param */
		CHECK_EQ_INT(ir.n_maps, 3);
		CHECK(strstr(out, ".reqntid 7, 3, 2") != NULL);
		CHECK(strstr(out, "mov.u32 %ntop_w2, %tid.z;") != NULL);
	}
	free(out);
	free(cause);
	cause = NULL;
	/* IN1 as a stored value is an address here, which ptxas rejects: drop it */
	free(ps[0]->hooks[1].snippet);
	ps[0]->hooks[1].snippet = strdup("SAVE.u64 {ADDR}; SAVE.u32 {BYTES, SMID};");
	out = instrument(K_3D, "k_3d", ps, 3, &ir, &cause);
	CHECKF(out, "%s", cause ? cause : "");
	if (out)
		check_assembles("3d", out);
	free(out);
	free(cause);
	for (int i = 0; i < 3; i++)
		probe_free(ps[i]);
}

/* A .func with a site is instrumented: it takes the context pointer, loads
 * the state at its start and stores it before its ret; the kernel passes
 * the pointer and stores/loads around the call. (test_inject_exec runs
 * such code.) One whose address is taken is left alone and says why. */
static const char *K_FNPTR =
	".func (.param .b32 func_retval0) helper(\n"
	"\t.param .b64 helper_param_0\n"
	")\n{\n"
	"\t.reg .b32 %r<2>;\n"
	"\t.reg .b64 %rd<2>;\n"
	"\tld.param.u64 %rd1, [helper_param_0];\n"
	"\tld.global.u32 %r1, [%rd1];\n"
	"\tst.param.b32 [func_retval0+0], %r1;\n"
	"\tret;\n"
	"}\n"
	".visible .entry k_fnptr(\n"
	"\t.param .u64 k_fnptr_param_0\n"
	")\n{\n"
	"\t.reg .b64 %rd<3>;\n"
	"\tld.param.u64 %rd1, [k_fnptr_param_0];\n"
	"\tmov.u64 %rd2, helper;\n"
	"\tst.global.u64 [%rd1], %rd2;\n"
	"\tret;\n"
	"}\n";

static void test_func_probed(void)
{
	struct probe *ps[2] = { probe_memtrace("ld.global"), probe_block_sched() };
	struct ptx_inject_result ir;
	char *cause = NULL;
	char *out = instrument(K_CALL, "k_call", ps, 2, &ir, &cause);
	CHECKF(out, "%s", cause ? cause : "");
	if (out) {
		char *helper = func_text(out, "helper");
		CHECK(strstr(helper, ".reg .b64 ntop_cxp") != NULL);
		CHECK(strstr(helper, "mov.b64 %ntop_cx, ntop_cxp;") != NULL);
		CHECK(strstr(helper, "ld.b32 %ntop_cur0, [%ntop_cx+") != NULL);
		CHECK(pos(helper, "mov.u64 %ntop_p0_t1, %clock64;") < pos(helper, "ld.global.u32 %r1, [%rd1];"));
		CHECK(pos(helper, "st.b32 [%ntop_cx+") < pos(helper, "\tret;"));
		free(helper);
		CHECK(strstr(out, ".local .align 8 .b8 ntop_ctx[") != NULL);
		CHECK(strstr(out, "call.uni (retval0), helper, (param0, %ntop_cx);") != NULL);
		CHECK(pos(out, "st.b32 [%ntop_cx+") < pos(out, "call.uni (retval0), helper"));
		CHECK(pos(out, "call.uni (retval0), helper") < pos(out, "ld.param.b32 %r1, [retval0];"));
		CHECK_EQ_INT(ir.sites_in_funcs, 0);
		CHECK_EQ_INT(ir.funcs_probed, 1);
		CHECK_EQ_INT(ir.sites, 3); /* entry, the ld.global in helper, the ret */
		check_assembles("call", out);
	}
	free(out);
	free(cause);
	cause = NULL;
	/* block_sched alone has no site in helper: helper stays as it was */
	out = instrument(K_CALL, "k_call", ps + 1, 1, &ir, &cause);
	if (out) {
		char *helper = func_text(out, "helper");
		CHECKF(strstr(helper, "ntop") == NULL, "%s", helper);
		free(helper);
		CHECK_EQ_INT(ir.funcs_probed, 0);
	}
	free(out);
	free(cause);
	cause = NULL;
	out = instrument(K_FNPTR, "k_fnptr", ps, 1, &ir, &cause);
	CHECKF(out, "%s", cause ? cause : "");
	if (out) {
		char *helper = func_text(out, "helper");
		CHECKF(strstr(helper, "ntop") == NULL, "%s", helper);
		free(helper);
		CHECK_EQ_INT(ir.sites_in_funcs, 1);
		CHECK(ir.funcs_why && strstr(ir.funcs_why, "address is taken"));
		check_assembles("fnptr", out);
	}
	free(out);
	free(cause);
	probe_free(ps[0]);
	probe_free(ps[1]);
}

/* A thread that leaves through an `exit` in a .func, or in a .func whose
 * body is linked in later, skips the kernel's exit code: its count would
 * not be what the engine claims, so a static cursor's counts are stored
 * then, cleared by the host before each launch and read back (engine.h). */
static const char *K_FUNC_EXIT =
	".func helper_exit(\n"
	"\t.param .b32 helper_exit_param_0\n"
	")\n{\n"
	"\t.reg .pred %p<2>;\n"
	"\t.reg .b32 %r<2>;\n"
	"\tld.param.u32 %r1, [helper_exit_param_0];\n"
	"\tsetp.eq.u32 %p1, %r1, 0;\n"
	"\t@%p1 exit;\n"
	"\tret;\n"
	"}\n"
	".visible .entry k_fe(\n"
	"\t.param .u32 k_fe_param_0\n"
	")\n{\n"
	"\t.reg .b32 %r<2>;\n"
	"\tld.param.u32 %r1, [k_fe_param_0];\n"
	"\t{\n"
	"\t.param .b32 param0;\n"
	"\tst.param.b32 [param0], %r1;\n"
	"\tcall.uni helper_exit, (param0);\n"
	"\t}\n"
	"\tret;\n"
	"}\n";

static const char *K_FUNC_EXTERN =
	".extern .func helper_ext(\n"
	"\t.param .b32 helper_ext_param_0\n"
	");\n"
	".visible .entry k_fx(\n"
	"\t.param .u32 k_fx_param_0\n"
	")\n{\n"
	"\t.reg .b32 %r<2>;\n"
	"\tld.param.u32 %r1, [k_fx_param_0];\n"
	"\t{\n"
	"\t.param .b32 param0;\n"
	"\tst.param.b32 [param0], %r1;\n"
	"\tcall.uni helper_ext, (param0);\n"
	"\t}\n"
	"\tret;\n"
	"}\n";

static void test_counts_when_func_exits(void)
{
	const char *bodies[2] = { K_FUNC_EXIT, K_FUNC_EXTERN }, *kernels[2] = { "k_fe", "k_fx" };
	for (int i = 0; i < 2; i++) {
		struct probe *p = probe_block_sched();
		struct ptx_inject_result ir;
		char *cause = NULL;
		char *out = instrument(bodies[i], kernels[i], &p, 1, &ir, &cause);
		CHECKF(out, "%s: %s", kernels[i], cause ? cause : "");
		if (out) {
			CHECK_EQ_INT(ir.count_static[0], 0);
			CHECK_EQ_INT(ir.count_clear[0], 1); /* a thread leaving in the .func stores none */
			CHECKF(count_str(out, "st.global.u32 [%ntop_hc0], 16;") == 1, "%s: count not stored", kernels[i]);
			if (i == 0) /* the other needs its .func linked in */
				check_assembles("func exit", out);
		}
		free(out);
		free(cause);
		probe_free(p);
	}
}

/* The same for a block map: thread 0 stores its block's count (the host
 * clears counts and records: a folded field needs zero to start from). */
static void test_block_map_counts_when_func_exits(void)
{
	struct probe *p = NULL;
	char *cause = NULL;
	int rc = probe_load_file(testlib_src("tests/gpu/block_span.toml"), &p, &cause);
	CHECKF(rc == 0, "%s", cause ? cause : "");
	struct ptx_inject_result ir;
	char *out = p ? instrument(K_FUNC_EXIT, "k_fe", &p, 1, &ir, &cause) : NULL;
	CHECKF(out, "k_fe: %s", cause ? cause : "");
	if (out) {
		CHECK_EQ_INT(ir.count_static[0], 0);
		CHECK_EQ_INT(ir.count_clear[0], 1);
		CHECKF(count_str(out, "@%ntop_t0 st.global.u32 [%ntop_hc0], 40;") == 1, "block count not stored by thread 0");
		CHECK_EQ_INT(count_str(out, "red.global.max.u64"), 2);
		CHECK(engine_map_records_clear(&p->map));
		check_assembles("block map, func exit", out);
	}
	free(out);
	free(cause);
	probe_free(p);
}

static void test_noparam(void)
{
	struct probe *p = probe_block_sched();
	struct ptx_inject_result ir;
	char *cause = NULL;
	char *out = instrument(K_NOPARAM, "k_noparam", &p, 1, &ir, &cause);
	CHECKF(out, "%s", cause ? cause : "");
	if (out) {
		CHECK_EQ_INT(ir.n_params_orig, 0);
		CHECK(strstr(out, "k_noparam(\n\t.param .u64 ntop_map0\n)") != NULL);
		check_assembles("noparam", out);
	}
	free(out);
	free(cause);
	probe_free(p);
}

/* Errors: helpers outside instruction sites, SAVE without a map, our prefix
 * in the kernel, a missing operand, a kernel that is not there. */
static void test_errors(void)
{
	struct ptx_inject_result ir;
	char *cause = NULL;
	struct probe *p = mk_probe("bad", 1, PROBE_LEVEL_THREAD, 1, 8);
	add_hook(p, PROBE_TP_ENTRY, 0, NULL, "SAVE.u64 {ADDR};");
	char *out = instrument(K_NORET, "k_noret", &p, 1, &ir, &cause);
	CHECK(out == NULL);
	CHECKF(cause && strstr(cause, "ADDR"), "%s", cause ? cause : "");
	free(out);
	probe_free(p);

	p = mk_probe("nomap", 0, PROBE_LEVEL_THREAD, 0, 0);
	add_hook(p, PROBE_TP_EXIT, 0, NULL, "SAVE.u32 {SMID};");
	out = instrument(K_NORET, "k_noret", &p, 1, &ir, &cause);
	CHECK(out == NULL);
	CHECKF(cause && strstr(cause, "without a map"), "%s", cause ? cause : "");
	free(out);
	probe_free(p);

	p = mk_probe("op", 1, PROBE_LEVEL_THREAD, 1, 4);
	add_hook(p, PROBE_TP_INSN, 0, "st.global", "SAVE.u32 {IN3};");
	out = instrument(K_NORET, "k_noret", &p, 1, &ir, &cause);
	CHECK(out == NULL);
	CHECKF(cause && strstr(cause, "IN3"), "%s", cause ? cause : "");
	free(out);
	probe_free(p);

	p = mk_probe("odd", 1, PROBE_LEVEL_THREAD, 2, 8);
	add_hook(p, PROBE_TP_EXIT, 0, NULL, "SAVE.u32 {SMID};");
	out = instrument(K_NORET, "k_noret", &p, 1, &ir, &cause);
	CHECK(out == NULL);
	CHECKF(cause && strstr(cause, "whole"), "%s", cause ? cause : "");
	free(out);
	probe_free(p);

	p = probe_block_sched();
	const char *clash = ".visible .entry k_clash()\n{\n\t.reg .b32 %ntop_w<2>;\n\tret;\n}\n";
	out = instrument(clash, "k_clash", &p, 1, &ir, &cause);
	CHECK(out == NULL);
	CHECKF(cause && strstr(cause, "reserved"), "%s", cause ? cause : "");
	free(out);

	/* a failed inject leaves the module as it was */
	struct ptx_module *m = NULL;
	size_t blen = strlen(HEADER) + strlen(K_NORET);
	char *src = malloc(blen + 1);
	snprintf(src, blen + 1, "%s%s", HEADER, K_NORET);
	CHECK(ptx_parse(src, blen, &m, &cause) == 0);
	if (m) {
		char *before = ptx_emit(m, NULL);
		struct probe *bad = mk_probe("bad", 1, PROBE_LEVEL_THREAD, 1, 8);
		add_hook(bad, PROBE_TP_INSN, 0, "ld.global", "SAVE.u64 {OUT}; mov.u32 %x, IN3;");
		struct probe *both[2] = { p, bad };
		CHECK(ptx_inject(m, "k_noret", both, 2, 0, &ir, NULL, &cause) < 0);
		char *after = ptx_emit(m, NULL);
		CHECK(before && after && strcmp(before, after) == 0);
		CHECK(ptx_inject(m, "nope", both, 1, 0, &ir, NULL, &cause) < 0);
		free(before);
		free(after);
		probe_free(bad);
	}
	ptx_free(m);
	free(src);
	probe_free(p);
	free(cause);
}

static const char *K_VARS =
	".global .align 4 .u32 g_count;\n"
	".global .align 4 .u32 g_unused;\n"
	".const .align 4 .b8 c_tab[16];\n"
	".visible .entry k_other()\n{\n\tret;\n}\n"
	".visible .entry k_vars(\n"
	"\t.param .u64 k_vars_param_0\n"
	")\n{\n"
	"\t.reg .b32 %r<3>;\n"
	"\tld.const.u32 %r1, [c_tab+4];\n"
	"\tatom.global.add.u32 %r2, [g_count], %r1;\n"
	"\tret;\n"
	"}\n";

/* engine_instrument: prune, map plan, globals, stats, phase-named causes. */
static void test_engine(void)
{
	size_t blen = strlen(HEADER) + strlen(K_VARS);
	char *src = malloc(blen + 1);
	snprintf(src, blen + 1, "%s%s", HEADER, K_VARS);
	struct probe *ps[2] = { probe_memtrace("atom"), probe_block_sched() };
	struct engine_result r;
	char *cause = NULL;
	int rc = engine_instrument(src, blen, "k_vars", ps, 2, 0, &r, &cause);
	CHECKF(rc == 0, "%s", cause ? cause : "");
	if (rc == 0) {
		CHECK_EQ_INT(r.n_params_orig, 1);
		CHECK_EQ_INT(r.n_maps, 2);
		CHECK(!strcmp(r.maps[0].probe, "memtrace") && r.maps[0].param_index == 1);
		CHECK(!strcmp(r.maps[1].probe, "block_sched") && r.maps[1].param_index == 2);
		CHECK_EQ_INT(r.maps[1].map.level, PROBE_LEVEL_WARP);
		CHECK(!strcmp(r.target, "sm_80"));
		CHECK_EQ_INT(r.n_globals, 2);
		int seen_g = 0, seen_c = 0;
		for (int i = 0; i < r.n_globals; i++) {
			seen_g |= !strcmp(r.globals[i].name, "g_count") && !r.globals[i].is_const;
			seen_c |= !strcmp(r.globals[i].name, "c_tab") && r.globals[i].is_const;
		}
		CHECK(seen_g && seen_c);
		CHECK(strstr(r.pruned_ptx, "k_other") == NULL && strstr(r.pruned_ptx, "ntop") == NULL);
		CHECK(strstr(r.pruned_ptx, "g_unused") == NULL);
		CHECK(strstr(r.ptx, "k_other") == NULL);
		CHECK(strstr(r.ptx, "mov.u64 %ntop_addr, g_count;") != NULL);
		CHECK_EQ_INT(r.stats.lines_in, 4 + 16); /* newline-terminated lines */
		CHECK(r.stats.lines_pruned < r.stats.lines_in && r.stats.lines_probed > r.stats.lines_pruned);
		CHECK_EQ_INT(r.stats.sites, 3); /* entry, atom, ret */
		CHECK(r.stats.ms_parse >= 0 && r.stats.ms_inject > 0 && r.stats.ms_emit > 0);
		check_assembles("engine", r.ptx);
		check_assembles("engine/pruned", r.pruned_ptx);
	}
	engine_result_done(&r);
	CHECK(engine_instrument(src, blen, "k_missing", ps, 2, 0, &r, &cause) < 0);
	CHECKF(cause && !strncmp(cause, "parse", 5), "%s", cause ? cause : "");
	CHECK(r.ptx == NULL && r.pruned_ptx == NULL);
	struct probe *bad = NULL;
	if (probe_load_file(testlib_src("tests/data/bad_branch.toml"), &bad, &cause) == 0) {
		struct probe *both[2] = { ps[1], bad };
		CHECK(engine_instrument(src, blen, "k_vars", both, 2, 0, &r, &cause) < 0);
		CHECKF(cause && !strncmp(cause, "verify: ", 8), "%s", cause ? cause : "");
		probe_free(bad);
	}
	/* an inject error (IN3 of a 3-operand atom) names its phase too */
	struct probe *in3 = mk_probe("in3", 1, PROBE_LEVEL_THREAD, 1, 4);
	add_hook(in3, PROBE_TP_INSN, 0, "atom", "SAVE.u32 {IN3};");
	CHECK(engine_instrument(src, blen, "k_vars", &in3, 1, 0, &r, &cause) < 0);
	CHECKF(cause && (!strncmp(cause, "inject: ", 8) || !strncmp(cause, "verify: ", 8)), "%s",
	       cause ? cause : "");
	probe_free(in3);
	free(cause);
	free(src);
	probe_free(ps[0]);
	probe_free(ps[1]);
}

static void test_bytes(void)
{
	static const struct { const char *op; const char *want; } cases[] = {
		{ "ld.global.u8", "1" }, { "st.global.s16", "2" }, { "ld.global.nc.v4.f32", "16" },
		{ "ld.global.v2.u64", "16" }, { "atom.global.add.f32", "4" },
		{ "red.global.add.u64", "8" }, { "ld.global.b128", "16" },
		{ "ld.global.L2::128B.v2.f16x2", "8" }, { "st.shared.v8.bf16", "16" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct ptx_insn x;
		memset(&x, 0, sizeof x);
		x.opcode = (char *)cases[i].op;
		char buf[32] = "";
		CHECKF(ptx_inject_bytes(&x, buf, sizeof buf, NULL) == 0 && !strcmp(buf, cases[i].want),
		       "%s -> %s", cases[i].op, buf);
	}
	struct ptx_insn x;
	memset(&x, 0, sizeof x);
	x.opcode = "prefetch.global.L2";
	char buf[32];
	CHECK(ptx_inject_bytes(&x, buf, sizeof buf, NULL) < 0);
	/* cp.async: src-size (bytes read; Triton's masked loads) over cp-size;
	 * not an ignore-src predicate, not a cache policy, not in bulk forms */
	static const struct {
		const char *op, *ops[5], *want;
	} cp[] = {
		{ "cp.async.cg.shared.global", { "[%r1]", "[%rd1]", "16", "%r2" }, "%r2" },
		{ "cp.async.cg.shared.global", { "[%r1]", "[%rd1]", "16", "8" }, "8" },
		{ "cp.async.ca.shared.global", { "[%r1]", "[%rd1]", "4" }, "4" },
		{ "cp.async.ca.shared.global", { "[%r1]", "[%rd1]", "16", "%p3" }, "16" },
		{ "cp.async.cg.shared.global.L2::cache_hint", { "[%r1]", "[%rd1]", "16", "%rd9" }, "16" },
		{ "cp.async.cg.shared.global.L2::cache_hint", { "[%r1]", "[%rd1]", "16", "%r4", "%rd9" }, "%r4" },
		{ "cp.async.bulk.global.shared::cta.bulk_group", { "[%rd1]", "[%r1]", "%r5", "%rd9" }, "%r5" },
	};
	for (size_t i = 0; i < sizeof cp / sizeof cp[0]; i++) {
		struct ptx_operand ops[5];
		memset(&x, 0, sizeof x);
		x.opcode = (char *)cp[i].op;
		x.ops = ops;
		for (int k = 0; k < 5 && cp[i].ops[k]; k++) {
			ops[k] = (struct ptx_operand){ (char *)cp[i].ops[k], cp[i].ops[k][0] == '[', 0 };
			x.n_ops = k + 1;
		}
		buf[0] = 0;
		CHECKF(ptx_inject_bytes(&x, buf, sizeof buf, NULL) == 0 && !strcmp(buf, cp[i].want), "%s (%d operands) -> %s",
		       cp[i].op, x.n_ops, buf);
	}
}

/* ---- map layout --------------------------------------------------------- */

static void test_map_plan(void)
{
	struct probe_map w = { .level = PROBE_LEVEL_WARP, .cap = 1, .rec_size = 16 };
	struct probe_map t = { .level = PROBE_LEVEL_THREAD, .cap = 4, .rec_size = 8 };
	CHECK_EQ_INT(engine_map_units(&w, 1, 33), 2);
	CHECK_EQ_INT(engine_map_units(&w, 10, 32), 10);
	CHECK_EQ_INT(engine_map_units(&w, 3, 42), 6);      /* 7x3x2 */
	CHECK_EQ_INT(engine_map_units(&t, 3, 42), 126);
	CHECK_EQ_INT(engine_map_records_offset(&w, 1, 33), 16);   /* 2 counts = 8 -> 16 */
	CHECK_EQ_INT(engine_map_records_offset(&t, 3, 42), 512);  /* 504 -> 512 */
	CHECK_EQ_INT(engine_map_bytes(&w, 1, 33, 0), 16 + 2 * 16);
	CHECK_EQ_INT(engine_map_bytes(&t, 3, 42, 0), 512 + 126 * 32);
	/* 3-D grid 4x5x6 of 7x3x2 blocks */
	CHECK_EQ_INT(engine_map_units(&w, 120, 42), 240);
	CHECK_EQ_INT(engine_map_bytes(&w, 120, 42, 0), 960 + 240 * 16);
	/* overflow */
	CHECK_EQ_INT(engine_map_units(&t, UINT64_MAX / 2, 1024), 0);
	CHECK_EQ_INT(engine_map_bytes(&t, UINT64_MAX / 2, 1024, 0), 0);
	CHECK_EQ_INT(engine_map_bytes(&t, (UINT64_MAX / 1024) / 32, 1024, 0), 0);
	struct probe_map big = { .level = PROBE_LEVEL_THREAD, .cap = 1u << 20, .rec_size = 4096 };
	CHECK_EQ_INT(engine_map_bytes(&big, 1ull << 31, 1024, 0), 0);
	/* block sampling: only slot-major maps; 3 blocks, 1 in 2 kept = 2 blocks
	 * (0 and 2), counts still for all 126 units */
	CHECK_EQ_INT(engine_map_bytes(&t, 3, 42, 1), 512 + 84 * 32);
	CHECK_EQ_INT(engine_map_bytes(&t, 3, 42, 2), 512 + 42 * 32);
	CHECK_EQ_INT(engine_map_bytes(&w, 1, 33, 3), 16 + 2 * 16);
	CHECK_EQ_INT(engine_map_rec_units(&t, 5, 42, 2), 84);
	CHECK_EQ_INT(engine_map_kept_unit(&t, 3, 42, 1, 42 * 2 + 5), 42 + 5);
	CHECK(engine_map_kept_unit(&t, 3, 42, 1, 42 + 5) == UINT64_MAX);
	CHECK_EQ_INT(engine_map_kept_unit(&w, 3, 42, 1, 3), 3);
	/* a warp map of many records keeps the first blocks: 5 blocks of 2
	 * warps, 1 in 2 = blocks 0-2, units 0-5 at their own index */
	struct probe_map wp = { .level = PROBE_LEVEL_WARP, .cap = 4, .rec_size = 8 };
	CHECK(engine_map_sampled(&wp) && engine_map_sample_prefix(&wp) && !engine_map_sample_prefix(&t));
	CHECK_EQ_INT(engine_map_bytes(&wp, 5, 64, 1), 48 + 6 * 32);
	CHECK_EQ_INT(engine_map_kept_unit(&wp, 5, 64, 1, 5), 5);
	CHECK(engine_map_kept_unit(&wp, 5, 64, 1, 6) == UINT64_MAX);
	/* the smallest shift that fits: 1M threads x 4 x 8 bytes = 32 MiB, plus
	 * a warp map that sampling does not shrink */
	struct engine_result plan;
	memset(&plan, 0, sizeof plan);
	plan.n_maps = 2;
	plan.maps[0].map = t;
	plan.maps[1].map = w;
	uint64_t off[ENGINE_MAX_MAPS];
	uint64_t full = engine_plan_bytes(&plan, 4096, 256, 0, off);
	CHECK_EQ_INT(off[0], 0);
	CHECK_EQ_INT(off[1], engine_map_bytes(&t, 4096, 256, 0)); /* a multiple of 256 already */
	CHECK_EQ_INT(full, off[1] + engine_map_bytes(&w, 4096, 256, 0));
	CHECK_EQ_INT(engine_plan_shift(&plan, 4096, 256, 0, full), 0);
	CHECK_EQ_INT(engine_plan_shift(&plan, 4096, 256, 0, full - 1), 1);
	CHECK_EQ_INT(engine_plan_shift(&plan, 4096, 256, 2, full), 2); /* asked for 1 in 4 */
	CHECK_EQ_INT(engine_plan_shift(&plan, 4096, 256, 0, full / 4 + 5 * 1048576), 2);
	CHECK_EQ_INT(engine_plan_shift(&plan, 4096, 256, 0, 1), 12); /* nothing fits: one block */
	CHECK(engine_plan_bytes(&plan, 4096, 256, 12, NULL) > 1);
	plan.n_maps = 1;
	plan.maps[0].map = w;
	CHECK_EQ_INT(engine_plan_shift(&plan, 4096, 256, 3, 1), 0); /* warp maps are never sampled */
}

/* Enumerates every thread of a launch and applies the prologue's formulas:
 * every unit index is in range, thread units are hit once each, warp units
 * once each by the storing (lane 0) thread. */
static void emulate_launch(const struct probe_map *m, const uint32_t grid[3], const uint32_t block[3])
{
	uint64_t blocks = (uint64_t)grid[0] * grid[1] * grid[2];
	uint32_t threads = block[0] * block[1] * block[2];
	uint64_t units = engine_map_units(m, blocks, threads);
	unsigned char *hits = calloc(units ? units : 1, 1);
	int bad = 0;
	uint32_t c[3], t[3];
	for (c[2] = 0; c[2] < grid[2]; c[2]++)
	for (c[1] = 0; c[1] < grid[1]; c[1]++)
	for (c[0] = 0; c[0] < grid[0]; c[0]++)
	for (t[2] = 0; t[2] < block[2]; t[2]++)
	for (t[1] = 0; t[1] < block[1]; t[1]++)
	for (t[0] = 0; t[0] < block[0]; t[0]++) {
		int lane0 = 0;
		uint64_t u = engine_map_unit_index(m, grid, block, c, t, &lane0);
		if (u >= units) {
			bad++;
			continue;
		}
		if (lane0)
			hits[u]++;
	}
	uint64_t once = 0;
	for (uint64_t u = 0; u < units; u++)
		once += hits[u] == 1;
	CHECKF(bad == 0 && once == units, "grid %ux%ux%u block %ux%ux%u level %d: %d out of range, %llu of %llu units hit once",
	       grid[0], grid[1], grid[2], block[0], block[1], block[2], m->level, bad,
	       (unsigned long long)once, (unsigned long long)units);
	/* the record area of the last unit ends exactly at the buffer end */
	uint64_t end = engine_map_records_offset(m, blocks, threads) +
		       units * (uint64_t)m->cap * m->rec_size;
	CHECK_EQ_INT(end, engine_map_bytes(m, blocks, threads, 0));
	free(hits);
}

static void test_emulation(void)
{
	static const uint32_t shapes[][6] = {
		{ 1, 1, 1, 33, 1, 1 }, { 2, 1, 1, 7, 3, 2 }, { 3, 2, 2, 7, 3, 2 },
		{ 4, 5, 6, 32, 1, 1 }, { 2, 3, 1, 16, 16, 1 }, { 1, 1, 1, 1, 1, 1 },
		{ 5, 1, 3, 65, 2, 1 }, { 1, 2, 1, 1024, 1, 1 }, { 2, 2, 2, 5, 5, 5 },
	};
	struct probe_map w = { .level = PROBE_LEVEL_WARP, .cap = 2, .rec_size = 16 };
	struct probe_map t = { .level = PROBE_LEVEL_THREAD, .cap = 3, .rec_size = 8 };
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
		emulate_launch(&w, shapes[i], shapes[i] + 3);
		emulate_launch(&t, shapes[i], shapes[i] + 3);
	}
	/* 33 threads: the lone thread 32 is lane 0 of warp 1 */
	uint32_t g[3] = { 1, 1, 1 }, b[3] = { 33, 1, 1 }, c[3] = { 0, 0, 0 }, tid[3] = { 32, 0, 0 };
	int lane0 = 0;
	CHECK_EQ_INT(engine_map_unit_index(&w, g, b, c, tid, &lane0), 1);
	CHECK(lane0);
	/* block (1,1,0) of a 3x2 grid of 7x3x2 blocks: block_linear 4, 2 warps each */
	uint32_t g2[3] = { 3, 2, 1 }, b2[3] = { 7, 3, 2 }, c2[3] = { 1, 1, 0 }, t2[3] = { 6, 2, 1 };
	CHECK_EQ_INT(engine_map_unit_index(&w, g2, b2, c2, t2, &lane0), 4 * 2 + 41 / 32);
	CHECK(!lane0);
	CHECK_EQ_INT(engine_map_unit_index(&t, g2, b2, c2, t2, &lane0), 4 * 42 + 41);
}

static void test_pick_arch(void)
{
	char arch[32];
	CHECK(assemble_pick_arch(".version 8.0\n.target sm_90a\n", 80, arch, sizeof arch) == 0 &&
	      !strcmp(arch, "sm_90a"));
	CHECK(assemble_pick_arch(".version 8.0\n.target sm_75\n", 80, arch, sizeof arch) == 0 &&
	      !strcmp(arch, "sm_80"));
	CHECK(assemble_pick_arch(".version 8.0\n.target sm_75, debug\n", 0, arch, sizeof arch) == 0 &&
	      !strcmp(arch, "sm_75"));
	CHECK(assemble_pick_arch("no target here", 0, arch, sizeof arch) < 0);
	/* ptxas errors come back with its message */
	char *cause = NULL;
	struct assemble_info info = { .registers = -1 };
	const char *bad = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n\tbogus.op %r1;\n}\n";
	CHECK(assemble_ptxas(bad, strlen(bad), "sm_80", NULL, &info, &cause) < 0);
	CHECKF(cause && strstr(cause, "ptxas"), "%s", cause ? cause : "");
	free(cause);
}

/* A bulk tensor copy (tensor map + coordinates, no plain address) is
 * skipped by hooks that use ADDR, and counted. */
static void test_addr_forms(void)
{
	struct probe *p;
	struct ptx_inject_result ir;
	char *cause = NULL, *out;
	static const char tma[] =
		".visible .entry k_tma(.param .u64 k_tma_param_0)\n{\n"
		"\t.reg .b32 %r<4>;\n"
		"\t.reg .b64 %rd<4>;\n"
		"\tld.param.u64 %rd1, [k_tma_param_0];\n"
		"\tcp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2}], [%r3];\n"
		"\tret;\n}\n";
	p = probe_memtrace("cp.async.bulk");
	out = instrument(tma, "k_tma", &p, 1, &ir, &cause);
	CHECKF(out, "%s", cause ? cause : "");
	if (out) {
		CHECK(strstr(out, "mov.b64 %ntop_addr") == NULL && strstr(out, "mov.u64 %ntop_addr") == NULL);
		CHECK_EQ_INT(ir.sites_no_addr, 1);
	}
	free(out);
	free(cause);
	probe_free(p);
}

/* Class regions come in bursts: cp.async with address arithmetic between
 * is one run (not one per copy), a test_wait spin loop one segment (the
 * branch back is the wait's), a long stretch between two loads two runs. */
static const char *K_BURSTS =
	".visible .entry k_bursts(\n"
	"\t.param .u64 k_bursts_param_0\n"
	")\n{\n"
	"\t.reg .pred %p<2>;\n"
	"\t.reg .b32 %r<24>;\n"
	"\t.reg .b64 %rd<4>;\n"
	"\tld.param.u64 %rd1, [k_bursts_param_0];\n"
	"\tmov.u64 %rd3, 0;\n"
	"\tmov.u32 %r1, %tid.x;\n"
	"\tshl.b32 %r2, %r1, 4;\n"
	"\tcp.async.cg.shared.global [%r2], [%rd1], 16;\n"
	"\tadd.u32 %r3, %r2, 4096;\n"
	"\tadd.s64 %rd2, %rd1, 4096;\n"
	"\tcp.async.cg.shared.global [%r3], [%rd2], 16;\n"
	"\tcp.async.commit_group;\n"
	"$L_wait:\n"
	"\tmbarrier.test_wait.shared.b64 %p1, [%r2], %rd3;\n"
	"\t@!%p1 bra $L_wait;\n"
	"\tld.global.u32 %r4, [%rd1];\n"
	"\tadd.u32 %r5, %r4, 1;\n"
	"\tadd.u32 %r6, %r5, 1;\n"
	"\tadd.u32 %r7, %r6, 1;\n"
	"\tadd.u32 %r8, %r7, 1;\n"
	"\tadd.u32 %r9, %r8, 1;\n"
	"\tadd.u32 %r10, %r9, 1;\n"
	"\tadd.u32 %r11, %r10, 1;\n"
	"\tadd.u32 %r12, %r11, 1;\n"
	"\tadd.u32 %r13, %r12, 1;\n"
	"\tld.global.u32 %r14, [%rd1+4];\n"
	"\tst.global.u32 [%rd1], %r14;\n"
	"\tret;\n"
	"}\n";

/* kernel probed by the regions probe with regions `specs`; NULL (checked
 * failed) when the probe or the injection fails. */
static char *instrument_regions(const char *kernel, const char *name, const char *const *specs, int n)
{
	struct probe *p = NULL;
	char *cause = NULL, *out = NULL;
	CHECKF(probe_load_file(testlib_src("probes/regions.toml"), &p, &cause) == 0, "%s", cause ? cause : "");
	if (!p || probe_set_regions(p, specs, n, &cause) < 0) {
		CHECKF(0, "%s", cause ? cause : "");
	} else {
		struct ptx_inject_result ir;
		out = instrument(kernel, name, &p, 1, &ir, &cause);
		CHECKF(out, "%s", cause ? cause : "");
	}
	free(cause);
	probe_free(p);
	return out;
}

static void test_class_bursts(void)
{
	const char *specs[] = { "async=@async", "wait=@wait", "load=@load" };
	char *out = instrument_regions(K_BURSTS, "k_bursts", specs, 3);
	if (out) {
		/* REGION is written as an immediate: count each region's begins */
		CHECK_EQ_INT(count_str(out, "mov.u32 %ntop_p0_rg_t, 0;\n\tshl.b32 %ntop_p0_rg_t, %ntop_p0_rg_t, 24;"), 2);
		CHECK_EQ_INT(count_str(out, "mov.u32 %ntop_p0_rg_t, 1;\n\tshl.b32 %ntop_p0_rg_t, %ntop_p0_rg_t, 24;"), 2);
		CHECK_EQ_INT(count_str(out, "mov.u32 %ntop_p0_rg_t, 2;\n\tshl.b32 %ntop_p0_rg_t, %ntop_p0_rg_t, 24;"), 4);
		/* the spin loop's branch back stays inside the wait: no end before it */
		const char *bra = strstr(out, "@!%p1 bra $L_wait;");
		CHECK(bra && !strstr(bra - 40 > out ? bra - 40 : out, "0x40000000;\n\t@!%p1 bra"));
		check_assembles("bursts", out);
	}
	free(out);
}

/* A fence after a barrier waits too (Triton's fence.proxy.async before
 * wgmma reads what cp.async wrote; fence.acq_rel here, for sm_80's ptxas):
 * it belongs to the wait's run, so the wait's END comes after it, not
 * between the barrier and the fence. */
static const char *K_FENCE_WAIT =
	".visible .entry k_fence_wait(\n"
	"\t.param .u64 k_fence_wait_param_0\n"
	")\n{\n"
	"\t.reg .b32 %r<4>;\n"
	"\t.reg .b64 %rd<2>;\n"
	"\tld.param.u64 %rd1, [k_fence_wait_param_0];\n"
	"\tcp.async.wait_group 0;\n"
	"\tbar.sync 0;\n"
	"\tfence.acq_rel.cta;\n"
	"\tmov.u32 %r1, %tid.x;\n"
	"\tst.global.u32 [%rd1], %r1;\n"
	"\tret;\n"
	"}\n";

static void test_fence_in_wait(void)
{
	const char *specs[] = { "wait=@wait" };
	char *out = instrument_regions(K_FENCE_WAIT, "k_fence_wait", specs, 1);
	if (out) {
		/* one run: a begin and an end */
		CHECK_EQ_INT(count_str(out, "mov.u32 %ntop_p0_rg_t, 0;\n\tshl.b32 %ntop_p0_rg_t, %ntop_p0_rg_t, 24;"), 2);
		const char *fence = strstr(out, "fence.acq_rel"), *end = strstr(out, ", 0x40000000;");
		CHECK(fence && end && end > fence);
		check_assembles("fence_wait", out);
	}
	free(out);
}

/* Every statement of `body` after its declarations, in order, in `copy`
 * (labels and branch targets with the copy's suffix taken off). */
static int holds_body_in_order(const char *body, const char *copy)
{
	char *plain = strdup(copy);
	for (char *s; (s = strstr(plain, "_ntop_plain"));)
		memmove(s, s + strlen("_ntop_plain"), strlen(s + strlen("_ntop_plain")) + 1);
	const char *at = plain, *line = strstr(body, "{\n") + 2;
	int ok = 1;
	for (const char *nl; ok && (nl = strchr(line, '\n')); line = nl + 1) {
		char want[256];
		snprintf(want, sizeof want, "%.*s", (int)(nl - line), line);
		const char *t = want + strspn(want, "\t ");
		if (!*t || !strcmp(t, "}") || !strncmp(t, ".reg", 4))
			continue;
		const char *hit = strstr(at, t);
		CHECKF(hit, "'%s' is not in the original body's copy (in order)", t);
		ok = hit != NULL;
		at = hit ? hit + strlen(t) : at;
	}
	free(plain);
	return ok;
}

/* Blocks block sampling skips run a copy of the original body: the kept
 * test comes before the entry's clock read, the copy holds the whole body
 * in order with its labels renamed, and calls original copies of the
 * instrumented functions. Not made when a map cannot be sampled
 * (block_sched). */
static void test_plain_copy(void)
{
	const char *specs[] = { "load=@load" };
	char *out = instrument_regions(K_BURSTS, "k_bursts", specs, 1);
	if (out) {
		CHECK_EQ_INT(count_str(out, "$ntop_plain:"), 1);
		CHECK(pos(out, "@!%ntop_ok bra $ntop_plain;") < pos(out, "%clock64"));
		CHECK(strstr(out, "@!%p1 bra $L_wait_ntop_plain;") != NULL);
		const char *copy = strstr(out, "$ntop_plain:");
		CHECK(copy && holds_body_in_order(K_BURSTS, copy));
		check_assembles("plain_copy", out);
	}
	free(out);
	/* the copy calls an original copy of the instrumented helper, defined
	 * before the kernel; the probed body still calls the probed helper */
	out = instrument_regions(K_CALL, "k_call", specs, 1);
	CHECK(out && strstr(out, "helper, (param0, %ntop_cx)"));
	const char *def = out ? strstr(out, ".func (.param .b32 func_retval0) helper_ntop_plain(") : NULL;
	CHECK(def && def < pos(out, ".entry k_call") && strstr(def, "ld.global.u32 %r1, [%rd1];\nst.param.b32"));
	CHECK(strstr(pos(out, "$ntop_plain:"), "call.uni (retval0), helper_ntop_plain, (param0);") != NULL);
	CHECK(out && holds_body_in_order(strstr(K_CALL, ".visible .entry"), strstr(out, "$ntop_plain:") ?
					 strstr(out, "$ntop_plain:") : ""));
	if (out)
		check_assembles("plain_copy_call", out);
	free(out);
	struct probe *p = probe_block_sched();
	struct ptx_inject_result ir;
	char *cause = NULL;
	out = instrument(K_BURSTS, "k_bursts", &p, 1, &ir, &cause);
	CHECKF(out && !strstr(out, "ntop_plain"), "%s", cause ? cause : "block_sched got a plain copy");
	free(out);
	free(cause);
	cause = NULL;
	probe_free(p);
	/* a thread map keeps 1 block in 2^s, a warp map the first blocks: no
	 * one test says which blocks are kept, so no copy */
	struct probe *mixed[2] = { probe_memtrace("ld.global"), NULL };
	CHECK(probe_load_file(testlib_src("probes/regions.toml"), &mixed[1], &cause) == 0);
	out = mixed[1] ? instrument(K_BURSTS, "k_bursts", mixed, 2, &ir, &cause) : NULL;
	CHECKF(out && !strstr(out, "ntop_plain"), "%s", cause ? cause : "thread and warp maps got a plain copy");
	if (out)
		check_assembles("plain_mixed", out);
	free(out);
	free(cause);
	probe_free(mixed[0]);
	probe_free(mixed[1]);
}

int main(void)
{
	test_noret();
	test_exit_forms();
	test_addr_forms();
	test_rets();
	test_exit();
	test_3d_helpers();
	test_func_probed();
	test_class_bursts();
	test_fence_in_wait();
	test_plain_copy();
	test_counts_when_func_exits();
	test_block_map_counts_when_func_exits();
	test_noparam();
	test_errors();
	test_engine();
	test_bytes();
	test_map_plan();
	test_emulation();
	test_pick_arch();
	printf("%d probed kernels assembled\n", n_assembled);
	return testlib_report();
}
