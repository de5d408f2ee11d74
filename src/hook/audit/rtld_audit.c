/* ntop's loader audit module (man 7 rtld-audit), lib/ntop/libntop_audit.so:
 * the launcher appends it to the application's LD_AUDIT so that a program
 * opening the CUDA driver, NVRTC or nvJitLink by absolute path (CuPy and
 * Numba through cuda.pathfinder, a Python wheel's copy) still reaches ntop's
 * stand-in; LD_LIBRARY_PATH only covers opens by name.
 *
 * The launcher says what to redirect in NTOP_AUDIT_MAP, one line per rule,
 * "PATTERN=STAND-IN": PATTERN an fnmatch glob on the file name being opened
 * (its last component; for an unversioned "lib*.so" named by path, the file
 * the link resolves to), STAND-IN the absolute path of ntop's library. Only
 * stand-ins whose real library the launcher found are listed.
 *
 * A rule "PATTERN>HOOK" binds instead of redirecting: for a runtime ntop
 * has no stand-in for (HIP 6 and 7: no export list of theirs is known), the
 * real library is loaded as it is, and a binding of a hooked name to it (a
 * PLT slot, a BIND_NOW relocation, a dlsym: glibc >= 2.35 reports all three
 * to la_symbind) is sent to the front (rtld_front.c), typed wrappers in
 * this module that open HOOK on their first call; every other binding keeps
 * its address. la_symbind runs once per binding, not per call: a lazy PLT
 * slot is patched after its first call as without auditing (there is no
 * la_pltenter/la_pltexit, so glibc does not switch to its profiling
 * trampolines). Bindings from the runtime itself and from ntop's libraries
 * (HOOK's directory) are never redirected.
 *
 * The stand-ins open their real library by path too, and that open must not
 * come back to them (NEUTRINO's redirect caught its own open and recursed
 * until the app crashed). They open it as "DIR/./FILE" (common/reallib.c),
 * a form no redirect applies to: the check needs nothing but the name, so it
 * holds whichever thread or library calls dlopen (a sanitizer's dlopen
 * interceptor included), and the name differs from the one the app used,
 * which the loader remembers as another name of the stand-in it was sent to
 * (an open by that same string would get the stand-in back before any
 * audit call).
 *
 * Never prints; whatever looks wrong (no map, a stand-in missing, an
 * unexpected search step) leaves the name or the binding as it was, and
 * la_version returns 0 without a rule, which unloads the module. Built
 * without sanitizers and linked against libc only: it lives in a namespace
 * of its own, loaded before the application's libraries. */
#include <fnmatch.h>
#include <limits.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "hook/audit/rtld_audit.h"

#define AUDIT_ENV "NTOP_AUDIT_MAP"
#define AUDIT_MAX_RULES 16

static struct {
	const char *pattern[AUDIT_MAX_RULES];
	const char *stand_in[AUDIT_MAX_RULES];
	int n;
	char text[8192]; /* the map, cut into rules in place */
} audit;

static int audit_regular(const char *path)
{
	struct stat st;
	return path[0] == '/' && stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* A map too long for the buffer is ignored whole, not cut. */
static void audit_parse(const char *map)
{
	size_t len = strlen(map);
	if (len >= sizeof audit.text)
		return;
	memcpy(audit.text, map, len + 1);
	for (char *line = audit.text; line && *line && audit.n < AUDIT_MAX_RULES;) {
		char *next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		char *eq = strchr(line, '='), *gt = strchr(line, '>');
		if (!eq && gt && gt != line) {
			*gt = 0;
			if (audit_regular(gt + 1))
				audit_bind_rule(line, gt + 1);
		} else if (eq && eq != line) {
			*eq = 0;
			if (audit_regular(eq + 1)) {
				audit.pattern[audit.n] = line;
				audit.stand_in[audit.n++] = eq + 1;
			}
		}
		line = next;
	}
}

__attribute__((visibility("default"))) unsigned int la_version(unsigned int version)
{
	const char *map = getenv(AUDIT_ENV);
	if (version == 0 || !map)
		return 0;
	audit_parse(map);
	if (audit.n == 0 && !audit_binding())
		return 0;
	/* la_objsearch, la_objopen, la_symbind: in every version; take the older */
	return version < LAV_CURRENT ? version : LAV_CURRENT;
}

const char *audit_base(const char *name)
{
	const char *s = strrchr(name, '/');
	return s ? s + 1 : name;
}

/* "DIR/./FILE" or "./FILE": how the stand-ins name their real library. */
static int audit_pass_through(const char *name, const char *base)
{
	size_t dir = (size_t)(base - name);
	return (dir >= 3 && memcmp(base - 3, "/./", 3) == 0) || (dir == 2 && memcmp(name, "./", 2) == 0);
}

static const char *audit_rule(const char *base)
{
	for (int i = 0; i < audit.n; i++)
		if (fnmatch(audit.pattern[i], base, 0) == 0)
			return audit.stand_in[i];
	return NULL;
}

/* The development link ("libnvrtc.so") says no version: the file it
 * resolves to does, and only the matching major may be redirected. */
static const char *audit_resolved(const char *name, const char *base, char *real)
{
	size_t n = strlen(base);
	if (base == name || n < 3 || strcmp(base + n - 3, ".so") != 0 || !realpath(name, real))
		return NULL;
	return audit_base(real);
}

int audit_name_matches(const char *pattern, const char *name)
{
	char real[PATH_MAX];
	const char *base = audit_base(name), *resolved;
	return fnmatch(pattern, base, 0) == 0 ||
	       ((resolved = audit_resolved(name, base, real)) && fnmatch(pattern, resolved, 0) == 0);
}

__attribute__((visibility("default"))) char *la_objsearch(const char *name, uintptr_t *cookie, unsigned int flag)
{
	(void)cookie;
	if (flag != LA_SER_ORIG || !name)
		return (char *)name;
	const char *base = audit_base(name);
	if (audit_pass_through(name, base))
		return (char *)name;
	char real[PATH_MAX];
	const char *to = audit_rule(base), *resolved;
	if (!to && (resolved = audit_resolved(name, base, real)))
		to = audit_rule(resolved);
	return (char *)(to ? to : name);
}
