/* The value of one hexadecimal digit, shared by every text format ntop reads
 * (TOML escapes, percent-encoded event values, theme colours). */
#ifndef NTOP_HEXDIGIT_H
#define NTOP_HEXDIGIT_H

/* 0-15 for [0-9a-fA-F], -1 for anything else. */
static inline int hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

#endif
