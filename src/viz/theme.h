/* Themes: a colour per role (background, text, bars, ...), shared by the
 * terminal and PNG renderers. Themes live in themes/<name>.toml:
 *
 *   name = "dark"
 *   mono = false            # true: grey levels only, for 8-colour terminals
 *   [colors]
 *   background = "#15181d"  # "#rrggbb" or "#rgb"
 *   bar_start = "#2f6fd0"   # gradient: start, optional bar_mid, end
 *   ...
 *
 * Roles a file leaves out keep the built-in dark theme's colour; unknown keys
 * are errors (a typo must not silently fall back). The four shipped themes
 * are compiled in too, so a missing themes directory still works. */
#ifndef NTOP_THEME_H
#define NTOP_THEME_H
#include <stddef.h>
#include <stdint.h>

struct rgb {
	uint8_t r, g, b;
};

enum theme_role {
	THEME_BG,
	THEME_FG,
	THEME_DIM,        /* secondary text, notes */
	THEME_ACCENT,     /* titles, highlights */
	THEME_WARN,       /* tail blocks, warnings */
	THEME_ERROR,
	THEME_BAR_START,  /* bar gradient at 0 (first block, shortest) */
	THEME_BAR_MID,    /* at 0.5; "bar_mid" (defaults to the mix of start and end) */
	THEME_BAR_END,    /* at 1 (last block, longest) */
	THEME_SELECTION,  /* cursor and selected block */
	THEME_AXIS,       /* axis lines, ticks and their labels */
	THEME_GRID,       /* grid lines behind the bars */
	THEME_N_ROLES
};

#define THEME_NAME_MAX 64

struct theme {
	char name[THEME_NAME_MAX];
	int mono;                     /* grey levels only: renderers also vary glyphs */
	struct rgb c[THEME_N_ROLES];
};

/* TOML key of a role ("background", "bar_start", ...). */
const char *theme_role_name(enum theme_role r);
/* Built-in theme names, NULL-terminated: dark (the default), light,
 * colorblind (Okabe-Ito palette), mono. */
extern const char *const theme_builtin_names[];

/* Copies the built-in theme `name`; -1 when there is none. */
int theme_builtin(const char *name, struct theme *out);
/* Parses a theme file's text; errors read "PATH:LINE:COL: message". */
int theme_parse(const char *text, size_t len, const char *path, struct theme *out, char **cause);
int theme_load_file(const char *path, struct theme *out, char **cause);
/* `--theme NAME|PATH`: a path when it has a '/' or ends in ".toml";
 * otherwise themes_dir/NAME.toml when that exists (themes_dir may be NULL),
 * else the built-in NAME. Unknown names fail with the list of known ones. */
int theme_resolve(const char *arg, const char *themes_dir, struct theme *out, char **cause);

/* "#rrggbb" / "#rgb" -> colour; -1 when malformed. */
int theme_parse_color(const char *s, struct rgb *out);
/* a + (b - a) * t, t clamped to [0, 1]. */
struct rgb rgb_mix(struct rgb a, struct rgb b, double t);
int rgb_eq(struct rgb a, struct rgb b);
/* The bar gradient at x in [0, 1] (start -> mid -> end). */
struct rgb theme_gradient(const struct theme *t, double x);

#endif
