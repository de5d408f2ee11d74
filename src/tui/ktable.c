/* Kernel table rows, sort and cells (ktable.h). */
#include "tui/ktable.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const struct {
	const char *key, *title;
	int width, prio, prio_multi;
	enum layout_align align;
} kcols[KC_N] = {
	[KC_PID] = {"pid", "PID", 7, 8, 3, LAYOUT_RIGHT},
	[KC_GPU] = {"gpu", "GPU", 5, 2, 2, LAYOUT_RIGHT},
	[KC_LAUNCHES] = {"launches", "LAUNCH", 8, 1, 1, LAYOUT_RIGHT},
	[KC_GRID] = {"grid", "GRID", 11, 7, 7, LAYOUT_RIGHT},
	[KC_BLOCK] = {"block", "BLOCK", 9, 9, 9, LAYOUT_RIGHT},
	[KC_TOTAL] = {"total", "TOTAL", 9, 8, 8, LAYOUT_RIGHT},
	[KC_MEAN] = {"mean", "MEAN", 9, 3, 4, LAYOUT_RIGHT},
	[KC_PTX] = {"ptx", "CODE", 9, 5, 5, LAYOUT_LEFT}, /* PTX, or an AMD code object */
	[KC_PROBE] = {"probe", "PROBE", 16, 2, 2, LAYOUT_LEFT},
	[KC_TRACES] = {"traces", "TRACES", 6, 4, 6, LAYOUT_RIGHT},
	[KC_NAME] = {"name", "KERNEL", 24, 0, 0, LAYOUT_LEFT},
};

const char *ktable_col_key(enum kcol c)
{
	return c < KC_N ? kcols[c].key : "?";
}

int ktable_col_from_key(const char *key)
{
	for (int i = 0; i < KC_N; i++)
		if (key && strcmp(key, kcols[i].key) == 0)
			return i;
	return -1;
}

void ktable_columns(int multi_pid, int multi_gpu, struct layout_col out[KC_N])
{
	for (int i = 0; i < KC_N; i++) {
		out[i].title = kcols[i].title;
		out[i].width = kcols[i].width;
		out[i].priority = multi_pid ? kcols[i].prio_multi : kcols[i].prio;
		out[i].flex = i == KC_NAME;
		out[i].align = kcols[i].align;
		out[i].pref = i == KC_NAME ? 48 : 0;
	}
	if (!multi_gpu) { /* wider than any screen, dropped first: never shown */
		out[KC_GPU].width = 1 << 20;
		out[KC_GPU].priority = 1000;
	}
}

int ktable_multi_gpu(const struct trace_dir *td)
{
	for (int i = 0; i < td->n_procs; i++)
		if (td_process_n_devices(td, td->procs[i].pid) > 1)
			return 1;
	return 0;
}

void ktable_init(struct ktable *kt)
{
	memset(kt, 0, sizeof *kt);
	kt->sort = KC_LAUNCHES;
	kt->dirty = 1;
}

void ktable_done(struct ktable *kt)
{
	free(kt->rows);
	free(kt->members);
	for (int i = 0; i < kt->n_expanded; i++)
		free(kt->expanded[i]);
	free(kt->expanded);
	memset(kt, 0, sizeof *kt);
}

void ktable_mark(struct ktable *kt)
{
	kt->dirty = 1;
}

/* ---- cells ---- */

void ktable_fmt_ns(double ns, int utf8, char *buf, size_t len)
{
	if (ns <= 0)
		snprintf(buf, len, "-");
	else if (ns < 1e3)
		snprintf(buf, len, "%.0fns", ns);
	else if (ns < 1e6)
		snprintf(buf, len, "%.*f%s", ns < 1e4 ? 2 : ns < 1e5 ? 1 : 0, ns / 1e3, utf8 ? "\xc2\xb5s" : "us");
	else if (ns < 1e9)
		snprintf(buf, len, "%.*fms", ns < 1e7 ? 2 : ns < 1e8 ? 1 : 0, ns / 1e6);
	else
		snprintf(buf, len, "%.2fs", ns / 1e9);
}

void ktable_fmt_dims(const unsigned d[3], char *buf, size_t len)
{
	if (d[2] > 1)
		snprintf(buf, len, "%ux%ux%u", d[0], d[1], d[2]);
	else if (d[1] > 1)
		snprintf(buf, len, "%ux%u", d[0], d[1]);
	else
		snprintf(buf, len, "%u", d[0]);
}

int ktable_traces(const struct trace_dir *td, const struct td_kernel *k)
{
	int n = 0;
	for (int i = 0; i < k->n_results; i++)
		n += td->results[k->results[i]].file != NULL;
	return n;
}

/* First clause of a reason ("stream capture active: probed ..." -> "stream capture active"). */
static void ktable_short(const char *why, char *buf, size_t len)
{
	snprintf(buf, len, "%s", why && *why ? why : "?");
	char *c = strchr(buf, ':');
	if (c && c != buf)
		*c = 0;
}

