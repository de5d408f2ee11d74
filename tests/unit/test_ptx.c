/* PTX parser, emitter and pruner: every corpus file (every .ptx in tests/corpus/ptx,
 * Triton output included) parses, survives emit -> reparse unchanged, and,
 * pruned to each of its kernels, still assembles with ptxas. Plus instruction
 * splitting, opcode matching, prune/used_vars contents and error reports on
 * hand-written snippets. Needs ptxas ($NTOP_PTXAS, PATH or /usr/local/cuda). */
#include "engine/ptx/ptx.h"
#include "engine/ptx/ptxas_locate.h"

#include "testlib.h"

#include <dirent.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static int str_eq(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return strcmp(a, b) == 0;
}

/* Structural equality (line numbers aside); reports the first difference. */
static int stmt_equal(const struct ptx_stmt *a, const struct ptx_stmt *b)
{
	if (a->kind != b->kind || !str_eq(a->text, b->text) || !str_eq(a->insn.pred, b->insn.pred) ||
	    !str_eq(a->insn.opcode, b->insn.opcode) || a->insn.n_ops != b->insn.n_ops)
		return 0;
	for (int i = 0; i < a->insn.n_ops; i++)
		if (!str_eq(a->insn.ops[i].text, b->insn.ops[i].text) ||
		    a->insn.ops[i].is_addr != b->insn.ops[i].is_addr || a->insn.ops[i].is_vec != b->insn.ops[i].is_vec)
			return 0;
	return 1;
}

static int func_equal(const struct ptx_func *a, const struct ptx_func *b, const char **why)
{
	*why = "header";
	if (!str_eq(a->name, b->name) || a->is_entry != b->is_entry || a->is_decl != b->is_decl ||
	    !str_eq(a->prefix, b->prefix) || !str_eq(a->suffix, b->suffix) || a->n_params != b->n_params ||
	    a->has_param_list != b->has_param_list || a->n_body != b->n_body)
		return 0;
	*why = "params";
	for (int i = 0; i < a->n_params; i++)
		if (!str_eq(a->params[i], b->params[i]))
			return 0;
	*why = "body";
	for (int i = 0; i < a->n_body; i++)
		if (!stmt_equal(&a->body[i], &b->body[i]))
			return 0;
	return 1;
}

static int module_equal(const struct ptx_module *a, const struct ptx_module *b, char *why, size_t n)
{
	if (a->n_items != b->n_items || a->ver_major != b->ver_major || a->ver_minor != b->ver_minor ||
	    a->address_size != b->address_size || !str_eq(a->target, b->target)) {
		snprintf(why, n, "module header or item count (%d vs %d)", a->n_items, b->n_items);
		return 0;
	}
	for (int i = 0; i < a->n_items; i++) {
		const struct ptx_top *x = &a->items[i], *y = &b->items[i];
		const char *w = "kind/text/name";
		int ok = x->kind == y->kind && str_eq(x->text, y->text) && str_eq(x->name, y->name) &&
			 str_eq(x->space, y->space);
		if (ok && x->kind == PTX_TOP_FUNC)
			ok = func_equal(x->func, y->func, &w);
		if (!ok) {
			snprintf(why, n, "item %d (%s, line %d): %s differs", i, x->name ? x->name : "?", x->line, w);
			return 0;
		}
	}
	return 1;
}

/* The ptxas the engine runs (found once: the corpus runs it hundreds of times). */
static const char *ptxas_path(void)
{
	static char *found;
	static int looked;
	if (!looked++)
		found = ptxas_locate();
	return found;
}

/* "sm_80, debug" -> "sm_80" */
static void target_arch(const struct ptx_module *m, char *arch, size_t n)
{
	const char *t = m->target ? m->target : "sm_75";
	size_t k = strcspn(t, ", \t");
	snprintf(arch, n, "%.*s", (int)k, t);
}

/* Writes text to a temp file and runs ptxas on it; 0 when it assembles, else
 * -1 with ptxas's messages in err. Modules with .extern functions are
 * assembled relocatable (-c): their definitions live elsewhere. */
