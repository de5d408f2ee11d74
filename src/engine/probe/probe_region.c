/* Regions of the `regions` probe and its kind: "NAME=SPEC", where SPEC is
 * FILE:LINE, FILE:FIRST-LAST, @CLASS or @loop:FILE:LINE (probe.h). The
 * same text in a probe file's `regions = [...]` and on the command line
 * (ntop record -r, ntop instrument -r). */
#include "engine/probe/probe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"

static const char *const class_names[] = {
	[PROBE_CLASS_TENSOR] = "tensor", [PROBE_CLASS_LOAD] = "load", [PROBE_CLASS_STORE] = "store",
	[PROBE_CLASS_WAIT] = "wait",     [PROBE_CLASS_ASYNC] = "async",
};

const char *probe_class_name(enum probe_class c)
{
	return c >= PROBE_CLASS_TENSOR && c <= PROBE_CLASS_ASYNC ? class_names[c] : NULL;
}

static int fail(char *why, size_t n, const char *fmt, const char *arg)
{
	snprintf(why, n, fmt, arg);
	return -1;
}

/* A positive line number, all of s up to `end`. */
static int read_line(const char *s, const char *end, int *out)
{
	long v = 0;
	if (s == end)
		return -1;
	for (; s < end; s++) {
		if (*s < '0' || *s > '9' || (v = v * 10 + (*s - '0')) > 0x7fffffff)
			return -1;
	}
	*out = (int)v;
	return v > 0 ? 0 : -1;
}

/* "FILE:LINE" or "FILE:FIRST-LAST" (ranges only when allowed). */
static int parse_place(const char *s, struct probe_region *r, int range, char *why, size_t n)
{
	const char *colon = strrchr(s, ':');
	if (!colon || colon == s || (size_t)(colon - s) >= sizeof r->file)
		return fail(why, n, "'%s' is not FILE:LINE", s);
	memcpy(r->file, s, (size_t)(colon - s));
	r->file[colon - s] = 0;
	const char *dash = strchr(colon + 1, '-'), *end = colon + 1 + strlen(colon + 1);
	if (dash && !range)
		return fail(why, n, "'%s': a loop is named by one line inside it, FILE:LINE", s);
	if (read_line(colon + 1, dash ? dash : end, &r->first) < 0 || (dash && read_line(dash + 1, end, &r->last) < 0))
		return fail(why, n, "'%s': lines are numbers from 1, FILE:LINE or FILE:FIRST-LAST", s);
	if (!dash)
		r->last = r->first;
	if (r->last < r->first)
		return fail(why, n, "'%s': the range ends before it starts", s);
	return 0;
}

static int parse_class(const char *s, struct probe_region *r, char *why, size_t n)
{
	for (int c = PROBE_CLASS_TENSOR; c <= PROBE_CLASS_ASYNC; c++)
		if (!strcmp(s + 1, class_names[c])) {
			r->kind = PROBE_REGION_CLASS;
			r->cls = (enum probe_class)c;
			return 0;
		}
	return fail(why, n, "'%s' is no instruction class: @tensor, @load, @store, @wait, @async, or @loop:FILE:LINE",
		    s);
}

static int valid_name(const char *s, size_t len)
{
	if (!len || len >= PROBE_NAME_MAX || !(s[0] == '_' || (s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')))
		return 0;
	for (size_t i = 1; i < len; i++)
		if (!(s[i] == '_' || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9')))
			return 0;
	return 1;
}

int probe_region_parse(const char *name_spec, struct probe_region *r, char *why, size_t why_len)
{
	memset(r, 0, sizeof *r);
	const char *eq = strchr(name_spec, '=');
	if (!eq)
		return fail(why, why_len, "'%s' is not NAME=SPEC (e.g. load=attn.py:40-55, mma=@tensor, "
			    "iter=@loop:attn.py:48)", name_spec);
	if (!valid_name(name_spec, (size_t)(eq - name_spec)))
		return fail(why, why_len, "'%s': a region's name is an identifier ([A-Za-z_][A-Za-z0-9_]*)",
			    name_spec);
	const char *spec = eq + 1;
	if (strlen(spec) >= sizeof r->spec)
		return fail(why, why_len, "'%s': the spec is too long", name_spec);
	memcpy(r->name, name_spec, (size_t)(eq - name_spec));
	snprintf(r->spec, sizeof r->spec, "%s", spec);
	if (!strncmp(spec, "@loop:", 6)) {
		r->kind = PROBE_REGION_LOOP;
		return parse_place(spec + 6, r, 0, why, why_len);
	}
	if (spec[0] == '@')
		return parse_class(spec, r, why, why_len);
	r->kind = PROBE_REGION_LINES;
	return parse_place(spec, r, 1, why, why_len);
}

int probe_set_regions(struct probe *p, const char *const *specs, int n, char **cause)
{
	if (n > PROBE_MAX_REGIONS)
		return cause_set(cause, "%d regions: at most %d", n, PROBE_MAX_REGIONS);
	struct probe_region *rs = calloc((size_t)(n ? n : 1), sizeof *rs);
	if (!rs)
		return cause_set(cause, "out of memory");
	for (int i = 0; i < n; i++) {
		char why[PROBE_REGION_SPEC_MAX + 128];
		if (probe_region_parse(specs[i], &rs[i], why, sizeof why) < 0) {
			free(rs);
			return cause_set(cause, "region %s", why);
		}
		for (int j = 0; j < i; j++)
			if (!strcmp(rs[j].name, rs[i].name)) {
				cause_set(cause, "region '%s' is named twice", rs[i].name);
				free(rs);
				return -1;
			}
	}
	free(p->regions);
	p->regions = rs;
	p->n_regions = n;
	return 0;
}
