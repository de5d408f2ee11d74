/* The probe picker's regions page (probe_regions.h). Lines come from the
 * kernel's PTX saved in the trace (kernels/<pid>-<kid>/source.ptx, written
 * by the program's hook when the control file asked); each row is one
 * source line with its instruction count, classes and whether it lies in a
 * loop, and the line's text when the source file can be read here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fdio.h"
#include "engine/probe/probe.h"
#include "engine/ptx/ptx_srclines.h"
#include "tui/draw.h"
#include "tui/layout.h"
#include "tui/probe_regions.h"
#include "tui/tui.h"
#include "tui/view.h"

#define PREG_SOURCE_MAX (64u << 20) /* bytes of PTX read back */
#define PREG_TEXT_MAX (8u << 20)    /* a source file shown beside its lines */
#define PREG_SPEC_LEN (PROBE_NAME_MAX + PROBE_REGION_SPEC_MAX + 2)

#define PREG_FILES 8

/* A source file read for the lines' text (NULL text: not readable here). */
struct pregions_src {
	char *path;
	char *text;
	char **lines;
	int n;
};

struct pregions {
	unsigned pid, kid;
	int asked, loaded;
	char *error;
	struct ptx_srclines lines;
	int sel, mark; /* mark: where a line range starts, -1 none */
	char specs[PROBE_MAX_REGIONS][PREG_SPEC_LEN];
	const char *spec_ptrs[PROBE_MAX_REGIONS];
	int n_specs;
	struct pregions_src files[PREG_FILES]; /* source files read (a kernel's lines span a few) */
	int next_file;    /* the slot to reuse when all are taken */
};

static const char *const class_keys = "tlswa"; /* tensor load store wait async */

struct pregions *pregions_open(struct tui *t, unsigned pid, unsigned kid)
{
	struct pregions *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	r->pid = pid;
	r->kid = kid;
	r->mark = -1;
	const struct td_kernel *k = trace_dir_kernel(t->td, pid, kid);
	if (k && !k->source_saved)
		r->asked = tui_request_source(t, k) >= 0;
	return r;
}

static void pregions_src_drop(struct pregions_src *f)
{
	free(f->path);
	free(f->text);
	free(f->lines);
	memset(f, 0, sizeof *f);
}

void pregions_free(struct pregions *r)
{
	if (!r)
		return;
	ptx_srclines_done(&r->lines);
	for (int i = 0; i < PREG_FILES; i++)
		pregions_src_drop(&r->files[i]);
	free(r->error);
	free(r);
}

const char *const *pregions_specs(const struct pregions *r, int *n)
{
	*n = r->n_specs;
	return r->spec_ptrs;
}

