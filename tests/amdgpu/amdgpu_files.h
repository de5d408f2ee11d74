/* Shared by the AMDGPU test tools: files mapped read-only, and every code
 * object a file holds (amdgpu_image_objects). Failures are printed as
 * "FAIL FILE: cause" on stdout, where the regress scripts look. */
#ifndef NTOP_TEST_AMDGPU_FILES_H
#define NTOP_TEST_AMDGPU_FILES_H
#include <stddef.h>
#include <stdint.h>

#include "engine/amdgpu/amdgpu_image.h"

struct amdgpu_files {
	uint8_t *p;
	size_t len;
	struct amdgpu_objects o;
};

/* The whole file, mapped (NULL and a message on stderr when unreadable). */
uint8_t *amdgpu_files_map(const char *path, size_t *len);
int amdgpu_files_open(const char *path, struct amdgpu_files *fo);
void amdgpu_files_close(struct amdgpu_files *fo);
/* Writes len bytes to path; 0, or -1 after printing why. */
int amdgpu_files_write(const char *path, const void *p, size_t len);

#endif
