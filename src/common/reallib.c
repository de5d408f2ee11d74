/* Finding the real library behind a stand-in (reallib.h): $ENV, else every
 * LD_LIBRARY_PATH directory, else $VAR/lib64 for the toolkit variables, else
 * the fixed directories, each candidate opened by full path. */
#include "common/reallib.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cause.h"
#include "common/strbuf.h"

#define REALLIB_MARKER "ntop_hook_marker"

__attribute__((visibility("default"))) void ntop_hook_marker(void)
{
}

static int reallib_pread(int fd, void *buf, size_t len, uint64_t off)
{
	return pread(fd, buf, len, (off_t)off) == (ssize_t)len ? 0 : -1;
}

/* 64-bit little-endian ELF only: the dynamic string table, searched for the
 * marker's name. */
int reallib_is_ours(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
		close(fd);
		return 0;
	}
	if (fd < 0)
		return 0;
	int found = 0;
	Elf64_Ehdr eh;
	if (reallib_pread(fd, &eh, sizeof eh, 0) < 0 || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum > 4096)
		goto out;
	for (unsigned i = 0; i < eh.e_shnum && !found; i++) {
		Elf64_Shdr sh, str;
		if (reallib_pread(fd, &sh, sizeof sh, eh.e_shoff + (uint64_t)i * sizeof sh) < 0)
			break;
		if (sh.sh_type != SHT_DYNSYM || sh.sh_link >= eh.e_shnum)
			continue;
		if (reallib_pread(fd, &str, sizeof str, eh.e_shoff + (uint64_t)sh.sh_link * sizeof str) < 0 ||
		    str.sh_size > ((uint64_t)64 << 20))
			break;
		char *tab = malloc(str.sh_size + 1);
		if (tab && reallib_pread(fd, tab, str.sh_size, str.sh_offset) == 0) {
			tab[str.sh_size] = 0;
			found = memmem(tab, str.sh_size, REALLIB_MARKER, sizeof REALLIB_MARKER) != NULL;
		}
		free(tab);
	}
out:
	close(fd);
	return found;
}

struct reallib_search {
	const struct reallib_spec *s;
	struct stat self;
	int have_self;
	int load;             /* 0: reallib_find (no dlopen) */
	void *handle;
	struct strbuf why;
};

static void reallib_why(struct reallib_search *r, const char *path, const char *what)
{
	strbuf_printf(&r->why, "%s%s %s", r->why.len ? "; " : "", path, what);
}

int reallib_pass_through(const char *path, char *out, size_t out_len)
{
	const char *slash = strrchr(path, '/');
	size_t dir = slash ? (size_t)(slash - path) : 0;
	int n;
	if (slash && dir >= 2 && memcmp(slash - 2, "/.", 2) == 0)
		n = snprintf(out, out_len, "%s", path);
	else if (slash)
		n = snprintf(out, out_len, "%.*s/.%s", (int)dir, path, slash);
	else
		n = snprintf(out, out_len, "./%s", path);
	return n > 0 && (size_t)n < out_len ? 0 : -1;
}

/* 0 when path is a real library (opened when r->load). */
static int reallib_try(struct reallib_search *r, const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return -1;
	if (r->have_self && st.st_dev == r->self.st_dev && st.st_ino == r->self.st_ino) {
		reallib_why(r, path, "is the stand-in itself");
		return -1;
	}
	/* a FIFO (or a device) would block the open, here or in dlopen, and
	 * hang the application at its first call */
	if (!S_ISREG(st.st_mode)) {
		reallib_why(r, path, "is not a regular file");
		return -1;
	}
	if (reallib_is_ours(path)) {
		reallib_why(r, path, "is one of ntop's stand-ins");
		return -1;
	}
	if (!r->load)
		return 0;
	char marked[4096];
	if (reallib_pass_through(path, marked, sizeof marked) < 0) {
		reallib_why(r, path, "has too long a path");
		return -1;
	}
	void *h = dlopen(marked, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();
		reallib_why(r, path, e ? e : "cannot be opened");
		return -1;
	}
	if (dlsym(h, REALLIB_MARKER) != NULL) {
		reallib_why(r, path, "is one of ntop's stand-ins");
		dlclose(h);
		return -1;
	}
	if (r->s->must_export && dlsym(h, r->s->must_export) == NULL) {
		strbuf_printf(&r->why, "%s%s exports no %s", r->why.len ? "; " : "", path, r->s->must_export);
		dlclose(h);
		return -1;
	}
	r->handle = h;
	return 0;
}

static int reallib_try_dir(struct reallib_search *r, const char *dir, size_t dlen, const char *sub, char *path,
			   size_t path_len)
{
	if (dlen == 0)
		return -1;
	int n = snprintf(path, path_len, "%.*s%s/%s", (int)dlen, dir, sub, r->s->file);
	if (n <= 0 || (size_t)n >= path_len)
		return -1;
	return reallib_try(r, path);
}

static int reallib_search(struct reallib_search *r, char *path, size_t path_len)
{
	const struct reallib_spec *s = r->s;
	const char *env = s->env ? getenv(s->env) : NULL;
	if (env && *env) {
		snprintf(path, path_len, "%s", env);
		if (reallib_try(r, env) == 0)
			return 0;
		if (!r->why.len)
			reallib_why(r, env, "does not exist");
		return -1; /* an explicit path is not second-guessed */
	}
	const char *lp = getenv("LD_LIBRARY_PATH");
	for (const char *p = lp; p && *p;) {
		size_t len = strcspn(p, ":");
		if (reallib_try_dir(r, p, len, "", path, path_len) == 0)
			return 0;
		p += len;
		p += *p == ':';
	}
	for (const char *const *v = s->env_dirs; v && *v; v++) {
		const char *root = getenv(*v);
		if (root && *root && reallib_try_dir(r, root, strlen(root), "/lib64", path, path_len) == 0)
			return 0;
	}
	for (const char *const *d = s->dirs; d && *d; d++)
		if (reallib_try_dir(r, *d, strlen(*d), "", path, path_len) == 0)
			return 0;
	if (!r->why.len)
		strbuf_printf(&r->why, "no %s on LD_LIBRARY_PATH or in the usual directories", s->file);
	return -1;
}

int reallib_open(const struct reallib_spec *s, const void *self, void **handle, char *path, size_t path_len,
		 char **cause)
{
	struct reallib_search r = { .s = s, .load = 1 };
	Dl_info info;
	strbuf_init(&r.why);
	r.have_self = self && dladdr(self, &info) && info.dli_fname && stat(info.dli_fname, &r.self) == 0;
	*handle = NULL;
	if (reallib_search(&r, path, path_len) == 0) {
		*handle = r.handle;
		strbuf_done(&r.why);
		return 0;
	}
	cause_set(cause, "no real %s: %s (set %s to its full path)", s->what, r.why.data ? r.why.data : "out of memory",
		  s->env ? s->env : "its path");
	strbuf_done(&r.why);
	return -1;
}

int reallib_find(const struct reallib_spec *s, char *path, size_t path_len)
{
	struct reallib_search r = { .s = s };
	strbuf_init(&r.why);
	int rc = reallib_search(&r, path, path_len);
	strbuf_done(&r.why);
	return rc;
}
