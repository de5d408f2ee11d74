/* textfit_fields: a header too wide for the terminal loses whole fields
 * from its end, never half a field. */
#include <string.h>

#include "testlib.h"
#include "viz/cellgrid.h"
#include "viz/textfit.h"

static const char *fit(const char *s, int cells)
{
	static char buf[512];
	int used = textfit_fields(s, cells, "\xe2\x80\xa6", buf, sizeof buf);
	CHECKF(used == cellgrid_utf8_len(buf) && used <= cells, "'%s' in %d: %d cells '%s'", s, cells, used, buf);
	return buf;
}

int main(void)
{
	const char *h = "4096 blocks  3.88 waves/SM  running 8.6M cyc  scheduling 1.8M cyc (17.1%)  132/132 SMs";
	CHECK(!strcmp(fit(h, 200), h));
	CHECK(!strcmp(fit(h, (int)strlen(h)), h));
	/* whole fields drop, marked */
	CHECKF(!strcmp(fit(h, 78), "4096 blocks  3.88 waves/SM  running 8.6M cyc  scheduling 1.8M cyc (17.1%) \xe2\x80\xa6"),
	       "%s", fit(h, 78));
	CHECKF(!strcmp(fit(h, 30), "4096 blocks  3.88 waves/SM \xe2\x80\xa6"), "%s", fit(h, 30));
	CHECKF(!strcmp(fit(h, 12), "4096 blocks"), "first field alone: %s", fit(h, 12));
	CHECKF(!strcmp(fit(h, 6), "4096 \xe2\x80\xa6"), "first field cut: %s", fit(h, 6));
	CHECK(!strcmp(fit("  lead  trail  ", 40), "lead  trail"));
	CHECK(!strcmp(fit("\xc2\xb5s  \xc2\xb5s", 6), "\xc2\xb5s  \xc2\xb5s")); /* cells, not bytes */
	CHECK(!strcmp(fit("\xc2\xb5s  \xc2\xb5s", 5), "\xc2\xb5s \xe2\x80\xa6"));
	CHECK(!strcmp(fit("", 10), ""));
	/* no ellipsis: nothing marks the drop, and nothing rather than half a field */
	char buf[64];
	CHECK(textfit_fields("+/- zoom  h/l pan", 10, NULL, buf, sizeof buf) == 8 && !strcmp(buf, "+/- zoom"));
	CHECK(textfit_fields("+/- zoom  h/l pan", 5, NULL, buf, sizeof buf) == 0 && !buf[0]);
	CHECK(!strcmp(fit(h, 0), ""));
	/* never more than the width, at any width */
	for (int w = 1; w < 100; w++)
		fit(h, w);
	return testlib_report();
}
