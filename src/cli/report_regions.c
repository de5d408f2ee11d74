/* ntop report on what happened inside kernels: a regions launch's table
 * (per region: segments, warps, cycles per warp, share of the warps'
 * lives; the gaps), and with --lines a dmat launch's memory per source
 * line (accesses, bytes, sectors per request, pages). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/report.h"
#include "common/strbuf.h"
#include "viz/lines.h"

static void pct(char *buf, size_t n, double share)
{
	snprintf(buf, n, "%.1f%%", 100.0 * share);
}

void rep_text_regions(const struct regions *g)
{
	printf("        regions: %llu warps", (unsigned long long)g->n_warps);
	if (g->life) {
		char p[16];
		pct(p, sizeof p, (double)g->gaps / (double)g->life);
		printf(", %s of their time in no region", p);
	}
	if (g->warps_truncated)
		printf("; %llu warps truncated (%llu records past the cap dropped: raise cap in a copy of "
		       "probes/regions.toml)", (unsigned long long)g->warps_truncated,
		       (unsigned long long)g->records_dropped);
	if (g->unmatched)
		printf("; %llu records unmatched", (unsigned long long)g->unmatched);
	printf("\n        %-12s %-22s %9s %7s %12s %10s %7s\n", "region", "spec", "segments", "warps",
	       "cycles/warp", "p95", "share");
	for (int r = 0; r < g->n_regions; r++) {
		const struct rg_region *x = &g->reg[r];
		char name[32], p[16];
		pct(p, sizeof p, x->share);
		printf("        %-12s %-22.22s %9llu %7llu %12.0f %10llu %7s\n", regions_name(g, (uint32_t)r, name, sizeof name),
		       x->spec[0] ? x->spec : "-", (unsigned long long)x->segments, (unsigned long long)x->warps, x->mean,
		       (unsigned long long)x->p95, x->warps && x->share >= 0 ? p : "-");
	}
}

void rep_json_regions(struct strbuf *sb, const struct regions *g)
{
	struct cli_json o, a;
	cli_json_object(&o, sb);
	cli_json_u64(&o, "warps", g->n_warps);
	cli_json_u64(&o, "warps_truncated", g->warps_truncated);
	cli_json_u64(&o, "records_dropped", g->records_dropped);
	cli_json_u64(&o, "records_unmatched", g->unmatched);
	cli_json_u64(&o, "life_cycles", g->life);
	cli_json_u64(&o, "gap_cycles", g->gaps);
	cli_json_number_if(&o, "gap_share", g->life > 0, g->life ? (double)g->gaps / (double)g->life : 0);
	cli_json_key(&o, "regions");
	cli_json_array(&a, sb);
	for (int r = 0; r < g->n_regions; r++) {
		const struct rg_region *x = &g->reg[r];
		struct cli_json e;
		char name[32];
		cli_json_item(&a);
		cli_json_object(&e, sb);
		cli_json_string(&e, "name", regions_name(g, (uint32_t)r, name, sizeof name));
		cli_json_string(&e, "spec", x->spec[0] ? x->spec : NULL);
		cli_json_u64(&e, "segments", x->segments);
		cli_json_u64(&e, "warps", x->warps);
		cli_json_u64(&e, "cycles_total", x->total);
		cli_json_number(&e, "cycles_per_warp_mean", x->mean);
		cli_json_u64(&e, "cycles_per_warp_p95", x->p95);
		cli_json_number_if(&e, "share", x->share >= 0, x->share);
		cli_json_end(&e);
	}
	cli_json_end(&a);
	cli_json_end(&o);
}

int rep_text_lines(const char *path, int map, int top)
{
	struct result_stream *s = NULL;
	struct lines *L = NULL;
	char *cause = NULL;
	if (result_stream_open(path, &s, &cause) < 0 || lines_analyze(s, map, &L, &cause) < 0) {
		printf("        lines: %s\n", cause ? cause : "cannot read the result");
		free(cause);
		result_stream_close(s);
		return -1;
	}
	printf("        memory by source line (%llu accesses", (unsigned long long)L->records);
	if (L->unattributed)
		printf(", %llu from sites past the 2047 a record can name", (unsigned long long)L->unattributed);
	printf("):\n        %-32s %-18s %10s %12s %10s %10s %9s %8s\n", "line", "kind", "accesses", "bytes",
	       "requests", "sectors", L->coalescing ? "sect/req" : "", "pages");
	for (int i = 0; i < L->n && i < top; i++) {
		const struct ln_line *l = &L->v[i];
		char k[64], spr[16] = "";
		if (!l->accesses)
			continue;
		if (L->coalescing && l->requests)
			snprintf(spr, sizeof spr, "%.2f", (double)l->sectors / (double)l->requests);
		printf("        %-32.32s %-18s %10llu %12llu %10llu %10llu %9s %7llu%s\n", l->where,
		       lines_kinds_text(l->kinds, k, sizeof k), (unsigned long long)l->accesses, (unsigned long long)l->bytes,
		       (unsigned long long)l->requests, (unsigned long long)l->sectors, spr, (unsigned long long)l->pages,
		       l->pages >= LINES_PAGES_MAX ? "+" : "");
	}
	lines_free(L);
	result_stream_close(s);
	return 0;
}
