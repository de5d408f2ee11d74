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

char *ptxas_locate(void)
{
	const char *env = getenv("NTOP_PTXAS");
	if (env && *env)
		return strdup(env);
	char *p = ptxas_on_path();
	if (!p)
		p = ptxas_in_env_dir("TRITON_PTXAS_PATH", "");
	if (!p)
		p = ptxas_beside_triton();
	if (!p)
		p = ptxas_in_env_dir("CUDA_HOME", "/bin/ptxas");
	if (!p)
		p = ptxas_try("/usr/local/cuda", strlen("/usr/local/cuda"), "/bin/ptxas");
	return p;
}
