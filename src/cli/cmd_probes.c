/* ntop probes: the built-in probe library, one line each. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static void probes_help(void)
{
	printf("Usage: ntop probes\n"
	       "\n"
	       "Lists the built-in probes (NAME.toml in the probes directory beside the\n"
	       "ntop binary, or $NTOP_PROBES_DIR): name, what it records, its map; then\n"
	       "the AMD GPU probes in its amd/ folder (GCN assembly, doc/amdgpu.md).\n"
	       "Use a name with 'ntop record -p NAME', or copy the file and edit it:\n"
	       "  ntop probes\n"
	       "  ntop record -p block_sched -- ./app\n");
}

static int probes_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted *.toml names in dir (malloc'd array of malloc'd strings). */
static int probes_list(const char *dir, char ***out, int *n)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	char **v = NULL;
	int cnt = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (l <= 5 || e->d_name[0] == '.' || strcmp(e->d_name + l - 5, ".toml") != 0)
			continue;
		char **nv = realloc(v, (size_t)(cnt + 1) * sizeof *nv);
		if (!nv)
			break;
		v = nv;
		v[cnt++] = strdup(e->d_name);
	}
	closedir(d);
	qsort(v, (size_t)cnt, sizeof *v, probes_cmp);
	*out = v;
	*n = cnt;
	return 0;
}

static void probes_show(const char *dir, const char *file)
{
	char *path;
	if (asprintf(&path, "%s/%s", dir, file) < 0)
		return;
	struct probe *p = NULL;
	char *cause = NULL;
	if (cli_probe_load_verified(path, &p, &cause) < 0) {
		printf("%-16.*s (broken: %s)\n", (int)(strlen(file) - 5), file, cause ? cause : "?");
		free(cause);
		free(path);
		return;
	}
	const char *desc = p->description ? p->description : "";
	while (*desc == ' ' || *desc == '\n')
		desc++;
	int dlen = (int)strcspn(desc, "\n");
	const char *dot = memchr(desc, '.', (size_t)dlen);
	if (dot && (dot[1] == ' ' || dot[1] == '\n' || dot[1] == 0))
		dlen = (int)(dot - desc + 1); /* first sentence */
	struct strbuf sb;
	strbuf_init(&sb);
	cli_probe_map_summary(&sb, p);
	printf("%-16s %.*s\n%-16s %s%s%s\n", p->name, dlen, desc, "", sb.data ? sb.data : "",
	       p->analysis ? "; analysis: " : "", p->analysis ? p->analysis : "");
	strbuf_done(&sb);
	probe_free(p);
	free(path);
}

int cmd_probes(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (cli_is_help(argv[i])) {
			probes_help();
			return 0;
		}
		return cli_usage("probes", "unexpected argument '%s'", argv[i]);
	}
	char *dir = cli_probes_dir();
	char **names = NULL;
	int n = 0;
	if (!dir || probes_list(dir, &names, &n) < 0) {
		cli_err("no built-in probes directory found%s%s (set NTOP_PROBES_DIR)", dir ? ": " : "",
			dir ? dir : "");
		free(dir);
		return 1;
	}
	printf("Built-in probes in %s:\n", dir);
	for (int i = 0; i < n; i++) {
		probes_show(dir, names[i]);
		free(names[i]);
	}
	if (n == 0)
		printf("(none)\n");
	free(names);
	char *amd = NULL;
	if (asprintf(&amd, "%s/amd", dir) >= 0 && probes_list(amd, &names, &n) == 0 && n) {
		printf("\nAMD GPU probes (isa = \"gcn\", for AMD code objects) in %s:\n", amd);
		for (int i = 0; i < n; i++) {
			probes_show(amd, names[i]);
			free(names[i]);
		}
		free(names);
	}
	free(amd);
	free(dir);
	return 0;
}
