/* The views driven without a terminal: a tui on the bundled recorded
 * session (examples/session), keys in, screens drawn into a cell grid and
 * read back as text. Covers the kernel list (sort, filter, mangled names),
 * a kernel's launches, the timeline and its keys, help, the log pane, a
 * sweep of screen sizes, line feeding in pieces, and live probe requests
 * written to a control file through a stand-in application. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/strbuf.h"
#include "testlib.h"
#include "tui/tui.h"

static char cfgdir[] = "/tmp/ntop-tui-views-XXXXXX";

static char *row(struct cellgrid *g, int y)
{
	static char buf[8192];
	struct strbuf sb;
	strbuf_init(&sb);
	cellgrid_row_text(g, y, &sb);
	snprintf(buf, sizeof buf, "%s", sb.data ? sb.data : "");
	strbuf_done(&sb);
	return buf;
}

/* Row index of the first row containing s, -1 none. */
static int find(struct cellgrid *g, const char *s)
{
	for (int y = 0; y < g->h; y++)
		if (strstr(row(g, y), s))
			return y;
	return -1;
}

static void keys(struct tui *t, const char *s)
{
	for (; *s; s++)
		tui_key(t, *s == '\r' ? TK_ENTER : *s == 27 ? TK_ESC : (unsigned char)*s);
}

static struct tui *open_session(struct tui_opts *o)
{
	memset(o, 0, sizeof *o);
	o->trace_dir = testlib_src("examples/session");
	o->config_dir = cfgdir;
	o->theme = "dark";
	o->title = "test";
	struct tui *t = NULL;
	char *cause = NULL;
	CHECKF(tui_create(o, &t, &cause) == 0, "%s", cause ? cause : "");
	free(cause);
	return t;
}

static void test_list(void)
{
	struct tui_opts o;
	struct tui *t = open_session(&o);
	if (!t)
		return;
	struct cellgrid *g = cellgrid_create(80, 24);
	tui_draw(t, g);
	CHECK(find(g, "KERNEL") == 1);
	CHECK(find(g, "lm_vec_add(float const*") > 1);
	CHECK(find(g, "lm_node_iota") > 1);
	CHECKF(strstr(row(g, 23), "9 kernels") != NULL, "status: %s", row(g, 23));
	CHECK(strstr(row(g, 0), "NVIDIA H200") != NULL);
	/* by launches: a kernel launched twice first; by name: lm_block3d; reversed: lm_vec_add */
	CHECK(strstr(row(g, 2), "lm_captured_axpy") != NULL || strstr(row(g, 2), "lm_global_add") != NULL);
	t->kt.sort = KC_NAME;
	ktable_mark(&t->kt);
	tui_draw(t, g);
	CHECK(strstr(row(g, 2), "lm_block3d") != NULL);
	keys(t, "S");
	tui_draw(t, g);
	CHECKF(strstr(row(g, 2), "lm_vec_add") != NULL, "reversed: %s", row(g, 2));
	/* s moves the sort to the next visible column */
	enum kcol before = t->kt.sort;
	keys(t, "s");
	CHECK(t->kt.sort != before);
	/* filter */
	keys(t, "/glob");
	tui_draw(t, g);
	CHECK(find(g, "lm_global_add") > 1 && find(g, "lm_global_read") > 1 && find(g, "lm_vec_add") < 0);
	CHECK(find(g, "/glob_") >= 0);
	keys(t, "\r");
	tui_draw(t, g);
	CHECK(find(g, "(2 of 9 kernels") >= 0);
	keys(t, "\x1b");
	tui_draw(t, g);
	CHECK(find(g, "lm_vec_add") > 1 && !t->kt.filter[0]);
	/* mangled names */
	keys(t, "m");
	tui_draw(t, g);
	CHECK(find(g, "_Z10lm_vec_addPKfS0_Pfi") > 1);
	keys(t, "m");
	/* help and back */
	keys(t, "?");
	tui_draw(t, g);
	CHECK(find(g, "ntop keys") >= 0 && find(g, "zoom around the cursor") >= 0);
	keys(t, "q");
	tui_draw(t, g);
	CHECK(find(g, "KERNEL") == 1);
	/* log pane: the declined probe is there */
	keys(t, "L");
	tui_draw(t, g);
	CHECKF(find(g, "probe declined on lm_captured_axpy") > 0, "log pane");
	CHECK(find(g, "log:") > 0);
	keys(t, "L");
	cellgrid_free(g);
	tui_free(t);
}

/* Opens kernel `name` (filter, Enter) and its latest launch (Enter). */
static void open_timeline(struct tui *t, const char *name)
{
	keys(t, "/");
	keys(t, name);
	keys(t, "\r\r\r");
}

