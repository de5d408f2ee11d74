/* GPU code images: classification, fatbin entries (plain, LZ4, zstd), PTX
 * choice per SM, kernel names, host ELF, corrupt images, demangling and the
 * Triton cache lookup. Data: tests/corpus/images (README.md there says how
 * each file was made). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/demangle.h"
#include "engine/image/elf_file.h"
#include "engine/image/image.h"
#include "engine/image/triton_cache.h"
#include "testlib.h"

#define NAME_SCALE "scale"
#define NAME_VEC_ADD "_Z7vec_addPfPKfS1_i"
#define NAME_FILL "_Z4fillIiEvPT_S0_i"

static uint8_t *load(const char *name, size_t *len)
{
	return testlib_corpus("images", name, len);
}


/* What the fatbin tool keeps of nvcc's PTX: comments dropped, blank runs
 * collapsed to one space, lines trimmed (line count kept). */
static char *ptx_normalize(const char *s)
{
	char *out = malloc(strlen(s) + 1), *o = out;
	while (*s) {
		const char *eol = strchr(s, '\n');
		size_t n = eol ? (size_t)(eol - s) : strlen(s);
		const char *cmt = memmem(s, n, "//", 2);
		size_t keep = cmt ? (size_t)(cmt - s) : n;
		int pending_space = 0, any = 0;
		for (size_t i = 0; i < keep; i++) {
			if (s[i] == ' ' || s[i] == '\t' || s[i] == '\r') {
				pending_space = any;
				continue;
			}
			if (pending_space)
				*o++ = ' ';
			pending_space = 0;
			any = 1;
			*o++ = s[i];
		}
		s += n;
		if (*s == '\n')
			*o++ = *s++;
	}
	*o = 0;
	return out;
}

static void test_classify(void)
{
	static const struct {
		const char *file;
		enum image_kind kind;
	} cases[] = {
		{ "vec_compute_75.ptx", IMAGE_PTX },  { "vec_plain.fatbin", IMAGE_FATBIN },
		{ "vec_lz4.fatbin", IMAGE_FATBIN },   { "vec_zstd.fatbin", IMAGE_FATBIN },
		{ "vec_sm75.cubin", IMAGE_CUBIN },    { "libvec.so", IMAGE_HOST_ELF },
		{ "vec.cu", IMAGE_UNKNOWN },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		size_t n, real = 0;
		uint8_t *p = load(cases[i].file, &n);
		if (!p)
			continue;
		CHECKF(image_classify(p, n, &real) == cases[i].kind, "%s", cases[i].file);
		/* Pointer only: the size comes from the image's own headers. */
		if (cases[i].kind != IMAGE_UNKNOWN && cases[i].kind != IMAGE_HOST_ELF) {
			CHECKF(image_classify(p, 0, &real) == cases[i].kind, "%s size 0", cases[i].file);
			CHECKF(real == n, "%s: derived %zu, file %zu", cases[i].file, real, n);
		}
		free(p);
	}
	CHECK(image_classify("garbage", 0, NULL) == IMAGE_UNKNOWN);
	CHECK(image_classify("", 0, NULL) == IMAGE_UNKNOWN);
	CHECK(image_classify(NULL, 0, NULL) == IMAGE_UNKNOWN);
	CHECK(image_classify("\177EL", 0, NULL) == IMAGE_UNKNOWN);
	CHECK(image_classify("// hi\n/* c */\n  .version 8.0\n", 0, NULL) == IMAGE_PTX);
	CHECK(image_classify(".version 8.0", 5, NULL) == IMAGE_UNKNOWN);
}

