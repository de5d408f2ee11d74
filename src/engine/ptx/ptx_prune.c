/* Pruning a module to one kernel: a breadth-first walk from the kernel over
 * symbol references (call targets, function pointers taken with mov, names in
 * address operands, names inside variable initialisers such as vtables and
 * string pointer tables), then dropping every unreached function and variable.
 * Module directives always stay. Linear in the reached text plus one pass over
 * the module. */
#include "engine/ptx/ptx_int.h"

#include "common/cause.h"

#include <stdlib.h>
#include <string.h>

struct ptx_walk {
	struct ptx_names names;
	char *mark;
	int *queue;
	int n_queue;
};

static void ptx_walk_ref(void *ctx, const char *s, size_t n)
{
	struct ptx_walk *w = ctx;
	for (int i = ptx_names_find(&w->names, s, n); i >= 0; i = w->names.next[i]) {
		if (w->mark[i])
			continue;
		w->mark[i] = 1;
		w->queue[w->n_queue++] = i;
	}
}

static void ptx_walk_item(struct ptx_walk *w, const struct ptx_top *t)
{
	if (t->kind == PTX_TOP_VAR) {
		const char *init = strchr(t->text, '=');
		if (init)
			ptx_names_scan(init, ptx_walk_ref, w);
		return;
	}
	const struct ptx_func *f = t->func;
	for (int i = 0; f && i < f->n_body; i++) {
		const struct ptx_stmt *s = &f->body[i];
		if (s->kind == PTX_INSN && s->insn.opcode) {
			for (int k = 0; k < s->insn.n_ops; k++)
				ptx_names_scan(s->insn.ops[k].text, ptx_walk_ref, w);
		} else if (s->kind == PTX_DIRECTIVE || s->kind == PTX_INSN) {
			ptx_names_scan(s->text, ptx_walk_ref, w);
		}
	}
}

int ptx_reach(struct ptx_module *m, const char *root, char *mark, ptx_load_fn load, void *ctx, char **cause)
{
	struct ptx_walk w;
	memset(&w, 0, sizeof w);
	w.mark = mark;
	memset(mark, 0, (size_t)m->n_items);
	w.queue = malloc(((size_t)m->n_items + 1) * sizeof *w.queue);
	if (!w.queue || ptx_names_init(&w.names, m) < 0) {
		free(w.queue);
		return cause_set(cause, "out of memory");
	}
	int r = 0;
	ptx_walk_ref(&w, root, strlen(root));
	int found = 0;
	for (int i = 0; i < w.n_queue; i++)
		found |= m->items[w.queue[i]].kind == PTX_TOP_FUNC;
	if (!found) {
		r = cause_set(cause, "function %s is not in the module", root);
		goto out;
	}
	for (int head = 0; head < w.n_queue; head++) {
		int i = w.queue[head];
		if (load && m->items[i].kind == PTX_TOP_FUNC && (r = load(ctx, i, cause)) < 0)
			goto out;
		ptx_walk_item(&w, &m->items[i]);
	}
out:
	ptx_names_done(&w.names);
	free(w.queue);
	return r;
}

int ptx_prune_with(struct ptx_module *m, const char *kernel, ptx_load_fn load, void *ctx, char **cause)
{
	char *mark = malloc((size_t)m->n_items + 1);
	if (!mark)
		return cause_set(cause, "out of memory");
	if (ptx_reach(m, kernel, mark, load, ctx, cause) < 0) {
		free(mark);
		return -1;
	}
	int o = 0;
	for (int i = 0; i < m->n_items; i++) {
		if (m->items[i].kind == PTX_TOP_DIRECTIVE || mark[i])
			m->items[o++] = m->items[i];
		else
			ptx_top_clear(&m->items[i]);
	}
	m->n_items = o;
	free(mark);
	return 0;
}

int ptx_prune(struct ptx_module *m, const char *kernel, char **cause)
{
	return ptx_prune_with(m, kernel, NULL, NULL, cause);
}

int ptx_used_vars(const struct ptx_module *m, const char *func, const struct ptx_top ***vars, int *n)
{
	*vars = NULL;
	*n = 0;
	char *mark = malloc((size_t)m->n_items + 1);
	if (!mark)
		return -1;
	/* read-only walk: no loader, so the module is not modified */
	if (ptx_reach((struct ptx_module *)m, func, mark, NULL, NULL, NULL) < 0) {
		free(mark);
		return -1;
	}
	int count = 0;
	for (int i = 0; i < m->n_items; i++) {
		const struct ptx_top *t = &m->items[i];
		mark[i] = mark[i] && t->kind == PTX_TOP_VAR && t->space &&
			  (!strcmp(t->space, ".global") || !strcmp(t->space, ".const"));
		count += mark[i];
	}
	const struct ptx_top **v = malloc(((size_t)count + 1) * sizeof *v);
	if (!v) {
		free(mark);
		return -1;
	}
	int k = 0;
	for (int i = 0; i < m->n_items; i++)
		if (mark[i])
			v[k++] = &m->items[i];
	free(mark);
	*vars = v;
	*n = count;
	return 0;
}

struct ptx_func *ptx_find_func(const struct ptx_module *m, const char *name)
{
	struct ptx_func *decl = NULL;
	for (int i = 0; i < m->n_items; i++) {
		const struct ptx_top *t = &m->items[i];
		if (t->kind != PTX_TOP_FUNC || strcmp(t->name, name) != 0)
			continue;
		if (!t->func->is_decl)
			return t->func;
		if (!decl)
			decl = t->func;
	}
	return decl;
}

int ptx_list_entries(const struct ptx_module *m, const char ***names, int *n)
{
	*names = malloc(((size_t)m->n_items + 1) * sizeof **names);
	*n = 0;
	if (!*names)
		return -1;
	for (int i = 0; i < m->n_items; i++) {
		const struct ptx_top *t = &m->items[i];
		if (t->kind == PTX_TOP_FUNC && t->func->is_entry && !t->func->is_decl)
			(*names)[(*n)++] = t->name;
	}
	return 0;
}
