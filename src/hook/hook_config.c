/* Environment -> hook.cfg (contract: hook_env.h). Bad values fall back to
 * the defaults: the hook must not refuse to run the application. */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "hook/hook_config.h"
#include "hook/hook_env.h"
#include "hook/hook_sink.h"
#include "hook/hook_state.h"

char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* A value the hook cannot read keeps its default, and says so once the
 * events are up (hook_dispatch.c): a user's "16M" must not pass unnoticed. */
static void config_unread(const char *name, const char *value, uint64_t def)
{
	struct hook_config *c = &hook.cfg;
	char *s = NULL;
	if (asprintf(&s, "%s%s%s=%.64s is not a whole number (bytes or a count), %llu used", c->unread ? c->unread : "",
		     c->unread ? "; " : "", name, value, (unsigned long long)def) < 0)
		return;
	free(c->unread);
	c->unread = s;
}

static uint64_t config_u64(const char *name, uint64_t def)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return def;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || *end || s[0] == '-') {
		config_unread(name, s, def);
		return def;
	}
	return v;
}

/* "auto", "off" or a power of two N (1 in N blocks); anything else: auto
 * (the CLI validates what users type). */
static void config_sample(struct hook_config *c, const char *s)
{
	c->sample_off = s && strcmp(s, "off") == 0;
	c->sample_min_shift = 0;
	char *end;
	unsigned long long n = s && *s ? strtoull(s, &end, 10) : 0;
	if (n == 0 || *end || (n & (n - 1)))
		return;
	while ((1ull << c->sample_min_shift) < n)
		c->sample_min_shift++;
}

static void config_kernels(const char *s)
{
	if (!s)
		return;
	char *copy = strdup(s);
	if (!copy)
		return;
	int n = 1;
	for (const char *p = copy; *p; p++)
		n += *p == '\n';
	hook.cfg.kernels = calloc((size_t)n, sizeof(char *));
	if (!hook.cfg.kernels) {
		free(copy);
		return;
	}
	for (char *save = NULL, *tok = strtok_r(copy, "\n", &save); tok; tok = strtok_r(NULL, "\n", &save))
		if (*tok)
			hook.cfg.kernels[hook.cfg.n_kernels++] = strdup(tok);
	free(copy);
}

/* The sink's settings (opened lazily by hook_sink.c): the launcher's
 * socket, else a descriptor given by hand with the identity it must keep
 * (NTOP_EVENT_ID, else what it is now). */
static void config_sink(void)
{
	struct hook_config *c = &hook.cfg;
	const char *sock = getenv(NTOP_ENV_EVENT_SOCK);
	c->event_sock = sock && *sock == '/' ? strdup(sock) : NULL;
	const char *fd = getenv(NTOP_ENV_EVENT_FD), *id = getenv(NTOP_ENV_EVENT_ID);
	struct stat st;
	if (!c->event_sock && fd && *fd) {
		char *end;
		long v = strtol(fd, &end, 10);
		if (!*end && v >= 0 && v <= 0x7fffffff && fstat((int)v, &st) == 0) {
			c->event_fd = (int)v;
			c->event_dev = (unsigned long long)st.st_dev;
			c->event_ino = (unsigned long long)st.st_ino;
		}
	}
	unsigned long long dev, ino;
	if (c->event_fd >= 0 && id && sscanf(id, "%llu:%llu", &dev, &ino) == 2 &&
	    (dev != c->event_dev || ino != c->event_ino))
		c->event_fd = -1; /* inherited number, another file: not ours */
	hook_sink_init();
}

void hook_config_load(void)
{
	struct hook_config *c = &hook.cfg;
	const char *dir = getenv(NTOP_ENV_TRACE_DIR);
	if (dir && *dir) {
		c->trace_dir = strdup(dir);
		size_t n = strlen(dir) + sizeof "/results";
		c->results_dir = malloc(n);
		if (c->results_dir)
			snprintf(c->results_dir, n, "%s/results", dir);
	}
	config_sink();
	const char *probes = getenv(NTOP_ENV_PROBES);
	c->probes = probes && *probes ? strdup(probes) : NULL;
	config_kernels(getenv(NTOP_ENV_KERNELS));
	c->probe_every = config_u64(NTOP_ENV_PROBE_EVERY, 1);
	if (c->probe_every == 0)
		c->probe_every = 1;
	c->probe_limit = config_u64(NTOP_ENV_PROBE_LIMIT, 100);
	c->map_budget = config_u64(NTOP_ENV_MAP_BUDGET, (uint64_t)1 << 30);
	c->warp_map_target = config_u64(NTOP_ENV_WARP_MAP_TARGET, (uint64_t)2 << 20);
	c->map_target = config_u64(NTOP_ENV_MAP_TARGET, (uint64_t)64 << 20);
	/* larger pinned buffers are registrations of their own, each holding
	 * the app's launches over 1 ms (doc/performance.md) */
	c->pinned_max = config_u64(NTOP_ENV_STAGING_PINNED_MAX, (uint64_t)4 << 20);
	if (c->pinned_max < 256)
		c->pinned_max = 256;
	config_sample(c, getenv(NTOP_ENV_SAMPLE));
	const char *as = getenv(NTOP_ENV_ASSEMBLER);
	c->assembler = !as || !*as || strcmp(as, "auto") == 0 ? HOOK_AS_AUTO
		       : strcmp(as, "ptxas") == 0	   ? HOOK_AS_PTXAS
		       : strcmp(as, "nvjitlink") == 0	   ? HOOK_AS_NVJITLINK
							   : HOOK_AS_JIT;
	const char *tm = getenv(NTOP_ENV_TIME_LAUNCHES);
	c->time_mode = HOOK_TIME_SAMPLE;
	if (tm && strcmp(tm, "all") == 0)
		c->time_mode = HOOK_TIME_ALL;
	else if (tm && strcmp(tm, "off") == 0)
		c->time_mode = HOOK_TIME_OFF;
	uint64_t gap_ms = config_u64(NTOP_ENV_TIME_GAP_MS, 10);
	c->time_gap_ns = (gap_ms < 86400000ull ? gap_ms : 86400000ull) * 1000000ull; /* at most a day */
	const char *pa = getenv(NTOP_ENV_PROBE_ASYNC);
	c->probe_async = !(pa && strcmp(pa, "0") == 0);
	const char *self = getenv(NTOP_ENV_SELF_TIME);
	c->self_time = self && strcmp(self, "1") == 0;
	const char *keep = getenv(NTOP_ENV_KEEP_PTX);
	c->keep_ptx = keep && strcmp(keep, "1") == 0;
	const char *control = getenv(NTOP_ENV_CONTROL);
	c->control = control && *control ? strdup(control) : NULL;
}

static int config_pattern_matches(const char *pat, const char *name)
{
	if (strpbrk(pat, "*?["))
		return fnmatch(pat, name, 0) == 0;
	return strstr(name, pat) != NULL;
}

int hook_config_kernel_matches(const char *name)
{
	if (hook.cfg.n_kernels == 0)
		return 1;
	int st = -1;
	char *dem = name[0] == '_' && name[1] == 'Z' ? __cxa_demangle(name, NULL, NULL, &st) : NULL;
	int hit = 0;
	for (int i = 0; i < hook.cfg.n_kernels && !hit; i++) {
		const char *p = hook.cfg.kernels[i];
		if (!p)
			continue;
		hit = config_pattern_matches(p, name) || (st == 0 && dem && config_pattern_matches(p, dem));
	}
	free(dem);
	return hit;
}
