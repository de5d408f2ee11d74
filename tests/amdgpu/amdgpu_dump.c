/* Test tool: prints what ntop's AMDGPU decoders read, in the forms LLVM's
 * tools print, so the regress scripts can hold one against the other.
 *   amdgpu_dump extract FILE DIR   writes every code object in FILE to
 *                                  DIR/N.co, one "N ID" line each
 *   amdgpu_dump notes FILE.co      the metadata tree, one "key: value" per
 *                                  scalar (llvm-readelf --notes, flattened)
 *   amdgpu_dump kd FILE.co         each descriptor as .amdhsa_* directives
 *                                  (llvm-objdump -D -j .rodata)
 *   amdgpu_dump flags FILE.co      e_flags decoded (llvm-readelf -h "Flags:")
 *   amdgpu_dump summary FILE...    objects, kernels and failures per file;
 *                                  every object opened, every kernel checked
 *                                  (descriptor against metadata), and its
 *                                  metadata written back byte-identical.
 *                                  Exit 1 when anything failed.
 *   amdgpu_dump roundtrip FILE...  every kernel disassembled (llvm-objdump)
 *                                  and reassembled (llvm-mc) with nothing
 *                                  inserted, as words (identical bytes
 *                                  expected) and from text (identical or
 *                                  differing only in listed fields); then
 *                                  with an s_nop before every instruction:
 *                                  every branch must reach the same
 *                                  instruction and every s_getpc_b64 unit
 *                                  the same address. A kernel with a word
 *                                  llvm-objdump cannot decode is counted
 *                                  refused, as the engine refuses it. Exit
 *                                  1 when any kernel fails. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "engine/amdgpu/amdgpu_asm.h"
#include "engine/amdgpu/amdgpu_co.h"
#include "engine/amdgpu/amdgpu_disasm.h"
#include "engine/amdgpu/amdgpu_image.h"
#include "engine/amdgpu/amdgpu_msgpack.h"
#include "engine/amdgpu/amdgpu_regs.h"
#include "amdgpu_files.h"

static void print_scalar(const struct msgpack_node *n)
{
	switch (n->type) {
	case MSGPACK_NIL: printf("null"); break;
	case MSGPACK_BOOL: printf("%s", n->v.u ? "true" : "false"); break;
	case MSGPACK_UINT: printf("%llu", (unsigned long long)n->v.u); break;
	case MSGPACK_INT: printf("%lld", (long long)n->v.i); break;
	case MSGPACK_FLOAT: printf("%g", n->v.f); break;
	case MSGPACK_STR: printf("%s", n->str); break;
	default: printf("<%u bytes>", n->len); break;
	}
}

/* Flattened YAML: containers print "key:" then their items, scalars
 * "key: value" or, as array items, "value". */
static void print_tree(const struct msgpack_node *n, const char *key)
{
	if (n->type == MSGPACK_MAP || n->type == MSGPACK_ARRAY) {
		if (key)
			printf("%s:\n", key);
		for (uint32_t i = 0; i < n->len; i++) {
			if (n->type == MSGPACK_ARRAY) {
				print_tree(&n->kids[i], NULL);
				continue;
			}
			const struct msgpack_node *k = &n->kids[2 * i];
			print_tree(&n->kids[2 * i + 1], k->type == MSGPACK_STR ? k->str : "?");
		}
		return;
	}
	if (key)
		printf("%s: ", key);
	print_scalar(n);
	printf("\n");
}

static void print_notes(const struct amdgpu_co *co)
{
	print_tree(&co->meta.root, NULL);
}

