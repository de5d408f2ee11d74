/* Themes: the shipped files match the built-in copies, partial files keep
 * the defaults, every mistake is reported at FILE:LINE:COL, name/path
 * resolution, gradients. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"
#include "viz/theme.h"

static int same_theme(const struct theme *a, const struct theme *b)
{
	if (strcmp(a->name, b->name) != 0 || a->mono != b->mono)
		return 0;
	for (int r = 0; r < THEME_N_ROLES; r++)
		if (!rgb_eq(a->c[r], b->c[r]))
			return 0;
	return 1;
}

static void test_files_match_builtins(void)
{
	for (int i = 0; theme_builtin_names[i]; i++) {
		const char *name = theme_builtin_names[i];
		char rel[64];
		snprintf(rel, sizeof rel, "themes/%s.toml", name);
		struct theme f, b;
		char *cause = NULL;
		CHECKF(theme_load_file(testlib_src(rel), &f, &cause) == 0, "%s", cause);
		CHECK(theme_builtin(name, &b) == 0);
		CHECKF(same_theme(&f, &b), "themes/%s.toml differs from the built-in copy", name);
		free(cause);
	}
	struct theme t;
	CHECK(theme_builtin("nosuch", &t) < 0);
	/* mono is grey only; colorblind uses Okabe-Ito colours */
	theme_builtin("mono", &t);
	CHECK(t.mono);
	for (int r = 0; r < THEME_N_ROLES; r++)
		CHECKF(t.c[r].r == t.c[r].g && t.c[r].g == t.c[r].b, "mono %s", theme_role_name(r));
	theme_builtin("colorblind", &t);
	CHECK(!t.mono);
	CHECK(rgb_eq(t.c[THEME_BAR_START], (struct rgb){0x00, 0x72, 0xb2}));
	CHECK(rgb_eq(t.c[THEME_WARN], (struct rgb){0xd5, 0x5e, 0x00}));
	CHECK(rgb_eq(t.c[THEME_BAR_END], (struct rgb){0xf0, 0xe4, 0x42}));
}

static void expect_error(const char *text, const char *want)
{
	struct theme t;
	char *cause = NULL;
	int rc = theme_parse(text, strlen(text), "t.toml", &t, &cause);
	CHECKF(rc < 0 && cause && strstr(cause, want), "'%s': got '%s', want '%s'", text, cause, want);
	free(cause);
}

static void test_errors(void)
{
	expect_error("[colors]\nbackground = \"#12345\"\n", "t.toml:2:14: 'background' is not a colour");
	expect_error("[colors]\nbackground = \"#12345g\"\n", "t.toml:2:14:");
	expect_error("[colors]\nbackground = \"red\"\n", "t.toml:2:14:");
	expect_error("[colors]\nfg = \"#fff\"\n", "t.toml:2:1: unknown colour role 'fg'");
	expect_error("[colors]\n  axis = 0xffffff\n", "t.toml:2:10: 'axis' must be a colour string");
	expect_error("mono = 1\n", "t.toml:1:8: 'mono' must be true or false");
	expect_error("name = \"\"\n", "t.toml:1:8:");
	expect_error("colour = 3\n", "t.toml:1:1: unknown key 'colour'");
	expect_error("colors = 5\n", "t.toml:1:10: 'colors' must be a table");
	expect_error("name = \n", "t.toml:1:");           /* from the TOML reader */
	expect_error("[colors\nbackground = 1\n", "t.toml:1:");
}

static void test_partial_and_forms(void)
{
	const char *text = "# a theme\n[colors]\nbackground = \"#abc\"\nbar_start = \"#000000\"\nbar_end = \"#FFFFFF\"\n";
	struct theme t, dark;
	char *cause = NULL;
	CHECKF(theme_parse(text, strlen(text), "/home/u/.config/ntop/paper.toml", &t, &cause) == 0, "%s", cause);
	theme_builtin("dark", &dark);
	CHECK(strcmp(t.name, "paper") == 0 && !t.mono);
	CHECK(rgb_eq(t.c[THEME_BG], (struct rgb){0xaa, 0xbb, 0xcc}));
	CHECK(rgb_eq(t.c[THEME_FG], dark.c[THEME_FG]));
	/* no bar_mid: halfway between start and end */
	CHECK(rgb_eq(t.c[THEME_BAR_MID], (struct rgb){128, 128, 128}));
	CHECK(rgb_eq(theme_gradient(&t, 0), (struct rgb){0, 0, 0}));
	CHECK(rgb_eq(theme_gradient(&t, 1), (struct rgb){255, 255, 255}));
	CHECK(rgb_eq(theme_gradient(&t, 0.25), (struct rgb){64, 64, 64}));
	CHECK(rgb_eq(theme_gradient(&t, -3), (struct rgb){0, 0, 0}));
	CHECK(rgb_eq(theme_gradient(&t, 7), (struct rgb){255, 255, 255}));
	const char *named = "name = \"paper-dark\"\nmono = true\n";
	CHECK(theme_parse(named, strlen(named), "x.toml", &t, &cause) == 0 && strcmp(t.name, "paper-dark") == 0 && t.mono);
	struct rgb c;
	CHECK(theme_parse_color("#0a0B0c", &c) == 0 && c.r == 10 && c.g == 11 && c.b == 12);
	CHECK(theme_parse_color("0a0b0c", &c) < 0 && theme_parse_color("#0a0b0", &c) < 0);
	CHECK(rgb_eq(rgb_mix((struct rgb){200, 0, 10}, (struct rgb){0, 200, 10}, 0.5), (struct rgb){100, 100, 10}));
	free(cause);
}

static void test_resolve(void)
{
	struct theme t, b;
	char *cause = NULL;
	CHECK(theme_resolve("mono", NULL, &t, &cause) == 0 && t.mono);
	CHECKF(theme_resolve("light", testlib_src("themes"), &t, &cause) == 0, "%s", cause);
	theme_builtin("light", &b);
	CHECK(same_theme(&t, &b));
	CHECK(theme_resolve(testlib_src("themes/colorblind.toml"), NULL, &t, &cause) == 0 &&
	      strcmp(t.name, "colorblind") == 0);
	/* a themes dir without the file falls back to the built-in */
	CHECK(theme_resolve("dark", "/nonexistent", &t, &cause) == 0 && strcmp(t.name, "dark") == 0);
	CHECK(theme_resolve("neon", NULL, &t, &cause) < 0 && strstr(cause, "no theme 'neon'") &&
	      strstr(cause, "colorblind"));
	CHECK(theme_resolve("/nonexistent/x.toml", NULL, &t, &cause) < 0 && strstr(cause, "/nonexistent/x.toml"));
	CHECK(strcmp(theme_role_name(THEME_BAR_MID), "bar_mid") == 0);
	free(cause);
}

int main(void)
{
	test_files_match_builtins();
	test_errors();
	test_partial_and_forms();
	test_resolve();
	return testlib_report();
}
