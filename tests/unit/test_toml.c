/* TOML reader: the spec's value forms, table rules, positions, and every
 * error kind with its exact line:col. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/toml.h"
#include "testlib.h"

static struct toml_node *parse_ok(const char *text)
{
	struct toml_node *root = NULL;
	char *cause = NULL;
	int r = toml_parse(text, strlen(text), "t.toml", &root, &cause);
	CHECKF(r == 0, "parse failed: %s\n--- input:\n%s", cause ? cause : "(no cause)", text);
	free(cause);
	return r == 0 ? root : NULL;
}

/* Expects failure with a cause that starts with `where` ("t.toml:L:C: ")
 * and contains `what`. */
static void parse_err_n(const char *text, size_t len, const char *where, const char *what)
{
	struct toml_node *root = NULL;
	char *cause = NULL;
	int r = toml_parse(text, len, "t.toml", &root, &cause);
	CHECKF(r == -1 && root == NULL, "parse of %s should fail", where);
	CHECKF(cause && strncmp(cause, where, strlen(where)) == 0 && strstr(cause, what),
	       "want \"%s ...%s...\", got \"%s\"", where, what, cause ? cause : "(null)");
	toml_free(root);
	free(cause);
}

static void parse_err(const char *text, const char *where, const char *what)
{
	parse_err_n(text, strlen(text), where, what);
}

static const struct toml_node *path_get(const struct toml_node *t, const char *dotted)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", dotted);
	for (char *part = strtok(buf, "."); part && t; part = strtok(NULL, "."))
		t = toml_get(t, part);
	return t;
}

static void check_str(const struct toml_node *root, const char *key, const char *want)
{
	const struct toml_node *n = path_get(root, key);
	CHECKF(n && n->type == TOML_STRING && strcmp(n->v.s, want) == 0, "%s: want \"%s\", got \"%s\"", key, want,
	       n && n->type == TOML_STRING ? n->v.s : "(not a string)");
}

static void check_int(const struct toml_node *root, const char *key, long long want)
{
	const struct toml_node *n = path_get(root, key);
	CHECKF(n && n->type == TOML_INT && n->v.i == want, "%s: want %lld, got %lld", key, want,
	       n && n->type == TOML_INT ? (long long)n->v.i : -424242LL);
}

static void check_float(const struct toml_node *root, const char *key, double want)
{
	const struct toml_node *n = path_get(root, key);
	int ok = n && n->type == TOML_FLOAT &&
		 (isnan(want) ? isnan(n->v.f) : isinf(want) ? n->v.f == want : fabs(n->v.f - want) <= fabs(want) * 1e-12);
	CHECKF(ok, "%s: want %g, got %g", key, want, n && n->type == TOML_FLOAT ? n->v.f : -4242.0);
}

static void test_scalars(void)
{
	struct toml_node *r = parse_ok("i1 = +99\ni2 = -17\ni3 = 0\ni4 = 1_000\ni5 = 0xDEAD_BEEF\ni6 = 0o755\n"
				       "i7 = 0b1101\nimax = 9223372036854775807\nimin = -9223372036854775808\n"
				       "f1 = 3.14\nf2 = -0.01\nf3 = 5e+22\nf4 = 1e06\nf5 = 6.626e-34\nf6 = 224_617.445_991\n"
				       "f7 = inf\nf8 = -inf\nf9 = nan\nt = true\nf = false\n");
	if (!r)
		return;
	check_int(r, "i1", 99);
	check_int(r, "i2", -17);
	check_int(r, "i3", 0);
	check_int(r, "i4", 1000);
	check_int(r, "i5", 0xDEADBEEF);
	check_int(r, "i6", 0755);
	check_int(r, "i7", 13);
	check_int(r, "imax", 9223372036854775807LL);
	check_int(r, "imin", -9223372036854775807LL - 1);
	check_float(r, "f1", 3.14);
	check_float(r, "f2", -0.01);
	check_float(r, "f3", 5e22);
	check_float(r, "f4", 1e6);
	check_float(r, "f5", 6.626e-34);
	check_float(r, "f6", 224617.445991);
	check_float(r, "f7", INFINITY);
	check_float(r, "f8", -INFINITY);
	check_float(r, "f9", NAN);
	const struct toml_node *t = toml_get(r, "t"), *f = toml_get(r, "f");
	CHECK(t && t->type == TOML_BOOL && t->v.b == 1);
	CHECK(f && f->type == TOML_BOOL && f->v.b == 0);
	toml_free(r);
}

