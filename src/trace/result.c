/* Result files (.ntr): writer and reader. Layout (little-endian, byte by byte
 * in doc/trace-format.md):
 *
 *   fixed header (RESULT_HEADER_BYTES, v1 = 104 bytes; readers skip to the
 *   header_bytes the file declares, so later versions may append fields:
 *   version 5 appends the u32 warp size)
 *   str kernel, str probes            (str = u32 length + bytes, no NUL)
 *   per map: descriptor (desc_bytes, level, cap, rec_size, n_fields, flags, units,
 *            counts/records/frame byte counts, str name, fields) then one
 *            zstd frame holding counts[units] (u32) followed by the records
 *
 * The writer streams each frame straight to a temporary file and patches the
 * frame and file sizes afterwards, so a DMAT result of hundreds of MB is never
 * held compressed in memory. The reader trusts nothing: every length is checked
 * against the bytes left, every size against the others, and a frame must
 * declare exactly the size the descriptor promises before anything is
 * allocated for it. */
#include "trace/result.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "common/cause.h"
#include "common/safefs.h"
#include "common/fdio.h"
#include "common/strbuf.h"
#include "trace/result_parse.h"
#include "trace/trace_file.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "result files keep device records as raw little-endian bytes"
#endif

#define RESULT_HEADER_BYTES 104u
#define RESULT_OFF_FILE_BYTES 16u
#define RESULT_DESC_FIXED 56u      /* descriptor bytes before the map name */
#define RESULT_MAX_MAPS 64u
#define RESULT_MAP_SLOT_MAJOR 1u   /* descriptor flags: records slot-major */
#define RESULT_MAP_KEPT_COUNTS 2u  /* descriptor flags: counts of the kept units only */
#define RESULT_MAP_PREFIX 4u       /* descriptor flags: the kept blocks are the first ones */
#define RESULT_MAP_SHIFT_AT 8u     /* flags bits 8-12: block-sampling shift */
#define RESULT_MAP_SHIFT_MASK (31u << RESULT_MAP_SHIFT_AT)
#define RESULT_MAX_STR (1u << 20)  /* mangled names run to KBs, never MBs */
/* zstd can expand one byte into ~32K (an RLE block is 4 bytes for 128
 * KiB), so a 57 KB file can ask for 1.9 GB and seconds of work. What ntop
 * writes compresses 2-10x (block_sched, dmat records: clocks and
 * addresses); only maps that are almost all zeros (counts of threads that
 * saved nothing) go past 1000x, and those stay small. So the frames of one
 * file that promise more than RESULT_MAX_RATIO times their size may
 * together inflate to RESULT_MAX_INFLATED at most: anything beyond is
 * refused before a byte is allocated or decompressed. */
#define RESULT_MAX_RATIO 8192ull
#define RESULT_MAX_INFLATED (256ull << 20)

/* ---- writing ---- */

void result_put_u32(struct strbuf *sb, uint32_t v)
{
	uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
	strbuf_append(sb, (const char *)b, 4);
}

static void put_u64(struct strbuf *sb, uint64_t v)
{
	result_put_u32(sb, (uint32_t)v);
	result_put_u32(sb, (uint32_t)(v >> 32));
}

void result_put_str(struct strbuf *sb, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	result_put_u32(sb, (uint32_t)n);
	strbuf_append(sb, s ? s : "", n);
}

static int write_all(int fd, const void *buf, size_t n, char **cause)
{
	if (fdio_write_all(fd, buf, n) < 0)
		return cause_set(cause, "write: %s", errno ? strerror(errno) : "short write");
	return 0;
}

static int pwrite_u64(int fd, uint64_t v, uint64_t off, char **cause)
{
	uint8_t b[8];
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	if (pwrite(fd, b, 8, (off_t)off) != 8)
		return cause_set(cause, "pwrite: %s", strerror(errno));
	return 0;
}

/* Flushes a strbuf to fd and empties it; tracks the file offset. */
static int flush_sb(int fd, struct strbuf *sb, uint64_t *off, char **cause)
{
	if (sb->failed)
		return cause_set(cause, "out of memory");
	if (write_all(fd, sb->data, sb->len, cause) < 0)
		return -1;
	*off += sb->len;
	sb->len = 0;
	return 0;
}

/* Units per block of a map (engine.h): threads, or warps of a thread block. */
static uint64_t map_units_per_block(const struct result *r, const struct result_map *m)
{
	return result_units_per_block(r, &m->map);
}

/* Units with records: all of them, or those of the sampled blocks; 0 with
 * *bad set when a sampled map's units are not whole blocks. */
static uint64_t map_rec_units(const struct result *r, const struct result_map *m, int *bad)
{
	if (!m->sample_shift)
		return m->units;
	uint64_t upb = map_units_per_block(r, m);
	if (m->sample_shift > 31 || upb == 0 || m->units % upb) {
		*bad = 1;
		return 0;
	}
	uint64_t blocks = m->units / upb, s = m->sample_shift;
	return ((blocks >> s) + ((blocks & ((1ull << s) - 1)) != 0)) * upb;
}

