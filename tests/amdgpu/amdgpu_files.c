/* File helpers of the AMDGPU test tools (amdgpu_files.h). */
#include "amdgpu_files.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

uint8_t *amdgpu_files_map(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size == 0) {
		fprintf(stderr, "cannot read %s\n", path);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	*len = (size_t)st.st_size;
	return p == MAP_FAILED ? NULL : p;
}

int amdgpu_files_open(const char *path, struct amdgpu_files *fo)
{
	char *cause = NULL;
	fo->p = amdgpu_files_map(path, &fo->len);
	if (fo->p && amdgpu_image_objects(fo->p, fo->len, &fo->o, &cause) == 0)
		return 0;
	printf("FAIL %s: %s\n", path, cause ? cause : "unreadable");
	free(cause);
	if (fo->p)
		munmap(fo->p, fo->len);
	return -1;
}

void amdgpu_files_close(struct amdgpu_files *fo)
{
	amdgpu_image_objects_done(&fo->o);
	munmap(fo->p, fo->len);
}

int amdgpu_files_write(const char *path, const void *p, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(p, 1, len, f) != len || fclose(f) != 0) {
		printf("FAIL cannot write %s\n", path);
		if (f)
			fclose(f);
		return -1;
	}
	return 0;
}
