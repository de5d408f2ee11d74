/* What the probe loaders share (probe_load.c picks one): errors that point
 * at a node, key checks with "did you mean", the hook builders, and freeing
 * a probe. The snippets themselves are checked by verify.c. */
#include "engine/probe/probe_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"
#include "common/strbuf.h"

static int probe_verr(const struct probe_src *src, int line, int col, const char *fmt, va_list ap)
{
	char msg[512];
	vsnprintf(msg, sizeof msg, fmt, ap);
	return cause_set(src->cause, "%s:%d:%d: %s", src->path, line, col, msg);
}

int probe_err(const struct probe_src *src, const struct toml_node *n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	probe_verr(src, n->line, n->col, fmt, ap);
	va_end(ap);
	return -1;
}

int probe_err_key(const struct probe_src *src, const struct toml_node *n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (n->key)
		probe_verr(src, n->key_line, n->key_col, fmt, ap);
	else
		probe_verr(src, n->line, n->col, fmt, ap);
	va_end(ap);
	return -1;
}

/* Levenshtein distance, capped: only small distances matter for hints. */
static int edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	int row[PROBE_NAME_MAX + 1];
	if (la > PROBE_NAME_MAX || lb > PROBE_NAME_MAX)
		return 99;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		int diag = row[0];
		row[0] = (int)i;
		for (size_t j = 1; j <= lb; j++) {
			int up = row[j];
			int best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

int probe_check_key(const struct probe_src *src, const struct toml_node *n, const char *const *known,
		    const char *where)
{
	const char *near = NULL;
	for (const char *const *k = known; *k; k++) {
		if (strcmp(n->key, *k) == 0)
			return 0;
		if (!near && edit_distance(n->key, *k) <= 2)
			near = *k;
	}
	if (near)
		return probe_err_key(src, n, "unknown key '%s' in %s (did you mean '%s'?)", n->key, where, near);
	struct strbuf sb;
	strbuf_init(&sb);
	for (const char *const *k = known; *k; k++)
		strbuf_printf(&sb, "%s%s", k == known ? "" : ", ", *k);
	char *list = strbuf_finish(&sb, NULL);
	probe_err_key(src, n, "unknown key '%s' in %s (known keys: %s)", n->key, where, list ? list : "?");
	free(list);
	return -1;
}

int probe_check_keys(const struct probe_src *src, const struct toml_node *t, const char *const *known,
		     const char *where)
{
	for (int i = 0; i < t->n_items; i++)
		if (probe_check_key(src, t->items[i], known, where) < 0)
			return -1;
	return 0;
}

int probe_get_string(const struct probe_src *src, const struct toml_node *t, const char *key, int required,
		     const struct toml_node **out)
{
	const struct toml_node *n = toml_get(t, key);
	*out = NULL;
	if (!n) {
		if (required)
			return probe_err(src, t, "missing key '%s'", key);
		return 0;
	}
	if (n->type != TOML_STRING)
		return probe_err(src, n, "'%s' must be a string, not a%s %s", key,
				 n->type == TOML_ARRAY || n->type == TOML_INT ? "n" : "", toml_type_name(n->type));
	*out = n;
	return 0;
}

int probe_is_ident(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n >= PROBE_NAME_MAX || (s[0] >= '0' && s[0] <= '9'))
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
			return 0;
	}
	return 1;
}

int probe_is_opcode(const char *s, size_t len, int allow_colons)
{
	size_t part = 0; /* characters in the current dotted part */
	if (len == 0 || len >= 128)
		return 0;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_') {
			part++;
		} else if (c == '.') {
			if (part == 0)
				return 0;
			part = 0;
		} else if (c == ':' && allow_colons && i + 1 < len && s[i + 1] == ':' && part > 0) {
			i++;
			part = 0;
			if (i + 1 >= len || s[i + 1] == '.' || s[i + 1] == ':')
				return 0;
		} else {
			return 0;
		}
	}
	return part > 0;
}

int probe_set_string(const struct probe_src *src, char **dst, const char *s, const struct toml_node *at)
{
	char *copy = strdup(s);
	if (!copy)
		return probe_err(src, at, "out of memory");
	free(*dst);
	*dst = copy;
	return 0;
}