/* Bytes of records a map holds; 0 with *bad set on overflow. */
static uint64_t map_records_bytes(const struct result *r, const struct result_map *m, int *bad)
{
	uint64_t per = (uint64_t)m->stored * m->map.rec_size;
	uint64_t units = map_rec_units(r, m, bad);
	if (per && units > UINT64_MAX / per) {
		*bad = 1;
		return 0;
	}
	return per * units;
}

/* Counts a map writes: every unit's, or the kept units' (counts_kept_only). */
static uint64_t map_counts_n(const struct result *r, const struct result_map *m, int *bad)
{
	return m->counts_kept_only ? map_rec_units(r, m, bad) : m->units;
}

static void put_desc(struct strbuf *sb, const struct result_map *m, uint64_t counts_n, uint64_t rec_bytes)
{
	size_t start = sb->len;
	result_put_u32(sb, 0); /* desc_bytes, patched below */
	result_put_u32(sb, (uint32_t)m->map.level);
	result_put_u32(sb, m->map.cap);
	result_put_u32(sb, m->map.rec_size);
	result_put_u32(sb, (uint32_t)m->map.n_fields);
	result_put_u32(sb, (m->slot_major ? RESULT_MAP_SLOT_MAJOR : 0) | (m->counts_kept_only ? RESULT_MAP_KEPT_COUNTS : 0) |
			    (m->sample_shift && m->sample_prefix ? RESULT_MAP_PREFIX : 0) |
			    m->sample_shift << RESULT_MAP_SHIFT_AT);
	put_u64(sb, m->units);
	put_u64(sb, counts_n * 4);
	put_u64(sb, rec_bytes);
	put_u64(sb, 0); /* frame_bytes, patched after compression */
	result_put_str(sb, m->map.name);
	for (int i = 0; i < m->map.n_fields; i++) {
		result_put_str(sb, m->map.fields[i].name);
		result_put_u32(sb, (uint32_t)m->map.fields[i].type);
		result_put_u32(sb, m->map.fields[i].offset);
	}
	if (!sb->failed) {
		uint32_t n = (uint32_t)(sb->len - start);
		for (int i = 0; i < 4; i++)
			sb->data[start + (size_t)i] = (char)(n >> (8 * i));
	}
}

/* Streams counts then records through one zstd frame into fd. */
static int write_frame(int fd, ZSTD_CCtx *cc, const struct result_map *m, uint64_t counts_n, uint64_t rec_bytes,
		       uint64_t *frame_bytes, char **cause)
{
	static uint8_t none;
	uint8_t out[1 << 16];
	ZSTD_inBuffer parts[2] = {
		{m->counts ? (const void *)m->counts : &none, counts_n * 4, 0},
		{m->records ? (const void *)m->records : &none, rec_bytes, 0},
	};
	ZSTD_CCtx_reset(cc, ZSTD_reset_session_only);
	ZSTD_CCtx_setPledgedSrcSize(cc, counts_n * 4 + rec_bytes);
	*frame_bytes = 0;
	for (int k = 0; k < 2; k++) {
		ZSTD_EndDirective mode = k == 1 ? ZSTD_e_end : ZSTD_e_continue;
		size_t left;
		do {
			ZSTD_outBuffer o = {out, sizeof out, 0};
			left = ZSTD_compressStream2(cc, &o, &parts[k], mode);
			if (ZSTD_isError(left))
				return cause_set(cause, "zstd: %s", ZSTD_getErrorName(left));
			if (write_all(fd, out, o.pos, cause) < 0)
				return -1;
			*frame_bytes += o.pos;
		} while (mode == ZSTD_e_end ? left != 0 : parts[k].pos < parts[k].size);
	}
	return 0;
}

/* Records counts[i] stands for: min(count, cap * rec_size) / rec_size. */
static uint64_t map_unit_records(const struct result_map *m, uint64_t i)
{
	uint64_t cap_bytes = (uint64_t)m->map.cap * m->map.rec_size;
	return (m->counts[i] < cap_bytes ? m->counts[i] : cap_bytes) / m->map.rec_size;
}

/* The passes over every unit below run on maps of tens of millions of
 * units (the hook's writer makes three per probed launch), so they divide
 * neither per unit nor per sampling check: records by a shift when the
 * record size is a power of two, and units walked in runs that are all
 * kept or all not. */
struct unit_walk {
	const struct result_map *m;
	int shift;          /* log2(rec_size), -1 when it is no power of two */
	uint64_t u, end;    /* the current run [u, end) */
	int kept;
};

static void walk_init(struct unit_walk *w, const struct result_map *m)
{
	uint32_t rs = m->map.rec_size;
	w->m = m;
	w->shift = rs && !(rs & (rs - 1)) ? __builtin_ctz(rs) : -1;
	w->u = w->end = 0;
}

/* The next run of units, 0 at the end: a kept block, or the blocks up to
 * the next kept one. */
static int walk_next(struct unit_walk *w)
{
	const struct result_map *m = w->m;
	w->u = w->end;
	if (w->u >= m->units)
		return 0;
	if (!m->sample_shift || !m->units_per_block) {
		w->kept = 1;
		w->end = m->units;
		return 1;
	}
	if (m->sample_prefix) { /* the kept units, then the rest */
		w->kept = w->u < m->rec_units;
		w->end = w->kept ? m->rec_units : m->units;
		return 1;
	}
	uint64_t b = w->u / m->units_per_block, mask = (1ull << m->sample_shift) - 1;
	w->kept = !(b & mask);
	uint64_t next = w->kept ? b + 1 : (b | mask) + 1; /* the run's end, in blocks */
	w->end = next >= (m->units - 1) / m->units_per_block + 1 ? m->units : next * m->units_per_block;
	return 1;
}

