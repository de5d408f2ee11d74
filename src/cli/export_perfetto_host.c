/* The host side of the Perfetto export: launch lines and their measured
 * durations from events.log (export_perfetto_int.h). Read here rather than
 * through the trace model, which keeps per-kernel totals, not each launch. */
#include "cli/export_perfetto_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"
#include "trace/events.h"

struct pf_time {
	uint32_t pid;
	uint64_t seq, ns;
};

static int pf_time_cmp(const void *a, const void *b)
{
	const struct pf_time *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int pf_dims(const char *s, uint32_t d[3])
{
	return s && sscanf(s, "%u,%u,%u", &d[0], &d[1], &d[2]) == 3 ? 1 : 0;
}

static int pf_wanted(const struct pf_opts *o, uint32_t pid, uint32_t kid, uint64_t seq)
{
	return !o->one || (pid == o->pid && kid == o->kid && seq == o->seq);
}

static int pf_add_launch(struct pf_set *s, const struct event *ev)
{
	if (s->n_l == s->cap_l) {
		size_t cap = s->cap_l ? 2 * s->cap_l : 64;
		struct pf_launch *n = realloc(s->l, cap * sizeof *n);
		if (!n)
			return -1;
		s->l = n;
		s->cap_l = cap;
	}
	struct pf_launch *l = &s->l[s->n_l++];
	memset(l, 0, sizeof *l);
	l->pid = (uint32_t)event_get_u64(ev, "pid", 0);
	l->kid = (uint32_t)event_get_u64(ev, "kid", 0);
	l->seq = event_get_u64(ev, "seq", 0);
	l->ts = event_get_u64(ev, "t", 0);
	l->probed = event_get_int(ev, "probed", 0) != 0;
	l->has_config = pf_dims(event_get(ev, "grid"), l->grid) && pf_dims(event_get(ev, "block"), l->block);
	snprintf(l->api, sizeof l->api, "%s", event_get(ev, "api") ? event_get(ev, "api") : "");
	return 0;
}

static int pf_add_time(struct pf_time **t, size_t *n, size_t *cap, const struct event *ev)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 64;
		struct pf_time *nt = realloc(*t, c * sizeof *nt);
		if (!nt)
			return -1;
		*t = nt;
		*cap = c;
	}
	(*t)[(*n)++] = (struct pf_time){(uint32_t)event_get_u64(ev, "pid", 0), event_get_u64(ev, "seq", 0),
					event_get_u64(ev, "ns", 0)};
	return 0;
}

/* One line: 0 taken or ignored, -1 out of memory. */
static int pf_line(const struct pf_opts *o, uint32_t base, struct pf_set *s, struct pf_time **t, size_t *nt,
		   size_t *ct, const char *line, size_t len)
{
	struct event ev;
	if (event_parse(line, len, &ev) < 0)
		return 0; /* the report counts malformed lines; here they are just not slices */
	int rc = 0, launch = strcmp(ev.type, "launch") == 0, time = strcmp(ev.type, "time") == 0;
	uint32_t pid = (uint32_t)event_get_u64(&ev, "pid", 0) + base;
	if ((launch || time) && event_get(&ev, "seq") && event_get(&ev, "t") &&
	    pf_wanted(o, pid, (uint32_t)event_get_u64(&ev, "kid", 0), event_get_u64(&ev, "seq", 0))) {
		size_t before = launch ? s->n_l : *nt;
		rc = launch ? pf_add_launch(s, &ev) : pf_add_time(t, nt, ct, &ev);
		if (rc == 0 && launch && s->n_l > before)
			s->l[before].pid = pid;
		else if (rc == 0 && *nt > before)
			(*t)[before].pid = pid;
	}
	event_done(&ev);
	return rc;
}

static void pf_match_times(struct pf_set *s, struct pf_time *t, size_t nt)
{
	if (!nt)
		return;
	qsort(t, nt, sizeof *t, pf_time_cmp);
	for (size_t i = 0; i < s->n_l; i++) {
		struct pf_time key = {s->l[i].pid, s->l[i].seq, 0};
		struct pf_time *hit = bsearch(&key, t, nt, sizeof *t, pf_time_cmp);
		if (hit) {
			s->l[i].dur = hit->ns;
			s->l[i].has_dur = 1;
			s->l[i].dur_from = "time event";
		}
	}
}

int pf_host_read(const char *dir, uint32_t base, const struct pf_opts *o, struct pf_set *s, char **cause)
{
	char *path = NULL, *line = NULL;
	if (asprintf(&path, "%s/events.log", dir) < 0)
		return cause_set(cause, "out of memory");
	FILE *f = fopen(path, "r");
	if (!f) {
		cause_set(cause, "%s: %s", path, strerror(errno));
		free(path);
		return -1;
	}
	struct pf_time *t = NULL;
	size_t nt = 0, ct = 0, cap = 0;
	ssize_t len;
	int rc = 0;
	while (rc == 0 && (len = getline(&line, &cap, f)) > 0)
		rc = pf_line(o, base, s, &t, &nt, &ct, line, (size_t)len);
	if (rc == 0)
		pf_match_times(s, t, nt);
	else
		cause_set(cause, "out of memory reading %s", path);
	free(t);
	free(line);
	free(path);
	fclose(f);
	return rc;
}
