/* The live control file format (trace/control.h): what the launcher writes
 * the hook reads back, and what the hook refuses is reported per line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"
#include "trace/control.h"

struct bad_log {
	int n;
	char why[8][64];
	char line[8][128];
};

static void on_bad(void *arg, const char *line, size_t len, const char *why)
{
	struct bad_log *b = arg;
	if (b->n < 8) {
		snprintf(b->why[b->n], sizeof b->why[0], "%s", why);
		snprintf(b->line[b->n], sizeof b->line[0], "%.*s", (int)len, line);
	}
	b->n++;
}

static void test_roundtrip(void)
{
	struct control_entry e[3] = {
		{ "_Z4fillPfi", "/p/block_sched.toml", CONTROL_EVERY, 1, 0 },
		{ "kernel with space%", "/a b/x.toml,/c/y.toml", CONTROL_NTH, 10, 0 },
		{ "_Z5scalePff", "/p/block_sched.toml", CONTROL_NEXT, 1, 7 },
	};
	struct strbuf sb;
	strbuf_init(&sb);
	char *cause = NULL;
	CHECK(control_format(&sb, 42, e, 3, &cause) == 0);
	CHECKF(strncmp(sb.data, "control version=1 gen=42\n", 25) == 0, "%s", sb.data);
	CHECKF(strstr(sb.data, "name=kernel%20with%20space%25") != NULL, "%s", sb.data);
	CHECKF(strstr(sb.data, "mode=nth n=10\n") != NULL, "%s", sb.data);
	CHECKF(strstr(sb.data, "mode=next limit=7\n") != NULL, "%s", sb.data);
	struct control_file f;
	struct bad_log bad = { 0 };
	CHECK(control_parse(sb.data, sb.len, &f, on_bad, &bad, &cause) == 0);
	CHECK_EQ_INT(bad.n, 0);
	CHECK_EQ_INT(f.gen, 42);
	CHECK_EQ_INT(f.n, 3);
	for (int i = 0; i < 3 && i < f.n; i++) {
		CHECKF(strcmp(f.entries[i].name, e[i].name) == 0, "%s", f.entries[i].name);
		CHECKF(strcmp(f.entries[i].probes, e[i].probes) == 0, "%s", f.entries[i].probes);
		CHECK_EQ_INT(f.entries[i].mode, e[i].mode);
		CHECK_EQ_INT(f.entries[i].n, e[i].n);
		CHECK_EQ_INT(f.entries[i].limit, e[i].limit);
	}
	control_file_done(&f);
	strbuf_done(&sb);
	free(cause);
}

static void test_malformed(void)
{
	const char *text = "# comment\n"
			   "control version=1 gen=3\n"
			   "probe name=a probes=rel.toml mode=every\n"
			   "probe name=b probes=/x.toml mode=sometimes\n"
			   "probe name=c probes=/x.toml mode=nth\n"
			   "not%zz an event\n"
			   "probe probes=/x.toml\n"
			   "probe name=d probes=/x.toml,,/y.toml\n"
			   "future thing=1\n"
			   "probe name=e probes=/x.toml extra=ignored\n"
			   "probe name=e probes=/z.toml mode=next\n"
			   "\n";
	struct control_file f;
	struct bad_log bad = { 0 };
	char *cause = NULL;
	CHECK(control_parse(text, strlen(text), &f, on_bad, &bad, &cause) == 0);
	CHECK_EQ_INT(bad.n, 6);
	CHECKF(strcmp(bad.why[0], "probe paths must be absolute") == 0, "%s", bad.why[0]);
	CHECKF(strcmp(bad.why[1], "unknown mode") == 0, "%s", bad.why[1]);
	CHECKF(strcmp(bad.why[2], "mode nth needs n >= 1") == 0, "%s", bad.why[2]);
	CHECKF(strcmp(bad.line[3], "not%zz an event") == 0, "%s", bad.line[3]);
	CHECKF(strcmp(bad.why[4], "no kernel name") == 0, "%s", bad.why[4]);
	CHECKF(strcmp(bad.why[5], "empty probe path") == 0, "%s", bad.why[5]);
	/* unknown types and keys ignored; a later line for a kernel wins; mode
	 * defaults to every */
	CHECK_EQ_INT(f.n, 1);
	if (f.n == 1) {
		CHECK(strcmp(f.entries[0].name, "e") == 0);
		CHECK(strcmp(f.entries[0].probes, "/z.toml") == 0);
		CHECK_EQ_INT(f.entries[0].mode, CONTROL_NEXT);
	}
	control_file_done(&f);

	const char *no_header = "probe name=a probes=/x.toml mode=every\n";
	CHECK(control_parse(no_header, strlen(no_header), &f, NULL, NULL, &cause) < 0);
	CHECKF(cause && strstr(cause, "control version=1 gen=N"), "%s", cause ? cause : "(null)");
	const char *gen0 = "control version=1 gen=0\n";
	CHECK(control_parse(gen0, strlen(gen0), &f, NULL, NULL, &cause) < 0);
	const char *v2 = "control version=2 gen=5\n";
	CHECK(control_parse(v2, strlen(v2), &f, NULL, NULL, &cause) < 0);
	const char *mode_default = "control gen=9\r\nprobe name=k probes=/x.toml\r\n";
	CHECK(control_parse(mode_default, strlen(mode_default), &f, NULL, NULL, &cause) == 0);
	CHECK_EQ_INT(f.gen, 9);
	CHECK(f.n == 1 && f.entries[0].mode == CONTROL_EVERY);
	control_file_done(&f);
	free(cause);
}

