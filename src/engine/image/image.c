/* GPU code images (image.h): tells PTX, fatbins, cubins and host ELFs
 * apart, and answers the engine's two questions about any of them: which PTX
 * to instrument for this GPU, and which kernels it holds. fatbin.c and
 * elf_image.c do the format work; here a cubin or a PTX text is treated as
 * a one-entry fatbin so the rest of the code has one shape to handle. */
#include "engine/image/image.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"
#include "engine/image/elf_image.h"
#include "engine/image/fatbin.h"
#include "engine/image/image_bytes.h"

/* How far past comments and blank lines ".version" may start (bytes). */
#define IMAGE_PTX_PREAMBLE_MAX (64 * 1024)

static int image_is_space(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* 1 when the text opens, after blanks and comments, with ".version". */
static int image_looks_like_ptx(const uint8_t *p, size_t n)
{
	size_t i = 0, max = n < IMAGE_PTX_PREAMBLE_MAX ? n : IMAGE_PTX_PREAMBLE_MAX;
	while (i < max) {
		if (image_is_space(p[i])) {
			i++;
		} else if (p[i] == '/' && i + 1 < n && p[i + 1] == '/') {
			while (i < n && p[i] != '\n')
				i++;
		} else if (p[i] == '/' && i + 1 < n && p[i + 1] == '*') {
			const uint8_t *end = memmem(p + i + 2, n - i - 2, "*/", 2);
			if (!end)
				return 0;
			i = (size_t)(end - p) + 2;
		} else {
			break;
		}
	}
	return i < n && n - i >= 8 && memcmp(p + i, ".version", 8) == 0;
}

/* 1 when a non-CUDA ELF embeds device code. */
static int image_host_elf_has_fatbin(const uint8_t *p, size_t size)
{
	const uint8_t *d;
	size_t len;
	return elf_image_section(p, size, ".nv_fatbin", &d, &len, NULL) == 0 ||
	       elf_image_section(p, size, "__nv_relfatbin", &d, &len, NULL) == 0;
}

static enum image_kind image_classify_elf(const uint8_t *p, size_t size, size_t *real)
{
	size_t n = size ? size : elf_image_extent(p);
	if (!n || !elf_image_is_elf64(p, n))
		return IMAGE_UNKNOWN;
	*real = n;
	if (elf_image_machine(p) == ELF_IMAGE_EM_CUDA)
		return IMAGE_CUBIN;
	return image_host_elf_has_fatbin(p, n) ? IMAGE_HOST_ELF : IMAGE_UNKNOWN;
}

enum image_kind image_classify(const void *image, size_t size, size_t *real_size)
{
	const uint8_t *p = image;
	size_t real = 0, sink;
	if (!real_size)
		real_size = &sink;
	*real_size = 0;
	if (!p)
		return IMAGE_UNKNOWN;
	/* None of the binary magics holds a zero byte, so a NUL among the first
	 * four bytes ends a pointer-only image before we read past it. */
	size_t head = size ? (size < 4 ? size : 4) : strnlen((const char *)p, 4);
	enum image_kind kind = IMAGE_UNKNOWN;
	if (head == 4 && image_bytes_le32(p) == FATBIN_WRAPPER_MAGIC) {
		if (!size || size >= FATBIN_WRAPPER_SIZE) {
			kind = IMAGE_FATBIN;
			real = FATBIN_WRAPPER_SIZE;
		}
	} else if (head == 4 && image_bytes_le32(p) == FATBIN_MAGIC) {
		real = size ? size : fatbin_container_size(p);
		if (real >= FATBIN_HEADER_SIZE)
			kind = IMAGE_FATBIN;
	} else if (head == 4 && memcmp(p, "\177ELF", 4) == 0) {
		kind = image_classify_elf(p, size, &real);
	} else {
		real = size ? strnlen((const char *)p, size) : strlen((const char *)p);
		if (image_looks_like_ptx(p, real))
			kind = IMAGE_PTX;
	}
	*real_size = kind == IMAGE_UNKNOWN ? 0 : real;
	return kind;
}

int image_resolve(const void *image, size_t size, const void **data, size_t *len, char **cause)
{
	size_t real = 0;
	enum image_kind kind = image_classify(image, size, &real);
	if (kind == IMAGE_UNKNOWN)
		return cause_set(cause, "not a GPU code image (no PTX, fatbin or CUDA ELF header)");
	const uint8_t *p = image;
	if (kind == IMAGE_FATBIN && fatbin_is_wrapper(p, real)) {
		const uint8_t *d;
		if (fatbin_unwrap(p, size, &d, len, cause) < 0)
			return -1;
		*data = d;
		return 0;
	}
	*data = p;
	*len = real;
	return 0;
}

/* Reads ".target sm_90a" into the entry's arch fields (left 0 if absent). */
static void image_ptx_target(const uint8_t *p, size_t n, struct image_entry *e)
{
	const uint8_t *t = memmem(p, n, ".target", 7);
	if (!t)
		return;
	size_t i = (size_t)(t - p) + 7;
	while (i < n && (p[i] == ' ' || p[i] == '\t'))
		i++;
	if (n - i < 3 || memcmp(p + i, "sm_", 3) != 0)
		return;
	int arch = 0;
	for (i += 3; i < n && p[i] >= '0' && p[i] <= '9' && arch < 10000; i++)
		arch = arch * 10 + (p[i] - '0');
	e->arch = arch;
	e->arch_suffix_a = i < n && p[i] == 'a';
	e->arch_suffix_f = i < n && p[i] == 'f';
}

/* A bare cubin or PTX text as a one-entry list. */
static int image_single_entry(enum image_kind kind, const uint8_t *p, size_t len, struct fatbin_list *list,
			      char **cause)
{
	struct image_entry e;
	memset(&e, 0, sizeof e);
	e.payload = p;
	e.stored_size = e.size = len;
	e.is_ptx = kind == IMAGE_PTX;
	if (e.is_ptx) {
		image_ptx_target(p, len, &e);
	} else {
		e.arch = elf_image_cubin_arch(p, len, cause);
		if (e.arch < 0)
			return -1;
	}
	list->v = malloc(sizeof e);
	if (!list->v)
		return cause_set(cause, "out of memory");
	list->v[0] = e;
	list->n = list->cap = 1;
	list->containers = 1;
	return 0;
}

static int image_host_elf_entries(const uint8_t *p, size_t len, struct fatbin_list *list, char **cause)
{
	static const char *const sections[] = { ".nv_fatbin", "__nv_relfatbin" };
	for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++) {
		const uint8_t *d;
		size_t n;
		int rc = elf_image_section(p, len, sections[i], &d, &n, cause);
		if (rc < 0)
			return -1;
		if (rc == 0 && fatbin_parse(d, n, list, cause) < 0)
			return cause_wrap(cause, "%s section", sections[i]);
	}
	return 0;
}