static uint64_t walk_records(const struct unit_walk *w, uint64_t bytes)
{
	return w->shift >= 0 ? bytes >> w->shift : bytes / w->m->map.rec_size;
}

/* The map's first unit with records holding more than `stored` (units
 * when none): what the reader would refuse and result_map_record not find.
 * An index into counts[]: a kept unit's with counts_kept_only. */
static uint64_t map_unit_past_stored(const struct result_map *m)
{
	uint64_t limit = (uint64_t)m->stored * m->map.rec_size + m->map.rec_size;
	if (m->stored >= m->map.cap)
		return m->units; /* min(count, cap * rec_size) never exceeds it */
	if (m->counts_kept_only) {
		for (uint64_t i = 0; i < m->rec_units; i++)
			if (m->counts[i] >= limit)
				return i;
		return m->units;
	}
	struct unit_walk w;
	walk_init(&w, m);
	while (walk_next(&w))
		for (uint64_t u = w.u; w.kept && u < w.end; u++)
			if (m->counts[u] >= limit)
				return u;
	return m->units;
}

static int result_check_for_write(const struct result *r, char **cause)
{
	if (r->n_maps < 0 || (uint32_t)r->n_maps > RESULT_MAX_MAPS || (r->n_maps && !r->maps))
		return cause_set(cause, "bad map count %d", r->n_maps);
	for (int i = 0; i < r->n_maps; i++) {
		const struct result_map *m = &r->maps[i];
		int bad = 0;
		uint64_t rb = map_records_bytes(r, m, &bad);
		if (bad || m->units > UINT64_MAX / 4 || m->map.rec_size == 0 || m->stored > m->map.cap ||
		    m->map.n_fields < 0 || m->map.n_fields > PROBE_MAX_FIELDS || (m->counts_kept_only && !m->sample_shift))
			return cause_set(cause, "map %d (%s): bad sizes", i, m->map.name);
		if ((m->units && !m->counts) || (rb && !m->records))
			return cause_set(cause, "map %d (%s): no data", i, m->map.name);
		struct result_map v = *m; /* units_per_block and rec_units as the reader derives them */
		v.units_per_block = map_units_per_block(r, m);
		v.rec_units = map_rec_units(r, m, &bad);
		uint64_t u = bad ? 0 : map_unit_past_stored(&v);
		if (u < m->units)
			return cause_set(cause, "map %d (%s): unit %llu holds more records (%llu) than are stored (%u)",
					 i, m->map.name, (unsigned long long)(m->counts_kept_only ? result_map_unit_at(&v, u) : u),
					 (unsigned long long)map_unit_records(m, u), m->stored);
	}
	return 0;
}

static int result_warp_other(const struct result *r)
{
	return r->warp_size && r->warp_size != 32;
}

/* A site table goes out when there is one, or regions to name. */
static int result_has_sites(const struct result *r)
{
	return r->sites.n > 0 || r->sites.n_regions > 0;
}

static uint32_t result_file_version(const struct result *r)
{
	uint32_t v = 1;
	for (int i = 0; i < r->n_maps; i++)
		if (r->maps[i].sample_shift && r->maps[i].sample_prefix)
			return 7;
	if (result_has_sites(r))
		return 6;
	if (result_warp_other(r))
		return 5;
	for (int i = 0; i < r->n_maps; i++)
		if (r->maps[i].stored < r->maps[i].map.cap)
			return 4;
	for (int i = 0; i < r->n_maps; i++) {
		if (r->maps[i].sample_shift)
			return 3;
		if (r->maps[i].slot_major)
			v = 2;
	}
	return v;
}

static void put_header(struct strbuf *sb, const struct result *r)
{
	uint32_t version = result_file_version(r);
	strbuf_append(sb, RESULT_MAGIC, 8); /* includes the NUL */
	result_put_u32(sb, version);
	/* version 5 appends the warp size to the fixed header */
	result_put_u32(sb, RESULT_HEADER_BYTES + (version >= 5 ? 4u : 0u));
	put_u64(sb, 0); /* file_bytes, patched at the end */
	result_put_u32(sb, r->pid);
	result_put_u32(sb, r->kernel_id);
	put_u64(sb, r->seq);
	for (int i = 0; i < 3; i++)
		result_put_u32(sb, r->grid[i]);
	for (int i = 0; i < 3; i++)
		result_put_u32(sb, r->block[i]);
	result_put_u32(sb, r->smem);
	result_put_u32(sb, r->device_sms);
	result_put_u32(sb, r->device_cc);
	result_put_u32(sb, r->sm_clock_khz);
	put_u64(sb, r->wall_ns);
	put_u64(sb, r->duration_ns);
	result_put_u32(sb, (uint32_t)r->n_maps);
	result_put_u32(sb, result_has_sites(r) ? 1u : 0u); /* flags: bit 0, a site table follows the strings */
	if (version >= 5)
		result_put_u32(sb, r->warp_size ? r->warp_size : 32);
	result_put_str(sb, r->kernel);
	result_put_str(sb, r->probes);
	if (result_has_sites(r))
		result_put_sites(sb, &r->sites);
}

