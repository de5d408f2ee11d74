#include "engine/ptx/ptxas_locate.h"

#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* dir/rel when it is an executable file (malloc'd), else NULL. */
static char *ptxas_try(const char *dir, size_t dir_len, const char *rel)
{
	char *cand = NULL;
	if (asprintf(&cand, "%.*s%s", (int)dir_len, dir, rel) < 0)
		return NULL;
	if (access(cand, X_OK) == 0)
		return cand;
	free(cand);
	return NULL;
}

static char *ptxas_on_path(void)
{
	const char *p = getenv("PATH");
	while (p && *p) {
		const char *colon = strchr(p, ':');
		size_t n = colon ? (size_t)(colon - p) : strlen(p);
		/* an empty entry is the current directory */
		char *found = n ? ptxas_try(p, n, "/ptxas") : ptxas_try(".", 1, "/ptxas");
		if (found)
			return found;
		p = colon ? colon + 1 : NULL;
	}
	return NULL;
}

/* Triton's package: triton/_C/libtriton.so beside the ptxas it ships
 * (triton/backends/nvidia/bin since Triton 3.0, third_party/cuda/bin before). */
static int ptxas_triton_object(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	static const char lib[] = "/_C/libtriton.so";
	static const char *const rels[] = { "/backends/nvidia/bin/ptxas", "/third_party/cuda/bin/ptxas" };
	const char *name = info->dlpi_name;
	size_t n = name ? strlen(name) : 0;
	if (n < sizeof lib || strcmp(name + n - (sizeof lib - 1), lib) != 0)
		return 0;
	for (size_t i = 0; i < sizeof rels / sizeof rels[0]; i++)
		if ((*(char **)data = ptxas_try(name, n - (sizeof lib - 1), rels[i])))
			return 1;
	return 0;
}

static char *ptxas_beside_triton(void)
{
	char *found = NULL;
	dl_iterate_phdr(ptxas_triton_object, &found);
	return found;
}

static char *ptxas_in_env_dir(const char *var, const char *rel)
{
	const char *v = getenv(var);
	return v && *v ? ptxas_try(v, strlen(v), rel) : NULL;
}

/* Adds p to out[] unless it is NULL or already there (takes it). */
static int ptxas_add(char **out, int n, int max, char *p)
{
	for (int i = 0; p && i < n; i++)
		if (strcmp(out[i], p) == 0) {
			free(p);
			return n;
		}
	if (!p || n >= max) {
		free(p);
		return n;
	}
	out[n] = p;
	return n + 1;
}

int ptxas_candidates(char **out, int max)
{
	const char *env = getenv("NTOP_PTXAS");
	if (env && *env)
		return ptxas_add(out, 0, max, strdup(env));
	int n = ptxas_add(out, 0, max, ptxas_on_path());
	n = ptxas_add(out, n, max, ptxas_in_env_dir("TRITON_PTXAS_PATH", ""));
	n = ptxas_add(out, n, max, ptxas_beside_triton());
	n = ptxas_add(out, n, max, ptxas_in_env_dir("CUDA_HOME", "/bin/ptxas"));
	return ptxas_add(out, n, max, ptxas_try("/usr/local/cuda", strlen("/usr/local/cuda"), "/bin/ptxas"));
}

void ptxas_candidates_free(char **c, int n)
{
	for (int i = 0; i < n; i++)
		free(c[i]);
}

char *ptxas_locate(void)
{
	char *c[PTXAS_MAX_CANDIDATES];
	int n = ptxas_candidates(c, PTXAS_MAX_CANDIDATES);
	if (n == 0)
		return NULL;
	ptxas_candidates_free(c + 1, n - 1);
	return c[0];
}
