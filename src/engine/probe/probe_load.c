/* Probe loading: reads the file (bounded), parses it as TOML, picks the
 * schema (ntop's own when the top level has `ntop_probe`; else NEUTRINO's,
 * in the layout its DSL compiler writes or the hand-written one) and hands
 * the tree to probe_ntop.c, probe_neutrino_dsl.c or probe_neutrino.c. */
#include "engine/probe/probe_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cause.h"

/* NEUTRINO probes are named after their file: "dir/gmem_bytes.toml" -> "gmem_bytes". */
static void name_from_path(char *name, const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t n = strlen(base);
	if (n > 5 && strcmp(base + n - 5, ".toml") == 0)
		n -= 5;
	if (n >= PROBE_NAME_MAX)
		n = PROBE_NAME_MAX - 1;
	for (size_t i = 0; i < n; i++) {
		char c = base[i];
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
			 c == '-';
		name[i] = ok ? c : '_';
	}
	name[n] = 0;
	if (n == 0 || base[0] == '<') /* "<string>": no file to name it after */
		snprintf(name, PROBE_NAME_MAX, "probe");
}

static int probe_load_buf(const char *text, size_t len, const char *path, struct probe **out, char **cause)
{
	struct probe_src src = { .path = path ? path : "<string>", .cause = cause };
	struct toml_node *root = NULL;
	struct probe *p = NULL;
	*out = NULL;
	if (toml_parse(text, len, src.path, &root, cause) < 0)
		return -1;
	p = calloc(1, sizeof *p);
	if (!p) {
		cause_set(cause, "%s: out of memory", src.path);
		goto fail;
	}
	p->path = strdup(src.path);
	if (!p->path) {
		cause_set(cause, "%s: out of memory", src.path);
		goto fail;
	}
	if (toml_get(root, "ntop_probe")) {
		if (probe_load_ntop(&src, root, p) < 0)
			goto fail;
	} else {
		name_from_path(p->name, src.path);
		if ((probe_neutrino_dsl_is(root) ? probe_load_neutrino_dsl(&src, root, p)
						 : probe_load_neutrino(&src, root, p)) < 0)
			goto fail;
	}
	if (!p->description && probe_set_string(&src, &p->description, "", root) < 0)
		goto fail;
	toml_free(root);
	*out = p;
	return 0;
fail:
	toml_free(root);
	probe_free(p);
	return -1;
}

int probe_load_string(const char *text, const char *path_for_errors, struct probe **out, char **cause)
{
	return probe_load_buf(text, strlen(text), path_for_errors, out, cause);
}

int probe_load_file(const char *path, struct probe **out, char **cause)
{
	struct stat st;
	char *buf = NULL;
	size_t n = 0;
	*out = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return cause_set(cause, "%s: cannot open: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		cause_set(cause, "%s: not a regular file", path);
		goto fail;
	}
	if ((uint64_t)st.st_size > PROBE_FILE_MAX) {
		cause_set(cause, "%s: %lld bytes is too big for a probe file (limit %u)", path, (long long)st.st_size,
			  PROBE_FILE_MAX);
		goto fail;
	}
	/* One byte more than the limit tells a file that grew since fstat. */
	buf = malloc(PROBE_FILE_MAX + 1);
	if (!buf) {
		cause_set(cause, "%s: out of memory", path);
		goto fail;
	}
	for (;;) {
		ssize_t got = read(fd, buf + n, PROBE_FILE_MAX + 1 - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			cause_set(cause, "%s: read failed: %s", path, strerror(errno));
			goto fail;
		}
		if (got == 0)
			break;
		n += (size_t)got;
		if (n > PROBE_FILE_MAX) {
			cause_set(cause, "%s: too big for a probe file (limit %u bytes)", path, PROBE_FILE_MAX);
			goto fail;
		}
	}
	close(fd);
	int r = probe_load_buf(buf, n, path, out, cause);
	free(buf);
	return r;
fail:
	free(buf);
	close(fd);
	return -1;
}

