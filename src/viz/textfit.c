/* Fields into a width (textfit.h). */
#include "viz/textfit.h"

#include <string.h>

#include "viz/cellgrid.h"

#define TEXTFIT_MAX_FIELDS 64

/* Splits s at runs of two or more blanks: starts and byte lengths. */
static int textfit_split(const char *s, const char **f, size_t *n)
{
	int k = 0;
	const char *p = s;
	while (*p == ' ')
		p++;
	while (*p && k < TEXTFIT_MAX_FIELDS) {
		const char *e = strstr(p, "  ");
		size_t l = e ? (size_t)(e - p) : strlen(p);
		f[k] = p;
		n[k++] = l;
		if (!e)
			break;
		p = e;
		while (*p == ' ')
			p++;
	}
	return k;
}

/* The first k fields joined by two blanks into buf (and the ellipsis after
 * a blank when more fields follow); their cells. */
static int textfit_join(const char **f, const size_t *n, int k, int total, const char *ellipsis, char *buf,
			size_t len)
{
	size_t o = 0;
	int cells = 0;
	buf[0] = 0;
	for (int i = 0; i < k; i++) {
		if (o + n[i] + 2 >= len)
			break;
		if (i) {
			memcpy(buf + o, "  ", 2);
			o += 2;
		}
		memcpy(buf + o, f[i], n[i]);
		o += n[i];
		buf[o] = 0;
	}
	cells = cellgrid_utf8_len(buf);
	if (k < total && ellipsis && o + 1 + strlen(ellipsis) < len) {
		buf[o++] = ' ';
		strcpy(buf + o, ellipsis);
		cells += 1 + cellgrid_utf8_len(ellipsis);
	}
	return cells;
}

/* The first `cells` cells of s, the last one the ellipsis. */
static int textfit_cut(const char *s, int cells, const char *ellipsis, char *buf, size_t len)
{
	int keep = cells - cellgrid_utf8_len(ellipsis), n = 0;
	size_t o = 0;
	const unsigned char *p = (const unsigned char *)s;
	while (*p && n < keep) {
		size_t b = *p < 0x80 ? 1 : (*p & 0xe0) == 0xc0 ? 2 : (*p & 0xf0) == 0xe0 ? 3 : 4;
		if (o + b >= len)
			break;
		memcpy(buf + o, p, b);
		o += b;
		p += b;
		n++;
	}
	buf[o] = 0;
	if (keep >= 0 && o + strlen(ellipsis) < len) {
		strcpy(buf + o, ellipsis);
		n += cellgrid_utf8_len(ellipsis);
	}
	return n;
}

int textfit_fields(const char *s, int cells, const char *ellipsis, char *buf, size_t len)
{
	const char *f[TEXTFIT_MAX_FIELDS];
	size_t n[TEXTFIT_MAX_FIELDS];
	if (!len)
		return 0;
	buf[0] = 0;
	if (!s || cells <= 0)
		return 0;
	int total = textfit_split(s, f, n);
	for (int k = total; k > 0; k--) {
		int used = textfit_join(f, n, k, total, k < total ? ellipsis : NULL, buf, len);
		if (used <= cells)
			return used;
	}
	if (!total)
		return 0;
	int used = textfit_join(f, n, 1, 1, NULL, buf, len); /* the first field alone, unmarked */
	if (used <= cells)
		return used;
	if (!ellipsis) {
		buf[0] = 0;
		return 0;
	}
	return textfit_cut(f[0], cells, ellipsis, buf, len);
}

int textfit_first(const char *const *alts, int n, int cells)
{
	for (int i = 0; i < n; i++)
		if (cellgrid_utf8_len(alts[i]) <= cells)
			return i;
	return -1;
}