/* Entries of any image kind into `list` (see image_fatbin_entries). */
static int image_list(const void *image, size_t size, struct fatbin_list *list, char **cause)
{
	const void *data = NULL;
	size_t len = 0;
	memset(list, 0, sizeof *list);
	if (image_resolve(image, size, &data, &len, cause) < 0)
		return -1;
	int rc;
	switch (image_classify(data, len, &len)) {
	case IMAGE_FATBIN:
		rc = fatbin_parse(data, len, list, cause);
		break;
	case IMAGE_HOST_ELF:
		rc = image_host_elf_entries(data, len, list, cause);
		break;
	case IMAGE_CUBIN:
		rc = image_single_entry(IMAGE_CUBIN, data, len, list, cause);
		break;
	case IMAGE_PTX:
		rc = image_single_entry(IMAGE_PTX, data, len, list, cause);
		break;
	default:
		rc = cause_set(cause, "fatbin wrapper points at no fatbin");
	}
	if (rc < 0)
		fatbin_list_done(list);
	return rc;
}

int image_fatbin_entries(const void *image, size_t size, struct image_entry **entries, int *n, char **cause)
{
	struct fatbin_list list;
	if (image_list(image, size, &list, cause) < 0)
		return -1;
	if (list.n == 0)
		fatbin_list_done(&list);
	*entries = list.v;
	*n = list.n;
	return 0;
}

int image_entry_data(const struct image_entry *e, uint8_t **out, size_t *len, char **cause)
{
	if (fatbin_entry_data(e, out, len, cause) < 0)
		return -1;
	if (e->is_ptx)
		*len = strnlen((const char *)*out, *len);
	return 0;
}

