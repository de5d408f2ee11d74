/* AMDGPU images offline: msgpack reader/writer, target IDs, offload bundles
 * (plain, compressed, in a host library, behind a HIPF wrapper), code
 * objects, kernel descriptors and metadata edits. Data:
 * tests/corpus/amdgpu (regen.sh there builds it with clang-19). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/amdgpu/amdgpu_asm.h"
#include "engine/amdgpu/amdgpu_bundle.h"
#include "engine/amdgpu/amdgpu_disasm.h"
#include "engine/amdgpu/amdgpu_co.h"
#include "engine/amdgpu/amdgpu_image.h"
#include "engine/amdgpu/amdgpu_msgpack.h"
#include "engine/amdgpu/amdgpu_regs.h"
#include "engine/amdgpu/amdgpu_target.h"
#include "testlib.h"

static uint8_t *load(const char *name, size_t *len)
{
	return testlib_corpus("amdgpu", name, len);
}


/* ---- msgpack ---- */

static void roundtrip_bytes(const uint8_t *in, size_t n, const char *what)
{
	struct msgpack_node root;
	char *cause = NULL;
	uint8_t *q = testlib_dup_exact(in, n);
	int r = msgpack_read(q, n, &root, &cause);
	CHECKF(r == 0, "%s: %s", what, cause ? cause : "");
	if (r == 0) {
		uint8_t *out = NULL;
		size_t len = 0;
		CHECK(msgpack_write(&root, &out, &len, &cause) == 0);
		CHECKF(len == n && memcmp(out, in, n) == 0, "%s written back differs (%zu vs %zu bytes)", what, len,
		       n);
		free(out);
		msgpack_free(&root);
	}
	free(q);
	free(cause);
}

