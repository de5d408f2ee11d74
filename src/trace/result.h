/* Result files: what one probed launch recorded, one file per launch,
 * results/<pid>-<seq>.ntr in the trace directory. Little-endian:
 *   fixed header   "NTOPRES\0", u32 version (1 to 4), u32 header bytes, ...
 *   strings        kernel name, probe names (length-prefixed)
 *   per map        descriptor (name, level, cap, rec_size, layout flags, fields,
 *                  units, counts/records sizes) + one zstd frame holding
 *                  counts[units] (u32) then the stored record slots
 * Full layout in doc/trace-format.md. Written to a temporary name and renamed,
 * so a reader never sees half a file; every length is checked when read. */
#ifndef NTOP_RESULT_H
#define NTOP_RESULT_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "engine/engine.h"
#include "engine/probe/probe.h"

#define RESULT_MAGIC "NTOPRES"
/* Version 2 files may hold slot-major maps, version 3 block-sampled ones,
 * version 4 maps that store fewer record slots per unit than their cap
 * (stored < cap), version 5 warp-level units of other than 32 lanes (AMD
 * waves of 64), version 6 a site table (the probed kernel's sites, so
 * records that save SITE name their source line), version 7 maps whose
 * kept blocks are the first ones (sample_prefix); a file is written with
 * the lowest version that describes it, so older readers still take what
 * they can read and refuse (rather than misread) the others. */
#define RESULT_VERSION 7

struct result_map {
	struct probe_map map;  /* name, level, cap, rec_size, fields */
	uint64_t units;        /* threads or warps in the launch */
	uint32_t *counts;      /* [units] bytes each unit tried to save */
	uint8_t *records;      /* [rec_units * stored * rec_size]: read through result_map_record */
	/* Record slots stored per unit, 0 <= stored <= cap: slots 0..stored-1
	 * of every unit with records are in `records`, the later ones are not
	 * (result_map_record returns NULL). Every writer sets it: cap for a
	 * whole map; the hook, which copies back only what was written, the
	 * most records a kept unit wrote (result_map_most_records), so 0 means
	 * no records at all. No kept unit may hold more than `stored` records
	 * (min(count, cap * rec_size) / rec_size): result_write refuses such a
	 * map, result_read such a file. Read: cap before format version 4. */
	uint32_t stored;
	int slot_major;        /* record k of unit u at (k * rec_units + u) * rec_size, else at
				  (u * stored + k) * rec_size (engine.h; descriptor flag bit 0) */
	/* Block sampling (engine.h): records were kept for 1 block in
	 * 2^sample_shift only (block_linear a multiple of it); counts cover all
	 * units. rec_units = units with records (the slot-major stride) and
	 * units_per_block are only read when sample_shift > 0. */
	uint32_t sample_shift;
	uint64_t rec_units;
	uint64_t units_per_block;
	/* ... and the kept blocks are the first ceil(blocks / 2^sample_shift)
	 * (engine.h: warp maps), not every 2^sample_shift-th: unit u keeps its
	 * index among the units with records (descriptor flag bit 2). */
	int sample_prefix;
	/* Sampled maps whose skipped blocks stored no counts (the CUDA hook's,
	 * engine.h). Written: counts_kept_only, counts[] holds the rec_units
	 * kept units' counts in kept-unit order (descriptor flag bit 1). Read:
	 * the reader spreads them over every unit, 0 for the others, and sets
	 * unsampled_unknown: records_unsampled (0) is then no count at all. */
	int counts_kept_only;
	int unsampled_unknown;
	uint64_t records_written; /* derived when read: sum(min(count, cap*rec)/rec) over kept units */
	uint64_t records_dropped; /* derived when read: past the cap in kept units */
	uint64_t records_unsampled; /* derived when read: all attempted by units of blocks not kept */
};

struct result {
	uint32_t version;      /* read: the file's format version (ignored when writing) */
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
	uint32_t warp_size;    /* lanes of a warp-level unit: 32 (CUDA warps; also
				  when 0), 64 or 32 (AMD waves); read: 32 before version 5 */
	uint64_t wall_ns;      /* host wall clock at launch */
	uint64_t duration_ns;  /* probed launch duration by driver events, 0 if unknown */
	int n_maps;
	struct result_map *maps;
	/* The probed kernel's sites (engine.h): written when it has sites or
	 * regions (the hook's buffers are only read), read from version 6
	 * files (empty before). */
	struct engine_sites sites;
};

/* Writes dir/name atomically (tmp file, rename; not fsynced). The struct's buffers
 * are only read. Refuses a map with stored > cap, or with a unit (of a kept
 * block) holding more than `stored` records. Compression level: zstd 1 (the
 * fastest; on dmat-like records 1.5x faster than level 3 at the same ratio). */
int result_write(const char *dir, const char *name, const struct result *r, char **cause);
/* The same in the directory open as dfd: an O_EXCL temporary, renameat
 * (a link planted at `name` is replaced, never followed). */
int result_write_at(int dfd, const char *name, const struct result *r, char **cause);
int result_read(const char *path, struct result **out, char **cause);
/* The same checks on a file image already in memory (tests, fuzzers). */
int result_read_mem(const void *buf, size_t len, struct result **out, char **cause);
void result_free(struct result *r);

/* Fills records_written, records_dropped and records_unsampled from the
 * counts (what the reader derives; the hook calls it on its buffers). */
void result_map_derive_counts(struct result_map *m);

/* The most records any unit with records holds, min(count, cap * rec_size)
 * / rec_size: the least `stored` that keeps them all (0 when none wrote). */
uint32_t result_map_most_records(const struct result_map *m);

/* How many blocks, the first ones, a map sampled to its first blocks kept
 * (sample_prefix); 0 for any other map. */
