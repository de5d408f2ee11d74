/* Live probe requests (tui.h): what the user asked for per kernel, written
 * as the whole control file (doc/control.md) on every change. A `next`
 * request that got its result is dropped from the next file: every rewrite
 * bumps the generation, and a `next` line left in would probe that kernel
 * once more per generation. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "trace/control.h"
#include "tui/tui.h"

struct tui_request *tui_request_find(struct tui *t, const char *mangled)
{
	for (int i = 0; i < t->n_reqs; i++)
		if (strcmp(t->reqs[i].name, mangled) == 0)
			return &t->reqs[i];
	return NULL;
}

static int tui_req_done(const struct tui *t, const struct tui_request *r)
{
	if (r->mode != PMODE_NEXT)
		return 0;
	for (int i = 0; i < t->td->n_kernels; i++) {
		const struct td_kernel *k = &t->td->kernels[i];
		if (k->name && !strcmp(k->name, r->name) && k->n_results > r->results_at)
			return 1;
	}
	return 0;
}

static void tui_req_remove(struct tui *t, int i)
{
	free(t->reqs[i].name);
	free(t->reqs[i].probes);
	free(t->reqs[i].label);
	memmove(&t->reqs[i], &t->reqs[i + 1], (size_t)(t->n_reqs - i - 1) * sizeof *t->reqs);
	t->n_reqs--;
}

static int tui_req_write(struct tui *t, char **cause)
{
	for (int i = t->n_reqs - 1; i >= 0; i--)
		if (tui_req_done(t, &t->reqs[i]))
			tui_req_remove(t, i);
	struct control_entry *e = calloc((size_t)(t->n_reqs ? t->n_reqs : 1), sizeof *e);
	if (!e)
		return -1;
	for (int i = 0; i < t->n_reqs; i++) {
		const struct tui_request *r = &t->reqs[i];
		e[i].name = r->name;
		e[i].probes = r->probes;
		e[i].mode = r->mode == PMODE_NEXT ? CONTROL_NEXT : r->mode == PMODE_EVERY ? CONTROL_EVERY : CONTROL_NTH;
		e[i].n = r->n;
	}
	struct strbuf sb;
	strbuf_init(&sb);
	int fr = control_format(&sb, t->control_gen + 1, e, t->n_reqs, cause);
	free(e);
	control_format_sources(&sb, (const char *const *)t->sources, t->n_sources);
	if (fr < 0) {
		strbuf_done(&sb);
		return -1;
	}
	t->control_gen++;
	char *text = strbuf_finish(&sb, NULL);
	int rc = text ? t->o.app->control(t->o.app->ctx, text, cause) : -1;
	free(text);
	return rc;
}

static const char *tui_req_ordinal(unsigned n)
{
	if (n % 100 >= 11 && n % 100 <= 13)
		return "th";
	return n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th";
}

static char *tui_req_label(const char *names, enum tui_probe_mode mode, unsigned n)
{
	char *s = NULL;
	int r = mode == PMODE_NTH ? asprintf(&s, "every %u%s: %s", n, tui_req_ordinal(n), names)
				  : asprintf(&s, "%s: %s", mode == PMODE_NEXT ? "next" : "every", names);
	return r < 0 ? NULL : s;
}

int tui_request_set(struct tui *t, const struct td_kernel *k, const char *probes, const char *label,
		    enum tui_probe_mode mode, unsigned n)
{
	if (!t->o.app || !t->o.app->control) {
		tui_msg(t, 1, "probes can be switched only while ntop runs the application (ntop PROGRAM)");
		return -1;
	}
	if (!k->name) {
		tui_msg(t, 1, "this kernel has no name yet; wait for its kernel event");
		return -1;
	}
	struct tui_request *r = tui_request_find(t, k->name);
	if (!probes) {
		if (r)
			tui_req_remove(t, (int)(r - t->reqs));
	} else {
		if (!r) {
			struct tui_request *nr = realloc(t->reqs, (size_t)(t->n_reqs + 1) * sizeof *nr);
			if (!nr)
				return -1;
			t->reqs = nr;
			r = &t->reqs[t->n_reqs++];
			memset(r, 0, sizeof *r);
			r->name = strdup(k->name);
		}
		free(r->probes);
		free(r->label);
		r->probes = strdup(probes);
		r->label = tui_req_label(label, mode, n);
		r->mode = mode;
		r->n = n;
		r->results_at = k->n_results;
		r->failed = 0;
		if (!r->name || !r->probes || !r->label) {
			tui_req_remove(t, (int)(r - t->reqs));
			return -1;
		}
	}
	char *cause = NULL;
	int rc = tui_req_write(t, &cause);
	if (rc < 0) {
		tui_msg(t, 1, "cannot write the control file: %s", cause ? cause : "?");
		if (probes && (r = tui_request_find(t, k->name)) != NULL)
			tui_req_remove(t, (int)(r - t->reqs)); /* never leave what cannot be written */
	} else if (probes) {
		tui_msg(t, 0, "requested %s on %s (control generation %llu)", label, tui_kernel_name(t, k),
			(unsigned long long)t->control_gen);
	} else {
		tui_msg(t, 0, "probes off for %s (control generation %llu)", tui_kernel_name(t, k),
			(unsigned long long)t->control_gen);
	}
	free(cause);
	ktable_mark(&t->kt);
	return rc;
}