static void test_launches_timeline(void)
{
	struct tui_opts o;
	struct tui *t = open_session(&o);
	if (!t)
		return;
	struct cellgrid *g = cellgrid_create(100, 30);
	keys(t, "/lm_vec_add\r\r");
	tui_draw(t, g);
	CHECK(find(g, "mangled _Z10lm_vec_addPKfS0_Pfi") >= 0);
	CHECK(find(g, "registers 12 -> ") >= 0); /* the probed count depends on the recording */
	CHECKF(find(g, "No.block:4096 Running:") >= 0, "launch summary");
	CHECK(find(g, "SEQ") >= 0);
	keys(t, "\r");
	tui_draw(t, g);
	CHECKF(find(g, "4096 blocks") >= 0 && find(g, "waves/SM") >= 0, "timeline header");
	CHECK(find(g, "cursor SM 0") >= 0);
	CHECK(find(g, "global timer") >= 0);
	/* SM lanes: labels 0 and 2 (two tracks per row) */
	int y0 = find(g, "  0 ");
	CHECK(y0 > 0 && strncmp(row(g, y0 + 1), "  2 ", 4) == 0);
	char before[8192];
	snprintf(before, sizeof before, "%s", row(g, y0));
	keys(t, "++");
	tui_draw(t, g);
	CHECK(strcmp(before, row(g, y0)) != 0);
	keys(t, "0");
	tui_draw(t, g);
	CHECK(strcmp(before, row(g, y0)) == 0);
	keys(t, "t");
	tui_draw(t, g);
	CHECK(find(g, "cycles, each SM from its first block") >= 0);
	keys(t, "c");
	tui_draw(t, g);
	CHECK(find(g, "tail") >= 0);
	keys(t, "jjkJJKLLH][xhl-+");
	tui_draw(t, g);
	CHECK(find(g, "cursor SM") >= 0);
	keys(t, "q");
	tui_draw(t, g);
	CHECK(find(g, "SEQ") >= 0);
	keys(t, "q");
	tui_draw(t, g);
	CHECK(find(g, "KERNEL") == 1);
	/* a kernel without results: Enter twice stays on its page with a message */
	keys(t, "\x1b/lm_node_iota\r\r\r");
	tui_draw(t, g);
	CHECK(find(g, "no probed launches") >= 0);
	CHECK(find(g, "no probed launch to open") >= 0);
	keys(t, "q\x1b");
	/* p on a recorded trace says why it cannot switch probes */
	keys(t, "p");
	tui_draw(t, g);
	CHECK(find(g, "recorded trace") >= 0);
	cellgrid_free(g);
	tui_free(t);
}

/* Every view at many sizes: no crash, nothing drawn past the grid, the
 * status line on the last row. */
static void test_sizes(void)
{
	struct tui_opts o;
	struct tui *t = open_session(&o);
	if (!t)
		return;
	for (int p = 0; p < 4; p++) {
		while (t->depth > 1)
			tui_pop(t);
		keys(t, "\x1b"); /* clears the filter */
		if (p)
			open_timeline(t, "lm_global_add");
		if (p == 1)
			keys(t, "q");
		if (p == 3)
			keys(t, "?");
		for (int w = 20; w <= 300; w += 31)
			for (int h = 6; h <= 70; h += 11) {
				struct cellgrid *g = cellgrid_create(w, h);
				t->show_log = (w + h) % 2;
				tui_draw(t, g);
				if (w >= 40)
					CHECKF(strstr(row(g, h - 1), "help") != NULL || strstr(row(g, h - 1), "kernels") ||
						       strstr(row(g, h - 1), "sorted") || t->status[0],
					       "%dx%d view %d: status row '%s'", w, h, p, row(g, h - 1));
				cellgrid_free(g);
			}
	}
	tui_free(t);
}

/* ---- live requests through a stand-in application ---- */

struct fake_app {
	char text[4096];
	int writes;
};

static int fake_fds(void *ctx, struct pollfd *p, int max)
{
	(void)ctx;
	(void)p;
	(void)max;
	return 0;
}

static int fake_pump(void *ctx, struct tui *t)
{
	(void)ctx;
	(void)t;
	return 0;
}

static void fake_state(void *ctx, struct tui_app_state *st)
{
	(void)ctx;
	st->running = 1;
	st->pid = 4242;
}

static int fake_control(void *ctx, const char *text, char **cause)
{
	(void)cause;
	struct fake_app *f = ctx;
	snprintf(f->text, sizeof f->text, "%s", text);
	f->writes++;
	return 0;
}

