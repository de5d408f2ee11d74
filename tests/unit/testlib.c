#include "testlib.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int testlib_passed, testlib_failed;

void testlib_check(int ok, const char *expr, const char *file, int line, const char *fmt, ...)
{
	if (ok) {
		testlib_passed++;
		return;
	}
	testlib_failed++;
	fprintf(stderr, "FAIL %s:%d: %s", file, line, expr);
	if (fmt) {
		va_list ap;
		va_start(ap, fmt);
		fputs(" -- ", stderr);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
	}
	fputc('\n', stderr);
}

int testlib_report(void)
{
	printf("%d passed, %d failed\n", testlib_passed, testlib_failed);
	return testlib_failed ? 1 : 0;
}

char *testlib_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap + 1);
	size_t got;
	while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			char *nb = realloc(buf, cap * 2 + 1);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
	}
	fclose(f);
	if (!buf)
		return NULL;
	buf[n] = 0;
	if (len)
		*len = n;
	return buf;
}

const char *testlib_src(const char *rel)
{
	static char path[4096];
	const char *root = getenv("NTOP_SOURCE_DIR");
	snprintf(path, sizeof path, "%s/%s", root ? root : NTOP_SOURCE_DIR, rel);
	return path;
}

uint8_t *testlib_corpus(const char *dir, const char *name, size_t *len)
{
	char rel[512];
	snprintf(rel, sizeof rel, "tests/corpus/%s/%s", dir, name);
	uint8_t *p = (uint8_t *)testlib_slurp(testlib_src(rel), len);
	CHECKF(p != NULL, "cannot read %s", rel);
	return p;
}

uint8_t *testlib_dup_exact(const void *p, size_t n)
{
	uint8_t *q = malloc(n ? n : 1);
	if (q && n)
		memcpy(q, p, n);
	return q;
}

void testlib_u32(struct testlib_bytes *x, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		x->b[x->n++] = (uint8_t)(v >> (8 * i));
}

void testlib_u64(struct testlib_bytes *x, uint64_t v)
{
	testlib_u32(x, (uint32_t)v);
	testlib_u32(x, (uint32_t)(v >> 32));
}

void testlib_str(struct testlib_bytes *x, const char *s)
{
	testlib_u32(x, (uint32_t)strlen(s));
	memcpy(x->b + x->n, s, strlen(s));
	x->n += strlen(s);
}
