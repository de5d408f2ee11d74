/* Where a unit (a thread, or a warp for warp maps) stores in a map: its
 * count and its first record (layout in engine.h), computed at the site
 * that needs them from special registers, each quantity once per site. */
#include "engine/ptx/ptx_inject_int.h"

/* Does the code at this site still lack quantity `what` (HAVE_*)? Marks it
 * as held from here on. */
static int first_at_site(struct site *st, unsigned what)
{
	if (st->have & what)
		return 0;
	st->have |= what;
	return 1;
}

/* thread_linear (< 1024, so 32-bit) into %ntop_tl. */
static void emit_thread_linear(const struct inj *in, struct strbuf *sb, struct site *st)
{
	if (!first_at_site(st, HAVE_TL))
		return;
	if (in->block_1d) {
		strbuf_puts(sb, "mov.u32 %ntop_tl, %tid.x;\n");
		return;
	}
	strbuf_puts(sb,
		"mov.u32 %ntop_w0, %tid.x;\n"
		"mov.u32 %ntop_w1, %tid.y;\n"
		"mov.u32 %ntop_w2, %tid.z;\n"
		"mov.u32 %ntop_w3, %ntid.x;\n"
		"mov.u32 %ntop_w4, %ntid.y;\n"
		"mad.lo.u32 %ntop_tl, %ntop_w2, %ntop_w4, %ntop_w1;\n"
		"mad.lo.u32 %ntop_tl, %ntop_tl, %ntop_w3, %ntop_w0;\n");
}

/* pred = this thread is lane 0 of its warp. Warps are cut from consecutive
 * thread_linear values, so lane = thread_linear % 32 (no %laneid read). */
void ptx_inject_unit_lane0(const struct inj *in, struct strbuf *sb, struct site *st, const char *pred)
{
	emit_thread_linear(in, sb, st);
	strbuf_printf(sb, "and.b32 %%ntop_w0, %%ntop_tl, 31;\nsetp.eq.u32 %s, %%ntop_w0, 0;\n", pred);
}

void ptx_inject_unit_thread0(const struct inj *in, struct strbuf *sb, struct site *st, const char *pred)
{
	emit_thread_linear(in, sb, st);
	strbuf_printf(sb, "setp.eq.u32 %s, %%ntop_tl, 0;\n", pred);
}

/* block_linear and blocks. The y/z grid extents are <= 65535, so
 * ctaid.z * nctaid.y + ctaid.y and nctaid.y * nctaid.z fit 32 bits; the
 * products with the x extent (< 2^31) need 64. */
static void emit_grid(const struct inj *in, struct strbuf *sb, struct site *st)
{
	if (!first_at_site(st, HAVE_GRID))
		return;
	if (in->grid_1d) {
		strbuf_puts(sb,
			"mov.u32 %ntop_w4, %nctaid.x;\n"
			"mov.u32 %ntop_w5, %ctaid.x;\n"
			"cvt.u64.u32 %ntop_bl, %ntop_w5;\n"
			"cvt.u64.u32 %ntop_nb, %ntop_w4;\n");
		return;
	}
	strbuf_puts(sb,
		"mov.u32 %ntop_w0, %ctaid.y;\n"
		"mov.u32 %ntop_w1, %ctaid.z;\n"
		"mov.u32 %ntop_w2, %nctaid.y;\n"
		"mov.u32 %ntop_w3, %nctaid.z;\n"
		"mov.u32 %ntop_w4, %nctaid.x;\n"
		"mov.u32 %ntop_w5, %ctaid.x;\n"
		"mad.lo.u32 %ntop_w0, %ntop_w1, %ntop_w2, %ntop_w0;\n"
		"mul.lo.u32 %ntop_w2, %ntop_w2, %ntop_w3;\n"
		"cvt.u64.u32 %ntop_d0, %ntop_w0;\n"
		"cvt.u64.u32 %ntop_d1, %ntop_w4;\n"
		"cvt.u64.u32 %ntop_d2, %ntop_w5;\n"
		"mad.lo.u64 %ntop_bl, %ntop_d0, %ntop_d1, %ntop_d2;\n"
		"cvt.u64.u32 %ntop_d0, %ntop_w2;\n"
		"mul.lo.u64 %ntop_nb, %ntop_d0, %ntop_d1;\n");
}

/* Units per block and this thread's unit in its block, both 32-bit
 * (<= 1024 threads): one per thread, or ceil(threads/32) warps, the last
 * possibly partial. */