static int result_write_body(int fd, const struct result *r, char **cause)
{
	struct strbuf sb;
	strbuf_init(&sb);
	uint64_t off = 0;
	int rc = -1;
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	if (!cc) {
		cause_set(cause, "out of memory");
		goto out;
	}
	ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, 1);
	ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
	put_header(&sb, r);
	if (flush_sb(fd, &sb, &off, cause) < 0)
		goto out;
	for (int i = 0; i < r->n_maps; i++) {
		const struct result_map *m = &r->maps[i];
		int bad = 0;
		uint64_t rb = map_records_bytes(r, m, &bad), cn = map_counts_n(r, m, &bad);
		put_desc(&sb, m, cn, rb);
		uint64_t frame_off = off + 48, frame_bytes = 0;
		if (flush_sb(fd, &sb, &off, cause) < 0 ||
		    write_frame(fd, cc, m, cn, rb, &frame_bytes, cause) < 0 ||
		    pwrite_u64(fd, frame_bytes, frame_off, cause) < 0)
			goto out;
		off += frame_bytes;
	}
	if (pwrite_u64(fd, off, RESULT_OFF_FILE_BYTES, cause) < 0)
		goto out;
	rc = 0;
out:
	ZSTD_freeCCtx(cc);
	strbuf_done(&sb);
	return rc;
}

int result_write_at(int dfd, const char *name, const struct result *r, char **cause)
{
	if (result_check_for_write(r, cause) < 0)
		return -1;
	char tmp[256];
	int fd = safefs_tmp(dfd, name, tmp, sizeof tmp), rc = -1;
	if (fd < 0)
		return cause_set(cause, "%s: cannot create a temporary: %s", name, strerror(errno));
	if (result_write_body(fd, r, cause) < 0) {
		cause_wrap(cause, "%s", name);
		goto out;
	}
	int cfd = fd;
	fd = -1;
	if (close(cfd) < 0) {
		cause_set(cause, "%s: close: %s", name, strerror(errno));
		goto out;
	}
	/* renameat replaces whatever sits at `name` (a planted link too)
	 * without following it */
	if (renameat(dfd, tmp, dfd, name) < 0) {
		cause_set(cause, "%s: rename: %s", name, strerror(errno));
		goto out;
	}
	/* No fsync: the rename makes the file appear whole or not at all, which
	 * is what survives the app being killed; syncing each of hundreds of
	 * result files made the writer fall behind a fast app (a process that
	 * ends with _exit() loses what is still queued). */
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	if (rc < 0)
		unlinkat(dfd, tmp, 0);
	return rc;
}

int result_write(const char *dir, const char *name, const struct result *r, char **cause)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return cause_set(cause, "%s: %s", dir, strerror(errno));
	int rc = result_write_at(dfd, name, r, cause);
	close(dfd);
	if (rc < 0)
		cause_wrap(cause, "%s", dir);
	return rc;
}

/* ---- reading (shared with result_stream.c through result_parse.h) ---- */

#define RESULT_WIN_MIN 65536u /* bytes pread at once while parsing a file */

void result_rd_done(struct result_rd *r)
{
	free(r->win);
	r->win = NULL;
}

static int rd_need(struct result_rd *r, uint64_t n, const char *what)
{
	if (r->failed)
		return -1;
	r->failed = n > r->len - r->off;
	if (r->failed)
		return cause_set(r->cause, "truncated at byte %llu: %s needs %llu bytes, %llu left",
				 (unsigned long long)r->off, what, (unsigned long long)n,
				 (unsigned long long)(r->len - r->off));
	return 0;
}

/* Fills the window with [off, off + max(n, RESULT_WIN_MIN)) clipped to the file. */
static int rd_fill(struct result_rd *r, uint64_t n)
{
	uint64_t want = n > RESULT_WIN_MIN ? n : RESULT_WIN_MIN;
	if (want > r->len - r->off)
		want = r->len - r->off;
	if (want > r->win_cap) {
		uint8_t *w = realloc(r->win, (size_t)want);
		if (!w)
			return cause_set(r->cause, "out of memory");
		r->win = w;
		r->win_cap = (size_t)want;
	}
	uint64_t got = 0;
	while (got < want) {
		ssize_t k = pread(r->fd, r->win + got, (size_t)(want - got), (off_t)(r->off + got));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return cause_set(r->cause, "byte %llu: %s", (unsigned long long)(r->off + got),
					 k < 0 ? strerror(errno) : "file shrank while read");
		got += (uint64_t)k;
	}
	r->win_off = r->off;
	r->win_len = want;
	return 0;
}

const uint8_t *result_rd_at(struct result_rd *r, uint64_t n, const char *what)
{
	if (rd_need(r, n, what) < 0)
		return NULL;
	if (r->p)
		return r->p + r->off;
	if (r->off < r->win_off || n > r->win_off + r->win_len - r->off) {
		if (rd_fill(r, n) < 0) {
			r->failed = 1;
			return NULL;
		}
	}
	return r->win + (r->off - r->win_off);
}

