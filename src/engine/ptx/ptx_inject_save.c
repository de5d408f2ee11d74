/* SAVE: the first SAVE of a snippet execution checks the bounds and puts
 * the record address in %ntop_sa; every SAVE stores its values in as few
 * (vector) stores as alignment allows; the last advances the map's cursor,
 * at instrumentation time when it is static, in %ntop_cur<i> when not.
 * In a slot-major map (engine.h) a snippet's records are not adjacent: the
 * next one is units * rec_size bytes on, so each record gets its address
 * (%ntop_sb) when the first value lands in it. */
#include "engine/ptx/ptx_inject_int.h"

#include <stdio.h>
#include <string.h>

/* Largest power of two (<= 16) dividing both. */
static uint32_t pow2_align(uint32_t a, uint32_t b)
{
	uint32_t x = a | b | 16;
	return x & -x;
}

static int save_static(const struct inj *in, int map, const struct site *st)
{
	return st->kind == SITE_ENTRY || !in->maps[map].dynamic;
}

/* Static cursor: the record address is computed here, and a record past
 * cap is dropped now. */
static void save_head_static(struct inj *in, struct strbuf *sb, int map, uint32_t s,
			     struct site *st, struct save_state *ss)
{
	const struct imap *m = &in->maps[map];
	uint32_t c = st->cur[map];
	if (c > m->cap_bytes - s) {
		ss->drop = 1;
		return;
	}
	if (st->sa_map == map)
		;
	else if (m->rec_at_entry && st->kind == SITE_EXIT)
		strbuf_printf(sb, "mov.b64 %%ntop_sa, %%ntop_hr%d;\n", map);
	else
		ptx_inject_unit_addr(in, sb, st, map, 1, "%ntop_sa");
	st->sa_map = map;
	ss->base = c;
	if (m->slot_major) {
		/* c is whole records (every snippet saves whole records) */
		ss->base = 0;
		ss->slot0 = c / m->rec_size;
		snprintf(ss->units, sizeof ss->units, "%%ntop_un");
		ptx_inject_unit_count(in, sb, st, map, ss->units);
		ptx_inject_unit_sampled(in, sb, st, map, "%ntop_ok");
		ss->pred = 1;
	} else if (c > (uint32_t)INT32_MAX - s) { /* keep [%ntop_sa+imm] a small immediate */
		strbuf_printf(sb, "add.u64 %%ntop_sa, %%ntop_sa, %u;\n", c);
		st->sa_map = -1;
		ss->base = 0;
	}
	if (m->sampled && !m->slot_major && !in->plain) {
		ptx_inject_unit_sampled(in, sb, st, map, "%ntop_ok");
		ss->pred = 1;
	}
	if (m->warp && !st->lane0_only) { /* %ntop_lane0 is this thread's lane-0 test wherever it is set */
		ptx_inject_unit_lane0(in, sb, st, ss->pred ? "%ntop_lane0" : "%ntop_ok");
		if (ss->pred)
			strbuf_puts(sb, "and.pred %ntop_ok, %ntop_ok, %ntop_lane0;\n");
		ss->pred = 1;
	}
	if (m->block) { /* thread 0 stores the plain fields, after the lane-0 test */
		ptx_inject_unit_thread0(in, sb, st, "%ntop_t0");
		if (ss->pred)
			strbuf_puts(sb, "and.pred %ntop_t0, %ntop_t0, %ntop_ok;\n");
		ss->t0 = 1;
	}
}

