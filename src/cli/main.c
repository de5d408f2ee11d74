/* ntop: dispatches to a subcommand (cmd_*.c). Anything else is a program to
 * run in the live terminal UI: `ntop [OPTIONS] [--] PROGRAM [ARGS...]`. */
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

static const struct {
	const char *name;
	int (*fn)(int, char **);
	const char *summary;
} cli_commands[] = {
	{"record", cmd_record, "run a program under the hook and write a trace directory"},
	{"report", cmd_report, "summarise a trace directory (text, --json or --csv)"},
	{"instrument", cmd_instrument, "probe one kernel of a PTX/fatbin/executable offline"},
	{"check", cmd_check, "load and verify probe files"},
	{"probes", cmd_probes, "list the built-in probes"},
	{"export", cmd_export, "a probed launch as a PNG (timeline, dmat heatmap), its records as CSV, or Perfetto JSON"},
	{"view", cmd_view, "open a trace directory in the terminal UI"},
	{"attach", cmd_attach, "follow a running session live in the terminal UI"},
	{"ls", cmd_ls, "list your sessions, running and ended"},
};
#define N_COMMANDS (sizeof cli_commands / sizeof cli_commands[0])

static void main_help(FILE *f)
{
	fprintf(f,
		"ntop %s: GPU kernel profiler with PTX probes\n"
		"\n"
		"Usage: ntop COMMAND [ARGS...]\n"
		"       ntop [OPTIONS] [--] PROGRAM [ARGS...]   (terminal UI, live)\n"
		"       ntop                                    (on a terminal: GPUs and sessions)\n"
		"\n"
		"Commands:\n",
		NTOP_VERSION);
	for (size_t i = 0; i < N_COMMANDS; i++)
		fprintf(f, "  %-11s %s\n", cli_commands[i].name, cli_commands[i].summary);
	fprintf(f,
		"\n"
		"Examples:\n"
		"  ntop record -p block_sched -k vecadd --wait-build -- ./vecadd 1024\n"
		"  ntop report ntop-trace/20261101-120000_4242\n"
		"  ntop probes\n"
		"  ntop view ntop-trace/20261101-120000_4242\n"
		"  ntop ./vecadd 1024\n"
		"\n"
		"'ntop COMMAND --help' describes each command; 'ntop view --help' the UI's\n"
		"options (also taken before PROGRAM).\n");
}

/* `ntop help NAME` for a NAME that is not a command. */
static int main_no_command(const char *name)
{
	char list[256] = "";
	for (size_t i = 0; i < N_COMMANDS; i++)
		snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", cli_commands[i].name);
	return cli_usage("ntop", "no command '%s' (the commands: %s)", name, list);
}

int main(int argc, char **argv)
{
	if (argc < 2) { /* on a terminal the start screen, else how to use ntop */
		if (isatty(STDIN_FILENO) && isatty(STDOUT_FILENO))
			return cmd_start();
		main_help(stderr);
		return CLI_EXIT_USAGE;
	}
	const char *cmd = argv[1];
	if (cli_is_help(cmd) || strcmp(cmd, "help") == 0) {
		if (argc > 2 && strcmp(cmd, "help") == 0) {
			for (size_t i = 0; i < N_COMMANDS; i++)
				if (strcmp(argv[2], cli_commands[i].name) == 0) {
					char *hv[] = {argv[2], "--help", NULL};
					return cli_commands[i].fn(2, hv);
				}
			return main_no_command(argv[2]);
		}
		main_help(stdout);
		return 0;
	}
	if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
		printf("ntop %s\n", NTOP_VERSION);
		return 0;
	}
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (strcmp(cmd, cli_commands[i].name) == 0)
			return cli_commands[i].fn(argc - 1, argv + 1);
	/* a program (or UI options, or "--" before a program): the live UI */
	return cmd_live(argc, argv);
}
