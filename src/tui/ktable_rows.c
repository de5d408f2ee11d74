/* The kernel list's rows (ktable.h): kernels filtered, grouped by name
 * across processes (the k-th kernel of a name in each process is one
 * group: ranks load the same modules in the same order), groups sorted by
 * their sums, and the members of expanded groups under them. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/ktable.h"

struct kkey {
	const char *name; /* mangled, "" when unknown (then the kernel stays alone) */
	int occ;          /* the k-th kernel of this name in its process */
	int idx;          /* td->kernels */
	uint32_t pid;
};

struct kgroup {
	double num;       /* sort key */
	const char *str;
	int first, n;     /* in kt->members */
	int rep;          /* td->kernels */
};

/* By name, process, model order: a process's kernels of one name in a run. */
static int kkey_pid_cmp(const void *a, const void *b)
{
	const struct kkey *x = a, *y = b;
	int r = strcmp(x->name, y->name);
	if (r)
		return r;
	return x->pid != y->pid ? (x->pid < y->pid ? -1 : 1) : x->idx - y->idx;
}

static int kkey_cmp(const void *a, const void *b)
{
	const struct kkey *x = a, *y = b;
	int r = strcmp(x->name, y->name);
	if (r)
		return r;
	return x->occ != y->occ ? x->occ - y->occ : x->idx - y->idx;
}

static int kgroup_cmp(const void *a, const void *b, void *arg)
{
	const struct kgroup *x = a, *y = b;
	int rev = *(const int *)arg, r;
	if (x->str || y->str)
		r = strcmp(x->str ? x->str : "", y->str ? y->str : "");
	else
		r = x->num < y->num ? 1 : x->num > y->num ? -1 : 0; /* larger first */
	if (rev)
		r = -r;
	return r ? r : x->rep - y->rep; /* stable: model order */
}

static int ktable_alive(const struct trace_dir *td, const struct td_kernel *k)
{
	const struct td_process *p = trace_dir_process(td, k->pid);
	return !p || !p->exited;
}

/* Kernels that pass the filter, each with its (name, occurrence) key. */
static int ktable_keys(const struct ktable *kt, const struct trace_dir *td, struct kkey *keys)
{
	int n = 0;
	for (int i = 0; i < td->n_kernels; i++) {
		const struct td_kernel *k = &td->kernels[i];
		if (!ktable_match(k, kt->filter) || (kt->hide_exited && !ktable_alive(td, k)))
			continue;
		keys[n] = (struct kkey){k->name && !kt->single ? k->name : "", 0, i, k->pid};
		n++;
	}
	qsort(keys, (size_t)n, sizeof *keys, kkey_pid_cmp);
	for (int i = 1; i < n; i++)
		if (keys[i].name[0] && keys[i].pid == keys[i - 1].pid && !strcmp(keys[i].name, keys[i - 1].name))
			keys[i].occ = keys[i - 1].occ + 1;
	return n;
}

/* The sum a group sorts by: launches, times, results add up. */
static double kgroup_num(const struct ktable_ctx *c, const struct ktable *kt, const struct kgroup *g)
{
	if (g->n == 1)
		return ktable_num(c, &c->td->kernels[g->rep], kt->sort);
	double sum = 0, timed = 0, total = 0;
	for (int i = 0; i < g->n; i++) {
		const struct td_kernel *k = &c->td->kernels[kt->members[g->first + i]];
		if (kt->sort == KC_MEAN) {
			timed += (double)k->timed;
			total += (double)k->total_ns;
		} else if (kt->sort == KC_PID) {
			sum = g->n;
		} else {
			sum += ktable_num(c, k, kt->sort);
		}
	}
	if (kt->sort == KC_MEAN)
		return timed ? total / timed : ktable_num(c, &c->td->kernels[g->rep], KC_MEAN);
	if (kt->sort == KC_GRID || kt->sort == KC_BLOCK || kt->sort == KC_PTX || kt->sort == KC_GPU)
		return ktable_num(c, &c->td->kernels[g->rep], kt->sort);
	return sum;
}