static void test_strings(void)
{
	struct toml_node *r = parse_ok("s = \"tab\\there \\\"q\\\" back\\\\slash \\u00e9 \\U0001F600 \\b\\f\\r\\n\"\n"
				       "lit = 'C:\\Users\\nodejs'\n"
				       "ml = \"\"\"\nline one\n  line two\"\"\"\n"
				       "cont = \"\"\"\nThe quick \\\n   brown \\\n\n   fox.\"\"\"\n"
				       "quotes = \"\"\"two \"\" here\"\"\"\"\"\n"
				       "mll = '''\nraw \\n stays\n'''\n"
				       "mllq = '''it's'''''\n"
				       "crlf = \"\"\"a\r\nb\"\"\"\n"
				       "empty = \"\"\n");
	if (!r)
		return;
	check_str(r, "s", "tab\there \"q\" back\\slash \xc3\xa9 \xf0\x9f\x98\x80 \b\f\r\n");
	check_str(r, "lit", "C:\\Users\\nodejs");
	check_str(r, "ml", "line one\n  line two");
	check_str(r, "cont", "The quick brown fox.");
	check_str(r, "quotes", "two \"\" here\"\"");
	check_str(r, "mll", "raw \\n stays\n");
	check_str(r, "mllq", "it's''");
	check_str(r, "crlf", "a\nb");
	check_str(r, "empty", "");
	/* str_line: where the text starts (after a trimmed newline) */
	const struct toml_node *ml = toml_get(r, "ml"), *s = toml_get(r, "s"), *lit = toml_get(r, "lit");
	CHECK(ml && ml->line == 3 && ml->col == 6 && ml->str_line == 4 && ml->str_kind == TOML_STR_ML_BASIC);
	CHECK(s && s->str_line == 1 && s->str_kind == TOML_STR_BASIC);
	CHECK(lit && lit->str_kind == TOML_STR_LITERAL);
	const struct toml_node *mll = toml_get(r, "mll"), *mllq = toml_get(r, "mllq");
	CHECK(mll && mll->str_kind == TOML_STR_ML_LITERAL && mll->str_line == 13);
	CHECK(mllq && mllq->str_line == 15);
	toml_free(r);
}

static void test_keys(void)
{
	struct toml_node *r = parse_ok("bare_key-1 = 1\n\"quoted key\" = 2\n'lit.key' = 3\n"
				       "a.b.c = 4\nsite.\"google.com\" = true\n x . y = 5\n\"\" = 6\n1234 = 7\n");
	if (!r)
		return;
	check_int(r, "bare_key-1", 1);
	check_int(r, "quoted key", 2);
	const struct toml_node *lk = toml_get(r, "lit.key");
	CHECK(lk && lk->v.i == 3);
	check_int(r, "a.b.c", 4);
	const struct toml_node *site = toml_get(r, "site");
	CHECK(site && toml_get(site, "google.com") && toml_get(site, "google.com")->type == TOML_BOOL);
	check_int(r, "x.y", 5);
	const struct toml_node *empty = toml_get(r, "");
	CHECK(empty && empty->v.i == 6);
	check_int(r, "1234", 7);
	/* positions of the key and its value */
	const struct toml_node *y = path_get(r, "x.y");
	CHECK(y && y->key_line == 6 && y->key_col == 6 && y->line == 6 && y->col == 10);
	CHECK(toml_get(r, "nope") == NULL && toml_get(y, "x") == NULL);
	toml_free(r);
}

