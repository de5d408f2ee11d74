/* JSON string literals. Values come from event logs and result files written
 * by other processes, so anything may be in them: control characters are
 * escaped and bytes that are not valid UTF-8 become U+FFFD, keeping the
 * output valid JSON whatever the trace holds. */
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
