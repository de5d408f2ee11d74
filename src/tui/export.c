/* Timeline and DMAT PNG export from the UI (export.h). */
#include "tui/export.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cause.h"
#include "common/demangle.h"
#include "tui/export_job.h"
#include "tui/settings.h"
#include "viz/render_dmat_png.h"
#include "viz/render_png.h"

void export_safe_name(const char *mangled, char *buf, size_t len)
{
	char *base = mangled ? demangle_base(mangled) : NULL;
	const char *s = base ? base : mangled ? mangled : "";
	/* "void ns::fill<float>" -> skip the return type: the last space before
	 * the template arguments */
	const char *lt = strchr(s, '<'), *sp = NULL;
	for (const char *p = s; *p && (!lt || p < lt); p++)
		if (*p == ' ')
			sp = p;
	if (sp)
		s = sp + 1;
	size_t o = 0, max = len - 1 < EXPORT_NAME_MAX ? len - 1 : EXPORT_NAME_MAX;
	for (const char *p = s; *p && o < max; p++) {
		char c = *p;
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
			 c == '-' || (c == '.' && o > 0);
		if (!ok)
			c = '_';
		if (c == '_' && o > 0 && buf[o - 1] == '_')
			continue;
		buf[o++] = c;
	}
	while (o > 0 && (buf[o - 1] == '_' || buf[o - 1] == '.'))
		o--;
	buf[o] = 0;
	if (!o)
		snprintf(buf, len, "kernel");
	free(base);
}

static char *export_path(const char *dir, const struct td_kernel *k, uint64_t seq, const char *what)
{
	char name[EXPORT_NAME_MAX + 1], *p;
	export_safe_name(k->name, name, sizeof name);
	if (asprintf(&p, "%s/%s-k%u-p%u-%llu-%s.png", dir ? dir : ".", name, k->kid, k->pid,
		     (unsigned long long)seq, what) < 0)
		return NULL;
	return p;
}

char *export_timeline_path(const char *dir, const struct td_kernel *k, uint64_t seq)
{
	return export_path(dir, k, seq, "timeline");
}

char *export_dmat_path(const char *dir, const struct td_kernel *k, uint64_t seq)
{
	return export_path(dir, k, seq, "dmat");
}

static void export_titles(const struct trace_dir *td, const struct td_kernel *k, const struct result *r,
			  char *title, size_t tlen, char *sub, size_t slen)
{
	snprintf(title, tlen, "%s", k->demangled ? k->demangled : k->name ? k->name : "(unnamed)");
	const struct td_device *d = trace_dir_launch_device(td, k, r->seq);
	char dev[160] = "", gpu[24] = "";
	if (d && td_process_n_devices(td, k->pid) > 1)
		snprintf(gpu, sizeof gpu, "GPU %d: ", d->ordinal);
	if (d && d->name)
		snprintf(dev, sizeof dev, "  %s%s (%d %s)", gpu, d->name, d->sms, td_device_amd(d) ? "CUs" : "SMs");
	snprintf(sub, slen, "pid %u  launch seq %llu  grid %ux%ux%u  block %ux%ux%u  smem %u B%s", r->pid,
		 (unsigned long long)r->seq, r->grid[0], r->grid[1], r->grid[2], r->block[0], r->block[1], r->block[2],
		 r->smem, dev);
}

/* DIR/export when DIR is ours and it can be made and written; NULL with
 * *why otherwise. */
static char *export_trace_subdir(const char *trace_dir, char *why, size_t len)
{
	struct stat st;
	char *d = NULL;
	if (stat(trace_dir, &st) < 0) {
		snprintf(why, len, "%s", strerror(errno));
		return NULL;
	}
	if (st.st_uid != geteuid()) {
		struct passwd *pw = getpwuid(st.st_uid);
		snprintf(why, len, "it belongs to %s", pw ? pw->pw_name : "another user");
		return NULL;
	}
	if (asprintf(&d, "%s/export", trace_dir) < 0) {
		snprintf(why, len, "out of memory");
		return NULL;
	}
	if ((mkdir(d, 0755) < 0 && errno != EEXIST) || stat(d, &st) < 0 || access(d, W_OK | X_OK) < 0 ||
	    (!S_ISDIR(st.st_mode) && (errno = ENOTDIR))) {
		snprintf(why, len, "%s: %s", d, strerror(errno));
		free(d);
		return NULL;
	}
	return d;
}