int result_rd_u32(struct result_rd *r, uint32_t *v, const char *what)
{
	const uint8_t *b = result_rd_at(r, 4, what);
	if (!b)
		return -1;
	*v = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
	r->off += 4;
	return 0;
}

static int rd_u64(struct result_rd *r, uint64_t *v, const char *what)
{
	uint32_t lo = 0, hi = 0;
	if (result_rd_u32(r, &lo, what) < 0 || result_rd_u32(r, &hi, what) < 0)
		return -1;
	*v = (uint64_t)hi << 32 | lo;
	return 0;
}

/* Reads a length-prefixed string into a malloc'd C string (no NULs inside). */
int result_rd_str(struct result_rd *r, char **out, const char *what)
{
	uint32_t n = 0;
	if (result_rd_u32(r, &n, what) < 0)
		return -1;
	if (n > RESULT_MAX_STR)
		return cause_set(r->cause, "byte %llu: %s length %u is implausible",
				 (unsigned long long)r->off - 4, what, n);
	const uint8_t *b = result_rd_at(r, n, what);
	if (!b)
		return -1;
	if (memchr(b, 0, n))
		return cause_set(r->cause, "byte %llu: %s contains a NUL byte", (unsigned long long)r->off, what);
	char *s = malloc((size_t)n + 1);
	if (!s)
		return cause_set(r->cause, "out of memory");
	memcpy(s, b, n);
	s[n] = 0;
	r->off += n;
	*out = s;
	return 0;
}

static int rd_name(struct result_rd *r, char *dst, size_t cap, const char *what)
{
	char *s = NULL;
	if (result_rd_str(r, &s, what) < 0)
		return -1;
	if (strlen(s) >= cap) {
		free(s);
		return cause_set(r->cause, "byte %llu: %s longer than %zu bytes",
				 (unsigned long long)r->off, what, cap - 1);
	}
	strcpy(dst, s);
	free(s);
	return 0;
}

int result_rd_header(struct result_rd *r, struct result *res, uint32_t *n_maps)
{
	uint32_t version = 0, hdr = 0;
	uint64_t file_bytes = 0;
	r->off = 0;
	const uint8_t *magic = r->len >= 16 ? result_rd_at(r, 16, "magic") : NULL;
	if (r->len >= 16 && !magic)
		return -1;
	if (!magic || memcmp(magic, RESULT_MAGIC, 8) != 0)
		return cause_set(r->cause, "not an ntop result file (bad magic)");
	r->off = 8;
	result_rd_u32(r, &version, "version");
	if (version < 1 || version > RESULT_VERSION)
		return cause_set(r->cause, "result format version %u, this ntop reads versions 1 to %u",
				 version, RESULT_VERSION);
	res->version = version;
	result_rd_u32(r, &hdr, "header size");
	if (hdr < RESULT_HEADER_BYTES || hdr > r->len)
		return cause_set(r->cause, "header size %u out of range (file has %llu bytes)",
				 hdr, (unsigned long long)r->len);
	if (rd_u64(r, &file_bytes, "file size") < 0)
		return -1;
	if (file_bytes != r->len)
		return cause_set(r->cause, "file has %llu bytes, header says %llu (%s)",
				 (unsigned long long)r->len, (unsigned long long)file_bytes,
				 file_bytes > r->len ? "truncated" : "trailing bytes");
	uint32_t flags = 0;
	result_rd_u32(r, &res->pid, "pid");
	result_rd_u32(r, &res->kernel_id, "kernel id");
	rd_u64(r, &res->seq, "seq");
	for (int i = 0; i < 3; i++)
		result_rd_u32(r, &res->grid[i], "grid");
	for (int i = 0; i < 3; i++)
		result_rd_u32(r, &res->block[i], "block");
	result_rd_u32(r, &res->smem, "smem");
	result_rd_u32(r, &res->device_sms, "device sms");
	result_rd_u32(r, &res->device_cc, "device cc");
	result_rd_u32(r, &res->sm_clock_khz, "clock");
	rd_u64(r, &res->wall_ns, "wall time");
	rd_u64(r, &res->duration_ns, "duration");
	result_rd_u32(r, n_maps, "map count");
	if (result_rd_u32(r, &flags, "flags") < 0)
		return -1;
	if (*n_maps > RESULT_MAX_MAPS)
		return cause_set(r->cause, "map count %u is implausible", *n_maps);
	res->warp_size = 32;
	if (version >= 5) {
		if (hdr < RESULT_HEADER_BYTES + 4)
			return cause_set(r->cause, "version %u header of %u bytes has no warp size", version, hdr);
		if (result_rd_u32(r, &res->warp_size, "warp size") < 0)
			return -1;
		if (res->warp_size != 32 && res->warp_size != 64)
			return cause_set(r->cause, "warp size %u (32 or 64 expected)", res->warp_size);
	}
	if (flags & ~1u)
		return cause_set(r->cause, "header flags %#x: unknown bits", flags);
	if ((flags & 1) && version < 6)
		return cause_set(r->cause, "version %u file with a site table (version 6 has them)", version);
	r->off = hdr;
	if (result_rd_str(r, &res->kernel, "kernel name") < 0 || result_rd_str(r, &res->probes, "probe names") < 0)
		return -1;
	return (flags & 1) ? result_rd_sites(r, &res->sites) : 0;
}

