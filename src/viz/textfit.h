/* Fitting a line of fields into a width: the headers, readouts and titles
 * of the terminal views are fields separated by two blanks ("4096 blocks
 * 3.88 waves/SM  running 8.6M cyc"). Where the line is too wide, whole
 * fields drop from the end (marked with the ellipsis), so a narrow terminal
 * shows fewer facts rather than a fact cut in half ("132/1" for "132/132
 * SMs"). The two blanks stay: one blank would run fields together. */
#ifndef NTOP_TEXTFIT_H
#define NTOP_TEXTFIT_H
#include <stddef.h>

/* The fields of s that fit in `cells` cells into buf; a first field wider
 * than that is cut, ending in the ellipsis (NULL ellipsis: dropped fields
 * go unmarked, and a first field too wide gives ""). Returns the cells used. */
int textfit_fields(const char *s, int cells, const char *ellipsis, char *buf, size_t len);

/* Index of the first of n texts (longest first) that fits in `cells`
 * cells, -1 when none does. */
int textfit_first(const char *const *alts, int n, int cells);

#endif
