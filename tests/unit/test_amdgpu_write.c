/* The probed AMDGPU code object writer and what it relies on: reading
 * memory instructions from their text (amdgpu_isa.c), new metadata
 * arguments and counts (amdgpu_meta.c), writing and re-reading the object
 * (amdgpu_write.c) and the disassembly check (amdgpu_check.c), on the
 * corpus's gfx90a vecadd. The writer and the check need llvm-mc-19 and
 * llvm-objdump-19; without them those parts say so and are skipped. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/amdgpu/amdgpu_check.h"
#include "engine/amdgpu/amdgpu_co.h"
#include "engine/amdgpu/amdgpu_isa.h"
#include "engine/amdgpu/amdgpu_write.h"
#include "engine/amdgpu/llvm_tool.h"
#include "testlib.h"

static void test_isa_mem(void)
{
	struct amdgpu_mem m;
	CHECK(amdgpu_isa_mem("global_load_dwordx4 v[4:7], v[0:1], off offset:16", &m) == 0);
	CHECK(m.kind == AMDGPU_MEM_LOAD && m.bytes == 16 && m.vaddr == 0 && m.vaddr_pair && m.saddr == -1 &&
	      m.offset == 16 && m.has_addr && !strcmp(m.space, "global"));
	CHECK(amdgpu_isa_mem("global_load_dword v2, v1, s[2:3] offset:-8 glc", &m) == 0);
	CHECK(m.bytes == 4 && m.vaddr == 1 && !m.vaddr_pair && m.saddr == 2 && m.offset == -8 && m.has_addr);
	CHECK(amdgpu_isa_mem("global_store_b64 v1, v[2:3], s[0:1]", &m) == 0);
	CHECK(m.kind == AMDGPU_MEM_STORE && m.bytes == 8 && m.vaddr == 1 && m.saddr == 0 && m.has_addr);
	CHECK(amdgpu_isa_mem("global_atomic_add_f32 v0, v1, s[4:5]", &m) == 0);
	CHECK(m.kind == AMDGPU_MEM_ATOMIC && m.bytes == 4 && m.vaddr == 0 && m.saddr == 4);
	/* returning atomic: vdst first, then the address */
	CHECK(amdgpu_isa_mem("global_atomic_add_x2 v[0:1], v[2:3], v[4:5], off glc", &m) == 0);
	CHECK(m.bytes == 8 && m.vaddr == 2 && m.vaddr_pair && m.saddr == -1 && m.has_addr);
	CHECK(amdgpu_isa_mem("global_atomic_add v3, v1, s[6:7]", &m) == 0);
	CHECK(m.bytes == 4 && m.vaddr == 3);
	CHECK(amdgpu_isa_mem("flat_load_ubyte v0, v[2:3] offset:4", &m) == 0);
	CHECK(m.bytes == 1 && m.vaddr == 2 && m.vaddr_pair && m.offset == 4 && m.has_addr);
	CHECK(amdgpu_isa_mem("flat_store_short v[2:3], v0", &m) == 0);
	CHECK(m.kind == AMDGPU_MEM_STORE && m.bytes == 2 && m.vaddr == 2);
	CHECK(amdgpu_isa_mem("global_load_u16 v1, v0, s[0:1]", &m) == 0 && m.bytes == 2);
	/* raw buffer accesses: the V# (srsrc), the offset VGPR (offen) or none,
	 * the immediate; the inserted code adds the base and checks the range */
	CHECK(amdgpu_isa_mem("buffer_load_dword v1, off, s[0:3], 0 offset:8", &m) == 0);
	CHECK(m.kind == AMDGPU_MEM_LOAD && m.bytes == 4 && m.srsrc == 0 && m.vaddr == -1 && m.offset == 8 &&
	      m.has_addr && !strcmp(m.space, "buffer"));
	CHECK(amdgpu_isa_mem("buffer_load_dword v4, v2, s[8:11], 0 offen", &m) == 0);
	CHECK(m.srsrc == 8 && m.vaddr == 2 && m.offset == 0 && m.has_addr);
	CHECK(amdgpu_isa_mem("buffer_store_b128 v[4:7], v0, s[4:7], null offen offset:16", &m) == 0);
	CHECK(m.kind == AMDGPU_MEM_STORE && m.bytes == 16 && m.srsrc == 4 && m.vaddr == 0 && m.offset == 16 && m.has_addr);
	CHECK(amdgpu_isa_mem("buffer_atomic_add_f32 v1, v0, s[0:3], 0 offen", &m) == 0);
	CHECK(m.kind == AMDGPU_MEM_ATOMIC && m.bytes == 4 && m.vaddr == 0 && m.has_addr);
	CHECK(amdgpu_isa_mem("buffer_atomic_cmpswap_x2 v[0:3], v4, s[0:3], 0 offen glc", &m) == 0);
	CHECK(m.bytes == 8 && m.vaddr == 4 && m.has_addr);
	/* forms without a proven address are named */
	CHECK(amdgpu_isa_mem("buffer_load_dword v3, v0, s[4:7], s9 offen", &m) == 0 && !m.has_addr && m.srsrc == 4 &&
	      strstr(m.why, "soffset"));
	CHECK(amdgpu_isa_mem("buffer_load_dword v1, v[2:3], s[0:3], 0 idxen offen", &m) == 0 && !m.has_addr &&
	      strstr(m.why, "idxen"));
	CHECK(amdgpu_isa_mem("buffer_load_format_xyzw v[0:3], v4, s[0:3], 0 idxen", &m) == 0 && !m.has_addr &&
	      strstr(m.why, "format"));
	CHECK(amdgpu_isa_mem("buffer_load_dword v1, s[0:3], 0 offset:4 lds", &m) == 0 && !m.has_addr &&
	      strstr(m.why, "LDS"));
	CHECK(amdgpu_isa_mem("buffer_store_dword v1, off, s[0:3], s5 offset:4", &m) == 0 && !m.has_addr);
	CHECK(amdgpu_isa_mem("global_load_dword v1, v[2:3], off", &m) == 0 && m.srsrc == -1 && !m.why);
	CHECK(amdgpu_isa_mem("global_inv scope:SCOPE_DEV", &m) < 0);
	CHECK(amdgpu_isa_mem("buffer_wbinvl1_vol", &m) < 0);
	CHECK(amdgpu_isa_mem("v_add_u32_e32 v0, v1, v2", &m) < 0);
	CHECK(amdgpu_isa_mem("s_load_dwordx2 s[0:1], s[4:5], 0x0", &m) < 0);
	CHECK(amdgpu_isa_match("global_load_dwordx4 v[0:3]", "global_load") &&
	      !amdgpu_isa_match("global_loadx v0", "global_load"));
	/* '$': the whole mnemonic (gfx12's s_barrier_wait is no s_barrier) */
	CHECK(amdgpu_isa_match("s_barrier_wait -1", "s_barrier") && !amdgpu_isa_match("s_barrier_wait -1", "s_barrier$") &&
	      amdgpu_isa_match("s_barrier", "s_barrier$") && amdgpu_isa_match("s_barrier_signal -1", "s_barrier_signal$") &&
	      !amdgpu_isa_match("s_barriers", "s_barrier$"));
	CHECK(amdgpu_isa_match("v_mfma_f32_32x32x8f16 a[0:15], v[0:1], v[2:3], 0", "v_mfma") &&
	      amdgpu_isa_match("v_wmma_f32_16x16x16_f16 v[0:7], v[8:15], v[16:23], v[0:7]", "v_wmma") &&
	      !amdgpu_isa_match("v_wmma_f32_16x16x16_f16 v[0:7], v[8:15], v[16:23], v[0:7]", "v_mfma"));
	CHECK(amdgpu_isa_is_endpgm("s_endpgm") && !amdgpu_isa_is_endpgm("s_endpgm_saved"));
	CHECK(amdgpu_isa_is_dealloc("s_sendmsg sendmsg(MSG_DEALLOC_VGPRS)") && !amdgpu_isa_is_dealloc("s_nop 0"));
	CHECK(amdgpu_isa_keeps_scc("s_mov_b32 s0, 1") && amdgpu_isa_keeps_scc("s_cselect_b64 exec, 1, 0") &&
	      amdgpu_isa_keeps_scc("v_add_nc_u32 v0, v1, v2") && amdgpu_isa_keeps_scc("s_waitcnt lgkmcnt(0)"));
	CHECK(!amdgpu_isa_keeps_scc("s_add_u32 s0, s0, 1") && !amdgpu_isa_keeps_scc("s_and_saveexec_b64 s[0:1], s[2:3]") &&
	      !amdgpu_isa_keeps_scc("s_lshl_b32 s0, s0, 2"));
	struct amdgpu_isa isa;
	char *cause = NULL;
	CHECK(amdgpu_isa_init(&isa, AMDGPU_FAMILY_GFX11, 1, NULL) == 0 && !strcmp(isa.exec, "exec_lo") &&
	      !strcmp(isa.sload2, "s_load_b64") && isa.mask_sgprs == 1);
	CHECK(amdgpu_isa_init(&isa, AMDGPU_FAMILY_GFX90A, 0, NULL) == 0 && !strcmp(isa.exec, "exec") &&
	      !strcmp(isa.gstore1, "global_store_dword") && isa.mask_sgprs == 2 && !isa.vop3_literal);
	CHECK(amdgpu_isa_init(&isa, AMDGPU_FAMILY_GFX8, 0, &cause) < 0 && strstr(cause, "gfx8"));
	free(cause);
}