static int ptxas_check(const struct ptx_module *m, const char *text, size_t len, char *err, size_t errn)
{
	const char *ptxas = ptxas_path();
	char src[] = "/tmp/ntop_test_ptx_XXXXXX", log[] = "/tmp/ntop_test_ptxlog_XXXXXX";
	int fd = mkstemp(src), lfd = mkstemp(log);
	if (fd < 0 || lfd < 0 || write(fd, text, len) != (ssize_t)len) {
		snprintf(err, errn, "temp file");
		return -1;
	}
	close(fd);
	char arch[64], archopt[80];
	target_arch(m, arch, sizeof arch);
	snprintf(archopt, sizeof archopt, "-arch=%s", arch);
	int reloc = 0;
	for (int i = 0; i < m->n_items; i++)
		if (m->items[i].kind == PTX_TOP_FUNC && strstr(m->items[i].func->prefix, ".extern"))
			reloc = 1;
	/* "-G" PTX says ".target sm_80, debug" and only assembles with -g */
	int debug = m->target && strstr(m->target, "debug");
	char *argv[] = {(char *)ptxas, archopt, debug ? "-g" : "-O3", "-o", "/dev/null", src, NULL, NULL};
	if (reloc)
		argv[6] = argv[5], argv[5] = argv[4], argv[4] = argv[3], argv[3] = "-c";
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, lfd, 1);
	posix_spawn_file_actions_adddup2(&fa, lfd, 2);
	pid_t pid;
	int st = -1;
	if (posix_spawn(&pid, ptxas, &fa, NULL, argv, environ) == 0)
		waitpid(pid, &st, 0);
	posix_spawn_file_actions_destroy(&fa);
	close(lfd);
	char *msg = testlib_slurp(log, NULL);
	snprintf(err, errn, "%s", msg ? msg : "");
	free(msg);
	unlink(src);
	unlink(log);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static int has_item(const struct ptx_module *m, const char *name)
{
	for (int i = 0; i < m->n_items; i++)
		if (m->items[i].name && !strcmp(m->items[i].name, name))
			return 1;
	return 0;
}

static void test_corpus_file(const char *path, const char *base, int *n_kernels)
{
	size_t len;
	char *text = testlib_slurp(path, &len);
	CHECKF(text, "%s unreadable", path);
	if (!text)
		return;
	struct ptx_module *m = NULL, *m2 = NULL;
	char *cause = NULL;
	CHECKF(ptx_parse(text, len, &m, &cause) == 0, "%s: %s", base, cause ? cause : "");
	free(cause);
	cause = NULL;
	if (!m) {
		free(text);
		return;
	}
	CHECKF(m->ver_major >= 7 && m->target && m->address_size == 64, "%s: header", base);

	size_t elen;
	char *emitted = ptx_emit(m, &elen);
	CHECK(emitted);
	CHECKF(emitted && ptx_parse(emitted, elen, &m2, &cause) == 0, "%s reparse: %s", base, cause ? cause : "");
	free(cause);
	cause = NULL;
	char why[256] = "";
	CHECKF(m2 && module_equal(m, m2, why, sizeof why), "%s emit/reparse: %s", base, why);
	ptx_free(m2);
	free(emitted);

	const char **entries = NULL;
	int n = 0;
	CHECK(ptx_list_entries(m, &entries, &n) == 0);
	CHECKF(n > 0, "%s has no kernels", base);
	for (int i = 0; i < n; i++) {
		struct ptx_module *p = NULL, *q = NULL;
		CHECK(ptx_parse(text, len, &p, NULL) == 0);
		CHECKF(p && ptx_prune(p, entries[i], &cause) == 0, "%s prune %s: %s", base, entries[i], cause ? cause : "");
		free(cause);
		cause = NULL;
		const char **left = NULL;
		int n_left = 0;
		if (p && ptx_list_entries(p, &left, &n_left) == 0)
			CHECKF(n_left == 1 && !strcmp(left[0], entries[i]), "%s: prune %s left %d kernels", base, entries[i], n_left);
		free(left);
		/* the lazy parser must give the same module as parse + prune */
		CHECKF(ptx_parse_kernel(text, len, entries[i], &q, &cause) == 0, "%s parse_kernel %s: %s", base, entries[i],
		       cause ? cause : "");
		free(cause);
		cause = NULL;
		CHECKF(p && q && module_equal(p, q, why, sizeof why), "%s parse_kernel %s: %s", base, entries[i], why);
		char *out = p ? ptx_emit(p, &elen) : NULL;
		char err[2048] = "";
		CHECKF(out && ptxas_check(p, out, elen, err, sizeof err) == 0, "%s pruned to %s does not assemble:\n%s", base,
		       entries[i], err);
		free(out);
		ptx_free(p);
		ptx_free(q);
		(*n_kernels)++;
	}
	free(entries);
	ptx_free(m);
	free(text);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_corpus(void)
{
	CHECKF(ptxas_path(), "ptxas not found: set NTOP_PTXAS or install the CUDA toolkit");
	if (!ptxas_path())
		return;
	char dir[4096];
	snprintf(dir, sizeof dir, "%s", testlib_src("tests/corpus/ptx"));
	DIR *d = opendir(dir);
	CHECKF(d, "cannot open %s", dir);
	if (!d)
		return;
	char *names[512];
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < 512) {
		size_t l = strlen(e->d_name);
		if (l > 4 && !strcmp(e->d_name + l - 4, ".ptx"))
			names[n++] = strdup(e->d_name);
	}
	closedir(d);
	qsort(names, (size_t)n, sizeof *names, cmp_str);
	CHECKF(n >= 20, "corpus has only %d files", n);
	int kernels = 0;
	for (int i = 0; i < n; i++) {
		char path[8192];
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		test_corpus_file(path, names[i], &kernels);
		free(names[i]);
	}
	printf("corpus: %d files, %d kernels assembled\n", n, kernels);
}