void ktable_probe_state(const struct ktable_ctx *c, const struct td_kernel *k, char *buf, size_t len, int *role)
{
	char why[96];
	int traces = ktable_traces(c->td, k);
	const struct td_process *p = trace_dir_process(c->td, k->pid);
	/* a request by name reaches running processes only */
	const char *req = c->request && !(p && p->exited) ? c->request(c->arg, k) : NULL;
	if (req) {
		snprintf(buf, len, "%s%s", c->utf8 ? "\xe2\x86\x92 " : "-> ", req);
		*role = THEME_SELECTION;
	} else if (k->instrument_status && strcmp(k->instrument_status, "failed") == 0) {
		ktable_short(k->instrument_reason, why, sizeof why);
		snprintf(buf, len, "failed: %s", why);
		*role = THEME_ERROR;
	} else if (k->n_results) {
		if (k->declined)
			snprintf(buf, len, "probed %d, %llu declined", k->n_results, (unsigned long long)k->declined);
		else
			snprintf(buf, len, "probed %d", k->n_results);
		*role = traces ? THEME_ACCENT : THEME_FG;
	} else if (k->deferred) { /* launches went by while the copy was built off the app's threads */
		snprintf(buf, len, "%s, %llu unprobed", k->instrument_status ? "copy ready" : "building copy",
			 (unsigned long long)k->deferred);
		*role = THEME_SELECTION;
	} else if (k->declined) {
		ktable_short(k->declined_reason, why, sizeof why);
		snprintf(buf, len, "declined: %s", why);
		*role = THEME_WARN;
	} else {
		snprintf(buf, len, "not probed");
		*role = THEME_DIM;
	}
}

const char *ktable_name(const struct ktable_ctx *c, const struct td_kernel *k)
{
	const char *n = c->mangled ? k->name : k->demangled ? k->demangled : k->name;
	return n ? n : "(unnamed)";
}

void ktable_cell(const struct ktable_ctx *c, const struct td_kernel *k, enum kcol col, char *buf, size_t len,
		 int *role)
{
	int n;
	double mean;
	*role = THEME_FG;
	switch (col) {
	case KC_PID: snprintf(buf, len, "%u", td_os_pid(k->pid)); *role = THEME_DIM; return;
	case KC_GPU:
		if (k->devs)
			td_kernel_devs_text(k, 0, buf, len);
		else
			snprintf(buf, len, "-");
		*role = k->devs ? THEME_FG : THEME_DIM;
		return;
	case KC_LAUNCHES: snprintf(buf, len, "%llu", (unsigned long long)k->launches); return;
	case KC_GRID:
	case KC_BLOCK:
		if (!k->has_config)
			snprintf(buf, len, "-");
		else
			ktable_fmt_dims(col == KC_GRID ? k->last.grid : k->last.block, buf, len);
		return;
	case KC_TOTAL: ktable_fmt_ns(k->timed ? (double)k->total_ns : 0, c->utf8, buf, len); return;
	case KC_MEAN:
		if (k->timed) {
			ktable_fmt_ns(td_kernel_mean_ns(k), c->utf8, buf, len);
			return;
		}
		mean = rcache_kernel_mean(c->rc, c->td, k, &n);
		ktable_fmt_ns(mean, c->utf8, buf, len);
		if (n && strlen(buf) + 2 <= len)
			strcat(buf, "*"); /* probed launches: instrumented, slower */
		*role = THEME_DIM;
		return;
	case KC_PTX:
		if (k->has_ptx)
			snprintf(buf, len, "%s", k->amd ? "code obj" : "PTX");
		else {
			ktable_short(k->ptx_reason ? k->ptx_reason : k->amd ? "no code object" : "no PTX", buf, len);
			*role = THEME_DIM;
		}
		return;
	case KC_PROBE: ktable_probe_state(c, k, buf, len, role); return;
	case KC_TRACES:
		n = ktable_traces(c->td, k);
		snprintf(buf, len, "%d", n);
		*role = n ? THEME_FG : THEME_DIM;
		return;
	case KC_NAME: snprintf(buf, len, "%s", ktable_name(c, k)); return;
	case KC_N: break;
	}
	snprintf(buf, len, "?");
}

/* ---- filter and sort ---- */

static int ktable_icontains(const char *hay, const char *needle)
{
	return hay && strcasestr(hay, needle) != NULL;
}

int ktable_match(const struct td_kernel *k, const char *f)
{
	if (!f || !*f)
		return 1;
	if (!strncasecmp(f, "gpu:", 4) && f[4] >= '0' && f[4] <= '9') {
		int d = atoi(f + 4);
		return d < TD_DEVICES && (k->devs >> d & 1);
	}
	return ktable_icontains(k->demangled, f) || ktable_icontains(k->name, f);
}

double ktable_num(const struct ktable_ctx *c, const struct td_kernel *k, enum kcol col)
{
	int n;
	switch (col) {
	case KC_PID: return k->pid;
	case KC_GPU: return k->devs ? __builtin_ctz(k->devs) + (td_kernel_n_devs(k) > 1 ? 0.5 : 0) : -1;
	case KC_LAUNCHES: return (double)k->launches;
	case KC_GRID: return k->has_config ? (double)k->last.grid[0] * k->last.grid[1] * k->last.grid[2] : -1;
	case KC_BLOCK: return k->has_config ? (double)k->last.block[0] * k->last.block[1] * k->last.block[2] : -1;
	case KC_TOTAL: return k->timed ? (double)k->total_ns : -1;
	case KC_MEAN: return k->timed ? td_kernel_mean_ns(k) : rcache_kernel_mean(c->rc, c->td, k, &n);
	case KC_PTX: return k->has_ptx;
	case KC_PROBE: return k->n_results * 4.0 + (k->declined ? 2 : 0) + (k->instrument_status ? 1 : 0);
	case KC_TRACES: return ktable_traces(c->td, k);
	default: return 0;
	}
}
