/* The .ntr parser that result.c (whole file in memory) and result_stream.c
 * (records streamed from the file) share, so the two readers check the same
 * things and cannot drift. Internal to src/trace; not an API.
 *
 * A reader is either over a buffer holding the whole file (p) or over a file
 * descriptor (p NULL): then the bytes it parses are pread into a window on
 * demand, and lengths are checked against the file size all the same. */
#ifndef NTOP_RESULT_PARSE_H
#define NTOP_RESULT_PARSE_H
#include <stddef.h>
#include <stdint.h>

#include "trace/result.h"

struct result_rd {
	const uint8_t *p;   /* whole file in memory, or NULL: read from fd */
	int fd;
	uint8_t *win;       /* fd mode: file bytes [win_off, win_off + win_len) */
	uint64_t win_off, win_len;
	size_t win_cap;
	uint64_t len, off;  /* file size, parse position */
	char **cause;
	int failed;         /* sticky: the first failure's cause is the one reported */
	uint64_t inflated;  /* bytes declared by frames past RESULT_MAX_RATIO so far */
};

struct result_rd_desc {
	uint64_t counts_bytes, records_bytes, frame_bytes;
};

/* Longest frame prefix result_rd_frame_head needs (a zstd frame header). */
#define RESULT_FRAME_HEAD_MAX 32u

void result_rd_done(struct result_rd *r);
/* Little-endian u32 and length-prefixed strings (no NUL inside, at most
 * RESULT_MAX_STR bytes), checked against the bytes left. */
int result_rd_u32(struct result_rd *r, uint32_t *v, const char *what);
int result_rd_str(struct result_rd *r, char **out, const char *what);
struct strbuf;
void result_put_u32(struct strbuf *sb, uint32_t v);
void result_put_str(struct strbuf *sb, const char *s);
/* result_sites.c: the site table section (version 6, header flag bit 0). */
void result_put_sites(struct strbuf *sb, const struct engine_sites *t);
int result_rd_sites(struct result_rd *r, struct engine_sites *t);
/* n bytes at the parse position, after a length check; NULL on failure. */
const uint8_t *result_rd_at(struct result_rd *r, uint64_t n, const char *what);
int result_rd_header(struct result_rd *r, struct result *res, uint32_t *n_maps);
/* Descriptor of one map; leaves the position at its frame, whose length has
 * been checked against the bytes left. */
int result_rd_descriptor(struct result_rd *r, const struct result *res, struct result_map *m,
			 struct result_rd_desc *d);
/* Checks a frame's header (its first head_len bytes): a zstd frame that
 * declares exactly counts + records bytes, achievable from frame_bytes. */
int result_rd_frame_head(struct result_rd *r, const struct result_map *m, const struct result_rd_desc *d,
			 const uint8_t *head, size_t head_len);
/* Once a map's counts are loaded: refuses a unit with records holding more
 * than the map stores per unit (result_map_record would find no slot for
 * them), then derives the written/dropped/unsampled totals. */
int result_rd_counts(struct result_rd *r, struct result_map *m);

#endif
