/* A growable NUL-terminated byte buffer. Allocation failure is sticky: the
 * buffer stops growing, `failed` is set, and strbuf_finish returns NULL, so a
 * caller checks once at the end instead of after every append. */
#ifndef NTOP_STRBUF_H
#define NTOP_STRBUF_H
#include <stddef.h>
#include <string.h>

struct strbuf {
	char *data;
	size_t len;
	size_t cap;
	int failed;
};

void strbuf_init(struct strbuf *sb);
/* Room for `extra` more bytes and the NUL: 0, or -1 once an allocation
 * failed. Inline, as strbuf_append is: event lines are made of dozens of
 * short appends, some on the application's launch path. */
int strbuf_grow(struct strbuf *sb, size_t extra);
static inline int strbuf_reserve(struct strbuf *sb, size_t extra)
{
	return !sb->failed && sb->len + extra + 1 <= sb->cap ? 0 : strbuf_grow(sb, extra);
}

static inline void strbuf_append(struct strbuf *sb, const char *s, size_t n)
{
	if (strbuf_reserve(sb, n) < 0)
		return;
	memcpy(sb->data + sb->len, s, n);
	sb->len += n;
	sb->data[sb->len] = 0;
}

void strbuf_puts(struct strbuf *sb, const char *s);
void strbuf_printf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Decimal and 0x-hex numbers without printf: the hook formats event lines
 * on the application's launch path, where vsnprintf cost microseconds. */
void strbuf_add_u64(struct strbuf *sb, unsigned long long v);
void strbuf_add_i64(struct strbuf *sb, long long v);
void strbuf_add_hex(struct strbuf *sb, unsigned long long v);
/* Hands the buffer over (caller frees); NULL if any append failed. */
char *strbuf_finish(struct strbuf *sb, size_t *len);
void strbuf_done(struct strbuf *sb);
/* v[0..n) with sep between, malloc'd ("" for n = 0); NULL when out of memory. */
char *strbuf_join(char *const *v, int n, const char *sep);

#endif