static int rd_fields(struct result_rd *r, struct probe_map *m)
{
	for (int i = 0; i < m->n_fields; i++) {
		struct probe_field *f = &m->fields[i];
		uint32_t type = 0, off = 0;
		if (rd_name(r, f->name, sizeof f->name, "field name") < 0 ||
		    result_rd_u32(r, &type, "field type") < 0 || result_rd_u32(r, &off, "field offset") < 0)
			return -1;
		if (type != PROBE_U32 && type != PROBE_U64)
			return cause_set(r->cause, "map %s: field %s has type %u", m->name, f->name, type);
		if ((uint64_t)off + type > m->rec_size)
			return cause_set(r->cause, "map %s: field %s at %u+%u outside a %u-byte record",
					 m->name, f->name, off, type, m->rec_size);
		f->type = (enum probe_type)type;
		f->offset = off;
	}
	return 0;
}

/* Version 4: the record bytes say how many slots per unit were stored; they
 * must be whole slots of every unit with records, at most cap of them. A
 * map without units stores nothing (0). */
static int rd_slots_stored(struct result_rd *r, struct result_map *m, const struct result_rd_desc *d)
{
	uint64_t per_slot = m->rec_units * m->map.rec_size;
	if (m->rec_units && per_slot / m->rec_units != m->map.rec_size)
		return cause_set(r->cause, "map %s: size overflow", m->map.name);
	uint64_t slots = per_slot ? d->records_bytes / per_slot : 0;
	if ((per_slot ? d->records_bytes % per_slot : d->records_bytes) != 0)
		return cause_set(r->cause, "map %s: %llu record bytes are not whole slots of %llu units of %u bytes",
				 m->map.name, (unsigned long long)d->records_bytes, (unsigned long long)m->rec_units,
				 m->map.rec_size);
	if (slots > m->map.cap)
		return cause_set(r->cause, "map %s: %llu record bytes store %llu slots per unit, more than its cap %u",
				 m->map.name, (unsigned long long)d->records_bytes, (unsigned long long)slots, m->map.cap);
	m->stored = (uint32_t)slots;
	return 0;
}

int result_rd_descriptor(struct result_rd *r, const struct result *res, struct result_map *m,
			 struct result_rd_desc *d)
{
	uint64_t start = r->off;
	uint32_t desc_bytes = 0, level = 0, n_fields = 0, flags = 0;
	result_rd_u32(r, &desc_bytes, "descriptor size");
	result_rd_u32(r, &level, "map level");
	result_rd_u32(r, &m->map.cap, "map cap");
	result_rd_u32(r, &m->map.rec_size, "record size");
	result_rd_u32(r, &n_fields, "field count");
	result_rd_u32(r, &flags, "map flags"); /* 0 in files written before the flag */
	rd_u64(r, &m->units, "units");
	rd_u64(r, &d->counts_bytes, "counts size");
	rd_u64(r, &d->records_bytes, "records size");
	if (rd_u64(r, &d->frame_bytes, "frame size") < 0)
		return -1;
	if (level != PROBE_LEVEL_THREAD && level != PROBE_LEVEL_WARP && level != PROBE_LEVEL_BLOCK)
		return cause_set(r->cause, "byte %llu: map level %u unknown", (unsigned long long)start, level);
	if (m->map.rec_size == 0 || n_fields > PROBE_MAX_FIELDS)
		return cause_set(r->cause, "byte %llu: bad record size %u or field count %u",
				 (unsigned long long)start, m->map.rec_size, n_fields);
	/* an unknown bit may be a layout this reader would draw as garbage */
	if (flags & ~(RESULT_MAP_SLOT_MAJOR | RESULT_MAP_KEPT_COUNTS | RESULT_MAP_PREFIX | RESULT_MAP_SHIFT_MASK))
		return cause_set(r->cause, "byte %llu: map flags 0x%x unknown", (unsigned long long)start, flags);
	m->sample_prefix = (flags & RESULT_MAP_PREFIX) != 0;
	m->slot_major = (flags & RESULT_MAP_SLOT_MAJOR) != 0;
	m->sample_shift = (flags & RESULT_MAP_SHIFT_MASK) >> RESULT_MAP_SHIFT_AT;
	m->counts_kept_only = (flags & RESULT_MAP_KEPT_COUNTS) != 0;
	if ((m->counts_kept_only || m->sample_prefix) && !m->sample_shift)
		return cause_set(r->cause, "byte %llu: kept units' counts or first blocks in a map that is not sampled",
				 (unsigned long long)start);
	m->map.level = (enum probe_level)level;
	m->map.n_fields = (int)n_fields;
	if (rd_name(r, m->map.name, sizeof m->map.name, "map name") < 0 || rd_fields(r, &m->map) < 0)
		return -1;
	if (desc_bytes < r->off - start || desc_bytes > r->len - start)
		return cause_set(r->cause, "map %s: descriptor size %u out of range", m->map.name, desc_bytes);
	r->off = start + desc_bytes;
	int bad = 0;
	m->units_per_block = map_units_per_block(res, m);
	m->rec_units = map_rec_units(res, m, &bad);
	m->stored = m->map.cap; /* before version 4: every slot */
	if (!bad && res->version >= 4 && rd_slots_stored(r, m, d) < 0)
		return -1;
	uint64_t want = map_records_bytes(res, m, &bad), counts_n = map_counts_n(res, m, &bad);
	if (bad || m->units > UINT64_MAX / 4 || d->counts_bytes != counts_n * 4 || d->records_bytes != want)
		return cause_set(r->cause, "map %s: sizes disagree (units %llu, counts %llu, records %llu)",
				 m->map.name, (unsigned long long)m->units,
				 (unsigned long long)d->counts_bytes, (unsigned long long)d->records_bytes);
	return rd_need(r, d->frame_bytes, "map data");
}