static void print_kd(const struct amdgpu_co *co, const struct amdgpu_co_kernel *k)
{
	const struct amdgpu_kd *kd = &k->kd;
	enum amdgpu_family f = co->elf.family;
	unsigned p = kd->properties;
	printf(".amdhsa_kernel %s\n", k->meta->name);
	printf("\t.amdhsa_group_segment_fixed_size %u\n", kd->group_segment_fixed_size);
	printf("\t.amdhsa_private_segment_fixed_size %u\n", kd->private_segment_fixed_size);
	printf("\t.amdhsa_kernarg_size %u\n", kd->kernarg_size);
	if (amdgpu_family_has_agprs(f))
		printf("\t.amdhsa_accum_offset %u\n", kd->accum_offset);
	printf("\t.amdhsa_next_free_vgpr %u\n", amdgpu_kd_vgprs(kd, f));
	if (f <= AMDGPU_FAMILY_GFX94)
		printf("\t.amdhsa_next_free_sgpr %u\n", amdgpu_kd_sgprs(kd, f));
	printf("\t.amdhsa_%s %d\n",
	       f == AMDGPU_FAMILY_GFX94 || f >= AMDGPU_FAMILY_GFX11 ? "enable_private_segment"
								      : "system_sgpr_private_segment_wavefront_offset",
	       kd->private_segment);
	for (int d = 0; d < 3; d++)
		printf("\t.amdhsa_system_sgpr_workgroup_id_%c %d\n", 'x' + d, kd->wg_id[d]);
	printf("\t.amdhsa_system_sgpr_workgroup_info %d\n", kd->wg_info);
	printf("\t.amdhsa_system_vgpr_workitem_id %u\n", kd->vgpr_workitem_ids);
	if (f != AMDGPU_FAMILY_GFX94 && f < AMDGPU_FAMILY_GFX11)
		printf("\t.amdhsa_user_sgpr_private_segment_buffer %d\n", !!(p & AMDGPU_KD_PRIVATE_SEGMENT_BUFFER));
	printf("\t.amdhsa_user_sgpr_dispatch_ptr %d\n", !!(p & AMDGPU_KD_DISPATCH_PTR));
	printf("\t.amdhsa_user_sgpr_queue_ptr %d\n", !!(p & AMDGPU_KD_QUEUE_PTR));
	printf("\t.amdhsa_user_sgpr_kernarg_segment_ptr %d\n", !!(p & AMDGPU_KD_KERNARG_SEGMENT_PTR));
	printf("\t.amdhsa_user_sgpr_dispatch_id %d\n", !!(p & AMDGPU_KD_DISPATCH_ID));
	printf("\t.amdhsa_user_sgpr_private_segment_size %d\n", !!(p & AMDGPU_KD_PRIVATE_SEGMENT_SIZE));
	if (f >= AMDGPU_FAMILY_GFX10_1)
		printf("\t.amdhsa_wavefront_size32 %d\n", kd->wave32);
	if (co->elf.co_version >= 5) /* a v5 field */
		printf("\t.amdhsa_uses_dynamic_stack %d\n", !!(p & AMDGPU_KD_USES_DYNAMIC_STACK));
	printf(".end_amdhsa_kernel\n");
}

static void print_kds(const struct amdgpu_co *co)
{
	for (int i = 0; i < co->n; i++)
		print_kd(co, &co->k[i]);
}

/* Opens the code object and prints it with fn. */
static int dump_co(const uint8_t *p, size_t len, void (*fn)(const struct amdgpu_co *))
{
	struct amdgpu_co co;
	char *cause = NULL;
	if (amdgpu_co_open(p, len, &co, &cause) < 0) {
		fprintf(stderr, "amdgpu_dump: %s\n", cause);
		return 1;
	}
	fn(&co);
	amdgpu_co_done(&co);
	return 0;
}

static const char *feature_word(enum amdgpu_feature f, int v3)
{
	switch (f) {
	case AMDGPU_FEAT_ANY: return "";
	case AMDGPU_FEAT_ON: return v3 ? "" : "+";
	case AMDGPU_FEAT_OFF: return "-";
	default: return NULL;
	}
}

/* llvm-readelf's words: v4+ "xnack" (any), "xnack+", "xnack-"; v3 "xnack"
 * when the bit is set. */
static int cmd_flags(const uint8_t *p, size_t len)
{
	struct amdgpu_elf e;
	char *cause = NULL;
	if (amdgpu_elf_open(p, len, &e, &cause) < 0) {
		fprintf(stderr, "amdgpu_dump: %s\n", cause);
		return 1;
	}
	int v3 = e.co_version == 3;
	const char *x = v3 && e.target.xnack == AMDGPU_FEAT_ANY ? NULL : feature_word(e.target.xnack, v3);
	const char *s = v3 && e.target.sramecc == AMDGPU_FEAT_ANY ? NULL : feature_word(e.target.sramecc, v3);
	printf("0x%X, %s", e.flags, e.target.proc);
	if (x)
		printf(", xnack%s", x);
	if (s)
		printf(", sramecc%s", s);
	printf("\n");
	amdgpu_elf_done(&e);
	return 0;
}