static inline uint64_t result_map_kept_first(const struct result_map *m)
{
	return m->sample_shift && m->sample_prefix && m->units_per_block ? m->rec_units / m->units_per_block : 0;
}

/* Units per block of a map: threads, or warps (waves) of a block, or 1. */
static inline uint64_t result_units_per_block(const struct result *r, const struct probe_map *m)
{
	uint64_t threads = (uint64_t)r->block[0] * r->block[1] * r->block[2];
	uint64_t lanes = r->warp_size ? r->warp_size : 32;
	if (m->level == PROBE_LEVEL_BLOCK)
		return 1;
	return m->level == PROBE_LEVEL_WARP ? (threads + lanes - 1) / lanes : threads;
}

/* Counts the file holds for a map: every unit's, or the kept units' only
 * (a map read with unsampled_unknown). */
static inline uint64_t result_map_file_counts(const struct result_map *m)
{
	return m->unsampled_unknown || m->counts_kept_only ? m->rec_units : m->units;
}

/* Does unit `unit` have records (its block sampled)? */
static inline int result_map_unit_kept(const struct result_map *m, uint64_t unit)
{
	if (m->sample_shift && m->sample_prefix)
		return unit < m->rec_units;
	return !m->sample_shift || !((unit / m->units_per_block) & ((1ull << m->sample_shift) - 1));
}

/* Units with records: the slot-major stride (all units unless sampled). */
static inline uint64_t result_map_rec_units(const struct result_map *m)
{
	return m->sample_shift ? m->rec_units : m->units;
}

/* The unit whose records sit at index `ru` among the units with records
 * (the inverse of the sampling map in result_map_record). */
static inline uint64_t result_map_unit_at(const struct result_map *m, uint64_t ru)
{
	if (!m->sample_shift || m->sample_prefix)
		return ru;
	return ((ru / m->units_per_block) << m->sample_shift) * m->units_per_block + ru % m->units_per_block;
}

/* Unit `unit`'s record `slot` in either layout, NULL when the unit's
 * block was not sampled or the slot was not stored (slot >= stored). Only
 * the first min(counts[unit], cap * rec_size) / rec_size records hold data
 * (all of them stored, in a map read or written). */
static inline const uint8_t *result_map_record(const struct result_map *m, uint64_t unit, uint32_t slot)
{
	if (!result_map_unit_kept(m, unit) || slot >= m->stored)
		return NULL;
	uint64_t upb = m->units_per_block;
	uint64_t ru = m->sample_shift && !m->sample_prefix ? (unit / upb >> m->sample_shift) * upb + unit % upb : unit;
	uint64_t i = m->slot_major ? (uint64_t)slot * result_map_rec_units(m) + ru : ru * m->stored + slot;
	return m->records + i * m->map.rec_size;
}

/* A record's 32- and 64-bit fields at p (records need not be aligned). */
static inline uint32_t result_rec_u32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

static inline uint64_t result_rec_u64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

/* ---- streaming (result_stream.c) ----
 * For maps too big to hold: result_stream_open reads and checks the header,
 * the descriptors and every map's counts (4 bytes a unit), not the records;
 * a pass then decompresses one map's records from the file in file order,
 * in chunks of whole records (a few MB of buffers), as often as wanted.
 * The checks are result_read's (one parser); a frame's end, its exact size
 * and its checksum are checked when a pass reaches the end of the records
 * (result_pass_next fails there, so a consumer must not trust what it saw
 * before a pass ended with 0). The file stays open, so a file replaced
 * under the same name does not change what later passes read. */
struct result_stream;
struct result_pass;

/* A run of consecutive records in file order: record index `first` is
 * record (slot, unit) per result_map_rec_pos. */
struct result_chunk {
	const uint8_t *recs; /* n * rec_size bytes */
	uint64_t first;
	uint64_t n;
};

int result_stream_open(const char *path, struct result_stream **out, char **cause);
/* Header, maps (counts loaded, records NULL, derived totals set). */
const struct result *result_stream_result(const struct result_stream *s);
/* Heap the stream holds (counts, names): O(units). */
size_t result_stream_mem(const struct result_stream *s);
void result_stream_close(struct result_stream *s);
/* result_stream_open + close, keeping the header, maps and counts. */
int result_read_head(const char *path, struct result **out, char **cause);

int result_pass_open(const struct result_stream *s, int map, struct result_pass **out, char **cause);
/* 1: *c holds the next chunk (valid until the next call); 0: the records
 * ended and the frame checked out; -1: a read or frame error. */
int result_pass_next(struct result_pass *p, struct result_chunk *c, char **cause);
/* Heap one pass holds (buffers and zstd's window). */
size_t result_pass_mem(const struct result_pass *p);
void result_pass_free(struct result_pass *p);

/* Every stored record slot of map `map` (used or not: compare slot with
 * the unit's count) in file order; units of blocks not sampled and slots
 * at or past `stored` never appear. */
typedef void (*result_rec_fn)(void *ctx, uint64_t unit, uint32_t slot, const uint8_t *rec);
int result_stream_each(const struct result_stream *s, int map, result_rec_fn fn, void *ctx, char **cause);

/* Unit and slot of the record at index i (< rec_units * stored) of the
 * map's record area, in file order. */
static inline void result_map_rec_pos(const struct result_map *m, uint64_t i, uint64_t *unit, uint32_t *slot)
{
	uint64_t nru = result_map_rec_units(m), ru = 0;
	*slot = 0;
	if (m->slot_major && nru) {
		*slot = (uint32_t)(i / nru);
		ru = i % nru;
	} else if (!m->slot_major && m->stored) {
		ru = i / m->stored;
		*slot = (uint32_t)(i % m->stored);
	}
	*unit = result_map_unit_at(m, ru);
}

#endif
