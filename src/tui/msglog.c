/* Ring of log lines (msglog.h). */
#include "tui/msglog.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MSGLOG_LINE_MAX 1000

struct msglog *msglog_create(int cap)
{
	struct msglog *l = calloc(1, sizeof *l);
	if (!l || cap <= 0 || !(l->ring = calloc((size_t)cap, sizeof *l->ring))) {
		free(l);
		return NULL;
	}
	l->cap = cap;
	return l;
}

void msglog_free(struct msglog *l)
{
	if (!l)
		return;
	for (int i = 0; i < l->n; i++)
		free(l->ring[(l->head + i) % l->cap].text);
	free(l->ring);
	free(l);
}

void msglog_add(struct msglog *l, enum msg_kind kind, uint64_t t_ns, const char *text)
{
	if (!l)
		return;
	size_t n = strlen(text);
	if (n > MSGLOG_LINE_MAX)
		n = MSGLOG_LINE_MAX;
	char *s = malloc(n + 1);
	if (!s)
		return;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)text[i];
		s[i] = c == '\t' ? ' ' : (c < 0x20 || c == 0x7f) ? '?' : (char)c;
	}
	s[n] = 0;
	struct msg *m;
	if (l->n < l->cap) {
		m = &l->ring[(l->head + l->n) % l->cap];
		l->n++;
	} else {
		m = &l->ring[l->head];
		free(m->text);
		l->head = (l->head + 1) % l->cap;
	}
	m->kind = kind;
	m->t_ns = t_ns;
	m->text = s;
	l->total++;
	if (kind == MSG_WARN || kind == MSG_ERROR)
		l->warnings++;
}

void msglog_addf(struct msglog *l, enum msg_kind kind, const char *fmt, ...)
{
	char buf[MSGLOG_LINE_MAX + 1];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	msglog_add(l, kind, 0, buf);
}

const struct msg *msglog_get(const struct msglog *l, int i)
{
	if (!l || i < 0 || i >= l->n)
		return NULL;
	return &l->ring[(l->head + i) % l->cap];
}
