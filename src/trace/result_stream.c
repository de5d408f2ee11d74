/* Streaming .ntr reader (result.h): header, descriptors and counts are
 * parsed by the parser result_read uses (result_parse.h) through a small
 * pread window; records are never held whole. A pass decompresses one map's
 * frame from the file with ZSTD_decompressStream, discards the counts at its
 * head and hands out the records in chunks of whole records, so a 1.6 GB
 * DMAT map is read with a few MB: the input buffer, one chunk and zstd's
 * window. The frame's trailer (checksum, exact length) is checked when a
 * pass reaches the end of the records, because only then has it been read. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "common/cause.h"
#include "trace/result.h"
#include "trace/result_parse.h"
#include "trace/trace_file.h"

#define RESULT_CHUNK_BYTES (2u << 20)   /* records handed out at once, at most */
#define RESULT_MAX_REC_BYTES (1u << 20) /* a record bigger than this is a forged size */

struct result_stream {
	int fd;
	struct result *res;        /* records NULL */
	uint64_t *frame_off;       /* [n_maps] file offset of each map's frame */
	uint64_t *frame_bytes;     /* [n_maps] */
	size_t mem;                /* heap held (counts, tables) */
};

struct result_pass {
	const struct result_stream *s;
	const struct result_map *m;
	ZSTD_DCtx *dc;
	uint8_t *in;               /* compressed bytes from the file */
	size_t in_cap;
	ZSTD_inBuffer ib;
	uint64_t file_off, file_end; /* next frame byte to read, the frame's end */
	uint8_t *out;              /* one chunk of whole records */
	size_t out_cap;
	uint64_t left;             /* record bytes still to hand out */
	uint64_t next;             /* index of the next record */
	int skipped;               /* the counts at the frame's head are behind us */
	int ended;                 /* zstd saw the frame's end (and its checksum) */
	int done;
};

/* ---- frame reading ---- */

static int pass_refill(struct result_pass *p, char **cause)
{
	size_t want = p->in_cap;
	if (want > p->file_end - p->file_off)
		want = (size_t)(p->file_end - p->file_off);
	size_t got = 0;
	while (got < want) {
		ssize_t k = pread(p->s->fd, p->in + got, want - got, (off_t)(p->file_off + got));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return cause_set(cause, "map %s: byte %llu: %s", p->m->map.name,
					 (unsigned long long)(p->file_off + got),
					 k < 0 ? strerror(errno) : "file shrank while read");
		got += (size_t)k;
	}
	p->file_off += got;
	p->ib.src = p->in;
	p->ib.size = got;
	p->ib.pos = 0;
	return 0;
}

/* Decompresses exactly n bytes of the frame's content into dst. */
static int pass_read(struct result_pass *p, void *dst, size_t n, char **cause)
{
	ZSTD_outBuffer o = {dst, n, 0};
	while (o.pos < o.size) {
		if (p->ib.pos == p->ib.size && p->file_off < p->file_end && pass_refill(p, cause) < 0)
			return -1;
		size_t in0 = p->ib.pos, out0 = o.pos;
		size_t ret = ZSTD_decompressStream(p->dc, &o, &p->ib);
		if (ZSTD_isError(ret))
			return cause_set(cause, "map %s: zstd: %s", p->m->map.name, ZSTD_getErrorName(ret));
		p->ended = ret == 0;
		if (o.pos < o.size && (ret == 0 || (p->ib.pos == in0 && o.pos == out0)))
			return cause_set(cause, "map %s: frame ends early", p->m->map.name);
	}
	return 0;
}

/* After the last declared byte: the frame must end there (checksum checked
 * by zstd) and fill its frame_bytes exactly. */
static int pass_finish(struct result_pass *p, char **cause)
{
	uint8_t dummy;
	while (!p->ended) {
		if (p->ib.pos == p->ib.size && p->file_off < p->file_end && pass_refill(p, cause) < 0)
			return -1;
		ZSTD_outBuffer o = {&dummy, 0, 0};
		size_t in0 = p->ib.pos;
		size_t ret = ZSTD_decompressStream(p->dc, &o, &p->ib);
		if (ZSTD_isError(ret))
			return cause_set(cause, "map %s: zstd: %s", p->m->map.name, ZSTD_getErrorName(ret));
		p->ended = ret == 0;
		if (!p->ended && p->ib.pos == in0)
			return cause_set(cause, "map %s: frame ends early or holds more than declared", p->m->map.name);
	}
	if (p->ib.pos != p->ib.size || p->file_off != p->file_end)
		return cause_set(cause, "map %s: frame does not fill its %llu bytes", p->m->map.name,
				 (unsigned long long)p->s->frame_bytes[p->m - p->s->res->maps]);
	return 0;
}