int result_rd_frame_head(struct result_rd *r, const struct result_map *m, const struct result_rd_desc *d,
			 const uint8_t *head, size_t head_len)
{
	if (d->counts_bytes > UINT64_MAX - d->records_bytes)
		return cause_set(r->cause, "map %s: size overflow", m->map.name);
	uint64_t total = d->counts_bytes + d->records_bytes;
	unsigned long long declared = ZSTD_getFrameContentSize(head, head_len);
	if (declared == ZSTD_CONTENTSIZE_ERROR || declared == ZSTD_CONTENTSIZE_UNKNOWN)
		return cause_set(r->cause, "map %s: data is not a zstd frame with a size", m->map.name);
	if (declared != total)
		return cause_set(r->cause, "map %s: frame holds %llu bytes, descriptor says %llu",
				 m->map.name, declared, (unsigned long long)total);
	if (total / RESULT_MAX_RATIO > d->frame_bytes + 1) {
		r->inflated += total;
		if (r->inflated > RESULT_MAX_INFLATED)
			return cause_set(r->cause, "map %s: a %llu-byte frame would inflate to %llu bytes (over %llux "
					 "and %llu MiB in this file): refused as a decompression bomb", m->map.name,
					 (unsigned long long)d->frame_bytes, (unsigned long long)total, RESULT_MAX_RATIO,
					 RESULT_MAX_INFLATED >> 20);
	}
	return 0;
}

/* Decompresses one frame into counts then records, exactly as declared. */
static int rd_frame(struct result_rd *r, struct result_map *m, const struct result_rd_desc *d)
{
	const uint8_t *src = r->p + r->off;
	size_t n = (size_t)d->frame_bytes;
	if (result_rd_frame_head(r, m, d, src, n) < 0)
		return -1;
	if (ZSTD_findFrameCompressedSize(src, n) != n)
		return cause_set(r->cause, "map %s: frame does not fill its %zu bytes", m->map.name, n);
	uint64_t total = d->counts_bytes + d->records_bytes;
	m->counts = malloc(d->counts_bytes ? (size_t)d->counts_bytes : 1);
	m->records = malloc(d->records_bytes ? (size_t)d->records_bytes : 1);
	if (!m->counts || !m->records)
		return cause_set(r->cause, "map %s: out of memory for %llu bytes", m->map.name,
				 (unsigned long long)total);
	ZSTD_DCtx *dc = ZSTD_createDCtx();
	if (!dc)
		return cause_set(r->cause, "out of memory");
	uint8_t dummy;
	ZSTD_outBuffer outs[3] = {{m->counts, (size_t)d->counts_bytes, 0},
				  {m->records, (size_t)d->records_bytes, 0}, {&dummy, 0, 0}};
	ZSTD_inBuffer in = {src, n, 0};
	int k = 0, rc = 0;
	for (;;) {
		while (k < 2 && outs[k].pos == outs[k].size)
			k++;
		size_t in0 = in.pos, out0 = outs[k].pos;
		size_t ret = ZSTD_decompressStream(dc, &outs[k], &in);
		if (ZSTD_isError(ret)) {
			rc = cause_set(r->cause, "map %s: zstd: %s", m->map.name, ZSTD_getErrorName(ret));
			break;
		}
		if (ret == 0)
			break;
		if (in.pos == in0 && outs[k].pos == out0) {
			rc = cause_set(r->cause, "map %s: frame ends early or holds more than declared", m->map.name);
			break;
		}
	}
	ZSTD_freeDCtx(dc);
	if (rc == 0 && (outs[0].pos != outs[0].size || outs[1].pos != outs[1].size || in.pos != n))
		rc = cause_set(r->cause, "map %s: frame size mismatch", m->map.name);
	r->off += n;
	return rc;
}

/* A file's kept-only counts spread over every unit (0 for the blocks not
 * kept), so readers index counts[] by unit as always. */
static int rd_spread_counts(struct result_rd *r, struct result_map *m)
{
	uint32_t *all = calloc(m->units ? (size_t)m->units : 1, 4);
	if (!all)
		return cause_set(r->cause, "map %s: out of memory for %llu counts", m->map.name,
				 (unsigned long long)m->units);
	for (uint64_t i = 0; i < m->rec_units; i++)
		all[result_map_unit_at(m, i)] = m->counts[i];
	free(m->counts);
	m->counts = all;
	m->counts_kept_only = 0;
	m->unsampled_unknown = 1;
	return 0;
}

