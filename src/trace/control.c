/* Control file parsing and formatting (control.h, doc/control.md). The
 * reader is strict about what it acts on (absolute paths, a known mode, n for
 * nth) and lenient about the rest (unknown types and keys), so a newer writer
 * can add fields. */
#include "trace/control.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"
#include "trace/events.h"

static const char *const control_modes[] = { "next", "every", "nth" };

const char *control_mode_name(enum control_mode m)
{
	return (unsigned)m < sizeof control_modes / sizeof control_modes[0] ? control_modes[m] : "?";
}

int control_mode_parse(const char *s, enum control_mode *m)
{
	for (size_t i = 0; s && i < sizeof control_modes / sizeof control_modes[0]; i++)
		if (strcmp(s, control_modes[i]) == 0) {
			*m = (enum control_mode)i;
			return 0;
		}
	return -1;
}

/* Every path absolute and non-empty: the hook runs in the app's cwd, which
 * is not the launcher's. */
static const char *control_check_probes(const char *probes)
{
	if (!probes || !*probes)
		return "no probes";
	for (const char *p = probes; *p;) {
		size_t n = strcspn(p, ",");
		if (n == 0)
			return "empty probe path";
		if (*p != '/')
			return "probe paths must be absolute";
		p += n;
		if (*p == ',' && !*++p)
			return "empty probe path";
	}
	return NULL;
}

/* Fills e from a `probe` line; returns why it is malformed, or NULL. */
static const char *control_entry_from(const struct event *ev, struct control_entry *e)
{
	const char *name = event_get(ev, "name"), *probes = event_get(ev, "probes");
	const char *mode = event_get(ev, "mode"), *why;
	if (!name || !*name)
		return "no kernel name";
	if ((why = control_check_probes(probes)) != NULL)
		return why;
	if (control_mode_parse(mode ? mode : "every", &e->mode) < 0)
		return "unknown mode";
	e->n = 1;
	if (e->mode == CONTROL_NTH && (e->n = event_get_u64(ev, "n", 0)) == 0)
		return "mode nth needs n >= 1";
	e->limit = 0;
	if (event_get(ev, "limit") && (e->limit = event_get_u64(ev, "limit", 0)) == 0)
		return "limit must be a positive integer";
	e->name = strdup(name);
	e->probes = strdup(probes);
	if (!e->name || !e->probes) {
		free(e->name);
		free(e->probes);
		return "out of memory";
	}
	return NULL;
}

static int control_add(struct control_file *f, const struct control_entry *e)
{
	for (int i = 0; i < f->n; i++)
		if (strcmp(f->entries[i].name, e->name) == 0) {
			free(f->entries[i].name);
			free(f->entries[i].probes);
			f->entries[i] = *e;
			return 0;
		}
	struct control_entry *v = realloc(f->entries, (size_t)(f->n + 1) * sizeof *v);
	if (!v)
		return -1;
	f->entries = v;
	f->entries[f->n++] = *e;
	return 0;
}

/* A `source` line: a kernel whose PTX the hook saves (once per process). */
static int control_add_source(struct control_file *f, const char *name, const char **why)
{
	if (!name || !*name) {
		*why = "source line without a kernel name";
		return -1;
	}
	for (int i = 0; i < f->n_sources; i++)
		if (strcmp(f->sources[i], name) == 0)
			return 0;
	char **v = realloc(f->sources, (size_t)(f->n_sources + 1) * sizeof *v);
	if (v)
		f->sources = v;
	if (!v || !(f->sources[f->n_sources] = strdup(name))) {
		*why = "out of memory";
		return -1;
	}
	f->n_sources++;
	return 0;
}

/* One line: 1 header, 0 entry or ignored, -1 malformed (why set). */
static int control_line(const char *line, size_t len, struct control_file *f, int *seen_header, const char **why)
{
	struct event ev;
	if (event_parse(line, len, &ev) < 0) {
		*why = "not an event line";
		return -1;
	}
	int rc = 0;
	if (strcmp(ev.type, "control") == 0) {
		uint64_t gen = event_get_u64(&ev, "gen", 0);
		long long version = event_get_int(&ev, "version", CONTROL_VERSION);
		if (gen == 0)
			*why = "control line without gen >= 1", rc = -1;
		else if (version != CONTROL_VERSION)
			*why = "unknown control version", rc = -1;
		else if (*seen_header)
			*why = "second control line", rc = -1;
		else
			f->gen = gen, *seen_header = 1, rc = 1;
	} else if (strcmp(ev.type, "source") == 0) {
		rc = control_add_source(f, event_get(&ev, "name"), why);
	} else if (strcmp(ev.type, "probe") == 0) {
		struct control_entry e;
		memset(&e, 0, sizeof e);
		if ((*why = control_entry_from(&ev, &e)) != NULL)
			rc = -1;
		else if (control_add(f, &e) < 0) {
			free(e.name);
			free(e.probes);
			*why = "out of memory", rc = -1;
		}
	}
	event_done(&ev);
	return rc;
}

