/* Finding the hook and the built-in probes relative to the ntop binary, so an
 * installed tree (<prefix>/bin, lib/ntop, share/ntop) and a build tree (which
 * CMake lays out the same way) both work without configuration. A build tree
 * also knows its source tree through CMakeCache.txt: probes edited there are
 * found even before CMake copies them again. */
#include "cli/cli.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cause.h"

static int cli_is_dir(const char *p)
{
	struct stat st;
	return p && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static char *cli_join(const char *a, const char *b)
{
	char *s;
	return asprintf(&s, "%s/%s", a, b) < 0 ? NULL : s;
}

/* realpath when the path exists (tidier in messages and LD_LIBRARY_PATH). */
static char *cli_canon(char *p)
{
	char *r = p ? realpath(p, NULL) : NULL;
	if (!r)
		return p;
	free(p);
	return r;
}

char *cli_exe_dir(void)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
	if (n <= 0)
		return NULL;
	buf[n] = 0;
	char *slash = strrchr(buf, '/');
	if (!slash)
		return NULL;
	*slash = 0;
	return strdup(buf[0] ? buf : "/");
}

char *cli_hook_dir(void)
{
	const char *env = getenv("NTOP_HOOK_DIR");
	if (env && *env)
		return cli_abspath(env);
	char *exe = cli_exe_dir();
	char *d = exe ? cli_join(exe, "../lib/ntop") : NULL;
	free(exe);
	return cli_canon(d);
}

/* The source directory recorded in <build>/CMakeCache.txt, if exe_dir is
 * <build>/bin. */
static char *cli_source_dir(const char *exe_dir)
{
	char *cache = cli_join(exe_dir, "../CMakeCache.txt");
	FILE *f = cache ? fopen(cache, "r") : NULL;
	free(cache);
	if (!f)
		return NULL;
	static const char key[] = "CMAKE_HOME_DIRECTORY:INTERNAL=";
	char line[PATH_MAX + 64];
	char *src = NULL;
	while (!src && fgets(line, sizeof line, f)) {
		if (strncmp(line, key, sizeof key - 1) != 0)
			continue;
		line[strcspn(line, "\r\n")] = 0;
		src = strdup(line + sizeof key - 1);
	}
	fclose(f);
	return src;
}

char *cli_probes_dir(void)
{
	const char *env = getenv("NTOP_PROBES_DIR");
	if (env && *env)
		return cli_abspath(env);
	char *exe = cli_exe_dir();
	if (!exe)
		return NULL;
	char *d = cli_join(exe, "../share/ntop/probes");
	if (!cli_is_dir(d)) {
		free(d);
		char *src = cli_source_dir(exe);
		d = src ? cli_join(src, "probes") : NULL;
		free(src);
		if (!cli_is_dir(d)) {
			free(d);
			d = NULL;
		}
	}
	free(exe);
	return cli_canon(d);
}

/* Installed beside the probes; in a build tree, the source tree's themes/
 * beside its probes/. */
char *cli_themes_dir(void)
{
	const char *env = getenv("NTOP_THEMES_DIR");
	if (env && *env)
		return strdup(env);
	struct stat st;
	char *exe = cli_exe_dir();
	char *d = exe ? cli_join(exe, "../share/ntop/themes") : NULL;
	free(exe);
	if (d && stat(d, &st) == 0)
		return d;
	free(d);
	char *probes = cli_probes_dir();
	d = probes ? cli_join(probes, "../themes") : NULL;
	free(probes);
	if (d && stat(d, &st) != 0) {
		free(d);
		d = NULL;
	}
	return d;
}

char *cli_probe_path(const char *arg, char **cause)
{
	size_t n = strlen(arg);
	if (strchr(arg, '/') || (n > 5 && strcmp(arg + n - 5, ".toml") == 0))
		return strdup(arg);
	char *dir = cli_probes_dir();
	if (!dir) {
		cause_set(cause, "no built-in probes directory found (looked beside the ntop binary); "
				 "give a path to a .toml file instead of '%s'", arg);
		return NULL;
	}
	char *p;
	if (asprintf(&p, "%s/%s.toml", dir, arg) < 0)
		p = NULL;
	if (p && access(p, R_OK) != 0) {
		cause_set(cause, "no built-in probe '%s' (%s: %s); see 'ntop probes'", arg, p, strerror(errno));
		free(p);
		p = NULL;
	}
	free(dir);
	return p;
}

char *cli_abspath(const char *path)
{
	if (path[0] == '/')
		return strdup(path);
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof cwd))
		return NULL;
	const char *rel = path;
	while (rel[0] == '.' && rel[1] == '/')
		rel += 2;
	if (strcmp(rel, ".") == 0)
		return strdup(cwd);
	return cli_join(cwd, rel);
}
