/* Owner-only directories and files opened relative to them (safefs.h). */
#include "common/safefs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cause.h"
#include "common/fdio.h"

#define SAFEFS_TMP_TRIES 64

static int safefs_empty(int dfd)
{
	int d = dup(dfd);
	DIR *dir = d >= 0 ? fdopendir(d) : NULL;
	if (!dir) {
		if (d >= 0)
			close(d);
		return -1;
	}
	rewinddir(dir);
	int empty = 1;
	for (struct dirent *e; empty && (e = readdir(dir)) != NULL;)
		empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
	closedir(dir);
	return empty;
}

int safefs_check_dir(int dfd, const char *shown, int empty, char **cause)
{
	struct stat st;
	if (fstat(dfd, &st) < 0)
		return cause_set(cause, "%s: %s", shown, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return cause_set(cause, "%s is not a directory", shown);
	if (st.st_uid != geteuid())
		return cause_set(cause, "%s belongs to uid %u, not to you (uid %u): another user could change what "
				 "ntop reads and writes there; choose a directory of your own", shown,
				 (unsigned)st.st_uid, (unsigned)geteuid());
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return cause_set(cause, "%s is writable by %s (mode %04o): another user could plant files there; "
				 "chmod go-w it or choose another", shown,
				 (st.st_mode & S_IWOTH) ? "everyone" : "its group", (unsigned)(st.st_mode & 07777));
	if (empty) {
		int e = safefs_empty(dfd);
		if (e < 0)
			return cause_set(cause, "%s: cannot list it: %s", shown, strerror(errno));
		if (!e)
			return cause_set(cause, "%s exists and is not empty; choose another", shown);
	}
	return 0;
}

/* Why opening `name` (relative to dfd) as a directory failed. */
static int safefs_open_error(int dfd, const char *name, const char *shown, int err, char **cause)
{
	struct stat st;
	if ((err == ELOOP || err == ENOTDIR) && fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
		return cause_set(cause, "%s is a symbolic link: ntop does not follow links here (give the directory "
				 "it points to)", shown);
	return cause_set(cause, "%s: %s", shown, strerror(err));
}

int safefs_open_dir(const char *path, int empty, char **cause)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return safefs_open_error(AT_FDCWD, path, path, errno, cause);
	if (safefs_check_dir(fd, path, empty, cause) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

int safefs_subdir(int dfd, const char *name, char **cause)
{
	if (mkdirat(dfd, name, 0700) < 0 && errno != EEXIST)
		return cause_set(cause, "cannot create %s: %s", name, strerror(errno));
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return safefs_open_error(dfd, name, name, errno, cause);
	if (safefs_check_dir(fd, name, 0, cause) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

int safefs_create(int dfd, const char *name, int flags)
{
	return openat(dfd, name, flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
}

int safefs_tmp(int dfd, const char *base, char *tmp, size_t cap)
{
	for (int i = 0; i < SAFEFS_TMP_TRIES; i++) {
		uint64_t r = 0;
		if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r)
			r = ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)tmp ^ (uint64_t)i * 0x9E3779B97F4A7C15ull;
		int n = snprintf(tmp, cap, ".%s.%012llx", base, (unsigned long long)(r & 0xFFFFFFFFFFFFull));
		if (n < 0 || (size_t)n >= cap) {
			errno = ENAMETOOLONG;
			return -1;
		}
		int fd = safefs_create(dfd, tmp, O_WRONLY);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	errno = EEXIST;
	return -1;
}

int safefs_replace(int dfd, const char *name, const void *data, size_t len, char **cause)
{
	char tmp[256];
	int fd = safefs_tmp(dfd, name, tmp, sizeof tmp);
	if (fd < 0)
		return cause_set(cause, "cannot create a temporary for %s: %s", name, strerror(errno));
	int rc = 0;
	if (fdio_write_all(fd, data, len) < 0)
		rc = cause_set(cause, "cannot write %s: %s", name, strerror(errno ? errno : EIO));
	if (close(fd) < 0 && rc == 0)
		rc = cause_set(cause, "cannot write %s: %s", name, strerror(errno));
	if (rc == 0 && renameat(dfd, tmp, dfd, name) < 0)
		rc = cause_set(cause, "cannot rename %s to %s: %s", tmp, name, strerror(errno));
	if (rc < 0)
		unlinkat(dfd, tmp, 0);
	return rc;
}