static struct ptx_module *parse_str(const char *s)
{
	struct ptx_module *m = NULL;
	char *cause = NULL;
	if (ptx_parse(s, strlen(s), &m, &cause) < 0)
		fprintf(stderr, "parse failed: %s\n", cause);
	free(cause);
	return m;
}

static const char *SNIPPET =
	".version 8.4\n"
	".target sm_90a\n"
	".address_size 64\n"
	"// comment with ; and { braces }\n"
	".visible .entry k(\n"
	"\t.param .u64 k_p0, /* inline */ .param .u32 k_p1\n"
	")\n"
	".reqntid 64, 1, 1\n"
	"{\n"
	"\t.reg .pred %p<3>;\n"
	"\t.loc 1 22 0\n"
	"\t@%p1 ld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1+16];\n"
	"\t@!%p2 bra $L__BB0_2;\n"
	"$L__BB0_2:\n"
	"\tcall.uni (retval0), \n\tfoo, \n\t(\n\tparam0, param1\n\t);\n"
	"\tcall (%r1), %rd4, (%r2), proto_1;\n"
	"\tproto_1 : .callprototype (.param .b32 _) _ (.param .b32 _);\n"
	"\t{ .reg .pred p; setp.ne.b32 p, %r1, 0; }\n"
	"\tmov.u64 %rd5, sym;\n"
	"\tst.global.u32 [sym], %r1;\n"
	"\tret;\n"
	"}\n";

