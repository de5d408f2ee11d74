/* Triton cache lookup (triton_cache.h). The search is deliberately shallow
 * and bounded: only <root>/<dir>/<file>, no recursion, symlinks neither
 * followed nor opened (no loops, no escaping the cache), at most
 * TRITON_CACHE_MAX_DIRS directories and TRITON_CACHE_MAX_FILES files per
 * directory, and bytes are compared only when the sizes already match. It
 * runs inside the application on the first probed launch of a cubin. */
#include "engine/triton_cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cause.h"
#include "engine/image.h"

#define TRITON_CACHE_MAX_DIRS 20000
#define TRITON_CACHE_MAX_FILES 512
/* PTX larger than this is not Triton's (bytes). */
#define TRITON_CACHE_MAX_PTX ((size_t)256 << 20)

struct triton_cache_query {
	const uint8_t *cubin;
	size_t size;
	char **names; /* kernel names: the likely file names */
	int n_names;
	char *ptx;
	size_t ptx_len;
};

/* Opens a regular file relative to dirfd, never through a symlink. */
static int triton_cache_open(int dirfd, const char *name, struct stat *st)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -1;
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
		close(fd);
		return -1;
	}
	return fd;
}

static int triton_cache_read_all(int fd, uint8_t *buf, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = read(fd, buf + got, n - got);
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

/* 1 when the file holds exactly the query's cubin. */
static int triton_cache_same_cubin(int dirfd, const char *name, const struct triton_cache_query *q)
{
	struct stat st;
	int fd = triton_cache_open(dirfd, name, &st);
	if (fd < 0)
		return 0;
	int same = 0;
	if ((uint64_t)st.st_size == q->size) {
		uint8_t buf[65536];
		size_t off = 0;
		same = 1;
		while (same && off < q->size) {
			size_t n = q->size - off < sizeof buf ? q->size - off : sizeof buf;
			same = triton_cache_read_all(fd, buf, n) == 0 && memcmp(buf, q->cubin + off, n) == 0;
			off += n;
		}
	}
	close(fd);
	return same;
}

/* Reads <stem>.ptx beside a matching <stem>.cubin into the query. */
static int triton_cache_read_ptx(int dirfd, const char *cubin_name, struct triton_cache_query *q)
{
	char name[NAME_MAX + 1];
	size_t stem = strlen(cubin_name) - strlen(".cubin");
	if (snprintf(name, sizeof name, "%.*s.ptx", (int)stem, cubin_name) >= (int)sizeof name)
		return -1;
	struct stat st;
	int fd = triton_cache_open(dirfd, name, &st);
	if (fd < 0)
		return -1;
	int rc = -1;
	size_t n = (size_t)st.st_size;
	char *buf = n <= TRITON_CACHE_MAX_PTX ? malloc(n + 1) : NULL;
	if (buf && triton_cache_read_all(fd, (uint8_t *)buf, n) == 0) {
		buf[n] = 0;
		q->ptx = buf;
		q->ptx_len = strlen(buf);
		buf = NULL;
		rc = 0;
	}
	free(buf);
	close(fd);
	return rc;
}

static int triton_cache_try(int dirfd, const char *cubin_name, struct triton_cache_query *q)
{
	return triton_cache_same_cubin(dirfd, cubin_name, q) && triton_cache_read_ptx(dirfd, cubin_name, q) == 0;
}

static int triton_cache_has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n > k && strcmp(s + n - k, suffix) == 0;
}

/* Looks in one cache directory: the kernel-named files first, then any
 * *.cubin (a renamed file, or no names known). */
static int triton_cache_search_dir(int dirfd, struct triton_cache_query *q)
{
	char name[NAME_MAX + 1];
	for (int i = 0; i < q->n_names; i++)
		if (snprintf(name, sizeof name, "%s.cubin", q->names[i]) < (int)sizeof name &&
		    triton_cache_try(dirfd, name, q))
			return 1;
	int fd = dup(dirfd);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	struct dirent *de;
	int seen = 0, found = 0;
	while (!found && seen++ < TRITON_CACHE_MAX_FILES && (de = readdir(d)))
		found = triton_cache_has_suffix(de->d_name, ".cubin") && triton_cache_try(dirfd, de->d_name, q);
	closedir(d);
	return found;
}

static int triton_cache_search_root(const char *root, struct triton_cache_query *q, char **cause)
{
	DIR *d = opendir(root);
	if (!d)
		return cause_set(cause, "no Triton cache at %s", root);
	int rootfd = dirfd(d), seen = 0, found = 0;
	struct dirent *de;
	while (!found && (de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (++seen > TRITON_CACHE_MAX_DIRS)
			break;
		int fd = openat(rootfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		found = triton_cache_search_dir(fd, q);
		close(fd);
	}
	closedir(d);
	if (found)
		return 0;
	if (seen > TRITON_CACHE_MAX_DIRS)
		return cause_set(cause, "no match among the first %d entries of the Triton cache %s",
				 TRITON_CACHE_MAX_DIRS, root);
	return cause_set(cause, "no cubin in the Triton cache %s matches the loaded %zu-byte cubin", root,
			 q->size);
}

int triton_cache_find_ptx_in(const char *root, const void *cubin, size_t size, char **ptx, size_t *len,
			     char **cause)
{
	size_t real = 0;
	if (image_classify(cubin, size, &real) != IMAGE_CUBIN)
		return cause_set(cause, "not a cubin: Triton's cache holds cubins only");
	struct triton_cache_query q = { .cubin = cubin, .size = real };
	if (image_kernel_names(cubin, real, &q.names, &q.n_names, NULL) < 0)
		q.n_names = 0; /* fall back to scanning every *.cubin */
	int rc = triton_cache_search_root(root, &q, cause);
	image_free_names(q.names, q.n_names);
	if (rc == 0) {
		*ptx = q.ptx;
		*len = q.ptx_len;
	}
	return rc;
}

int triton_cache_find_ptx(const void *cubin, size_t size, char **ptx, size_t *len, char **cause)
{
	const char *dir = getenv("TRITON_CACHE_DIR");
	if (dir && *dir)
		return triton_cache_find_ptx_in(dir, cubin, size, ptx, len, cause);
	const char *home = getenv("TRITON_HOME");
	if (!home || !*home)
		home = getenv("HOME");
	if (!home || !*home)
		return cause_set(cause, "no Triton cache: neither TRITON_CACHE_DIR nor HOME is set");
	char root[PATH_MAX];
	if (snprintf(root, sizeof root, "%s/.triton/cache", home) >= (int)sizeof root)
		return cause_set(cause, "Triton cache path too long");
	return triton_cache_find_ptx_in(root, cubin, size, ptx, len, cause);
}