static void test_msgpack_forms(void)
{
	/* one value of each smallest form the writer must pick */
	static const struct {
		const char *what;
		uint8_t b[12];
		size_t n;
	} cases[] = {
		{ "fixint", { 0x7f }, 1 },
		{ "uint8", { 0xcc, 0x80 }, 2 },
		{ "uint16", { 0xcd, 0x01, 0x00 }, 3 },
		{ "uint32", { 0xce, 0x00, 0x01, 0x00, 0x00 }, 5 },
		{ "uint64", { 0xcf, 0, 0, 0, 1, 0, 0, 0, 0 }, 9 },
		{ "negfix", { 0xe0 }, 1 },
		{ "int8", { 0xd0, 0x80 }, 2 },
		{ "int16", { 0xd1, 0x80, 0x00 }, 3 },
		{ "int32", { 0xd2, 0x80, 0, 0, 0 }, 5 },
		{ "nil true false", { 0x93, 0xc0, 0xc3, 0xc2 }, 4 },
		{ "float64", { 0xcb, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0 }, 9 },
		{ "float32", { 0xca, 0x3f, 0x80, 0, 0 }, 5 },
		{ "fixmap", { 0x81, 0xa1, 'k', 0xa1, 'v' }, 5 },
		{ "bin8", { 0xc4, 0x02, 0xde, 0xad }, 4 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		roundtrip_bytes(cases[i].b, cases[i].n, cases[i].what);

	/* str8 starts at 32 bytes, array16 at 16 items */
	uint8_t s[40] = { 0xd9, 32 };
	memset(s + 2, 'a', 32);
	roundtrip_bytes(s, 34, "str8");
	uint8_t a[20] = { 0xdc, 0, 16 };
	memset(a + 3, 0x01, 16);
	roundtrip_bytes(a, 19, "array16");
	struct msgpack_node root;
	uint8_t *q = testlib_dup_exact(s, 34);
	CHECK(msgpack_read(q, 34, &root, NULL) == 0 && root.type == MSGPACK_STR && root.len == 32);
	msgpack_free(&root);
	free(q);
}

static void expect_read_fail(const uint8_t *b, size_t n, const char *want, const char *what)
{
	struct msgpack_node root;
	char *cause = NULL;
	uint8_t *q = testlib_dup_exact(b, n);
	CHECKF(msgpack_read(q, n, &root, &cause) < 0, "%s accepted", what);
	CHECKF(cause && strstr(cause, want), "%s: cause '%s' lacks '%s'", what, cause ? cause : "", want);
	free(cause);
	free(q);
}

static void test_msgpack_bad(void)
{
	static const uint8_t trunc[] = { 0xcd, 0x01 }, trailing[] = { 0x01, 0x02 }, ext[] = { 0xd4, 0x01, 0x02 },
			     huge[] = { 0xdd, 0xff, 0xff, 0xff, 0xff }, str[] = { 0xa5, 'a', 'b' };
	expect_read_fail(trunc, sizeof trunc, "past the end", "truncated uint16");
	expect_read_fail(trailing, sizeof trailing, "after the msgpack value", "trailing byte");
	expect_read_fail(ext, sizeof ext, "0xd4", "extension type");
	expect_read_fail(huge, sizeof huge, "claims", "array claiming 4G items");
	expect_read_fail(str, sizeof str, "past the end", "short string");
	uint8_t deep[64];
	memset(deep, 0x91, sizeof deep); /* arrays of one array of ... */
	deep[63] = 0x01;
	expect_read_fail(deep, sizeof deep, "deeper", "64 nested arrays");
}

static void test_msgpack_edit(void)
{
	/* {"b": 1}: put "a" lands first, "c" last, "b" replaced in place */
	static const uint8_t in[] = { 0x81, 0xa1, 'b', 0x01 };
	struct msgpack_node root;
	uint8_t *q = testlib_dup_exact(in, sizeof in);
	CHECK(msgpack_read(q, sizeof in, &root, NULL) == 0);
	msgpack_set_uint(msgpack_map_put(&root, "c"), 3);
	msgpack_set_uint(msgpack_map_put(&root, "a"), 300);
	msgpack_set_str(msgpack_map_put(&root, "b"), "x");
	uint8_t *out = NULL;
	size_t len = 0;
	CHECK(msgpack_write(&root, &out, &len, NULL) == 0);
	static const uint8_t want[] = { 0x83, 0xa1, 'a', 0xcd, 0x01, 0x2c, 0xa1, 'b', 0xa1, 'x', 0xa1, 'c', 0x03 };
	CHECKF(len == sizeof want && memcmp(out, want, len) == 0, "edited map encodes as %zu bytes", len);
	free(out);
	msgpack_free(&root);
	free(q);
}

/* ---- targets ---- */

static void test_targets(void)
{
	struct amdgpu_target t, dev;
	char buf[64], *cause = NULL;
	CHECK(amdgpu_target_parse("hipv4-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-", &t, NULL) == 0);
	amdgpu_target_format(&t, buf, sizeof buf);
	CHECK(strcmp(buf, "gfx90a:sramecc+:xnack-") == 0);
	CHECK(amdgpu_target_parse("hip-amdgcn-amd-amdhsa-gfx906", &t, NULL) == 0 && strcmp(t.proc, "gfx906") == 0);
	CHECK(amdgpu_target_parse("gfx9-generic", &t, NULL) == 0 && amdgpu_target_family(t.proc) == AMDGPU_FAMILY_GFX9);
	CHECK(amdgpu_target_parse("gfx90a:xnack", &t, &cause) < 0 && strstr(cause, "trailing"));
	CHECK(amdgpu_target_parse("gfx90a:foo+", &t, &cause) < 0 && strstr(cause, "unknown target feature"));
	CHECK(amdgpu_target_parse("gfx999", &t, &cause) < 0 && strstr(cause, "gfx999"));
	free(cause);
	CHECK(strcmp(amdgpu_target_mach_name(0x3f), "gfx90a") == 0 && amdgpu_target_mach("gfx1201") == 0x4e);
	CHECK(amdgpu_target_family("gfx942") == AMDGPU_FAMILY_GFX94 && amdgpu_target_family("gfx1030") ==
	      AMDGPU_FAMILY_GFX10_3 && amdgpu_target_family("gfx1100") == AMDGPU_FAMILY_GFX11);

	/* a device with xnack- may load "any" and "xnack-" code, not "xnack+" */
	amdgpu_target_parse("gfx90a:sramecc+:xnack-", &dev, NULL);
	struct amdgpu_target any, on, off;
	amdgpu_target_parse("gfx90a", &any, NULL);
	amdgpu_target_parse("gfx90a:xnack+", &on, NULL);
	amdgpu_target_parse("gfx90a:xnack-", &off, NULL);
	CHECK(amdgpu_target_match(&dev, &any) == 0 && amdgpu_target_match(&dev, &off) == 1 &&
	      amdgpu_target_match(&dev, &on) < 0);
	amdgpu_target_parse("gfx942", &any, NULL);
	CHECK(amdgpu_target_match(&dev, &any) < 0);
}

/* ---- bundles and images ---- */

static void check_objects(const char *file, int want_n, int want_compressed, const char *const *procs)
{
	size_t len;
	uint8_t *p = load(file, &len);
	if (!p)
		return;
	struct amdgpu_objects o;
	char *cause = NULL;
	int r = amdgpu_image_objects(p, len, &o, &cause);
	CHECKF(r == 0, "%s: %s", file, cause ? cause : "");
	if (r == 0) {
		CHECKF(o.n == want_n, "%s: %d objects, want %d", file, o.n, want_n);
		for (int i = 0; i < o.n && i < want_n; i++) {
			CHECKF(strcmp(o.v[i].target.proc, procs[i]) == 0, "%s object %d is %s, want %s", file, i,
			       o.v[i].target.proc, procs[i]);
			CHECK(o.v[i].compressed == want_compressed);
			struct amdgpu_co co;
			CHECKF(amdgpu_co_open(o.v[i].data, o.v[i].size, &co, &cause) == 0, "%s/%d: %s", file, i,
			       cause ? cause : "");
			CHECK(strcmp(co.elf.target.proc, procs[i]) == 0);
			amdgpu_co_done(&co);
		}
		amdgpu_image_objects_done(&o);
	}
	free(cause);
	free(p);
}

static void test_images(void)
{
	static const char *const four[] = { "gfx1100", "gfx1201", "gfx90a", "gfx942" };
	static const char *const two[] = { "gfx1100", "gfx90a" };
	static const char *const one[] = { "gfx90a" };
	static const char *const files[] = { "calls.z.hipfb", "grid3d.z.hipfb", "mfma.z.hipfb", "reduce.z.hipfb",
					     "vecadd.z.hipfb" };
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
		check_objects(files[i], 4, 1, four);
	check_objects("vecadd.hipfb", 4, 0, four);
	check_objects("libhipvec.so", 2, 1, two);
	check_objects("vecadd.gfx90a.co", 1, 0, one);
}

/* The compressed bundle holds byte for byte the plain one's objects. */
static void test_compressed_equals_plain(void)
{
	size_t lp, lz;
	uint8_t *p = load("vecadd.hipfb", &lp), *z = load("vecadd.z.hipfb", &lz);
	struct amdgpu_objects op, oz;
	if (!p || !z || amdgpu_image_objects(p, lp, &op, NULL) < 0 || amdgpu_image_objects(z, lz, &oz, NULL) < 0) {
		CHECK(0);
		free(p);
		free(z);
		return;
	}
	CHECK(op.n == oz.n);
	for (int i = 0; i < op.n && i < oz.n; i++)
		CHECKF(op.v[i].size == oz.v[i].size && memcmp(op.v[i].data, oz.v[i].data, op.v[i].size) == 0,
		       "object %d differs after inflating", i);
	CHECK(lz * 4 < lp); /* it is compressed at all */
	amdgpu_image_objects_done(&op);
	amdgpu_image_objects_done(&oz);
	free(p);
	free(z);
}

/* Every prefix of a compressed and of a plain bundle fails with a cause
 * (ASan watches for reads past the end); zlib is refused by name. */
static void test_truncated(void)
{
	static const char *const files[] = { "vecadd.z.hipfb", "vecadd.hipfb" };
	for (size_t f = 0; f < 2; f++) {
		size_t len;
		uint8_t *p = load(files[f], &len);
		if (!p)
			continue;
		int failed_ok = 0, tried = 0;
		size_t step = len > 4096 ? 97 : 1;
		for (size_t n = 1; n < len; n += step) {
			uint8_t *q = testlib_dup_exact(p, n);
			struct amdgpu_objects o;
			char *cause = NULL;
			int r = amdgpu_image_objects(q, n, &o, &cause);
			tried++;
			if (r < 0)
				failed_ok += cause != NULL;
			else
				amdgpu_image_objects_done(&o); /* a prefix holding whole objects may parse */
			free(cause);
			free(q);
		}
		CHECKF(failed_ok > tried / 2, "%s: %d of %d prefixes refused with a cause", files[f], failed_ok, tried);
		free(p);
	}
	size_t len;
	uint8_t *z = load("vecadd.z.hipfb", &len);
	if (z) {
		z[6] = 0; /* method: zlib */
		char *cause = NULL;
		struct amdgpu_objects o;
		CHECK(amdgpu_image_objects(z, len, &o, &cause) < 0 && cause && strstr(cause, "zlib"));
		free(cause);
		free(z);
	}
}

/* A live HIPF wrapper: the pointer is trusted, sizes come from headers. */
static void test_wrapper(void)
{
	size_t len;
	uint8_t *b = load("vecadd.z.hipfb", &len);
	if (!b)
		return;
	uint8_t w[AMDGPU_HIPF_SIZE] = { 0 };
	uint32_t magic = AMDGPU_HIPF_MAGIC, version = 1;
	uint64_t addr = (uint64_t)(uintptr_t)b;
	memcpy(w, &magic, 4);
	memcpy(w + 4, &version, 4);
	memcpy(w + 8, &addr, 8);
	struct amdgpu_objects o;
	char *cause = NULL;
	CHECKF(amdgpu_image_objects(w, 0, &o, &cause) == 0 && o.n == 4, "wrapper: %s", cause ? cause : "");
	if (!cause) {
		struct amdgpu_target dev;
		amdgpu_target_parse("gfx942:sramecc+:xnack-", &dev, NULL);
		int i = amdgpu_image_pick(&o, &dev, &cause);
		CHECK(i >= 0 && strcmp(o.v[i].target.proc, "gfx942") == 0);
		amdgpu_target_parse("gfx1030", &dev, NULL);
		CHECK(amdgpu_image_pick(&o, &dev, &cause) < 0 && strstr(cause, "gfx1030") && strstr(cause, "gfx90a"));
		amdgpu_image_objects_done(&o);
	}
	version = 2;
	memcpy(w + 4, &version, 4);
	CHECK(amdgpu_image_objects(w, 0, &o, &cause) < 0 && strstr(cause, "version 2"));
	free(cause);
	free(b);
}

/* ---- descriptors and metadata ---- */

/* Opens object `proc` of a corpus bundle; a failure is a test failure. */
static int open_co(const char *file, const char *proc, uint8_t **img, struct amdgpu_objects *o, struct amdgpu_co *co)
{
	size_t len;
	*img = load(file, &len);
	if (*img && amdgpu_image_objects(*img, len, o, NULL) == 0) {
		for (int i = 0; i < o->n; i++)
			if (strcmp(o->v[i].target.proc, proc) == 0 &&
			    amdgpu_co_open(o->v[i].data, o->v[i].size, co, NULL) == 0)
				return 0;
		amdgpu_image_objects_done(o);
	}
	CHECKF(0, "%s %s does not open", file, proc);
	free(*img);
	return -1;
}

static void close_co(uint8_t *img, struct amdgpu_objects *o, struct amdgpu_co *co)
{
	amdgpu_co_done(co);
	amdgpu_image_objects_done(o);
	free(img);
}

static void test_kd_fields(void)
{
	static const struct {
		const char *file, *proc, *kernel;
		int kernarg_sgpr, wave32, wg_y, workitem_ids, agprs, scratch, lds;
	} cases[] = {
		/* HIP on gfx90a keeps the private segment buffer in s[0:3]: kernarg pointer at s[4:5] */
		{ "vecadd.z.hipfb", "gfx90a", "vecadd", 4, 0, 0, 0, 0, 0, 0 },
		/* gfx942 and gfx11+ use architected flat scratch: no buffer, kernarg at s[0:1] */
		{ "vecadd.z.hipfb", "gfx942", "vecadd", 0, 0, 0, 0, 0, 0, 0 },
		{ "vecadd.z.hipfb", "gfx1100", "vecadd", 0, 1, 0, 0, 0, 0, 0 },
		{ "vecadd.z.hipfb", "gfx1201", "vecadd", 0, 1, 0, 0, 0, 0, 0 },
		{ "grid3d.z.hipfb", "gfx90a", "fill3d", 4, 0, 1, 2, 0, 0, 0 },
		{ "mfma.z.hipfb", "gfx90a", "mfma_tile", 4, 0, 0, 0, 1, 0, 0 },
		{ "mfma.z.hipfb", "gfx942", "mfma_tile", 0, 0, 0, 0, 1, 0, 0 },
		{ "calls.z.hipfb", "gfx90a", "calls", -2, 0, 0, 0, 0, 1, 0 },
		{ "reduce.z.hipfb", "gfx1100", "reduce_sum", 0, 1, 0, 0, 0, 0, 1 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		uint8_t *img;
		struct amdgpu_objects o;
		struct amdgpu_co co;
		if (open_co(cases[i].file, cases[i].proc, &img, &o, &co) < 0)
			continue;
		const struct amdgpu_co_kernel *k = amdgpu_co_kernel(&co, cases[i].kernel);
		CHECKF(k != NULL, "%s %s: no kernel %s", cases[i].file, cases[i].proc, cases[i].kernel);
		if (k) {
			char *cause = NULL;
			CHECKF(amdgpu_co_check_kernel(&co, k, &cause) == 0, "%s", cause ? cause : "");
			free(cause);
			if (cases[i].kernarg_sgpr >= -1)
				CHECK_EQ_INT(amdgpu_kd_kernarg_sgpr(&k->kd), cases[i].kernarg_sgpr);
			else /* with calls: dispatch/queue pointers may come first */
				CHECK(amdgpu_kd_kernarg_sgpr(&k->kd) >= 4);
			CHECK_EQ_INT(k->kd.wave32, cases[i].wave32);
			CHECK_EQ_INT(k->meta->wavefront_size, cases[i].wave32 ? 32 : 64);
			CHECK_EQ_INT(k->kd.wg_id[1], cases[i].wg_y);
			CHECK_EQ_INT(k->kd.vgpr_workitem_ids, cases[i].workitem_ids);
			CHECK_EQ_INT(k->meta->agpr_count > 0, cases[i].agprs);
			if (cases[i].agprs)
				CHECK(k->kd.accum_offset > 0 && k->kd.accum_offset % 4 == 0);
			CHECK_EQ_INT(k->kd.private_segment_fixed_size > 0, cases[i].scratch);
			CHECK_EQ_INT(k->kd.group_segment_fixed_size == 1024, cases[i].lds);
			CHECK_EQ_INT(amdgpu_kd_wg_id_sgpr(&k->kd, 0), (int)k->kd.user_sgprs);
			CHECK(amdgpu_kd_wg_id_sgpr(&k->kd, 2) == (cases[i].wg_y ? (int)k->kd.user_sgprs + 2 : -1));
		}
		close_co(img, &o, &co);
	}
}

static void test_kd_patch(void)
{
	uint8_t *img;
	struct amdgpu_objects o;
	struct amdgpu_co co;
	if (open_co("mfma.z.hipfb", "gfx90a", &img, &o, &co) < 0)
		return;
	const struct amdgpu_co_kernel *k = &co.k[0];
	uint8_t raw[AMDGPU_KD_SIZE];
	amdgpu_kd_encode(&k->kd, raw);
	CHECK(memcmp(raw, co.elf.p + k->sym->kd_off, AMDGPU_KD_SIZE) == 0); /* decode/encode is lossless */
	struct amdgpu_kd kd = k->kd;
	unsigned before = amdgpu_kd_vgprs(&kd, co.elf.family);
	amdgpu_kd_set_vgprs(&kd, before + 8, co.elf.family);
	CHECK_EQ_INT(amdgpu_kd_vgprs(&kd, co.elf.family), before + 8);
	amdgpu_kd_set_sgprs(&kd, 40, co.elf.family);
	CHECK_EQ_INT(amdgpu_kd_sgprs(&kd, co.elf.family), 40);
	kd.kernarg_size += 8;
	amdgpu_kd_encode(&kd, raw);
	const uint8_t *orig = co.elf.p + k->sym->kd_off;
	/* only kernarg_size (8..11) and rsrc1 (48..51) changed */
	for (int b = 0; b < AMDGPU_KD_SIZE; b++)
		if ((b < 8 || b > 11) && (b < 48 || b > 51))
			CHECKF(raw[b] == orig[b], "byte %d changed", b);
	CHECK((raw[48] & 0x3f) != (orig[48] & 0x3f));
	/* gfx11 has no SGPR granule field: setting one changes nothing */
	CHECK_EQ_INT(amdgpu_kd_sgpr_granules(100, AMDGPU_FAMILY_GFX11), 0);
	CHECK_EQ_INT(amdgpu_kd_vgpr_granules(9, AMDGPU_FAMILY_GFX11, 1), 1);  /* granule 8 */
	CHECK_EQ_INT(amdgpu_kd_vgpr_granules(9, AMDGPU_FAMILY_GFX11, 0), 2);  /* granule 4 */
	CHECK_EQ_INT(amdgpu_kd_vgpr_granules(9, AMDGPU_FAMILY_GFX9, 0), 2);
	close_co(img, &o, &co);
}

static void test_meta_append(void)
{
	uint8_t *img;
	struct amdgpu_objects o;
	struct amdgpu_co co;
	if (open_co("vecadd.z.hipfb", "gfx90a", &img, &o, &co) < 0)
		return;
	const struct amdgpu_meta_kernel *mk = amdgpu_meta_kernel(&co.meta, "vecadd.kd");
	CHECK(mk && mk->kernarg_size == 288 && mk->n_explicit == 4 && mk->n_args == 17);
	uint32_t off = 0;
	char *cause = NULL;
	CHECK(amdgpu_meta_append_buffer(&co.meta, "vecadd", "ntop_map0", &off, &cause) == 0);
	CHECK_EQ_INT(off, 288);
	uint8_t *out = NULL;
	size_t len = 0;
	CHECK(amdgpu_meta_write(&co.meta, &out, &len, &cause) == 0);
	struct amdgpu_meta m2;
	CHECKF(amdgpu_meta_read(out, len, &m2, &cause) == 0, "%s", cause ? cause : "");
	const struct amdgpu_meta_kernel *k2 = amdgpu_meta_kernel(&m2, "vecadd");
	CHECK(k2 && k2->kernarg_size == 296 && k2->n_args == 18 && k2->n_explicit == 5);
	if (k2 && k2->n_args == 18) {
		const struct amdgpu_meta_arg *a = &k2->args[17];
		CHECK(a->offset == 288 && a->size == 8 && strcmp(a->value_kind, "global_buffer") == 0 &&
		      strcmp(a->name, "ntop_map0") == 0 && strcmp(a->address_space, "global") == 0);
	}
	/* the other kernels are untouched */
	const struct amdgpu_meta_kernel *s1 = amdgpu_meta_kernel(&co.meta, "_Z5scaleIfEvPT_S0_i"),
					*s2 = amdgpu_meta_kernel(&m2, "_Z5scaleIfEvPT_S0_i");
	CHECK(s1 && s2 && s1->kernarg_size == s2->kernarg_size && s1->n_args == s2->n_args);
	CHECK(amdgpu_meta_append_buffer(&co.meta, "nosuch", "x", &off, &cause) < 0 && strstr(cause, "nosuch"));
	amdgpu_meta_done(&m2);
	free(out);
	free(cause);
	close_co(img, &o, &co);
}

/* llvm-objdump text (LLVM 19, gfx90a, trimmed): a loop, a s_getpc_b64
 * unit, and the padding after the kernel. */
static const char objdump_text[] =
	"\nx.co:\tfile format elf64-amdgpu\n\nDisassembly of section .text:\n\n"
	"0000000000001b00 <calls>:\n"
	"\ts_mov_b64 s[4:5], 0                                        // 000000001B00: BE840180\n"
	"\n0000000000001b04 <L0>:\n"
	"\ts_getpc_b64 s[6:7]                                         // 000000001B04: BE861C00\n"
	"\ts_add_u32 s6, s6, 0xfffffd50                               // 000000001B08: 8006FF06 FFFFFD50\n"
	"\ts_addc_u32 s7, s7, -1                                      // 000000001B10: 8207FF07 FFFFFFFF\n"
	"\ts_cbranch_execnz L0                                        // 000000001B18: BF89FFFA\n"
	"\ts_endpgm                                                   // 000000001B1C: BF810000\n"
	"\ts_nop 0                                                    // 000000001B20: BF800000\n";

static void test_disasm_parse(void)
{
	struct amdgpu_disasm d = { 0 };
	char *text = strdup(objdump_text), *cause = NULL;
	CHECKF(amdgpu_disasm_parse(text, &d, &cause) == 0, "%s", cause ? cause : "");
	const struct amdgpu_func *f = amdgpu_disasm_func(&d, "calls");
	CHECK(f && f->n == 7 && f->addr == 0x1b00 && f->units == 1);
	if (f && f->n == 7) {
		CHECK(f->v[1].label == 0 && f->v[0].label == -1 && f->v[2].size == 8);
		CHECK(f->v[1].getpc == AMDGPU_GETPC_GET && f->v[2].getpc == AMDGPU_GETPC_LO &&
		      f->v[3].getpc == AMDGPU_GETPC_HI);
		/* PC after s_getpc_b64 (0x1b08) plus -0x2b0 */
		CHECK(f->v[2].target == 0x1b08 - 0x2b0 && f->v[3].target == f->v[2].target);
		CHECK_EQ_INT(amdgpu_asm_branch_label(&f->v[4]), 0);
		CHECK_EQ_INT(amdgpu_asm_branch_label(&f->v[0]), -1);
		CHECK_EQ_INT(amdgpu_asm_count(f, 0x20), 6); /* the s_nop is padding */
		CHECK(amdgpu_asm_movable(f, 6, NULL) == 0);
		const char *before[7] = { NULL, "\ts_nop 1" };
		struct amdgpu_asm_ins ins = { .prologue = "\ts_nop 2", .before = before };
		char *w = amdgpu_asm_text(f, 6, &ins, AMDGPU_ASM_WORDS), *t = amdgpu_asm_text(f, 6, NULL, AMDGPU_ASM_TEXT);
		/* words mode: the label before the inserted code, the app's
		 * instructions as words, the branch as text */
		/* the prologue ahead of everything, instruction 0 included */
		static const char head[] = "\t.text\n\ts_nop 2\n\t.long 0xbe840180\n";
		CHECK(w && strncmp(w, head, sizeof head - 1) == 0);
		CHECK(w && strstr(w, "\t.long 0xbe840180\nL0:\n\ts_nop 1\n\ts_getpc_b64 s[6:7]\nntop_pc0:\nntop_lo0:\n"
				   "\t.long 0x8006ff06\n\t.long 0xfffffd50\n"));
		CHECK(w && strstr(w, "\ts_cbranch_execnz L0\n\t.long 0xbf810000\n") && !strstr(w, "0xbf800000"));
		CHECK(t && strstr(t, "\ts_mov_b64 s[4:5], 0\n") && strstr(t, "\ts_endpgm\n"));
		free(w);
		free(t);
		/* listed field: gfx10+ v_cmpx e64 destination byte */
		struct amdgpu_insn cmpx = { .size = 8, .bytes = { 0x00, 0x00, 0xf4, 0xd4, 0x02, 0x14, 0x02, 0x00 },
					    .text = "v_cmpx_gt_u64_e64 s[2:3], v[10:11]" };
		const uint8_t llvm19[8] = { 0x7e, 0x00, 0xf4, 0xd4, 0x02, 0x14, 0x02, 0x00 },
			      other[8] = { 0x7e, 0x00, 0xf4, 0xd4, 0x02, 0x14, 0x03, 0x00 };
		CHECK(amdgpu_asm_diff_field(&cmpx, cmpx.bytes, AMDGPU_FAMILY_GFX10_3) == NULL);
		CHECK(strcmp(amdgpu_asm_diff_field(&cmpx, llvm19, AMDGPU_FAMILY_GFX10_3), "vopc_cmpx_vdst") == 0);
		CHECK(strcmp(amdgpu_asm_diff_field(&cmpx, other, AMDGPU_FAMILY_GFX10_3), "") == 0);
		CHECK(strcmp(amdgpu_asm_diff_field(&cmpx, llvm19, AMDGPU_FAMILY_GFX9), "") == 0);
	}
	/* a branch objdump could not name: the function cannot move */
	struct amdgpu_insn out = { .size = 4, .text = "s_branch 4000" };
	struct amdgpu_func g = { .v = &out, .n = 1 };
	CHECK(amdgpu_asm_movable(&g, 1, &cause) < 0 && strstr(cause, "out of the function"));
	/* a word LLVM 19 cannot decode (Triton's gfx1100 tt_rowsum): the words
	 * after it may be its operands read as instructions */
	struct amdgpu_insn undecoded[2] = { { .size = 4, .addr = 0x1744, .text = ".long 0xd7600004" },
					    { .size = 4, .addr = 0x1748, .text = "v_cndmask_b32_e32 v0, v2, v159, vcc_lo" } };
	struct amdgpu_func u = { .v = undecoded, .n = 2 };
	CHECK(amdgpu_asm_movable(&u, 2, &cause) < 0 && cause &&
	      strstr(cause, "word 0xd7600004 at 0x1744: LLVM 19's disassembler cannot decode it"));
	CHECK(amdgpu_asm_movable(&u, 0, NULL) == 0);
	amdgpu_disasm_done(&d);
	free(text);
	free(cause);
}

static void test_regs(void)
{
	static const char text[] =
		"0000000000001900 <k>:\n"
		"\ts_load_dwordx2 s[4:5], s[0:1], 0x0   // 000000001900: C0060100 00000000\n"
		"\ts_waitcnt vmcnt(0) lgkmcnt(0)       // 000000001908: BF8C0000\n"
		"\tv_add_co_u32_e32 v10, vcc, s6, v0   // 00000000190C: 32140006\n"
		"\tv_mfma_f32_32x32x8f16 a[0:15], v[2:3], v[4:5], a[0:15] // 000000001910: D3E88000 04020902\n"
		"\tv_accvgpr_read_b32 v1, a17          // 000000001918: D3D84001 18000111\n"
		"\ts_endpgm                            // 000000001920: BF810000\n";
	struct amdgpu_disasm d = { 0 };
	char *t = strdup(text), *cause = NULL;
	CHECK(amdgpu_disasm_parse(t, &d, NULL) == 0 && d.n == 1);
	struct amdgpu_regs r;
	if (d.n == 1) {
		amdgpu_regs_scan(&d.f[0], d.f[0].n, &r);
		CHECK(r.sgpr_max == 6 && r.vgpr_max == 10 && r.agpr_max == 17 && r.vcc && !r.calls);
	}
	amdgpu_disasm_done(&d);
	free(t);

	uint8_t *img;
	struct amdgpu_objects o;
	struct amdgpu_co co;
	if (open_co("mfma.z.hipfb", "gfx90a", &img, &o, &co) < 0)
		return;
	const struct amdgpu_co_kernel *k = &co.k[0];
	struct amdgpu_alloc a;
	/* the real kernel: 16 AGPRs from accum_offset; probe VGPRs reaching it move it */
	struct amdgpu_regs used = { .sgpr_max = 9, .vgpr_max = (int)k->kd.accum_offset - 1, .agpr_max = 15 };
	CHECKF(amdgpu_regs_alloc(&co, k, &used, 4, 2, &a, &cause) == 0, "%s", cause ? cause : "");
	CHECK(a.sgpr == 10 && a.vgpr == (int)k->kd.accum_offset && a.vgpr % 2 == 0);
	CHECK(a.accum_offset >= (unsigned)a.vgpr + 2 && a.accum_offset % 4 == 0 && a.kd_vgprs == a.accum_offset + 16);
	CHECK_EQ_INT(a.kernarg_sgpr, 4);
	struct amdgpu_kd kd = k->kd;
	amdgpu_regs_apply(&co, &a, &kd);
	CHECK(kd.accum_offset == a.accum_offset && amdgpu_kd_vgprs(&kd, co.elf.family) >= a.kd_vgprs &&
	      amdgpu_kd_sgprs(&kd, co.elf.family) >= (unsigned)a.sgpr + 4);
	/* odd SGPR maximum: the probe's pairs start even */
	used.sgpr_max = 10;
	CHECK(amdgpu_regs_alloc(&co, k, &used, 2, 1, &a, NULL) == 0 && a.sgpr == 12);
	/* gfx9 keeps 6 SGPRs below 102 for VCC, FLAT_SCRATCH, XNACK_MASK */
	used.sgpr_max = 93;
	CHECK(amdgpu_regs_alloc(&co, k, &used, 2, 1, &a, NULL) == 0 && a.sgpr == 94);
	CHECK(amdgpu_regs_alloc(&co, k, &used, 4, 1, &a, &cause) < 0 && strstr(cause, "no free SGPRs"));
	used.sgpr_max = 9;
	used.vgpr_max = 255;
	CHECK(amdgpu_regs_alloc(&co, k, &used, 2, 2, &a, &cause) < 0 && strstr(cause, "no free VGPRs"));
	used.vgpr_max = 3;
	struct amdgpu_co_kernel nokernarg = *k;
	nokernarg.kd.properties &= (uint16_t)~AMDGPU_KD_KERNARG_SEGMENT_PTR;
	CHECK(amdgpu_regs_alloc(&co, &nokernarg, &used, 2, 2, &a, &cause) < 0 && strstr(cause, "no kernarg pointer"));
	free(cause);
	close_co(img, &o, &co);
}

int main(void)
{
	test_msgpack_forms();
	test_msgpack_bad();
	test_msgpack_edit();
	test_targets();
	test_images();
	test_compressed_equals_plain();
	test_truncated();
	test_wrapper();
	test_kd_fields();
	test_kd_patch();
	test_meta_append();
	test_disasm_parse();
	test_regs();
	return testlib_report();
}
