/* SAVE layout rules shared by the PTX and GCN verifiers (verify_save.h). */
#include "engine/probe/verify_save.h"

#include <stdio.h>

static const char *save_field_at(const struct probe_map *m, uint32_t off, enum probe_type *type)
{
	for (int i = 0; i < m->n_fields; i++) {
		if (m->fields[i].offset == off) {
			*type = m->fields[i].type;
			return m->fields[i].name;
		}
	}
	return NULL;
}

int verify_save_values(const struct probe_map *m, uint32_t saved, enum probe_type t, int n, char *msg, size_t len)
{
	if (t == PROBE_U64 && saved % 8) {
		snprintf(msg, len, "SAVE.u64 starts at byte %u of what this snippet saves; u64 values must be 8-byte "
			 "aligned (save u64 values first)", saved);
		return -1;
	}
	if (t == PROBE_U64 && m->rec_size % 8) {
		snprintf(msg, len, "SAVE.u64 needs records whose size is a multiple of 8, the map's are %u bytes",
			 m->rec_size);
		return -1;
	}
	for (int i = 0; i < n && m->n_fields > 0; i++) {
		uint32_t off = (saved + (uint32_t)i * (uint32_t)t) % m->rec_size;
		enum probe_type ft = 0;
		const char *f = save_field_at(m, off, &ft);
		if (!f || ft != t) {
			snprintf(msg, len, "value %d lands at byte %u of the record, where %s%s%s%s", i + 1, off,
				 f ? "field '" : "no field starts", f ? f : "", f ? "' is " : "",
				 f ? (ft == PROBE_U64 ? "u64" : "u32") : "");
			return -1;
		}
	}
	return 0;
}

int verify_save_total(const struct probe_map *m, uint32_t saved, char *msg, size_t len)
{
	if (m->rec_size && saved % m->rec_size) {
		snprintf(msg, len, "this snippet saves %u bytes; it must save whole %u-byte records (0, %u, %u, ...)", saved,
			 m->rec_size, m->rec_size, 2 * m->rec_size);
		return -1;
	}
	if ((uint64_t)saved > (uint64_t)m->rec_size * m->cap) {
		snprintf(msg, len, "this snippet saves %u bytes, more than the map holds per %s (%u records of %u bytes): "
			 "raise cap", saved, probe_level_name(m->level), m->cap, m->rec_size);
		return -1;
	}
	return 0;
}
