/* `ntop instrument` on AMD inputs: a code object, an offload bundle (plain
 * or compressed), a HIPF wrapper, or a HIP executable or library with a
 * .hip_fatbin section. Picks one code object (--arch, else the first),
 * the kernel by the same forgiving match as for PTX, loads GCN probes
 * (a bare name is probes/amd/NAME.toml), probes the kernel
 * (amdgpu_instrument: inject, write, check) and writes the probed code
 * object. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "engine/amdgpu/amdgpu_image.h"
#include "engine/amdgpu/amdgpu_instrument.h"
#include "engine/image/elf_image.h"

int cli_is_amd_image(const void *img, size_t size)
{
	const uint8_t *data;
	size_t len;
	return amdgpu_image_is(img, size) || elf_image_section(img, size, ".hip_fatbin", &data, &len, NULL) == 0;
}

/* A bare probe name is the built-in GCN probe probes/amd/NAME.toml. */
static int amd_load_probe(const char *arg, struct probe **out)
{
	char *cause = NULL, *path = NULL;
	if (!strchr(arg, '/') && !strstr(arg, ".toml")) {
		char *dir = cli_probes_dir();
		if (dir && asprintf(&path, "%s/amd/%s.toml", dir, arg) < 0)
			path = NULL;
		free(dir);
		if (!path) {
			cli_err("probe %s: no built-in probes directory found", arg);
			return -1;
		}
	} else {
		path = strdup(arg);
	}
	int r = path ? cli_probe_load_verified(path, out, &cause) : -1;
	if (r < 0)
		cli_err("probe %s: %s", arg, cause ? cause : "cannot load");
	free(cause);
	free(path);
	return r;
}

/* The object --arch names (a target ID), else the first. */
static int amd_pick(const struct cli_amd_instrument *o, const struct amdgpu_objects *objs)
{
	if (!o->arch) {
		if (objs->n > 1) {
			printf("note: %d code objects (", objs->n);
			for (int i = 0; i < objs->n; i++)
				printf("%s%s", i ? ", " : "", objs->v[i].target.proc);
			printf("): probing the first; --arch picks another\n");
		}
		return 0;
	}
	struct amdgpu_target dev;
	char *cause = NULL;
	int i = amdgpu_target_parse(o->arch, &dev, &cause) < 0 ? -1 : amdgpu_image_pick(objs, &dev, &cause);
	if (i < 0)
		cli_err("--arch %s: %s", o->arch, cause ? cause : "no such target");
	free(cause);
	return i;
}

static void amd_report(const struct amdgpu_instrumented *r, const char *out, size_t len)
{
	const struct amdgpu_inject *in = &r->inj;
	const struct amdgpu_alloc *a = &in->alloc;
	printf("instructions: %d; sites: %d instrumented", r->n_insns, in->stats.sites);
	if (in->stats.sites_no_addr)
		printf(" (%d more without a plain address for ADDR/BYTES, not instrumented: %s)", in->stats.sites_no_addr,
		       in->stats.no_addr_why ? in->stats.no_addr_why : "no address operands");
	printf(", %d program ends", in->stats.exits);
	if (in->stats.clauses_dropped)
		printf(", %d s_clause hints dropped", in->stats.clauses_dropped);
	printf("\nchecked: the probed kernel disassembles to its %d instructions plus exactly %d inserted ones "
	       "(%d branches, %d s_getpc_b64 units, %d replaced hints)\n", r->check.original, r->check.inserted,
	       r->check.branches, r->check.units, r->check.replaced);
	printf("registers: s%d-s%d and v%d-v%d for the probes; the descriptor allows %u SGPRs and %u VGPRs; wave%d\n",
	       a->sgpr, a->sgpr + a->n_sgpr - 1, a->vgpr, a->vgpr + a->n_vgpr - 1, a->kd_sgprs, a->kd_vgprs, in->wave);
	printf("arguments: ntop_launch (32 B) at kernarg offset %u", in->launch_offset);
	for (int i = 0; i < in->n_maps; i++)
		printf(", ntop_map_%s at %u", in->maps[i].map.name, in->maps[i].arg_offset);
	printf("; kernarg segment %u B\n", in->kernarg_size);
	for (int i = 0; i < in->n_maps; i++) {
		const struct probe_map *m = &in->maps[i].map;
		printf("map %s (probe %s): %s, %u x %u B\n", m->name, in->maps[i].probe,
		       m->level == PROBE_LEVEL_WARP ? "per wave" : "per work-item", m->cap, m->rec_size);
	}
	printf("time: disassemble %.1f ms, inject %.1f ms, write %.1f ms, check %.1f ms\n", r->ms_disasm, r->ms_inject,
	       r->ms_write, r->ms_check);
	printf("wrote %s (%zu bytes, a %s code object)\n", out, len, r->proc);
}

static int amd_write(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0) {
		cli_err("cannot write %s", path);
		if (f)
			fclose(f);
		return -1;
	}
	return 0;
}

/* The kernel in object obj, the probes loaded: instrument and write. */
static int amd_run(const struct cli_amd_instrument *o, const struct amdgpu_object *obj, struct probe **probes)
{
	struct amdgpu_co co;
	char *cause = NULL;
	int rc = 1;
	if (amdgpu_co_open(obj->data, obj->size, &co, &cause) < 0) {
		cli_err("%s (%s): %s", o->image, obj->id, cause);
		free(cause);
		return 1;
	}
	const char **names = calloc((size_t)co.n + 1, sizeof *names);
	for (int i = 0; names && i < co.n; i++)
		names[i] = co.k[i].sym->name;
	const char *kernel = names ? cli_match_kernel(o->kernel, names, co.n, &rc) : NULL;
	if (kernel) {
		struct amdgpu_instrumented r;
		if (amdgpu_instrument(obj->data, obj->size, kernel, probes, o->n_probes, &r, &cause) < 0) {
			cli_err("instrumenting %s failed: %s", kernel, cause ? cause : "?");
			rc = 1;
		} else {
			rc = amd_write(o->out, r.obj.elf, r.obj.len) < 0 ? 1 : 0;
			if (rc == 0)
				amd_report(&r, o->out, r.obj.len);
			amdgpu_instrumented_done(&r);
		}
	}
	free(cause);
	free(names);
	amdgpu_co_done(&co);
	return rc;
}

int cmd_instrument_amd(const struct cli_amd_instrument *o, const void *img, size_t size)
{
	struct amdgpu_objects objs;
	char *cause = NULL;
	if (amdgpu_image_objects(img, size, &objs, &cause) < 0) {
		cli_err("%s: %s", o->image, cause ? cause : "no AMD code object");
		free(cause);
		return 1;
	}
	int rc = 2, pick = amd_pick(o, &objs);
	struct probe **probes = calloc((size_t)o->n_probes + 1, sizeof *probes);
	if (pick >= 0 && probes) {
		printf("image: %s (AMD, %d code object%s), object %s\n", o->image, objs.n, objs.n == 1 ? "" : "s",
		       objs.v[pick].id);
		int ok = 1;
		for (int i = 0; i < o->n_probes && ok; i++)
			ok = amd_load_probe(o->probes[i], &probes[i]) == 0;
		if (ok)
			rc = amd_run(o, &objs.v[pick], probes);
	}
	for (int i = 0; probes && i < o->n_probes; i++)
		probe_free(probes[i]);
	free(probes);
	amdgpu_image_objects_done(&objs);
	return rc;
}