/* A fatbin wrapper in memory pointing at a fatbin, as the runtime passes it. */
static void test_wrapper(void)
{
	size_t n, len = 0;
	uint8_t *fb = load("vec_lz4.fatbin", &n);
	if (!fb)
		return;
	uint64_t wrap[3] = { 0x466243B1u | (uint64_t)1 << 32, (uint64_t)(uintptr_t)fb, 0 };
	size_t real = 0;
	CHECK(image_classify(wrap, 0, &real) == IMAGE_FATBIN);
	CHECK_EQ_INT(real, 24);
	const void *data = NULL;
	char *cause = NULL;
	CHECK(image_resolve(wrap, 0, &data, &len, &cause) == 0);
	CHECK(data == fb);
	CHECK_EQ_INT(len, n);
	struct image_entry *e = NULL;
	int cnt = 0;
	CHECK(image_fatbin_entries(wrap, 0, &e, &cnt, &cause) == 0);
	CHECK_EQ_INT(cnt, 5);
	free(e);
	/* With a size the address must lie inside the buffer: a file copy's
	 * pointer means nothing. */
	CHECK(image_fatbin_entries(wrap, sizeof wrap, &e, &cnt, &cause) == -1);
	CHECKF(cause && strstr(cause, "outside"), "%s", cause);
	free(cause);
	free(fb);
}

struct want_entry {
	int is_ptx, arch, a;
};

static const struct want_entry vec_entries[] = {
	{ 0, 75, 0 }, { 1, 75, 0 }, { 1, 80, 0 }, { 0, 90, 1 }, { 1, 90, 1 },
};

static void check_entries(const char *file, int ptx_comp, int elf_comp)
{
	size_t n;
	uint8_t *p = load(file, &n);
	if (!p)
		return;
	struct image_entry *e = NULL;
	int cnt = 0;
	char *cause = NULL;
	CHECKF(image_fatbin_entries(p, n, &e, &cnt, &cause) == 0, "%s: %s", file, cause);
	CHECK_EQ_INT(cnt, 5);
	for (int i = 0; i < cnt && i < 5; i++) {
		CHECKF(e[i].is_ptx == vec_entries[i].is_ptx, "%s entry %d", file, i);
		CHECKF(e[i].arch == vec_entries[i].arch, "%s entry %d arch %d", file, i, e[i].arch);
		CHECKF(e[i].arch_suffix_a == vec_entries[i].a, "%s entry %d", file, i);
		CHECKF(e[i].compressed == (e[i].is_ptx ? ptx_comp : elf_comp), "%s entry %d compressed %d", file,
		       i, e[i].compressed);
		CHECK(e[i].payload > p && e[i].payload + e[i].stored_size <= p + n);
	}
	char name[32];
	if (cnt == 5) {
		image_entry_arch_name(&e[4], name, sizeof name);
		CHECK(strcmp(name, "compute_90a") == 0);
		image_entry_arch_name(&e[0], name, sizeof name);
		CHECK(strcmp(name, "sm_75") == 0);
	}
	free(e);
	free(cause);
	free(p);
}

static void test_entries(void)
{
	check_entries("vec_plain.fatbin", 0, 0);
	check_entries("vec_lz4.fatbin", 1, 0);
	check_entries("vec_zstd.fatbin", 2, 2);
}

/* The PTX text of entry `idx`, NUL-terminated. */
static char *entry_text(const char *file, int idx, size_t *len)
{
	size_t n;
	uint8_t *p = load(file, &n), *out = NULL;
	struct image_entry *e = NULL;
	int cnt = 0;
	char *cause = NULL;
	if (p && image_fatbin_entries(p, n, &e, &cnt, &cause) == 0 && idx < cnt) {
		CHECKF(image_entry_data(&e[idx], &out, len, &cause) == 0, "%s: %s", file, cause);
		CHECK(out && out[*len] == 0);
	}
	free(e);
	free(cause);
	free(p);
	return (char *)out;
}

