/* Code objects out of HIP images (see amdgpu_image.h). */
#include "engine/amdgpu/amdgpu_image.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"
#include "engine/amdgpu/amdgpu_bundle.h"
#include "engine/amdgpu/amdgpu_elf.h"
#include "engine/image/elf_image.h"
#include "engine/image/image_bytes.h"

/* Bundles in a .hip_fatbin section start on this boundary. */
#define HIP_FATBIN_ALIGN 4096

int amdgpu_image_is(const uint8_t *p, size_t avail)
{
	return amdgpu_elf_is(p, avail) || amdgpu_bundle_kind(p, avail) != 0;
}

static int objects_push(struct amdgpu_objects *o, const struct amdgpu_object *obj, char **cause)
{
	if (o->n == o->cap) {
		int cap = o->cap ? o->cap * 2 : 16;
		struct amdgpu_object *v = realloc(o->v, (size_t)cap * sizeof *v);
		if (!v)
			return cause_set(cause, "out of memory listing code objects");
		o->v = v;
		o->cap = cap;
	}
	o->v[o->n++] = *obj;
	return 0;
}

static int objects_own(struct amdgpu_objects *o, uint8_t *buf, char **cause)
{
	uint8_t **v = realloc(o->owned, (size_t)(o->n_owned + 1) * sizeof *v);
	if (!v) {
		free(buf);
		return cause_set(cause, "out of memory listing code objects");
	}
	o->owned = v;
	o->owned[o->n_owned++] = buf;
	return 0;
}

static int objects_bare(struct amdgpu_objects *o, const uint8_t *p, size_t size, char **cause)
{
	struct amdgpu_elf e;
	if (amdgpu_elf_open(p, size, &e, cause) < 0)
		return -1;
	struct amdgpu_object obj = { .target = e.target, .data = p, .size = size };
	amdgpu_target_format(&e.target, obj.id, sizeof obj.id);
	amdgpu_elf_done(&e);
	return objects_push(o, &obj, cause);
}

/* One bundle at p; *extent gets the bytes it occupies. */
static int objects_bundle(struct amdgpu_objects *o, const uint8_t *p, size_t n, size_t *extent, char **cause)
{
	struct amdgpu_bundle b;
	if (amdgpu_bundle_parse(p, n, &b, cause) < 0)
		return cause_wrap(cause, "bundle %d", o->bundles);
	int r = 0;
	for (int i = 0; i < b.n && r == 0; i++) {
		struct amdgpu_object obj = { .data = b.v[i].data, .size = b.v[i].size, .bundle = o->bundles,
					     .compressed = b.compressed != 0 };
		snprintf(obj.id, sizeof obj.id, "%s", b.v[i].id);
		if (!strstr(obj.id, "amdgcn-") || !obj.size)
			continue; /* the host entry */
		if (amdgpu_target_parse(obj.id, &obj.target, cause) < 0)
			r = cause_wrap(cause, "bundle %d entry '%s'", o->bundles, obj.id);
		else
			r = objects_push(o, &obj, cause);
	}
	*extent = b.extent;
	if (r == 0 && b.inflated) {
		r = objects_own(o, b.inflated, cause);
		b.inflated = NULL;
	}
	amdgpu_bundle_done(&b);
	o->bundles++;
	return r;
}

/* Bundles back to back, each padded with zeros to the next 4096 bytes. */
static int objects_section(struct amdgpu_objects *o, const uint8_t *p, size_t n, char **cause)
{
	size_t at = 0;
	while (at < n) {
		if (p[at] == 0) {
			at++;
			continue;
		}
		size_t extent = 0;
		if (objects_bundle(o, p + at, n - at, &extent, cause) < 0)
			return cause_wrap(cause, ".hip_fatbin byte %zu", at);
		if (!extent)
			return cause_set(cause, ".hip_fatbin: empty bundle at byte %zu", at);
		at += extent;
	}
	return 0;
}

static int objects_host(struct amdgpu_objects *o, const uint8_t *p, size_t size, char **cause)
{
	const uint8_t *sec;
	size_t len;
	int r = elf_image_section(p, size, ".hip_fatbin", &sec, &len, cause);
	if (r < 0)
		return -1;
	if (r > 0 || len == 0)
		return cause_set(cause, "host ELF without a .hip_fatbin section (no HIP device code)");
	return objects_section(o, sec, len, cause);
}

static int objects_collect(struct amdgpu_objects *o, const uint8_t *p, size_t size, char **cause)
{
	if (size == 0 || amdgpu_bundle_kind(p, size) == 3) {
		const uint8_t *b;
		size_t len, extent;
		if (amdgpu_bundle_kind(p, size ? size : AMDGPU_HIPF_SIZE) != 3) {
			len = amdgpu_bundle_extent(p);
			return len ? objects_bundle(o, p, len, &extent, cause)
				   : cause_set(cause, "not a HIP fat binary wrapper or offload bundle");
		}
		if (amdgpu_bundle_unwrap(p, size, &b, &len, cause) < 0)
			return -1;
		return objects_bundle(o, b, len, &extent, cause);
	}
	if (amdgpu_elf_is(p, size))
		return objects_bare(o, p, size, cause);
	if (amdgpu_bundle_kind(p, size) != 0)
		return objects_section(o, p, size, cause);
	if (elf_image_is_elf64(p, size))
		return objects_host(o, p, size, cause);
	return cause_set(cause, "not an AMDGPU code object, offload bundle or host ELF with HIP code");
}

int amdgpu_image_objects(const uint8_t *p, size_t size, struct amdgpu_objects *out, char **cause)
{
	memset(out, 0, sizeof *out);
	if (objects_collect(out, p, size, cause) < 0) {
		amdgpu_image_objects_done(out);
		return -1;
	}
	if (out->n == 0) {
		amdgpu_image_objects_done(out);
		return cause_set(cause, "no AMDGPU code object in the image (only host entries)");
	}
	return 0;
}

void amdgpu_image_objects_done(struct amdgpu_objects *o)
{
	for (int i = 0; i < o->n_owned; i++)
		free(o->owned[i]);
	free(o->owned);
	free(o->v);
	memset(o, 0, sizeof *o);
}

int amdgpu_image_pick(const struct amdgpu_objects *o, const struct amdgpu_target *dev, char **cause)
{
	int best = -1, best_score = -1;
	char have[512] = "";
	size_t used = 0;
	for (int i = 0; i < o->n; i++) {
		int s = amdgpu_target_match(dev, &o->v[i].target);
		if (s > best_score) {
			best = i;
			best_score = s;
		}
		char t[64];
		amdgpu_target_format(&o->v[i].target, t, sizeof t);
		if (used < sizeof have - 1)
			used += (size_t)snprintf(have + used, sizeof have - used, "%s%s", i ? ", " : "", t);
	}
	if (best < 0) {
		char want[64];
		amdgpu_target_format(dev, want, sizeof want);
		return cause_set(cause, "no code object for %s (the image holds %s)", want, have);
	}
	return best;
}