static int cmd_extract(const uint8_t *p, size_t len, const char *dir)
{
	struct amdgpu_objects o;
	char *cause = NULL;
	if (amdgpu_image_objects(p, len, &o, &cause) < 0) {
		fprintf(stderr, "amdgpu_dump: %s\n", cause);
		return 1;
	}
	for (int i = 0; i < o.n; i++) {
		char path[4096];
		snprintf(path, sizeof path, "%s/%d.co", dir, i);
		if (amdgpu_files_write(path, o.v[i].data, o.v[i].size) < 0)
			return 1;
		printf("%d %s\n", i, o.v[i].id);
	}
	amdgpu_image_objects_done(&o);
	return 0;
}

struct tally {
	int objects, kernels, failed;
	long meta_identical;
};

static void tally_fail(struct tally *t, const char *file, int obj, const char *id, const char *what)
{
	if (t->failed++ < 20)
		printf("FAIL %s object %d (%s): %s\n", file, obj, id, what);
}

/* Opens one object, checks every kernel and the metadata round trip. */
static void summary_object(struct tally *t, const char *file, int i, const struct amdgpu_object *obj)
{
	struct amdgpu_co co;
	char *cause = NULL;
	if (amdgpu_co_open(obj->data, obj->size, &co, &cause) < 0) {
		tally_fail(t, file, i, obj->id, cause);
		free(cause);
		return;
	}
	t->objects++;
	for (int k = 0; k < co.n; k++) {
		t->kernels++;
		if (amdgpu_co_check_kernel(&co, &co.k[k], &cause) < 0) {
			tally_fail(t, file, i, obj->id, cause);
			free(cause);
			cause = NULL;
		}
	}
	uint8_t *out = NULL;
	size_t len = 0;
	if (amdgpu_meta_write(&co.meta, &out, &len, &cause) == 0 && len == co.elf.meta_len &&
	    memcmp(out, co.elf.meta, len) == 0)
		t->meta_identical++;
	else
		tally_fail(t, file, i, obj->id, cause ? cause : "metadata written back differs");
	free(out);
	free(cause);
	amdgpu_co_done(&co);
}

static int cmd_summary(int argc, char **argv)
{
	struct tally all = { 0 };
	for (int a = 0; a < argc; a++) {
		struct amdgpu_files fo;
		if (amdgpu_files_open(argv[a], &fo) < 0) {
			all.failed++;
			continue;
		}
		struct tally t = { 0 };
		for (int i = 0; i < fo.o.n; i++)
			summary_object(&t, argv[a], i, &fo.o.v[i]);
		printf("%s: %d bundles, %d objects, %d kernels, %d failed, %ld metadata identical\n", argv[a],
		       fo.o.bundles, t.objects, t.kernels, t.failed, t.meta_identical);
		all.objects += t.objects;
		all.kernels += t.kernels;
		all.failed += t.failed;
		amdgpu_files_close(&fo);
	}
	printf("total: %d objects, %d kernels, %d failed\n", all.objects, all.kernels, all.failed);
	return all.failed ? 1 : 0;
}

struct rt_tally {
	int kernels, words_identical, text_identical, moved_ok, units, failed;
	int undecoded; /* kernels with a word LLVM 19 cannot decode: not round-tripped */
	int cmpx_vdst; /* kernels differing only in the listed field vopc_cmpx_vdst */
	int regs_within, regs_exact, alloc_ok, alloc_refused;
};

static void rt_fail(struct rt_tally *t, const char *what, const char *kernel, const char *why)
{
	if (t->failed++ < 20)
		printf("FAIL %s %s: %s\n", what, kernel, why);
}

static int32_t rt_simm16(const struct amdgpu_insn *in, const uint8_t *code)
{
	(void)in;
	return (int16_t)(code[0] | code[1] << 8);
}