/* Reads the saved PTX once the trace says it is there. */
static void pregions_load(struct pregions *r, struct tui *t)
{
	const struct td_kernel *k = trace_dir_kernel(t->td, r->pid, r->kid);
	if (r->loaded || !k || !k->source_saved)
		return;
	r->loaded = 1;
	if (k->source_saved < 0) {
		r->error = strdup(k->source_error ? k->source_error : "the program could not save it");
		return;
	}
	char path[4096];
	snprintf(path, sizeof path, "%s/kernels/%u-%u/source.ptx", t->o.trace_dir, r->pid, r->kid);
	size_t len = 0;
	char *ptx = fdio_read_file(path, PREG_SOURCE_MAX, &len), *cause = NULL;
	if (!ptx)
		r->error = strdup("cannot read kernels/.../source.ptx in the trace directory");
	else if (ptx_srclines_read(ptx, len, k->name, &r->lines, &cause) < 0)
		r->error = cause, cause = NULL;
	else if (!r->lines.n)
		r->error = strdup("its PTX has no line information (build with -lineinfo; Triton always has it): "
				  "regions by class only (t l s w a)");
	free(cause);
	free(ptx);
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* Reads file into f: its text split into lines (only an absolute path:
 * a relative one means the compiler's directory, unknown here). */
static void pregions_src_read(struct pregions_src *f, const char *file)
{
	size_t len = 0;
	int cap = 0;
	f->path = strdup(file);
	f->text = file[0] == '/' ? fdio_read_file(file, PREG_TEXT_MAX, &len) : NULL;
	for (char *p = f->text; p && *p;) {
		if (f->n == cap) {
			cap = cap ? cap * 2 : 256;
			char **v = realloc(f->lines, (size_t)cap * sizeof *v);
			if (!v)
				break;
			f->lines = v;
		}
		f->lines[f->n++] = p;
		char *nl = strchr(p, '\n');
		if (!nl)
			break;
		*nl = 0;
		p = nl + 1;
	}
}

/* The source text of line n of file (NULL when it cannot be read here). */
static const char *pregions_text(struct pregions *r, const char *file, int n)
{
	struct pregions_src *f = NULL;
	for (int i = 0; i < PREG_FILES && !f; i++)
		if (r->files[i].path && !strcmp(r->files[i].path, file))
			f = &r->files[i];
	if (!f) {
		f = &r->files[r->next_file];
		r->next_file = (r->next_file + 1) % PREG_FILES;
		pregions_src_drop(f);
		pregions_src_read(f, file);
	}
	return n >= 1 && n <= f->n ? f->lines[n - 1] : NULL;
}

static void pregions_say(struct tui *t, const char *what, const char *spec)
{
	tui_msg(t, 0, "%s region %s", what, spec);
}

/* Adds "NAME=SPEC", or takes it away when a region of that name is there. */
static void pregions_toggle(struct pregions *r, struct tui *t, const char *name, const char *spec)
{
	size_t n = strlen(name);
	for (int i = 0; i < r->n_specs; i++)
		if (!strncmp(r->specs[i], name, n) && r->specs[i][n] == '=') {
			pregions_say(t, "dropped", r->specs[i]);
			memmove(r->specs[i], r->specs[i + 1], (size_t)(r->n_specs - i - 1) * sizeof r->specs[0]);
			r->n_specs--;
			goto ptrs;
		}
	if (r->n_specs == PROBE_MAX_REGIONS) {
		tui_msg(t, 1, "at most %d regions", PROBE_MAX_REGIONS);
		return;
	}
	snprintf(r->specs[r->n_specs], PREG_SPEC_LEN, "%s=%s", name, spec);
	pregions_say(t, "added", r->specs[r->n_specs++]);
ptrs:
	for (int i = 0; i < r->n_specs; i++)
		r->spec_ptrs[i] = r->specs[i];
}

/* Space: the first press marks where a range starts, the second closes it. */
static void pregions_range(struct pregions *r, struct tui *t)
{
	if (r->sel >= r->lines.n)
		return;
	if (r->mark < 0) {
		r->mark = r->sel;
		tui_msg(t, 0, "range from line %d: move, then Space again", r->lines.v[r->sel].line);
		return;
	}
	const struct ptx_srcline *a = &r->lines.v[r->mark < r->sel ? r->mark : r->sel];
	const struct ptx_srcline *b = &r->lines.v[r->mark < r->sel ? r->sel : r->mark];
	r->mark = -1;
	if (strcmp(a->file, b->file)) {
		tui_msg(t, 1, "a range lies in one source file");
		return;
	}
	char name[32], spec[PROBE_REGION_SPEC_MAX];
	if (a->line == b->line) {
		snprintf(name, sizeof name, "L%d", a->line);
		snprintf(spec, sizeof spec, "%s:%d", base_name(a->file), a->line);
	} else {
		snprintf(name, sizeof name, "L%d_%d", a->line, b->line);
		snprintf(spec, sizeof spec, "%s:%d-%d", base_name(a->file), a->line, b->line);
	}
	pregions_toggle(r, t, name, spec);
}

static void pregions_loop(struct pregions *r, struct tui *t)
{
	if (r->sel >= r->lines.n)
		return;
	const struct ptx_srcline *l = &r->lines.v[r->sel];
	if (!l->in_loop) {
		tui_msg(t, 1, "line %d lies in no loop", l->line);
		return;
	}
	char name[32], spec[PROBE_REGION_SPEC_MAX];
	snprintf(name, sizeof name, "iter%d", l->line);
	snprintf(spec, sizeof spec, "@loop:%s:%d", base_name(l->file), l->line);
	pregions_toggle(r, t, name, spec);
}

int pregions_key(struct pregions *r, struct tui *t, int key)
{
	const char *c = key > 0 && key < 128 ? strchr(class_keys, key) : NULL;
	int page = r->lines.n > 10 ? 10 : 1;
	switch (key) {
	case 'j': case TK_DOWN: if (r->sel + 1 < r->lines.n) r->sel++; break;
	case 'k': case TK_UP: if (r->sel > 0) r->sel--; break;
	case TK_PGDN: r->sel = r->sel + page < r->lines.n ? r->sel + page : (r->lines.n ? r->lines.n - 1 : 0); break;
	case TK_PGUP: r->sel = r->sel > page ? r->sel - page : 0; break;
	case ' ': pregions_range(r, t); break;
	case 'o': pregions_loop(r, t); break;
	case TK_BACKSPACE:
		if (r->n_specs)
			pregions_say(t, "dropped", r->specs[--r->n_specs]);
		break;
	case TK_ENTER:
		if (!r->n_specs) {
			tui_msg(t, 1, "no region chosen (Space marks a line range; t l s w a a class; o a loop)");
			break;
		}
		return PREG_APPLY;
	case TK_ESC: case 'q': return PREG_BACK;
	default:
		if (c && *c) {
			enum probe_class cls = (enum probe_class)(PROBE_CLASS_TENSOR + (c - class_keys));
			char spec[16];
			snprintf(spec, sizeof spec, "@%s", probe_class_name(cls));
			pregions_toggle(r, t, probe_class_name(cls), spec);
		}
	}
	return PREG_STAY;
}

/* "tensor load" for the classes in mask. */
static void class_list(unsigned mask, char *out, size_t n)
{
	out[0] = 0;
	for (int c = PROBE_CLASS_TENSOR; c <= PROBE_CLASS_ASYNC; c++)
		if (mask >> c & 1)
			snprintf(out + strlen(out), n - strlen(out), "%s%s", out[0] ? " " : "", probe_class_name((enum probe_class)c));
}

/* The letter of the first line region holding row i, or ' '. */
static char row_mark(const struct pregions *r, int i)
{
	const struct ptx_srcline *l = &r->lines.v[i];
	for (int s = 0; s < r->n_specs; s++) {
		const char *eq = strchr(r->specs[s], '=');
		int a = 0, b = 0;
		const char *colon = eq ? strrchr(eq, ':') : NULL;
		if (!colon || eq[1] == '@' || sscanf(colon + 1, "%d-%d", &a, &b) < 1)
			continue;
		if (b < a)
			b = a;
		size_t n = (size_t)(colon - eq - 1);
		if (l->line >= a && l->line <= b && strlen(base_name(l->file)) == n && !strncmp(eq + 1, base_name(l->file), n))
			return (char)('a' + s % 26);
	}
	return ' ';
}

static void pregions_row(struct pregions *r, struct tui *t, struct cellgrid *g, int x, int y, int w, int i,
			 struct rgb bg)
{
	const struct ptx_srcline *l = &r->lines.v[i];
	char cls[64], line[600];
	class_list(l->classes, cls, sizeof cls);
	const char *src = pregions_text(r, l->file, l->line);
	while (src && (*src == ' ' || *src == '\t'))
		src++;
	int mark = r->mark >= 0 && ((i >= r->mark && i <= r->sel) || (i <= r->mark && i >= r->sel));
	snprintf(line, sizeof line, "%c%c %s:%-5d %3d insn  %-12s %-4s %s", row_mark(r, i), mark ? '>' : ' ',
		 base_name(l->file), l->line, l->insns, cls, l->in_loop ? "loop" : "", src ? src : "");
	int sel = i == r->sel;
	struct rgb lbg = sel ? tui_sel_bg(t) : bg;
	draw_fill(g, x, y, w, 1, lbg);
	draw_text(t, g, x + 1, y, w - 2, line, draw_c(t, THEME_FG), lbg, sel && t->mono ? CELL_REVERSE : 0);
}

void pregions_draw(struct pregions *r, struct tui *t, struct cellgrid *g, int x, int y, int w, int h)
{
	pregions_load(r, t);
	struct rgb bg = rgb_mix(t->theme.c[THEME_BG], t->theme.c[THEME_FG], 0.10);
	int rows = h - 4;
	if (!r->loaded || r->error) {
		const char *msg = r->error ? r->error
				  : r->asked ? "asking the program for the kernel's PTX (it answers at its next poll)..."
					     : "the trace has no PTX of this kernel, and only a running program can be asked for it";
		draw_text(t, g, x + 1, y, w - 2, msg, draw_c(t, r->error ? THEME_WARN : THEME_DIM), bg, 0);
	} else {
		draw_text(t, g, x + 1, y, w - 2, "   LINE            CODE   CLASSES      LOOP SOURCE", draw_c(t, THEME_DIM), bg, 0);
	}
	int top = layout_scroll(0, r->sel, rows > 1 ? rows - 1 : 1, r->lines.n);
	for (int i = 0; i < rows - 1 && top + i < r->lines.n; i++)
		pregions_row(r, t, g, x, y + 1 + i, w, top + i, bg);
	char list[PROBE_MAX_REGIONS * 40 + 16] = "regions:";
	for (int i = 0; i < r->n_specs; i++)
		snprintf(list + strlen(list), sizeof list - strlen(list), " %c %s", 'a' + i % 26, r->specs[i]);
	if (!r->n_specs)
		snprintf(list + strlen(list), sizeof list - strlen(list), " none yet");
	draw_text(t, g, x + 1, y + h - 3, w - 2, list, draw_c(t, THEME_ACCENT), bg, 0);
	draw_text(t, g, x + 1, y + h - 2, w - 2, "Space line range  t l s w a class  o loop  Bksp undo  Enter apply  Esc back",
		  draw_c(t, THEME_DIM), bg, 0);
}