static void test_ptx_decode(void)
{
	static const struct {
		int idx;
		const char *ptx;
	} archs[] = { { 1, "vec_compute_75.ptx" }, { 2, "vec_compute_80.ptx" }, { 4, "vec_compute_90a.ptx" } };
	for (size_t i = 0; i < sizeof archs / sizeof archs[0]; i++) {
		size_t lp = 0, ll = 0, lz = 0, ln = 0;
		char *plain = entry_text("vec_plain.fatbin", archs[i].idx, &lp);
		char *lz4 = entry_text("vec_lz4.fatbin", archs[i].idx, &ll);
		char *zstd = entry_text("vec_zstd.fatbin", archs[i].idx, &lz);
		char *nvcc = (char *)load(archs[i].ptx, &ln);
		char *norm = nvcc ? ptx_normalize(nvcc) : NULL;
		CHECKF(plain && lz4 && lz == lp && ll == lp && memcmp(plain, lz4, lp) == 0, "LZ4 %s", archs[i].ptx);
		CHECKF(plain && zstd && lz == lp && memcmp(plain, zstd, lp) == 0, "zstd %s", archs[i].ptx);
		CHECKF(plain && norm && strcmp(plain, norm) == 0, "nvcc -ptx %s", archs[i].ptx);
		CHECK(plain && lp > 0 && plain[lp - 1] != 0);
		free(plain);
		free(lz4);
		free(zstd);
		free(nvcc);
		free(norm);
	}
}

/* The ".target" line of the PTX image_pick_ptx chose, or NULL. */
static char *picked_target(const uint8_t *p, size_t n, int sm, char **cause)
{
	char *ptx = NULL, *target = NULL;
	size_t len = 0;
	if (image_pick_ptx(p, n, sm, &ptx, &len, cause) < 0)
		return NULL;
	CHECK(strlen(ptx) == len);
	const char *t = strstr(ptx, ".target ");
	if (t)
		target = strndup(t + 8, strcspn(t + 8, "\n"));
	free(ptx);
	return target;
}

/* No arch name ("sm_80", "compute_90a") appears twice in a cause. */
static int arch_names_once(const char *cause)
{
	char buf[1024];
	snprintf(buf, sizeof buf, "%s", cause);
	char *names[64];
	int n = 0;
	for (char *t = strtok(buf, " ,;()"); t && n < 64; t = strtok(NULL, " ,;()"))
		if (!strncmp(t, "sm_", 3) || !strncmp(t, "compute_", 8)) {
			for (int i = 0; i < n; i++)
				if (!strcmp(names[i], t) && strcmp(t, "sm_70"))
					return 0;
			names[n++] = t;
		}
	return 1;
}

static void test_pick_ptx(void)
{
	static const struct {
		int sm;
		const char *target;
	} cases[] = {
		{ 75, "sm_75" }, { 80, "sm_80" }, { 86, "sm_80" }, { 89, "sm_80" },
		{ 90, "sm_90a" }, { 100, "sm_80" }, { 70, NULL },
	};
	static const char *const files[] = { "vec_plain.fatbin", "vec_lz4.fatbin", "vec_zstd.fatbin", "libvec.so" };
	for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
		size_t n;
		uint8_t *p = load(files[f], &n);
		for (size_t i = 0; p && i < sizeof cases / sizeof cases[0]; i++) {
			int host = f == 3; /* libvec.so: compute_75 only */
			const char *want = host ? (cases[i].sm >= 75 ? "sm_75" : NULL) : cases[i].target;
			char *cause = NULL, *got = picked_target(p, n, cases[i].sm, &cause);
			CHECKF(want ? got && strcmp(got, want) == 0
				    : !got && cause && !strncmp(cause, "PTX only for compute_75", 23) &&
					      strstr(cause, "newer than this GPU's sm_70") && arch_names_once(cause),
			       "%s sm_%d: got %s (%s)", files[f], cases[i].sm, got ? got : "-", cause ? cause : "");
			free(got);
			free(cause);
		}
		free(p);
	}
	static const char *const sass[] = { "vec_sm75.cubin", "vec_sass.fatbin" };
	for (size_t f = 0; f < 2; f++) {
		size_t n, len;
		uint8_t *p = load(sass[f], &n);
		char *cause = NULL, *ptx = NULL;
		CHECK(p && image_pick_ptx(p, n, 90, &ptx, &len, &cause) == -1);
		CHECKF(cause && strstr(cause, "SASS only"), "%s: %s", sass[f], cause);
		CHECK(ptx == NULL);
		free(cause);
		free(p);
	}
	/* Bare PTX comes back whole; the host ELF's PTX equals the fatbin's. */
	size_t n, len = 0, lp = 0;
	uint8_t *p = load("vec_compute_80.ptx", &n);
	char *ptx = NULL, *cause = NULL;
	CHECK(p && image_pick_ptx(p, 0, 75, &ptx, &len, &cause) == 0 && len == n && memcmp(ptx, p, n) == 0);
	free(ptx);
	free(p);
	p = load("libvec.so", &n);
	char *plain = entry_text("vec_plain.fatbin", 1, &lp);
	CHECK(p && image_pick_ptx(p, n, 75, &ptx, &len, &cause) == 0);
	CHECK(plain && ptx && len == lp && strcmp(ptx, plain) == 0);
	free(ptx);
	free(plain);
	free(p);
	free(cause);
}

