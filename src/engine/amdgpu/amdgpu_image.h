/* Every AMDGPU code object inside what a HIP program or a user hands us: a
 * bare code object, a plain or compressed offload bundle, a HIPF wrapper
 * (live pointers only), or a host ELF (executable, shared library or
 * object) with a .hip_fatbin section of bundles back to back. Also picks
 * the object a device of a given target ID would load. */
#ifndef NTOP_AMDGPU_IMAGE_H
#define NTOP_AMDGPU_IMAGE_H
#include <stddef.h>
#include <stdint.h>

#include "engine/amdgpu/amdgpu_target.h"

struct amdgpu_object {
	char id[256];              /* bundle entry ID, or the target ID of a bare object */
	struct amdgpu_target target;
	const uint8_t *data;       /* the code object (into the image or an inflated bundle) */
	size_t size;
	int bundle;                /* which bundle it came from (0-based; 0 for a bare object) */
	int compressed;            /* its bundle was compressed */
};

struct amdgpu_objects {
	struct amdgpu_object *v;
	int n, cap;
	int bundles;               /* bundles read */
	uint8_t **owned;           /* inflated bundles the objects point into */
	int n_owned;
};

/* 1 when p looks like something amdgpu_image_objects reads: an AMDGPU ELF,
 * a bundle, a CCOB or a HIPF wrapper (a host ELF is told by its section). */
int amdgpu_image_is(const uint8_t *p, size_t avail);
/* Collects the code objects. size 0: p is a live HIPF wrapper or bundle.
 * Entries whose ID names no AMDGPU target (the empty host entry) are
 * skipped; an input without any code object fails with a cause. */
int amdgpu_image_objects(const uint8_t *p, size_t size, struct amdgpu_objects *out, char **cause);
void amdgpu_image_objects_done(struct amdgpu_objects *o);
/* Index of the object a device of target `dev` loads (most specific
 * match), or -1 with a cause listing what the image holds. */
int amdgpu_image_pick(const struct amdgpu_objects *o, const struct amdgpu_target *dev, char **cause);

#endif
