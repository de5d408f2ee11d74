/* Themes (theme.h): built-in tables that mirror the files in themes/ (a test keeps
 * them in step), the TOML reader on top of common/toml.h, and colour maths. */
#include "common/hexdigit.h"
#include "viz/theme.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/cause.h"
#include "common/toml.h"

#define THEME_FILE_MAX (1u << 20) /* bytes: a theme is a few hundred */

static const char *const theme_roles[THEME_N_ROLES] = {
	"background", "foreground", "dim",       "accent", "warn", "error",
	"bar_start",  "bar_mid",    "bar_end",   "selection", "axis", "grid",
};

const char *const theme_builtin_names[] = {"dark", "light", "colorblind", "mono", NULL};

/* Colours as 0xRRGGBB in role order; identical to themes/<name>.toml. */
static const struct {
	const char *name;
	int mono;
	uint32_t c[THEME_N_ROLES];
} theme_builtins[] = {
	{"dark", 0, {0x15181d, 0xd7dce2, 0x7d8590, 0x5fb3f9, 0xff5c8a, 0xff4040,
		     0x3060c8, 0x22a39a, 0xd4e157, 0xffffff, 0x9aa3ad, 0x262b33}},
	{"light", 0, {0xffffff, 0x1f2328, 0x6e7781, 0x0969da, 0xd1242f, 0xa40e26,
		      0x1e40af, 0x0f9488, 0xe0a100, 0x000000, 0x57606a, 0xe6e8eb}},
	{"colorblind", 0, {0x111111, 0xf0f0f0, 0x8c8c8c, 0xe69f00, 0xd55e00, 0xcc79a7,
			   0x0072b2, 0x56b4e9, 0xf0e442, 0xffffff, 0xbdbdbd, 0x2b2b2b}},
	{"mono", 1, {0x000000, 0xffffff, 0x9a9a9a, 0xffffff, 0xffffff, 0xffffff,
		     0x5c5c5c, 0x9e9e9e, 0xe0e0e0, 0xffffff, 0xc8c8c8, 0x2e2e2e}},
};
#define N_BUILTINS (sizeof theme_builtins / sizeof theme_builtins[0])

const char *theme_role_name(enum theme_role r)
{
	return (unsigned)r < THEME_N_ROLES ? theme_roles[r] : "?";
}