static void test_arrays_inline(void)
{
	struct toml_node *r = parse_ok("a = [ 1, 2, 3 ]\n"
				       "b = [\n  \"x\", # a comment\n  # another\n  'y',\n]\n"
				       "c = [ [1, 2], [\"a\", 'b'], [] ]\n"
				       "d = [1, \"mixed\", 2.5, true, {k = 1}]\n"
				       "e = []\n"
				       "p = { x = 1, y.z = 2, s = \"t\" }\n"
				       "q = {}\n");
	if (!r)
		return;
	const struct toml_node *a = toml_get(r, "a"), *b = toml_get(r, "b"), *c = toml_get(r, "c");
	CHECK(a && a->type == TOML_ARRAY && a->n_items == 3 && a->items[2]->v.i == 3);
	CHECK(b && b->n_items == 2 && strcmp(b->items[1]->v.s, "y") == 0 && b->items[1]->line == 5);
	CHECK(c && c->n_items == 3 && c->items[0]->n_items == 2 && c->items[2]->n_items == 0);
	const struct toml_node *d = toml_get(r, "d");
	CHECK(d && d->n_items == 5 && d->items[4]->type == TOML_TABLE && toml_get(d->items[4], "k"));
	CHECK(toml_get(r, "e") && toml_get(r, "e")->n_items == 0);
	check_int(r, "p.x", 1);
	check_int(r, "p.y.z", 2);
	check_str(r, "p.s", "t");
	CHECK(toml_get(r, "q") && toml_get(r, "q")->type == TOML_TABLE && toml_get(r, "q")->n_items == 0);
	toml_free(r);
}

static void test_tables(void)
{
	struct toml_node *r = parse_ok("top = 0\n"
				       "[table]\nk = 1\n"
				       "[ dog . \"tater.man\" ]\ntype = 'pug'\n"
				       "[x.y.z.w]\n[x]\nhere = 1\n"
				       "[fruit]\napple.color = \"red\"\napple.taste.sweet = true\n"
				       "[fruit.apple.texture]\nsmooth = true\n");
	if (!r)
		return;
	check_int(r, "top", 0);
	check_int(r, "table.k", 1);
	const struct toml_node *dog = toml_get(r, "dog");
	CHECK(dog && toml_get(dog, "tater.man") && toml_get(toml_get(dog, "tater.man"), "type"));
	CHECK(path_get(r, "x.y.z.w") && path_get(r, "x.y.z.w")->type == TOML_TABLE);
	check_int(r, "x.here", 1);
	check_str(r, "fruit.apple.color", "red");
	CHECK(path_get(r, "fruit.apple.texture.smooth") != NULL);
	const struct toml_node *t = toml_get(r, "table");
	CHECK(t && t->line == 2 && t->col == 1);
	toml_free(r);

	r = parse_ok("[[fruit]]\nname = \"apple\"\n[fruit.physical]\ncolor = \"red\"\n"
		     "[[fruit.variety]]\nname = \"red delicious\"\n[[fruit.variety]]\nname = \"granny smith\"\n"
		     "[[fruit]]\nname = \"banana\"\n[[fruit.variety]]\nname = \"plantain\"\n");
	if (!r)
		return;
	const struct toml_node *fruit = toml_get(r, "fruit");
	CHECK(fruit && fruit->type == TOML_ARRAY && fruit->aot && fruit->n_items == 2);
	if (fruit && fruit->n_items == 2) {
		check_str(fruit->items[0], "physical.color", "red");
		const struct toml_node *v0 = toml_get(fruit->items[0], "variety");
		const struct toml_node *v1 = toml_get(fruit->items[1], "variety");
		CHECK(v0 && v0->n_items == 2 && v1 && v1->n_items == 1);
		check_str(fruit->items[1], "name", "banana");
		CHECK(fruit->items[1]->line == 9);
	}
	toml_free(r);

	/* comments, blank lines, CRLF and a BOM */
	r = parse_ok("\xEF\xBB\xBF# head\r\n\r\na = 1 # tail\r\n[t] # c\r\nb = 'x'\r\n");
	if (r) {
		check_int(r, "a", 1);
		check_str(r, "t.b", "x");
		CHECK(path_get(r, "t.b")->line == 5);
		toml_free(r);
	}
	r = parse_ok("");
	CHECK(r && r->type == TOML_TABLE && r->n_items == 0);
	toml_free(r);
}