static void test_live(void)
{
	struct fake_app fa = {{0}, 0};
	struct tui_app app = {&fa, fake_fds, fake_pump, fake_state, fake_control, NULL, NULL};
	struct tui_probe probes[2] = {{"block_sched", "/p/block_sched.toml", "built-in"},
				      {"mine", "/home/u/my probe.toml", "-p"}};
	struct tui_opts o;
	memset(&o, 0, sizeof o);
	o.config_dir = cfgdir;
	o.theme = "dark";
	o.app = &app;
	o.probes = probes;
	o.n_probes = 2;
	struct tui *t = NULL;
	char *cause = NULL;
	CHECK(tui_create(&o, &t, &cause) == 0);
	free(cause);
	if (!t)
		return;
	t->app_state.running = 1;
	t->app_state.pid = 4242;
	struct cellgrid *g = cellgrid_create(100, 30);
	tui_draw(t, g);
	CHECK(find(g, "waiting for the application") >= 0);
	/* lines arrive in pieces */
	const char *a = "hello t=1 pid=77 ppid=1 exe=/bin/app hook=0.1\nkernel t=2 pid=77 kid=1 mid=1 ptx=1 name=_Z4f";
	const char *b = "illPf\nlaunch t=3 pid=77 kid=1 seq=1 grid=8,1,1 block=64,1,1 probed=0\nkernel t=4 pid=77 kid=2 "
			"mid=1 ptx=0 reason=SASS%20only:%20rebuild%20with%20+PTX name=_Z4sassv\nwarn t=5 pid=77 msg=hi%20there\n";
	tui_feed_bytes(t, a, strlen(a));
	CHECK_EQ_INT(t->td->n_kernels, 0); /* the kernel line is not complete yet */
	CHECK_EQ_INT(t->td->n_procs, 1);
	tui_feed_bytes(t, b, strlen(b));
	CHECK_EQ_INT(t->td->n_kernels, 2);
	tui_app_output(t, 0, "app says hello\n", 15);
	t->show_log = 1;
	tui_draw(t, g);
	CHECK(find(g, "fill(float*)") > 1 && find(g, "sass()") > 1);
	CHECK(find(g, "app| app says hello") > 0 && find(g, "pid 77: hi there") > 0);
	CHECK(find(g, "pid 4242 running") >= 0);
	/* the kernel without PTX refuses the picker */
	keys(t, "/sass\r");
	keys(t, "p");
	tui_draw(t, g);
	CHECK(find(g, "cannot be probed") >= 0 && fa.writes == 0);
	/* pick both probes, every 5th launch */
	keys(t, "\x1b/fill\rp");
	tui_draw(t, g);
	CHECK(find(g, "probes for fill(float*)") >= 0 && find(g, "[x] block_sched") >= 0);
	keys(t, "j ");
	tui_key(t, '\t');
	tui_key(t, '\t');
	keys(t, "5\r");
	CHECK_EQ_INT(fa.writes, 1);
	CHECKF(strstr(fa.text, "control version=1 gen=1\n") == fa.text, "%s", fa.text);
	CHECKF(strstr(fa.text, "probe name=_Z4fillPf probes=/p/block_sched.toml,/home/u/my%20probe.toml mode=nth n=5\n"),
	       "%s", fa.text);
	tui_draw(t, g);
	CHECKF(find(g, "every 5th") > 1, "requested state on the row");
	/* a failure after the request shows on the kernel */
	const char *fail = "instrument t=6 pid=77 kid=1 status=failed reason=verifier:%20bad probes=block_sched\n";
	tui_feed_bytes(t, fail, strlen(fail));
	tui_draw(t, g);
	CHECK(find(g, "failed: verifier") > 1 && find(g, "instrumenting fill(float*) failed") > 0);
	/* P switches it off: an empty selection, next generation */
	keys(t, "P");
	CHECK_EQ_INT(fa.writes, 2);
	CHECKF(!strcmp(fa.text, "control version=1 gen=2\n"), "%s", fa.text);
	/* next-launch request, fulfilled by a result: dropped from the next file */
	keys(t, "p\r");
	CHECK(strstr(fa.text, "mode=next") != NULL);
	const char *res = "instrument t=7 pid=77 kid=1 status=ok probes=block_sched regs_orig=8 regs_probed=16\n"
			  "launch t=7 pid=77 kid=1 seq=9 grid=8,1,1 block=64,1,1 probed=1\n"
			  "result t=8 pid=77 kid=1 seq=9 file=results/77-9.ntr maps=1 records=16 dropped=0 bytes=1 ns=1\n";
	tui_feed_bytes(t, res, strlen(res));
	tui_draw(t, g);
	CHECK(find(g, "probed 1") > 1);
	CHECK(find(g, "result for fill(float*) launch 9") > 0);
	keys(t, "\x1b/sass\rP"); /* any rewrite */
	CHECKF(!strstr(fa.text, "_Z4fillPf"), "fulfilled next request still in the file: %s", fa.text);
	/* quitting while the app runs asks */
	keys(t, "\x1bq");
	tui_draw(t, g);
	CHECK(find(g, "still running") >= 0 && !t->quit);
	keys(t, "c");
	CHECK(!t->quit && t->depth == 1);
	tui_key(t, TK_CTRL('c'));
	keys(t, "d");
	CHECK(t->quit && t->app_state.detached);
	cellgrid_free(g);
	tui_free(t);
}

int main(void)
{
	if (!mkdtemp(cfgdir))
		return 1;
	test_list();
	test_launches_timeline();
	test_sizes();
	test_live();
	char path[128];
	snprintf(path, sizeof path, "%s/ntop.conf", cfgdir);
	CHECK(access(path, R_OK) == 0); /* settings saved on exit */
	unlink(path);
	rmdir(cfgdir);
	return testlib_report();
}