static struct rgb theme_hex(uint32_t v)
{
	return (struct rgb){(uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
}

int theme_builtin(const char *name, struct theme *out)
{
	for (size_t i = 0; i < N_BUILTINS; i++) {
		if (strcmp(name, theme_builtins[i].name) != 0)
			continue;
		memset(out, 0, sizeof *out);
		snprintf(out->name, sizeof out->name, "%s", name);
		out->mono = theme_builtins[i].mono;
		for (int r = 0; r < THEME_N_ROLES; r++)
			out->c[r] = theme_hex(theme_builtins[i].c[r]);
		return 0;
	}
	return -1;
}

int theme_parse_color(const char *s, struct rgb *out)
{
	size_t n = strlen(s);
	if (s[0] != '#' || (n != 4 && n != 7))
		return -1;
	int d[6];
	for (size_t i = 1; i < n; i++)
		if ((d[i - 1] = hex_digit(s[i])) < 0)
			return -1;
	if (n == 4)
		*out = (struct rgb){(uint8_t)(d[0] * 17), (uint8_t)(d[1] * 17), (uint8_t)(d[2] * 17)};
	else
		*out = (struct rgb){(uint8_t)(d[0] * 16 + d[1]), (uint8_t)(d[2] * 16 + d[3]),
				    (uint8_t)(d[4] * 16 + d[5])};
	return 0;
}

/* ---- parsing ---- */

static int theme_err(char **cause, const char *path, const struct toml_node *n, int key,
		     const char *fmt, const char *a, const char *b)
{
	char msg[256];
	snprintf(msg, sizeof msg, fmt, a, b);
	return cause_set(cause, "%s:%d:%d: %s", path, key ? n->key_line : n->line,
			 key ? n->key_col : n->col, msg);
}

static int theme_colors(const struct toml_node *t, const char *path, struct theme *th, int *has_mid,
			char **cause)
{
	if (t->type != TOML_TABLE)
		return theme_err(cause, path, t, 0, "'colors' must be a table, not %s%s",
				 toml_type_name(t->type), "");
	for (int i = 0; i < t->n_items; i++) {
		const struct toml_node *n = t->items[i];
		int role = -1;
		for (int r = 0; r < THEME_N_ROLES; r++)
			if (strcmp(n->key, theme_roles[r]) == 0)
				role = r;
		if (role < 0)
			return theme_err(cause, path, n, 1,
					 "unknown colour role '%s' (roles: background foreground dim accent "
					 "warn error bar_start bar_mid bar_end selection axis grid)%s",
					 n->key, "");
		if (n->type != TOML_STRING)
			return theme_err(cause, path, n, 0, "'%s' must be a colour string like \"#1a2b3c\", not %s",
					 n->key, toml_type_name(n->type));
		if (theme_parse_color(n->v.s, &th->c[role]) < 0)
			return theme_err(cause, path, n, 0, "'%s' is not a colour (\"#rrggbb\" or \"#rgb\"): \"%s\"",
					 n->key, n->v.s);
		if (role == THEME_BAR_MID)
			*has_mid = 1;
	}
	return 0;
}

static int theme_top(const struct toml_node *root, const char *path, struct theme *th, int *has_mid,
		     char **cause)
{
	for (int i = 0; i < root->n_items; i++) {
		const struct toml_node *n = root->items[i];
		if (strcmp(n->key, "name") == 0) {
			if (n->type != TOML_STRING || !n->v.s[0] || strlen(n->v.s) >= THEME_NAME_MAX)
				return theme_err(cause, path, n, 0, "'name' must be a short non-empty string%s%s",
						 "", "");
			snprintf(th->name, sizeof th->name, "%s", n->v.s);
		} else if (strcmp(n->key, "mono") == 0) {
			if (n->type != TOML_BOOL)
				return theme_err(cause, path, n, 0, "'mono' must be true or false, not %s%s",
						 toml_type_name(n->type), "");
			th->mono = n->v.b;
		} else if (strcmp(n->key, "colors") == 0) {
			if (theme_colors(n, path, th, has_mid, cause) < 0)
				return -1;
		} else {
			return theme_err(cause, path, n, 1,
					 "unknown key '%s' (a theme has name, mono and [colors])%s", n->key, "");
		}
	}
	return 0;
}

int theme_parse(const char *text, size_t len, const char *path, struct theme *out, char **cause)
{
	struct toml_node *root = NULL;
	if (toml_parse(text, len, path, &root, cause) < 0)
		return -1;
	struct theme th;
	theme_builtin("dark", &th);
	/* a file that names no theme is called after itself */
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	snprintf(th.name, sizeof th.name, "%.*s", (int)strcspn(base, "."), base);
	int has_mid = 0;
	int rc = theme_top(root, path, &th, &has_mid, cause);
	toml_free(root);
	if (rc < 0)
		return -1;
	if (!has_mid)
		th.c[THEME_BAR_MID] = rgb_mix(th.c[THEME_BAR_START], th.c[THEME_BAR_END], 0.5);
	*out = th;
	return 0;
}

int theme_load_file(const char *path, struct theme *out, char **cause)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return cause_set(cause, "%s: %s", path, strerror(errno));
	char *buf = malloc(THEME_FILE_MAX + 1);
	size_t n = buf ? fread(buf, 1, THEME_FILE_MAX + 1, f) : 0;
	int bad = ferror(f);
	fclose(f);
	int rc;
	if (!buf)
		rc = cause_set(cause, "%s: out of memory", path);
	else if (bad)
		rc = cause_set(cause, "%s: read error", path);
	else if (n > THEME_FILE_MAX)
		rc = cause_set(cause, "%s: larger than %u bytes, not a theme", path, THEME_FILE_MAX);
	else
		rc = theme_parse(buf, n, path, out, cause);
	free(buf);
	return rc;
}

int theme_resolve(const char *arg, const char *themes_dir, struct theme *out, char **cause)
{
	size_t n = strlen(arg);
	if (strchr(arg, '/') || (n > 5 && strcmp(arg + n - 5, ".toml") == 0))
		return theme_load_file(arg, out, cause);
	if (themes_dir) {
		char *p;
		struct stat st;
		if (asprintf(&p, "%s/%s.toml", themes_dir, arg) < 0)
			return cause_set(cause, "out of memory");
		int rc = 1;
		if (stat(p, &st) == 0)
			rc = theme_load_file(p, out, cause);
		free(p);
		if (rc <= 0)
			return rc;
	}
	if (theme_builtin(arg, out) == 0)
		return 0;
	return cause_set(cause, "no theme '%s' (built in: dark, light, colorblind, mono%s%s%s)", arg,
			 themes_dir ? "; none in " : "", themes_dir ? themes_dir : "",
			 "; or give a path to a .toml file");
}

/* ---- colour maths ---- */

static double theme_clamp01(double t)
{
	return t < 0 ? 0 : t > 1 ? 1 : t != t ? 0 : t;
}

static uint8_t theme_lerp(uint8_t a, uint8_t b, double t)
{
	return (uint8_t)(a + (b - a) * t + 0.5); /* never negative: a + (b - a) t lies in [a, b] */
}

struct rgb rgb_mix(struct rgb a, struct rgb b, double t)
{
	t = theme_clamp01(t);
	return (struct rgb){theme_lerp(a.r, b.r, t), theme_lerp(a.g, b.g, t), theme_lerp(a.b, b.b, t)};
}

int rgb_eq(struct rgb a, struct rgb b)
{
	return a.r == b.r && a.g == b.g && a.b == b.b;
}

struct rgb theme_gradient(const struct theme *t, double x)
{
	x = theme_clamp01(x);
	if (x <= 0.5)
		return rgb_mix(t->c[THEME_BAR_START], t->c[THEME_BAR_MID], x * 2);
	return rgb_mix(t->c[THEME_BAR_MID], t->c[THEME_BAR_END], (x - 0.5) * 2);
}
