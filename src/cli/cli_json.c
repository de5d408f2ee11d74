/* JSON output: string literals and objects/arrays written member by member.
 * Values come from event logs and result files written by other processes,
 * so anything may be in them: control characters are escaped and bytes that
 * are not valid UTF-8 become U+FFFD, keeping the output valid JSON whatever
 * the trace holds. */
#include "cli/cli.h"

#include <string.h>

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when invalid. */
static int cli_utf8_len(const unsigned char *s)
{
	int n;
	unsigned min;
	unsigned cp;
	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		n = 2, min = 0x80, cp = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3, min = 0x800, cp = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		n = 4, min = 0x10000, cp = s[0] & 0x07;
	} else {
		return 0;
	}
	for (int i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

void cli_json_str(struct strbuf *sb, const char *str)
{
	if (!str) {
		strbuf_puts(sb, "null");
		return;
	}
	const unsigned char *s = (const unsigned char *)str;
	strbuf_puts(sb, "\"");
	while (*s) {
		int n = cli_utf8_len(s);
		if (n == 0) {
			strbuf_puts(sb, "\\ufffd");
			s++;
		} else if (*s == '"' || *s == '\\') {
			strbuf_printf(sb, "\\%c", *s);
			s++;
		} else if (*s == '\n') {
			strbuf_puts(sb, "\\n");
			s++;
		} else if (*s == '\t') {
			strbuf_puts(sb, "\\t");
			s++;
		} else if (*s < 0x20 || *s == 0x7f) {
			strbuf_printf(sb, "\\u%04x", *s);
			s++;
		} else {
			strbuf_append(sb, (const char *)s, (size_t)n);
			s += n;
		}
	}
	strbuf_puts(sb, "\"");
}

/* ---- objects and arrays ---- */

static void cli_json_open(struct cli_json *j, struct strbuf *sb, const char *open, char close)
{
	j->sb = sb;
	j->first = 1;
	j->close = close;
	strbuf_puts(sb, open);
}

void cli_json_object(struct cli_json *j, struct strbuf *sb)
{
	cli_json_open(j, sb, "{", '}');
}

void cli_json_array(struct cli_json *j, struct strbuf *sb)
{
	cli_json_open(j, sb, "[", ']');
}

void cli_json_end(struct cli_json *j)
{
	strbuf_append(j->sb, &j->close, 1);
}

void cli_json_item(struct cli_json *j)
{
	if (!j->first)
		strbuf_puts(j->sb, ",");
	j->first = 0;
}

void cli_json_key(struct cli_json *j, const char *key)
{
	cli_json_item(j);
	strbuf_printf(j->sb, "\"%s\":", key);
}

void cli_json_u64(struct cli_json *j, const char *key, uint64_t v)
{
	cli_json_key(j, key);
	strbuf_printf(j->sb, "%llu", (unsigned long long)v);
}

void cli_json_int(struct cli_json *j, const char *key, long long v)
{
	cli_json_key(j, key);
	strbuf_printf(j->sb, "%lld", v);
}

void cli_json_string(struct cli_json *j, const char *key, const char *s)
{
	cli_json_key(j, key);
	cli_json_str(j->sb, s);
}

void cli_json_bool(struct cli_json *j, const char *key, int v)
{
	cli_json_key(j, key);
	strbuf_puts(j->sb, v ? "true" : "false");
}

void cli_json_null(struct cli_json *j, const char *key)
{
	cli_json_key(j, key);
	strbuf_puts(j->sb, "null");
}

void cli_json_number_if(struct cli_json *j, const char *key, int have, double v)
{
	cli_json_key(j, key);
	/* JSON has no NaN or infinity */
	if (!have || v != v || v > 1e300 || v < -1e300)
		strbuf_puts(j->sb, "null");
	else
		strbuf_printf(j->sb, "%.6g", v);
}

void cli_json_number(struct cli_json *j, const char *key, double v)
{
	cli_json_number_if(j, key, 1, v);
}
