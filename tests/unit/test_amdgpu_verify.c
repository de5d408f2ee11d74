/* GCN probes (isa = "gcn"): the loader's isa key, the snippet reader and
 * the verifier's rules by allow-list (amdgpu_snippet.c, amdgpu_verify.c),
 * each refusal with its TOML line, and the built-in probes/amd/ files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/amdgpu/amdgpu_snippet.h"
#include "engine/probe/probe.h"
#include "engine/probe/verify.h"
#include "testlib.h"

#define HEAD "ntop_probe = 1\nname = \"t\"\nisa = \"gcn\"\n"
#define WAVE_MAP "[map]\nlevel = \"warp\"\nfields = [\"a:u64\", \"b:u32\", \"c:u32\"]\n"
#define LANE_MAP "[map]\nlevel = \"thread\"\ncap = 4\nfields = [\"addr:u64\", \"x:u32\", \"y:u32\"]\n"

/* Loads and verifies; returns the cause (malloc'd) or NULL when accepted. */
static char *check(const char *toml)
{
	struct probe *p = NULL;
	char *cause = NULL;
	if (probe_load_string(toml, "g.toml", &p, &cause) == 0)
		verify_probe(p, &cause);
	probe_free(p);
	return cause;
}

static void ok(const char *toml)
{
	char *cause = check(toml);
	CHECKF(cause == NULL, "refused: %s", cause);
	free(cause);
}

static void refused(const char *toml, const char *where, const char *what)
{
	char *cause = check(toml);
	CHECKF(cause && strncmp(cause, where, strlen(where)) == 0 && strstr(cause, what), "want %s...%s..., got %s",
	       where, what, cause ? cause : "(accepted)");
	free(cause);
}

static void test_accepted(void)
{
	ok(HEAD WAVE_MAP "[[hook]]\nat = \"entry\"\nasm = \"\"\"\n.sgpr %s:2, %g:2, %e, %m\n"
	   "s_mov_b64 %s, CLOCK   // the clock\ns_mov_b64 %g, GTIMER\n\"\"\"\n"
	   "[[hook]]\nat = \"exit\"\nasm = \"\"\"\ns_mov_b64 %g, CLOCK\ns_sub_u32 %e, %g.lo, %s.lo\n"
	   "s_mov_b32 %m, SMID ; why\nSAVE.u64 {%s}\nSAVE.u32 {%e, %m}\n\"\"\"\n");
	ok(HEAD LANE_MAP "[[hook]]\nat = [\"global_load\", \"flat_load\"]\nwhen = \"before\"\nasm = \"\"\"\n"
	   ".vgpr %n, %p:2\n.sgpr %k, %c:2\nv_add_u32 %n, BYTES, %n\ns_mov_b32 %k, BYTES\ns_mov_b64 %c, CLOCK\n"
	   "v_mad_u64_u32 %p, null, v2, 1, v[4:5]\nSAVE.u64 {ADDR}\nSAVE.u32 {%c.lo, %n}\n\"\"\"\n"
	   "[[hook]]\nat = \"exit\"\nasm = \"SAVE.u64 {0}\\nSAVE.u32 {s5, v3}\"\n");
	ok(HEAD "[[hook]]\nat = \"entry\"\nasm = \"\"\"\n.vgpr %l\n.sgpr %f\nv_mbcnt_lo_u32_b32 %l, -1, 0\n"
	   "v_readfirstlane_b32 %f, %l\ns_cmp_eq_u32 %f, exec_lo\ns_cselect_b32 %f, 1, 0\n\"\"\"\n");
}

