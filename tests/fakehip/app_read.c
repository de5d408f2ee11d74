/* app_read.h */
#include <stdio.h>
#include <stdlib.h>
#include "app_read.h"

void *app_read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	long sz = f && fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
	void *buf = sz > 0 ? malloc((size_t)sz) : NULL;
	if (buf && (fseek(f, 0, SEEK_SET) != 0 || fread(buf, 1, (size_t)sz, f) != (size_t)sz)) {
		free(buf);
		buf = NULL;
	}
	if (f)
		fclose(f);
	return buf;
}