static int tui_source_add(struct tui *t, const char *name)
{
	for (int i = 0; i < t->n_sources; i++)
		if (!strcmp(t->sources[i], name))
			return 0;
	char **v = realloc(t->sources, (size_t)(t->n_sources + 1) * sizeof *v);
	if (!v)
		return -1;
	t->sources = v;
	if (!(v[t->n_sources] = strdup(name)))
		return -1;
	t->n_sources++;
	return 1;
}

int tui_request_source(struct tui *t, const struct td_kernel *k)
{
	if (!t->o.app || !t->o.app->control || !k->name)
		return -1;
	int added = tui_source_add(t, k->name);
	if (added <= 0)
		return added;
	char *cause = NULL;
	int rc = tui_req_write(t, &cause);
	if (rc < 0) {
		tui_msg(t, 1, "cannot write the control file: %s", cause ? cause : "?");
		free(t->sources[--t->n_sources]);
	}
	free(cause);
	return rc;
}

int tui_requests_load(struct tui *t, const char *text, size_t len)
{
	struct control_file cf;
	char *cause = NULL;
	if (control_parse(text, len, &cf, NULL, NULL, &cause) < 0) {
		free(cause);
		return -1;
	}
	t->control_gen = cf.gen;
	for (int i = 0; i < cf.n; i++) {
		const struct control_entry *e = &cf.entries[i];
		struct tui_request *nr = realloc(t->reqs, (size_t)(t->n_reqs + 1) * sizeof *nr);
		if (!nr)
			break;
		t->reqs = nr;
		struct tui_request *r = &t->reqs[t->n_reqs];
		memset(r, 0, sizeof *r);
		r->mode = e->mode == CONTROL_NEXT ? PMODE_NEXT : e->mode == CONTROL_EVERY ? PMODE_EVERY : PMODE_NTH;
		r->n = (unsigned)e->n;
		r->name = strdup(e->name);
		r->probes = strdup(e->probes);
		/* the probe files' names: their paths' last components */
		const char *base = strrchr(e->probes, '/');
		r->label = tui_req_label(base ? base + 1 : e->probes, r->mode, r->n);
		if (!r->name || !r->probes || !r->label) {
			free(r->name);
			free(r->probes);
			free(r->label);
			break;
		}
		t->n_reqs++;
	}
	for (int i = 0; i < cf.n_sources; i++)
		tui_source_add(t, cf.sources[i]);
	control_file_done(&cf);
	ktable_mark(&t->kt);
	return t->n_reqs;
}
