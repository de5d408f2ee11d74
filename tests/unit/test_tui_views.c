/* The views driven without a terminal: a tui on the bundled recorded
 * session (examples/session), keys in, screens drawn into a cell grid and
 * read back as text. Covers the kernel list (sort, filter, mangled names),
 * a kernel's launches, the timeline and its keys, help, the log pane, a
 * sweep of screen sizes, line feeding in pieces, live probe requests
 * written to a control file through a stand-in application, and the DMAT
 * heatmap on a synthetic trace written with the trace writer. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/strbuf.h"
#include "testlib.h"
#include "trace/result.h"
#include "tui/tui.h"
#include "viz/dmat.h"

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
	CHECK(find(g, "ntop keys") >= 0 && find(g, "zoom at cursor; 0: fit") >= 0);
	keys(t, "q");
	tui_draw(t, g);
	CHECK(find(g, "KERNEL") == 1);
	/* log pane: the declined probe is there, its reason in full (lines wrap) */
	keys(t, "L");
	struct cellgrid *tall = cellgrid_create(80, 44);
	tui_draw(t, tall);
	int y = find(tall, "probe declined on lm_captured_axpy");
	CHECKF(y > 0, "log pane");
	CHECK(y > 0 && find(tall, "  stream capture active: probed launches") == y + 1);
	CHECK(find(tall, "log:") > 0);
	cellgrid_free(tall);
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
	CHECKF(strstr(row(g, 29), "Enter timeline") && !strstr(row(g, 29), "heatmap"), "hints: %s", row(g, 29));
	keys(t, "d");
	tui_draw(t, g);
	CHECK(t->depth == 2 && find(g, "no dmat records to draw a heatmap") >= 0);
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

/* No colours (--no-color / NO_COLOR) or the mono theme: the timeline gives
 * each SM its own row of alternating glyphs instead of half blocks. */
static void test_mono(void)
{
	for (int how = 0; how < 2; how++) {
		struct tui_opts o;
		struct tui *t = open_session(&o);
		if (!t)
			return;
		if (how == 0)
			t->mono = 1; /* what tui_run sets without colours */
		else
			theme_builtin("mono", &t->theme);
		struct cellgrid *g = cellgrid_create(80, 24);
		tui_draw(t, g);
		keys(t, "/lm_vec_add\r\r");
		tui_draw(t, g);
		keys(t, "\r");
		tui_draw(t, g);
		int y0 = find(g, "  0 ");
		CHECKF(y0 > 0 && strncmp(row(g, y0 + 1), "  1 ", 4) == 0, "how %d: SM 1 not on its own row", how);
		CHECKF(y0 > 0 && strstr(row(g, y0), "\xe2\x96\x88") && !strstr(row(g, y0), "\xe2\x96\x80"),
		       "how %d: %s", how, y0 > 0 ? row(g, y0) : "");
		CHECK(find(g, "alternating blocks") > 0);
		cellgrid_free(g);
		tui_free(t);
	}
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

/* ---- the DMAT heatmap on a synthetic trace ---- */

#define HM_BASE 0x7f0000000000ull
#define HM_PAGE 4096ull
#define HM_THREADS 64u
#define HM_CAP 4u

static void hm_field(struct probe_map *pm, const char *name, enum probe_type ty)
{
	struct probe_field *f = &pm->fields[pm->n_fields++];
	snprintf(f->name, sizeof f->name, "%s", name);
	f->type = ty;
	f->offset = pm->rec_size;
	pm->rec_size += ty;
}

/* One block of 64 threads, 4 accesses each over 8 pages in two ranges 1 MiB
 * apart (so two address ranges); thread u's access j at cycle 10u + 3j. */
static struct result *hm_result(void)
{
	struct result *r = calloc(1, sizeof *r);
	r->pid = 700;
	r->seq = 5;
	r->kernel_id = 1;
	r->kernel = strdup("_Z4scanPfS_");
	r->probes = strdup("dmat");
	r->grid[0] = r->grid[1] = r->grid[2] = 1;
	r->block[0] = HM_THREADS;
	r->block[1] = r->block[2] = 1;
	r->device_sms = 132;
	r->device_cc = 90;
	r->sm_clock_khz = 1980000;
	r->n_maps = 1;
	r->maps = calloc(1, sizeof *r->maps);
	struct result_map *m = &r->maps[0];
	snprintf(m->map.name, sizeof m->map.name, "dmat");
	m->map.level = PROBE_LEVEL_THREAD;
	m->map.cap = HM_CAP;
	m->stored = m->map.cap;
	hm_field(&m->map, "addr", PROBE_U64);
	hm_field(&m->map, "clock", PROBE_U32);
	hm_field(&m->map, "sizekind", PROBE_U32);
	m->units = HM_THREADS;
	m->counts = calloc(HM_THREADS, 4);
	m->records = calloc(HM_THREADS * HM_CAP, 16);
	for (uint32_t u = 0; u < HM_THREADS; u++) {
		for (uint32_t j = 0; j < HM_CAP; j++) {
			uint32_t p = (u / 8 + j) % 8;
			uint64_t a = HM_BASE + (p < 4 ? p * HM_PAGE : 0x100000 + p * HM_PAGE) + (u % 8) * 16;
			uint32_t c = 5000 + 10 * u + 3 * j, sk = 16 | (uint32_t)(j == 3 ? DMAT_KIND_STORE : DMAT_KIND_LOAD) << 24;
			uint8_t *rec = m->records + ((size_t)u * HM_CAP + j) * 16;
			memcpy(rec, &a, 8);
			memcpy(rec + 8, &c, 4);
			memcpy(rec + 12, &sk, 4);
		}
		m->counts[u] = HM_CAP * 16;
	}
	m->records_written = HM_THREADS * HM_CAP;
	return r;
}

static int hm_fixture(const char *dir)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/results", dir);
	if (mkdir(path, 0755) < 0)
		return -1;
	struct result *r = hm_result();
	char *cause = NULL;
	int rc = result_write(path, "700-5.ntr", r, &cause);
	CHECKF(rc == 0, "%s", cause ? cause : "");
	free(cause);
	result_free(r);
	snprintf(path, sizeof path, "%s/events.log", dir);
	FILE *f = fopen(path, "w");
	if (rc < 0 || !f)
		return -1;
	fputs("record t=1 pid=4300 argv=./scan version=0.1.0\n"
	      "hello t=2 pid=700 ppid=4300 exe=/tmp/scan hook=0.1.0 driver=/usr/lib/libcuda.so.1\n"
	      "device t=3 pid=700 ordinal=0 name=NVIDIA%20H100 cc=90 sms=132 clock_khz=1980000\n"
	      "module t=4 pid=700 mid=1 api=cuLibraryLoadData kind=fatbin size=4096 ptx=1 sass=1 source=app\n"
	      "kernel t=5 pid=700 kid=1 mid=1 name=_Z4scanPfS_ ptx=1\n"
	      "instrument t=7 pid=700 kid=1 status=ok probes=dmat reason= regs_orig=12 regs_probed=18 sites=4 ms_jit=120\n"
	      "launch t=8 pid=700 kid=1 seq=5 api=cuLaunchKernel grid=1,1,1 block=64,1,1 smem=0 probed=1\n"
	      "result t=9 pid=700 kid=1 seq=5 file=results/700-5.ntr maps=1 records=256 dropped=0 bytes=1 ns=1\n"
	      "exit t=10 pid=700 launches=1\n",
	      f);
	return fclose(f) == 0 ? 0 : -1;
}