/* A pass positioned at the start of the map's frame. */
static int pass_new(const struct result_stream *s, int map, size_t out_cap, struct result_pass **out,
		    char **cause)
{
	*out = NULL;
	struct result_pass *p = calloc(1, sizeof *p);
	if (!p)
		return cause_set(cause, "out of memory");
	p->s = s;
	p->m = &s->res->maps[map];
	p->dc = ZSTD_createDCtx();
	p->in_cap = ZSTD_DStreamInSize();
	p->in = malloc(p->in_cap);
	p->out_cap = out_cap;
	p->out = out_cap ? malloc(out_cap) : NULL;
	if (!p->dc || !p->in || (out_cap && !p->out)) {
		result_pass_free(p);
		return cause_set(cause, "out of memory");
	}
	p->file_off = s->frame_off[map];
	p->file_end = p->file_off + s->frame_bytes[map];
	*out = p;
	return 0;
}

int result_pass_open(const struct result_stream *s, int map, struct result_pass **out, char **cause)
{
	*out = NULL;
	if (map < 0 || map >= s->res->n_maps)
		return cause_set(cause, "no map %d (the file has %d)", map, s->res->n_maps);
	const struct result_map *m = &s->res->maps[map];
	if (m->map.rec_size > RESULT_MAX_REC_BYTES)
		return cause_set(cause, "map %s: %u-byte records are implausible", m->map.name, m->map.rec_size);
	size_t chunk = RESULT_CHUNK_BYTES / m->map.rec_size * m->map.rec_size;
	uint64_t rec_bytes = result_map_rec_units(m) * m->stored * m->map.rec_size; /* checked when opened */
	if (chunk > rec_bytes)
		chunk = (size_t)rec_bytes;
	if (pass_new(s, map, chunk, out, cause) < 0)
		return -1;
	(*out)->left = rec_bytes;
	return 0;
}

int result_pass_next(struct result_pass *p, struct result_chunk *c, char **cause)
{
	if (p->done)
		return 0;
	uint8_t skip[4096];
	uint64_t counts = result_map_file_counts(p->m) * 4;
	for (uint64_t done = 0; !p->skipped && done < counts;) {
		size_t n = counts - done < sizeof skip ? (size_t)(counts - done) : sizeof skip;
		if (pass_read(p, skip, n, cause) < 0)
			return -1;
		done += n;
	}
	p->skipped = 1;
	if (p->left == 0) {
		if (pass_finish(p, cause) < 0)
			return -1;
		p->done = 1;
		return 0;
	}
	size_t n = p->left < p->out_cap ? (size_t)p->left : p->out_cap;
	if (pass_read(p, p->out, n, cause) < 0)
		return -1;
	p->left -= n;
	c->recs = p->out;
	c->first = p->next;
	c->n = n / p->m->map.rec_size;
	p->next += c->n;
	return 1;
}

size_t result_pass_mem(const struct result_pass *p)
{
	return sizeof *p + p->in_cap + p->out_cap + ZSTD_sizeof_DCtx(p->dc);
}

void result_pass_free(struct result_pass *p)
{
	if (!p)
		return;
	ZSTD_freeDCtx(p->dc);
	free(p->in);
	free(p->out);
	free(p);
}

/* ---- opening ---- */

/* The counts at the head of map i's frame, after checking the frame's header. */
static int stream_counts(struct result_stream *s, struct result_rd *r, int i, const struct result_rd_desc *d)
{
	struct result_map *m = &s->res->maps[i];
	uint64_t head_n = d->frame_bytes < RESULT_FRAME_HEAD_MAX ? d->frame_bytes : RESULT_FRAME_HEAD_MAX;
	const uint8_t *head = result_rd_at(r, head_n, "frame header");
	if (!head || result_rd_frame_head(r, m, d, head, (size_t)head_n) < 0)
		return -1;
	s->frame_off[i] = r->off;
	s->frame_bytes[i] = d->frame_bytes;
	m->counts = malloc(d->counts_bytes ? (size_t)d->counts_bytes : 1);
	if (!m->counts)
		return cause_set(r->cause, "map %s: out of memory for %llu counts", m->map.name,
				 (unsigned long long)m->units);
	s->mem += (size_t)d->counts_bytes;
	struct result_pass *p = NULL;
	if (pass_new(s, i, 0, &p, r->cause) < 0)
		return -1;
	int rc = pass_read(p, m->counts, (size_t)d->counts_bytes, r->cause);
	result_pass_free(p);
	if (rc < 0 || result_rd_counts(r, m) < 0)
		return -1;
	s->mem += (size_t)(m->units * 4 - d->counts_bytes); /* spread over every unit */
	r->off += d->frame_bytes;
	return 0;
}

