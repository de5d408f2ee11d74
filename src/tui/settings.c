/* Saved settings (settings.h). */
#include "tui/settings.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cause.h"

void settings_defaults(struct settings *s)
{
	memset(s, 0, sizeof *s);
	snprintf(s->theme, sizeof s->theme, "dark");
	snprintf(s->sort, sizeof s->sort, "launches");
}

/* $XDG_<KIND>_HOME/ntop, else $HOME/<fallback>/ntop (the XDG base
 * directory rules: a relative XDG path is ignored). */
static char *settings_xdg(const char *var, const char *fallback)
{
	const char *x = getenv(var), *h = getenv("HOME");
	char *d = NULL;
	if (x && x[0] == '/') {
		if (asprintf(&d, "%s/ntop", x) < 0)
			d = NULL;
	} else if (h && *h) {
		if (asprintf(&d, "%s/%s/ntop", h, fallback) < 0)
			d = NULL;
	}
	return d;
}

char *settings_dir(void)
{
	return settings_xdg("XDG_CONFIG_HOME", ".config");
}

char *settings_state_dir(void)
{
	return settings_xdg("XDG_STATE_HOME", ".local/state");
}

static char *settings_trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
		s[--n] = 0;
	return s;
}

static int settings_bool(const char *v, int *out)
{
	if (!strcmp(v, "1") || !strcmp(v, "true") || !strcmp(v, "yes") || !strcmp(v, "on"))
		*out = 1;
	else if (!strcmp(v, "0") || !strcmp(v, "false") || !strcmp(v, "no") || !strcmp(v, "off"))
		*out = 0;
	else
		return -1;
	return 0;
}

static int settings_str(char *dst, size_t len, const char *v)
{
	if (!*v || strlen(v) >= len)
		return -1;
	snprintf(dst, len, "%s", v);
	return 0;
}

/* One `key = value`; -1 when ignored. */
static int settings_apply(struct settings *s, const char *k, const char *v)
{
	if (!strcmp(k, "theme"))
		return settings_str(s->theme, sizeof s->theme, v);
	if (!strcmp(k, "sort"))
		return settings_str(s->sort, sizeof s->sort, v);
	if (!strcmp(k, "sort_reverse"))
		return settings_bool(v, &s->sort_reverse);
	if (!strcmp(k, "mangled"))
		return settings_bool(v, &s->mangled);
	if (!strcmp(k, "show_log"))
		return settings_bool(v, &s->show_log);
	return -1;
}

int settings_load(struct settings *s, const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return errno == ENOENT ? 0 : -1;
	char line[512];
	int ignored = 0;
	while (fgets(line, sizeof line, f)) {
		char *p = settings_trim(line);
		if (!*p || *p == '#')
			continue;
		char *eq = strchr(p, '=');
		if (!eq) {
			ignored++;
			continue;
		}
		*eq = 0;
		if (settings_apply(s, settings_trim(p), settings_trim(eq + 1)) < 0)
			ignored++;
	}
	fclose(f);
	return ignored;
}

int settings_mkdirs(const char *dir)
{
	char *d = strdup(dir);
	if (!d)
		return -1;
	for (char *p = d + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			mkdir(d, 0755);
			*p = '/';
		}
	int rc = mkdir(d, 0755) == 0 || errno == EEXIST ? 0 : -1;
	free(d);
	return rc;
}

int settings_save(const struct settings *s, const char *path, char **cause)
{
	char *tmp = NULL, *dir = strdup(path), *slash = dir ? strrchr(dir, '/') : NULL;
	if (slash)
		*slash = 0;
	int made = !slash || settings_mkdirs(dir) == 0, err = errno;
	free(dir);
	if (!made)
		return cause_set(cause, "cannot create the directory of %s: %s", path, strerror(err));
	if (asprintf(&tmp, "%s.tmp%d", path, (int)getpid()) < 0)
		return cause_set(cause, "out of memory");
	FILE *f = fopen(tmp, "w");
	if (!f) {
		cause_set(cause, "%s: %s", tmp, strerror(errno));
		free(tmp);
		return -1;
	}
	fprintf(f, "# ntop settings (written by the terminal UI on exit)\n"
		   "theme = %s\nsort = %s\nsort_reverse = %d\nmangled = %d\nshow_log = %d\n",
		s->theme, s->sort, s->sort_reverse, s->mangled, s->show_log);
	int rc = ferror(f) ? -1 : 0;
	if (fclose(f) != 0)
		rc = -1;
	if (rc == 0 && rename(tmp, path) < 0)
		rc = -1;
	if (rc < 0) {
		cause_set(cause, "cannot write %s: %s", path, strerror(errno));
		unlink(tmp);
	}
	free(tmp);
	return rc;
}
