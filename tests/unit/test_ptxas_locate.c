/* Which ptxas the engine runs: NTOP_PTXAS as given, PATH, TRITON_PTXAS_PATH,
 * the ptxas beside a Triton loaded in the process, CUDA_HOME, in that order;
 * places whose ptxas is not executable are passed over, and the list of
 * candidates names each once. */
#include "engine/ptx/ptxas_locate.h"

#include "testlib.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[] = "/tmp/ntop_test_ptxas_XXXXXX";

static const char *at(const char *rel)
{
	static char buf[4][4200];
	static int i;
	i = (i + 1) % 4;
	snprintf(buf[i], sizeof buf[i], "%s/%s", root, rel);
	return buf[i];
}

/* rel under root, its folders made; executable or not. */
static void put(const char *rel, const void *data, size_t n, int exec)
{
	char path[4200];
	snprintf(path, sizeof path, "%s", at(rel));
	for (char *s = strchr(path + strlen(root) + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = 0;
		mkdir(path, 0700);
		*s = '/';
	}
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, exec ? 0700 : 0600);
	CHECKF(fd >= 0 && write(fd, data, n) == (ssize_t)n, "cannot write %s", path);
	if (fd >= 0)
		close(fd);
}

/* ptxas_locate's answer is want (NULL: none). */
static void expect(const char *want, const char *what)
{
	char *got = ptxas_locate();
	CHECKF(want ? got && strcmp(got, want) == 0 : !got, "%s: got %s, want %s", what, got ? got : "(none)",
	       want ? want : "(none)");
	free(got);
}

/* Every place in order, each once: the builder tries the next where one
 * fails. With PATH, TRITON_PTXAS_PATH, Triton and CUDA_HOME all set. */
static void check_candidates(void)
{
	char *c[PTXAS_MAX_CANDIDATES];
	int n = ptxas_candidates(c, PTXAS_MAX_CANDIDATES);
	const char *want[] = { at("path/ptxas"), at("env/ptxas"), at("site/triton/backends/nvidia/bin/ptxas"),
			       at("home/bin/ptxas") };
	CHECKF(n >= 4, "%d candidates, want 4 or 5", n);
	for (int i = 0; i < 4 && i < n; i++)
		CHECKF(strcmp(c[i], want[i]) == 0, "candidate %d: %s, want %s", i, c[i], want[i]);
	ptxas_candidates_free(c, n);
	setenv("TRITON_PTXAS_PATH", at("path/ptxas"), 1);
	n = ptxas_candidates(c, PTXAS_MAX_CANDIDATES);
	CHECKF(n >= 3 && strcmp(c[1], at("site/triton/backends/nvidia/bin/ptxas")) == 0,
	       "a ptxas named twice is one candidate: the second is %s", n > 1 ? c[1] : "(none)");
	ptxas_candidates_free(c, n);
}

static void test_order(void)
{
	static const char script[] = "#!/bin/sh\nexit 0\n";
	put("path/ptxas", script, sizeof script - 1, 1);
	put("noexec/ptxas", script, sizeof script - 1, 0);
	put("env/ptxas", script, sizeof script - 1, 1);
	put("home/bin/ptxas", script, sizeof script - 1, 1);
	put("site/triton/backends/nvidia/bin/ptxas", script, sizeof script - 1, 1);
	size_t so_len = 0;
	char *so = testlib_slurp(FAKE_LIBTRITON, &so_len);
	CHECKF(so && so_len > 0, "cannot read %s", FAKE_LIBTRITON);
	if (!so)
		return;
	put("site/triton/_C/libtriton.so", so, so_len, 1);
	free(so);

	unsetenv("NTOP_PTXAS");
	unsetenv("TRITON_PTXAS_PATH");
	setenv("PATH", at("noexec"), 1);
	setenv("CUDA_HOME", at("home"), 1);
	/* /usr/local/cuda comes last: this machine's toolkit is not in the way */
	expect(at("home/bin/ptxas"), "CUDA_HOME");
	void *h = dlopen(at("site/triton/_C/libtriton.so"), RTLD_NOW | RTLD_LOCAL);
	CHECKF(h, "dlopen: %s", dlerror());
	expect(at("site/triton/backends/nvidia/bin/ptxas"), "Triton's own, beside its loaded library");
	setenv("TRITON_PTXAS_PATH", at("noexec/ptxas"), 1);
	expect(at("site/triton/backends/nvidia/bin/ptxas"), "a TRITON_PTXAS_PATH not executable is passed over");
	setenv("TRITON_PTXAS_PATH", at("env/ptxas"), 1);
	expect(at("env/ptxas"), "TRITON_PTXAS_PATH");
	char path[9000];
	snprintf(path, sizeof path, "%s::%s", at("noexec"), at("path"));
	setenv("PATH", path, 1);
	expect(at("path/ptxas"), "PATH");
	check_candidates();
	setenv("NTOP_PTXAS", at("nowhere/ptxas"), 1);
	expect(at("nowhere/ptxas"), "NTOP_PTXAS, as given");
	char *c[PTXAS_MAX_CANDIDATES];
	int n = ptxas_candidates(c, PTXAS_MAX_CANDIDATES);
	CHECKF(n == 1, "NTOP_PTXAS is the only candidate: %d", n);
	ptxas_candidates_free(c, n);
	if (h)
		dlclose(h);
	unsetenv("NTOP_PTXAS");
	unsetenv("TRITON_PTXAS_PATH");
	unsetenv("CUDA_HOME");
	setenv("PATH", at("noexec"), 1);
	if (access("/usr/local/cuda/bin/ptxas", X_OK) != 0)
		expect(NULL, "nowhere");
	else
		expect("/usr/local/cuda/bin/ptxas", "the toolkit's");
}

static int unlink_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st, (void)type, (void)ftw;
	remove(path);
	return 0;
}

int main(void)
{
	CHECKF(mkdtemp(root), "mkdtemp");
	test_order();
	nftw(root, unlink_one, 16, FTW_DEPTH | FTW_PHYS);
	return testlib_report();
}