/* With a 4-byte s_nop before each instruction, instruction i sits at
 * off[i] = its original offset + 4 * (i + 1); label k sits before the nop of
 * the instruction it names. Checks branches and units against that. */
static const char *rt_check_moved(const struct amdgpu_func *f, int n, const uint8_t *code, size_t len,
				  uint64_t base, char *why, size_t why_len)
{
	uint64_t at = 0;
	uint64_t *off = calloc((size_t)n + 1, sizeof *off), *label = calloc(4096, sizeof *label);
	for (int i = 0; i < n; i++) {
		if (f->v[i].label >= 0 && f->v[i].label < 4096)
			label[f->v[i].label] = at;
		off[i] = at + 4;
		at += 4 + f->v[i].size;
	}
	const char *bad = NULL;
	if (at != len) {
		snprintf(why, why_len, "%zu bytes, %llu expected", len, (unsigned long long)at);
		bad = why;
	}
	for (int i = 0; i < n && !bad; i++) {
		const struct amdgpu_insn *in = &f->v[i];
		const uint8_t *c = code + off[i];
		int k = amdgpu_asm_branch_label(in);
		if (k >= 0 && k < 4096 && (int64_t)label[k] != (int64_t)off[i] + 4 + 4 * (int64_t)rt_simm16(in, c)) {
			snprintf(why, why_len, "%s at +%llu does not reach L%d", in->text, (unsigned long long)off[i], k);
			bad = why;
		} else if (k < 0 && in->getpc == AMDGPU_GETPC_NONE && memcmp(c, in->bytes, in->size) != 0) {
			snprintf(why, why_len, "%s changed though it does not branch", in->text);
			bad = why;
		} else if (in->getpc == AMDGPU_GETPC_LO || in->getpc == AMDGPU_GETPC_HI) {
			int g = i;
			while (g > 0 && !(f->v[g].getpc == AMDGPU_GETPC_GET && f->v[g].unit == in->unit))
				g--;
			uint64_t want = in->target - (base + off[g] + 4);
			uint32_t lit = (uint32_t)(c[4] | c[5] << 8 | c[6] << 16 | (uint32_t)c[7] << 24);
			if (lit != (in->getpc == AMDGPU_GETPC_LO ? (uint32_t)want : (uint32_t)(want >> 32))) {
				snprintf(why, why_len, "s_getpc_b64 unit %d literal 0x%x does not reach 0x%llx", in->unit,
					 lit, (unsigned long long)in->target);
				bad = why;
			}
		}
	}
	free(off);
	free(label);
	return bad;
}

/* Text mode: every instruction re-encoded from objdump's text, compared
 * one by one (sizes must hold; listed don't-care fields are counted). */
static void rt_text(struct rt_tally *t, const char *what, const struct amdgpu_co *co,
		    const struct amdgpu_co_kernel *k, const struct amdgpu_func *f, int n, const char *proc)
{
	char *cause = NULL, why[320];
	uint8_t *code = NULL;
	size_t len = 0, at = 0;
	if (amdgpu_asm_func(f, n, NULL, AMDGPU_ASM_TEXT, proc, f->addr, &code, &len, &cause) < 0) {
		rt_fail(t, what, k->meta->name, cause);
		free(cause);
		return;
	}
	int listed = 0, real = 0;
	for (int i = 0; i < n && !real; i++) {
		const struct amdgpu_insn *in = &f->v[i];
		const char *field = at + in->size <= len ? amdgpu_asm_diff_field(in, code + at, co->elf.family) : "";
		if (field && !*field) {
			snprintf(why, sizeof why, "text mode: '%s' at +%zu re-encodes differently", in->text, at);
			real = 1;
		} else if (field) {
			listed = 1;
		}
		at += in->size;
	}
	if (!real && at != len)
		snprintf(why, sizeof why, "text mode: %zu bytes, %zu expected", len, at), real = 1;
	if (real)
		rt_fail(t, what, k->meta->name, why);
	else if (listed)
		t->cmpx_vdst++;
	else
		t->text_identical++;
	free(code);
}

/* The registers the text names fit the metadata's counts, and probe
 * registers (4 SGPRs, 2 VGPRs) land above them with a descriptor that
 * allows them. */
