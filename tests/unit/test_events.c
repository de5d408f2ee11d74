/* Event lines: encode/parse round trip with hostile values, malformed lines,
 * integer accessors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"
#include "trace/events.h"

static const char *nasty[] = {
	"",
	"plain",
	"two words",
	"100% sure",
	"%25 already encoded",
	"a=b=c",
	"line1\nline2\r\n",
	"tab\there",
	"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",  /* UTF-8 */
	"\x7f\x80\xff",
	" leading and trailing ",
	"%",
	"%zz",
	"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIN3c104HalfEEE",
};
#define N_NASTY (int)(sizeof nasty / sizeof nasty[0])

static void test_round_trip(void)
{
	struct strbuf sb;
	strbuf_init(&sb);
	event_begin(&sb, "kernel", 1745552787265925120ull, 4242);
	char key[16];
	for (int i = 0; i < N_NASTY; i++) {
		snprintf(key, sizeof key, "k%d", i);
		event_add(&sb, key, nasty[i]);
	}
	event_add_int(&sb, "neg", -17);
	event_addf(&sb, "fmt", "%s|%d", "x y", 5);
	event_end(&sb);
	size_t len;
	char *line = strbuf_finish(&sb, &len);
	CHECK(line != NULL);
	/* one line, no raw control or high bytes */
	CHECK(memchr(line, '\n', len) == line + len - 1);
	for (size_t i = 0; i + 1 < len; i++)
		CHECKF((unsigned char)line[i] > 0x20 || line[i] == ' ', "byte %zu is %#x", i, line[i]);
	for (size_t i = 0; i < len; i++)
		CHECKF((unsigned char)line[i] < 0x7f, "byte %zu is %#x", i, (unsigned char)line[i]);

	struct event ev;
	CHECK(event_parse(line, len, &ev) == 0);
	CHECK(strcmp(ev.type, "kernel") == 0);
	CHECK_EQ_INT(ev.n, N_NASTY + 4);
	CHECK_EQ_INT(event_get_int(&ev, "t", 0), 1745552787265925120ll);
	CHECK_EQ_INT(event_get_int(&ev, "pid", 0), 4242);
	for (int i = 0; i < N_NASTY; i++) {
		snprintf(key, sizeof key, "k%d", i);
		const char *v = event_get(&ev, key);
		CHECKF(v && strcmp(v, nasty[i]) == 0, "key %s: got [%s]", key, v ? v : "(null)");
	}
	CHECK_EQ_INT(event_get_int(&ev, "neg", 0), -17);
	CHECK(strcmp(event_get(&ev, "fmt"), "x y|5") == 0);
	CHECK(event_get(&ev, "absent") == NULL);
	event_done(&ev);
	free(line);
}

static void test_malformed(void)
{
	static const char *bad[] = {
		"",
		"\n",
		" kernel t=1",          /* empty type */
		"Kernel t=1",           /* upper case type */
		"kernel t",             /* no '=' */
		"kernel =5",            /* empty key */
		"kernel T=5",           /* bad key char */
		"kernel a=%4",          /* short escape */
		"kernel a=%G0",         /* bad hex */
		"kernel a=1\nb=2",      /* embedded newline */
		"averyveryverylongtypename_beyond t=1", /* type too long */
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct event ev;
		CHECKF(event_parse(bad[i], strlen(bad[i]), &ev) < 0, "accepted [%s]", bad[i]);
		CHECK(ev.storage == NULL);
	}
	/* too many fields */
	struct strbuf sb;
	strbuf_init(&sb);
	event_begin(&sb, "x", 1, 1);
	for (int i = 0; i < EVENT_MAX_FIELDS; i++)
		event_add_int(&sb, "f", i);
	char *line = strbuf_finish(&sb, NULL);
	struct event ev;
	CHECK(event_parse(line, strlen(line), &ev) < 0);
	free(line);
}

