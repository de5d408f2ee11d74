/* Verifier: every rule rejects with the right TOML line:col and the
 * offending instruction; the shipped and NEUTRINO probes pass; allowed forms
 * pass. The escapes (spellings ptxas reads differently, instructions off the
 * allow-list) are in test_verify_escapes.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/probe/probe.h"
#include "engine/probe/verify.h"
#include "testlib.h"

/* Line (1-based) of the first occurrence of needle in the file; 0 if none. */
static int line_of(const char *rel, const char *needle)
{
	char *text = testlib_slurp(testlib_src(rel), NULL);
	const char *hit = text ? strstr(text, needle) : NULL;
	int line = 0;
	if (hit) {
		line = 1;
		for (const char *q = text; q < hit; q++)
			line += *q == '\n';
	}
	free(text);
	return line;
}

static void file_passes(const char *rel)
{
	struct probe *p = NULL;
	char *cause = NULL;
	int r = probe_load_file(testlib_src(rel), &p, &cause);
	CHECKF(r == 0, "%s", cause);
	if (r == 0) {
		r = verify_probe(p, &cause);
		CHECKF(r == 0, "%s should pass: %s", rel, cause);
	}
	probe_free(p);
	free(cause);
}

/* Does cause start with "PREFIX:LINE:COL: RULE", COL any number when col is 0? */
static int at_rule(const char *cause, const char *prefix, int line, int col, const char *rule)
{
	char head[512];
	snprintf(head, sizeof head, "%s:%d:", prefix, line);
	if (!cause || strncmp(cause, head, strlen(head)) != 0)
		return 0;
	const char *q = cause + strlen(head);
	char *end;
	long c = strtol(q, &end, 10);
	if (end == q || (col && c != col) || strncmp(end, ": ", 2) != 0)
		return 0;
	return strncmp(end + 2, rule, strlen(rule)) == 0;
}

/* Loads tests/data/<rel> (must load) and expects the verifier to fail at
 * the line holding `line_needle` with `rule` and the instruction `insn`. */
static void file_fails(const char *rel, const char *line_needle, const char *rule, const char *insn)
{
	struct probe *p = NULL;
	char *cause = NULL;
	int r = probe_load_file(testlib_src(rel), &p, &cause);
	CHECKF(r == 0, "%s should load: %s", rel, cause);
	if (r != 0) {
		free(cause);
		return;
	}
	r = verify_probe(p, &cause);
	int line = line_of(rel, line_needle);
	CHECKF(line > 0, "%s: no '%s'", rel, line_needle);
	CHECKF(r == -1 && at_rule(cause, testlib_src(rel), line, 0, rule), "want \"%s:%d:COL: %s...\", got \"%s\"",
	       testlib_src(rel), line, rule, cause ? cause : "(null)");
	size_t cl = cause ? strlen(cause) : 0, il = strlen(insn);
	CHECKF(cl >= il && strcmp(cause + cl - il, insn) == 0, "want the instruction \"%s\" at the end of \"%s\"", insn,
	       cause ? cause : "(null)");
	probe_free(p);
	free(cause);
}

static void test_files(void)
{
	file_passes("probes/block_sched.toml");
	file_passes("tests/data/neutrino_block_sched.toml");
	file_passes("tests/data/neutrino_gmem_bytes.toml");
	file_fails("tests/data/bad_write_kernel_reg.toml", "add.u32 %r1", "rule 1 (writes only its own registers): "
		   "writes %r1, which the probe did not declare", "add.u32 %r1, %r1, %mine;");
	file_fails("tests/data/bad_branch.toml", "@%early bra", "rule 2 (no control flow)", "@%early bra $L__BB0_2;");
	file_fails("tests/data/bad_shared.toml", "ld.shared", "rule 3 (no shared memory)", "ld.shared.u32 %peek, [%rd1];");
	/* a one-line NEUTRINO snippet: all its lines sit on the `before` line */
	file_fails("tests/data/bad_call.toml", "before =", "rule 4 (no function calls)",
		   "call.uni (%ret), vprintf, (%rd1, %rd2);");
	file_fails("tests/data/bad_save_misaligned.toml", "SAVE.u64 {%t}", "helper: SAVE.u64 starts at byte 4",
		   "SAVE.u64 {%t};");
	file_fails("tests/data/bad_store_app_memory.toml", "st.global.u32 [ADDR]",
		   "rule 5 (writes memory only through SAVE)", "st.global.u32 [ADDR], %zero;");
	file_fails("tests/data/bad_warp_collective.toml", "shfl.sync",
		   "rule 6 (no warp-collective or resource instructions)", "shfl.sync.idx.b32 %v, %tid.x, 0, 31, -1;");
	file_fails("tests/data/bad_save_without_map.toml", "SAVE.u64 {%t}", "helper: SAVE needs a map", "SAVE.u64 {%t};");
	file_fails("tests/data/bad_addr_on_kernel_tp.toml", "mov.u64 %a, ADDR", "helper: ADDR is only defined in hooks "
		   "on memory instructions, not at kernel entry", "mov.u64 %a, ADDR;");
}