static void emit_unit_in_block(const struct inj *in, struct strbuf *sb, struct site *st, int warp)
{
	if (!first_at_site(st, warp ? HAVE_UNIT_W : HAVE_UNIT_T))
		return;
	emit_thread_linear(in, sb, st);
	if (in->block_1d) {
		strbuf_puts(sb, warp ? "mov.u32 %ntop_w0, %ntid.x;\n"
				       "add.u32 %ntop_pw, %ntop_w0, 31;\n"
				       "shr.u32 %ntop_pw, %ntop_pw, 5;\n"
				       "shr.u32 %ntop_uw, %ntop_tl, 5;\n"
				     : "mov.u32 %ntop_pt, %ntid.x;\n"
				       "mov.u32 %ntop_ut, %ntop_tl;\n");
		return;
	}
	strbuf_puts(sb,
		"mov.u32 %ntop_w0, %ntid.x;\n"
		"mov.u32 %ntop_w1, %ntid.y;\n"
		"mov.u32 %ntop_w2, %ntid.z;\n"
		"mul.lo.u32 %ntop_w0, %ntop_w0, %ntop_w1;\n");
	if (warp)
		strbuf_puts(sb,
			"mad.lo.u32 %ntop_pw, %ntop_w0, %ntop_w2, 31;\n"
			"shr.u32 %ntop_pw, %ntop_pw, 5;\n"
			"shr.u32 %ntop_uw, %ntop_tl, 5;\n");
	else
		strbuf_puts(sb,
			"mul.lo.u32 %ntop_pt, %ntop_w0, %ntop_w2;\n"
			"mov.u32 %ntop_ut, %ntop_tl;\n");
}

/* %ntop_d2 = map i's buffer, untagged. A sampled map's pointer carries
 * the launch's block-sampling shift in its low 5 bits (engine.h); its
 * shift is left in %ntop_w6. */
static void emit_map_base(const struct imap *m, struct strbuf *sb, int map)
{
	strbuf_printf(sb, "ld.param.u64 %%ntop_d2, [ntop_map%d];\n", map);
	if (m->sampled)
		strbuf_puts(sb,
			"cvt.u32.u64 %ntop_w6, %ntop_d2;\n"
			"and.b32 %ntop_w6, %ntop_w6, 31;\n"
			"and.b64 %ntop_d2, %ntop_d2, -256;\n");
	strbuf_puts(sb, "cvta.to.global.u64 %ntop_d2, %ntop_d2;\n");
}

/* Sampled blocks (sampled maps, after emit_map_base): %ntop_d4 = this
 * block's index among them (block_linear >> shift), %ntop_d5 = how many
 * there are (ceil(blocks / 2^shift)). */
static void emit_sampled_blocks(struct strbuf *sb)
{
	strbuf_puts(sb,
		"mov.u64 %ntop_d5, 1;\n"
		"shl.b64 %ntop_d5, %ntop_d5, %ntop_w6;\n"
		"add.u64 %ntop_d5, %ntop_d5, -1;\n"
		"add.u64 %ntop_d5, %ntop_nb, %ntop_d5;\n"
		"shr.u64 %ntop_d5, %ntop_d5, %ntop_w6;\n"
		"shr.u64 %ntop_d4, %ntop_bl, %ntop_w6;\n");
}

/* dst = address of this unit's count (rec = 0) or first record (rec = 1:
 * its record 0, either layout) in map i (layout in engine.h), computed where it is needed rather than
 * kept live from the entry. Only the unit in the block differs between the
 * threads of a block: the rest is uniform (ptxas keeps it in uniform
 * registers), and the per-thread part is one mad.wide.u32. Counts cover
 * every unit; a slot-major map's records only the sampled blocks' units
 * (an unsampled block's address is computed but never stored to). */
/* %ntop_d2 (the map's buffer) moved past the counts of `units` (a u64
 * register) to the record area: 4 bytes a unit, padded to 16 (engine.h). */
static void emit_record_area(struct strbuf *sb, const char *units)
{
	strbuf_printf(sb, "shl.b64 %%ntop_d3, %s, 2;\n", units);
	strbuf_puts(sb,
		"add.u64 %ntop_d3, %ntop_d3, 15;\n"
		"and.b64 %ntop_d3, %ntop_d3, -16;\n"
		"add.u64 %ntop_d2, %ntop_d2, %ntop_d3;\n");
}