/* Rows of the plot that hold a heatmap glyph (half blocks or the ASCII ramp). */
static int hm_lit_rows(struct cellgrid *g, int utf8)
{
	int n = 0;
	for (int y = 2; y < g->h - 4; y++) {
		const char *r = row(g, y);
		n += utf8 ? strstr(r, "\xe2\x96\x80") || strstr(r, "\xe2\x96\x84") || strstr(r, "\xe2\x96\x88")
			  : strpbrk(r + 16, ".:-=+*#%@") != NULL;
	}
	return n;
}

static void hm_snapshot(struct cellgrid *g, char *buf, size_t len)
{
	size_t o = 0;
	for (int y = 1; y < g->h - 1 && o < len; y++)
		o += (size_t)snprintf(buf + o, len - o, "%s\n", row(g, y));
}

static void test_heatmap(void)
{
	char dir[] = "/tmp/ntop-tui-heatmap-XXXXXX";
	if (!mkdtemp(dir) || hm_fixture(dir) < 0) {
		CHECK(0);
		return;
	}
	for (int utf8 = 0; utf8 < 2; utf8++) {
		struct tui_opts o;
		memset(&o, 0, sizeof o);
		o.trace_dir = dir;
		o.config_dir = cfgdir;
		o.theme = "dark";
		o.ascii = !utf8;
		struct tui *t = NULL;
		char *cause = NULL;
		CHECKF(tui_create(&o, &t, &cause) == 0, "%s", cause ? cause : "");
		free(cause);
		if (!t)
			continue;
		struct cellgrid *g = cellgrid_create(100, 30);
		tui_draw(t, g);
		keys(t, "\r");
		tui_draw(t, g);
		CHECKF(find(g, "dmat: 256 memory accesses recorded") >= 0, "launch summary");
		CHECKF(strstr(row(g, 29), "Enter heatmap") != NULL, "hints: %s", row(g, 29));
		keys(t, "\r");
		tui_draw(t, g);
		CHECK(t->depth == 3 && t->stack[2]->ops == &view_heatmap_ops);
		CHECKF(find(g, "DMAT launch 5") >= 0 && find(g, "scan(float*, float*)") >= 0, "title");
		/* the cursor starts on the first bin at the lowest address */
		CHECKF(find(g, "0x7f0000000000-") >= 0 && find(g, "accesses") >= 0, "readout");
		CHECKF(find(g, "256 accesses") >= 0 && find(g, "2 ranges") >= 0, "totals");
		CHECKF(find(g, "accesses/cell 1") >= 0, "legend");
		CHECKF(hm_lit_rows(g, utf8) >= 3, "lit rows (utf8 %d): %d", utf8, hm_lit_rows(g, utf8));
		char fit[16384], now[16384];
		hm_snapshot(g, fit, sizeof fit);
		keys(t, "++");
		tui_draw(t, g);
		hm_snapshot(g, now, sizeof now);
		CHECK(strcmp(fit, now) != 0);
		keys(t, "0");
		tui_draw(t, g);
		hm_snapshot(g, now, sizeof now);
		CHECKF(strcmp(fit, now) == 0, "0 fits again");
		/* the cursor moves: its readout changes */
		int hy = find(g, "0x7f0000000000-");
		char before[4096];
		snprintf(before, sizeof before, "%s", hy >= 0 ? row(g, hy) : "");
		keys(t, "LLLKK");
		tui_draw(t, g);
		CHECKF(hy >= 0 && strcmp(before, row(g, hy)) != 0, "cursor readout: %s", row(g, hy));
		keys(t, "z");
		tui_draw(t, g);
		hm_snapshot(g, now, sizeof now);
		CHECK(strcmp(fit, now) != 0);
		keys(t, "jkhl0");
		/* a: the first range alone, then the second, then all */
		keys(t, "a");
		tui_draw(t, g);
		CHECKF(find(g, "range 1 of 2") >= 0, "range");
		keys(t, "aa");
		tui_draw(t, g);
		hm_snapshot(g, now, sizeof now);
		CHECKF(strcmp(fit, now) == 0 && find(g, "range 1 of 2") < 0, "back to every range");
		/* t: no global timer in these records */
		keys(t, "t");
		tui_draw(t, g);
		CHECKF(find(g, "no global timer") >= 0, "time toggle");
		if (utf8) {
			keys(t, "e");
			CHECK(tui_export_poll(t, 1) == 1); /* written by a child process */
			char png[4200];
			snprintf(png, sizeof png, "%s/export/scan-k1-p700-5-dmat.png", dir);
			struct stat st;
			CHECKF(stat(png, &st) == 0 && st.st_size > 1000, "%s", png);
			FILE *f = fopen(png, "rb");
			unsigned char sig[8] = {0};
			CHECK(f && fread(sig, 1, 8, f) == 8 && memcmp(sig, "\x89PNG\r\n\x1a\n", 8) == 0);
			if (f)
				fclose(f);
			tui_draw(t, g);
			CHECK(find(g, "exported") >= 0);
			unlink(png);
			snprintf(png, sizeof png, "%s/export", dir);
			rmdir(png);
		}
		/* small screens do not crash */
		for (int w = 12; w <= 60; w += 16)
			for (int h = 5; h <= 14; h += 3) {
				struct cellgrid *sg = cellgrid_create(w, h);
				tui_draw(t, sg);
				cellgrid_free(sg);
			}
		keys(t, "q");
		tui_draw(t, g);
		CHECK(t->depth == 2 && find(g, "SEQ") >= 0);
		keys(t, "d");
		CHECK(t->depth == 3);
		cellgrid_free(g);
		tui_free(t);
	}
	char cmd[256];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
}

