/* Open-addressing hash map from pointers (driver handles) to pointers. Not
 * locked: the registry holds its lock around every use. */
#ifndef NTOP_HOOK_PTRMAP_H
#define NTOP_HOOK_PTRMAP_H
#include <stddef.h>

struct ptrmap {
	const void **keys; /* NULL: empty; PTRMAP_TOMB: deleted */
	void **vals;
	size_t cap;        /* power of two, 0 before the first put */
	size_t used;       /* live + deleted slots */
	size_t live;
};

void *ptrmap_get(const struct ptrmap *m, const void *key);
/* Inserts or replaces; -1 when out of memory (the map is unchanged). */
int ptrmap_put(struct ptrmap *m, const void *key, void *val);
void *ptrmap_del(struct ptrmap *m, const void *key);
/* Calls fn for every entry; fn may not modify the map. */
void ptrmap_each(const struct ptrmap *m, void (*fn)(const void *key, void *val, void *arg), void *arg);
void ptrmap_done(struct ptrmap *m);

#endif
