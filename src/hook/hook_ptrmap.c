/* Pointer hash map (hook_ptrmap.h): linear probing, tombstones on delete,
 * grows at 50% occupancy so a lookup touches one or two slots. */
#include <stdint.h>
#include <stdlib.h>
#include "hook/hook_ptrmap.h"

#define PTRMAP_TOMB ((const void *)1)

static size_t ptrmap_hash(const void *key)
{
	uint64_t x = (uint64_t)(uintptr_t)key;
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (size_t)x;
}

static size_t ptrmap_slot(const struct ptrmap *m, const void *key)
{
	size_t mask = m->cap - 1, i = ptrmap_hash(key) & mask;
	while (m->keys[i] != NULL && m->keys[i] != key)
		i = (i + 1) & mask;
	return i;
}

void *ptrmap_get(const struct ptrmap *m, const void *key)
{
	if (m->cap == 0 || key == NULL || key == PTRMAP_TOMB)
		return NULL;
	size_t i = ptrmap_slot(m, key);
	return m->keys[i] == key ? m->vals[i] : NULL;
}

static int ptrmap_grow(struct ptrmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	if (m->live * 4 < m->cap)
		cap = m->cap; /* mostly tombstones: rehash in place size */
	struct ptrmap n = { calloc(cap, sizeof(void *)), calloc(cap, sizeof(void *)), cap, 0, 0 };
	if (!n.keys || !n.vals) {
		free(n.keys);
		free(n.vals);
		return -1;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (m->keys[i] == NULL || m->keys[i] == PTRMAP_TOMB)
			continue;
		size_t j = ptrmap_slot(&n, m->keys[i]);
		n.keys[j] = m->keys[i];
		n.vals[j] = m->vals[i];
		n.used++;
		n.live++;
	}
	free(m->keys);
	free(m->vals);
	*m = n;
	return 0;
}

int ptrmap_put(struct ptrmap *m, const void *key, void *val)
{
	if (key == NULL || key == PTRMAP_TOMB)
		return -1;
	if ((m->used + 1) * 2 > m->cap && ptrmap_grow(m) < 0)
		return -1;
	size_t i = ptrmap_slot(m, key);
	if (m->keys[i] == NULL) {
		m->keys[i] = key;
		m->used++;
		m->live++;
	}
	m->vals[i] = val;
	return 0;
}

void *ptrmap_del(struct ptrmap *m, const void *key)
{
	if (m->cap == 0 || key == NULL || key == PTRMAP_TOMB)
		return NULL;
	size_t i = ptrmap_slot(m, key);
	if (m->keys[i] != key)
		return NULL;
	void *v = m->vals[i];
	m->keys[i] = PTRMAP_TOMB;
	m->vals[i] = NULL;
	m->live--;
	return v;
}

void ptrmap_each(const struct ptrmap *m, void (*fn)(const void *key, void *val, void *arg), void *arg)
{
	for (size_t i = 0; i < m->cap; i++)
		if (m->keys[i] != NULL && m->keys[i] != PTRMAP_TOMB)
			fn(m->keys[i], m->vals[i], arg);
}

void ptrmap_done(struct ptrmap *m)
{
	free(m->keys);
	free(m->vals);
	m->keys = NULL;
	m->vals = NULL;
	m->cap = m->used = m->live = 0;
}