static void test_insn_details(void)
{
	struct ptx_module *m = parse_str(SNIPPET);
	CHECK(m);
	if (!m)
		return;
	CHECK_EQ_INT(m->ver_major, 8);
	CHECK_EQ_INT(m->ver_minor, 4);
	CHECK(str_eq(m->target, "sm_90a"));
	struct ptx_func *f = ptx_find_func(m, "k");
	CHECK(f && f->is_entry && !f->is_decl);
	if (!f)
		goto out;
	CHECK_EQ_INT(f->n_params, 2);
	CHECK(f->n_params == 2 && str_eq(f->params[0], ".param .u64 k_p0") && str_eq(f->params[1], ".param .u32 k_p1"));
	CHECK(str_eq(f->prefix, ".visible .entry k"));
	CHECK(str_eq(f->suffix, ".reqntid 64, 1, 1"));
	CHECK_EQ_INT(f->n_body, 15);
	if (f->n_body != 15)
		goto out;
	struct ptx_stmt *b = f->body;
	CHECK(b[0].kind == PTX_DIRECTIVE && str_eq(b[0].text, ".reg .pred %p<3>;"));
	CHECK(b[1].kind == PTX_DIRECTIVE && str_eq(b[1].text, ".loc 1 22 0"));
	CHECK_EQ_INT(b[1].line, 11);
	struct ptx_insn *in = &b[2].insn;
	CHECK(b[2].kind == PTX_INSN && str_eq(in->pred, "%p1") && str_eq(in->opcode, "ld.global.nc.v4.f32"));
	CHECK(in->n_ops == 2 && str_eq(in->ops[0].text, "{%f1, %f2, %f3, %f4}") && in->ops[0].is_vec &&
	      !in->ops[0].is_addr && str_eq(in->ops[1].text, "[%rd1+16]") && in->ops[1].is_addr);
	CHECK(str_eq(b[2].text, "@%p1 ld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1+16];"));
	CHECK(str_eq(b[3].insn.pred, "!%p2") && str_eq(b[3].insn.opcode, "bra") && b[3].insn.n_ops == 1 &&
	      str_eq(b[3].insn.ops[0].text, "$L__BB0_2"));
	CHECK(b[4].kind == PTX_LABEL && str_eq(b[4].text, "$L__BB0_2:"));
	in = &b[5].insn;
	CHECK(str_eq(in->opcode, "call.uni") && in->n_ops == 3 && !in->pred);
	if (in->n_ops == 3)
		CHECK(str_eq(in->ops[0].text, "(retval0)") && str_eq(in->ops[1].text, "foo") && in->ops[2].text[0] == '(' &&
		      strstr(in->ops[2].text, "param0, param1"));
	in = &b[6].insn;
	CHECK(str_eq(in->opcode, "call") && in->n_ops == 4 && in->n_ops == 4 && str_eq(in->ops[3].text, "proto_1"));
	CHECK(b[7].kind == PTX_DIRECTIVE && strstr(b[7].text, ".callprototype") == b[7].text + 10);
	CHECK(b[8].kind == PTX_OPEN && b[9].kind == PTX_DIRECTIVE && b[10].kind == PTX_INSN && b[11].kind == PTX_CLOSE);
	CHECK(str_eq(b[10].insn.opcode, "setp.ne.b32") && b[10].insn.n_ops == 3 && str_eq(b[10].insn.ops[0].text, "p"));
	CHECK(str_eq(b[14].insn.opcode, "ret") && b[14].insn.n_ops == 0);
out:
	ptx_free(m);
}

