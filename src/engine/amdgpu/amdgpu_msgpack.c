/* MessagePack reader and writer (see amdgpu_msgpack.h). Format: the
 * msgpack specification's type bytes; big-endian lengths and numbers.
 * Extension types (0xc7-0xc9, 0xd4-0xd8) never occur in AMDGPU metadata
 * and are refused by name. */
#include "engine/amdgpu/amdgpu_msgpack.h"

#include <stdlib.h>
#include <string.h>

#include "common/cause.h"

struct mp_in {
	const uint8_t *p;
	size_t n, at;
	uint32_t nodes;
};

static uint64_t mp_be(const uint8_t *p, int bytes)
{
	uint64_t v = 0;
	for (int i = 0; i < bytes; i++)
		v = v << 8 | p[i];
	return v;
}

static int mp_take(struct mp_in *in, size_t bytes, const uint8_t **out, char **cause)
{
	if (bytes > in->n - in->at)
		return cause_set(cause, "msgpack value at byte %zu runs past the end (%zu bytes)", in->at, in->n);
	*out = in->p + in->at;
	in->at += bytes;
	return 0;
}

static int mp_read_value(struct mp_in *in, struct msgpack_node *node, int depth, char **cause);

static int mp_read_bytes(struct mp_in *in, struct msgpack_node *node, uint64_t len, char **cause)
{
	const uint8_t *src = NULL;
	if (len > UINT32_MAX || mp_take(in, (size_t)len, &src, cause) < 0)
		return len > UINT32_MAX ? cause_set(cause, "msgpack string too long") : -1;
	node->str = malloc((size_t)len + 1);
	if (!node->str)
		return cause_set(cause, "out of memory reading msgpack");
	memcpy(node->str, src, (size_t)len);
	node->str[len] = 0;
	node->len = (uint32_t)len;
	return 0;
}

static int mp_read_items(struct mp_in *in, struct msgpack_node *node, uint64_t count, int depth, char **cause)
{
	uint64_t items = node->type == MSGPACK_MAP ? count * 2 : count;
	/* every item takes at least one byte: this bounds the allocation */
	if (items > in->n - in->at || in->nodes + items > MSGPACK_MAX_NODES)
		return cause_set(cause, "msgpack container at byte %zu claims %llu items, more than the data holds",
				 in->at, (unsigned long long)count);
	if (depth >= MSGPACK_MAX_DEPTH)
		return cause_set(cause, "msgpack nesting deeper than %d", MSGPACK_MAX_DEPTH);
	in->nodes += (uint32_t)items;
	node->len = (uint32_t)count;
	if (!items)
		return 0;
	node->kids = calloc((size_t)items, sizeof *node->kids);
	if (!node->kids)
		return cause_set(cause, "out of memory reading msgpack");
	for (uint64_t i = 0; i < items; i++)
		if (mp_read_value(in, &node->kids[i], depth + 1, cause) < 0)
			return -1;
	return 0;
}

/* Reads an n-byte big-endian length or number following the type byte. */
static int mp_read_num(struct mp_in *in, int bytes, uint64_t *v, char **cause)
{
	const uint8_t *q = NULL;
	if (mp_take(in, (size_t)bytes, &q, cause) < 0)
		return -1;
	*v = mp_be(q, bytes);
	return 0;
}

static int mp_read_float(struct mp_in *in, struct msgpack_node *node, int bytes, char **cause)
{
	uint64_t bits;
	if (mp_read_num(in, bytes, &bits, cause) < 0)
		return -1;
	node->type = MSGPACK_FLOAT;
	node->f32 = bytes == 4;
	if (bytes == 4) {
		uint32_t b32 = (uint32_t)bits;
		float f;
		memcpy(&f, &b32, sizeof f);
		node->v.f = f;
	} else {
		memcpy(&node->v.f, &bits, sizeof node->v.f);
	}
	return 0;
}

static int mp_read_int(struct mp_in *in, struct msgpack_node *node, int bytes, int is_signed, char **cause)
{
	uint64_t v;
	if (mp_read_num(in, bytes, &v, cause) < 0)
		return -1;
	if (is_signed && bytes < 8 && (v >> (bytes * 8 - 1)))
		v |= ~(uint64_t)0 << (bytes * 8); /* sign-extend */
	if (is_signed && (int64_t)v < 0) {
		node->type = MSGPACK_INT;
		node->v.i = (int64_t)v;
	} else {
		node->type = MSGPACK_UINT;
		node->v.u = v;
	}
	return 0;
}