static int has_name(char **names, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return 1;
	return 0;
}

static void test_kernel_names(void)
{
	static const char *const files[] = { "vec_sm75.cubin", "vec_plain.fatbin", "vec_zstd.fatbin",
					     "vec_sass.fatbin", "libvec.so", "vec_compute_90a.ptx" };
	for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
		size_t n;
		uint8_t *p = load(files[f], &n);
		char **names = NULL, *cause = NULL;
		int cnt = -1;
		CHECKF(p && image_kernel_names(p, n, &names, &cnt, &cause) == 0, "%s: %s", files[f], cause);
		CHECKF(cnt == 3, "%s: %d names", files[f], cnt);
		CHECKF(has_name(names, cnt, NAME_SCALE) && has_name(names, cnt, NAME_VEC_ADD) &&
			       has_name(names, cnt, NAME_FILL),
		       "%s", files[f]);
		image_free_names(names, cnt);
		free(cause);
		free(p);
	}
	/* PTX: .entry directives only, not .func nor comments. */
	const char *ptx = "//\n.version 9.0\n.target sm_75\n.visible .entry k1(\n)\n{\nret;\n}\n"
			  ".func helper()\n{\nret;\n}\n.entry\tk2()\n{\nret;\n}\n// .entry not_me\n";
	char **names = NULL;
	int cnt = 0;
	CHECK(image_kernel_names(ptx, 0, &names, &cnt, NULL) == 0);
	CHECKF(cnt == 2 && has_name(names, cnt, "k1") && has_name(names, cnt, "k2"), "%d names", cnt);
	image_free_names(names, cnt);
}

/* Runs every public entry point on the image; each either succeeds or fails
 * with a cause. Returns 1 when image_fatbin_entries succeeded. */
