/* Demangling for display (demangle.h). __cxa_demangle is declared here
 * rather than taken from <cxxabi.h>, which is C++ only; libstdc++ is linked
 * into ntop_common for it. */
#include "common/demangle.h"

#include <stdlib.h>
#include <string.h>

char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

char *demangle(const char *mangled)
{
	if (!mangled)
		return NULL;
	/* Only "_Z" names are C++: __cxa_demangle would also "demangle" a plain
	 * "i" or "f" as a type name. */
	if (strncmp(mangled, "_Z", 2) == 0) {
		int status = -1;
		char *s = __cxa_demangle(mangled, NULL, NULL, &status);
		if (s && status == 0)
			return s;
		free(s);
	}
	return strdup(mangled);
}

/* Drops trailing " const", " volatile", " &", " &&" qualifiers of a member
 * function; returns the new length. */
static size_t demangle_strip_qualifiers(const char *s, size_t n)
{
	static const char *const quals[] = { " const", " volatile", " &&", " &" };
	int again = 1;
	while (again) {
		again = 0;
		for (size_t i = 0; i < sizeof quals / sizeof quals[0]; i++) {
			size_t q = strlen(quals[i]);
			if (n > q && memcmp(s + n - q, quals[i], q) == 0) {
				n -= q;
				again = 1;
			}
		}
	}
	return n;
}

/* Start of the parenthesised group that ends at s[n-1] == ')', or n. */
static size_t demangle_group_start(const char *s, size_t n)
{
	int depth = 0;
	for (size_t i = n; i-- > 0;) {
		if (s[i] == ')')
			depth++;
		else if (s[i] == '(' && --depth == 0)
			return i;
	}
	return n;
}

char *demangle_base(const char *mangled)
{
	char *s = demangle(mangled);
	if (!s || strncmp(mangled, "_Z", 2) != 0)
		return s;
	size_t n = demangle_strip_qualifiers(s, strlen(s));
	if (n > 0 && s[n - 1] == ')') {
		size_t start = demangle_group_start(s, n);
		if (start > 0 && start < n)
			s[start] = 0;
	}
	return s;
}