void image_entry_arch_name(const struct image_entry *e, char *buf, size_t len)
{
	snprintf(buf, len, "%s_%d%s", e->is_ptx ? "compute" : "sm", e->arch,
		 e->arch_suffix_a ? "a" : e->arch_suffix_f ? "f" : "");
}

/* Whether PTX for this entry's arch can be JIT-compiled for an sm device. */
static int image_ptx_fits(const struct image_entry *e, int sm)
{
	if (e->arch_suffix_a)
		return e->arch == sm;
	if (e->arch_suffix_f)
		return e->arch / 10 == sm / 10 && e->arch <= sm;
	return e->arch <= sm;
}

/* Order among fitting entries: higher arch first, then the more specific. */
static int image_ptx_rank(const struct image_entry *e)
{
	return e->arch * 4 + (e->arch_suffix_a ? 2 : e->arch_suffix_f ? 1 : 0);
}

/* "sm_75, sm_80" for a cause: the entries of one kind (PTX or SASS), each
 * arch once (a fatbin holds an entry per kernel group and arch), in order,
 * truncated to the buffer. */
static void image_arch_list(const struct fatbin_list *list, int ptx, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = 0;
	for (int i = 0; i < list->n && used + 1 < len; i++) {
		if (list->v[i].is_ptx != ptx)
			continue;
		char name[32], *at;
		image_entry_arch_name(&list->v[i], name, sizeof name);
		size_t nl = strlen(name);
		int seen = 0;
		for (at = strstr(buf, name); at && !seen; at = strstr(at + 1, name))
			seen = (at == buf || at[-1] == ' ') && (at[nl] == ',' || at[nl] == 0);
		if (seen)
			continue;
		int w = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", name);
		if (w < 0)
			break;
		used += (size_t)w;
	}
}

/* Why no PTX entry fits sm, in a few words: none at all, PTX only for
 * newer GPUs, or only arch-specific PTX (compute_90a) of another GPU. */
static int image_no_ptx(const struct fatbin_list *list, int sm, int have_ptx, char **cause)
{
	char ptx[256], sass[256], also[300] = "";
	image_arch_list(list, 1, ptx, sizeof ptx);
	image_arch_list(list, 0, sass, sizeof sass);
	if (!have_ptx)
		return cause_set(cause, "SASS only: the image holds no PTX (%s); rebuild with PTX embedded "
				 "(e.g. -gencode arch=compute_%d,code=compute_%d, or a +PTX arch list)",
				 sass[0] ? sass : "no entries", sm, sm);
	int newer = 1;
	for (int i = 0; i < list->n; i++)
		newer &= !list->v[i].is_ptx || list->v[i].arch > sm;
	if (sass[0])
		snprintf(also, sizeof also, "; SASS for %s", sass);
	if (newer)
		return cause_set(cause, "PTX only for %s, newer than this GPU's sm_%d%s", ptx, sm, also);
	return cause_set(cause, "PTX only for %s, which sm_%d cannot run (arch-specific)%s", ptx, sm, also);
}

int image_pick_ptx(const void *image, size_t size, int sm, char **ptx, size_t *len, char **cause)
{
	struct fatbin_list list;
	if (image_list(image, size, &list, cause) < 0)
		return -1;
	const struct image_entry *best = NULL;
	int have_ptx = 0;
	/* Bare PTX goes back as it is: the driver judges its .target. */
	int bare = image_classify(image, size, NULL) == IMAGE_PTX;
	for (int i = 0; i < list.n; i++) {
		const struct image_entry *e = &list.v[i];
		have_ptx |= e->is_ptx;
		if (e->is_ptx && (bare || image_ptx_fits(e, sm)) &&
		    (!best || image_ptx_rank(e) > image_ptx_rank(best)))
			best = e;
	}
	int rc = -1;
	uint8_t *out = NULL;
	if (!best)
		image_no_ptx(&list, sm, have_ptx, cause);
	else if (image_entry_data(best, &out, len, cause) == 0)
		rc = 0;
	fatbin_list_done(&list);
	*ptx = (char *)out;
	return rc;
}