/* Type bytes 0xc0..0xdf. */
static int mp_read_tagged(struct mp_in *in, struct msgpack_node *node, uint8_t t, int depth, char **cause)
{
	static const int width[] = { 1, 2, 4 };
	uint64_t len;
	switch (t) {
	case 0xc0: node->type = MSGPACK_NIL; return 0;
	case 0xc2: case 0xc3: node->type = MSGPACK_BOOL; node->v.u = t == 0xc3; return 0;
	case 0xc4: case 0xc5: case 0xc6:
		node->type = MSGPACK_BIN;
		return mp_read_num(in, width[t - 0xc4], &len, cause) < 0 ? -1 : mp_read_bytes(in, node, len, cause);
	case 0xca: return mp_read_float(in, node, 4, cause);
	case 0xcb: return mp_read_float(in, node, 8, cause);
	case 0xcc: case 0xcd: case 0xce: case 0xcf: return mp_read_int(in, node, 1 << (t - 0xcc), 0, cause);
	case 0xd0: case 0xd1: case 0xd2: case 0xd3: return mp_read_int(in, node, 1 << (t - 0xd0), 1, cause);
	case 0xd9: case 0xda: case 0xdb:
		node->type = MSGPACK_STR;
		return mp_read_num(in, 1 << (t - 0xd9), &len, cause) < 0 ? -1 : mp_read_bytes(in, node, len, cause);
	case 0xdc: case 0xdd:
		node->type = MSGPACK_ARRAY;
		return mp_read_num(in, t == 0xdc ? 2 : 4, &len, cause) < 0 ? -1
									   : mp_read_items(in, node, len, depth, cause);
	case 0xde: case 0xdf:
		node->type = MSGPACK_MAP;
		return mp_read_num(in, t == 0xde ? 2 : 4, &len, cause) < 0 ? -1
									   : mp_read_items(in, node, len, depth, cause);
	default:
		return cause_set(cause, "msgpack type byte 0x%02x at byte %zu (extension or reserved) is not "
				 "used by AMDGPU metadata", t, in->at - 1);
	}
}

static int mp_read_value(struct mp_in *in, struct msgpack_node *node, int depth, char **cause)
{
	const uint8_t *q = NULL;
	if (mp_take(in, 1, &q, cause) < 0)
		return -1;
	uint8_t t = *q;
	if (t <= 0x7f || t >= 0xe0) {
		if (t <= 0x7f) {
			node->type = MSGPACK_UINT;
			node->v.u = t;
		} else {
			node->type = MSGPACK_INT;
			node->v.i = (int8_t)t;
		}
		return 0;
	}
	if (t >= 0xa0 && t <= 0xbf) {
		node->type = MSGPACK_STR;
		return mp_read_bytes(in, node, t & 0x1f, cause);
	}
	if (t >= 0x80 && t <= 0x9f) {
		node->type = t <= 0x8f ? MSGPACK_MAP : MSGPACK_ARRAY;
		return mp_read_items(in, node, t & 0x0f, depth, cause);
	}
	return mp_read_tagged(in, node, t, depth, cause);
}

int msgpack_read(const uint8_t *p, size_t n, struct msgpack_node *root, char **cause)
{
	struct mp_in in = { p, n, 0, 1 };
	memset(root, 0, sizeof *root);
	if (mp_read_value(&in, root, 0, cause) < 0) {
		msgpack_free(root);
		return -1;
	}
	if (in.at != n) {
		msgpack_free(root);
		return cause_set(cause, "%zu bytes after the msgpack value", n - in.at);
	}
	return 0;
}

static void mp_free_kids(struct msgpack_node *n)
{
	uint64_t items = n->type == MSGPACK_MAP ? (uint64_t)n->len * 2 : n->len;
	if (n->kids)
		for (uint64_t i = 0; i < items; i++)
			msgpack_free(&n->kids[i]);
	free(n->kids);
}

void msgpack_free(struct msgpack_node *n)
{
	if (!n)
		return;
	if (n->type == MSGPACK_ARRAY || n->type == MSGPACK_MAP)
		mp_free_kids(n);
	free(n->str);
	memset(n, 0, sizeof *n);
}

/* ---- writer ---- */

