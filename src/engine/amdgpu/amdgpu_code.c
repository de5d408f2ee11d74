/* Lines of inserted AMDGPU code (see amdgpu_code.h). */
#include "engine/amdgpu/amdgpu_code.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"

static void code_push(struct amdgpu_code *c, char *s, int origin)
{
	if (!s) {
		c->oom = 1;
		return;
	}
	if (c->n == c->cap) {
		int cap = c->cap ? c->cap * 2 : 16;
		char **v = realloc(c->line, (size_t)cap * sizeof *v);
		int *o = v ? realloc(c->origin, (size_t)cap * sizeof *o) : NULL;
		if (v)
			c->line = v;
		if (!o) {
			free(s);
			c->oom = 1;
			return;
		}
		c->origin = o;
		c->cap = cap;
	}
	c->origin[c->n] = origin;
	c->line[c->n++] = s;
}

void amdgpu_code_add(struct amdgpu_code *c, const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	code_push(c, s, c->cur);
}

void amdgpu_code_cat(struct amdgpu_code *c, const struct amdgpu_code *src)
{
	for (int i = 0; i < src->n; i++)
		code_push(c, strdup(src->line[i]), src->origin[i]);
	c->oom |= src->oom;
}

char *amdgpu_code_text(const struct amdgpu_code *c)
{
	if (c->oom || c->n == 0)
		return NULL;
	struct strbuf sb;
	strbuf_init(&sb);
	for (int i = 0; i < c->n; i++)
		strbuf_printf(&sb, "%s\t%s", i ? "\n" : "", c->line[i]);
	return strbuf_finish(&sb, NULL);
}

void amdgpu_code_done(struct amdgpu_code *c)
{
	for (int i = 0; i < c->n; i++)
		free(c->line[i]);
	free(c->line);
	free(c->origin);
	memset(c, 0, sizeof *c);
}

int amdgpu_code_reg(const char *op, struct amdgpu_reg *r)
{
	static const struct {
		const char *name;
		char file;
		int count;
	} named[] = { { "exec", 'e', 2 }, { "exec_lo", 'e', 1 }, { "exec_hi", 'e', 1 }, { "vcc", 'c', 2 },
		      { "vcc_lo", 'c', 1 }, { "vcc_hi", 'c', 1 }, { "m0", 'm', 1 } };
	for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
		if (!strcmp(op, named[i].name)) {
			r->file = named[i].file;
			r->first = strcmp(op, "exec_hi") && strcmp(op, "vcc_hi") ? 0 : 1;
			r->count = named[i].count;
			return 0;
		}
	const char *p = op;
	r->file = *p;
	if (!strncmp(op, "ttmp", 4)) {
		r->file = 't';
		p = op + 3;
	}
	if (r->file != 's' && r->file != 'v' && r->file != 'a' && r->file != 't')
		return -1;
	char *end;
	if (p[1] == '[') {
		long lo = strtol(p + 2, &end, 10);
		long hi = *end == ':' ? strtol(end + 1, &end, 10) : -1;
		if (*end != ']' || end[1] || hi < lo || lo < 0)
			return -1;
		r->first = (int)lo;
		r->count = (int)(hi - lo + 1);
		return 0;
	}
	long v = strtol(p + 1, &end, 10);
	if (end == p + 1 || *end || v < 0)
		return -1;
	r->first = (int)v;
	r->count = 1;
	return 0;
}

int amdgpu_code_split(const char *line, char *buf, unsigned len, char **mnemonic, char **ops, int max)
{
	snprintf(buf, len, "%s", line);
	char *p = buf + strspn(buf, " \t");
	*mnemonic = p;
	p += strcspn(p, " ");
	if (!*p)
		return 0;
	*p++ = 0;
	int n = 0, depth = 0;
	char *start = p;
	for (;; p++) {
		depth += *p == '[' || *p == '(';
		depth -= *p == ']' || *p == ')';
		int end = !*p;
		if ((*p == ',' && depth == 0) || end || (*p == ' ' && depth == 0 && p > start && p[-1] != ',')) {
			*p = 0;
			while (*start == ' ')
				start++;
			if (n < max && *start)
				ops[n++] = start;
			if (end)
				break;
			start = p + 1;
		}
	}
	return n;
}