static void test_rules(void)
{
#define ENTRY(body) HEAD "[[hook]]\nat = \"entry\"\nasm = \"\"\"\n.sgpr %a:2, %b\n.vgpr %v\n" body "\"\"\"\n"
	/* the snippet starts on line 7 of the file (after asm = """); declarations on 7-8 */
	refused(ENTRY("s_mov_b32 s5, 1\n"), "g.toml:9: rule 1", "writes s5, which the probe did not declare");
	refused(ENTRY("s_mov_b64 exec, %a\n"), "g.toml:9: rule 1", "writes exec");
	refused(ENTRY("v_mov_b32 %b, 0\n"), "g.toml:9: rule 1", "a scalar register");
	refused(ENTRY("s_mov_b32 %a, 0\n"), "g.toml:9: syntax", "%a is 2 registers wide");
	refused(ENTRY("v_cmp_eq_u32 vcc, %v, 0\n"), "g.toml:9: rule 1", "VCC or EXEC");
	refused(ENTRY("v_add_co_u32 %v, vcc, %v, 1\n"), "g.toml:9: rule 1", "VCC or EXEC");
	refused(ENTRY("s_and_saveexec_b64 %a, %a\n"), "g.toml:9: rule 1", "writes EXEC");
	refused(ENTRY("\n\ns_cbranch_scc1 1\n"), "g.toml:11: rule 2", "branches");
	refused(ENTRY("s_endpgm\n"), "g.toml:9: rule 2", "ends the program");
	refused(ENTRY("s_barrier\n"), "g.toml:9: rule 2", "synchronises");
	refused(ENTRY("s_waitcnt lgkmcnt(0)\n"), "g.toml:9: rule 2", "counters");
	refused(ENTRY("L1:\n"), "g.toml:9: rule 2", "label");
	refused(ENTRY("ds_read_b32 %v, v1\n"), "g.toml:9: rule 3", "LDS");
	refused(ENTRY("s_swappc_b64 %a, s[4:5]\n"), "g.toml:9: rule 4", "call");
	refused(ENTRY("global_store_dword v1, v2, off\n"), "g.toml:9: rule 5", "record values with SAVE");
	refused(ENTRY("global_load_dword %v, v1, off\n"), "g.toml:9: rule 5", "accesses memory");
	refused(ENTRY("s_load_dword %b, s[4:5], 0\n"), "g.toml:9: rule 5", "accesses memory");
	refused(ENTRY("s_memtime %a\n"), "g.toml:9: rule 5", "s_mov_b64 %x, CLOCK");
	refused(ENTRY("v_readlane_b32 %b, v1, 0\n"), "g.toml:9: rule 6", "another lane");
	refused(ENTRY("v_mov_b32_dpp %v, v1 quad_perm:[0,0,0,0]\n"), "g.toml:9: rule 6", "DPP");
	refused(ENTRY("v_mov_b32 %v, v1 row_shr:1\n"), "g.toml:9: rule 6", "DPP");
	refused(ENTRY("s_setreg_b32 hwreg(HW_REG_MODE), %b\n"), "g.toml:9: rule 6", "modes");
	refused(ENTRY("v_mfma_f32_4x4x1f32 a[0:3], v0, v1, a[0:3]\n"), "g.toml:9: rule 6", "matrix");
	refused(ENTRY("v_sin_f32 %v, v1\n"), "g.toml:9: syntax", "not among the instructions");
	refused(ENTRY("s_mov_b32 %q, 1\n"), "g.toml:9: syntax", "%q is not declared");
	refused(ENTRY("s_add_u32 %b, %zz, 1\n"), "g.toml:9: syntax", "%zz is not declared");
	refused(ENTRY("s_mov_b32 %b, CLOCK\n"), "g.toml:9: helper", "CLOCK is read with s_mov_b64");
	refused(ENTRY("s_mov_b32 %b, BYTES\n"), "g.toml:9: helper", "BYTES is only defined");
	refused(ENTRY("s_mov_b32 %b, OUT\n"), "g.toml:9: helper", "OUT is not available");
	refused(ENTRY("s_mov_b32 CLOCK, 1\n"), "g.toml:9: rule 1", "CLOCK, which is read-only");
	refused(HEAD "[[hook]]\nat = \"entry\"\nasm = \".sgpr %ntop_x\"\n", "g.toml:6: syntax", "reserved");
	refused(HEAD "[[hook]]\nat = \"entry\"\nasm = \".sgpr %a:3\"\n", "g.toml:6: syntax", "1 or 2 registers");
	refused(HEAD "[[hook]]\nat = \"entry\"\nasm = \".sgpr %a\\n.vgpr %a\"\n", "g.toml:6: syntax", "declared twice");
	refused(HEAD "[[hook]]\nat = \"entry\"\nasm = \".globl x\"\n", "g.toml:6: syntax", "only .sgpr and .vgpr");
#undef ENTRY
}

