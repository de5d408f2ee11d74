#include "common/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void strbuf_init(struct strbuf *sb)
{
	memset(sb, 0, sizeof *sb);
}

int strbuf_grow(struct strbuf *sb, size_t extra)
{
	if (sb->failed)
		return -1;
	if (sb->len + extra + 1 <= sb->cap)
		return 0;
	size_t cap = sb->cap ? sb->cap : 256;
	while (cap < sb->len + extra + 1)
		cap *= 2;
	char *d = realloc(sb->data, cap);
	if (!d) {
		sb->failed = 1;
		return -1;
	}
	sb->data = d;
	sb->cap = cap;
	return 0;
}

void strbuf_puts(struct strbuf *sb, const char *s)
{
	strbuf_append(sb, s, strlen(s));
}

void strbuf_printf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || strbuf_reserve(sb, (size_t)n) < 0)
		return;
	va_start(ap, fmt);
	vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb->len += (size_t)n;
}

void strbuf_add_u64(struct strbuf *sb, unsigned long long v)
{
	/* two digits a division: a launch line's timestamp has nineteen */
	static const char pairs[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
				    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
				    "8081828384858687888990919293949596979899";
	char d[20];
	size_t n = 0;
	while (v >= 100) {
		unsigned r = (unsigned)(v % 100);
		v /= 100;
		n += 2;
		memcpy(d + sizeof d - n, pairs + 2 * r, 2);
	}
	if (v >= 10) {
		n += 2;
		memcpy(d + sizeof d - n, pairs + 2 * v, 2);
	} else {
		d[sizeof d - ++n] = (char)('0' + v);
	}
	strbuf_append(sb, d + sizeof d - n, n);
}

void strbuf_add_i64(struct strbuf *sb, long long v)
{
	if (v < 0) {
		strbuf_append(sb, "-", 1);
		strbuf_add_u64(sb, 0ull - (unsigned long long)v);
	} else {
		strbuf_add_u64(sb, (unsigned long long)v);
	}
}

void strbuf_add_hex(struct strbuf *sb, unsigned long long v)
{
	static const char hex[] = "0123456789abcdef";
	char d[18];
	int n = 0;
	do
		d[sizeof d - 1 - n++] = hex[v & 15];
	while ((v >>= 4) != 0);
	d[sizeof d - 1 - n++] = 'x';
	d[sizeof d - 1 - n++] = '0';
	strbuf_append(sb, d + sizeof d - n, (size_t)n);
}

char *strbuf_finish(struct strbuf *sb, size_t *len)
{
	if (sb->failed || strbuf_reserve(sb, 0) < 0) {
		strbuf_done(sb);
		return NULL;
	}
	sb->data[sb->len] = 0; /* a buffer never appended to has no terminator yet */
	char *d = sb->data;
	if (len)
		*len = sb->len;
	memset(sb, 0, sizeof *sb);
	return d;
}

void strbuf_done(struct strbuf *sb)
{
	free(sb->data);
	memset(sb, 0, sizeof *sb);
}

char *strbuf_join(char *const *v, int n, const char *sep)
{
	struct strbuf sb;
	strbuf_init(&sb);
	for (int i = 0; i < n; i++) {
		if (i)
			strbuf_puts(&sb, sep);
		strbuf_puts(&sb, v[i]);
	}
	return strbuf_finish(&sb, NULL);
}