static int exercise(const uint8_t *p, size_t n)
{
	size_t real;
	image_classify(p, n, &real);
	int ok = 1;
	struct image_entry *e = NULL;
	int cnt = 0;
	char *cause = NULL;
	int rc = image_fatbin_entries(p, n, &e, &cnt, &cause);
	ok &= rc == 0 || cause != NULL;
	int entries_ok = rc == 0;
	for (int i = 0; rc == 0 && i < cnt; i++) {
		uint8_t *d = NULL;
		size_t len;
		free(cause);
		cause = NULL;
		if (image_entry_data(&e[i], &d, &len, &cause) == 0)
			free(d);
		else
			ok &= cause != NULL;
	}
	free(e);
	free(cause);
	cause = NULL;
	char *ptx = NULL;
	size_t len;
	if (image_pick_ptx(p, n, 90, &ptx, &len, &cause) == 0)
		free(ptx);
	else
		ok &= cause != NULL;
	free(cause);
	cause = NULL;
	char **names = NULL;
	if (image_kernel_names(p, n, &names, &cnt, &cause) == 0)
		image_free_names(names, cnt);
	else
		ok &= cause != NULL;
	free(cause);
	CHECK(ok);
	return entries_ok;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* Every truncation of a fatbin (8-byte steps, plus each byte of the
 * headers) must fail: the container header promises the full length. */
static void test_truncated(void)
{
	static const char *const files[] = { "vec_plain.fatbin", "vec_lz4.fatbin", "vec_zstd.fatbin" };
	for (size_t f = 0; f < 3; f++) {
		size_t n;
		uint8_t *p = load(files[f], &n);
		int wrongly_ok = 0;
		for (size_t cut = 1; p && cut < n; cut += cut < 256 ? 1 : 8) {
			uint8_t *q = testlib_dup_exact(p, cut);
			wrongly_ok += exercise(q, cut);
			free(q);
		}
		CHECKF(wrongly_ok == 0, "%s: %d truncations parsed", files[f], wrongly_ok);
		free(p);
	}
	static const char *const others[] = { "vec_sm75.cubin", "libvec.so", "vec_compute_75.ptx" };
	for (size_t f = 0; f < 3; f++) {
		size_t n;
		uint8_t *p = load(others[f], &n);
		for (size_t cut = 1; p && cut < n; cut += cut < 128 ? 1 : 16) {
			uint8_t *q = testlib_dup_exact(p, cut);
			exercise(q, cut);
			free(q);
		}
		free(p);
	}
}

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* Oversized fields in the headers of vec_lz4.fatbin (entry 1 at 0x17f8 is
 * LZ4 PTX; offsets from tests/corpus/images/README.md) fail with a cause. */
static void test_huge_sizes(void)
{
	static const struct {
		size_t off;
		int width;
		uint64_t value;
	} cases[] = {
		{ 8, 8, ~0ull },                 /* container size */
		{ 8, 8, 0x7fffffffffffull },     /* container size */
		{ 0x10 + 4, 4, 0xffffffffu },    /* entry 0 header size */
		{ 0x10 + 4, 4, 8 },              /* entry 0 header size too small */
		{ 0x10 + 8, 8, ~0ull },          /* entry 0 payload size */
		{ 0x17f8 + 0x10, 4, 0xffffffffu }, /* entry 1 compressed size */
		{ 0x17f8 + 0x38, 8, ~0ull },     /* entry 1 uncompressed size */
		{ 0x17f8 + 0x38, 8, 1u << 29 },  /* entry 1: ratio LZ4 cannot reach */
		{ 0x17f8 + 0x38, 8, 0x8c0 },     /* entry 1: size lie, decode fails */
		{ 0x17f8 + 0x28, 8, 0xa011 },    /* entry 1: LZ4 and zstd at once */
	};
	size_t n;
	uint8_t *p = load("vec_lz4.fatbin", &n);
	for (size_t i = 0; p && i < sizeof cases / sizeof cases[0]; i++) {
		uint8_t *q = testlib_dup_exact(p, n);
		if (cases[i].width == 8)
			put64(q + cases[i].off, cases[i].value);
		else
			memcpy(q + cases[i].off, &(uint32_t){ (uint32_t)cases[i].value }, 4);
		struct image_entry *e = NULL;
		int cnt = 0, failed = 0;
		char *cause = NULL;
		if (image_fatbin_entries(q, n, &e, &cnt, &cause) < 0) {
			failed = cause != NULL;
		} else {
			for (int k = 0; k < cnt; k++) {
				uint8_t *d = NULL;
				size_t len;
				if (image_entry_data(&e[k], &d, &len, &cause) < 0)
					failed = cause != NULL;
				free(d);
			}
		}
		CHECKF(failed, "case %zu parsed", i);
		free(e);
		free(cause);
		free(q);
	}
	free(p);
}

/* Random byte flips, weighted to the headers; deterministic seed. */
static void test_mutations(void)
{
	static const char *const files[] = { "vec_plain.fatbin", "vec_lz4.fatbin", "vec_zstd.fatbin",
					     "vec_sm75.cubin", "vec_sass.fatbin", "libvec.so" };
	for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
		size_t n;
		uint8_t *p = load(files[f], &n);
		for (int round = 0; p && round < 1000; round++) {
			uint8_t *q = testlib_dup_exact(p, n);
			int flips = 1 + (int)(rng() % 4);
			for (int k = 0; k < flips; k++) {
				size_t at = rng() % 3 ? rng() % (n < 512 ? n : 512) : rng() % n;
				q[at] ^= (uint8_t)(1u << (rng() % 8));
			}
			exercise(q, n);
			free(q);
		}
		free(p);
	}
}