/* Dynamic cursor: checked and advanced at run time. */
static void save_head_dynamic(struct inj *in, struct strbuf *sb, int map, uint32_t s,
			      struct site *st, struct save_state *ss)
{
	const struct imap *m = &in->maps[map];
	/* saturate instead of wrapping, so a huge count never looks small */
	strbuf_printf(sb, "min.u32 %%ntop_end, %%ntop_cur%d, %u;\n", map, UINT32_MAX - s);
	strbuf_printf(sb, "add.u32 %%ntop_end, %%ntop_end, %u;\n", s);
	strbuf_printf(sb, "setp.le.u32 %%ntop_ok, %%ntop_cur%d, %u;\n", map, m->cap_bytes - s);
	if (m->warp && !st->lane0_only)
		strbuf_puts(sb, "and.pred %ntop_ok, %ntop_ok, %ntop_lane0;\n");
	strbuf_printf(sb, "cvt.u64.u32 %%ntop_sa, %%ntop_cur%d;\n", map);
	if (m->slot_major) {
		/* record cur / rec_size of the unit: cur / rec_size * units * rec_size
		 * bytes past its record 0, which is cur * units (cur is whole records) */
		snprintf(ss->units, sizeof ss->units, "%%ntop_un%d", map);
		strbuf_printf(sb, "mad.lo.u64 %%ntop_sa, %%ntop_sa, %s, %%ntop_rec%d;\n", ss->units, map);
	} else {
		strbuf_printf(sb, "add.u64 %%ntop_sa, %%ntop_rec%d, %%ntop_sa;\n", map);
	}
	if (m->sampled && !st->kept_only && !in->plain)
		strbuf_printf(sb, "and.pred %%ntop_ok, %%ntop_ok, %%ntop_sp%d;\n", map);
	st->sa_map = -1;
	ss->pred = 1;
}

/* First SAVE of a snippet: bounds check and record address into %ntop_sa. */
static void save_head(struct inj *in, struct strbuf *sb, const struct iprobe *ip, uint32_t s,
		      struct site *st, struct save_state *ss)
{
	memset(ss, 0, sizeof *ss);
	ss->slot_major = in->maps[ip->map].slot_major;
	ss->rec_j = -1;
	if (save_static(in, ip->map, st))
		save_head_static(in, sb, ip->map, s, st, ss);
	else
		save_head_dynamic(in, sb, ip->map, s, st, ss);
}

/* How the field at byte `off` of a record combines a block's warps. */
static enum probe_fold save_fold(const struct probe_map *m, uint32_t off)
{
	for (int i = 0; m->level == PROBE_LEVEL_BLOCK && i < m->n_fields; i++)
		if (m->fields[i].offset == off % m->rec_size)
			return m->fields[i].fold;
	return PROBE_FOLD_NONE;
}

/* One store of n values (vector when n > 1) at byte `off` from register
 * base; a folded field's one value is a reduction instead. Stores are .cs
 * (evict first): the kernel never reads a record back, so records should
 * not push its own data out of L2 (on an H100, app_cost's sgemm under dmat
 * 1.50-1.53x -> 1.46-1.47x as the app sees it; block_sched's cost in the
 * kernel unchanged: doc/performance.md). */
static void save_store(struct strbuf *sb, const struct snip_save *sv, int n, const char *base,
		       uint32_t off, const char *pred, enum probe_fold fold)
{
	char reg = sv->size == 8 ? 'x' : 'v';
	if (pred)
		strbuf_printf(sb, "@%s ", pred);
	if (fold != PROBE_FOLD_NONE)
		strbuf_printf(sb, "red.global.%s.u%d [%s", fold == PROBE_FOLD_MAX ? "max" : "add", sv->size * 8, base);
	else if (n > 1)
		strbuf_printf(sb, "st.global.cs.v%d.b%d [%s", n, sv->size * 8, base);
	else
		strbuf_printf(sb, "st.global.cs.b%d [%s", sv->size * 8, base);
	if (off)
		strbuf_printf(sb, "+%u", off);
	strbuf_puts(sb, "], ");
	for (int k = 0; k < n; k++)
		strbuf_printf(sb, "%s%%ntop_%c%d", k ? ", " : n > 1 ? "{" : "", reg, k);
	strbuf_puts(sb, n > 1 ? "};\n" : ";\n");
}

