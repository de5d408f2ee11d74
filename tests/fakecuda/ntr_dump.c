/* Prints a summary of one result file for the regress scripts:
 *   kernel=NAME kid=N seq=N maps=N units=N records=N dropped=N smid_max=N sms=N blocks=N
 *   [sampled=N unsampled=N|unknown] version=N warp=N slots=STORED/CAP,... fnv=HEX probes=A,B
 * (smid_max: the largest u32 field named "smid" in the first map, -1 when
 * there is none; slots: per map, record slots stored per unit / cap; probes:
 * the rest of the line; fnv: FNV-1a of every map's counts and stored
 * records, the content, for comparing runs). Exit 1 when the file cannot be
 * read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trace/result.h"

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ ((const uint8_t *)p)[i]) * 1099511628211ull;
	return h;
}

/* Counts, then each unit's stored records in unit order (the layout's
 * order does not matter). */
static uint64_t map_fnv(uint64_t h, const struct result_map *m)
{
	h = fnv(h, m->counts, m->units * 4);
	for (uint64_t u = 0; u < m->units; u++)
		for (uint32_t k = 0; k < m->stored; k++) {
			const uint8_t *rec = result_map_record(m, u, k);
			if (rec)
				h = fnv(h, rec, m->map.rec_size);
		}
	return h;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: ntr_dump FILE.ntr\n");
		return 2;
	}
	struct result *r = NULL;
	char *cause = NULL;
	if (result_read(argv[1], &r, &cause) < 0) {
		fprintf(stderr, "ntr_dump: %s\n", cause ? cause : "unreadable");
		free(cause);
		return 1;
	}
	long long smid_max = -1;
	uint64_t units = 0, written = 0, dropped = 0, unsampled = 0;
	unsigned shift = 0;
	int unknown = 0;
	uint64_t h = 1469598103934665603ull;
	for (int i = 0; i < r->n_maps; i++) {
		const struct result_map *m = &r->maps[i];
		h = map_fnv(h, m);
		units += m->units;
		written += m->records_written;
		dropped += m->records_dropped;
		unsampled += m->records_unsampled;
		unknown |= m->unsampled_unknown;
		if (m->sample_shift > shift)
			shift = m->sample_shift;
		for (int f = 0; i == 0 && f < m->map.n_fields; f++) {
			if (strcmp(m->map.fields[f].name, "smid") != 0 || m->map.fields[f].type != PROBE_U32)
				continue;
			for (uint64_t u = 0; u < m->units; u++)
				for (uint32_t k = 0; k < m->map.cap; k++) {
					uint32_t v;
					const uint8_t *rec = result_map_record(m, u, k);
					if (!rec)
						break; /* block not sampled, or past the stored slots */
					memcpy(&v, rec + m->map.fields[f].offset, 4);
					if (m->counts[u] > 0 && (long long)v > smid_max)
						smid_max = v;
				}
		}
	}
	printf("kernel=%s kid=%u seq=%llu maps=%d units=%llu records=%llu dropped=%llu smid_max=%lld sms=%u blocks=%llu",
	       r->kernel, r->kernel_id, (unsigned long long)r->seq, r->n_maps, (unsigned long long)units,
	       (unsigned long long)written, (unsigned long long)dropped, smid_max, r->device_sms,
	       (unsigned long long)r->grid[0] * r->grid[1] * r->grid[2]);
	if (shift && unknown)
		printf(" sampled=%llu unsampled=unknown", 1ull << shift);
	else if (shift)
		printf(" sampled=%llu unsampled=%llu", 1ull << shift, (unsigned long long)unsampled);
	printf(" version=%u warp=%u slots=", r->version, r->warp_size);
	for (int i = 0; i < r->n_maps; i++)
		printf("%s%u/%u", i ? "," : "", r->maps[i].stored, r->maps[i].map.cap);
	printf(" fnv=%016llx probes=%s\n", (unsigned long long)h, r->probes ? r->probes : "");
	result_free(r);
	return 0;
}
