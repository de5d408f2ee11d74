/* Saved UI settings: $XDG_CONFIG_HOME/ntop/ntop.conf (default
 * ~/.config/ntop/ntop.conf), plain `key = value` lines, '#' comments.
 * Unknown keys are kept out of the way (ignored), bad values fall back to
 * the defaults: a broken file must never stop the UI from starting. */
#ifndef NTOP_TUI_SETTINGS_H
#define NTOP_TUI_SETTINGS_H

struct settings {
	char theme[64];      /* theme name or path */
	char sort[24];       /* column key ("launches", "mean", ...) */
	int sort_reverse;    /* 1: ascending instead of the column's natural order */
	int mangled;         /* show mangled names */
	int show_log;        /* log pane open */
};

void settings_defaults(struct settings *s);
/* The config directory ($XDG_CONFIG_HOME/ntop or $HOME/.config/ntop),
 * malloc'd; NULL without either variable. */
char *settings_dir(void);
/* Where ntop keeps files it makes for the user ($XDG_STATE_HOME/ntop or
 * $HOME/.local/state/ntop), malloc'd; NULL without either variable. */
char *settings_state_dir(void);
/* mkdir -p: 0 when dir exists afterwards, -1 (errno set) when not. */
int settings_mkdirs(const char *dir);
/* Loads path over *s; a missing file is not an error. Returns the number
 * of lines ignored (unknown keys, bad values), -1 when unreadable. */
int settings_load(struct settings *s, const char *path);
/* Writes atomically, creating the directory; -1 with a cause. */
int settings_save(const struct settings *s, const char *path, char **cause);

#endif