char *export_dir(const char *trace_dir, char **note, char **cause)
{
	char why[600] = "", cwd[4096];
	*note = NULL;
	char *d = trace_dir ? export_trace_subdir(trace_dir, why, sizeof why) : NULL;
	if (d)
		return d;
	if (getcwd(cwd, sizeof cwd) && access(cwd, W_OK | X_OK) == 0) {
		d = strdup(cwd);
	} else {
		char *state = settings_state_dir();
		if (state && asprintf(&d, "%s/export", state) < 0)
			d = NULL;
		free(state);
		if (d && settings_mkdirs(d) < 0) {
			cause_set(cause, "no directory to write to: not the trace directory (%s), not the current "
					 "directory, not %s (%s)", why, d, strerror(errno));
			free(d);
			return NULL;
		}
		if (!d) {
			cause_set(cause, "no directory to write to: not the trace directory (%s), not the current "
					 "directory, and neither XDG_STATE_HOME nor HOME is set", why);
			return NULL;
		}
	}
	if (trace_dir && asprintf(note, "not writing into the trace directory %s (%s): exports go to %s", trace_dir,
				  why, d) < 0)
		*note = NULL;
	return d;
}

/* s without the directory prefix dir + '/', NULL when s is not under dir. */
static const char *export_under(const char *s, const char *dir)
{
	size_t n = dir ? strlen(dir) : 0;
	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (!n || strncmp(s, dir, n) || (s[n] != '/' && !(n == 1 && dir[0] == '/')))
		return NULL;
	return s + n + (s[n] == '/');
}

void export_path_short(const char *path, const char *cwd, const char *home, char *buf, size_t len)
{
	const char *rel;
	if ((rel = export_under(path, cwd)) != NULL && *rel)
		snprintf(buf, len, "./%s", rel);
	else if ((rel = export_under(path, home)) != NULL && *rel)
		snprintf(buf, len, "~/%s", rel);
	else
		snprintf(buf, len, "%s", path);
}

/* Writes a drawn image (drawn: the renderer's return) to path, frees it. */
static int export_finish(const char *path, struct rp_image *img, int drawn, char **cause)
{
	export_job_stage("writing");
	int rc = drawn == 0 ? png_canvas_write(path, img, cause) : -1;
	png_canvas_free(img);
	return rc;
}

int export_timeline(const struct trace_dir *td, const struct td_kernel *k, const struct result *r,
		    const struct timeline *tl, const struct tl_view *v, enum tl_color color, const struct theme *th,
		    const char *path, char **cause)
{
	char title[512], sub[512];
	export_titles(td, k, r, title, sizeof title, sub, sizeof sub);
	struct rp_opts o;
	render_png_opts_init(&o);
	o.color = color;
	o.title = title;
	o.subtitle = sub;
	struct rp_image img = {0};
	return export_finish(path, &img, render_png_draw(tl, v, th, &o, &img, cause), cause);
}

int export_dmat(const struct trace_dir *td, const struct td_kernel *k, const struct result *r, const struct dmat *m,
		const struct dmat_view *v, const struct theme *th, const char *path, char **cause)
{
	char title[512], sub[512];
	export_titles(td, k, r, title, sizeof title, sub, sizeof sub);
	struct rdp_opts o;
	render_dmat_png_opts_init(&o);
	o.title = title;
	o.subtitle = sub;
	struct rp_image img = {0};
	return export_finish(path, &img, render_dmat_png_draw(m, v, th, &o, &img, cause), cause);
}