/* A member of a running process with the most launches stands for the group. */
static int kgroup_rep(const struct trace_dir *td, const int *m, int n)
{
	int best = m[0];
	for (int i = 1; i < n; i++) {
		const struct td_kernel *a = &td->kernels[m[i]], *b = &td->kernels[best];
		int aa = ktable_alive(td, a), ba = ktable_alive(td, b);
		if (aa > ba || (aa == ba && a->launches > b->launches))
			best = m[i];
	}
	return best;
}

static int ktable_is_expanded(const struct ktable *kt, const char *name)
{
	for (int i = 0; name && i < kt->n_expanded; i++)
		if (!strcmp(kt->expanded[i], name))
			return 1;
	return 0;
}

/* Groups from the sorted keys; members in kt->members. */
static int ktable_groups(struct ktable *kt, const struct ktable_ctx *c, struct kkey *keys, int n, struct kgroup *g)
{
	qsort(keys, (size_t)n, sizeof *keys, kkey_cmp);
	int ng = 0;
	for (int i = 0; i < n;) {
		int j = i + 1;
		while (keys[i].name[0] && j < n && !strcmp(keys[j].name, keys[i].name) && keys[j].occ == keys[i].occ)
			j++;
		g[ng] = (struct kgroup){0, NULL, i, j - i, 0};
		for (int k = i; k < j; k++)
			kt->members[k] = keys[k].idx;
		g[ng].rep = kgroup_rep(c->td, kt->members + i, j - i);
		if (kt->sort == KC_NAME)
			g[ng].str = ktable_name(c, &c->td->kernels[g[ng].rep]);
		else
			g[ng].num = kgroup_num(c, kt, &g[ng]);
		ng++;
		i = j;
	}
	return ng;
}

static int ktable_grow(struct ktable *kt, int n)
{
	if (n <= kt->cap)
		return 0;
	struct krow *nr = realloc(kt->rows, (size_t)n * sizeof *nr);
	if (!nr)
		return -1;
	kt->rows = nr;
	int *nm = realloc(kt->members, (size_t)n * sizeof *nm);
	if (!nm)
		return -1;
	kt->members = nm;
	kt->cap = n;
	return 0;
}

void ktable_update(struct ktable *kt, const struct ktable_ctx *c)
{
	if (!kt->dirty)
		return;
	const struct trace_dir *td = c->td;
	/* a group row and its members: at most twice the kernels */
	int room = 2 * (td->n_kernels ? td->n_kernels : 1);
	struct kkey *keys = malloc((size_t)room / 2 * sizeof *keys);
	struct kgroup *g = malloc((size_t)room / 2 * sizeof *g);
	if (!keys || !g || ktable_grow(kt, room) < 0) {
		free(keys);
		free(g);
		return;
	}
	int n = ktable_keys(kt, td, keys), ng = ktable_groups(kt, c, keys, n, g);
	kt->matched = n;
	kt->n_members = n;
	int rev = kt->reverse;
	qsort_r(g, (size_t)ng, sizeof *g, kgroup_cmp, &rev);
	int r = 0;
	for (int i = 0; i < ng; i++) {
		kt->rows[r++] = (struct krow){g[i].rep, g[i].first, g[i].n, 0};
		if (g[i].n > 1 && ktable_is_expanded(kt, td->kernels[g[i].rep].name))
			for (int m = 0; m < g[i].n; m++)
				kt->rows[r++] = (struct krow){kt->members[g[i].first + m], g[i].first + m, 1, 1};
	}
	kt->n = r;
	free(keys);
	free(g);
	kt->dirty = 0;
}

int ktable_find(const struct ktable *kt, const struct trace_dir *td, unsigned pid, unsigned kid, int want_group)
{
	int group = -1;
	for (int i = 0; i < kt->n; i++) {
		const struct krow *r = &kt->rows[i];
		const struct td_kernel *k = &td->kernels[r->k];
		int is_group = !r->child && r->n > 1;
		if (k->pid == pid && k->kid == kid && (!is_group || want_group) && !(r->child && want_group))
			return i; /* a kernel's own row (a member's, unless its group is wanted) */
		for (int m = 0; group < 0 && is_group && m < r->n; m++) {
			const struct td_kernel *x = &td->kernels[kt->members[r->first + m]];
			if (x->pid == pid && x->kid == kid)
				group = i;
		}
	}
	return group;
}

