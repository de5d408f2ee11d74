/* The probe picker (live mode): the probes ntop knows (built-ins, -p files,
 * the .toml files in ~/.config/ntop/probes) with check boxes, and when to probe: the
 * next launch, every launch, or every Nth. Enter writes the request into the
 * control file through tui_request_set; the kernel row then shows the
 * request until a result (or a failure) arrives. `r` on a probe that records
 * regions opens its regions page (probe_regions.h): Enter there writes a copy
 * of the probe with the regions chosen into the session's probes/ and
 * requests that copy. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cause.h"
#include "common/fdio.h"
#include "common/safefs.h"
#include "common/strbuf.h"
#include "engine/probe/probe.h"
#include "engine/probe/verify.h"
#include "tui/draw.h"
#include "tui/probe_regions.h"
#include "tui/tui.h"
#include "tui/view.h"

struct vp {
	unsigned pid, kid;
	int sel;
	char *checked;          /* [n_probes] */
	enum tui_probe_mode mode;
	unsigned n;             /* every Nth */
	int typing;             /* digits extend n (else the first digit replaces it) */
	struct pregions *reg;   /* the regions page, open */
	int reg_probe;          /* the probe it chooses regions for */
	char *reg_path;         /* its copy with them, once applied */
};

static int vp_has_path(const char *list, const char *path)
{
	size_t n = strlen(path);
	for (const char *p = list; p && *p;) {
		const char *c = strchr(p, ',');
		size_t len = c ? (size_t)(c - p) : strlen(p);
		if (len == n && !strncmp(p, path, n))
			return 1;
		p = c ? c + 1 : NULL;
	}
	return 0;
}

static int vp_init(struct view *v, void *arg)
{
	struct tui *t = v->tui;
	int idx = *(int *)arg;
	if (idx < 0 || idx >= t->td->n_kernels)
		return -1;
	if (!t->o.n_probes) {
		tui_msg(t, 1, "no probes found (built-in directory missing; give -p FILE.toml)");
		return -1;
	}
	struct vp *s = calloc(1, sizeof *s);
	if (!s || !(s->checked = calloc((size_t)t->o.n_probes, 1))) {
		free(s);
		return -1;
	}
	v->priv = s;
	v->modal = 1;
	const struct td_kernel *k = &t->td->kernels[idx];
	s->pid = k->pid;
	s->kid = k->kid;
	s->n = 10;
	struct tui_request *r = k->name ? tui_request_find(t, k->name) : NULL;
	for (int i = 0; i < t->o.n_probes; i++)
		s->checked[i] = r ? vp_has_path(r->probes, t->o.probes[i].path) : i == 0;
	if (r) {
		s->mode = r->mode;
		s->n = r->n ? r->n : 10;
	}
	return 0;
}

static void vp_free(struct view *v)
{
	struct vp *s = v->priv;
	if (s) {
		free(s->checked);
		pregions_free(s->reg);
		free(s->reg_path);
	}
	free(s);
}

static int vp_apply(struct view *v)
{
	struct vp *s = v->priv;
	struct tui *t = v->tui;
	const struct td_kernel *k = trace_dir_kernel(t->td, s->pid, s->kid);
	if (!k)
		return VIEW_QUIT;
	struct strbuf paths, names;
	strbuf_init(&paths);
	strbuf_init(&names);
	int n = 0;
	for (int i = 0; i < t->o.n_probes; i++) {
		if (!s->checked[i])
			continue;
		int own = s->reg_path && i == s->reg_probe; /* the copy with the regions chosen */
		strbuf_printf(&paths, "%s%s", n ? "," : "", own ? s->reg_path : t->o.probes[i].path);
		strbuf_printf(&names, "%s%s%s", n ? "," : "", t->o.probes[i].name, own ? " (regions picked)" : "");
		n++;
	}
	char *p = strbuf_finish(&paths, NULL), *nm = strbuf_finish(&names, NULL);
	if (!n) {
		tui_msg(t, 1, "no probe checked (Space checks one; P switches probing off)");
		free(p);
		free(nm);
		return VIEW_HANDLED | VIEW_REDRAW;
	}
	if (p && nm)
		tui_request_set(t, k, p, nm, s->mode, s->n);
	free(p);
	free(nm);
	return VIEW_QUIT;
}