struct mp_out {
	uint8_t *p;
	size_t len, cap;
	int oom;
};

static void mp_put(struct mp_out *o, const void *src, size_t n)
{
	if (o->oom)
		return;
	if (o->len + n > o->cap) {
		size_t cap = o->cap ? o->cap : 256;
		while (cap < o->len + n)
			cap *= 2;
		uint8_t *p = realloc(o->p, cap);
		if (!p) {
			o->oom = 1;
			return;
		}
		o->p = p;
		o->cap = cap;
	}
	memcpy(o->p + o->len, src, n);
	o->len += n;
}

/* Type byte then v in `bytes` big-endian bytes. */
static void mp_put_tagged(struct mp_out *o, uint8_t tag, uint64_t v, int bytes)
{
	uint8_t b[9];
	b[0] = tag;
	for (int i = 0; i < bytes; i++)
		b[1 + i] = (uint8_t)(v >> (8 * (bytes - 1 - i)));
	mp_put(o, b, 1 + (size_t)bytes);
}

static void mp_put_uint(struct mp_out *o, uint64_t v)
{
	if (v <= 0x7f)
		mp_put_tagged(o, (uint8_t)v, 0, 0);
	else if (v <= 0xff)
		mp_put_tagged(o, 0xcc, v, 1);
	else if (v <= 0xffff)
		mp_put_tagged(o, 0xcd, v, 2);
	else if (v <= 0xffffffffu)
		mp_put_tagged(o, 0xce, v, 4);
	else
		mp_put_tagged(o, 0xcf, v, 8);
}

static void mp_put_int(struct mp_out *o, int64_t v)
{
	if (v >= 0)
		mp_put_uint(o, (uint64_t)v);
	else if (v >= -32)
		mp_put_tagged(o, (uint8_t)(int8_t)v, 0, 0);
	else if (v >= INT8_MIN)
		mp_put_tagged(o, 0xd0, (uint8_t)v, 1);
	else if (v >= INT16_MIN)
		mp_put_tagged(o, 0xd1, (uint16_t)v, 2);
	else if (v >= INT32_MIN)
		mp_put_tagged(o, 0xd2, (uint32_t)v, 4);
	else
		mp_put_tagged(o, 0xd3, (uint64_t)v, 8);
}

/* Header of a str/bin/array/map of n: fix form when there is one
 * (fix_max > 0), else the 8/16/32-bit forms from tags[]. */
static void mp_put_len(struct mp_out *o, uint32_t n, uint8_t fix, uint32_t fix_max, const uint8_t tags[3])
{
	if (fix_max && n <= fix_max)
		mp_put_tagged(o, (uint8_t)(fix | n), 0, 0);
	else if (tags[0] && n <= 0xff)
		mp_put_tagged(o, tags[0], n, 1);
	else if (n <= 0xffff)
		mp_put_tagged(o, tags[1], n, 2);
	else
		mp_put_tagged(o, tags[2], n, 4);
}

static void mp_write_value(struct mp_out *o, const struct msgpack_node *n)
{
	static const uint8_t str_tags[3] = { 0xd9, 0xda, 0xdb }, bin_tags[3] = { 0xc4, 0xc5, 0xc6 },
			     arr_tags[3] = { 0, 0xdc, 0xdd }, map_tags[3] = { 0, 0xde, 0xdf };
	switch (n->type) {
	case MSGPACK_NIL: mp_put_tagged(o, 0xc0, 0, 0); break;
	case MSGPACK_BOOL: mp_put_tagged(o, n->v.u ? 0xc3 : 0xc2, 0, 0); break;
	case MSGPACK_UINT: mp_put_uint(o, n->v.u); break;
	case MSGPACK_INT: mp_put_int(o, n->v.i); break;
	case MSGPACK_FLOAT:
		if (n->f32) {
			float f = (float)n->v.f;
			uint32_t b;
			memcpy(&b, &f, sizeof b);
			mp_put_tagged(o, 0xca, b, 4);
		} else {
			uint64_t b;
			memcpy(&b, &n->v.f, sizeof b);
			mp_put_tagged(o, 0xcb, b, 8);
		}
		break;
	case MSGPACK_STR:
		mp_put_len(o, n->len, 0xa0, 31, str_tags);
		mp_put(o, n->str, n->len);
		break;
	case MSGPACK_BIN:
		mp_put_len(o, n->len, 0, 0, bin_tags);
		mp_put(o, n->str, n->len);
		break;
	case MSGPACK_ARRAY:
		mp_put_len(o, n->len, 0x90, 15, arr_tags);
		for (uint32_t i = 0; i < n->len; i++)
			mp_write_value(o, &n->kids[i]);
		break;
	case MSGPACK_MAP:
		mp_put_len(o, n->len, 0x80, 15, map_tags);
		for (uint64_t i = 0; i < (uint64_t)n->len * 2; i++)
			mp_write_value(o, &n->kids[i]);
		break;
	}
}