int control_parse(const char *text, size_t len, struct control_file *out, control_bad_fn bad, void *arg,
		  char **cause)
{
	memset(out, 0, sizeof *out);
	int seen_header = 0;
	for (size_t a = 0; a < len;) {
		const char *nl = memchr(text + a, '\n', len - a);
		size_t end = nl ? (size_t)(nl - text) : len;
		const char *line = text + a;
		size_t n = end - a;
		a = end + 1;
		if (n && line[n - 1] == '\r')
			n--;
		size_t lead = 0;
		while (lead < n && (line[lead] == ' ' || line[lead] == '\t'))
			lead++;
		if (lead == n || line[lead] == '#')
			continue;
		const char *why = NULL;
		if (control_line(line, n, out, &seen_header, &why) < 0 && bad)
			bad(arg, line, n, why);
	}
	if (!seen_header) {
		control_file_done(out);
		return cause_set(cause, "no valid `control version=%d gen=N` line", CONTROL_VERSION);
	}
	return 0;
}

void control_file_done(struct control_file *f)
{
	for (int i = 0; i < f->n; i++) {
		free(f->entries[i].name);
		free(f->entries[i].probes);
	}
	free(f->entries);
	for (int i = 0; i < f->n_sources; i++)
		free(f->sources[i]);
	free(f->sources);
	memset(f, 0, sizeof *f);
}

char *control_join_probes(const char *const *paths, int n, char **cause)
{
	struct strbuf sb;
	strbuf_init(&sb);
	for (int i = 0; i < n; i++) {
		if (!paths[i] || paths[i][0] != '/' || strchr(paths[i], ',')) {
			cause_set(cause, "probe path '%s' must be absolute and free of ','", paths[i] ? paths[i] : "");
			strbuf_done(&sb);
			return NULL;
		}
		strbuf_printf(&sb, "%s%s", i ? "," : "", paths[i]);
	}
	if (n == 0)
		cause_set(cause, "no probes");
	char *s = n ? strbuf_finish(&sb, NULL) : NULL;
	if (n == 0)
		strbuf_done(&sb);
	else if (!s)
		cause_set(cause, "out of memory");
	return s;
}

int control_format(struct strbuf *sb, uint64_t gen, const struct control_entry *e, int n, char **cause)
{
	if (gen == 0)
		return cause_set(cause, "control generation must be >= 1");
	for (int i = 0; i < n; i++) {
		const char *why = !e[i].name || !*e[i].name ? "no kernel name" : control_check_probes(e[i].probes);
		if (!why && e[i].mode == CONTROL_NTH && e[i].n == 0)
			why = "mode nth needs n >= 1";
		if (!why && (unsigned)e[i].mode > CONTROL_NTH)
			why = "unknown mode";
		if (why)
			return cause_set(cause, "control entry %d (%s): %s", i, e[i].name ? e[i].name : "?", why);
	}
	strbuf_printf(sb, "control version=%d gen=%llu\n", CONTROL_VERSION, (unsigned long long)gen);
	for (int i = 0; i < n; i++) {
		strbuf_puts(sb, "probe");
		event_add(sb, "name", e[i].name);
		event_add(sb, "probes", e[i].probes);
		event_add(sb, "mode", control_mode_name(e[i].mode));
		if (e[i].mode == CONTROL_NTH)
			event_add_int(sb, "n", (long long)e[i].n);
		if (e[i].limit)
			event_add_int(sb, "limit", (long long)e[i].limit);
		event_end(sb);
	}
	return sb->failed ? cause_set(cause, "out of memory") : 0;
}

void control_format_sources(struct strbuf *sb, const char *const *names, int n)
{
	for (int i = 0; i < n; i++) {
		strbuf_puts(sb, "source");
		event_add(sb, "name", names[i]);
		event_end(sb);
	}
}
