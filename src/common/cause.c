#include "common/cause.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* malloc'd, or NULL when out of memory. */
static char *cause_vformat(const char *fmt, va_list ap)
{
	char *s;
	return vasprintf(&s, fmt, ap) < 0 ? NULL : s;
}

int cause_set(char **cause, const char *fmt, ...)
{
	if (!cause)
		return -1;
	va_list ap;
	va_start(ap, fmt);
	char *s = cause_vformat(fmt, ap);
	va_end(ap);
	free(*cause);
	*cause = s;
	return -1;
}

int cause_wrap(char **cause, const char *fmt, ...)
{
	if (!cause)
		return -1;
	va_list ap;
	va_start(ap, fmt);
	char *prefix = cause_vformat(fmt, ap);
	va_end(ap);
	char *s = NULL;
	if (prefix && asprintf(&s, "%s: %s", prefix, *cause ? *cause : "unknown error") < 0)
		s = NULL;
	free(prefix);
	if (s) {
		free(*cause);
		*cause = s;
	}
	return -1;
}
