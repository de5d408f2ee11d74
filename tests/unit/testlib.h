/* Minimal unit-test helpers: CHECK records a failure and goes on, so one run
 * reports every broken assertion; test_main() prints "N passed, N failed". */
#ifndef NTOP_TESTLIB_H
#define NTOP_TESTLIB_H
#include <stddef.h>

extern int testlib_passed, testlib_failed;
void testlib_check(int ok, const char *expr, const char *file, int line, const char *fmt, ...);
int testlib_report(void);
/* Reads a whole file (NUL-terminated); NULL when it cannot. */
char *testlib_slurp(const char *path, size_t *len);
/* NTOP_SOURCE_DIR joined with rel, in a static buffer reused by each call. */
const char *testlib_src(const char *rel);

#define CHECK(c) testlib_check(!!(c), #c, __FILE__, __LINE__, NULL)
/* The condition is evaluated before the message's arguments: a call in c
 * often sets what the message prints (CHECKF(f(&cause) == 0, "%s", cause)),
 * and function arguments are evaluated in no set order. */
#define CHECKF(c, ...) do { int ok_ = !!(c); \
    testlib_check(ok_, #c, __FILE__, __LINE__, __VA_ARGS__); } while (0)
#define CHECK_EQ_INT(a, b) do { long long a_ = (long long)(a), b_ = (long long)(b); \
    testlib_check(a_ == b_, #a " == " #b, __FILE__, __LINE__, "%lld != %lld", a_, b_); } while (0)
#endif