static void check_demangle(const char *in, const char *full, const char *base)
{
	char *f = demangle(in), *b = demangle_base(in);
	CHECKF(f && strcmp(f, full) == 0, "demangle(%s) = %s", in, f);
	CHECKF(b && strcmp(b, base) == 0, "demangle_base(%s) = %s", in, b);
	free(f);
	free(b);
}

static void test_demangle(void)
{
	check_demangle("_Z7vec_addPfPKfi", "vec_add(float*, float const*, int)", "vec_add");
	check_demangle("scale", "scale", "scale");
	check_demangle("_Z4fillIiEvPT_S0_i", "void fill<int>(int*, int, int)", "void fill<int>");
	check_demangle("_ZN2at6native3fooIfEEvPT_", "void at::native::foo<float>(float*)",
		       "void at::native::foo<float>");
	check_demangle("_ZZ4mainENKUliE_clEi", "main::{lambda(int)#1}::operator()(int) const",
		       "main::{lambda(int)#1}::operator()");
	check_demangle("_ZN12_GLOBAL__N_16kernelEv", "(anonymous namespace)::kernel()",
		       "(anonymous namespace)::kernel");
	check_demangle("_Zbogus", "_Zbogus", "_Zbogus");
	check_demangle("i", "i", "i");
	check_demangle("", "", "");
	char *b = demangle_base("_ZN2at6native29vectorized_elementwise_kernelILi4EZZZNS0_23direct_copy_kernel_"
				"cudaERNS_18TensorIteratorBaseEENKUlvE1_clEvENKUlvE_clEvEUlfE_NS_6detail5ArrayIPc"
				"Li2EEEEEviT0_T1_");
	const char *head = "void at::native::vectorized_elementwise_kernel<4, ", *tail = ", at::detail::Array<char*, 2> >";
	CHECKF(b && strncmp(b, head, strlen(head)) == 0 && strlen(b) > strlen(tail) &&
		       strcmp(b + strlen(b) - strlen(tail), tail) == 0,
	       "%s", b);
	free(b);
	CHECK(demangle(NULL) == NULL);
}

static void write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	CHECKF(f != NULL, "%s", path);
	if (f) {
		fwrite(p, 1, n, f);
		fclose(f);
	}
}

/* The hook's -rdc path: one section of a file read on its own, and the
 * PTX picked by the kernel it defines. */
