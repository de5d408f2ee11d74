/* The wave model (amdgpu_sim.c) on single instructions: SCC as the ISA
 * defines it per operation, EXEC masking of vector work and stores, lane
 * masks in wave32 and wave64, counters and hardware registers, memory
 * bounds, and refusal of anything it does not model. The host-side map
 * layout (amdgpu_map.c) beside it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/amdgpu/amdgpu_map.h"
#include "engine/amdgpu/amdgpu_sim.h"
#include "testlib.h"

static struct amdgpu_wave *wave(enum amdgpu_family f, int lanes)
{
	struct amdgpu_wave *w = malloc(sizeof *w);
	if (w)
		amdgpu_sim_init(w, f, lanes);
	return w;
}

static int step(struct amdgpu_wave *w, const char *text)
{
	char *cause = NULL;
	int r = amdgpu_sim_step(w, text, &cause);
	CHECKF(r == 0, "%s: %s", text, cause ? cause : "");
	free(cause);
	return r;
}

static void test_scalar(void)
{
	struct amdgpu_wave *w = wave(AMDGPU_FAMILY_GFX90A, 64);
	if (!w)
		return;
	w->s[0] = 0xffffffff;
	w->s[1] = 2;
	step(w, "s_add_u32 s2, s0, s1");
	CHECK(w->s[2] == 1 && w->scc == 1); /* carry out */
	step(w, "s_addc_u32 s3, 0, 0");
	CHECK(w->s[3] == 1 && w->scc == 0); /* carry in */
	step(w, "s_sub_u32 s4, s1, s0");
	CHECK(w->s[4] == 3 && w->scc == 1); /* borrow */
	step(w, "s_mul_i32 s5, s1, 7");
	CHECK(w->s[5] == 14 && w->scc == 1); /* s_mul leaves SCC */
	step(w, "s_cselect_b32 s6, -1, 0");
	CHECK(w->s[6] == 0xffffffff);
	step(w, "s_cmp_lg_u32 s6, 0");
	CHECK(w->scc == 1);
	step(w, "s_lshl_b32 s7, 0, 3");
	CHECK(w->s[7] == 0 && w->scc == 0);
	step(w, "s_and_b32 s8, s0, -16");
	CHECK(w->s[8] == 0xfffffff0 && w->scc == 1);
	step(w, "s_min_u32 s9, s1, 0xffffffe7");
	CHECK(w->s[9] == 2 && w->scc == 1);
	step(w, "s_mov_b64 s[10:11], exec");
	CHECK(w->s[10] == 0 && w->s[11] == 0);
	w->exec = 0xff00ff00ff00ff00ull;
	w->s[12] = 0x0f0f0f0f;
	w->s[13] = 0xffffffff;
	step(w, "s_and_saveexec_b64 s[14:15], s[12:13]");
	CHECK(w->exec == 0xff00ff000f000f00ull && w->s[14] == 0xff00ff00 && w->s[15] == 0xff00ff00 && w->scc == 1);
	step(w, "s_cselect_b64 exec, 1, 0");
	CHECK(w->exec == 1);
	w->hw_id = 0x1234abcd;
	step(w, "s_getreg_b32 s16, hwreg(HW_REG_HW_ID, 8, 5)");
	CHECK(w->s[16] == ((0x1234abcdu >> 8) & 0x1f));
	uint64_t c = w->clock;
	step(w, "s_memtime s[18:19]");
	CHECK(w->s[18] == (uint32_t)c && w->n_clock_reads == 1 && w->clock_reads[0] == c);
	char *cause = NULL;
	CHECK(amdgpu_sim_step(w, "s_branch 3", &cause) < 0 && strstr(cause, "not modelled"));
	CHECK(amdgpu_sim_step(w, "v_sin_f32 v0, v1", &cause) < 0 && strstr(cause, "not modelled"));
	free(cause);
	free(w);
}