struct probe_hook *probe_add_hook_text(const struct probe_src *src, struct probe *p, const char *name,
				       enum probe_tp_kind kind, int after, const char *text, int line, int flat,
				       const struct toml_node *at)
{
	if (p->n_hooks >= PROBE_MAX_HOOKS) {
		probe_err(src, at, "too many hooks (at most %d per probe)", PROBE_MAX_HOOKS);
		return NULL;
	}
	struct probe_hook *hooks = realloc(p->hooks, (size_t)(p->n_hooks + 1) * sizeof *hooks);
	if (!hooks) {
		probe_err(src, at, "out of memory");
		return NULL;
	}
	p->hooks = hooks;
	struct probe_hook *h = &hooks[p->n_hooks];
	memset(h, 0, sizeof *h);
	snprintf(h->name, sizeof h->name, "%s", name);
	h->kind = kind;
	h->after = after;
	h->snippet = strdup(text);
	if (!h->snippet) {
		probe_err(src, at, "out of memory");
		return NULL;
	}
	h->snippet_line = line;
	h->snippet_flat = flat;
	p->n_hooks++;
	return h;
}

struct probe_hook *probe_add_hook(const struct probe_src *src, struct probe *p, const char *name,
				  enum probe_tp_kind kind, int after, const struct toml_node *snippet)
{
	int flat = snippet->str_kind == TOML_STR_BASIC || snippet->str_kind == TOML_STR_LITERAL;
	struct probe_hook *h = probe_add_hook_text(src, p, name, kind, after, snippet->v.s, snippet->str_line, flat,
						   snippet);
	if (!h || !snippet->str_pos)
		return h;
	/* where each byte was written, so the verifier can say LINE:COL */
	size_t n = strlen(snippet->v.s) + 1;
	h->snippet_pos = malloc(n * sizeof *h->snippet_pos);
	if (!h->snippet_pos) {
		probe_err(src, snippet, "out of memory");
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		h->snippet_pos[i].line = snippet->str_pos[i].line;
		h->snippet_pos[i].col = snippet->str_pos[i].col;
	}
	h->snippet_pos_of = h->snippet;
	return h;
}

int probe_note(const struct probe_src *src, struct probe *p, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	struct strbuf sb;
	strbuf_init(&sb);
	if (p->notes)
		strbuf_puts(&sb, p->notes);
	strbuf_printf(&sb, "%s\n", line);
	char *notes = strbuf_finish(&sb, NULL);
	if (!notes)
		return cause_set(src->cause, "%s: out of memory", src->path);
	free(p->notes);
	p->notes = notes;
	return 0;
}

int probe_hook_add_opcode(const struct probe_src *src, struct probe_hook *h, const struct toml_node *at,
			  const char *op, size_t len)
{
	if (h->n_opcodes >= PROBE_MAX_OPCODES)
		return probe_err(src, at, "too many opcodes (at most %d per hook)", PROBE_MAX_OPCODES);
	char **ops = realloc(h->opcodes, (size_t)(h->n_opcodes + 1) * sizeof *ops);
	if (!ops)
		return probe_err(src, at, "out of memory");
	h->opcodes = ops;
	ops[h->n_opcodes] = strndup(op, len);
	if (!ops[h->n_opcodes])
		return probe_err(src, at, "out of memory");
	h->n_opcodes++;
	return 0;
}

void probe_free(struct probe *p)
{
	if (!p)
		return;
	for (int i = 0; i < p->n_hooks; i++) {
		for (int j = 0; j < p->hooks[i].n_opcodes; j++)
			free(p->hooks[i].opcodes[j]);
		free(p->hooks[i].opcodes);
		free(p->hooks[i].snippet);
		free(p->hooks[i].snippet_pos);
	}
	free(p->hooks);
	free(p->regions);
	free(p->path);
	free(p->description);
	free(p->analysis);
	free(p->decls);
	free(p->notes);
	free(p);
}

const char *probe_level_name(enum probe_level level)
{
	return level == PROBE_LEVEL_BLOCK ? "block" : level == PROBE_LEVEL_WARP ? "warp" : "thread";
}
