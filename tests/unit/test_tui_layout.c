/* The TUI's curses-free parts: screen regions and table columns at every
 * width from 40 to 300 (nothing overlaps, columns drop by priority, the
 * kernel name always stays), help text fitting, text clipping, export file
 * names, settings, the log ring and the kernel table's sort and filter. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"
#include "trace/trace_dir.h"
#include "tui/export.h"
#include "tui/help.h"
#include "tui/ktable.h"
#include "tui/layout.h"
#include "tui/msglog.h"
#include "tui/rcache.h"
#include "tui/settings.h"

static void test_screen(void)
{
	for (int w = 40; w <= 300; w += 7)
		for (int h = 6; h <= 80; h++)
			for (int log = 0; log <= 1; log++) {
				struct layout_screen s;
				layout_screen(w, h, log, &s);
				CHECK(!s.too_small);
				CHECKF(s.title_y == 0 && s.status_y == h - 1, "%dx%d", w, h);
				CHECKF(s.view_y == 1 && s.view_h >= 4, "%dx%d view %d+%d", w, h, s.view_y, s.view_h);
				int end = s.view_y + s.view_h + s.log_h;
				CHECKF(end == s.status_y, "%dx%d: regions end at %d, status at %d", w, h, end, s.status_y);
				if (s.log_h)
					CHECK(s.log_y == s.view_y + s.view_h && s.log_h >= 3 && s.log_h <= 14);
				if (log && h >= 24)
					CHECKF(s.log_h > 0, "log pane hidden at %dx%d", w, h);
			}
	struct layout_screen s;
	layout_screen(19, 24, 0, &s);
	CHECK(s.too_small);
	layout_screen(80, 5, 0, &s);
	CHECK(s.too_small);
}

static void check_columns(const struct layout_col *c, int n, int width, int flex)
{
	int x[64], w[64];
	layout_columns(c, n, width, x, w);
	int end = 0;
	for (int i = 0; i < n; i++) {
		if (!w[i])
			continue;
		CHECKF(x[i] >= end, "width %d: column %s at %d overlaps (previous ends at %d)", width, c[i].title, x[i], end);
		CHECKF(x[i] + w[i] <= width, "width %d: column %s ends at %d", width, c[i].title, x[i] + w[i]);
		CHECKF(w[i] >= c[i].width || c[i].flex, "width %d: column %s narrower than asked", width, c[i].title);
		end = x[i] + w[i] + 1;
		/* no column with a lower priority number is dropped while this one shows */
		for (int j = 0; j < n; j++)
			if (!w[j] && c[j].priority > 0)
				CHECKF(c[j].priority >= c[i].priority, "width %d: %s dropped before %s", width, c[j].title,
				       c[i].title);
	}
	CHECKF(w[flex] >= c[flex].width, "width %d: name column %d < %d", width, w[flex], c[flex].width);
}

static void test_columns(void)
{
	struct layout_col cols[KC_N];
	for (int multi = 0; multi <= 3; multi++) {
		ktable_columns(multi & 1, multi >> 1, cols);
		for (int width = 40; width <= 300; width++)
			check_columns(cols, KC_N, width, KC_NAME);
	}
	int x[KC_N], w[KC_N];
	ktable_columns(0, 0, cols);
	layout_columns(cols, KC_N, 80, x, w);
	CHECK(w[KC_LAUNCHES] && w[KC_PROBE] && w[KC_MEAN] && w[KC_TRACES]);
	CHECK(!w[KC_BLOCK]);
	CHECK(x[KC_NAME] + w[KC_NAME] == 80); /* the name takes the rest */
	layout_columns(cols, KC_N, 200, x, w);
	for (int i = 0; i < KC_N; i++)
		CHECKF(w[i] > 0 || i == KC_GPU, "column %d dropped at 200", i);
	CHECK(!w[KC_GPU]); /* one GPU per process: no GPU column at any width */
	CHECK(w[KC_NAME] >= 48);
	layout_columns(cols, KC_N, 120, x, w);
	CHECKF(w[KC_NAME] >= 48, "name gets %d at 120 (luxury columns should make room)", w[KC_NAME]);
	CHECK(w[KC_LAUNCHES] && w[KC_PROBE] && w[KC_MEAN] && w[KC_PTX]);
	layout_columns(cols, KC_N, 40, x, w);
	CHECK(w[KC_NAME] >= 24 && w[KC_LAUNCHES]);
	/* multi-process traces keep the PID column longer */
	ktable_columns(1, 0, cols);
	layout_columns(cols, KC_N, 80, x, w);
	CHECK(w[KC_PID] > 0);
	/* a process on several GPUs: the GPU column stays at 80 */
	ktable_columns(0, 1, cols);
	layout_columns(cols, KC_N, 80, x, w);
	CHECK(w[KC_GPU] > 0 && w[KC_LAUNCHES] > 0 && x[KC_NAME] + w[KC_NAME] == 80);
}