static void test_insn_parse_api(void)
{
	struct ptx_insn in;
	char *cause = NULL;
	CHECK(ptx_insn_parse("@ !%p3 st.global.v2.f32 [%rd4], {%f1, %f2};", &in, &cause) == 0);
	CHECK(str_eq(in.pred, "!%p3") && str_eq(in.opcode, "st.global.v2.f32") && in.n_ops == 2 && in.ops[1].is_vec);
	struct ptx_stmt s = {.kind = PTX_INSN, .insn = in};
	ptx_stmt_clear(&s);
	CHECK(ptx_insn_parse("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r5], [%rd3], %r6, [%r2];",
			     &in, &cause) == 0);
	CHECK(str_eq(in.opcode, "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes") && in.n_ops == 4);
	s.insn = in;
	ptx_stmt_clear(&s);
	CHECK(ptx_insn_parse("setp.lt.s32 %p1|%p2, %r1, -1;", &in, &cause) == 0);
	CHECK(in.n_ops == 3 && str_eq(in.ops[0].text, "%p1|%p2") && str_eq(in.ops[2].text, "-1"));
	s.insn = in;
	ptx_stmt_clear(&s);
	CHECK(ptx_insn_parse("add.s32 %r1,, %r2;", &in, &cause) < 0 && cause && strstr(cause, "empty operand"));
	s.insn = in;
	ptx_stmt_clear(&s);
	CHECK(ptx_insn_parse("@%p1 ;", &in, &cause) < 0);
	s.insn = in;
	ptx_stmt_clear(&s);
	free(cause);

	/* statements for the instrumenter, built from snippet text */
	struct ptx_stmt *st = NULL;
	int n = 0;
	cause = NULL;
	const char *snip = "{\n.reg .b64 %ntop_t;\nmov.u64 %ntop_t, %clock64;\n}\n";
	CHECK(ptx_parse_stmts(snip, strlen(snip), 100, &st, &n, &cause) == 0);
	CHECK(n == 4 && st[1].kind == PTX_DIRECTIVE && st[2].kind == PTX_INSN && st[2].line == 102 &&
	      str_eq(st[2].insn.ops[1].text, "%clock64"));
	for (int i = 0; i < n; i++)
		ptx_stmt_clear(&st[i]);
	free(st);
	st = NULL;
	n = 0;
	CHECK(ptx_parse_stmts("{ mov.u32 %r1, 1;", 17, 1, &st, &n, &cause) < 0);
	for (int i = 0; i < n; i++)
		ptx_stmt_clear(&st[i]);
	free(st);
	free(cause);
}

static void test_emit_from_fields(void)
{
	struct ptx_module *m = parse_str(SNIPPET);
	CHECK(m);
	if (!m)
		return;
	struct ptx_func *f = ptx_find_func(m, "k");
	/* an instruction rebuilt from its parts reads back the same */
	free(f->body[2].text);
	f->body[2].text = NULL;
	size_t len;
	char *out = ptx_emit(m, &len);
	CHECK(out && strstr(out, "@%p1 ld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1+16];"));
	CHECK(out && strlen(out) == len);
	free(out);
	ptx_free(m);
}