int image_ptx_defines(const char *ptx, const char *name)
{
	size_t n = strlen(name);
	for (const char *q = strstr(ptx, ".entry"); q; q = strstr(q + 6, ".entry")) {
		const char *s = q + 6;
		if (*s != ' ' && *s != '\t')
			continue;
		while (*s == ' ' || *s == '\t')
			s++;
		if (strncmp(s, name, n) == 0 && (s[n] == '(' || s[n] == ' ' || s[n] == '\t' || s[n] == '\r' ||
						 s[n] == '\n' || s[n] == '{'))
			return 1;
	}
	return 0;
}

/* The next fitting PTX entry below rank `below` (or any, below < 0). */
static const struct image_entry *image_next_ptx(const struct fatbin_list *list, int sm, int below)
{
	const struct image_entry *best = NULL;
	for (int i = 0; i < list->n; i++) {
		const struct image_entry *e = &list->v[i];
		int r = image_ptx_rank(e);
		if (e->is_ptx && image_ptx_fits(e, sm) && (below < 0 || r < below) &&
		    (!best || r > image_ptx_rank(best)))
			best = e;
	}
	return best;
}

int image_pick_kernel_ptx(const void *image, size_t size, int sm, const char *kernel, char **ptx, size_t *len,
			  char **cause)
{
	struct fatbin_list list;
	if (image_list(image, size, &list, cause) < 0)
		return -1;
	int have_ptx = 0, rank = -1, rc = -1, tried = 0;
	for (int i = 0; i < list.n; i++)
		have_ptx |= list.v[i].is_ptx;
	*ptx = NULL;
	/* Entries of one rank are tried in image order; then the next rank. */
	for (const struct image_entry *e = image_next_ptx(&list, sm, -1); e && rc < 0;
	     e = image_next_ptx(&list, sm, rank)) {
		rank = image_ptx_rank(e);
		for (int i = 0; i < list.n && rc < 0; i++) {
			const struct image_entry *c = &list.v[i];
			uint8_t *out = NULL;
			if (!c->is_ptx || !image_ptx_fits(c, sm) || image_ptx_rank(c) != rank)
				continue;
			tried++;
			if (image_entry_data(c, &out, len, cause) < 0)
				break;
			if (image_ptx_defines((const char *)out, kernel)) {
				*ptx = (char *)out;
				rc = 0;
			} else {
				free(out);
			}
		}
	}
	if (rc < 0 && !tried)
		image_no_ptx(&list, sm, have_ptx, cause);
	else if (rc < 0 && (!cause || !*cause))
		cause_set(cause, "none of the %d PTX entries usable on sm_%d defines %s", tried, sm, kernel);
	fatbin_list_done(&list);
	return rc;
}

