/* Map records as CSV (export_records.h). The CSV is the ground truth the GPU
 * accuracy checks compare against what a kernel was known to do, so it
 * holds exactly what the map kept: no unused slots, no unsampled blocks,
 * values as stored (no unwrapping or decoding). */
#include "cli/export_records.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "common/cause.h"

int export_records_find_map(const struct result *r, const char *name)
{
	for (int i = 0; i < r->n_maps; i++)
		if (!name || strcmp(r->maps[i].map.name, name) == 0)
			return i;
	return -1;
}

static int er_has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), k = strlen(suf);
	return n >= k && strcmp(s + n - k, suf) == 0;
}

/* Addresses read best in hex (they are compared with pointers an app prints). */
static int er_is_addr(const struct probe_field *f)
{
	return f->type == PROBE_U64 && (strcmp(f->name, "addr") == 0 || strcmp(f->name, "address") == 0 ||
					 er_has_suffix(f->name, "_addr") || er_has_suffix(f->name, "_address"));
}

static void er_header(FILE *f, const struct probe_map *pm)
{
	fputs("block,thread,unit,slot", f);
	for (int i = 0; i < pm->n_fields; i++)
		fprintf(f, ",%s", pm->fields[i].name);
	fputs(pm->n_fields ? "\n" : ",raw\n", f);
}

static void er_record(FILE *f, const struct probe_map *pm, const uint8_t *rec)
{
	if (pm->n_fields == 0) {
		fputc(',', f);
		for (uint32_t b = 0; b < pm->rec_size; b++)
			fprintf(f, "%02x", rec[b]);
	}
	for (int i = 0; i < pm->n_fields; i++) {
		const struct probe_field *fl = &pm->fields[i];
		if (fl->type == PROBE_U32) {
			uint32_t v;
			memcpy(&v, rec + fl->offset, 4);
			fprintf(f, ",%" PRIu32, v);
		} else {
			uint64_t v;
			memcpy(&v, rec + fl->offset, 8);
			fprintf(f, er_is_addr(fl) ? ",0x%" PRIx64 : ",%" PRIu64, v);
		}
	}
	fputc('\n', f);
}

static int er_check_shape(const struct result *r, const struct result_map *m, uint64_t upb, char **cause)
{
	uint64_t blocks = (uint64_t)r->grid[0] * r->grid[1] * r->grid[2];
	if (upb == 0 || blocks == 0 || m->units % upb != 0 || m->units / upb != blocks)
		return cause_set(cause, "map %s holds %" PRIu64 " units, but grid %ux%ux%u x block %ux%ux%u gives %" PRIu64
				 " blocks of %" PRIu64 " %s",
				 m->map.name, m->units, r->grid[0], r->grid[1], r->grid[2], r->block[0], r->block[1],
				 r->block[2], blocks, upb,
				 m->map.level == PROBE_LEVEL_BLOCK ? "block" :
				 m->map.level != PROBE_LEVEL_WARP ? "threads" : r->warp_size == 64 ? "waves" : "warps");
	return 0;
}

int export_records_write(FILE *f, const struct result *r, int map, struct export_records_stats *st,
			 struct cli_progress *pr, char **cause)
{
	memset(st, 0, sizeof *st);
	if (map < 0 || map >= r->n_maps)
		return cause_set(cause, "no map %d in this launch (it has %d)", map, r->n_maps);
	const struct result_map *m = &r->maps[map];
	const struct probe_map *pm = &m->map;
	uint64_t upb = result_units_per_block(r, pm);
	if (er_check_shape(r, m, upb, cause) < 0)
		return -1;
	uint64_t cap_bytes = (uint64_t)pm->cap * pm->rec_size;
	er_header(f, pm);
	for (uint64_t u = 0; u < m->units; u++) {
		if (pr && (u & 4095) == 0)
			cli_progress_update(pr, u, m->units);
		uint64_t c = m->counts[u], kept = (c < cap_bytes ? c : cap_bytes) / pm->rec_size;
		if (kept == 0)
			continue;
		if (!result_map_record(m, u, 0)) {
			st->unsampled++;
			continue;
		}
		st->dropped += c / pm->rec_size - kept;
		uint64_t block = u / upb, in_block = u % upb;
		uint64_t lanes = r->warp_size ? r->warp_size : 32; /* AMD waves: 64 or 32 */
		uint64_t thread = pm->level == PROBE_LEVEL_WARP ? in_block * lanes : in_block;
		st->units++;
		for (uint32_t k = 0; k < kept; k++) {
			fprintf(f, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu32, block, thread, u, k);
			er_record(f, pm, result_map_record(m, u, k));
		}
		st->records += kept;
		if (ferror(f))
			break;
	}
	if (ferror(f))
		return cause_set(cause, "write failed: %s", strerror(errno ? errno : EIO));
	return 0;
}