static void rt_regs(struct rt_tally *t, const char *what, const struct amdgpu_co *co,
		    const struct amdgpu_co_kernel *k, const struct amdgpu_func *f, int n)
{
	struct amdgpu_regs r;
	struct amdgpu_alloc a;
	char *cause = NULL, why[256];
	const struct amdgpu_meta_kernel *m = k->meta;
	int unified = amdgpu_family_has_agprs(co->elf.family) && m->agpr_count;
	int vlimit = unified ? (int)k->kd.accum_offset : (int)m->vgpr_count;
	amdgpu_regs_scan(f, n, &r);
	if (r.sgpr_max >= (int)m->sgpr_count || r.vgpr_max >= vlimit || r.agpr_max >= (int)m->agpr_count) {
		snprintf(why, sizeof why, "text uses s%d v%d a%d, metadata counts %u SGPRs %d VGPRs %u AGPRs", r.sgpr_max,
			 r.vgpr_max, r.agpr_max, m->sgpr_count, vlimit, m->agpr_count);
		rt_fail(t, what, m->name, why);
		return;
	}
	t->regs_within++;
	t->regs_exact += r.vgpr_max + 1 == vlimit && r.agpr_max + 1 == (int)m->agpr_count;
	if (amdgpu_regs_alloc(co, k, &r, 4, 2, &a, &cause) < 0) {
		t->alloc_refused++; /* named refusal: counted, printed once in a while */
		if (t->alloc_refused <= 3)
			printf("refused %s %s: %s\n", what, m->name, cause);
		free(cause);
		return;
	}
	struct amdgpu_kd kd = k->kd;
	amdgpu_regs_apply(co, &a, &kd);
	enum amdgpu_family fam = co->elf.family;
	int ok = a.sgpr > r.sgpr_max && a.sgpr % 2 == 0 && a.vgpr > r.vgpr_max &&
		 (int)amdgpu_kd_vgprs(&kd, fam) >= (unified ? (int)kd.accum_offset + (int)m->agpr_count : a.vgpr + 2) &&
		 (fam > AMDGPU_FAMILY_GFX94 || (int)amdgpu_kd_sgprs(&kd, fam) >= a.sgpr + 4) &&
		 (!unified || ((int)kd.accum_offset >= a.vgpr + 2 && kd.accum_offset % 4 == 0));
	if (!ok) {
		snprintf(why, sizeof why, "allocation s%d v%d does not fit the patched descriptor", a.sgpr, a.vgpr);
		rt_fail(t, what, m->name, why);
		return;
	}
	t->alloc_ok++;
}

static void rt_kernel(struct rt_tally *t, const char *what, const struct amdgpu_co *co,
		      const struct amdgpu_co_kernel *k, const struct amdgpu_func *f, const char *proc)
{
	char *cause = NULL, why[256];
	uint8_t *code = NULL;
	size_t len = 0;
	int n = amdgpu_asm_count(f, k->sym->code_size);
	t->kernels++;
	t->units += f->units;
	if (amdgpu_asm_movable(f, n, &cause) < 0 && strstr(cause, "cannot decode")) {
		/* the engine's named refusal: nothing after that word is known */
		if (t->undecoded++ < 20)
			printf("undecoded %s %s: %s\n", what, k->meta->name, cause);
		free(cause);
		return;
	}
	if (cause ||
	    amdgpu_asm_func(f, n, NULL, AMDGPU_ASM_WORDS, proc, f->addr, &code, &len, &cause) < 0) {
		rt_fail(t, what, k->meta->name, cause);
		free(cause);
		return;
	}
	const uint8_t *orig = co->elf.p + k->sym->code_off;
	if (len == k->sym->code_size && memcmp(code, orig, len) == 0) {
		t->words_identical++;
	} else {
		size_t d = 0;
		while (d < len && d < k->sym->code_size && code[d] == orig[d])
			d++;
		snprintf(why, sizeof why, "null round trip differs at +%zu (%zu vs %llu bytes)", d, len,
			 (unsigned long long)k->sym->code_size);
		rt_fail(t, what, k->meta->name, why);
	}
	free(code);
	rt_text(t, what, co, k, f, n, proc);
	rt_regs(t, what, co, k, f, n);
	const char **nops = calloc((size_t)n + 1, sizeof *nops);
	for (int i = 0; i < n; i++)
		nops[i] = "\ts_nop 0";
	uint64_t base = f->addr + 0x10000;
	struct amdgpu_asm_ins ins = { .before = nops };
	if (amdgpu_asm_func(f, n, &ins, AMDGPU_ASM_WORDS, proc, base, &code, &len, &cause) < 0) {
		rt_fail(t, what, k->meta->name, cause);
		free(cause);
	} else {
		const char *bad = rt_check_moved(f, n, code, len, base, why, sizeof why);
		if (bad)
			rt_fail(t, what, k->meta->name, bad);
		else
			t->moved_ok++;
		free(code);
	}
	free(nops);
}

