/* AMDGPU processor table and target IDs (see amdgpu_target.h). The machine
 * numbers follow LLVM 19's EF_AMDGPU_MACH_AMDGCN_* list; the corpus test
 * checks our names against llvm-readelf's for every object it holds. */
#include "engine/amdgpu/amdgpu_target.h"

#include <stdio.h>
#include <string.h>

#include "common/cause.h"

struct amdgpu_proc {
	uint32_t mach;
	const char *name;
	enum amdgpu_family family;
};

static const struct amdgpu_proc amdgpu_procs[] = {
	{ 0x020, "gfx600", AMDGPU_FAMILY_GFX6 },   { 0x021, "gfx601", AMDGPU_FAMILY_GFX6 },
	{ 0x03a, "gfx602", AMDGPU_FAMILY_GFX6 },   { 0x022, "gfx700", AMDGPU_FAMILY_GFX6 },
	{ 0x023, "gfx701", AMDGPU_FAMILY_GFX6 },   { 0x024, "gfx702", AMDGPU_FAMILY_GFX6 },
	{ 0x025, "gfx703", AMDGPU_FAMILY_GFX6 },   { 0x026, "gfx704", AMDGPU_FAMILY_GFX6 },
	{ 0x03b, "gfx705", AMDGPU_FAMILY_GFX6 },   { 0x028, "gfx801", AMDGPU_FAMILY_GFX8 },
	{ 0x029, "gfx802", AMDGPU_FAMILY_GFX8 },   { 0x02a, "gfx803", AMDGPU_FAMILY_GFX8 },
	{ 0x03c, "gfx805", AMDGPU_FAMILY_GFX8 },   { 0x02b, "gfx810", AMDGPU_FAMILY_GFX8 },
	{ 0x02c, "gfx900", AMDGPU_FAMILY_GFX9 },   { 0x02d, "gfx902", AMDGPU_FAMILY_GFX9 },
	{ 0x02e, "gfx904", AMDGPU_FAMILY_GFX9 },   { 0x02f, "gfx906", AMDGPU_FAMILY_GFX9 },
	{ 0x030, "gfx908", AMDGPU_FAMILY_GFX9 },   { 0x031, "gfx909", AMDGPU_FAMILY_GFX9 },
	{ 0x032, "gfx90c", AMDGPU_FAMILY_GFX9 },   { 0x03f, "gfx90a", AMDGPU_FAMILY_GFX90A },
	{ 0x040, "gfx940", AMDGPU_FAMILY_GFX94 },  { 0x04b, "gfx941", AMDGPU_FAMILY_GFX94 },
	{ 0x04c, "gfx942", AMDGPU_FAMILY_GFX94 },  { 0x04f, "gfx950", AMDGPU_FAMILY_GFX94 },
	{ 0x033, "gfx1010", AMDGPU_FAMILY_GFX10_1 }, { 0x034, "gfx1011", AMDGPU_FAMILY_GFX10_1 },
	{ 0x035, "gfx1012", AMDGPU_FAMILY_GFX10_1 }, { 0x042, "gfx1013", AMDGPU_FAMILY_GFX10_1 },
	{ 0x036, "gfx1030", AMDGPU_FAMILY_GFX10_3 }, { 0x037, "gfx1031", AMDGPU_FAMILY_GFX10_3 },
	{ 0x038, "gfx1032", AMDGPU_FAMILY_GFX10_3 }, { 0x039, "gfx1033", AMDGPU_FAMILY_GFX10_3 },
	{ 0x03e, "gfx1034", AMDGPU_FAMILY_GFX10_3 }, { 0x03d, "gfx1035", AMDGPU_FAMILY_GFX10_3 },
	{ 0x045, "gfx1036", AMDGPU_FAMILY_GFX10_3 }, { 0x041, "gfx1100", AMDGPU_FAMILY_GFX11 },
	{ 0x046, "gfx1101", AMDGPU_FAMILY_GFX11 },   { 0x047, "gfx1102", AMDGPU_FAMILY_GFX11 },
	{ 0x044, "gfx1103", AMDGPU_FAMILY_GFX11 },   { 0x043, "gfx1150", AMDGPU_FAMILY_GFX11 },
	{ 0x04a, "gfx1151", AMDGPU_FAMILY_GFX11 },   { 0x055, "gfx1152", AMDGPU_FAMILY_GFX11 },
	{ 0x058, "gfx1153", AMDGPU_FAMILY_GFX11 },   { 0x048, "gfx1200", AMDGPU_FAMILY_GFX12 },
	{ 0x04e, "gfx1201", AMDGPU_FAMILY_GFX12 },   { 0x051, "gfx9-generic", AMDGPU_FAMILY_GFX9 },
	{ 0x05f, "gfx9-4-generic", AMDGPU_FAMILY_GFX94 }, { 0x052, "gfx10-1-generic", AMDGPU_FAMILY_GFX10_1 },
	{ 0x053, "gfx10-3-generic", AMDGPU_FAMILY_GFX10_3 }, { 0x054, "gfx11-generic", AMDGPU_FAMILY_GFX11 },
	{ 0x059, "gfx12-generic", AMDGPU_FAMILY_GFX12 },
};

