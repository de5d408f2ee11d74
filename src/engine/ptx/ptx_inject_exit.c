/* The code before every kernel exit (ret, exit, or the closing brace):
 * the exit snippets and each map's count store. It is the same at every
 * exit, so it is rendered once. */
#include "engine/ptx/ptx_inject_int.h"

#include <stdio.h>

#include "common/cause.h"

uint32_t ptx_inject_exit_bytes(const struct inj *in, int map)
{
	uint32_t c = 0;
	const struct probe *p = in->pr[in->maps[map].pr].p;
	for (int h = 0; h < p->n_hooks; h++)
		if (p->hooks[h].kind == PROBE_TP_EXIT)
			c = inject_sat_add(c, in->pr[in->maps[map].pr].snips[h].save_bytes);
	return c;
}

/* The count address is kept from the entry (in->at_entry) or computed here. */
static void emit_count_store(struct inj *in, struct strbuf *sb, struct site *st, int map)
{
	char ca[32] = "%ntop_ca";
	if (in->maps[map].count_static)
		return; /* the host knows it (engine.h) */
	if (in->at_entry)
		snprintf(ca, sizeof ca, "%%ntop_hc%d", map);
	else
		ptx_inject_unit_addr(in, sb, st, map, 0, ca);
	if (in->maps[map].block) { /* static: thread 0 stores the block's */
		ptx_inject_unit_thread0(in, sb, st, "%ntop_t0");
		strbuf_printf(sb, "@%%ntop_t0 st.global.u32 [%s], %u;\n", ca,
			      inject_sat_add(in->maps[map].entry_bytes, ptx_inject_exit_bytes(in, map)));
	} else if (in->maps[map].dynamic && in->maps[map].sampled) /* only kept blocks count (engine.h) */
		strbuf_printf(sb, "@%%ntop_sp%d st.global.u32 [%s], %%ntop_cur%d;\n", map, ca, map);
	else if (in->maps[map].dynamic)
		strbuf_printf(sb, "st.global.u32 [%s], %%ntop_cur%d;\n", ca, map);
	else /* bytes it tried to save: the entry's and every exit snippet's */
		strbuf_printf(sb, "st.global.u32 [%s], %u;\n", ca,
			      inject_sat_add(in->maps[map].entry_bytes, ptx_inject_exit_bytes(in, map)));
}

/* The exit code of the probes whose map is (warp = 1) or is not (0) a warp
 * map: their exit snippets and those maps' count stores. A static count is
 * stored first: its address is then dead before the record address is
 * computed (fewer registers live at once than the other order). */
static int emit_exit_group(struct inj *in, struct strbuf *sb, struct site *st, int warp)
{
	for (int i = 0; i < in->n_maps; i++)
		if (in->maps[i].warp == warp && !in->maps[i].dynamic)
			emit_count_store(in, sb, st, i);
	for (int k = 0; k < in->n_pr; k++) {
		const struct iprobe *ip = &in->pr[k];
		if ((ip->map >= 0 && in->maps[ip->map].warp) != warp)
			continue;
		for (int h = 0; h < ip->p->n_hooks; h++)
			if (ip->p->hooks[h].kind == PROBE_TP_EXIT && ptx_inject_site_snip(in, sb, ip, h, st) < 0)
				return -1;
	}
	for (int i = 0; i < in->n_maps; i++)
		if (in->maps[i].warp == warp && in->maps[i].dynamic)
			emit_count_store(in, sb, st, i);
	return 0;
}

/* Renders the exit code once: the same at every exit (no site helpers).
 * The lane-0 part runs after the other, so it reuses what that computed. */
static int emit_exit_render(struct inj *in)
{
	struct site st = ptx_inject_site_at(SITE_EXIT, NULL);
	for (int i = 0; i < in->n_maps; i++)
		st.cur[i] = in->maps[i].entry_bytes;
	struct strbuf all, lane;
	strbuf_init(&all);
	strbuf_init(&lane);
	int rc = emit_exit_group(in, &all, &st, 0);
	if (rc == 0 && in->any_warp) {
		if (!in->at_entry)
			ptx_inject_unit_lane0(in, &all, &st, "%ntop_lane0");
		st.lane0_only = 1;
		rc = emit_exit_group(in, &lane, &st, 1);
	}
	in->exit_all = strbuf_finish(&all, NULL);
	in->exit_lane0 = strbuf_finish(&lane, NULL);
	if (rc == 0 && (!in->exit_all || !in->exit_lane0))
		rc = cause_set(in->cause, "out of memory");
	return rc;
}

/* Exit code before a ret/exit (or the closing brace). Warp-map exit
 * snippets and stores run in lane 0 only, behind a branch around our own
 * code: nothing else in the warp needs them, and the other lanes' issue
 * slots and registers are spared (ptxas turns it into an early EXIT). */
int ptx_inject_exit_emit(struct inj *in, struct strbuf *sb)
{
	if (!in->exit_all && emit_exit_render(in) < 0)
		return -1;
	strbuf_puts(sb, in->exit_all);
	if (in->any_warp) {
		int n = in->lane_n++;
		strbuf_printf(sb, "@!%%ntop_lane0 bra $ntop_lane_%d;\n", n);
		strbuf_puts(sb, in->exit_lane0);
		strbuf_printf(sb, "$ntop_lane_%d:\n", n);
	}
	return 0;
}