/* Snippet tests: a probe text loaded as "v.toml". */
static struct probe *load(const char *text)
{
	struct probe *p = NULL;
	char *cause = NULL;
	int r = probe_load_string(text, "v.toml", &p, &cause);
	CHECKF(r == 0, "load: %s\n%s", cause, text);
	free(cause);
	return p;
}

static void passes(const char *text)
{
	struct probe *p = load(text);
	char *cause = NULL;
	if (p) {
		int r = verify_probe(p, &cause);
		CHECKF(r == 0, "should pass: %s\n%s", cause, text);
	}
	probe_free(p);
	free(cause);
}

/* Expects "v.toml:LINE:COL: <rule>..." (COL any when 0) ending with insn
 * (when given). */
static void fails_at(const char *text, int line, int col, const char *rule, const char *insn)
{
	struct probe *p = load(text);
	char *cause = NULL;
	if (!p)
		return;
	int r = verify_probe(p, &cause);
	CHECKF(r == -1 && at_rule(cause, "v.toml", line, col, rule), "want \"v.toml:%d:%d: %s...\", got \"%s\"", line,
	       col, rule, cause ? cause : "(null)");
	if (insn && cause) {
		size_t cl = strlen(cause), il = strlen(insn);
		CHECKF(cl >= il && strcmp(cause + cl - il, insn) == 0, "want \"%s\" at the end of \"%s\"", insn, cause);
	}
	probe_free(p);
	free(cause);
}

static void fails(const char *text, int line, const char *rule, const char *insn)
{
	fails_at(text, line, 0, rule, insn);
}

/* Line 1-2 header; [[hook]] on 3; at on 4; asm on 5; snippet lines from 6. */
#define HEAD "ntop_probe = 1\nname = \"v\"\n"
#define ENTRY HEAD "[[hook]]\nat = \"entry\"\nasm = \"\"\"\n"
#define LOADS HEAD "[[hook]]\nat = [\"ld.global\"]\nwhen = \"before\"\nasm = \"\"\"\n" /* snippet from line 7 */
#define END "\"\"\"\n"
#define MAP24 "[map]\nlevel = \"warp\"\nfields = [\"start:u64\", \"gstart:u64\", \"elapsed:u32\", \"smid:u32\"]\n"