/* How many of the n values from byte `off` on land in unfolded fields. */
static int save_plain_run(const struct probe_map *m, uint32_t off, int size, int n)
{
	int k = 0;
	while (k < n && !save_fold(m, off + (uint32_t)(k * size)))
		k++;
	return k;
}

/* Slot-major: the register addressing the snippet's record j (byte
 * `*off` of the snippet, made an offset within that record). */
static const char *save_record_base(struct strbuf *sb, struct save_state *ss, uint32_t rec_size,
				    uint32_t *off)
{
	uint32_t j = *off / rec_size, slot = ss->slot0 + j;
	*off %= rec_size;
	if (slot == 0)
		return "%ntop_sa";
	if ((int)j != ss->rec_j) /* slot * rec_size <= cap * rec_size < 2^32 */
		strbuf_printf(sb, "mad.lo.u64 %%ntop_sb, %s, %u, %%ntop_sa;\n", ss->units, slot * rec_size);
	ss->rec_j = (int)j;
	return "%ntop_sb";
}

/* The values of one SAVE, in as few stores as alignment allows: a record
 * start is 16-aligned in the buffer, plus multiples of rec_size (either
 * layout), so a value at byte `off` of it is aligned to the powers of two
 * dividing 16, rec_size and off (v2 needs twice the value size, v4 16
 * bytes); such a store never crosses into the next record. A block map's
 * folded field is a reduction of its own, by every warp's lane 0; its other
 * fields are stored by thread 0 alone. */
static int save_values(struct inj *in, struct strbuf *sb, const struct iprobe *ip,
		       const struct snip_save *sv, struct site *st, struct save_state *ss)
{
	uint32_t off = ss->base + sv->off;
	for (int v = 0; v < sv->n_vals;) {
		uint32_t a = pow2_align(ip->p->map.rec_size, off);
		enum probe_fold fold = save_fold(&ip->p->map, off);
		int n = 1;
		if (sv->size == 4 && a >= 16 && v + 4 <= sv->n_vals)
			n = 4;
		else if ((uint32_t)sv->size * 2 <= a && v + 2 <= sv->n_vals)
			n = 2;
		while (n > 1 && (fold || save_plain_run(&ip->p->map, off, sv->size, n) < n))
			n /= 2;
		for (int k = 0; k < n; k++) {
			if (ptx_inject_site_bytes64(in, sb, sv->vals[v + k], st, sv->size == 8) < 0)
				return -1;
			strbuf_printf(sb, "mov.b%d %%ntop_%c%d, ", sv->size * 8, sv->size == 8 ? 'x' : 'v', k);
			if (ptx_inject_site_expand(in, sb, sv->vals[v + k], st) < 0)
				return -1;
			strbuf_puts(sb, ";\n");
			st->bytes_wide = 0;
		}
		uint32_t at = off;
		const char *base = "%ntop_sa";
		if (ss->slot_major)
			base = save_record_base(sb, ss, ip->p->map.rec_size, &at);
		const char *pred = ss->t0 && !fold ? "%ntop_t0" : ss->pred ? "%ntop_ok" : NULL;
		save_store(sb, sv, n, base, at, pred, fold);
		v += n;
		off += (uint32_t)(n * sv->size);
	}
	return 0;
}

int ptx_inject_save_emit(struct inj *in, struct strbuf *sb, const struct iprobe *ip,
			 const struct snip *sn, const struct snip_line *l, struct site *st,
			 struct save_state *ss)
{
	int map = ip->map;
	if (l->first_save)
		save_head(in, sb, ip, sn->save_bytes, st, ss);
	if (!ss->drop && save_values(in, sb, ip, l->save, st, ss) < 0)
		return -1;
	if (!l->last_save)
		return 0;
	if (save_static(in, map, st))
		st->cur[map] = inject_sat_add(st->cur[map], sn->save_bytes);
	else
		strbuf_printf(sb, "mov.u32 %%ntop_cur%d, %%ntop_end;\n", map);
	return 0;
}