static void test_help(void)
{
	for (int width = 40; width <= 300; width++) {
		int kw, cw, rows;
		int cols = layout_help(help_items, help_n_items, width - 2, &kw, &cw, &rows);
		CHECK(cols >= 1 && cols <= 4);
		CHECK(cols * cw + (cols - 1) * 3 <= width - 2);
		CHECK(rows * cols >= help_n_items);
		for (int i = 0; i < help_n_items; i++) {
			const struct layout_help_item *it = &help_items[i];
			if (it->what)
				CHECKF(layout_text_cells(it->keys) <= kw && kw + 2 + layout_text_cells(it->what) <= cw,
				       "width %d: '%s' does not fit", width, it->what);
			else
				CHECKF(layout_text_cells(it->keys) <= cw, "width %d: title %s", width, it->keys);
		}
	}
	/* 80x24: two columns, all rows visible (view 22 rows minus title and gap) */
	int kw, cw, rows;
	CHECK_EQ_INT(layout_help(help_items, help_n_items, 78, &kw, &cw, &rows), 2);
	CHECKF(rows <= 20, "help needs %d rows at 80x24", rows);
	/* every documented view key is there */
	const char *keys[] = {"/", "Enter", "+ -", "e", "t", "c", "L", "?", "p", "P", "S"};
	for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
		int found = 0;
		for (int i = 0; i < help_n_items; i++)
			found |= strstr(help_items[i].keys, keys[k]) != NULL;
		CHECKF(found, "help lacks %s", keys[k]);
	}
}

static void test_text(void)
{
	char buf[64];
	layout_clip("abcdef", 4, "~", buf, sizeof buf);
	CHECK(!strcmp(buf, "abc~"));
	layout_clip("abcd", 4, "~", buf, sizeof buf);
	CHECK(!strcmp(buf, "abcd"));
	layout_clip("\xc3\xa9t\xc3\xa9 long", 4, "\xe2\x80\xa6", buf, sizeof buf);
	CHECKF(!strcmp(buf, "\xc3\xa9t\xc3\xa9\xe2\x80\xa6"), "utf8 clip: %s", buf);
	CHECK_EQ_INT(layout_text_cells(buf), 4);
	layout_clip("abc", 0, "~", buf, sizeof buf);
	CHECK(buf[0] == 0);
	layout_clip("abcdef", 3, "~", buf, 3); /* buffer shorter than asked */
	CHECK(strlen(buf) < 3);
	CHECK_EQ_INT(layout_text_cells("\xff\xfe"), 2); /* stray bytes count one cell each */
	CHECK_EQ_INT(layout_scroll(0, 30, 10, 100), 21);
	CHECK_EQ_INT(layout_scroll(21, 25, 10, 100), 21);
	CHECK_EQ_INT(layout_scroll(21, 3, 10, 100), 3);
	CHECK_EQ_INT(layout_scroll(50, 99, 10, 5), 0);
	CHECK_EQ_INT(layout_scroll(90, 95, 10, 96), 86);
}

/* A message too long for the status line keeps its verb and its end; a
 * log line wraps into rows that hold every character. */
