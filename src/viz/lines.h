/* Memory by source line: a dmat launch's records (address, size, kind and
 * site, probes/dmat.toml's access field) attributed through the launch's
 * site table to the source line of the instruction that made them. Per
 * line: accesses, bytes, warp-level requests and the 32-byte sectors they
 * touched (the lanes of one warp that recorded the same site in the same
 * record slot made one request: what Nsight Compute counts as
 * l1tex__t_requests / l1tex__t_sectors for global loads, on code whose
 * warps do not diverge between accesses), and distinct pages (4 KiB).
 * Pure model over a result stream (the records are never all in memory). */
#ifndef NTOP_LINES_H
#define NTOP_LINES_H
#include <stddef.h>
#include <stdint.h>

#include "trace/result.h"

#define LINES_PAGE 4096u
#define LINES_PAGES_MAX (1u << 20) /* distinct pages counted per line, at most */

/* A line's loads and its stores are two entries (a request is one
 * instruction's, and ncu counts loads and stores apart). */
struct ln_line {
	char where[192];      /* "attn.py:48", "ptx:123" without line information */
	int stores;           /* its stores (st, atom, red, bulk stores), else its loads */
	int site;             /* its first site in the table (for the opcode, function) */
	int n_sites;
	uint32_t kinds;       /* bit k: records of dmat kind k */
	uint64_t accesses, bytes, requests, sectors;
	uint64_t pages;       /* distinct pages, LINES_PAGES_MAX when it got there */
	/* private: the page set */
	uint64_t *set;
	uint32_t set_cap, set_n;
};

struct lines {
	struct ln_line *v;    /* by accesses, most first */
	int n;
	uint64_t records;     /* records read */
	uint64_t unattributed; /* records whose site is past the table (2047: too many sites) */
	int has_sites;        /* the result has a site table and the records a site field */
	int coalescing;       /* requests and sectors could be counted (a thread map) */
};

/* Lines of map `map` (a dmat map with an access field) of the result in s. */
int lines_analyze(const struct result_stream *s, int map, struct lines **out, char **cause);
void lines_free(struct lines *l);
/* Index of the first map with an access field (addr:u64 and access:u32), or -1. */
int lines_find_map(const struct result *r);
/* Sets bit i of mask (bits, 8 a byte) for each site i of r's table that
 * counts to line l (its where and direction); mask is cleared first. */
void lines_site_mask(const struct result *r, const struct ln_line *l, uint8_t *mask, size_t bits);
/* "load", "load+store"...: the dmat kinds in `kinds` (bit k: kind k). */
const char *lines_kinds_text(uint32_t kinds, char *buf, size_t n);

#endif
