/* `ntop` alone on a terminal: the start screen (view_start.c) with the
 * machine's GPUs (nvml.h) and the user's sessions (sessions.h); what the
 * user picks there (attach, open, a new program) is run once the UI has
 * given the terminal back, as ntop itself with those arguments. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/nvml.h"
#include "cli/sessions.h"
#include "tui/term.h"
#include "tui/tui.h"

struct start {
	struct nvml *nvml;
	char why[160];
	struct sess_entry *ses;
	int n_ses;
};

/* Is pid in the process tree of one of the running sessions' recorders? */
static int start_ours(const struct start *s, uint32_t pid)
{
	for (int depth = 0; pid > 1 && depth < 8; depth++) {
		for (int i = 0; i < s->n_ses; i++)
			if (s->ses[i].running && (uint32_t)s->ses[i].pid == pid)
				return 1;
		char path[64];
		snprintf(path, sizeof path, "/proc/%u/stat", pid);
		FILE *f = fopen(path, "r");
		if (!f)
			return 0;
		unsigned ppid = 0;
		int ok = fscanf(f, "%*d %*s %*c %u", &ppid) == 1; /* comm without spaces: ntop's apps */
		fclose(f);
		if (!ok)
			return 0;
		pid = ppid;
	}
	return 0;
}

static int start_gpus(void *ctx, struct tui_gpu *out, int max, char *why, size_t n)
{
	struct start *s = ctx;
	if (!s->nvml) {
		snprintf(why, n, "%s", s->why);
		return -1;
	}
	struct nvml_gpu g[32];
	int k = nvml_sample(s->nvml, g, max < 32 ? max : 32, why, n);
	for (int i = 0; i < k; i++) {
		out[i] = (struct tui_gpu){g[i].index, "", g[i].util, g[i].mem_used, g[i].mem_total, g[i].n_procs, 0};
		snprintf(out[i].name, sizeof out[i].name, "%s", g[i].name);
		for (int p = 0; p < g[i].n_procs; p++)
			out[i].ours += start_ours(s, g[i].pids[p]);
	}
	return k;
}

static int start_sessions(void *ctx, struct tui_session *out, int max)
{
	struct start *s = ctx;
	char *cause = NULL;
	sessions_free(s->ses, s->n_ses);
	s->ses = NULL;
	s->n_ses = 0;
	if (sessions_list(&s->ses, &s->n_ses, &cause) < 0)
		free(cause);
	int k = 0;
	for (; k < s->n_ses && k < max; k++)
		out[k] = (struct tui_session){s->ses[k].dir, s->ses[k].argv, s->ses[k].running, s->ses[k].start_ns};
	return k;
}

int cmd_start(void)
{
	char *cause = NULL;
	if (term_usable(&cause) < 0) {
		cli_err("%s", cause);
		free(cause);
		return CLI_EXIT_USAGE;
	}
	struct start s = {0};
	s.nvml = nvml_open(s.why, sizeof s.why);
	struct tui_start st = {&s, start_gpus, start_sessions, NULL};
	char *themes = cli_themes_dir();
	struct tui_opts o = {0};
	o.themes_dir = themes;
	o.title = "ntop";
	o.start = &st;
	const char *mf = getenv("NTOP_TUI_MAX_FRAMES");
	o.max_frames = mf ? atol(mf) : 0;
	struct tui *t = NULL;
	int rc = 0;
	if (tui_create(&o, &t, &cause) < 0 || tui_run(t, &cause) < 0) {
		cli_err("%s", cause ? cause : "the start screen failed");
		rc = CLI_EXIT_USAGE;
	}
	free(cause);
	tui_free(t);
	free(themes);
	nvml_close(s.nvml);
	sessions_free(s.ses, s.n_ses);
	if (rc || !st.next)
		return rc;
	/* what was picked: ntop again, with those arguments */
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	self[n > 0 ? n : 0] = 0;
	execv(n > 0 ? self : "ntop", st.next);
	cli_err("cannot run %s: %s", st.next[1] ? st.next[1] : "ntop", strerror(errno));
	return 127;
}