static void test_format_refuses(void)
{
	struct strbuf sb;
	strbuf_init(&sb);
	char *cause = NULL;
	struct control_entry rel = { "k", "x.toml", CONTROL_EVERY, 1, 0 };
	struct control_entry nth0 = { "k", "/x.toml", CONTROL_NTH, 0, 0 };
	struct control_entry noname = { "", "/x.toml", CONTROL_EVERY, 1, 0 };
	CHECK(control_format(&sb, 1, &rel, 1, &cause) < 0);
	CHECK(control_format(&sb, 1, &nth0, 1, &cause) < 0);
	CHECK(control_format(&sb, 1, &noname, 1, &cause) < 0);
	CHECK(control_format(&sb, 0, NULL, 0, &cause) < 0);
	CHECK_EQ_INT(sb.len, 0);
	CHECK(control_format(&sb, 1, NULL, 0, &cause) == 0);
	CHECK(strcmp(sb.data, "control version=1 gen=1\n") == 0);
	strbuf_done(&sb);

	const char *ok[] = { "/a.toml", "/b c.toml" };
	char *j = control_join_probes(ok, 2, &cause);
	CHECK(j && strcmp(j, "/a.toml,/b c.toml") == 0);
	free(j);
	const char *comma[] = { "/a,b.toml" };
	CHECK(control_join_probes(comma, 1, &cause) == NULL);
	const char *relp[] = { "a.toml" };
	CHECK(control_join_probes(relp, 1, &cause) == NULL);
	CHECK(control_join_probes(ok, 0, &cause) == NULL);
	enum control_mode m;
	CHECK(control_mode_parse("nth", &m) == 0 && m == CONTROL_NTH);
	CHECK(control_mode_parse("NTH", &m) < 0);
	CHECK(strcmp(control_mode_name(CONTROL_NEXT), "next") == 0);
	free(cause);
}

/* `source` lines: names carried as written, repeats once, a line without a
 * name refused (and the rest of the file kept). */
static void test_sources(void)
{
	const char *names[] = { "_Z4fillPfi", "kernel with space%", "_Z4fillPfi" };
	struct strbuf sb;
	strbuf_init(&sb);
	char *cause = NULL;
	CHECK(control_format(&sb, 3, NULL, 0, &cause) == 0);
	control_format_sources(&sb, names, 3);
	strbuf_puts(&sb, "source\nsource name=\n");
	struct control_file f;
	struct bad_log bad = { 0 };
	CHECK(control_parse(sb.data, sb.len, &f, on_bad, &bad, &cause) == 0);
	CHECK_EQ_INT(f.n_sources, 2);
	CHECK(f.n_sources == 2 && !strcmp(f.sources[0], names[0]) && !strcmp(f.sources[1], names[1]));
	CHECK_EQ_INT(bad.n, 2);
	CHECKF(strstr(bad.why[0], "without a kernel name") != NULL, "%s", bad.why[0]);
	control_file_done(&f);
	strbuf_done(&sb);
	free(cause);
}

int main(void)
{
	test_roundtrip();
	test_sources();
	test_malformed();
	test_format_refuses();
	return testlib_report();
}