static void test_tail_and_wrap(void)
{
	char buf[128];
	const char *msg = "exported /home/u/ntop-trace/20261121-101500_4242/export/lm_global_add-k7-p1829-8-timeline.png";
	layout_clip_tail(msg, 9, 40, "\xe2\x80\xa6", buf, sizeof buf);
	CHECKF(!strcmp(buf, "exported \xe2\x80\xa6""al_add-k7-p1829-8-timeline.png"), "tail: %s", buf);
	CHECK_EQ_INT(layout_text_cells(buf), 40);
	layout_clip_tail("short", 9, 40, "~", buf, sizeof buf);
	CHECK(!strcmp(buf, "short"));
	layout_clip_tail("abcdefghij", 0, 5, "~", buf, sizeof buf);
	CHECKF(!strcmp(buf, "~ghij"), "no head: %s", buf);
	layout_clip_tail("abcdefghij", 8, 5, "~", buf, sizeof buf); /* the head alone would fill it */
	CHECKF(!strcmp(buf, "~ghij"), "head dropped: %s", buf);
	layout_clip_tail("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 1, 3, "~", buf, sizeof buf);
	CHECKF(!strcmp(buf, "\xc3\xa9~\xc3\xa9"), "utf8 tail: %s", buf);

	/* 26 letters in 10 cells, continuation indented by 2: 10 + 8 + 8 */
	const char *abc = "abcdefghijklmnopqrstuvwxyz";
	CHECK_EQ_INT(layout_wrap(abc, 10, 2, 0, NULL, 0), 3);
	layout_wrap(abc, 10, 2, 0, buf, sizeof buf);
	CHECK(!strcmp(buf, "abcdefghij"));
	layout_wrap(abc, 10, 2, 1, buf, sizeof buf);
	CHECK(!strcmp(buf, "  klmnopqr"));
	layout_wrap(abc, 10, 2, 2, buf, sizeof buf);
	CHECK(!strcmp(buf, "  stuvwxyz"));
	CHECK_EQ_INT(layout_wrap(abc, 10, 2, 3, buf, sizeof buf), 3);
	CHECK(buf[0] == 0);
	CHECK_EQ_INT(layout_wrap("abc", 10, 2, 0, NULL, 0), 1);
	CHECK_EQ_INT(layout_wrap("", 10, 2, 0, NULL, 0), 1);
	CHECK_EQ_INT(layout_wrap("abcdefghijk", 10, 2, 0, NULL, 0), 2);
	/* words stay whole where a blank lies in the row's second half */
	CHECK_EQ_INT(layout_wrap("exported one two", 10, 2, 0, NULL, 0), 2);
	layout_wrap("exported one two", 10, 2, 0, buf, sizeof buf);
	CHECKF(!strcmp(buf, "exported "), "word row 0: '%s'", buf);
	layout_wrap("exported one two", 10, 2, 1, buf, sizeof buf);
	CHECKF(!strcmp(buf, "  one two"), "word row 1: '%s'", buf);
	layout_wrap("a bcdefghijklm", 10, 2, 0, buf, sizeof buf); /* the blank is too early: split the word */
	CHECKF(!strcmp(buf, "a bcdefghi"), "early blank: '%s'", buf);
	/* every character lands in exactly one row, at any width */
	for (int w = 3; w <= 30; w++) {
		char joined[128] = "";
		int rows = layout_wrap(msg, w, 2, 0, NULL, 0);
		for (int r = 0; r < rows; r++) {
			layout_wrap(msg, w, 2, r, buf, sizeof buf);
			CHECKF(layout_text_cells(buf) <= w, "width %d row %d: %s", w, r, buf);
			strcat(joined, r ? buf + 2 : buf);
		}
		CHECKF(!strcmp(joined, msg), "width %d: %s", w, joined);
	}
}

static void test_export_names(void)
{
	char buf[EXPORT_NAME_MAX + 1];
	export_safe_name("_Z10lm_vec_addPKfS0_Pfi", buf, sizeof buf);
	CHECKF(!strcmp(buf, "lm_vec_add"), "%s", buf);
	export_safe_name("_ZN2at6native4fillIfEEvPT_i", buf, sizeof buf);
	CHECKF(!strcmp(buf, "at_native_fill_float"), "%s", buf);
	export_safe_name("../../etc/passwd", buf, sizeof buf);
	CHECKF(!strchr(buf, '/') && strcmp(buf, "..") && buf[0] != '.', "%s", buf);
	export_safe_name("", buf, sizeof buf);
	CHECK(!strcmp(buf, "kernel"));
	char big[5000];
	memset(big, 'a', sizeof big - 1);
	big[sizeof big - 1] = 0;
	export_safe_name(big, buf, sizeof buf);
	CHECK(strlen(buf) <= EXPORT_NAME_MAX);
	struct td_kernel k = {0};
	k.pid = 77;
	k.kid = 3;
	k.name = "_Z4fillPf";
	char *p = export_timeline_path("/tmp/tr", &k, 12);
	CHECKF(p && !strcmp(p, "/tmp/tr/fill-k3-p77-12-timeline.png"), "%s", p);
	free(p);
}

static void test_settings(void)
{
	char dir[] = "/tmp/ntop-tui-settings-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char path[256];
	snprintf(path, sizeof path, "%s/sub/ntop.conf", dir);
	struct settings s, r;
	settings_defaults(&s);
	CHECK(!strcmp(s.theme, "dark") && !strcmp(s.sort, "launches"));
	snprintf(s.theme, sizeof s.theme, "light");
	snprintf(s.sort, sizeof s.sort, "mean");
	s.sort_reverse = 1;
	s.mangled = 1;
	char *cause = NULL;
	CHECK(settings_save(&s, path, &cause) == 0);
	free(cause);
	settings_defaults(&r);
	CHECK_EQ_INT(settings_load(&r, path), 0);
	CHECK(!strcmp(r.theme, "light") && !strcmp(r.sort, "mean") && r.sort_reverse && r.mangled && !r.show_log);
	FILE *f = fopen(path, "w");
	fprintf(f, "# c\ntheme=mono\nbogus = 1\nmangled = maybe\nnoequals\n  show_log = yes  \n");
	fclose(f);
	settings_defaults(&r);
	CHECK_EQ_INT(settings_load(&r, path), 3);
	CHECK(!strcmp(r.theme, "mono") && r.show_log && !r.mangled);
	CHECK_EQ_INT(settings_load(&r, "/nonexistent/ntop.conf"), 0);
	setenv("XDG_CONFIG_HOME", "/x/cfg", 1);
	char *d = settings_dir();
	CHECK(d && !strcmp(d, "/x/cfg/ntop"));
	free(d);
	unsetenv("XDG_CONFIG_HOME");
	unlink(path);
	snprintf(path, sizeof path, "%s/sub", dir);
	rmdir(path);
	rmdir(dir);
}

static void test_msglog(void)
{
	struct msglog *l = msglog_create(3);
	msglog_add(l, MSG_INFO, 0, "one");
	msglog_add(l, MSG_WARN, 0, "two\tand\x01");
	CHECK_EQ_INT(l->n, 2);
	CHECK(!strcmp(msglog_get(l, 1)->text, "two and?"));
	for (int i = 0; i < 5; i++)
		msglog_addf(l, MSG_ERROR, "e%d", i);
	CHECK_EQ_INT(l->n, 3);
	CHECK(l->total == 7 && l->warnings == 6);
	CHECK(!strcmp(msglog_get(l, 0)->text, "e2") && !strcmp(msglog_get(l, 2)->text, "e4"));
	CHECK(msglog_get(l, 3) == NULL);
	msglog_free(l);
}

static void test_ktable(void)
{
	struct trace_dir *td = NULL;
	char *cause = NULL;
	CHECK(trace_dir_load(testlib_src("examples/session"), &td, &cause) == 0);
	free(cause);
	if (!td)
		return;
	struct rcache rc;
	rcache_init(&rc);
	struct ktable kt;
	ktable_init(&kt);
	struct ktable_ctx c = {td, &rc, 1, 0, NULL, NULL};
	ktable_update(&kt, &c);
	CHECK_EQ_INT(kt.n, 9);
	/* launches, larger first */
	CHECK(td->kernels[kt.rows[0].k].launches >= td->kernels[kt.rows[kt.n - 1].k].launches);
	kt.sort = KC_NAME;
	ktable_mark(&kt);
	ktable_update(&kt, &c);
	for (int i = 1; i < kt.n; i++)
		CHECK(strcmp(td->kernels[kt.rows[i - 1].k].demangled, td->kernels[kt.rows[i].k].demangled) <= 0);
	snprintf(kt.filter, sizeof kt.filter, "GLOBAL");
	ktable_mark(&kt);
	ktable_update(&kt, &c);
	CHECK_EQ_INT(kt.n, 2); /* lm_global_add, lm_global_read: case-insensitive */
	snprintf(kt.filter, sizeof kt.filter, "PKfS0_");
	ktable_mark(&kt);
	ktable_update(&kt, &c);
	CHECK_EQ_INT(kt.n, 1); /* mangled names match too */
	const struct td_kernel *k = &td->kernels[kt.rows[0].k];
	CHECK(ktable_find(&kt, td, k->pid, k->kid, 0) == 0);
	char buf[128];
	int role;
	ktable_cell(&c, k, KC_PROBE, buf, sizeof buf, &role);
	CHECKF(!strcmp(buf, "probed 1"), "%s", buf);
	ktable_cell(&c, k, KC_GRID, buf, sizeof buf, &role);
	CHECK(!strcmp(buf, "4096"));
	ktable_cell(&c, k, KC_MEAN, buf, sizeof buf, &role);
	CHECKF(!strcmp(buf, "-"), "mean before reading results: %s", buf);
	while (rcache_idle(&rc, td))
		;
	ktable_cell(&c, k, KC_MEAN, buf, sizeof buf, &role);
	CHECKF(strchr(buf, '*') != NULL, "mean from probed launches: %s", buf);
	kt.filter[0] = 0;
	ktable_mark(&kt);
	ktable_update(&kt, &c);
	int declined = 0;
	for (int i = 0; i < kt.n; i++) {
		ktable_cell(&c, &td->kernels[kt.rows[i].k], KC_PROBE, buf, sizeof buf, &role);
		declined += !strncmp(buf, "declined: stream capture active", 31) && role == THEME_WARN;
	}
	CHECK_EQ_INT(declined, 1);
	ktable_fmt_ns(950, 0, buf, sizeof buf);
	CHECK(!strcmp(buf, "950ns"));
	ktable_fmt_ns(12345, 0, buf, sizeof buf);
	CHECK(!strcmp(buf, "12.3us"));
	ktable_fmt_ns(4.56e6, 1, buf, sizeof buf);
	CHECK(!strcmp(buf, "4.56ms"));
	unsigned d3[3] = {8, 8, 8}, d2[3] = {64, 64, 1};
	ktable_fmt_dims(d3, buf, sizeof buf);
	CHECK(!strcmp(buf, "8x8x8"));
	ktable_fmt_dims(d2, buf, sizeof buf);
	CHECK(!strcmp(buf, "64x64"));
	CHECK_EQ_INT(ktable_col_from_key("mean"), KC_MEAN);
	CHECK_EQ_INT(ktable_col_from_key("nope"), -1);
	ktable_done(&kt);
	rcache_done(&rc);
	trace_dir_free(td);
}

/* Three processes (ranks) with the same two kernels, one with a second
 * `fill` of another module, one process exited: a group per (name, k-th in
 * the process), sums, expansion, per-process rows, exited hidden. */
static void test_ktable_groups(void)
{
	struct trace_dir *td = trace_dir_create(NULL);
	char line[256];
	for (int p = 1; p <= 3; p++) {
		snprintf(line, sizeof line, "hello t=1 pid=%d ppid=1 exe=/bin/rank hook=0.1.0\n", p);
		trace_dir_feed(td, line, strlen(line));
		for (int k = 1; k <= 2; k++) {
			snprintf(line, sizeof line, "kernel t=1 pid=%d kid=%d mid=1 ptx=1 name=%s\n", p, k, k == 1 ? "fill" : "gemm");
			trace_dir_feed(td, line, strlen(line));
			snprintf(line, sizeof line, "stats t=2 pid=%d kid=%d launches=%d timed=1 total_ns=%d min_ns=1 max_ns=1\n", p,
				 k, 10 * p + k, 100 * p);
			trace_dir_feed(td, line, strlen(line));
		}
	}
	const char *more[] = {"kernel t=3 pid=1 kid=3 mid=2 ptx=1 name=fill\n",
			      "stats t=3 pid=1 kid=3 launches=1000 timed=0 total_ns=0 min_ns=0 max_ns=0\n",
			      "exit t=4 pid=3 launches=35\n"};
	for (size_t i = 0; i < 3; i++)
		trace_dir_feed(td, more[i], strlen(more[i]));
	struct rcache rc;
	rcache_init(&rc);
	struct ktable kt;
	ktable_init(&kt);
	struct ktable_ctx c = {td, &rc, 0, 0, NULL, NULL};
	ktable_update(&kt, &c);
	/* fill (1st of each process), gemm, and pid 1's second fill alone */
	CHECK_EQ_INT(kt.n, 3);
	CHECK_EQ_INT(kt.matched, 7);
	char buf[128];
	int role;
	CHECK_EQ_INT(kt.rows[0].n, 1); /* 1000 launches: the second fill, first by launches */
	CHECK_EQ_INT(td->kernels[kt.rows[0].k].kid, 3);
	ktable_row_cell(&c, &kt, &kt.rows[1], KC_LAUNCHES, buf, sizeof buf, &role);
	CHECKF(!strcmp(buf, "66"), "gemm: 12 + 22 + 32 launches, got %s", buf); /* gemm */
	ktable_row_cell(&c, &kt, &kt.rows[2], KC_LAUNCHES, buf, sizeof buf, &role);
	CHECKF(!strcmp(buf, "63"), "fill: 11 + 21 + 31 launches, got %s", buf);
	ktable_row_cell(&c, &kt, &kt.rows[2], KC_PID, buf, sizeof buf, &role);
	CHECKF(!strcmp(buf, "3 proc"), "%s", buf);
	ktable_row_cell(&c, &kt, &kt.rows[2], KC_MEAN, buf, sizeof buf, &role);
	CHECKF(!strcmp(buf, "200ns"), "fill: 600 ns over 3 timed, got %s", buf);
	ktable_row_cell(&c, &kt, &kt.rows[2], KC_NAME, buf, sizeof buf, &role);
	CHECKF(!strcmp(buf, "+ fill"), "%s", buf);
	/* a live member stands for the group: pid 3 exited */
	CHECK(td->kernels[kt.rows[2].k].pid != 3);
	/* Enter expands: the three processes' rows under the group */
	CHECK(ktable_toggle(&kt, td, &kt.rows[2]));
	ktable_update(&kt, &c);
	CHECK_EQ_INT(kt.n, 6);
	CHECK(kt.rows[3].child && kt.rows[4].child && kt.rows[5].child);
	ktable_row_cell(&c, &kt, &kt.rows[2], KC_NAME, buf, sizeof buf, &role);
	CHECKF(!strcmp(buf, "- fill"), "%s", buf);
	int exited = 0;
	for (int i = 3; i < 6; i++) {
		ktable_row_cell(&c, &kt, &kt.rows[i], KC_PID, buf, sizeof buf, &role);
		exited += !strcmp(buf, "(3)") && role == THEME_DIM;
	}
	CHECK_EQ_INT(exited, 1);
	CHECK_EQ_INT(ktable_find(&kt, td, 3, 1, 0), 3 + 2); /* pid 3's fill: its own row (model order) */
	CHECK_EQ_INT(ktable_find(&kt, td, 3, 1, 1), 2);     /* ... or its group's */
	CHECK(!ktable_toggle(&kt, td, &kt.rows[3]));     /* a member is no group */
	/* exited hidden: pid 3 gone from the groups */
	kt.hide_exited = 1;
	ktable_mark(&kt);
	ktable_update(&kt, &c);
	CHECK_EQ_INT(kt.matched, 5);
	ktable_row_cell(&c, &kt, &kt.rows[1], KC_PID, buf, sizeof buf, &role);
	CHECKF(!strcmp(buf, "2 proc"), "%s", buf);
	/* g: a row per process and kernel */
	kt.hide_exited = 0;
	kt.single = 1;
	ktable_mark(&kt);
	ktable_update(&kt, &c);
	CHECK_EQ_INT(kt.n, 7);
	CHECK_EQ_INT(ktable_find(&kt, td, 2, 2, 0) >= 0, 1);
	ktable_done(&kt);
	rcache_done(&rc);
	trace_dir_free(td);
}

int main(void)
{
	test_ktable_groups();
	test_screen();
	test_columns();
	test_help();
	test_text();
	test_tail_and_wrap();
	test_export_names();
	test_settings();
	test_msglog();
	test_ktable();
	return testlib_report();
}