/* Does probe i record regions? */
static int vp_records_regions(const struct tui *t, int i)
{
	struct probe *p = NULL;
	char *cause = NULL;
	int yes = probe_load_file(t->o.probes[i].path, &p, &cause) == 0 && probe_has_regions(p);
	probe_free(p);
	free(cause);
	return yes;
}

static void vp_regions_open(struct vp *s, struct tui *t)
{
	if (!vp_records_regions(t, s->sel)) {
		tui_msg(t, 1, "%s records no regions (the regions probe does)", t->o.probes[s->sel].name);
		return;
	}
	if (!t->o.app || !t->o.app->control) {
		tui_msg(t, 1, "regions can be picked only while ntop runs or attaches to the program");
		return;
	}
	s->reg_probe = s->sel;
	s->checked[s->sel] = 1;
	s->reg = pregions_open(t, s->pid, s->kid);
}

/* The probe with the regions chosen, verified, written as
 * <session>/probes/regions-<pid>-<kid>-<gen>.toml: its absolute path. */
static char *vp_regions_write(struct vp *s, struct tui *t, char **cause)
{
	int n = 0;
	const char *const *specs = pregions_specs(s->reg, &n);
	const char *src = t->o.probes[s->reg_probe].path;
	size_t len = 0;
	char *text = fdio_read_file(src, PROBE_FILE_MAX, &len), *out = NULL, *path = NULL;
	struct probe *p = NULL;
	char dir[4096], name[96];
	if (!text)
		cause_set(cause, "%s: cannot read it", src);
	else if (probe_text_with_regions(text, src, specs, n, &out, cause) == 0 &&
		 probe_load_string(out, src, &p, cause) == 0 && verify_probe(p, cause) == 0) {
		snprintf(name, sizeof name, "regions-%u-%u-%llu.toml", s->pid, s->kid,
			 (unsigned long long)t->control_gen + 1);
		int dfd = realpath(t->o.trace_dir, dir) ? safefs_open_dir(dir, 0, cause) : -1;
		int pfd = dfd >= 0 ? safefs_subdir(dfd, "probes", cause) : -1;
		if (dfd < 0 && !*cause)
			cause_set(cause, "%s: %s", t->o.trace_dir, strerror(errno));
		if (pfd >= 0 && safefs_replace(pfd, name, out, strlen(out), cause) == 0 &&
		    asprintf(&path, "%s/probes/%s", dir, name) < 0)
			path = NULL;
		if (pfd >= 0)
			close(pfd);
		if (dfd >= 0)
			close(dfd);
	}
	probe_free(p);
	free(out);
	free(text);
	return path;
}

static int vp_regions_key(struct view *v, int key)
{
	struct vp *s = v->priv;
	struct tui *t = v->tui;
	int r = pregions_key(s->reg, t, key);
	if (r == PREG_BACK) {
		pregions_free(s->reg);
		s->reg = NULL;
	} else if (r == PREG_APPLY) {
		char *cause = NULL;
		free(s->reg_path);
		s->reg_path = vp_regions_write(s, t, &cause);
		if (!s->reg_path) {
			tui_msg(t, 1, "regions not applied: %s", cause ? cause : "out of memory");
			free(cause);
			return VIEW_HANDLED | VIEW_REDRAW;
		}
		return vp_apply(v);
	}
	return VIEW_HANDLED | VIEW_REDRAW;
}

static int vp_key(struct view *v, int key)
{
	struct vp *s = v->priv;
	struct tui *t = v->tui;
	if (s->reg)
		return vp_regions_key(v, key);
	switch (key) {
	case 'r': vp_regions_open(s, t); break;
	case 'j': case TK_DOWN: if (s->sel + 1 < t->o.n_probes) s->sel++; break;
	case 'k': case TK_UP: if (s->sel > 0) s->sel--; break;
	case ' ': case 'x': s->checked[s->sel] = !s->checked[s->sel]; break;
	case '\t': case TK_RIGHT: s->mode = (enum tui_probe_mode)((s->mode + 1) % 3); break;
	case TK_LEFT: s->mode = (enum tui_probe_mode)((s->mode + 2) % 3); break;
	case TK_BACKSPACE: s->n /= 10; break;
	case TK_ENTER:
		if (s->mode == PMODE_NTH && s->n < 1)
			s->n = 1;
		return vp_apply(v);
	case 'q': case TK_ESC: return VIEW_QUIT;
	default:
		if (key >= '0' && key <= '9') {
			if (!s->typing)
				s->n = 0;
			s->typing = 1;
			if (s->n < 100000)
				s->n = s->n * 10 + (unsigned)(key - '0');
			s->mode = PMODE_NTH;
			break;
		}
		return VIEW_HANDLED;
	}
	return VIEW_HANDLED | VIEW_REDRAW;
}