/* Export jobs for test_export: one slow, one failing, one killed. */
static int slow_job(void *arg, char **cause)
{
	(void)cause;
	usleep(1500 * 1000);
	FILE *f = fopen(arg, "w");
	return f && fputs("done", f) >= 0 && fclose(f) == 0 ? 0 : -1;
}

static int failing_job(void *arg, char **cause)
{
	(void)arg;
	*cause = strdup("the disk is full (test)");
	return -1;
}

static int dying_job(void *arg, char **cause)
{
	(void)arg;
	(void)cause;
	raise(SIGKILL);
	return 0;
}

/* Exports: where a PNG goes when the trace directory is not the user's
 * (the current directory, the reason in the log, a short path on the status
 * line); a slow export keeps the UI answering keys and shows progress after
 * a second; a failure and a killed writer are reported. */
static void test_export(void)
{
	char dir[] = "/tmp/ntop-tui-export-XXXXXX", cwd[] = "/tmp/ntop-tui-cwd-XXXXXX", old[4096];
	if (!mkdtemp(dir) || hm_fixture(dir) < 0 || !mkdtemp(cwd) || !getcwd(old, sizeof old) || chdir(cwd) < 0) {
		CHECK(0);
		return;
	}
	/* someone else's trace: root takes it away by owner, anyone else by mode */
	CHECK(geteuid() == 0 ? chown(dir, 65534, 65534) == 0 : chmod(dir, 0555) == 0);
	struct tui_opts o;
	memset(&o, 0, sizeof o);
	o.trace_dir = dir;
	o.config_dir = cfgdir;
	o.theme = "dark";
	struct tui *t = NULL;
	char *cause = NULL;
	CHECKF(tui_create(&o, &t, &cause) == 0, "%s", cause ? cause : "");
	free(cause);
	struct cellgrid *g = cellgrid_create(80, 24);
	if (!t || !g)
		goto out;
	t->show_log = 1;
	tui_draw(t, g);
	keys(t, "\r");
	tui_draw(t, g);
	keys(t, "\r");
	tui_draw(t, g);
	CHECK(t->depth == 3);
	keys(t, "e");
	CHECK(tui_export_poll(t, 1) == 1);
	char png[8300];
	snprintf(png, sizeof png, "%s/scan-k1-p700-5-dmat.png", cwd);
	struct stat st;
	CHECKF(stat(png, &st) == 0 && st.st_size > 1000, "not in the current directory: %s", png);
	snprintf(png, sizeof png, "%s/export", dir);
	CHECKF(access(png, F_OK) < 0, "%s made in someone else's trace", png);
	tui_draw(t, g);
	CHECKF(strstr(row(g, 23), "exported ./scan-k1-p700-5-dmat.png") != NULL, "status: %s", row(g, 23));
	CHECK(find(g, "not writing into the trace directory") >= 0);
	snprintf(png, sizeof png, "%s/scan-k1-p700-5-dmat.png", cwd);
	CHECK(find(g, png) >= 0 || find(g, "scan-k1-p700-5-dmat.png") >= 0); /* the log wraps the full path */
	unlink(png);

	/* a slow export: no progress in its first second, then progress; keys
	 * work meanwhile; a second export waits for the first */
	snprintf(png, sizeof png, "%s/slow.png", cwd);
	CHECK(tui_export(t, png, slow_job, png) == 0);
	tui_draw(t, g);
	CHECKF(!strstr(row(g, 23), "writing slow.png"), "progress at once: %s", row(g, 23));
	CHECK(tui_export(t, png, slow_job, png) < 0);
	tui_draw(t, g);
	CHECKF(strstr(row(g, 23), "still being written") != NULL, "second export: %s", row(g, 23));
	usleep(1100 * 1000);
	CHECK(tui_export_poll(t, 0) == 0);
	tui_draw(t, g);
	CHECKF(strstr(row(g, 23), "writing slow.png: drawing, 1 s") != NULL, "progress: %s", row(g, 23));
	keys(t, "q");
	CHECK(t->depth == 2); /* the view closed while its export runs */
	CHECK(tui_export_poll(t, 1) == 1);
	tui_draw(t, g);
	CHECKF(strstr(row(g, 23), "exported ./slow.png") != NULL, "after: %s", row(g, 23));
	CHECK(access(png, F_OK) == 0);
	unlink(png);

	CHECK(tui_export(t, png, failing_job, NULL) == 0 && tui_export_poll(t, 1) == 1);
	tui_draw(t, g);
	CHECKF(strstr(row(g, 23), "export failed: the disk is full (test)") != NULL, "%s", row(g, 23));
	CHECK(tui_export(t, png, dying_job, NULL) == 0 && tui_export_poll(t, 1) == 1);
	tui_draw(t, g);
	CHECK(find(g, "killed by signal 9") >= 0);
out:
	cellgrid_free(g);
	tui_free(t);
	CHECK(chdir(old) == 0);
	CHECK(geteuid() == 0 || chmod(dir, 0755) == 0); /* so that it can be removed */
	char cmd[200];
	snprintf(cmd, sizeof cmd, "rm -rf %s %s", dir, cwd);
	CHECK(system(cmd) == 0);
}

int main(void)
{
	if (!mkdtemp(cfgdir))
		return 1;
	test_list();
	test_launches_timeline();
	test_mono();
	test_sizes();
	test_live();
	test_heatmap();
	test_export();
	char path[128];
	snprintf(path, sizeof path, "%s/ntop.conf", cfgdir);
	CHECK(access(path, R_OK) == 0); /* settings saved on exit */
	unlink(path);
	rmdir(cfgdir);
	return testlib_report();
}
