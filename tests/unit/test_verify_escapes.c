/* The verifier against snippets written to get past it: every
 * spelling ptxas reads differently from a naive reader (form feeds,
 * comments or spaces inside an opcode), every instruction the rules never
 * named (surface stores, discard, carry writes, MMIO loads), operands that
 * reach far (huge offsets, absolute addresses, constant expressions) and
 * register names that would not be renamed. Each must be refused with the
 * rule that says why. The escapes that ran inside an app before this
 * verifier are marked (the reported list); the count goes into
 * doc/security.md. Then the other side: what the verifier passes is what
 * the instrumenter pastes, token for token. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/probe/probe.h"
#include "engine/probe/verify.h"
#include "testlib.h"

struct escape {
	const char *asm_;   /* TOML basic-string text (escapes allowed) */
	const char *at;     /* tracepoint: "entry" or an opcode */
	const char *rule;   /* what the refusal must name */
};

/* Registers a snippet may legitimately write: %x %y (b32/b64), %q (pred). */
#define DECL ".reg .b32 %x; .reg .b64 %y; .reg .pred %q; "

static const struct escape escapes[] = {
	/* reported: a form feed splits tokens for ptxas, not for the old verifier */
	{ "st\\f.global.u32 [%rd1], 0;", "entry", "rule 5" },
	{ "atom\\f.global.add.u32 %r1, [%rd1], 1;", "entry", "rule 5" },
	{ "mov.u32\\f%r10,\\f0;", "entry", "rule 1" },
	{ "bra\\f$L__BB0_2;", "entry", "rule 2" },
	{ "ret\\f;", "entry", "rule 2" },
	{ "exit\\f;", "entry", "rule 2" },
	{ "trap\\f;", "entry", "rule 2" },
	{ "call\\fvprintf, (%rd1, %rd2);", "entry", "rule 4" },
	{ DECL "shfl\\f.sync.idx.b32 %x, %r1, 0, 31, -1;", "entry", "rule 6" },
	/* reported: instructions the rules never listed */
	{ "sust.b.1d.b32.trap [surf, {%r1}], {%r2};", "entry", "rule 5" },
	{ "sured.b.add.1d.u32.trap [surf, {%r1}], %r2;", "entry", "rule 5" },
	{ "discard.global.L2 [%rd1], 128;", "entry", "rule 5" },
	{ DECL "add.cc.u32 %x, %x, 1;", "entry", "rule 1" },
	{ DECL "ld.global.u32 %x, [%rd1+0x100000000];", "entry", "rule 7" },
	{ ".reg .b32 %1; mov.u32 %1, 0;", "entry", "bad register name" },
	/* more spellings of the same instructions */
	{ "st\\u000B.global.u32 [%rd1], 0;", "entry", "rule 5" },
	{ "st/**/.global.u32 [%rd1], 0;", "entry", "rule 5" },
	{ "st/* .x */.global.u32 [%rd1], 0;", "entry", "rule 5" },
	{ "st //\\n.global.u32 [%rd1], 0;", "entry", "rule 5" },
	{ "st .global.u32 [%rd1], 0;", "entry", "rule 5" },
	{ "mov .u32 %r10, 0;", "entry", "rule 1" },
	{ "mov.u32 %r10 , 0;", "entry", "rule 1" },
	{ "bar\\f.sync 0;", "entry", "rule 2" },
	{ "@%p1\\fbra $L1;", "entry", "rule 2" },
	{ DECL "vote\\f.sync.all.pred %q, %p1, -1;", "entry", "rule 6" },
	{ "mov.u32 OUT\\f, 0;", "ld.global", "rule 1" },
	{ DECL "mov.b64 {%x,\\f%r9}, %rd1;", "entry", "rule 1" },
	{ DECL "setp.eq.u32 %q|\\f%p2, %r1, 0;", "entry", "rule 1" },
	{ DECL "ld.global.v2.u32 {%x, %r9}, [%rd1];", "entry", "rule 1" },
	{ ".reg .b32 %r<3>; mov.u32 %r5, 0;", "entry", "rule 1" },
	{ DECL "L\\f: mov.u32 %x, 0;", "entry", "rule 2" },
	{ DECL "cvta.to\\f.shared.u64 %y, %rd1;", "entry", "rule 3" },
	{ DECL "ld\\f.shared::cluster.u32 %x, [%rd1];", "entry", "rule 3" },
	/* the carry flag */
	{ DECL "addc.u32 %x, %x, 0;", "entry", "rule 1" },
	{ DECL "mad.lo.cc.u32 %x, %x, 2, 1;", "entry", "rule 1" },
	{ DECL "sub.cc.u32 %x, %x, 1;", "entry", "rule 1" },
	/* memory reached another way */
	{ "prefetch.tensormap [%rd1];", "entry", "rule 7" },
	{ "prefetch.global.L2::evict_last [%rd1];", "entry", "rule 7" },
	{ "applypriority.global.L2::evict_normal [%rd1], 128;", "entry", "rule 5" },
	{ DECL "ld.mmio.relaxed.sys.global.u32 %x, [%rd1];", "entry", "rule 7" },
	{ DECL "ld.global.u32 %x, [%rd1+(1<<40)];", "entry", "syntax" },
	{ DECL "ld.global.u32 %x, [%rd1+4096+4096];", "entry", "syntax" },
	{ DECL "ld.global.u32 %x, [%rd1+-8192];", "entry", "rule 7" },
	{ DECL "ld.local.u32 %x, [12345678];", "entry", "syntax" },
	{ DECL "ld.global.u32 %x, [ADDR+0x7fffffff];", "ld.global", "rule 7" },
	{ DECL "mov.u32 %x, (1+2);", "entry", "syntax" },
	{ DECL "tex.1d.v4.f32.s32 {%x, %x, %x, %x}, [tex, {%r1}];", "entry", "rule 7" },
	{ DECL "suld.b.1d.b32.trap {%x}, [surf, {%r1}];", "entry", "rule 7" },
	{ "multimem.st.global.u32 [%rd1], 0;", "entry", "rule 5" },
	{ "tensormap.replace.tile.global_address.global.b1024.b64 [%rd1], %rd2;", "entry", "rule 5" },
	{ "cp.async.bulk.global.shared::cta.bulk_group [%rd1], [%rd2], 16;", "entry", "rule 3" },
	{ DECL "mapa.u64 %y, %rd1, 0;", "entry", "rule 3" },
	{ DECL "getctarank.u32 %x, %rd1;", "entry", "rule 3" },
	{ DECL "createpolicy.fractional.L2::evict_last.b64 %y, 0f3F800000;", "entry", "rule 7" },
	/* control and resources */
	{ "pmevent 1;", "entry", "rule 7" },
	{ "nanosleep.u32 100;", "entry", "rule 7" },
	{ "brkpt;", "entry", "rule 2" },
	{ DECL "elect.sync %x|%q, -1;", "entry", "rule 6" },
	{ "setmaxnreg.inc.sync.aligned.u32 64;", "entry", "rule 6" },
	/* register names */
	{ ".reg .b32 %tid; mov.u32 %tid, 1;", "entry", "rule 1" },
	{ ".reg .b32 %clock<2>;", "entry", "rule 1" },
	{ ".reg .b32 %ntop_p0_x;", "entry", "rule 1" },
	{ DECL "mov.u32 %x, %ntop_buf;", "entry", "rule 1" },
	/* text ptxas would read some other way, or not at all */
	{ "#define X st.global.u32\\nX [%rd1], 0;", "entry", "syntax" },
	{ DECL "mov.u32 %x, 0; \\\\\\nst.global.u32 [%rd1], 0;", "entry", "syntax" },
	{ DECL "mov.u32 %x, 1 /* unterminated", "entry", "syntax" },
	{ DECL "mov.u32 %x,\\u00A01;", "entry", "syntax" },
	{ DECL "mov.u32 %x, \\u0001 1;", "entry", "syntax" },
	{ "{ st.global.u32 [%rd1], 0; }", "entry", "syntax" },
	{ ".local .b32 buf[4];", "entry", "syntax" },
	{ DECL "mov.u32 %x, 1", "entry", "syntax" },
};