static void test_rule1(void)
{
	passes(ENTRY ".reg .b32 %a, %b<4>;\n.reg .pred %q;\nmov.u32 %a, %r5;   // reading kernel registers is fine\n"
	       "mov.u32 %b3, %tid.x;\nsetp.eq.u32 %q, %a, %b0;\n@%p1 add.u32 %a, %a, 1;\n"
	       "mov.b64 {%b1, %b2}, %rd4;\n"
	       "prefetch.global.L2 [%rd2];\nmembar.gl;\nfence.acq_rel.gpu;\nmov.u32 _, %a;\n" END);
	fails(ENTRY ".reg .b32 %b<4>;\nmov.u32 %b4, 1;\n" END, 7, "rule 1 (writes only its own registers): writes %b4,",
	      "mov.u32 %b4, 1;");
	fails(ENTRY ".reg .b32 %b<4>;\nmov.u32 %b01, 1;\n" END, 7, "rule 1", "mov.u32 %b01, 1;");
	fails(ENTRY ".reg .pred %mine;\nsetp.ne.u32 %mine|%p2, %r1, 0;\n" END, 7, "rule 1 (writes only its own "
	      "registers): writes %p2,", "setp.ne.u32 %mine|%p2, %r1, 0;");
	fails(ENTRY ".reg .b32 %lo;\nmov.b64 {%lo, %r9}, %rd1;\n" END, 7, "rule 1 (writes only its own registers): "
	      "writes %r9", "mov.b64 {%lo, %r9}, %rd1;");
	fails(ENTRY "atom.global.add.u32 %r2, [%rd1], 1;\n" END, 6, "rule 5", "atom.global.add.u32 %r2, [%rd1], 1;");
	fails(ENTRY ".reg .b32 %a;\nst.global.u32 [%rd1], %a;\n" END, 7, "rule 5", "st.global.u32 [%rd1], %a;");
	fails(ENTRY "red.global.add.u32 [%rd1], 1;\n" END, 6, "rule 5", "red.global.add.u32 [%rd1], 1;");
	fails(ENTRY "@%p1 ld.global.u32 %r3, [%rd1];\n" END, 6, "rule 1", "@%p1 ld.global.u32 %r3, [%rd1];");
	fails(LOADS "mov.u32 OUT, 0;\n" END, 7, "rule 1 (writes only its own registers): writes OUT, which stands for "
	      "the traced instruction's operand", "mov.u32 OUT, 0;");
	fails(ENTRY "mov.u32 SMID, 0;\n" END, 6, "rule 1", NULL);
	/* declared names are the probe's own, even when they look like nvcc's */
	passes(ENTRY ".reg .b32 %r<3>;\nmov.u32 %r2, 1;\n" END);
	fails(ENTRY ".reg .b32 %ntop_x;\n" END, 6, "rule 1 (writes only its own registers): registers named %ntop_* are "
	      "reserved", NULL);
	fails(ENTRY "mov.u32 %x, %ntop_buf;\n" END, 6, "rule 1 (writes only its own registers): registers named "
	      "%ntop_* are reserved", "mov.u32 %x, %ntop_buf;");
	/* registers declared by another hook of the same probe count */
	passes(HEAD "[[hook]]\nat = \"entry\"\nasm = \".reg .b64 %t0; mov.u64 %t0, CLOCK;\"\n"
	       "[[hook]]\nat = \"exit\"\nasm = \"mov.u64 %t0, CLOCK;\"\n");
}

static void test_rule2_4(void)
{
	fails_at(ENTRY "/* a comment\n over two lines */ bra.uni $L1;\n" END, 7, 20, "rule 2 (no control flow): 'bra.uni'",
	      "bra.uni $L1;");
	fails(ENTRY "ret;\n" END, 6, "rule 2", "ret;");
	/* empty statements do not end the scan early */
	fails(ENTRY ".reg .b32 %x;\nmov.u32 %x, 1;;\n ; ret;\n" END, 8, "rule 2", "ret;");
	fails(ENTRY "exit;\n" END, 6, "rule 2", "exit;");
	fails(ENTRY "trap;\n" END, 6, "rule 2", "trap;");
	fails(ENTRY "brx.idx %r1, $tbl;\n" END, 6, "rule 2", NULL);
	fails(ENTRY "bar.sync 0;\n" END, 6, "rule 2", "bar.sync 0;");
	fails(ENTRY "bar.warp.sync -1;\n" END, 6, "rule 2", "bar.warp.sync -1;");
	fails(ENTRY "barrier.sync.aligned 0;\n" END, 6, "rule 2", NULL);
	fails(ENTRY "DONE:\nmov.u32 %x, 1;\n" END, 6, "rule 2 (no control flow): label definitions", NULL);
	fails(ENTRY "call foo;\n" END, 6, "rule 4 (no function calls)", "call foo;");
	/* rule 3 */
	fails(ENTRY ".reg .b64 %s;\ncvta.to.shared.u64 %s, %rd1;\n" END, 7, "rule 3 (no shared memory)",
	      "cvta.to.shared.u64 %s, %rd1;");
	fails(ENTRY "st.shared::cta.u32 [%rd1], 1;\n" END, 6, "rule 3", NULL);
	fails(ENTRY "atom.shared.add.u32 %r1, [%rd1], 1;\n" END, 6, "rule 3", NULL);
	fails(ENTRY "mbarrier.arrive.b64 %rd1, [%rd2];\n" END, 6, "rule 3", NULL);
	fails(ENTRY ".shared .b32 tmp[4];\n" END, 6, "rule 3 (no shared memory): snippets cannot declare", NULL);
	passes(ENTRY ".reg .b32 %sz;\nmov.u32 %sz, %dynamic_smem_size;\n" END);
}

