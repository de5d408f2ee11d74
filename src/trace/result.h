/* Result files: what one probed launch recorded, one file per launch,
 * results/<pid>-<seq>.ntr in the trace directory. Little-endian:
 *   fixed header   "NTOPRES\0", u32 version (1), u32 header bytes, ...
 *   strings        kernel name, probe names (length-prefixed)
 *   per map        descriptor (name, level, cap, rec_size, layout flag, fields,
 *                  units, counts/records sizes) + one zstd frame holding
 *                  counts[units] (u32) then the record bytes
 * Full layout in doc/trace-format.md. Written to a temporary name and renamed,
 * so a reader never sees half a file; every length is checked when read. */
#ifndef NTOP_RESULT_H
#define NTOP_RESULT_H
#include <stddef.h>
#include <stdint.h>
#include "engine/probe.h"

#define RESULT_MAGIC "NTOPRES"
/* Version 2 files may hold slot-major maps; a file whose maps are all
 * unit-major is written as version 1, so older readers still take it and
 * refuse (rather than misread) the others. */
#define RESULT_VERSION 2

struct result_map {
	struct probe_map map;  /* name, level, cap, rec_size, fields */
	uint64_t units;        /* threads or warps in the launch */
	uint32_t *counts;      /* [units] bytes each unit tried to save */
	uint8_t *records;      /* [units * cap * rec_size]: read through result_map_record */
	int slot_major;        /* record k of unit u at (k * units + u) * rec_size, else at
				  (u * cap + k) * rec_size (engine.h; descriptor flag bit 0) */
	uint64_t records_written; /* derived when read: sum(min(count, cap*rec)/rec) */
	uint64_t records_dropped; /* derived when read: attempted - written */
};

struct result {
	uint32_t pid;
	uint64_t seq;          /* launch sequence number within the process */
	uint32_t kernel_id;    /* kid in events.log */
	char *kernel;          /* mangled name */
	char *probes;          /* comma-separated probe names */
	uint32_t grid[3], block[3];
	uint32_t smem;         /* dynamic shared memory bytes */
	uint32_t device_sms;   /* multiprocessor count of the device */
	uint32_t device_cc;    /* e.g. 90 */
	uint32_t sm_clock_khz; /* device clock rate, 0 if unknown */
	uint64_t wall_ns;      /* host wall clock at launch */
	uint64_t duration_ns;  /* probed launch duration by driver events, 0 if unknown */
	int n_maps;
	struct result_map *maps;
};

/* Writes dir/name atomically (tmp file, rename; not fsynced). The struct's buffers
 * are only read. Compression level: zstd 3 (fast). */
int result_write(const char *dir, const char *name, const struct result *r, char **cause);
int result_read(const char *path, struct result **out, char **cause);
/* The same checks on a file image already in memory (tests, fuzzers). */
int result_read_mem(const void *buf, size_t len, struct result **out, char **cause);
void result_free(struct result *r);

/* Unit `unit`'s record `slot` (< cap) in either layout. Only the first
 * min(counts[unit], cap * rec_size) / rec_size records hold data. */
static inline const uint8_t *result_map_record(const struct result_map *m, uint64_t unit, uint32_t slot)
{
	uint64_t i = m->slot_major ? (uint64_t)slot * m->units + unit : unit * m->map.cap + slot;
	return m->records + i * m->map.rec_size;
}

#endif
