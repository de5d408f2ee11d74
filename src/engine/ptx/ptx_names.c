/* Symbol lookup for pruning: a hash table from names to module items, an
 * identifier scanner that finds symbol references in statement text, and
 * dotted-opcode matching for tracepoints. */
#include "engine/ptx/ptx_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t ptx_names_hash(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

int ptx_names_init(struct ptx_names *t, const struct ptx_module *m)
{
	memset(t, 0, sizeof *t);
	t->m = m;
	size_t size = 16;
	while (size < (size_t)m->n_items * 2)
		size *= 2;
	t->slots = calloc(size, sizeof *t->slots);
	t->next = malloc(((size_t)m->n_items + 1) * sizeof *t->next);
	if (!t->slots || !t->next) {
		ptx_names_done(t);
		return -1;
	}
	t->mask = size - 1;
	/* insert backwards so each chain lists items in module order */
	for (int i = m->n_items - 1; i >= 0; i--) {
		t->next[i] = -1;
		const char *name = m->items[i].name;
		if (!name)
			continue;
		size_t n = strlen(name);
		size_t h = (size_t)ptx_names_hash(name, n) & t->mask;
		for (;; h = (h + 1) & t->mask) {
			int s = t->slots[h];
			if (!s) {
				t->slots[h] = i + 1;
				break;
			}
			if (!strcmp(m->items[s - 1].name, name)) {
				t->next[i] = s - 1;
				t->slots[h] = i + 1;
				break;
			}
		}
	}
	return 0;
}

void ptx_names_done(struct ptx_names *t)
{
	free(t->slots);
	free(t->next);
	t->slots = NULL;
	t->next = NULL;
}

int ptx_names_find(const struct ptx_names *t, const char *s, size_t n)
{
	size_t h = (size_t)ptx_names_hash(s, n) & t->mask;
	for (;; h = (h + 1) & t->mask) {
		int i = t->slots[h] - 1;
		if (i < 0)
			return -1;
		const char *name = t->m->items[i].name;
		if (!strncmp(name, s, n) && name[n] == '\0')
			return i;
	}
}

void ptx_names_scan(const char *text, void (*fn)(void *ctx, const char *s, size_t n), void *ctx)
{
	const char *p = text;
	while (*p) {
		unsigned char c = (unsigned char)*p;
		if (c == '"') {
			for (p++; *p && *p != '"'; p++)
				if (*p == '\\' && p[1])
					p++;
			if (*p)
				p++;
		} else if (c == '.' || c == '%' || (c >= '0' && c <= '9')) {
			for (p++; ptx_is_ident_char((unsigned char)*p); p++)
				;
		} else if (ptx_is_ident_start(c)) {
			const char *s = p;
			while (ptx_is_ident_char((unsigned char)*p))
				p++;
			fn(ctx, s, (size_t)(p - s));
		} else {
			p++;
		}
	}
}

/* Length of the dotted part starting at s. */
static size_t opcode_part_len(const char *s)
{
	const char *dot = strchr(s, '.');
	return dot ? (size_t)(dot - s) : strlen(s);
}

/* The first parts must be equal and the pattern's other parts must appear in
 * the opcode in the same order: "ld.global" matches "ld.global.nc.v4.f32" and
 * also "ld.relaxed.gpu.global.u32" (memory-order qualifiers come before the
 * state space), but never "ldu.global" or "wmma.mma.sync" for "mma.sync". */
int ptx_opcode_matches(const char *opcode, const char *pattern)
{
	if (!opcode || !pattern || !*pattern)
		return 0;
	size_t n = opcode_part_len(pattern);
	if (opcode_part_len(opcode) != n || strncmp(opcode, pattern, n) != 0)
		return 0;
	const char *o = opcode + n, *p = pattern + n;
	while (*p == '.') {
		p++;
		size_t pn = opcode_part_len(p);
		for (;;) {
			if (*o != '.')
				return 0;
			o++;
			size_t on = opcode_part_len(o);
			int same = on == pn && strncmp(o, p, pn) == 0;
			o += on;
			if (same)
				break;
		}
		p += pn;
	}
	return 1;
}

int ptx_opcode_matches_within(const char *opcode, const char *pattern)
{
	for (const char *o = opcode; o; o = strchr(o, '.')) {
		o += *o == '.';
		if (ptx_opcode_matches(o, pattern))
			return 1;
	}
	return 0;
}
