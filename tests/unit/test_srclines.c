/* A kernel's source lines from its PTX (engine/ptx/ptx_srclines.h): what
 * the UI's region picker lists. */
#include <stdlib.h>
#include <string.h>

#include "engine/ptx/ptx.h"
#include "engine/ptx/ptx_srclines.h"
#include "testlib.h"

static const struct ptx_srcline *find_line(const struct ptx_srclines *s, int line)
{
	for (int i = 0; i < s->n; i++)
		if (s->v[i].line == line)
			return &s->v[i];
	return NULL;
}

/* Triton's matmul: the wgmma on line 19 sits in the K loop (a label, then a
 * branch back to it from line 313 of the PTX). */
static void test_triton_matmul(void)
{
	size_t len = 0;
	char *ptx = (char *)testlib_corpus("ptx", "triton_matmul.sm_90a.ptx", &len);
	if (!ptx)
		return;
	struct ptx_srclines s;
	char *cause = NULL;
	CHECKF(ptx_srclines_read(ptx, len, "mm_kernel", &s, &cause) == 0, "%s", cause ? cause : "");
	CHECK(s.n > 5);
	const struct ptx_srcline *l19 = find_line(&s, 19);
	CHECK(l19 && l19->classes >> PROBE_CLASS_TENSOR & 1 && l19->in_loop);
	CHECK(l19 && strstr(l19->file, "triton_ptx.py"));
	int sorted = 1, insns = s.insns_without, tensor_lines = 0;
	for (int i = 0; i < s.n; i++) {
		insns += s.v[i].insns;
		sorted &= i == 0 || s.v[i].line > s.v[i - 1].line || strcmp(s.v[i].file, s.v[i - 1].file);
		tensor_lines += s.v[i].classes >> PROBE_CLASS_TENSOR & 1;
	}
	CHECK(sorted);
	CHECK_EQ_INT(tensor_lines, 1); /* the two wgmma.mma_async are both on line 19 */
	/* every instruction of the kernel's body counted once */
	struct ptx_module *m = NULL;
	int want = 0;
	if (ptx_parse_kernel(ptx, len, "mm_kernel", &m, &cause) == 0) {
		const struct ptx_func *f = ptx_find_func(m, "mm_kernel");
		for (int i = 0; f && i < f->n_body; i++)
			want += f->body[i].kind == PTX_INSN;
	}
	ptx_free(m);
	CHECK(want > 0);
	CHECK_EQ_INT(insns, want);
	ptx_srclines_done(&s);
	free(ptx);
}

static void test_without_lines(void)
{
	const char *ptx = ".version 8.0\n.target sm_90\n.address_size 64\n"
			  ".visible .entry k(.param .u64 p)\n{\n.reg .b64 %rd<3>;\n"
			  "ld.param.u64 %rd1, [p];\nld.global.u64 %rd2, [%rd1];\nret;\n}\n";
	struct ptx_srclines s;
	char *cause = NULL;
	CHECKF(ptx_srclines_read(ptx, strlen(ptx), "k", &s, &cause) == 0, "%s", cause ? cause : "");
	CHECK_EQ_INT(s.n, 0);
	CHECK_EQ_INT(s.insns_without, 3);
	ptx_srclines_done(&s);
	CHECK(ptx_srclines_read(ptx, strlen(ptx), "nosuch", &s, &cause) < 0 && cause);
	free(cause);
}

int main(void)
{
	test_triton_matmul();
	test_without_lines();
	return testlib_report();
}
