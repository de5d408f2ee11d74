/* The real libcuda.so.1 (hook_driver.h): $NTOP_REAL_LIBCUDA, else every
 * LD_LIBRARY_PATH directory, else the distributions' driver directories, each
 * opened by full path (so no name lookup can hand us back ourselves). We never
 * intercept dlopen: the application's own dlopen("libcuda.so.1") finds us
 * through LD_LIBRARY_PATH, and ours goes by path. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/cause.h"
#include "common/strbuf.h"
#include "hook/hook_driver.h"
#include "hook/hook_env.h"
#include "hook/hook_log.h"
#include "hook/hook_state.h"

/* Exported so that a copy of the hook found on the search path can be told
 * apart from a driver (a function: sanitizer builds add no extra symbols
 * for it, as they do for exported variables). */
__attribute__((visibility("default"))) void ntop_hook_marker(void);
void ntop_hook_marker(void)
{
}

static const char *const driver_dirs[] = {
	"/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/local/nvidia/lib64", "/usr/lib/wsl/lib",
	"/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib",
};

static int driver_self(struct stat *self)
{
	Dl_info info;
	if (!dladdr((void *)ntop_hook_marker, &info) || !info.dli_fname)
		return -1;
	return stat(info.dli_fname, self);
}

static int driver_pread(int fd, void *buf, size_t len, uint64_t off)
{
	return pread(fd, buf, len, (off_t)off) == (ssize_t)len ? 0 : -1;
}

/* Does the file's dynamic string table name our marker? Read before dlopen,
 * so a copy of the hook is rejected without running its constructor (which
 * would emit events of its own). 64-bit little-endian ELF only. */
static int driver_has_marker(const char *path)
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
	if (driver_pread(fd, &eh, sizeof eh, 0) < 0 || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum > 4096)
		goto out;
	for (unsigned i = 0; i < eh.e_shnum && !found; i++) {
		Elf64_Shdr sh, str;
		if (driver_pread(fd, &sh, sizeof sh, eh.e_shoff + (uint64_t)i * sizeof sh) < 0)
			break;
		if (sh.sh_type != SHT_DYNSYM || sh.sh_link >= eh.e_shnum)
			continue;
		if (driver_pread(fd, &str, sizeof str, eh.e_shoff + (uint64_t)sh.sh_link * sizeof str) < 0 ||
		    str.sh_size > ((uint64_t)64 << 20))
			break;
		char *tab = malloc(str.sh_size + 1);
		if (tab && driver_pread(fd, tab, str.sh_size, str.sh_offset) == 0) {
			tab[str.sh_size] = 0;
			found = memmem(tab, str.sh_size, "ntop_hook_marker", sizeof "ntop_hook_marker") != NULL;
		}
		free(tab);
	}
out:
	close(fd);
	return found;
}

/* Opens one candidate; 0 and sets hook.driver when it is a driver. */
static int driver_try(const char *path, const struct stat *self, int have_self, struct strbuf *why)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return -1;
	if (have_self && st.st_dev == self->st_dev && st.st_ino == self->st_ino) {
		strbuf_printf(why, "%s%s is the hook itself", why->len ? "; " : "", path);
		return -1;
	}
	/* a FIFO (or a device) would block the open, here or in dlopen, and
	 * hang the application at its first CUDA call */
	if (!S_ISREG(st.st_mode)) {
		strbuf_printf(why, "%s%s is not a regular file", why->len ? "; " : "", path);
		return -1;
	}
	if (driver_has_marker(path)) {
		strbuf_printf(why, "%s%s is a copy of the hook", why->len ? "; " : "", path);
		return -1;
	}
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();
		strbuf_printf(why, "%s%s: %s", why->len ? "; " : "", path, e ? e : "dlopen failed");
		return -1;
	}
	if (dlsym(h, "ntop_hook_marker") != NULL) {
		strbuf_printf(why, "%s%s is a copy of the hook", why->len ? "; " : "", path);
		dlclose(h);
		return -1;
	}
	if (dlsym(h, "cuInit") == NULL) {
		strbuf_printf(why, "%s%s exports no cuInit", why->len ? "; " : "", path);
		dlclose(h);
		return -1;
	}
	hook.driver = h;
	snprintf(hook.real_path, sizeof hook.real_path, "%s", path);
	return 0;
}

static int driver_try_dir(const char *dir, size_t dlen, const struct stat *self, int have_self,
			  struct strbuf *why)
{
	char path[4096];
	if (dlen == 0)
		return -1;
	int n = snprintf(path, sizeof path, "%.*s/libcuda.so.1", (int)dlen, dir);
	if (n <= 0 || (size_t)n >= sizeof path)
		return -1;
	return driver_try(path, self, have_self, why);
}

int hook_driver_open(char **cause)
{
	struct stat self;
	int have_self = driver_self(&self) == 0;
	struct strbuf why;
	strbuf_init(&why);
	const char *env = getenv(NTOP_ENV_REAL_LIBCUDA);
	if (env && *env) {
		if (driver_try(env, &self, have_self, &why) == 0)
			goto found;
		if (!why.len)
			strbuf_printf(&why, "%s does not exist", env);
		goto fail; /* an explicit path is not second-guessed */
	}
	const char *lp = getenv("LD_LIBRARY_PATH");
	for (const char *p = lp; p && *p;) {
		size_t len = strcspn(p, ":");
		if (driver_try_dir(p, len, &self, have_self, &why) == 0)
			goto found;
		p += len;
		p += *p == ':';
	}
	for (size_t i = 0; i < sizeof driver_dirs / sizeof driver_dirs[0]; i++)
		if (driver_try_dir(driver_dirs[i], strlen(driver_dirs[i]), &self, have_self, &why) == 0)
			goto found;
	if (!why.len)
		strbuf_puts(&why, "no libcuda.so.1 on LD_LIBRARY_PATH or in the driver directories");
fail:
	cause_set(cause, "no real CUDA driver: %s (set %s to its full path)",
		  why.data ? why.data : "out of memory", NTOP_ENV_REAL_LIBCUDA);
	strbuf_done(&why);
	return -1;
found:
	hook_log("real driver %s", hook.real_path);
	strbuf_done(&why);
	return 0;
}