static void test_rdc_helpers(void)
{
	uint8_t *data = NULL;
	size_t len = 0;
	char *cause = NULL;
	const char *lib = testlib_src("tests/corpus/images/libvec.so");
	CHECKF(elf_file_section(lib, ".nv_fatbin", 1 << 20, &data, &len, &cause) == 0 && data && len > 0, "%s",
	       cause ? cause : "");
	struct image_entry *e = NULL;
	int n = 0;
	CHECK(data && image_fatbin_entries(data, len, &e, &n, NULL) == 0 && n == 3);
	free(e);
	free(data);
	CHECK(elf_file_section(lib, "__nv_relfatbin", 1 << 20, &data, &len, &cause) == 1 && !data);
	CHECK(elf_file_section(lib, ".nv_fatbin", 16, &data, &len, &cause) == -1 && strstr(cause, "large"));
	CHECK(elf_file_section("/nonexistent/ntop.so", ".x", 16, &data, &len, &cause) == -1);
	free(cause);
	cause = NULL;
	CHECK(image_ptx_defines(".visible .entry scale(\n", "scale"));
	CHECK(image_ptx_defines(".entry  _Z7vec_addPfPKfS1_i (", "_Z7vec_addPfPKfS1_i"));
	CHECK(!image_ptx_defines(".visible .entry scale2(", "scale") && !image_ptx_defines("call scale(", "scale"));
	size_t n_img;
	uint8_t *img = load("vec_plain.fatbin", &n_img);
	char *ptx = NULL;
	CHECKF(img && image_pick_kernel_ptx(img, n_img, 80, "scale", &ptx, &len, &cause) == 0 && ptx &&
	       strstr(ptx, ".target sm_80"), "%s", cause ? cause : "");
	free(ptx);
	ptx = NULL;
	CHECK(img && image_pick_kernel_ptx(img, n_img, 80, "nosuch", &ptx, &len, &cause) == -1 && !ptx &&
	      strstr(cause, "defines nosuch"));
	free(cause);
	cause = NULL;
	free(img);
	/* an -rdc build's two units: the other one is the one defining rdc_twice */
	img = load("rdc_rel.fatbin", &n_img);
	char **others = NULL;
	int n_others = 0;
	CHECKF(img && image_other_ptx(img, n_img, 90, "_Z9rdc_crossPfi", &others, &n_others, &cause) == 0 &&
	       n_others == 1 && strstr(others[0], "_Z9rdc_twicef(") &&
	       !image_ptx_defines(others[0], "_Z9rdc_crossPfi"), "%d others: %s", n_others,
	       n_others ? others[0] : cause ? cause : "");
	image_free_names(others, n_others);
	free(cause);
	free(img);
}

/* torch.compile's caches: <TORCHINDUCTOR_CACHE_DIR>/triton/<device>/<hash>/,
 * searched after Triton's own; a miss names every root it looked in. */
static void test_inductor_cache(void)
{
	size_t n;
	uint8_t *cubin = load("vec_sm75.cubin", &n);
	char root[] = "/tmp/ntop_inductor_XXXXXX", path[512];
	if (!cubin || !mkdtemp(root))
		return;
	static const char *const dirs[] = { "triton", "triton/0", "triton/0/Hx1", NULL };
	for (int i = 0; dirs[i]; i++) {
		snprintf(path, sizeof path, "%s/%s", root, dirs[i]);
		mkdir(path, 0700);
	}
	snprintf(path, sizeof path, "%s/triton/0/Hx1/triton_poi_fused_0.cubin", root);
	write_file(path, cubin, n);
	snprintf(path, sizeof path, "%s/triton/0/Hx1/triton_poi_fused_0.ptx", root);
	write_file(path, "inductor ptx", 12);
	char *home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
	setenv("HOME", "/nonexistent/ntop-home", 1);
	setenv("TORCHINDUCTOR_CACHE_DIR", root, 1);
	char *ptx = NULL, *cause = NULL;
	size_t len = 0;
	CHECKF(triton_cache_find_ptx(cubin, n, &ptx, &len, &cause) == 0 && ptx && strcmp(ptx, "inductor ptx") == 0,
	       "%s", cause ? cause : "");
	free(ptx);
	ptx = NULL;
	unlink(path);
	CHECK(triton_cache_find_ptx(cubin, n, &ptx, &len, &cause) == -1 && ptx == NULL);
	char want[600];
	snprintf(want, sizeof want, "%s/triton/0 (1 entry, no cubin matches)", root);
	CHECKF(cause && strstr(cause, "/nonexistent/ntop-home/.triton/cache (no such directory)") && strstr(cause, want),
	       "%s", cause ? cause : "");
	free(cause);
	snprintf(path, sizeof path, "%s/triton/0/Hx1/triton_poi_fused_0.cubin", root);
	unlink(path);
	for (int i = 2; i >= 0; i--) {
		snprintf(path, sizeof path, "%s/%s", root, dirs[i]);
		rmdir(path);
	}
	rmdir(root);
	unsetenv("TORCHINDUCTOR_CACHE_DIR");
	if (home)
		setenv("HOME", home, 1);
	free(home);
	free(cubin);
}

