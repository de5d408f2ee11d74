/* Event lines: "TYPE key=value ...\n" with percent-encoded values (events.h).
 * The parser copies the line once into ev->storage and decodes values in
 * place (a decoded value is never longer than its encoding), so an event costs
 * one allocation however many fields it has. */
#include "common/hexdigit.h"
#include "trace/events.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int event_is_key_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

/* Decodes %XX in place; -1 on a bad escape. */
static int event_decode(char *s)
{
	char *w = s;
	for (char *r = s; *r; r++) {
		if (*r != '%') {
			*w++ = *r;
			continue;
		}
		int hi = hex_digit((unsigned char)r[1]);
		int lo = hi < 0 ? -1 : hex_digit((unsigned char)r[2]);
		if (lo < 0)
			return -1;
		*w++ = (char)(hi * 16 + lo);
		r += 2;
	}
	*w = 0;
	return 0;
}

/* Splits one "key=value" token (NUL-terminated, inside storage). */
static int event_parse_field(char *tok, struct event *ev)
{
	char *eq = strchr(tok, '=');
	if (!eq || eq == tok || ev->n >= EVENT_MAX_FIELDS)
		return -1;
	for (char *k = tok; k < eq; k++)
		if (!event_is_key_char((unsigned char)*k))
			return -1;
	*eq = 0;
	if (event_decode(eq + 1) < 0)
		return -1;
	ev->key[ev->n] = tok;
	ev->val[ev->n] = eq + 1;
	ev->n++;
	return 0;
}

int event_parse(const char *line, size_t len, struct event *ev)
{
	memset(ev, 0, sizeof *ev);
	if (len && line[len - 1] == '\n')
		len--;
	if (len && line[len - 1] == '\r')
		len--;
	if (len == 0 || memchr(line, '\n', len) || memchr(line, 0, len))
		return -1;
	ev->storage = malloc(len + 1);
	if (!ev->storage)
		return -1;
	memcpy(ev->storage, line, len);
	ev->storage[len] = 0;

	char *p = ev->storage;
	size_t tlen = strcspn(p, " ");
	if (tlen == 0 || tlen >= sizeof ev->type)
		goto fail;
	for (size_t i = 0; i < tlen; i++)
		if (!event_is_key_char((unsigned char)p[i]))
			goto fail;
	memcpy(ev->type, p, tlen);
	ev->type[tlen] = 0;
	p += tlen;
	while (*p) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		char *tok = p;
		p += strcspn(p, " ");
		if (*p)
			*p++ = 0;
		if (event_parse_field(tok, ev) < 0)
			goto fail;
	}
	return 0;
fail:
	event_done(ev);
	return -1;
}

void event_done(struct event *ev)
{
	free(ev->storage);
	memset(ev, 0, sizeof *ev);
}

const char *event_get(const struct event *ev, const char *key)
{
	for (int i = 0; i < ev->n; i++)
		if (strcmp(ev->key[i], key) == 0)
			return ev->val[i];
	return NULL;
}

/* Parses decimal (optionally negative) or 0x hex; hex may use all 64 bits. */
static int event_parse_u64(const char *s, unsigned long long *out, int *neg)
{
	*neg = 0;
	if (!s || !*s)
		return -1;
	int base = 10;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	} else if (s[0] == '-') {
		*neg = 1;
		s++;
	}
	if (!((*s >= '0' && *s <= '9') || (base == 16 && hex_digit((unsigned char)*s) >= 0)))
		return -1;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, base);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

long long event_get_int(const struct event *ev, const char *key, long long def)
{
	const char *s = event_get(ev, key);
	unsigned long long v;
	int neg;
	if (event_parse_u64(s, &v, &neg) < 0)
		return def;
	if (neg)
		return v > (unsigned long long)LLONG_MAX + 1 ? def : (long long)(0 - v);
	int hex = s[1] == 'x' || s[1] == 'X';
	if (!hex && v > (unsigned long long)LLONG_MAX)
		return def;
	return (long long)v; /* hex above LLONG_MAX wraps: addresses keep their bits */
}

uint64_t event_get_u64(const struct event *ev, const char *key, uint64_t def)
{
	unsigned long long v;
	int neg;
	if (event_parse_u64(event_get(ev, key), &v, &neg) < 0 || neg)
		return def;
	return v;
}

void event_begin(struct strbuf *sb, const char *type, uint64_t t_ns, int pid)
{
	strbuf_puts(sb, type);
	strbuf_append(sb, " t=", 3);
	strbuf_add_u64(sb, t_ns);
	strbuf_append(sb, " pid=", 5);
	strbuf_add_i64(sb, pid);
}

static void event_key(struct strbuf *sb, const char *key)
{
	size_t n = strlen(key);
	if (strbuf_reserve(sb, n + 2) < 0)
		return;
	char *d = sb->data + sb->len;
	d[0] = ' ';
	memcpy(d + 1, key, n);
	d[n + 1] = '=';
	d[n + 2] = 0;
	sb->len += n + 2;
}

static void event_encode(struct strbuf *sb, const char *val)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *s = (const unsigned char *)val;
	while (*s) {
		size_t run = 0;
		while (s[run] > 0x20 && s[run] < 0x7f && s[run] != '%')
			run++;
		strbuf_append(sb, (const char *)s, run);
		s += run;
		if (!*s)
			break;
		char esc[3] = {'%', hex[*s >> 4], hex[*s & 15]};
		strbuf_append(sb, esc, 3);
		s++;
	}
}

void event_add(struct strbuf *sb, const char *key, const char *val)
{
	event_key(sb, key);
	event_encode(sb, val ? val : "");
}

void event_addf(struct strbuf *sb, const char *key, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = NULL;
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (!s) {
		sb->failed = 1;
		return;
	}
	event_add(sb, key, s);
	free(s);
}

void event_add_int(struct strbuf *sb, const char *key, long long v)
{
	event_key(sb, key);
	strbuf_add_i64(sb, v);
}

void event_add_hex(struct strbuf *sb, const char *key, unsigned long long v)
{
	event_key(sb, key);
	strbuf_add_hex(sb, v);
}

void event_add_dim3(struct strbuf *sb, const char *key, const unsigned v[3])
{
	event_key(sb, key);
	for (int i = 0; i < 3; i++) {
		if (i)
			strbuf_append(sb, ",", 1);
		strbuf_add_u64(sb, v[i]);
	}
}

void event_end(struct strbuf *sb)
{
	strbuf_append(sb, "\n", 1);
}
