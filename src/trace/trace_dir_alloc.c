/* Device allocations in the trace model: the `alloc` and `free` events keep
 * a set of live allocations; each probed launch copies its process's set
 * when its launch event comes (events of one process arrive in the order
 * they happened, so that is the set the kernel ran with). Frees pair with
 * the live allocation at the same base in the same process. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/events.h"
#include "trace/trace_dir.h"

static int alloc_parse_hex(const char *s, uint64_t *v)
{
	char *end;
	if (!s || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
		return -1;
	*v = strtoull(s + 2, &end, 16);
	return *end || end == s + 2 ? -1 : 0;
}

static int alloc_find(const struct trace_dir *td, uint32_t pid, uint64_t base)
{
	for (int i = td->n_live - 1; i >= 0; i--)
		if (td->live[i].pid == pid && td->live[i].base == base)
			return i;
	return -1;
}

static void alloc_remove(struct trace_dir *td, int i)
{
	memmove(&td->live[i], &td->live[i + 1], (size_t)(td->n_live - i - 1) * sizeof *td->live);
	td->n_live--;
}

int trace_dir_on_alloc(struct trace_dir *td, const struct event *ev, uint32_t pid)
{
	struct td_alloc a = {.pid = pid};
	if (alloc_parse_hex(event_get(ev, "base"), &a.base) < 0)
		return -1;
	a.bytes = event_get_u64(ev, "bytes", 0);
	a.n = event_get_u64(ev, "n", 0);
	const char *api = event_get(ev, "api");
	snprintf(a.api, sizeof a.api, "%s", api ? api : "?");
	int old = alloc_find(td, pid, a.base); /* freed where we could not see it */
	if (old >= 0)
		alloc_remove(td, old);
	if (td->n_live == td->cap_live) {
		int cap = td->cap_live ? td->cap_live * 2 : 64;
		struct td_alloc *nl = realloc(td->live, (size_t)cap * sizeof *nl);
		if (!nl)
			return 0;
		td->live = nl;
		td->cap_live = cap;
	}
	td->live[td->n_live++] = a;
	return 0;
}

int trace_dir_on_free(struct trace_dir *td, const struct event *ev, uint32_t pid)
{
	uint64_t base;
	if (alloc_parse_hex(event_get(ev, "base"), &base) < 0)
		return -1;
	int i = alloc_find(td, pid, base);
	if (i < 0)
		td->unpaired_frees++;
	else
		alloc_remove(td, i);
	return 0;
}

void trace_dir_snapshot_allocs(const struct trace_dir *td, uint32_t pid, struct td_result *r)
{
	int n = 0;
	for (int i = 0; i < td->n_live; i++)
		n += td->live[i].pid == pid;
	free(r->allocs);
	r->allocs = n ? malloc((size_t)n * sizeof *r->allocs) : NULL;
	r->n_allocs = 0;
	for (int i = 0; r->allocs && i < td->n_live; i++)
		if (td->live[i].pid == pid)
			r->allocs[r->n_allocs++] = td->live[i];
}