static void test_errors_tables(void)
{
	parse_err("a = 1\na = 2\n", "t.toml:2:1: ", "duplicate key 'a' (first defined at line 1:1)");
	parse_err("[a]\nx = 1\n[a]\n", "t.toml:3:2: ", "table 'a' is defined twice");
	parse_err("[a.b]\n[ a . b ]\n", "t.toml:2:7: ", "defined twice");
	parse_err("[fruit]\napple.color = 1\n[fruit.apple]\n", "t.toml:3:8: ", "defined twice");
	parse_err("[a.b.c]\nz = 9\n[a]\nb.c.t = 1\n", "t.toml:4:1: ", "defined by a [header]");
	parse_err("a = 1\na.b = 2\n", "t.toml:2:1: ", "'a' is already defined at line 1:1 (integer), not a table");
	parse_err("a = 1\n[a.b]\n", "t.toml:2:2: ", "not a table");
	parse_err("a = {x = 1}\na.y = 2\n", "t.toml:2:1: ", "inline table 'a' (line 1) cannot be extended");
	parse_err("a = {x = 1}\n[a.b]\n", "t.toml:2:2: ", "cannot be extended");
	parse_err("[a]\n[[a]]\n", "t.toml:2:3: ", "not an array of tables");
	parse_err("a = [1]\n[[a]]\n", "t.toml:2:3: ", "(array), not an array of tables");
	parse_err("[[a]]\n[a]\n", "t.toml:2:2: ", "'a' is already defined at line 1:3 (array of tables), not a table");
	parse_err("a = {x = 1, x = 2}\n", "t.toml:1:13: ", "duplicate key 'x'");
}

static void test_errors_strings(void)
{
	parse_err("a = \"abc", "t.toml:1:5: ", "unterminated string");
	parse_err("a = \"\"\"abc\n", "t.toml:1:5: ", "unterminated string");
	parse_err("a = 'abc\n'", "t.toml:1:9: ", "newline in a one-line string");
	parse_err("a = \"x\\q\"", "t.toml:1:7: ", "invalid escape sequence '\\q'");
	parse_err("a = \"\\uD800\"", "t.toml:1:6: ", "not a Unicode scalar value");
	parse_err("a = \"\\u12\"", "t.toml:1:6: ", "needs 4 hex digits");
	parse_err("a = \"\\u0000\"", "t.toml:1:6: ", "NUL");
	parse_err("a = \"x\x01\"", "t.toml:1:7: ", "control character U+0001");
	parse_err("a = \"\"\"x \\ y\"\"\"", "t.toml:1:10: ", "must end the line");
	parse_err("a = \"\"\"x\"\"\"\"\"\"", "t.toml:1:9: ", "too many quotes");
	parse_err("\"\"\"k\"\"\" = 1", "t.toml:1:1: ", "multi-line string cannot be a key");
	parse_err("k = 1 # bell\x07\n", "t.toml:1:13: ", "control character U+0007 in a comment");
	/* columns count characters, not bytes */
	parse_err("a = \"\xc3\xa9\" x", "t.toml:1:9: ", "expected the end of the line");
	parse_err_n("a = 1\n\0", 7, "t.toml:2:1: ", "NUL byte");
}

