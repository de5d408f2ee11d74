/* ntop check: load and verify probe files, the same checks `ntop record`
 * runs before starting an application. */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static void check_help(void)
{
	printf("Usage: ntop check PROBE...\n"
	       "\n"
	       "Loads each probe (a .toml path or a built-in name) and runs the verifier:\n"
	       "snippets may not write kernel registers, branch, touch shared memory or\n"
	       "call functions, and SAVE must match the map. Prints one line per probe:\n"
	       "  ok: NAME (map ..., N hooks)\n"
	       "followed by a \"note:\" line for each thing the file leaves to ntop\n"
	       "(NEUTRINO files: registers it never declares, maps it sizes at run\n"
	       "time), or the error as FILE:LINE:COL: what is wrong.\n"
	       "\n"
	       "Exit status: 0 all probes are fine, 1 any failed, 2 usage error.\n"
	       "\n"
	       "Examples:\n"
	       "  ntop check myprobe.toml\n"
	       "  ntop check block_sched probes/*.toml\n");
}

static int check_one(const char *arg)
{
	char *cause = NULL;
	char *path = cli_probe_path(arg, &cause);
	struct probe *p = NULL;
	if (!path || cli_probe_load_verified(path, &p, &cause) < 0) {
		printf("error: %s\n", cause ? cause : "unknown error");
		free(cause);
		free(path);
		return 1;
	}
	struct strbuf sb;
	strbuf_init(&sb);
	cli_probe_map_summary(&sb, p);
	printf("ok: %s (%s, %d hook%s)\n", p->name, sb.data ? sb.data : "", p->n_hooks,
	       p->n_hooks == 1 ? "" : "s");
	for (const char *q = p->notes; q && *q; q += strcspn(q, "\n") + 1)
		printf("  note: %.*s\n", (int)strcspn(q, "\n"), q);
	strbuf_done(&sb);
	probe_free(p);
	free(path);
	return 0;
}

int cmd_check(int argc, char **argv)
{
	int first = 1;
	for (; first < argc; first++) {
		if (cli_is_help(argv[first])) {
			check_help();
			return 0;
		}
		if (strcmp(argv[first], "--") == 0) {
			first++;
			break;
		}
		if (argv[first][0] == '-')
			return cli_usage("check", "unknown option '%s'", argv[first]);
		break;
	}
	if (first >= argc)
		return cli_usage("check", "give at least one probe file");
	int failed = 0;
	for (int i = first; i < argc; i++)
		failed |= check_one(argv[i]);
	return failed ? 1 : 0;
}