static void test_opcode_match(void)
{
	struct {
		const char *op, *pat;
		int want;
	} t[] = {
		{"ld.global.nc.v4.f32", "ld.global", 1},
		{"ld.global", "ld.global", 1},
		{"ld.globalx", "ld.global", 0},
		{"wld.global", "ld.global", 0},
		{"ld.shared.u32", "ld.global", 0},
		{"ld.global.u32", "ld", 1},
		{"ldmatrix.sync.aligned.m8n8.x4.shared.b16", "ld", 0},
		{"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "mma.sync", 1},
		{"wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32", "mma.sync", 0},
		{"wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32", "wmma.mma", 1},
		{"wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16", "wgmma.mma_async", 1},
		{"wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16", "wgmma.mma", 0},
		{"cp.async.bulk.shared::cluster.global", "cp.async.bulk", 1},
		{"cp.async.ca.shared.global", "cp.async.bulk", 0},
		{"st.global.f32", "", 0},
		{"st.volatile.global.u32", "st.global", 1},
		{"ld.relaxed.gpu.global.u32", "ld.global", 1},
		{"ld.relaxed.gpu.shared.u32", "ld.global", 0},
		{"ldu.global.f32", "ld.global", 0},
		{"ld.global.nc.f32", "ld.global.nc", 1},
		{"ld.global.f32", "ld.global.nc", 0},
		{"ret", "ret", 1},
		{"exit", "ret", 0},
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		CHECKF(ptx_opcode_matches(t[i].op, t[i].pat) == t[i].want, "%s vs %s", t[i].op, t[i].pat);
}

static struct ptx_module *parse_corpus(const char *rel)
{
	size_t len;
	char *text = testlib_slurp(testlib_src(rel), &len);
	CHECKF(text, "%s", rel);
	if (!text)
		return NULL;
	struct ptx_module *m = NULL;
	CHECK(ptx_parse(text, len, &m, NULL) == 0);
	free(text);
	return m;
}

static int vars_has(const struct ptx_top **v, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (str_eq(v[i]->name, name))
			return 1;
	return 0;
}

static void test_prune_contents(void)
{
	struct ptx_module *m = parse_corpus("tests/corpus/ptx/calls.sm_80.ptx");
	if (!m)
		return;
	const struct ptx_top **v = NULL;
	int n = 0;
	CHECK(ptx_used_vars(m, "_Z10apply_polyPfi", &v, &n) == 0);
	CHECK(n == 2 && vars_has(v, n, "g_counter") && vars_has(v, n, "c_coeffs"));
	free(v);
	CHECK(ptx_used_vars(m, "_Z11apply_tablePfPKiiPc", &v, &n) == 0);
	CHECK(n == 4 && vars_has(v, n, "g_ops") && vars_has(v, n, "g_names") && vars_has(v, n, "$str") &&
	      vars_has(v, n, "$str$1"));
	free(v);
	CHECK(ptx_used_vars(m, "_Z4polyf", &v, &n) == 0 && n == 1 && vars_has(v, n, "c_coeffs"));
	free(v);
	CHECK(ptx_used_vars(m, "no_such_kernel", &v, &n) < 0);

	char *cause = NULL;
	CHECK(ptx_prune(m, "no_such_kernel", &cause) < 0 && cause && strstr(cause, "no_such_kernel"));
	free(cause);
	CHECK(ptx_prune(m, "_Z10apply_polyPfi", NULL) == 0);
	const char *keep[] = {"_Z10apply_polyPfi", "_Z5twicef", "_Z4polyf", "g_counter", "c_coeffs"};
	const char *drop[] = {"_Z11apply_tablePfPKiiPc", "_Z11uses_unusedPf", "_Z6negatef", "_Z6squaref",
			      "_Z13unused_helperf", "g_unused_buffer", "c_unused", "g_ops", "g_names", "$str"};
	for (size_t i = 0; i < sizeof keep / sizeof *keep; i++)
		CHECKF(has_item(m, keep[i]), "kept %s", keep[i]);
	for (size_t i = 0; i < sizeof drop / sizeof *drop; i++)
		CHECKF(!has_item(m, drop[i]), "dropped %s", drop[i]);
	CHECK(m->n_items >= 3 && m->items[0].kind == PTX_TOP_DIRECTIVE);
	ptx_free(m);

	/* function pointers in an initialiser keep both the decls and the bodies */
	m = parse_corpus("tests/corpus/ptx/calls.sm_80.ptx");
	if (!m)
		return;
	CHECK(ptx_prune(m, "_Z11apply_tablePfPKiiPc", NULL) == 0);
	int negs = 0;
	for (int i = 0; i < m->n_items; i++)
		negs += str_eq(m->items[i].name, "_Z6negatef");
	CHECK_EQ_INT(negs, 2);
	CHECK(has_item(m, "g_ops") && has_item(m, "g_names") && has_item(m, "$str$1") && has_item(m, "_Z6squaref"));
	CHECK(!has_item(m, "_Z4polyf") && !has_item(m, "g_counter") && !has_item(m, "c_coeffs"));
	ptx_free(m);

	m = parse_corpus("tests/corpus/ptx/hand_syntax.ptx");
	if (!m)
		return;
	CHECK(ptx_prune(m, "k_syntax", NULL) == 0);
	CHECK(has_item(m, "weak_add") && has_item(m, "no_params") && has_item(m, "g_fptrs") && has_item(m, "c_vec") &&
	      has_item(m, "s_scratch") && has_item(m, "g_table"));
	CHECK(!has_item(m, "dropped_fn") && !has_item(m, "g_only_dropped") && !has_item(m, "ext_helper") &&
	      !has_item(m, "tex_in") && !has_item(m, "k_second"));
	ptx_free(m);
}

static void expect_error(const char *text, const char *line_tag)
{
	struct ptx_module *m = NULL;
	char *cause = NULL;
	int r = ptx_parse(text, strlen(text), &m, &cause);
	CHECKF(r < 0 && !m, "parse of bad input succeeded: %.40s", text);
	CHECKF(cause && strstr(cause, line_tag), "cause \"%s\" lacks \"%s\"", cause ? cause : "(null)", line_tag);
	free(cause);
	ptx_free(m);
}

static void test_errors(void)
{
	expect_error(".version 8.0\n.target sm_80\n.address_size 64\n.entry k()\n{\n\tret;\n\n", "line 5");
	expect_error(".version 8.0\n.target sm_80\n\n  ~garbage\n", "line 4");
	expect_error(".version 8.0\n.entry k()\n{\n\tadd.s32 %r1, %r2\n}\n", "line 5");
	expect_error(".version 8.0\n.entry k()\n{\n\tret;\n\t#bad;\n}\n", "line 5");
	expect_error(".version 8.0\n/* open\n\ncomment", "line 2");
	expect_error(".version 8.0\n.global .u32 x\n", "line 2");
	expect_error(".version 8.0\n.entry k(.param .u32 a\n{\n}\n", "line 2");
	expect_error(".version 8.0\n.entry k()\n{\n\t@!;\n}\n", "line 4");
	expect_error(".version 8.0\n.entry k()\n{\n\tld.global.u32 %r1, [%rd1;\n}\n", "line");
	expect_error(".version 8.0\n.entry k()\n{\n\t.file 1 \"unterminated\n}\n", "line 4");
	const char bin[] = ".version 8.0\n\0.entry";
	struct ptx_module *m = NULL;
	char *cause = NULL;
	CHECK(ptx_parse(bin, sizeof bin - 1, &m, &cause) < 0 && cause && strstr(cause, "line 2"));
	free(cause);
	/* an empty module is fine */
	CHECK(ptx_parse("", 0, &m, NULL) == 0 && m && m->n_items == 0);
	ptx_free(m);
}

/* A 20,000-deep call chain plus as many unrelated functions: pruning walks
 * it without recursion and in about linear time (a quadratic walk would take
 * minutes here). */
static void test_prune_scale(void)
{
	enum { N = 20000 };
	struct strbuf_lite {
		char *p;
		size_t n, cap;
	} b = {malloc(1 << 22), 0, 1 << 22};
	CHECK(b.p);
	if (!b.p)
		return;
#define PUT(...) do { \
	if (b.cap - b.n < 512) { b.cap *= 2; b.p = realloc(b.p, b.cap); } \
	b.n += (size_t)snprintf(b.p + b.n, b.cap - b.n, __VA_ARGS__); } while (0)
	PUT(".version 8.0\n.target sm_80\n.address_size 64\n");
	for (int i = 0; i < N; i++)
		PUT(".func f%d;\n.func g%d;\n", i, i);
	for (int i = 0; i < N; i++) {
		PUT(".func f%d()\n{\n\tret;\n}\n", i);
		if (i + 1 < N) {
			b.n -= 9; /* replace "\tret;\n}\n" */
			PUT("\tcall.uni f%d, ();\n\tret;\n}\n", i + 1);
		}
		PUT(".func g%d()\n{\n\tcall.uni g%d, ();\n\tret;\n}\n", i, (i + 1) % N);
	}
	PUT(".entry k()\n{\n\tcall.uni f0, ();\n\tret;\n}\n");
#undef PUT
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	struct ptx_module *m = NULL;
	CHECK(ptx_parse_kernel(b.p, b.n, "k", &m, NULL) == 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	CHECKF(m && m->n_items == 3 + 2 * N + 1, "kept %d items", m ? m->n_items : -1);
	CHECK(m && has_item(m, "f19999") && !has_item(m, "g0"));
	CHECKF(ms < 3000, "parse_kernel of %zu bytes took %.0f ms", b.n, ms);
	ptx_free(m);
	m = NULL;
	CHECK(ptx_parse(b.p, b.n, &m, NULL) == 0 && m && ptx_prune(m, "k", NULL) == 0 && m->n_items == 3 + 2 * N + 1);
	ptx_free(m);
	free(b.p);
}

int main(void)
{
	test_prune_scale();
	test_insn_details();
	test_insn_parse_api();
	test_emit_from_fields();
	test_opcode_match();
	test_prune_contents();
	test_errors();
	test_corpus();
	return testlib_report();
}