static void test_triton_cache(void)
{
	size_t n;
	uint8_t *cubin = load("vec_sm75.cubin", &n);
	char root[] = "/tmp/ntop_triton_XXXXXX", path[512];
	if (!cubin || !mkdtemp(root))
		return;
	/* Same size, one byte off: must be passed over. */
	uint8_t *other = testlib_dup_exact(cubin, n);
	other[n / 2] ^= 1;
	snprintf(path, sizeof path, "%s/aaa", root);
	mkdir(path, 0700);
	snprintf(path, sizeof path, "%s/aaa/scale.cubin", root);
	write_file(path, other, n);
	snprintf(path, sizeof path, "%s/aaa/scale.ptx", root);
	write_file(path, "wrong", 5);
	snprintf(path, sizeof path, "%s/bbb", root);
	mkdir(path, 0700);
	snprintf(path, sizeof path, "%s/bbb/scale.json", root);
	write_file(path, "{}", 2);
	snprintf(path, sizeof path, "%s/bbb/scale.cubin", root);
	write_file(path, cubin, n);
	snprintf(path, sizeof path, "%s/bbb/scale.ptx", root);
	write_file(path, "right ptx", 9);
	snprintf(path, sizeof path, "%s/loop", root);
	CHECK(symlink(root, path) == 0);

	char *ptx = NULL, *cause = NULL;
	size_t len = 0;
	CHECKF(triton_cache_find_ptx_in(root, cubin, n, &ptx, &len, &cause) == 0, "%s", cause);
	CHECK(ptx && len == 9 && strcmp(ptx, "right ptx") == 0);
	free(ptx);
	ptx = NULL;
	setenv("TRITON_CACHE_DIR", root, 1);
	CHECK(triton_cache_find_ptx(cubin, 0, &ptx, &len, &cause) == 0 && ptx && strcmp(ptx, "right ptx") == 0);
	free(ptx);
	ptx = NULL;
	/* A file named after no kernel still matches by content. */
	snprintf(path, sizeof path, "%s/bbb/scale.cubin", root);
	char renamed[512];
	snprintf(renamed, sizeof renamed, "%s/bbb/other.cubin", root);
	CHECK(rename(path, renamed) == 0);
	snprintf(path, sizeof path, "%s/bbb/other.ptx", root);
	write_file(path, "renamed", 7);
	CHECK(triton_cache_find_ptx(cubin, n, &ptx, &len, &cause) == 0 && ptx && strcmp(ptx, "renamed") == 0);
	free(ptx);
	ptx = NULL;
	unlink(renamed);
	CHECK(triton_cache_find_ptx(cubin, n, &ptx, &len, &cause) == -1 && ptx == NULL);
	CHECKF(cause && strstr(cause, "no cubin"), "%s", cause);
	CHECK(triton_cache_find_ptx_in("/nonexistent/ntop", cubin, n, &ptx, &len, &cause) == -1);
	CHECK(triton_cache_find_ptx_in(root, "not a cubin", 0, &ptx, &len, &cause) == -1);
	unsetenv("TRITON_CACHE_DIR");
	free(cause);

	static const char *const files[] = { "aaa/scale.cubin", "aaa/scale.ptx", "bbb/scale.json", "bbb/scale.ptx",
					     "bbb/other.ptx", "loop" };
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		snprintf(path, sizeof path, "%s/%s", root, files[i]);
		unlink(path);
	}
	snprintf(path, sizeof path, "%s/aaa", root);
	rmdir(path);
	snprintf(path, sizeof path, "%s/bbb", root);
	rmdir(path);
	CHECK(rmdir(root) == 0);
	free(other);
	free(cubin);
}

int main(void)
{
	test_classify();
	test_wrapper();
	test_entries();
	test_ptx_decode();
	test_pick_ptx();
	test_kernel_names();
	test_truncated();
	test_huge_sizes();
	test_mutations();
	test_demangle();
	test_triton_cache();
	test_inductor_cache();
	test_rdc_helpers();
	return testlib_report();
}
