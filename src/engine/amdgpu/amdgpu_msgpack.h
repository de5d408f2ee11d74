/* MessagePack, as much as AMDGPU code object metadata uses (the
 * NT_AMDGPU_METADATA note of code object v3 and later): a reader that
 * builds a tree and a writer that serialises one back with the smallest
 * encoding of each value, which is what LLVM's msgpack writer emits, so a
 * tree read from a note and written again gives the same bytes (tested on
 * the corpus). The tree is edited in place to append kernel arguments. */
#ifndef NTOP_AMDGPU_MSGPACK_H
#define NTOP_AMDGPU_MSGPACK_H
#include <stddef.h>
#include <stdint.h>

enum msgpack_type { MSGPACK_NIL, MSGPACK_BOOL, MSGPACK_UINT, MSGPACK_INT, MSGPACK_FLOAT, MSGPACK_STR,
		    MSGPACK_BIN, MSGPACK_ARRAY, MSGPACK_MAP };

/* Reader limits: metadata is small; a hostile note must not recurse or
 * allocate without bound. */
#define MSGPACK_MAX_DEPTH 32
#define MSGPACK_MAX_NODES (1u << 22)

struct msgpack_node {
	enum msgpack_type type;
	union {
		uint64_t u;    /* UINT, BOOL */
		int64_t i;     /* INT (negative values only; the writer picks the form) */
		double f;      /* FLOAT */
	} v;
	int f32;               /* FLOAT: stored as float32 */
	char *str;             /* STR, BIN: malloc'd bytes (STR also NUL-terminated) */
	uint32_t len;          /* STR/BIN bytes; ARRAY items; MAP pairs */
	struct msgpack_node *kids; /* ARRAY: len items; MAP: 2*len (key, value, ...) */
};

/* Parses exactly one value filling [p, p+n); trailing bytes are an error. */
int msgpack_read(const uint8_t *p, size_t n, struct msgpack_node *root, char **cause);
/* Serialises into a malloc'd buffer. */
int msgpack_write(const struct msgpack_node *root, uint8_t **out, size_t *len, char **cause);
void msgpack_free(struct msgpack_node *n);

/* The value under string key `key` of a map, or NULL. */
const struct msgpack_node *msgpack_map_get(const struct msgpack_node *map, const char *key);
struct msgpack_node *msgpack_map_get_mut(struct msgpack_node *map, const char *key);
/* An unsigned value (UINT, or INT >= 0) into *out: 0, or -1 when n is not one. */
int msgpack_get_uint(const struct msgpack_node *n, uint64_t *out);

/* Builders for the writer side (0, or -1 out of memory). */
int msgpack_set_str(struct msgpack_node *n, const char *s);
void msgpack_set_uint(struct msgpack_node *n, uint64_t v);
/* Appends a zeroed item to an array / a (key, nil) pair to a map and
 * returns it (the map's value node), or NULL out of memory. */
struct msgpack_node *msgpack_array_push(struct msgpack_node *arr);
struct msgpack_node *msgpack_map_put(struct msgpack_node *map, const char *key);

#endif