static void test_tolerant(void)
{
	struct event ev;
	const char *l = "launch  t=5 pid=7   kid=0x1f seq=3 empty= grid=1,2,3\r\n";
	CHECK(event_parse(l, strlen(l), &ev) == 0);
	CHECK(strcmp(ev.type, "launch") == 0);
	CHECK_EQ_INT(event_get_int(&ev, "kid", -1), 31);
	CHECK(strcmp(event_get(&ev, "empty"), "") == 0);
	CHECK_EQ_INT(event_get_int(&ev, "empty", -1), -1);
	CHECK_EQ_INT(event_get_int(&ev, "grid", -1), -1);
	CHECK(strcmp(event_get(&ev, "grid"), "1,2,3") == 0);
	event_done(&ev);

	const char *t = "lone";
	CHECK(event_parse(t, 4, &ev) == 0);
	CHECK(strcmp(ev.type, "lone") == 0 && ev.n == 0);
	event_done(&ev);
}

static void test_ints(void)
{
	struct event ev;
	const char *l = "x a=0xffffffffffffffff b=9223372036854775807 c=9223372036854775808 "
			"d=-9223372036854775808 e=12abc f=0x g=010 h=+5 i=-0x5";
	CHECK(event_parse(l, strlen(l), &ev) == 0);
	CHECK_EQ_INT(event_get_int(&ev, "a", 0), -1); /* hex keeps all 64 bits */
	CHECK(event_get_u64(&ev, "a", 0) == 0xffffffffffffffffull);
	CHECK_EQ_INT(event_get_int(&ev, "b", 0), 9223372036854775807ll);
	CHECK_EQ_INT(event_get_int(&ev, "c", 42), 42);
	CHECK(event_get_u64(&ev, "c", 0) == 9223372036854775808ull);
	CHECK(event_get_int(&ev, "d", 0) == (-9223372036854775807ll - 1));
	CHECK(event_get_u64(&ev, "d", 7) == 7);
	CHECK_EQ_INT(event_get_int(&ev, "e", 42), 42);
	CHECK_EQ_INT(event_get_int(&ev, "f", 42), 42);
	CHECK_EQ_INT(event_get_int(&ev, "g", 0), 10); /* decimal, not octal */
	CHECK_EQ_INT(event_get_int(&ev, "h", 42), 42);
	CHECK_EQ_INT(event_get_int(&ev, "i", 42), 42);
	event_done(&ev);
}

/* The printf-free number writers give what printf gives, at the limits. */
static void test_numbers(void)
{
	static const long long ints[] = { 0, 1, -1, 9, 10, 11, 99, 100, 101, 999, 1000, 12345, -100000,
					  4294967295ll, -9223372036854775807ll - 1, 9223372036854775807ll };
	static const unsigned long long hexes[] = { 0, 1, 0xf, 0x10, 0xdeadbeefull, 0xffffffffffffffffull };
	for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
		struct strbuf sb;
		char want[128];
		strbuf_init(&sb);
		event_begin(&sb, "x", 18446744073709551615ull, -5);
		event_add_int(&sb, "v", ints[i]);
		event_add_hex(&sb, "h", hexes[i % (sizeof hexes / sizeof hexes[0])]);
		snprintf(want, sizeof want, "x t=18446744073709551615 pid=-5 v=%lld h=0x%llx", ints[i],
			 hexes[i % (sizeof hexes / sizeof hexes[0])]);
		CHECKF(sb.data && strcmp(sb.data, want) == 0, "'%s' != '%s'", sb.data ? sb.data : "(null)", want);
		strbuf_done(&sb);
	}
	struct strbuf sb;
	strbuf_init(&sb);
	event_add_dim3(&sb, "grid", (const unsigned[]){ 4294967295u, 0, 7 });
	CHECKF(sb.data && strcmp(sb.data, " grid=4294967295,0,7") == 0, "'%s'", sb.data ? sb.data : "(null)");
	strbuf_done(&sb);
	/* a key that makes the buffer grow mid-field */
	char key[301];
	memset(key, 'k', sizeof key - 1);
	key[sizeof key - 1] = 0;
	strbuf_init(&sb);
	event_begin(&sb, "x", 1, 2);
	event_add_int(&sb, key, 42);
	size_t len = 0;
	char *line = strbuf_finish(&sb, &len);
	CHECKF(line && len == strlen("x t=1 pid=2 ") + 300 + strlen("=42") && strncmp(line, "x t=1 pid=2 kkk", 15) == 0 &&
		       strcmp(line + len - 3, "=42") == 0,
	       "'%s'", line ? line : "(null)");
	free(line);
}

int main(void)
{
	test_numbers();
	test_round_trip();
	test_malformed();
	test_tolerant();
	test_ints();
	return testlib_report();
}