int result_rd_counts(struct result_rd *r, struct result_map *m)
{
	if (m->counts_kept_only && rd_spread_counts(r, m) < 0)
		return -1;
	uint64_t u = map_unit_past_stored(m);
	if (u < m->units)
		return cause_set(r->cause, "map %s: unit %llu holds more records (%llu) than the file stores per unit (%u)",
				 m->map.name, (unsigned long long)u, (unsigned long long)map_unit_records(m, u),
				 m->stored);
	result_map_derive_counts(m);
	return 0;
}

uint32_t result_map_most_records(const struct result_map *m)
{
	uint64_t cap_bytes = (uint64_t)m->map.cap * m->map.rec_size, most = 0;
	struct unit_walk w;
	walk_init(&w, m);
	for (uint64_t i = 0; m->counts_kept_only && i < m->rec_units; i++)
		if (m->counts[i] > most)
			most = m->counts[i];
	while (!m->counts_kept_only && walk_next(&w))
		for (uint64_t u = w.u; w.kept && u < w.end; u++)
			if (m->counts[u] > most)
				most = m->counts[u];
	return (uint32_t)walk_records(&w, most < cap_bytes ? most : cap_bytes);
}

void result_map_derive_counts(struct result_map *m)
{
	uint64_t cap_bytes = (uint64_t)m->map.cap * m->map.rec_size, attempted = 0, written = 0, unsampled = 0;
	struct unit_walk w;
	walk_init(&w, m);
	for (uint64_t i = 0; m->counts_kept_only && i < m->rec_units; i++) {
		attempted += walk_records(&w, m->counts[i]);
		written += walk_records(&w, m->counts[i] < cap_bytes ? m->counts[i] : cap_bytes);
	}
	while (!m->counts_kept_only && walk_next(&w)) {
		for (uint64_t u = w.u; !w.kept && u < w.end; u++)
			unsampled += walk_records(&w, m->counts[u]);
		for (uint64_t u = w.u; w.kept && u < w.end; u++) {
			uint64_t c = m->counts[u];
			attempted += walk_records(&w, c);
			written += walk_records(&w, c < cap_bytes ? c : cap_bytes);
		}
	}
	m->records_written = written;
	m->records_dropped = attempted - written;
	m->records_unsampled = unsampled;
}

static int result_parse(const uint8_t *buf, uint64_t len, struct result *res, char **cause)
{
	struct result_rd r = {.p = buf, .fd = -1, .len = len, .cause = cause};
	uint32_t n_maps = 0;
	if (result_rd_header(&r, res, &n_maps) < 0)
		return -1;
	res->maps = calloc(n_maps ? n_maps : 1, sizeof *res->maps);
	if (!res->maps)
		return cause_set(cause, "out of memory");
	for (uint32_t i = 0; i < n_maps; i++) {
		struct result_map *m = &res->maps[i];
		struct result_rd_desc d = {0, 0, 0};
		res->n_maps = (int)i + 1; /* so result_free releases partial maps */
		if (result_rd_descriptor(&r, res, m, &d) < 0 || rd_frame(&r, m, &d) < 0 || result_rd_counts(&r, m) < 0)
			return -1;
	}
	if (r.off != len)
		return cause_set(cause, "%llu unexpected bytes after the last map",
				 (unsigned long long)(len - r.off));
	return 0;
}

static int result_slurp(const char *path, uint8_t **buf, uint64_t *len, char **cause)
{
	int fd = trace_file_open(AT_FDCWD, path, cause);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return cause_set(cause, "%s", strerror(errno));
	}
	uint64_t n = (uint64_t)st.st_size, got = 0;
	uint8_t *b = malloc(n ? (size_t)n : 1);
	if (!b) {
		close(fd);
		return cause_set(cause, "out of memory for %llu bytes", (unsigned long long)n);
	}
	while (got < n) {
		ssize_t k = read(fd, b + got, (size_t)(n - got));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		got += (uint64_t)k;
	}
	close(fd);
	*buf = b;
	*len = got; /* a file that shrank while read is checked as the shorter file */
	return 0;
}

int result_read_mem(const void *buf, size_t len, struct result **out, char **cause)
{
	*out = NULL;
	struct result *res = calloc(1, sizeof *res);
	if (!res)
		return cause_set(cause, "out of memory");
	if (result_parse(buf, len, res, cause) < 0) {
		result_free(res);
		return -1;
	}
	*out = res;
	return 0;
}

int result_read(const char *path, struct result **out, char **cause)
{
	*out = NULL;
	uint8_t *buf = NULL;
	uint64_t len = 0;
	if (result_slurp(path, &buf, &len, cause) < 0)
		return cause_wrap(cause, "%s", path);
	int rc = result_read_mem(buf, (size_t)len, out, cause);
	free(buf);
	return rc < 0 ? cause_wrap(cause, "%s", path) : 0;
}

void result_free(struct result *r)
{
	if (!r)
		return;
	for (int i = 0; i < r->n_maps; i++) {
		free(r->maps[i].counts);
		free(r->maps[i].records);
	}
	free(r->maps);
	free(r->kernel);
	free(r->probes);
	engine_sites_done(&r->sites);
	free(r);
}
