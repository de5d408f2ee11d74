/* Triton cache lookup (triton_cache.h). The search in one root is deliberately shallow
 * and bounded: only <root>/<dir>/<file>, no recursion, symlinks neither
 * followed nor opened (no loops, no escaping the cache), at most
 * TRITON_CACHE_MAX_DIRS directories and TRITON_CACHE_MAX_FILES files per
 * directory, and bytes are compared only when the sizes already match. It
 * runs inside the application on the first probed launch of a cubin. */
#include "engine/image/triton_cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cause.h"
#include "common/strbuf.h"
#include "engine/image/image.h"

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

/* 1 found; 0 not found, with *dirs and *cubins counted; -1 no such directory. */
static int triton_cache_search_root(const char *root, struct triton_cache_query *q, int *dirs, int *full)
{
	DIR *d = opendir(root);
	if (!d)
		return -1;
	int rootfd = dirfd(d), found = 0;
	struct dirent *de;
	while (!found && (de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (++*dirs > TRITON_CACHE_MAX_DIRS) {
			*full = 1;
			break;
		}
		int fd = openat(rootfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		found = triton_cache_search_dir(fd, q);
		close(fd);
	}
	closedir(d);
	return found;
}

/* Searches one root; on a miss appends what it saw to sb ("ROOT (...)"). */
static int triton_cache_try_root(const char *root, struct triton_cache_query *q, struct strbuf *sb)
{
	int dirs = 0, full = 0;
	int rc = triton_cache_search_root(root, q, &dirs, &full);
	if (rc == 1)
		return 1;
	strbuf_printf(sb, "%s%s (", sb->len ? ", " : "", root);
	if (rc < 0)
		strbuf_puts(sb, "no such directory)");
	else if (full)
		strbuf_printf(sb, "no match among its first %d entries)", TRITON_CACHE_MAX_DIRS);
	else
		strbuf_printf(sb, "%d entr%s, no cubin matches)", dirs, dirs == 1 ? "y" : "ies");
	return 0;
}

int triton_cache_find_ptx_in(const char *root, const void *cubin, size_t size, char **ptx, size_t *len,
			     char **cause)
{
	const char *roots[2] = { root, NULL };
	return triton_cache_find_ptx_roots(roots, cubin, size, ptx, len, NULL, cause);
}

int triton_cache_find_ptx_roots(const char *const *roots, const void *cubin, size_t size, char **ptx, size_t *len,
				const char **where, char **cause)
{
	size_t real = 0;
	if (image_classify(cubin, size, &real) != IMAGE_CUBIN)
		return cause_set(cause, "not a cubin: Triton's cache holds cubins only");
	struct triton_cache_query q = { .cubin = cubin, .size = real };
	if (image_kernel_names(cubin, real, &q.names, &q.n_names, NULL) < 0)
		q.n_names = 0; /* fall back to scanning every *.cubin */
	struct strbuf sb;
	strbuf_init(&sb);
	int found = 0;
	for (int i = 0; roots[i] && !found; i++)
		if ((found = triton_cache_try_root(roots[i], &q, &sb)) && where)
			*where = roots[i];
	image_free_names(q.names, q.n_names);
	if (found) {
		strbuf_done(&sb);
		*ptx = q.ptx;
		*len = q.ptx_len;
		return 0;
	}
	cause_set(cause, "no cubin of the %zu loaded bytes in the Triton caches: %s", q.size,
		  sb.data ? sb.data : "none to look in");
	strbuf_done(&sb);
	return -1;
}

/* Appends root (malloc'd) to the list; skips a repeat. */
static void triton_cache_add_root(char ***roots, int *n, const char *root)
{
	for (int i = 0; i < *n; i++)
		if (strcmp((*roots)[i], root) == 0)
			return;
	char **v = realloc(*roots, (size_t)(*n + 2) * sizeof *v);
	if (!v)
		return;
	*roots = v;
	if ((v[*n] = strdup(root)) != NULL)
		v[++*n] = NULL;
}

/* Inductor's directory: $TORCHINDUCTOR_CACHE_DIR, else
 * /tmp/torchinductor_<user> (torch takes the user name as getpass does). */
static int triton_cache_inductor_dir(char *buf, size_t len)
{
	const char *dir = getenv("TORCHINDUCTOR_CACHE_DIR");
	if (dir && *dir)
		return snprintf(buf, len, "%s", dir) < (int)len ? 0 : -1;
	static const char *const vars[] = { "LOGNAME", "USER", "LNAME", "USERNAME" };
	const char *user = NULL;
	for (size_t i = 0; i < sizeof vars / sizeof vars[0] && !user; i++)
		if ((user = getenv(vars[i])) != NULL && !*user)
			user = NULL;
	struct passwd pw, *res = NULL;
	char pwbuf[1024];
	if (!user && getpwuid_r(geteuid(), &pw, pwbuf, sizeof pwbuf, &res) == 0 && res)
		user = res->pw_name;
	if (!user)
		return -1;
	return snprintf(buf, len, "/tmp/torchinductor_%s", user) < (int)len ? 0 : -1;
}

int triton_cache_roots(char ***roots, int *n)
{
	char path[PATH_MAX];
	*roots = NULL;
	*n = 0;
	const char *dir = getenv("TRITON_CACHE_DIR");
	if (dir && *dir)
		triton_cache_add_root(roots, n, dir);
	const char *home = getenv("TRITON_HOME");
	if (!home || !*home)
		home = getenv("HOME");
	if (home && *home && snprintf(path, sizeof path, "%s/.triton/cache", home) < (int)sizeof path)
		triton_cache_add_root(roots, n, path);
	char ind[PATH_MAX - 64];
	if (triton_cache_inductor_dir(ind, sizeof ind) < 0)
		return 0;
	/* Inductor points Triton at <dir>/triton/<device index> */
	snprintf(path, sizeof path, "%s/triton", ind);
	DIR *d = opendir(path);
	struct dirent *de;
	for (int k = 0; d && k < 64 && (de = readdir(d)) != NULL; k++) {
		if (de->d_name[0] == '.')
			continue;
		char sub[PATH_MAX];
		if (snprintf(sub, sizeof sub, "%s/%s", path, de->d_name) < (int)sizeof sub)
			triton_cache_add_root(roots, n, sub);
	}
	if (d)
		closedir(d);
	else
		triton_cache_add_root(roots, n, path); /* named in the cause as absent */
	triton_cache_add_root(roots, n, ind);
	return 0;
}

void triton_cache_roots_free(char **roots, int n)
{
	for (int i = 0; i < n; i++)
		free(roots[i]);
	free(roots);
}

int triton_cache_find_ptx(const void *cubin, size_t size, char **ptx, size_t *len, char **cause)
{
	char **roots;
	int n;
	triton_cache_roots(&roots, &n);
	if (!n) {
		triton_cache_roots_free(roots, n);
		return cause_set(cause, "no Triton cache: neither TRITON_CACHE_DIR nor HOME is set");
	}
	int rc = triton_cache_find_ptx_roots((const char *const *)roots, cubin, size, ptx, len, NULL, cause);
	triton_cache_roots_free(roots, n);
	return rc;
}
