/* A small TOML reader (TOML 1.0 minus dates and times) for probe files.
 * No C TOML library is packaged for Debian, and probe files are small, so the
 * whole document becomes a tree of nodes; every node remembers where it was
 * written, so the probe loader can point at the exact line:col of a mistake.
 *
 * Supported: bare/quoted/dotted keys; basic, literal, multi-line basic and
 * multi-line literal strings; integers (decimal, 0x hex, 0o octal, 0b binary,
 * underscores); floats (decimal, exponent, inf, nan); booleans; arrays (over
 * several lines, comments inside, trailing comma); inline tables; [tables];
 * [[arrays of tables]]; comments. Not supported (clear error): offset date-
 * times, local dates and times; NUL characters in strings (\u0000).
 * Errors read "FILE:LINE:COL: message"; columns count characters (UTF-8 code
 * points), both from 1. */
#ifndef NTOP_TOML_H
#define NTOP_TOML_H
#include <stddef.h>
#include <stdint.h>

/* Limits against hostile input (the fuzzer feeds anything). */
#define TOML_MAX_DEPTH 32        /* nesting of arrays / inline tables / dotted parts */
#define TOML_MAX_INPUT (16u << 20)
#define TOML_MAX_TABLE_KEYS 1024 /* keys per table (lookup is linear) */
#define TOML_MAX_NODES 65536     /* values, keys and tables in one document */

enum toml_type {
	TOML_TABLE,
	TOML_ARRAY,
	TOML_STRING,
	TOML_INT,
	TOML_FLOAT,
	TOML_BOOL,
};

enum toml_str_kind {
	TOML_STR_BASIC,    /* "..." */
	TOML_STR_LITERAL,  /* '...' */
	TOML_STR_ML_BASIC, /* """...""" */
	TOML_STR_ML_LITERAL, /* '''...''' */
};

/* Where one byte of a decoded string was written (an escape: its backslash). */
struct toml_pos {
	int line, col;
};

struct toml_node {
	enum toml_type type;
	int line, col;         /* where the value starts (its first character) */
	char *key;             /* name in the parent table; NULL for array items and the root */
	int key_line, key_col; /* where that key was written (last dotted part) */
	union {
		char *s;   /* TOML_STRING, NUL-terminated (no NULs inside) */
		int64_t i; /* TOML_INT */
		double f;  /* TOML_FLOAT */
		int b;     /* TOML_BOOL */
	} v;
	enum toml_str_kind str_kind;
	int str_line;          /* TOML_STRING: line where the text starts (after a trimmed newline) */
	struct toml_pos *str_pos; /* TOML_STRING: position of each byte of v.s, strlen(v.s) + 1 entries
				     (the last: the closing quote), so errors inside a string can
				     name their line:col */
	/* TOML_TABLE members or TOML_ARRAY items, in written order. */
	struct toml_node **items;
	int n_items, cap_items;
	/* How a table came to be, for the redefinition rules. */
	unsigned header : 1;   /* defined by a [header] */
	unsigned implicit : 1; /* created as a parent by a [a.b] header */
	unsigned dotted : 1;   /* created by a dotted key a.b = v */
	unsigned sealed : 1;   /* inline table or static array: cannot be extended */
	unsigned aot : 1;      /* TOML_ARRAY built by [[header]] */
};

/* Parses len bytes of text; `path` is only used in error messages. */
int toml_parse(const char *text, size_t len, const char *path, struct toml_node **out, char **cause);
void toml_free(struct toml_node *n);

/* Member of a table by key, or NULL (also when t is not a table). */
const struct toml_node *toml_get(const struct toml_node *t, const char *key);
/* "table", "array", "string", "integer", "float", "boolean". */
const char *toml_type_name(enum toml_type t);

#endif