/* A block map's unit is its block: one count and cap records per block. */
static void block_unit_addr(const struct imap *m, struct strbuf *sb, int map, int rec, const char *dst)
{
	emit_map_base(m, sb, map);
	if (!rec) {
		strbuf_printf(sb, "mad.lo.u64 %s, %%ntop_bl, 4, %%ntop_d2;\n", dst);
		return;
	}
	emit_record_area(sb, "%ntop_nb");
	strbuf_printf(sb, "mad.lo.u64 %s, %%ntop_bl, %u, %%ntop_d2;\n", dst, m->cap_bytes);
}

void ptx_inject_unit_addr(const struct inj *in, struct strbuf *sb, struct site *st, int map,
			  int rec, const char *dst)
{
	const struct imap *m = &in->maps[map];
	if (m->block) {
		emit_grid(in, sb, st);
		block_unit_addr(m, sb, map, rec, dst);
		return;
	}
	const char *u = m->warp ? "w" : "t";
	emit_unit_in_block(in, sb, st, m->warp);
	emit_grid(in, sb, st);
	strbuf_printf(sb, "cvt.u64.u32 %%ntop_d1, %%ntop_p%s;\n", u);
	strbuf_puts(sb, "mul.lo.u64 %ntop_d0, %ntop_bl, %ntop_d1;\n"); /* the block's first unit */
	emit_map_base(m, sb, map);
	if (!rec) {
		strbuf_puts(sb, "mad.lo.u64 %ntop_d0, %ntop_d0, 4, %ntop_d2;\n");
		strbuf_printf(sb, "mad.wide.u32 %s, %%ntop_u%s, 4, %%ntop_d0;\n", dst, u);
		return;
	}
	strbuf_puts(sb, "mul.lo.u64 %ntop_d3, %ntop_nb, %ntop_d1;\n"); /* units */
	emit_record_area(sb, "%ntop_d3");
	if (m->slot_major) {
		emit_sampled_blocks(sb);
		strbuf_puts(sb, "mul.lo.u64 %ntop_d0, %ntop_d4, %ntop_d1;\n");
	}
	/* bytes from one unit's first record to the next unit's */
	uint32_t stride = m->slot_major ? m->rec_size : m->cap_bytes;
	strbuf_printf(sb, "mad.lo.u64 %%ntop_d0, %%ntop_d0, %u, %%ntop_d2;\n", stride);
	strbuf_printf(sb, "mad.wide.u32 %s, %%ntop_u%s, %u, %%ntop_d0;\n", dst, u, stride);
}

/* dst (u64) = units with records: the stride between a slot-major unit's
 * records, in records. */
void ptx_inject_unit_count(const struct inj *in, struct strbuf *sb, struct site *st, int map,
			   const char *dst)
{
	const struct imap *m = &in->maps[map];
	emit_unit_in_block(in, sb, st, m->warp);
	emit_grid(in, sb, st);
	strbuf_printf(sb, "cvt.u64.u32 %%ntop_d1, %%ntop_p%s;\n", m->warp ? "w" : "t");
	if (!m->slot_major) {
		strbuf_printf(sb, "mul.lo.u64 %s, %%ntop_nb, %%ntop_d1;\n", dst);
		return;
	}
	emit_map_base(m, sb, map);
	emit_sampled_blocks(sb);
	strbuf_printf(sb, "mul.lo.u64 %s, %%ntop_d5, %%ntop_d1;\n", dst);
}

/* pred = this block's records are kept in sampled map i: block_linear
 * is a multiple of 2^shift (slot-major), or below ceil(blocks / 2^shift)
 * (the first blocks: warp maps). */
void ptx_inject_unit_sampled(const struct inj *in, struct strbuf *sb, struct site *st, int map,
			     const char *pred)
{
	emit_grid(in, sb, st);
	emit_map_base(&in->maps[map], sb, map);
	if (!in->maps[map].slot_major) {
		emit_sampled_blocks(sb);
		strbuf_printf(sb, "setp.lt.u64 %s, %%ntop_bl, %%ntop_d5;\n", pred);
		return;
	}
	strbuf_puts(sb,
		"mov.u64 %ntop_d5, 1;\n"
		"shl.b64 %ntop_d5, %ntop_d5, %ntop_w6;\n"
		"add.u64 %ntop_d5, %ntop_d5, -1;\n"
		"and.b64 %ntop_d5, %ntop_bl, %ntop_d5;\n");
	strbuf_printf(sb, "setp.eq.u64 %s, %%ntop_d5, 0;\n", pred);
}