static void vp_draw(struct view *v, struct cellgrid *g, int x, int y, int w, int h)
{
	struct vp *s = v->priv;
	struct tui *t = v->tui;
	const struct td_kernel *k = trace_dir_kernel(t->td, s->pid, s->kid);
	int n = t->o.n_probes;
	int bw = w - 4 < 76 ? w - 4 : 76, bh = n + 7 < h ? n + 7 : h;
	if (bw < 20 || bh < 6)
		return;
	if (s->reg)
		bh = h - 2 > 12 ? h - 2 : h;
	int bx = x + (w - bw) / 2, by = y + (h - bh) / 2;
	char title[300];
	snprintf(title, sizeof title, " %s for %s ", s->reg ? "regions" : "probes", k ? tui_kernel_name(t, k) : "?");
	draw_box(t, g, bx, by, bw, bh, title);
	struct rgb bg = rgb_mix(t->theme.c[THEME_BG], t->theme.c[THEME_FG], 0.10);
	if (s->reg) {
		pregions_draw(s->reg, t, g, bx + 1, by + 1, bw - 2, bh - 1);
		return;
	}
	int rows = bh - 7;
	int top = layout_scroll(0, s->sel, rows, n);
	for (int i = 0; i < rows && top + i < n; i++) {
		const struct tui_probe *p = &t->o.probes[top + i];
		char line[600];
		snprintf(line, sizeof line, "[%s] %-16s %s  %s", s->checked[top + i] ? "x" : " ", p->name, p->origin,
			 p->path);
		int sel = top + i == s->sel;
		struct rgb lbg = sel ? tui_sel_bg(t) : bg;
		draw_fill(g, bx + 1, by + 1 + i, bw - 2, 1, lbg);
		draw_text(t, g, bx + 2, by + 1 + i, bw - 4, line, draw_c(t, THEME_FG), lbg,
			  sel && t->mono ? CELL_REVERSE : 0);
	}
	char mode[200];
	const char *on = t->utf8 ? "\xe2\x97\x8f" : "*";
	snprintf(mode, sizeof mode, "when: (%s) next launch  (%s) every launch  (%s) every %uth", s->mode == PMODE_NEXT ? on : " ",
		 s->mode == PMODE_EVERY ? on : " ", s->mode == PMODE_NTH ? on : " ", s->n);
	draw_text(t, g, bx + 2, by + bh - 5, bw - 4, mode, draw_c(t, THEME_ACCENT), bg, 0);
	draw_text(t, g, bx + 2, by + bh - 3, bw - 4, "Space check  Tab when  0-9 N  r regions  Enter apply  Esc cancel",
		  draw_c(t, THEME_DIM), bg, 0);
	if (k && !k->has_ptx)
		draw_text(t, g, bx + 2, by + bh - 2, bw - 4,
			  k->amd ? "this kernel has no code object ntop can instrument: it cannot be probed"
				 : "this kernel has no PTX: it cannot be probed",
			  draw_c(t, THEME_ERROR), bg, 0);
}

static const char *vp_hints(struct view *v)
{
	const struct vp *s = v->priv;
	return s->reg ? "Space range  t l s w a class  o loop  Enter apply  Esc back"
		      : "Space check  Tab mode  r regions  Enter apply  Esc cancel";
}

const struct view_ops view_probes_ops = {
	.name = "probes",
	.init = vp_init,
	.free = vp_free,
	.key = vp_key,
	.draw = vp_draw,
	.hints = vp_hints,
};