static void test_helpers(void)
{
	/* SAVE: a map is needed; wave maps save scalars; sizes, layout, cap */
	refused(HEAD "[[hook]]\nat = \"entry\"\nasm = \"SAVE.u32 {1}\"\n", "g.toml:6: helper", "needs a map");
	refused(HEAD WAVE_MAP "[[hook]]\nat = \"exit\"\nasm = \".vgpr %v\\nSAVE.u64 {0}\\nSAVE.u32 {%v, 0}\"\n",
		"g.toml:9: helper", "per lane");
	refused(HEAD WAVE_MAP "[[hook]]\nat = \"exit\"\nasm = \"SAVE.u32 {0, 0}\\nSAVE.u64 {0}\"\n", "g.toml:9: helper",
		"value 1 lands at byte 0");
	refused(HEAD WAVE_MAP "[[hook]]\nat = \"exit\"\nasm = \"SAVE.u64 {0}\"\n", "g.toml:9: helper",
		"whole 16-byte records");
	refused(HEAD WAVE_MAP "[[hook]]\nat = \"exit\"\nasm = \"SAVE.u64 {0}\\nSAVE.u32 {0, 0}\\nSAVE.u64 {0}\\n"
		"SAVE.u32 {0, 0}\"\n", "g.toml:9: helper", "raise cap");
	refused(HEAD WAVE_MAP "[[hook]]\nat = \"exit\"\nasm = \"SAVE.u64 {s4}\\nSAVE.u32 {0, 0}\"\n", "g.toml:9: helper",
		"s4 is 32 bits");
	refused(HEAD WAVE_MAP "[[hook]]\nat = \"exit\"\nasm = \"SAVE.u16 {0}\"\n", "g.toml:9: helper", ".u32 or .u64");
	refused(HEAD WAVE_MAP "[[hook]]\nat = \"exit\"\nasm = \"SAVE.u64 {x}\"\n", "g.toml:9: syntax", "not 'x'");
	/* ADDR: per lane, global/flat/buffer hooks only, u64 */
	refused(HEAD LANE_MAP "[[hook]]\nat = \"exit\"\nasm = \"SAVE.u64 {ADDR}\\nSAVE.u32 {0, 0}\"\n",
		"g.toml:10: helper", "ADDR is only defined");
	refused(HEAD LANE_MAP "[[hook]]\nat = [\"global_load\", \"scratch_load\"]\nwhen = \"before\"\n"
		"asm = \"SAVE.u64 {ADDR}\\nSAVE.u32 {0, 0}\"\n", "g.toml:11: helper", "not scratch_load");
	ok(HEAD LANE_MAP "[[hook]]\nat = [\"buffer_load\", \"buffer_atomic\"]\nwhen = \"before\"\n"
	   "asm = \"SAVE.u64 {ADDR}\\nSAVE.u32 {0, 0}\"\n");
	refused(HEAD LANE_MAP "[[hook]]\nat = [\"global_load\"]\nwhen = \"before\"\nasm = \".vgpr %v\\n"
		"v_mov_b32 %v, ADDR\"\n", "g.toml:11: helper", "SAVE.u64 {ADDR}");
	refused(HEAD LANE_MAP "[[hook]]\nat = [\"v_mfma\"]\nwhen = \"before\"\nasm = \".vgpr %v\\nv_mov_b32 %v, BYTES\"\n",
		"g.toml:11: helper", "vector memory");
	/* the loader: isa values, no `after` on AMD */
	refused("ntop_probe = 1\nname = \"t\"\nisa = \"sass\"\n[[hook]]\nat = \"entry\"\nasm = \"s_nop 0\"\n",
		"g.toml:3:7: ", "isa must be \"ptx\" (NVIDIA) or \"gcn\" (AMD)");
	refused(HEAD "[[hook]]\nat = [\"global_load\"]\nwhen = \"after\"\nasm = \"s_nop 0\"\n", "g.toml:6:8: ",
		"AMD probes run before");
}