struct fixture {
	uint8_t *img;
	size_t len;
	struct amdgpu_co co;
};

static int fixture_open(struct fixture *fx)
{
	fx->img = (uint8_t *)testlib_slurp(testlib_src("tests/corpus/amdgpu/vecadd.gfx90a.co"), &fx->len);
	CHECK(fx->img != NULL);
	if (!fx->img || amdgpu_co_open(fx->img, fx->len, &fx->co, NULL) < 0) {
		CHECKF(0, "vecadd.gfx90a.co does not open");
		free(fx->img);
		return -1;
	}
	return 0;
}

static void fixture_close(struct fixture *fx)
{
	amdgpu_co_done(&fx->co);
	free(fx->img);
}

static void test_meta_args(void)
{
	struct fixture fx;
	if (fixture_open(&fx) < 0)
		return;
	struct amdgpu_meta m;
	char *cause = NULL;
	uint32_t off = 0, off2 = 0;
	CHECK(amdgpu_meta_read(fx.co.elf.meta, fx.co.elf.meta_len, &m, NULL) == 0);
	const struct amdgpu_meta_kernel *k = amdgpu_meta_kernel(&m, "vecadd");
	uint32_t old = k ? k->kernarg_size : 0;
	int n_args = k ? k->n_args : 0;
	CHECK(amdgpu_meta_append_value(&m, "vecadd", "ntop_launch", 24, &off, NULL) == 0);
	CHECK(amdgpu_meta_append_buffer(&m, "vecadd", "ntop_map0", &off2, NULL) == 0);
	k = amdgpu_meta_kernel(&m, "vecadd");
	CHECK_EQ_INT(off, (old + 7) & ~7u);
	CHECK_EQ_INT(off2, off + 24);
	CHECK(k && k->kernarg_size == off2 + 8 && k->n_args == n_args + 2 && k->n_explicit >= 2);
	if (k && k->n_args == n_args + 2) {
		CHECK(!strcmp(k->args[n_args].value_kind, "by_value") && !k->args[n_args].address_space[0] &&
		      k->args[n_args].size == 24 && !strcmp(k->args[n_args].name, "ntop_launch"));
		CHECK(!strcmp(k->args[n_args + 1].value_kind, "global_buffer"));
	}
	CHECK(amdgpu_meta_set_count(&m, "vecadd", ".sgpr_count", 40, NULL) == 0 && k->sgpr_count == 40);
	CHECK(amdgpu_meta_set_count(&m, "nosuch", ".sgpr_count", 1, &cause) < 0 && strstr(cause, "nosuch"));
	CHECK(amdgpu_meta_append_value(&m, "vecadd", "x", 0, &off, &cause) < 0);
	/* written and read back: the same view */
	uint8_t *out = NULL;
	size_t len = 0;
	struct amdgpu_meta m2;
	CHECK(amdgpu_meta_write(&m, &out, &len, NULL) == 0 && amdgpu_meta_read(out, len, &m2, NULL) == 0);
	const struct amdgpu_meta_kernel *k2 = amdgpu_meta_kernel(&m2, "vecadd");
	CHECK(k2 && k2->kernarg_size == off2 + 8 && k2->sgpr_count == 40 && k2->n_args == n_args + 2);
	amdgpu_meta_done(&m2);
	amdgpu_meta_done(&m);
	free(out);
	free(cause);
	fixture_close(&fx);
}