int msgpack_write(const struct msgpack_node *root, uint8_t **out, size_t *len, char **cause)
{
	struct mp_out o = { 0 };
	mp_write_value(&o, root);
	if (o.oom) {
		free(o.p);
		return cause_set(cause, "out of memory writing msgpack");
	}
	*out = o.p;
	*len = o.len;
	return 0;
}

/* ---- access and edits ---- */

struct msgpack_node *msgpack_map_get_mut(struct msgpack_node *map, const char *key)
{
	if (!map || map->type != MSGPACK_MAP)
		return NULL;
	size_t klen = strlen(key);
	for (uint32_t i = 0; i < map->len; i++) {
		struct msgpack_node *k = &map->kids[2 * i];
		if (k->type == MSGPACK_STR && k->len == klen && memcmp(k->str, key, klen) == 0)
			return &map->kids[2 * i + 1];
	}
	return NULL;
}

const struct msgpack_node *msgpack_map_get(const struct msgpack_node *map, const char *key)
{
	return msgpack_map_get_mut((struct msgpack_node *)map, key);
}

int msgpack_get_uint(const struct msgpack_node *n, uint64_t *out)
{
	if (!n || n->type != MSGPACK_UINT)
		return -1;
	*out = n->v.u;
	return 0;
}

int msgpack_set_str(struct msgpack_node *n, const char *s)
{
	size_t len = strlen(s);
	char *copy = malloc(len + 1);
	if (!copy || len > UINT32_MAX) {
		free(copy);
		return -1;
	}
	memcpy(copy, s, len + 1);
	msgpack_free(n);
	n->type = MSGPACK_STR;
	n->str = copy;
	n->len = (uint32_t)len;
	return 0;
}

void msgpack_set_uint(struct msgpack_node *n, uint64_t v)
{
	msgpack_free(n);
	n->type = MSGPACK_UINT;
	n->v.u = v;
}

/* Grows kids by `add` zeroed nodes at index `at` (items, not pairs). */
static struct msgpack_node *mp_insert(struct msgpack_node *c, uint64_t items, uint64_t at, uint64_t add)
{
	struct msgpack_node *k = realloc(c->kids, (size_t)(items + add) * sizeof *k);
	if (!k)
		return NULL;
	memmove(k + at + add, k + at, (size_t)(items - at) * sizeof *k);
	memset(k + at, 0, (size_t)add * sizeof *k);
	c->kids = k;
	return k + at;
}

struct msgpack_node *msgpack_array_push(struct msgpack_node *arr)
{
	if (arr->type != MSGPACK_ARRAY || arr->len == UINT32_MAX)
		return NULL;
	struct msgpack_node *n = mp_insert(arr, arr->len, arr->len, 1);
	if (n)
		arr->len++;
	return n;
}

/* Keys go in sorted place: LLVM keeps metadata maps sorted (a std::map), so
 * a note we extend reads the way the compiler would have written it. */
struct msgpack_node *msgpack_map_put(struct msgpack_node *map, const char *key)
{
	if (map->type != MSGPACK_MAP || map->len == UINT32_MAX)
		return NULL;
	struct msgpack_node *old = msgpack_map_get_mut(map, key);
	if (old)
		return old;
	uint32_t at = 0;
	while (at < map->len && map->kids[2 * at].type == MSGPACK_STR && strcmp(map->kids[2 * at].str, key) < 0)
		at++;
	struct msgpack_node *k = mp_insert(map, (uint64_t)map->len * 2, (uint64_t)at * 2, 2);
	if (!k)
		return NULL;
	map->len++;
	if (msgpack_set_str(k, key) < 0) {
		k->type = MSGPACK_NIL; /* still a valid pair: nil key, nil value */
		return NULL;
	}
	return k + 1;
}