static void test_errors_values(void)
{
	parse_err("a = 01", "t.toml:1:5: ", "leading zeros");
	parse_err("a = 1__2", "t.toml:1:5: ", "invalid number '1__2'");
	parse_err("a = 1_", "t.toml:1:5: ", "invalid number");
	parse_err("a = 0x", "t.toml:1:5: ", "invalid number '0x'");
	parse_err("a = 0xG1", "t.toml:1:5: ", "invalid number");
	parse_err("a = 1.", "t.toml:1:5: ", "invalid number");
	parse_err("a = 1e", "t.toml:1:5: ", "invalid number");
	parse_err("a = 99999999999999999999", "t.toml:1:5: ", "out of range");
	parse_err("a = 0x8000000000000000", "t.toml:1:5: ", "out of range");
	parse_err("d = 1979-05-27", "t.toml:1:5: ", "dates and times are not supported");
	parse_err("t = 07:32:00", "t.toml:1:5: ", "dates and times are not supported");
	parse_err("a = hello", "t.toml:1:5: ", "strings need quotes");
	parse_err("a = truex", "t.toml:1:5: ", "expected a value");
	parse_err("a = \n", "t.toml:1:5: ", "expected a value");
	parse_err("a = # c\n", "t.toml:1:5: ", "expected a value");
	parse_err("a 1", "t.toml:1:3: ", "expected '=' after key 'a'");
	parse_err("= 1", "t.toml:1:1: ", "expected a key, found '='");
	parse_err("a. = 1", "t.toml:1:4: ", "expected a key");
	parse_err("a = 1 2", "t.toml:1:7: ", "expected the end of the line after a value");
	parse_err("[t] x = 1", "t.toml:1:5: ", "after a table header");
	parse_err("a = [1 2]", "t.toml:1:8: ", "expected ',' or ']' in array");
	parse_err("a = [1,\n2", "t.toml:1:5: ", "unterminated array");
	parse_err("a = [,]", "t.toml:1:6: ", "expected a value");
	parse_err("a = {x = 1,\ny = 2}", "t.toml:1:12: ", "inline tables must fit on one line");
	parse_err("a = {x = 1,}", "t.toml:1:12: ", "expected a key, found '}'");
	parse_err("a = {x = 1 y = 2}", "t.toml:1:12: ", "expected ',' or '}'");
	parse_err("[a\nx = 1", "t.toml:1:3: ", "expected ']' to close the table header");
	parse_err("[[a]\n", "t.toml:1:4: ", "expected ']]'");
	parse_err("[]\n", "t.toml:1:2: ", "expected a key, found ']'");
	parse_err("\xc3\xa9 = 1", "t.toml:1:1: ", "expected a key");
}

static void test_limits(void)
{
	char buf[256];
	strcpy(buf, "a = ");
	for (int i = 0; i < 40; i++)
		strcat(buf, "[");
	/* the 33rd '[' (col 5 + 32) is one level too deep */
	parse_err(buf, "t.toml:1:37: ", "nested deeper than 32 levels");
	strcpy(buf, "k");
	for (int i = 0; i < 40; i++)
		strcat(buf, ".k");
	strcat(buf, " = 1");
	parse_err(buf, "t.toml:1:", "more than 32 dotted parts");
	/* many keys in one table hit the per-table limit, not quadratic time */
	size_t cap = 20 * (TOML_MAX_TABLE_KEYS + 2), n = 0;
	char *big = malloc(cap);
	for (int i = 0; i <= TOML_MAX_TABLE_KEYS; i++)
		n += (size_t)snprintf(big + n, cap - n, "k%d = %d\n", i, i);
	char where[64];
	snprintf(where, sizeof where, "t.toml:%d:1: ", TOML_MAX_TABLE_KEYS + 1);
	parse_err(big, where, "too many keys");
	free(big);
	/* and the document as a whole has a value limit */
	cap = 8 * (TOML_MAX_NODES + 2);
	big = malloc(cap);
	n = (size_t)snprintf(big, cap, "a = [");
	for (int i = 0; i < TOML_MAX_NODES; i++)
		n += (size_t)snprintf(big + n, cap - n, "%s", i % 8 == 7 ? "1,\n" : "1,");
	snprintf(big + n, cap - n, "]\n");
	parse_err(big, "t.toml:", "more than 65536 values in one document");
	free(big);
}

int main(void)
{
	test_scalars();
	test_strings();
	test_keys();
	test_arrays_inline();
	test_tables();
	test_errors_tables();
	test_errors_strings();
	test_errors_values();
	test_limits();
	return testlib_report();
}