/* How many escapes were reported passing the old verifier: the first 15 above. */
#define REPORTED_ESCAPES 15

static char *probe_text(const struct escape *e)
{
	char *t = NULL;
	int opcode = strcmp(e->at, "entry") != 0;
	if (asprintf(&t, "ntop_probe = 1\nname = \"esc\"\n[[hook]]\nat = %s%s%s\n%sasm = \"%s\"\n",
		     opcode ? "[\"" : "\"", e->at, opcode ? "\"]" : "\"", opcode ? "when = \"before\"\n" : "",
		     e->asm_) < 0)
		return NULL;
	return t;
}

static void test_escapes(void)
{
	int n = (int)(sizeof escapes / sizeof escapes[0]), refused = 0;
	for (int i = 0; i < n; i++) {
		const struct escape *e = &escapes[i];
		char *text = probe_text(e), *cause = NULL;
		struct probe *p = NULL;
		int r = text ? probe_load_string(text, "esc.toml", &p, &cause) : -1;
		CHECKF(r == 0, "escape %d should load: %s", i + 1, cause);
		if (r == 0)
			r = verify_probe(p, &cause);
		/* the asm key's line: 5, or 6 after an opcode hook's `when` */
		const char *where = strcmp(e->at, "entry") ? "esc.toml:6:" : "esc.toml:5:";
		int ok = r == -1 && cause && strstr(cause, e->rule) && strncmp(cause, where, strlen(where)) == 0;
		CHECKF(ok, "escape %d (%s) should be refused with '%s', got: %s", i + 1, e->asm_, e->rule,
		       r == 0 ? "accepted" : cause);
		refused += r == -1;
		probe_free(p);
		free(cause);
		free(text);
	}
	printf("verifier escapes: %d tried (%d from the reported list), %d refused\n", n, REPORTED_ESCAPES, refused);
}

