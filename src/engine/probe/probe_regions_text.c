/* Regions chosen outside the probe file (ntop record -r NAME=SPEC, the UI's
 * region picker): a copy of the probe file whose regions are those given. The copy is the probe's text with a new top-level
 * `regions = [...]` line first and its own single-line `regions = [...]`
 * left out, so the trace keeps exactly what was probed, and the hook (and
 * the UI's picker) reads regions from probe files only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"
#include "common/strbuf.h"
#include "engine/probe/probe.h"

/* Is this line the probe's own top-level `regions = [...]`, all on it? */
static int regions_line(const char *s, size_t n, int *multi)
{
	while (n && (*s == ' ' || *s == '\t'))
		s++, n--;
	if (n < 7 || strncmp(s, "regions", 7))
		return 0;
	size_t i = 7;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (i == n || s[i] != '=')
		return 0;
	const char *close = memchr(s + i, ']', n - i);
	*multi = !close;
	return 1;
}

/* A TOML basic string of s: the specs are checked already, quotes and
 * backslashes cannot be in them (they would fail the region syntax). */
static void put_spec(struct strbuf *sb, const char *s, int first)
{
	strbuf_printf(sb, "%s\"%s\"", first ? "" : ", ", s);
}

int probe_text_with_regions(const char *text, const char *path, const char *const *specs, int n, char **out,
			   char **cause)
{
	struct strbuf sb;
	strbuf_init(&sb);
	*out = NULL;
	for (int i = 0; i < n; i++) {
		struct probe_region r;
		char why[PROBE_REGION_SPEC_MAX + 128];
		if (strpbrk(specs[i], "\"\\\n") || probe_region_parse(specs[i], &r, why, sizeof why) < 0) {
			strbuf_done(&sb);
			return cause_set(cause, "region %s", strpbrk(specs[i], "\"\\\n") ? specs[i] : why);
		}
	}
	strbuf_puts(&sb, "# regions chosen for this run (ntop record -r, the UI's region picker)\nregions = [");
	for (int i = 0; i < n; i++)
		put_spec(&sb, specs[i], i == 0);
	strbuf_puts(&sb, "]\n");
	int outside = 1; /* before the first [table]: top-level keys */
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		int multi = 0;
		if (len && (p[0] == '[' || (p[0] == ' ' && memchr(p, '[', len) == p + strspn(p, " "))))
			outside = 0;
		if (outside && regions_line(p, len, &multi)) {
			if (multi) {
				strbuf_done(&sb);
				return cause_set(cause, "%s: -r replaces a probe's regions written on one line "
						 "(regions = [...]), and this one spans several", path);
			}
		} else {
			strbuf_append(&sb, p, len);
			strbuf_puts(&sb, "\n");
		}
		p += len + (nl ? 1 : 0);
	}
	*out = strbuf_finish(&sb, NULL);
	return *out ? 0 : cause_set(cause, "out of memory");
}

int probe_has_regions(const struct probe *p)
{
	for (int h = 0; h < p->n_hooks; h++)
		if (p->hooks[h].kind == PROBE_TP_REGION)
			return 1;
	return 0;
}