static void test_snippet(void)
{
	struct probe *p = NULL;
	struct amdgpu_snip s;
	CHECK(probe_load_string(HEAD "[[hook]]\nat = \"entry\"\nasm = \"\"\"\n.sgpr %a:2, %b\n"
				"s_getreg_b32 %b, hwreg(HW_REG_HW_ID, 8, 4)  // id\n"
				"v_add_nc_u32 v0, v1, v2 clamp\nSAVE.u32 {%a.lo, 7}\n\"\"\"\n", "g.toml", &p, NULL) == 0);
	CHECK(p && amdgpu_snip_parse(p, &s, NULL) == 0);
	if (p && s.n_hooks == 1 && s.hooks[0].n == 3) {
		const struct amdgpu_stmt *v = s.hooks[0].v;
		CHECK(!strcmp(v[0].mnemonic, "s_getreg_b32") && v[0].n_ops == 2 && !strcmp(v[0].ops[0], "%b") &&
		      !strcmp(v[0].ops[1], "hwreg(HW_REG_HW_ID, 8, 4)") && v[0].line == 8);
		CHECK(v[1].n_ops == 3 && !strcmp(v[1].mods, "clamp") && !strcmp(v[1].ops[2], "v2"));
		CHECK(v[2].kind == AMDGPU_STMT_SAVE && v[2].n_ops == 2 && !strcmp(v[2].ops[0], "%a.lo"));
		int part;
		const struct amdgpu_sreg *r = amdgpu_snip_ref(&s, "%a.hi", &part);
		CHECK(r && r->count == 2 && !r->vector && part == 2);
		CHECK(!amdgpu_snip_ref(&s, "%b.lo", &part)); /* a single register has no halves */
		CHECK(!amdgpu_snip_ref(&s, "%c", &part));
		amdgpu_snip_done(&s);
	} else {
		CHECKF(0, "snippet not read as 3 statements");
	}
	CHECK_EQ_INT(amdgpu_snip_dest_width("s_mov_b64"), 2);
	CHECK_EQ_INT(amdgpu_snip_dest_width("s_bcnt1_i32_b64"), 1);
	CHECK_EQ_INT(amdgpu_snip_dest_width("v_mad_u64_u32"), 2);
	CHECK_EQ_INT(amdgpu_snip_dest_width("v_cvt_f32_u32"), 1);
	probe_free(p);
	/* a PTX probe stays PTX, a GCN probe says so */
	CHECK(probe_load_string("ntop_probe = 1\nname = \"t\"\n[[hook]]\nat = \"entry\"\nasm = \"mov.u32 %r, 0;\"\n",
				"g.toml", &p, NULL) == 0 && p->isa == PROBE_ISA_PTX);
	probe_free(p);
	/* a whole-mnemonic pattern ("s_barrier$") is GCN only */
	CHECK(probe_load_string(HEAD "[[hook]]\nat = [\"s_barrier$\"]\nwhen = \"before\"\nasm = \"s_nop 0\"\n", "g.toml",
				&p, NULL) == 0 && p->hooks[0].n_opcodes == 1 && !strcmp(p->hooks[0].opcodes[0], "s_barrier$"));
	probe_free(p);
	p = NULL;
	char *why = NULL;
	CHECK(probe_load_string("ntop_probe = 1\nname = \"t\"\n[[hook]]\nat = [\"bar.sync$\"]\nwhen = \"before\"\n"
				"asm = \"mov.u32 %r, 0;\"\n", "g.toml", &p, &why) < 0 && why && strstr(why, "g.toml:4"));
	free(why);
	CHECK(probe_load_string(HEAD "[[hook]]\nat = [\"$\"]\nwhen = \"before\"\nasm = \"s_nop 0\"\n", "g.toml", &p,
				NULL) < 0);
}

static void test_builtin(void)
{
	static const char *const files[] = { "probes/amd/block_sched.toml", "probes/amd/dmat.toml",
					     "probes/amd/gmem_bytes.toml", "probes/amd/dmat_global.toml",
					     "probes/amd/warp_progress.toml", "probes/amd/tensorop_count.toml" };
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		struct probe *p = NULL;
		char *cause = NULL;
		CHECKF(probe_load_file(testlib_src(files[i]), &p, &cause) == 0 && verify_probe(p, &cause) == 0, "%s: %s",
		       files[i], cause ? cause : "");
		CHECK(p && p->isa == PROBE_ISA_GCN && p->has_map);
		probe_free(p);
		free(cause);
	}
}

int main(void)
{
	test_accepted();
	test_rules();
	test_helpers();
	test_snippet();
	test_builtin();
	return testlib_report();
}