int ktable_toggle(struct ktable *kt, const struct trace_dir *td, const struct krow *r)
{
	const char *name = td->kernels[r->k].name;
	if (r->child || r->n < 2 || !name)
		return 0;
	for (int i = 0; i < kt->n_expanded; i++)
		if (!strcmp(kt->expanded[i], name)) {
			free(kt->expanded[i]);
			kt->expanded[i] = kt->expanded[--kt->n_expanded];
			kt->dirty = 1;
			return 1;
		}
	char **ne = realloc(kt->expanded, (size_t)(kt->n_expanded + 1) * sizeof *ne);
	if (!ne || !(ne[kt->n_expanded] = strdup(name))) {
		kt->expanded = ne ? ne : kt->expanded;
		return 0;
	}
	kt->expanded = ne;
	kt->n_expanded++;
	kt->dirty = 1;
	return 1;
}

/* ---- a group's cells ---- */

static void krow_sums(const struct ktable_ctx *c, const struct ktable *kt, const struct krow *r, struct td_kernel *s,
		      int *traces, int *alive)
{
	*s = c->td->kernels[r->k];
	s->launches = s->timed = s->total_ns = s->declined = s->deferred = 0;
	s->devs = 0;
	*traces = *alive = 0;
	for (int m = 0; m < r->n; m++) {
		const struct td_kernel *k = &c->td->kernels[kt->members[r->first + m]];
		s->launches += k->launches;
		s->timed += k->timed;
		s->total_ns += k->total_ns;
		s->declined += k->declined;
		s->deferred += k->deferred;
		s->devs |= k->devs;
		*traces += ktable_traces(c->td, k);
		*alive += ktable_alive(c->td, k);
	}
}

void ktable_row_cell(const struct ktable_ctx *c, const struct ktable *kt, const struct krow *r, enum kcol col,
		     char *buf, size_t len, int *role)
{
	const struct td_kernel *k = &c->td->kernels[r->k];
	if (r->n == 1) {
		ktable_cell(c, k, col, buf, len, role);
		int alive = ktable_alive(c->td, k);
		if (col == KC_PID && !alive) /* exited: (pid) */
			snprintf(buf, len, "(%u)", td_os_pid(k->pid));
		if (col == KC_NAME && r->child) {
			char name[1024];
			snprintf(name, sizeof name, "%s", buf);
			snprintf(buf, len, "  %s", name);
		}
		if (!alive && (col == KC_PID || col == KC_NAME))
			*role = THEME_DIM;
		return;
	}
	struct td_kernel s;
	int traces, alive;
	krow_sums(c, kt, r, &s, &traces, &alive);
	switch (col) {
	case KC_PID:
		snprintf(buf, len, "%d proc", r->n);
		*role = alive ? THEME_FG : THEME_DIM;
		return;
	case KC_TRACES:
		snprintf(buf, len, "%d", traces);
		*role = traces ? THEME_FG : THEME_DIM;
		return;
	case KC_PROBE: /* the request is by name: the representative's says it */
		ktable_probe_state(c, k, buf, len, role);
		if (traces && *role != THEME_SELECTION && *role != THEME_ERROR)
			snprintf(buf, len, "probed %d", traces);
		return;
	case KC_NAME: {
		const char *mark = ktable_is_expanded(kt, k->name) ? (c->utf8 ? "\xe2\x96\xbe " : "- ")
								   : (c->utf8 ? "\xe2\x96\xb8 " : "+ ");
		snprintf(buf, len, "%s%s", mark, ktable_name(c, k));
		return;
	}
	default:
		ktable_cell(c, &s, col, buf, len, role);
	}
}
