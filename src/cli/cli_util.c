/* Small helpers shared by the commands: messages, option matching, probe
 * loading and one-line probe summaries. */
#include "cli/cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"
#include "engine/probe/verify.h"

void cli_err(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("ntop: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

int cli_usage(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	/* "ntop" is the top level (the live UI's options): named once */
	int top = strcmp(cmd, "ntop") == 0;
	fprintf(stderr, "ntop%s%s: ", top ? "" : " ", top ? "" : cmd);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\nTry 'ntop%s%s --help'.\n", top ? "" : " ", top ? "" : cmd);
	va_end(ap);
	return CLI_EXIT_USAGE;
}

int cli_is_help(const char *arg)
{
	return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

int cli_opt(const char *cmd, int argc, char **argv, int *i, const char *s, const char *l, const char **val)
{
	const char *a = argv[*i];
	size_t sl = s ? strlen(s) : 0, ll = l ? strlen(l) : 0;
	if ((s && strcmp(a, s) == 0) || (l && strcmp(a, l) == 0)) {
		if (*i + 1 >= argc) {
			cli_usage(cmd, "option %s needs a value", a);
			return -1;
		}
		*val = argv[++*i];
		return 1;
	}
	if (l && strncmp(a, l, ll) == 0 && a[ll] == '=') {
		*val = a + ll + 1;
		return 1;
	}
	/* -pNAME; long options never start with a single dash */
	if (s && sl == 2 && strncmp(a, s, 2) == 0 && a[2] && a[1] != '-') {
		*val = a + 2;
		return 1;
	}
	return 0;
}

int cli_parse_ulong(const char *s, unsigned long *out)
{
	if (!s || *s < '0' || *s > '9')
		return -1;
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int cli_parse_size(const char *s, uint64_t *out)
{
	if (!s || *s < '0' || *s > '9')
		return -1;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	static const char units[] = "KMGT";
	const char *u = *end ? strchr(units, *end & ~0x20) : NULL;
	int shift = u ? 10 * (int)(u - units + 1) : 0;
	if (errno || (*end && (!u || end[1])) || v > UINT64_MAX >> shift)
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

void cli_probe_map_summary(struct strbuf *sb, const struct probe *p)
{
	if (!p->has_map) {
		strbuf_puts(sb, "no map");
		return;
	}
	const struct probe_map *m = &p->map;
	strbuf_printf(sb, "map %s: per %s, %u x %u B", m->name, probe_level_name(m->level), m->cap, m->rec_size);
	if (m->n_fields) {
		strbuf_puts(sb, " (");
		for (int i = 0; i < m->n_fields; i++)
			strbuf_printf(sb, "%s%s:%s%s", i ? " " : "", m->fields[i].name,
				      m->fields[i].type == PROBE_U64 ? "u64" : "u32",
				      m->fields[i].fold == PROBE_FOLD_MAX ? ":max" :
				      m->fields[i].fold == PROBE_FOLD_ADD ? ":add" : "");
		strbuf_puts(sb, ")");
	}
}

int cli_probe_load_verified(const char *path, struct probe **out, char **cause)
{
	*out = NULL;
	struct probe *p = NULL;
	if (probe_load_file(path, &p, cause) < 0)
		return -1;
	if (verify_probe(p, cause) < 0) {
		probe_free(p);
		return -1;
	}
	*out = p;
	return 0;
}