static void test_vector(void)
{
	struct amdgpu_wave *w = wave(AMDGPU_FAMILY_GFX11, 32);
	if (!w)
		return;
	for (int l = 0; l < 32; l++)
		w->v[1][l] = (uint32_t)l;
	w->exec = 0xfffffff0; /* lanes 0-3 inactive */
	step(w, "v_mov_b32_e32 v2, 7");
	CHECK(w->v[2][0] == 0 && w->v[2][4] == 7);
	step(w, "v_cmp_ge_u32_e64 s0, 10, v1");
	CHECK(w->s[0] == 0x7f0); /* lanes 4-10, only active ones */
	step(w, "v_readfirstlane_b32 s1, v1");
	CHECK(w->s[1] == 4);
	step(w, "s_mov_b32 exec_lo, 3");
	CHECK(w->exec == 3);
	w->s[4] = 0x10;
	w->s[5] = 0x1;
	step(w, "v_mad_u64_u32 v[4:5], null, v1, 1, s[4:5]");
	CHECK(w->v[4][1] == 0x11 && w->v[5][1] == 1 && w->v[4][2] == 0);
	step(w, "v_mad_co_u64_u32 v[6:7], null, v1, 2, v[4:5]");
	CHECK(w->v[6][1] == 0x13);
	w->v[8][0] = (uint32_t)-8;
	step(w, "v_mad_i64_i32 v[4:5], null, v8, 1, v[4:5]");
	CHECK(w->v[4][0] == 0x10 - 8 && w->v[5][0] == 1);
	/* stores: active lanes only, saddr + zero-extended voffset + offset */
	uint8_t mem[64];
	memset(mem, 0, sizeof mem);
	CHECK(amdgpu_sim_map(w, 0x100000000ull, mem, sizeof mem) == 0);
	w->s[6] = 0;
	w->s[7] = 1;
	w->v[9][0] = 0;
	w->v[9][1] = 8;
	w->v[10][0] = 0xaaaa;
	w->v[10][1] = 0xbbbb;
	w->exec = 2;
	step(w, "global_store_b32 v9, v10, s[6:7] offset:4");
	uint32_t at12, at4;
	memcpy(&at12, mem + 12, 4);
	memcpy(&at4, mem + 4, 4);
	CHECK(at12 == 0xbbbb && at4 == 0);
	char *cause = NULL;
	w->v[9][1] = 64;
	CHECK(amdgpu_sim_step(w, "global_store_b32 v9, v10, s[6:7]", &cause) < 0 && strstr(cause, "outside"));
	free(cause);
	/* gfx11's cycle counter keeps 20 bits */
	w->clock = 0x123456789ull;
	step(w, "s_getreg_b32 s20, hwreg(HW_REG_SHADER_CYCLES, 0, 20)");
	CHECK(w->s[20] == 0x56789);
	free(w);
}

static void test_map_layout(void)
{
	struct probe_map thr = { .level = PROBE_LEVEL_THREAD, .cap = 64, .rec_size = 16 };
	struct probe_map wav = { .level = PROBE_LEVEL_WARP, .cap = 1, .rec_size = 24 };
	CHECK_EQ_INT(amdgpu_map_units(&thr, 4, 100, 64), 400);
	CHECK_EQ_INT(amdgpu_map_units(&wav, 4, 100, 64), 8);  /* 2 waves per block, one partial */
	CHECK_EQ_INT(amdgpu_map_units(&wav, 4, 100, 32), 16);
	CHECK_EQ_INT(amdgpu_map_records_offset(8), 32);
	CHECK_EQ_INT(amdgpu_map_records_offset(9), 48);
	CHECK_EQ_INT(amdgpu_map_bytes(&wav, 4, 100, 64), 32 + 8 * 24);
	CHECK_EQ_INT(amdgpu_map_record_index(&thr, 400, 5, 2), 2 * 400 + 5); /* slot-major */
	CHECK_EQ_INT(amdgpu_map_record_index(&wav, 8, 5, 0), 5);
	uint32_t l[8], grid[3] = { 2, 3, 4 }, block[3] = { 8, 4, 2 };
	amdgpu_map_launch(l, grid, block, 32);
	CHECK(l[0] == 2 && l[1] == 3 && l[2] == 8 && l[3] == 32 && l[4] == 64 && l[5] == 2 && l[6] == 24 * 64 &&
	      l[7] == 24 * 2);
}

int main(void)
{
	test_scalar();
	test_vector();
	test_map_layout();
	return testlib_report();
}
