/* Timeline and DMAT PNG export from the UI (export.h). */
#include "tui/export.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/cause.h"
#include "common/demangle.h"
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
	if (asprintf(&p, "%s/export/%s-k%u-p%u-%llu-%s.png", dir ? dir : ".", name, k->kid, k->pid,
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
	const struct td_device *d = trace_dir_device(td, k->pid);
	char dev[160] = "";
	if (d && d->name)
		snprintf(dev, sizeof dev, "  %s (%d SMs)", d->name, d->sms);
	snprintf(sub, slen, "pid %u  launch seq %llu  grid %ux%ux%u  block %ux%ux%u  smem %u B%s", r->pid,
		 (unsigned long long)r->seq, r->grid[0], r->grid[1], r->grid[2], r->block[0], r->block[1], r->block[2],
		 r->smem, dev);
}

static int export_mkdir(const struct trace_dir *td, char **cause)
{
	char *dir;
	if (asprintf(&dir, "%s/export", td->path ? td->path : ".") < 0)
		return cause_set(cause, "out of memory");
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		cause_set(cause, "cannot create %s: %s", dir, strerror(errno));
		free(dir);
		return -1;
	}
	free(dir);
	return 0;
}

/* Writes a drawn image (drawn: the renderer's return) to path, frees it;
 * path goes to *path_out, or is freed on failure. */
static int export_finish(char *path, struct rp_image *img, int drawn, char **path_out, char **cause)
{
	int rc = drawn == 0 ? png_canvas_write(path, img, cause) : -1;
	png_canvas_free(img);
	if (rc < 0) {
		free(path);
		return -1;
	}
	*path_out = path;
	return 0;
}

int export_timeline(const struct trace_dir *td, const struct td_kernel *k, const struct result *r,
		    const struct timeline *tl, const struct tl_view *v, enum tl_color color, const struct theme *th,
		    char **path_out, char **cause)
{
	*path_out = NULL;
	if (export_mkdir(td, cause) < 0)
		return -1;
	char *path = export_timeline_path(td->path, k, r->seq);
	if (!path)
		return cause_set(cause, "out of memory");
	char title[512], sub[512];
	export_titles(td, k, r, title, sizeof title, sub, sizeof sub);
	struct rp_opts o;
	render_png_opts_init(&o);
	o.color = color;
	o.title = title;
	o.subtitle = sub;
	struct rp_image img = {0};
	return export_finish(path, &img, render_png_draw(tl, v, th, &o, &img, cause), path_out, cause);
}

int export_dmat(const struct trace_dir *td, const struct td_kernel *k, const struct result *r, const struct dmat *m,
		const struct dmat_view *v, const struct theme *th, char **path_out, char **cause)
{
	*path_out = NULL;
	if (export_mkdir(td, cause) < 0)
		return -1;
	char *path = export_dmat_path(td->path, k, r->seq);
	if (!path)
		return cause_set(cause, "out of memory");
	char title[512], sub[512];
	export_titles(td, k, r, title, sizeof title, sub, sizeof sub);
	struct rdp_opts o;
	render_dmat_png_opts_init(&o);
	o.title = title;
	o.subtitle = sub;
	struct rp_image img = {0};
	return export_finish(path, &img, render_dmat_png_draw(m, v, th, &o, &img, cause), path_out, cause);
}