#define AMDGPU_NPROCS (sizeof amdgpu_procs / sizeof amdgpu_procs[0])

const char *amdgpu_target_mach_name(uint32_t mach)
{
	for (size_t i = 0; i < AMDGPU_NPROCS; i++)
		if (amdgpu_procs[i].mach == mach)
			return amdgpu_procs[i].name;
	return NULL;
}

static const struct amdgpu_proc *amdgpu_target_find(const char *proc)
{
	for (size_t i = 0; i < AMDGPU_NPROCS; i++)
		if (strcmp(amdgpu_procs[i].name, proc) == 0)
			return &amdgpu_procs[i];
	return NULL;
}

uint32_t amdgpu_target_mach(const char *proc)
{
	const struct amdgpu_proc *p = amdgpu_target_find(proc);
	return p ? p->mach : 0;
}

enum amdgpu_family amdgpu_target_family(const char *proc)
{
	const struct amdgpu_proc *p = amdgpu_target_find(proc);
	return p ? p->family : AMDGPU_FAMILY_UNKNOWN;
}

const char *amdgpu_family_name(enum amdgpu_family f)
{
	static const char *const names[] = { "unknown", "gfx6", "gfx8", "gfx9", "gfx90a",
					     "gfx94", "gfx10.1", "gfx10.3", "gfx11", "gfx12" };
	return (unsigned)f < sizeof names / sizeof names[0] ? names[f] : "unknown";
}

int amdgpu_family_has_agprs(enum amdgpu_family f)
{
	return f == AMDGPU_FAMILY_GFX90A || f == AMDGPU_FAMILY_GFX94;
}

/* One ":feature+" / ":feature-" item. */
static int amdgpu_target_feature(struct amdgpu_target *t, const char *f, size_t n, char **cause)
{
	if (n < 2 || (f[n - 1] != '+' && f[n - 1] != '-'))
		return cause_set(cause, "target feature '%.*s' wants a trailing + or -", (int)n, f);
	enum amdgpu_feature v = f[n - 1] == '+' ? AMDGPU_FEAT_ON : AMDGPU_FEAT_OFF;
	if (n - 1 == 5 && memcmp(f, "xnack", 5) == 0)
		t->xnack = v;
	else if (n - 1 == 7 && memcmp(f, "sramecc", 7) == 0)
		t->sramecc = v;
	else
		return cause_set(cause, "unknown target feature '%.*s' (known: xnack, sramecc)", (int)n, f);
	return 0;
}

int amdgpu_target_parse(const char *s, struct amdgpu_target *t, char **cause)
{
	memset(t, 0, sizeof *t);
	/* bundle IDs: "<kind>-<triple>-<target>", the triple ending in
	 * "amdhsa-" with an environment field that is usually empty */
	const char *hsa = strstr(s, "amdhsa-");
	if (hsa) {
		s = hsa + 7;
		if (*s == '-')
			s++;
	}
	size_t n = strcspn(s, ":");
	if (n == 0 || n >= sizeof t->proc)
		return cause_set(cause, "no processor name in target ID '%s'", s);
	memcpy(t->proc, s, n);
	t->proc[n] = 0;
	if (!amdgpu_target_find(t->proc))
		return cause_set(cause, "unknown AMDGPU processor '%s'", t->proc);
	for (s += n; *s == ':';) {
		s++;
		n = strcspn(s, ":");
		if (amdgpu_target_feature(t, s, n, cause) < 0)
			return -1;
		s += n;
	}
	return 0;
}

void amdgpu_target_format(const struct amdgpu_target *t, char *buf, unsigned len)
{
	snprintf(buf, len, "%s%s%s", t->proc,
		 t->sramecc == AMDGPU_FEAT_ON ? ":sramecc+" : t->sramecc == AMDGPU_FEAT_OFF ? ":sramecc-" : "",
		 t->xnack == AMDGPU_FEAT_ON ? ":xnack+" : t->xnack == AMDGPU_FEAT_OFF ? ":xnack-" : "");
}

static int amdgpu_feature_fits(enum amdgpu_feature dev, enum amdgpu_feature code)
{
	if (code == AMDGPU_FEAT_ANY || code == AMDGPU_FEAT_UNSUPPORTED)
		return 0;
	return dev == code ? 1 : -1;
}

int amdgpu_target_match(const struct amdgpu_target *dev, const struct amdgpu_target *code)
{
	if (strcmp(dev->proc, code->proc) != 0)
		return -1;
	int x = amdgpu_feature_fits(dev->xnack, code->xnack), s = amdgpu_feature_fits(dev->sramecc, code->sramecc);
	return x < 0 || s < 0 ? -1 : x + s;
}

void amdgpu_target_tool_args(const char *proc, char mcpu[48], char mattr[48])
{
	size_t n = strcspn(proc, "+");
	snprintf(mcpu, 48, "--mcpu=%.*s", (int)(n < 24 ? n : 24), proc);
	snprintf(mattr, 48, "%s", strcmp(proc + n, "+w64") == 0 ? "--mattr=+wavefrontsize64" : "");
}