static void test_syntax(void)
{
	fails(ENTRY "mov.u32 %x, 1\n" END, 6, "syntax: statement does not end with ';'", "mov.u32 %x, 1");
	fails(ENTRY ".local .b32 buf[4];\n" END, 6, "syntax: only .reg declarations", NULL);
	fails(ENTRY "{ mov.u32 %x, 1; }\n" END, 6, "syntax: { } blocks", NULL);
	fails(ENTRY ".reg .b32 %x<0>;\n" END, 6, "syntax: bad register range", NULL);
	fails(ENTRY ".reg .b32 bare;\n" END, 6, "syntax: bad register name in .reg", NULL);
	fails_at(ENTRY ".reg .b32 %a, %b-c;\n" END, 6, 17, "syntax: unexpected text in .reg", NULL);
	/* NEUTRINO one-line snippet: every statement reports the key's line */
	fails_at("[s]\nposition = \"kernel\"\nbefore = \".reg .b32 %x;\\nmov.u32 %x, 1;\\nret;\"\n", 3, 42, "rule 2", "ret;");
}

static void test_helpers(void)
{
	passes(HEAD "[map]\nlevel = \"thread\"\ncap = 2\nfields = [\"start:u64\", \"gstart:u64\", \"elapsed:u32\", "
	       "\"smid:u32\"]\n[[hook]]\nat = \"exit\"\nasm = \"\"\"\n.reg .b64 %a;\n.reg .b32 %b;\n"
	       "SAVE.u64 {%a, %a};\nSAVE.u32 {%b, %b};\nSAVE.u64 {%a, %a};\nSAVE.u32 {%b, %b};\n" END);
	/* half a record */
	fails(HEAD MAP24 "[[hook]]\nat = \"exit\"\nasm = \"\"\"\n.reg .b64 %a;\nSAVE.u64 {%a, %a};\n" END, 10,
	      "helper: this snippet saves 16 bytes; it must save whole 24-byte records", "SAVE.u64 {%a, %a};");
	/* a u32 where the field is u64 */
	fails(HEAD MAP24 "[[hook]]\nat = \"exit\"\nasm = \"\"\"\n.reg .b64 %a;\n.reg .b32 %b;\n"
	      "SAVE.u64 {%a};\nSAVE.u32 {%b, %b};\nSAVE.u64 {%a};\n" END,
	      12, "helper: value 1 lands at byte 8 of the record, where field 'gstart' is u64", "SAVE.u32 {%b, %b};");
	/* a block map: SAVEs at entry and exit only (one record per block, no cursor) */
	passes(HEAD "[map]\nlevel = \"block\"\nfields = [\"end:u64:max\"]\n[[hook]]\nat = \"exit\"\nasm = \"\"\"\n"
	       ".reg .b64 %a;\nSAVE.u64 {%a};\n" END);
	fails(HEAD "[map]\nlevel = \"block\"\nfields = [\"end:u64:max\"]\n[[hook]]\nat = [\"ld.global\"]\n"
	      "when = \"before\"\nasm = \"\"\"\n.reg .b64 %a;\nSAVE.u64 {%a};\n" END, 11,
	      "helper: a block map's SAVEs sit in entry or exit hooks", "SAVE.u64 {%a};");
	fails(HEAD MAP24 "[[hook]]\nat = \"exit\"\nasm = \"\"\"\n.reg .f32 %fv;\nSAVE.f32 {%fv};\n" END, 10,
	      "helper: SAVE takes .u32 or .u64", NULL);
	fails(HEAD MAP24 "[[hook]]\nat = \"exit\"\nasm = \"\"\"\nSAVE.u32 {};\n" END, 9, "helper: SAVE takes one list",
	      NULL);
	fails(HEAD MAP24 "[[hook]]\nat = \"exit\"\nasm = \"\"\"\n@%p1 SAVE.u64 {%rd1, %rd2};\nSAVE.u32 {%r1, %r2};\n" END, 9,
	      "helper: a SAVE cannot be guarded", "@%p1 SAVE.u64 {%rd1, %rd2};");
	/* two records into a map that holds one per warp */
	fails(HEAD MAP24 "[[hook]]\nat = \"exit\"\nasm = \"\"\"\nSAVE.u64 {%rd1, %rd2};\nSAVE.u32 {%r1, %r2};\n"
	      "SAVE.u64 {%rd1, %rd2};\nSAVE.u32 {%r1, %r2};\n" END, 12,
	      "helper: this snippet saves 48 bytes, more than the map holds per warp (1 records of 24 bytes)", NULL);
	/* NEUTRINO map without fields: only sizes and alignment matter */
	fails("[s]\nposition = \"kernel\"\ndatamodel = \"warp:12\"\nafter = \"SAVE.u64 {%rd1};SAVE.u32 {%r1};\"\n", 4,
	      "helper: SAVE.u64 needs records whose size is a multiple of 8", NULL);
	/* ADDR / BYTES / OUT / IN */
	passes(LOADS ".reg .b64 %ad;\n.reg .b32 %by;\nmov.u64 %ad, ADDR;\nmov.u32 %by, BYTES;\nmov.u32 %by, IN1;\n" END);
	passes(HEAD "[[hook]]\nat = [\"cp.async.bulk\", \"atom.global\", \"red\", \"prefetch\", \"st\"]\nwhen = \"after\"\n"
	       "asm = \".reg .b64 %ad; mov.u64 %ad, ADDR;\"\n");
	fails(HEAD "[[hook]]\nat = [\"ld.global\", \"mma.sync\"]\nwhen = \"before\"\nasm = \"\"\"\n.reg .b64 %ad;\n"
	      "mov.u64 %ad, ADDR;\n" END, 8, "helper: ADDR is only defined on memory instructions", "mov.u64 %ad, ADDR;");
	fails(HEAD "[[hook]]\nat = \"exit\"\nasm = \"\"\"\n.reg .b32 %by;\nadd.u32 %by, %by, BYTES;\n" END, 7,
	      "helper: BYTES is only defined in hooks on memory instructions, not at kernel exit", NULL);
	fails(ENTRY ".reg .b32 %o;\nmov.u32 %o, IN2;\n" END, 7, "helper: IN2 names an operand", "mov.u32 %o, IN2;");
	/* names that only contain a helper word are not helpers */
	passes(ENTRY ".reg .b64 %ADDR_copy;\nmov.u64 %ADDR_copy, %rd1;\n" END);
	/* SITE at instruction and region sites, REGION at region boundaries */
	passes(LOADS ".reg .b32 %s;\nmov.u32 %s, SITE;\n" END);
	fails(ENTRY ".reg .b32 %s;\nmov.u32 %s, SITE;\n" END, 7, "helper: SITE names the traced instruction's site",
	      "mov.u32 %s, SITE;");
	fails(LOADS ".reg .b32 %s;\nmov.u32 %s, REGION;\n" END, 8, "helper: REGION is the region's number", NULL);
	passes(HEAD "regions = [\"a=@load\"]\n[[hook]]\nat = \"region\"\nwhen = \"end\"\nasm = \"\"\"\n"
	       ".reg .b32 %s;\nmov.u32 %s, REGION;\nmov.u32 %s, SITE;\n" END);
	fails(HEAD "regions = [\"a=@load\"]\n[[hook]]\nat = \"region\"\nwhen = \"end\"\nasm = \"\"\"\n"
	      ".reg .b64 %s;\nmov.u64 %s, ADDR;\n" END, 9, "helper: ADDR is only defined in hooks on memory instructions, "
	      "not at a region boundary", NULL);
	fails(HEAD "regions = [\"a=@load\"]\n[map]\nlevel = \"block\"\nfields = [\"n:u32:add\"]\n[[hook]]\n"
	      "at = \"region\"\nwhen = \"begin\"\nasm = \"\"\"\nSAVE.u32 {%r1};\n" END, 11,
	      "helper: a block map's SAVEs sit in entry or exit hooks", NULL);
}

static void test_string_path(void)
{
	struct probe *p = NULL;
	char *cause = NULL;
	CHECK(probe_load_string("[s]\nposition = \"kernel\"\nbefore = \"ret;\"\n", NULL, &p, &cause) == 0);
	if (p) {
		CHECK(strcmp(p->name, "probe") == 0 && strcmp(p->path, "<string>") == 0);
		CHECK(verify_probe(p, &cause) == -1 && at_rule(cause, "<string>", 3, 11, "rule 2"));
	}
	probe_free(p);
	free(cause);
}

int main(void)
{
	test_files();
	test_rule1();
	test_rule2_4();
	test_syntax();
	test_helpers();
	test_string_path();
	return testlib_report();
}