static void rt_object(struct rt_tally *t, const char *file, const struct amdgpu_object *obj)
{
	struct amdgpu_co co;
	struct amdgpu_disasm d;
	char *cause = NULL;
	if (amdgpu_co_open(obj->data, obj->size, &co, &cause) < 0) {
		rt_fail(t, file, obj->id, cause);
		free(cause);
		return;
	}
	char proc[32];
	amdgpu_co_proc(&co, proc);
	if (amdgpu_disasm_object(obj->data, obj->size, proc, &d, &cause) < 0) {
		rt_fail(t, file, obj->id, cause);
		free(cause);
		amdgpu_co_done(&co);
		return;
	}
	for (int k = 0; k < co.n; k++) {
		const struct amdgpu_func *f = amdgpu_disasm_func(&d, co.k[k].sym->name);
		if (!f || !co.k[k].sym->code_size)
			rt_fail(t, obj->id, co.k[k].meta->name, "not disassembled");
		else
			rt_kernel(t, obj->id, &co, &co.k[k], f, proc);
	}
	amdgpu_disasm_done(&d);
	amdgpu_co_done(&co);
}

static int cmd_roundtrip(int argc, char **argv)
{
	struct rt_tally t = { 0 };
	for (int a = 0; a < argc; a++) {
		struct amdgpu_files fo;
		if (amdgpu_files_open(argv[a], &fo) < 0)
			return 1;
		for (int i = 0; i < fo.o.n; i++)
			rt_object(&t, argv[a], &fo.o.v[i]);
		amdgpu_files_close(&fo);
	}
	printf("roundtrip: %d kernels: %d identical as words, %d with s_nop inserted correct (%d s_getpc_b64 "
	       "units); from text %d identical, %d differing only in vopc_cmpx_vdst; %d refused (a word LLVM 19 "
	       "cannot decode); %d failed\n", t.kernels, t.words_identical, t.moved_ok, t.units, t.text_identical,
	       t.cmpx_vdst, t.undecoded, t.failed);
	printf("registers: %d kernels within their metadata counts (%d at them exactly); probe registers "
	       "(4 SGPRs, 2 VGPRs): %d placed, %d refused\n", t.regs_within, t.regs_exact, t.alloc_ok, t.alloc_refused);
	return t.failed || !t.kernels ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "roundtrip") == 0)
		return cmd_roundtrip(argc - 2, argv + 2);
	if (argc >= 3 && strcmp(argv[1], "summary") == 0)
		return cmd_summary(argc - 2, argv + 2);
	if (argc < 3) {
		fprintf(stderr, "usage: amdgpu_dump extract|notes|kd|flags|summary FILE...\n");
		return 2;
	}
	size_t len;
	uint8_t *p = amdgpu_files_map(argv[2], &len);
	if (!p)
		return 1;
	if (strcmp(argv[1], "notes") == 0)
		return dump_co(p, len, print_notes);
	if (strcmp(argv[1], "kd") == 0)
		return dump_co(p, len, print_kds);
	if (strcmp(argv[1], "flags") == 0)
		return cmd_flags(p, len);
	if (strcmp(argv[1], "extract") == 0 && argc == 4)
		return cmd_extract(p, len, argv[3]);
	fprintf(stderr, "usage: amdgpu_dump extract|notes|kd|flags|summary FILE...\n");
	return 2;
}