/* Forms a probe needs keep passing, however they are spelled. */
static void test_allowed(void)
{
	static const char *const ok[] = {
		DECL "mov\\f.u32 %x, %tid .x;",
		DECL "mov.u32 %x, %r5; add.u32 %x, %x, 1; mul.wide.u32 %y, %x, 4;",
		DECL "ld.global.nc.v2.u32 {%x, %x}, [%rd1+-8];",
		DECL "ld.param.u64 %y, [k_param_0]; ld.global.u32 %x, [%rd1+4096];",
		DECL "ld.relaxed.gpu.global.L2::cache_hint.u32 %x, [%rd2], %rd3;",
		DECL "setp.ne.u32 %q, %x, 0; @!%q add.u32 %x, %x, 0x10U; selp.b32 %x, 1, 0, %q;",
		DECL "cvt.u32.u64 %x, %y; cvta.to.global.u64 %y, %rd1; activemask.b32 %x;",
		"prefetch.global.L2 [%rd1]; prefetchu.L1 [%rd1]; membar.gl; fence.acq_rel.gpu;",
		DECL "mov.f32 %x, 0f3F800000; mov.u32 %x, -1; mov.u64 %y, 0b101;",
		".reg .v2 .b32 %v; mov.u32 %v.x, 1;",
	};
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		struct escape e = { ok[i], "entry", NULL };
		char *text = probe_text(&e), *cause = NULL;
		struct probe *p = NULL;
		int r = text ? probe_load_string(text, "ok.toml", &p, &cause) : -1;
		if (r == 0)
			r = verify_probe(p, &cause);
		CHECKF(r == 0, "should pass: %s: %s", ok[i], cause);
		probe_free(p);
		free(cause);
		free(text);
	}
}

static const char *KERNEL = ".version 8.0\n.target sm_80\n.address_size 64\n\n"
			    ".visible .entry k(\n\t.param .u64 k_param_0\n)\n{\n"
			    "\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<4>;\n"
			    "\tld.param.u64 %rd1, [k_param_0];\n\tmov.u32 %r1, %tid.x;\n\tret;\n}\n";

/* The instrumenter pastes the canonical text: no form feed, no comment, the
 * opcode's parts joined, the probe's register renamed everywhere. */
static void test_pasted_as_verified(void)
{
	const char *text = "ntop_probe = 1\nname = \"ff\"\n[[hook]]\nat = \"entry\"\n"
			   "asm = \".reg\\f.b32 %x; mov\\f/* c */.u32\\f%x,\\f%tid .x; add .u32 %x , %x, 1;\"\n";
	struct probe *p = NULL;
	char *cause = NULL;
	CHECK(probe_load_string(text, "ff.toml", &p, &cause) == 0);
	struct engine_result res;
	int r = p ? engine_instrument(KERNEL, strlen(KERNEL), "k", &p, 1, 0, &res, &cause) : -1;
	CHECKF(r == 0, "instrument: %s", cause);
	if (r == 0) {
		CHECK(strchr(res.ptx, '\f') == NULL);
		CHECK(strstr(res.ptx, "/* c */") == NULL);
		CHECKF(strstr(res.ptx, "mov.u32 %ntop_p0_x, %tid.x;") != NULL, "%s", res.ptx);
		CHECKF(strstr(res.ptx, "add.u32 %ntop_p0_x, %ntop_p0_x, 1;") != NULL, "%s", res.ptx);
		CHECKF(strstr(res.ptx, ".reg .b32 %ntop_p0_x;") != NULL, "%s", res.ptx);
		engine_result_done(&res);
	}
	probe_free(p);
	free(cause);
}

int main(void)
{
	test_escapes();
	test_allowed();
	test_pasted_as_verified();
	return testlib_report();
}