void image_free_names(char **names, int n)
{
	for (int i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
}

static int image_push_name(char ***names, int *n, int *cap, const char *s, size_t len, char **cause)
{
	char *copy = strndup(s, len);
	if (!copy)
		return cause_set(cause, "out of memory listing kernel names");
	if (*n == *cap) {
		int ncap = *cap ? *cap * 2 : 16;
		char **v = realloc(*names, (size_t)ncap * sizeof *v);
		if (!v) {
			free(copy);
			return cause_set(cause, "out of memory listing kernel names");
		}
		*names = v;
		*cap = ncap;
	}
	(*names)[(*n)++] = copy;
	return 0;
}

int image_other_ptx(const void *image, size_t size, int sm, const char *kernel, char ***texts, int *n, char **cause)
{
	struct fatbin_list list;
	*texts = NULL;
	*n = 0;
	if (image_list(image, size, &list, cause) < 0)
		return -1;
	int rc = 0, cap = 0, containers = 0;
	for (int i = 0; i < list.n; i++)
		if (list.v[i].container >= containers)
			containers = list.v[i].container + 1;
	for (int c = 0; c < containers && rc == 0; c++) {
		const struct image_entry *best = NULL;
		for (int i = 0; i < list.n; i++) {
			const struct image_entry *e = &list.v[i];
			if (e->container == c && e->is_ptx && image_ptx_fits(e, sm) &&
			    (!best || image_ptx_rank(e) > image_ptx_rank(best)))
				best = e;
		}
		uint8_t *out = NULL;
		size_t len;
		if (!best)
			continue;
		if ((rc = image_entry_data(best, &out, &len, cause)) < 0)
			break;
		if (image_ptx_defines((const char *)out, kernel)) {
			free(out);
			continue;
		}
		rc = image_push_name(texts, n, &cap, (const char *)out, len, cause);
		free(out);
	}
	fatbin_list_done(&list);
	if (rc < 0) {
		image_free_names(*texts, *n);
		*texts = NULL;
		*n = 0;
	}
	return rc;
}

static int image_is_ident(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
	       c == '$' || c == '.';
}

/* 1 when a "//" comment opens between the start of the line and p[at]. */
static int image_in_comment(const char *p, size_t at)
{
	size_t i = at;
	while (i > 0 && p[i - 1] != '\n')
		i--;
	return at - i >= 2 && memmem(p + i, at - i, "//", 2) != NULL;
}

/* The names after each ".entry" directive of a PTX text. */
static int image_ptx_entry_names(const char *p, size_t n, char ***names, int *cnt, int *cap, char **cause)
{
	size_t i = 0;
	const char *hit;
	while (i < n && (hit = memmem(p + i, n - i, ".entry", 6))) {
		size_t at = (size_t)(hit - p), j = at + 6;
		i = j;
		if ((at > 0 && !image_is_space(p[at - 1])) || j >= n || !image_is_space(p[j]) ||
		    image_in_comment(p, at))
			continue;
		while (j < n && image_is_space(p[j]))
			j++;
		size_t start = j;
		while (j < n && image_is_ident((unsigned char)p[j]))
			j++;
		if (j > start && image_push_name(names, cnt, cap, p + start, j - start, cause) < 0)
			return -1;
		i = j;
	}
	return 0;
}

static int image_entry_names(const struct image_entry *e, char ***names, int *n, int *cap, char **cause)
{
	uint8_t *data = NULL;
	size_t len;
	if (image_entry_data(e, &data, &len, cause) < 0)
		return -1;
	int rc;
	if (e->is_ptx)
		rc = image_ptx_entry_names((const char *)data, len, names, n, cap, cause);
	else if (!elf_image_is_elf64(data, len) || elf_image_machine(data) != ELF_IMAGE_EM_CUDA)
		rc = cause_set(cause, "fatbin ELF entry is not a cubin");
	else
		rc = elf_image_kernel_names(data, len, names, n, cap, cause);
	free(data);
	return rc;
}

struct image_name_ref {
	const char *name;
	int index;
};

static int image_name_ref_cmp(const void *a, const void *b)
{
	const struct image_name_ref *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : (x->index > y->index) - (x->index < y->index);
}

/* Drops repeated names (the same kernel in every arch's entry), keeping the
 * first of each in order. */
static int image_dedup_names(char **names, int *n, char **cause)
{
	if (*n < 2)
		return 0;
	struct image_name_ref *refs = malloc((size_t)*n * sizeof *refs);
	if (!refs)
		return cause_set(cause, "out of memory listing kernel names");
	for (int i = 0; i < *n; i++)
		refs[i] = (struct image_name_ref){ names[i], i };
	qsort(refs, (size_t)*n, sizeof *refs, image_name_ref_cmp);
	/* Free only after the scan: a run of equal names compares each with
	 * its predecessor. */
	for (int i = *n - 1; i > 0; i--)
		if (strcmp(refs[i].name, refs[i - 1].name) == 0) {
			free(names[refs[i].index]);
			names[refs[i].index] = NULL;
		}
	free(refs);
	int kept = 0;
	for (int i = 0; i < *n; i++)
		if (names[i])
			names[kept++] = names[i];
	*n = kept;
	return 0;
}

int image_kernel_names(const void *image, size_t size, char ***names, int *n, char **cause)
{
	struct fatbin_list list;
	*names = NULL;
	*n = 0;
	if (image_list(image, size, &list, cause) < 0)
		return -1;
	int have_elf = 0, cap = 0, rc = 0;
	for (int i = 0; i < list.n; i++)
		have_elf |= !list.v[i].is_ptx;
	for (int i = 0; i < list.n && rc == 0; i++)
		if (list.v[i].is_ptx != have_elf && image_entry_names(&list.v[i], names, n, &cap, cause) < 0)
			rc = cause_wrap(cause, "entry %d", i);
	fatbin_list_done(&list);
	if (rc == 0)
		rc = image_dedup_names(*names, n, cause);
	if (rc < 0) {
		image_free_names(*names, *n);
		*names = NULL;
		*n = 0;
	}
	return rc;
}
