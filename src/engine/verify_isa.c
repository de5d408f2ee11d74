/* verify_probe(): the verifier for a probe's isa, from a table, so the PTX
 * verifier (probe/verify.c) and the GCN one (amdgpu/amdgpu_verify.c), which
 * shares its error and SAVE helpers, stay apart. A new ISA adds a row. */
#include "common/cause.h"
#include "engine/amdgpu/amdgpu_verify.h"
#include "engine/probe/verify.h"

static const struct {
	enum probe_isa isa;
	int (*verify)(const struct probe *p, char **cause);
} verifiers[] = {
	{ PROBE_ISA_PTX, verify_probe_ptx },
	{ PROBE_ISA_GCN, amdgpu_verify_probe },
};

int verify_probe(const struct probe *p, char **cause)
{
	for (unsigned i = 0; i < sizeof verifiers / sizeof verifiers[0]; i++)
		if (verifiers[i].isa == p->isa)
			return verifiers[i].verify(p, cause);
	return cause_set(cause, "%s: no verifier for this probe's isa", p->path ? p->path : p->name);
}