/* Writes vecadd with the given insertion; returns the write's result. */
static int write_with(struct fixture *fx, const struct amdgpu_func *f, int n, const struct amdgpu_asm_ins *ins,
		      const struct amdgpu_kd *kd, struct amdgpu_written *w, char **cause)
{
	const struct amdgpu_co_kernel *k = amdgpu_co_kernel(&fx->co, "vecadd");
	struct amdgpu_write wp = { .co = &fx->co, .k = k, .f = f, .n = n, .ins = ins, .kd = kd ? kd : &k->kd,
				   .meta = fx->co.elf.meta, .meta_len = fx->co.elf.meta_len };
	return amdgpu_write_object(&wp, w, cause);
}

static void test_write(void)
{
	char *mc = llvm_tool_find("llvm-mc"), *od = llvm_tool_find("llvm-objdump");
	free(mc);
	free(od);
	if (!mc || !od) {
		printf("skip: llvm-mc-19/llvm-objdump-19 not installed: the writer is not run\n");
		return;
	}
	struct fixture fx;
	if (fixture_open(&fx) < 0)
		return;
	struct amdgpu_disasm d;
	char *cause = NULL;
	const struct amdgpu_co_kernel *k = amdgpu_co_kernel(&fx.co, "vecadd");
	CHECKF(amdgpu_disasm_object(fx.img, fx.len, "gfx90a", &d, &cause) == 0, "%s", cause);
	const struct amdgpu_func *f = amdgpu_disasm_func(&d, "vecadd");
	CHECK(f && k);
	if (!f || !k) {
		fixture_close(&fx);
		return;
	}
	int n = amdgpu_asm_count(f, k->sym->code_size);
	const char **before = calloc((size_t)n, sizeof *before);
	before[1] = "\ts_nop 2\n\ts_nop 3";
	struct amdgpu_asm_ins ins = { .prologue = "\ts_nop 1", .before = before };
	struct amdgpu_written w;
	struct amdgpu_check_stats st;
	CHECKF(write_with(&fx, f, n, &ins, NULL, &w, &cause) == 0, "%s", cause);
	struct amdgpu_co co2;
	CHECK(amdgpu_co_open(w.elf, w.len, &co2, NULL) == 0);
	const struct amdgpu_co_kernel *k2 = amdgpu_co_kernel(&co2, "vecadd");
	/* the descriptor enters the new code; the old code is still there */
	CHECK(k2 && k2->sym->code_addr == w.code_addr && w.code_addr % 256 == 0 && w.code_len == k->sym->code_size + 12);
	CHECK(k2 && (uint64_t)((int64_t)k2->sym->kd_addr + k2->kd.entry_offset) == w.code_addr);
	CHECK(memcmp(w.elf + k->sym->code_off, fx.img + k->sym->code_off, k->sym->code_size) == 0);
	amdgpu_co_done(&co2);
	CHECKF(amdgpu_check_probed(f, n, &ins, w.elf, w.len, "gfx90a", "vecadd", w.code_len, &st, &cause) == 0, "%s",
	       cause);
	CHECK(st.inserted == 3 && st.original == n);
	/* the check fails when the object holds other code than claimed */
	before[1] = "\ts_nop 2";
	CHECK(amdgpu_check_probed(f, n, &ins, w.elf, w.len, "gfx90a", "vecadd", w.code_len, &st, &cause) < 0 &&
	      strstr(cause, "s_nop 3"));
	before[1] = NULL;
	before[0] = "\ts_nop 2\n\ts_nop 3";
	CHECK(amdgpu_check_probed(f, n, &ins, w.elf, w.len, "gfx90a", "vecadd", w.code_len, &st, &cause) < 0);
	amdgpu_written_done(&w);
	/* a descriptor that disagrees with the metadata is not written */
	struct amdgpu_kd kd = k->kd;
	kd.kernarg_size += 8;
	CHECK(write_with(&fx, f, n, &ins, &kd, &w, &cause) < 0 && strstr(cause, "kernarg size"));
	/* an unlinked object is refused by name */
	fx.img[16] = 1; /* e_type ET_REL */
	CHECK(write_with(&fx, f, n, &ins, NULL, &w, &cause) < 0 && strstr(cause, "not linked"));
	free(before);
	free(cause);
	amdgpu_disasm_done(&d);
	fixture_close(&fx);
}

int main(void)
{
	test_isa_mem();
	test_meta_args();
	test_write();
	return testlib_report();
}