static int stream_parse(struct result_stream *s, uint64_t len, char **cause)
{
	struct result_rd r = {.p = NULL, .fd = s->fd, .len = len, .cause = cause};
	struct result *res = s->res;
	uint32_t n_maps = 0;
	int rc = -1;
	if (result_rd_header(&r, res, &n_maps) < 0)
		goto out;
	res->maps = calloc(n_maps ? n_maps : 1, sizeof *res->maps);
	s->frame_off = calloc(n_maps ? n_maps : 1, sizeof *s->frame_off);
	s->frame_bytes = calloc(n_maps ? n_maps : 1, sizeof *s->frame_bytes);
	if (!res->maps || !s->frame_off || !s->frame_bytes) {
		cause_set(cause, "out of memory");
		goto out;
	}
	s->mem += n_maps * (sizeof *res->maps + 2 * sizeof(uint64_t));
	for (uint32_t i = 0; i < n_maps; i++) {
		struct result_rd_desc d = {0, 0, 0};
		res->n_maps = (int)i + 1; /* so result_free releases partial maps */
		if (result_rd_descriptor(&r, res, &res->maps[i], &d) < 0 || stream_counts(s, &r, (int)i, &d) < 0)
			goto out;
	}
	if (r.off != len) {
		cause_set(cause, "%llu unexpected bytes after the last map", (unsigned long long)(len - r.off));
		goto out;
	}
	rc = 0;
out:
	result_rd_done(&r);
	return rc;
}

int result_stream_open(const char *path, struct result_stream **out, char **cause)
{
	*out = NULL;
	struct result_stream *s = calloc(1, sizeof *s);
	if (!s)
		return cause_set(cause, "out of memory");
	s->fd = trace_file_open(AT_FDCWD, path, cause); /* a FIFO would hang the reader */
	s->res = calloc(1, sizeof *s->res);
	s->mem = sizeof *s + sizeof *s->res;
	struct stat st;
	if (s->fd < 0)
		;
	else if (fstat(s->fd, &st) < 0)
		cause_set(cause, "%s", strerror(errno));
	else if (!s->res)
		cause_set(cause, "out of memory");
	else if (stream_parse(s, (uint64_t)st.st_size, cause) == 0) {
		*out = s;
		return 0;
	}
	result_stream_close(s);
	return cause_wrap(cause, "%s", path);
}

const struct result *result_stream_result(const struct result_stream *s)
{
	return s->res;
}

size_t result_stream_mem(const struct result_stream *s)
{
	return s->mem;
}

void result_stream_close(struct result_stream *s)
{
	if (!s)
		return;
	if (s->fd >= 0)
		close(s->fd);
	result_free(s->res);
	free(s->frame_off);
	free(s->frame_bytes);
	free(s);
}

int result_read_head(const char *path, struct result **out, char **cause)
{
	*out = NULL;
	struct result_stream *s = NULL;
	if (result_stream_open(path, &s, cause) < 0)
		return -1;
	*out = s->res;
	s->res = NULL;
	result_stream_close(s);
	return 0;
}

/* ---- every record ---- */

int result_stream_each(const struct result_stream *s, int map, result_rec_fn fn, void *ctx, char **cause)
{
	struct result_pass *p = NULL;
	if (result_pass_open(s, map, &p, cause) < 0)
		return -1;
	const struct result_map *m = p->m;
	uint64_t nru = result_map_rec_units(m), stored = m->stored;
	struct result_chunk c;
	int rc;
	while ((rc = result_pass_next(p, &c, cause)) == 1) {
		/* a chunk holds records, so nru and stored are > 0 */
		uint64_t ru;
		uint32_t slot;
		if (m->slot_major) {
			slot = (uint32_t)(c.first / nru);
			ru = c.first % nru;
		} else {
			ru = c.first / stored;
			slot = (uint32_t)(c.first % stored);
		}
		for (uint64_t i = 0; i < c.n; i++) {
			fn(ctx, result_map_unit_at(m, ru), slot, c.recs + i * m->map.rec_size);
			if (m->slot_major ? ++ru == nru : ++slot == stored) {
				if (m->slot_major) {
					ru = 0;
					slot++;
				} else {
					slot = 0;
					ru++;
				}
			}
		}
	}
	result_pass_free(p);
	return rc;
}
