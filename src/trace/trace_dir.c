/* Trace directory model (trace_dir.h): one handler per event type folds the
 * event into processes, kernels and probed launches. Kernels are found by a
 * small open-addressing hash on (pid, kid): a PyTorch run has thousands of
 * kernels and hundreds of thousands of events. */
#include "trace/trace_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cause.h"
#include "common/demangle.h"
#include "trace/events.h"
#include "trace/trace_file.h"

enum { CAP_PROCS, CAP_DEVICES, CAP_MODULES, CAP_KERNELS, CAP_RESULTS, CAP_WARNINGS };

struct td_index {
	uint64_t *keys; /* (pid << 32 | kid) + 1; 0 = empty */
	int *vals;
	size_t cap, used;
};

/* ---- helpers ---- */

static char *td_strdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

static void td_set_str(char **dst, const char *s)
{
	if (!s)
		return;
	char *c = strdup(s);
	if (!c)
		return;
	free(*dst);
	*dst = c;
}

/* Makes room for one more element; NULL when out of memory. */
static void *td_push(void **arr, int *n, int *cap, size_t elem)
{
	if (*n == *cap) {
		int nc = *cap ? *cap * 2 : 16;
		void *na = realloc(*arr, (size_t)nc * elem);
		if (!na)
			return NULL;
		*arr = na;
		*cap = nc;
	}
	void *slot = (char *)*arr + (size_t)*n * elem;
	memset(slot, 0, elem);
	(*n)++;
	return slot;
}

static uint64_t td_hash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return k;
}

static int td_index_find(const struct td_index *ix, uint64_t key)
{
	if (!ix || !ix->cap)
		return -1;
	for (size_t i = td_hash(key) & (ix->cap - 1);; i = (i + 1) & (ix->cap - 1)) {
		if (ix->keys[i] == 0)
			return -1;
		if (ix->keys[i] == key)
			return ix->vals[i];
	}
}

static void td_index_put_raw(struct td_index *ix, uint64_t key, int val)
{
	size_t i = td_hash(key) & (ix->cap - 1);
	while (ix->keys[i] && ix->keys[i] != key)
		i = (i + 1) & (ix->cap - 1);
	if (!ix->keys[i])
		ix->used++;
	ix->keys[i] = key;
	ix->vals[i] = val;
}

static int td_index_put(struct td_index *ix, uint64_t key, int val)
{
	if ((ix->used + 1) * 2 > ix->cap) {
		struct td_index big = {0};
		big.cap = ix->cap ? ix->cap * 2 : 64;
		big.keys = calloc(big.cap, sizeof *big.keys);
		big.vals = calloc(big.cap, sizeof *big.vals);
		if (!big.keys || !big.vals) {
			free(big.keys);
			free(big.vals);
			return -1;
		}
		for (size_t i = 0; i < ix->cap; i++)
			if (ix->keys[i])
				td_index_put_raw(&big, ix->keys[i], ix->vals[i]);
		free(ix->keys);
		free(ix->vals);
		*ix = big;
	}
	td_index_put_raw(ix, key, val);
	return 0;
}

static uint64_t td_key(uint32_t pid, uint32_t kid)
{
	return ((uint64_t)pid << 32 | kid) + 1;
}

/* "x,y,z" (or "x") into dims; -1 when malformed. */
static int td_parse_dims(const char *s, uint32_t d[3])
{
	if (!s)
		return -1;
	d[0] = d[1] = d[2] = 1;
	for (int i = 0; i < 3; i++) {
		char *end;
		errno = 0;
		if (*s < '0' || *s > '9')
			return -1;
		unsigned long v = strtoul(s, &end, 10);
		if (errno || v > UINT32_MAX)
			return -1;
		d[i] = (uint32_t)v;
		if (*end == 0)
			return 0;
		if (*end != ',' || i == 2)
			return -1;
		s = end + 1;
	}
	return -1;
}

/* A result path from the log must stay inside the trace directory. */
static int td_safe_relpath(const char *f)
{
	if (!f || !*f || f[0] == '/')
		return 0;
	for (const char *p = f; p; p = strchr(p, '/'), p = p ? p + 1 : NULL)
		if (p[0] == '.' && p[1] == '.' && (p[2] == '/' || p[2] == 0))
			return 0;
	return 1;
}

/* ---- lookups ---- */

struct td_process *trace_dir_process(const struct trace_dir *td, uint32_t pid)
{
	for (int i = td->n_procs - 1; i >= 0; i--)
		if (td->procs[i].pid == pid)
			return &td->procs[i];
	return NULL;
}

static struct td_process *td_process_get(struct trace_dir *td, uint32_t pid)
{
	struct td_process *p = trace_dir_process(td, pid);
	if (p)
		return p;
	p = td_push((void **)&td->procs, &td->n_procs, &td->caps[CAP_PROCS], sizeof *p);
	if (p) {
		p->pid = pid;
		p->trace = td->feeding;
	}
	return p;
}

struct td_kernel *trace_dir_kernel(const struct trace_dir *td, uint32_t pid, uint32_t kid)
{
	int i = td_index_find(td->index, td_key(pid, kid));
	return i < 0 ? NULL : &td->kernels[i];
}

static struct td_kernel *td_kernel_get(struct trace_dir *td, uint32_t pid, uint32_t kid)
{
	struct td_kernel *k = trace_dir_kernel(td, pid, kid);
	if (k)
		return k;
	k = td_push((void **)&td->kernels, &td->n_kernels, &td->caps[CAP_KERNELS], sizeof *k);
	if (!k)
		return NULL;
	if (td_index_put(td->index, td_key(pid, kid), td->n_kernels - 1) < 0) {
		td->n_kernels--;
		return NULL;
	}
	k->pid = pid;
	k->kid = kid;
	k->regs_orig = k->regs_probed = -1;
	k->occ_orig = k->occ_probed = k->addr_at_exit = -1;
	k->sites = -1;
	return k;
}

const struct td_device *trace_dir_device(const struct trace_dir *td, uint32_t pid)
{
	for (int i = 0; i < td->n_devices; i++)
		if (td->devices[i].pid == pid)
			return &td->devices[i];
	return NULL;
}

int td_device_amd(const struct td_device *d)
{
	return d && d->arch;
}

const char *td_kernel_code_word(const struct td_kernel *k)
{
	return k->amd ? "code object" : "PTX";
}

int trace_dir_has_amd(const struct trace_dir *td)
{
	for (int i = 0; i < td->n_kernels; i++)
		if (td->kernels[i].amd)
			return 1;
	return 0;
}

/* Module kinds only the HIP stand-in reports (doc/events.md). */
static int td_module_amd(const struct trace_dir *td, uint32_t pid, uint32_t mid)
{
	static const char *const kinds[] = { "hipfb", "bundle", "co", "file" };
	for (int i = 0; i < td->n_modules; i++) {
		const struct td_module *m = &td->modules[i];
		if (m->pid != pid || m->mid != mid || !m->kind)
			continue;
		for (size_t j = 0; j < sizeof kinds / sizeof kinds[0]; j++)
			if (strcmp(m->kind, kinds[j]) == 0)
				return 1;
	}
	return 0;
}

uint64_t td_process_results_lost(const struct td_process *p)
{
	return p->results_failed + (p->results_final ? p->results_pending : 0);
}

double td_kernel_mean_ns(const struct td_kernel *k)
{
	return k->timed ? (double)k->total_ns / (double)k->timed : 0.0;
}

/* The probed launch (pid, kid, seq), created when absent. */
static struct td_result *td_result_get(struct trace_dir *td, struct td_kernel *k, uint64_t seq)
{
	for (int i = k->n_results - 1; i >= 0; i--)
		if (td->results[k->results[i]].seq == seq)
			return &td->results[k->results[i]];
	int *nr = realloc(k->results, (size_t)(k->n_results + 1) * sizeof *nr);
	if (!nr)
		return NULL;
	k->results = nr;
	struct td_result *r = td_push((void **)&td->results, &td->n_results, &td->caps[CAP_RESULTS], sizeof *r);
	if (!r)
		return NULL;
	r->pid = k->pid;
	r->kid = k->kid;
	r->seq = seq;
	/* keep seq order: launches of one kernel may finish out of order */
	int pos = k->n_results;
	while (pos > 0 && td->results[k->results[pos - 1]].seq > seq) {
		k->results[pos] = k->results[pos - 1];
		pos--;
	}
	k->results[pos] = td->n_results - 1;
	k->n_results++;
	return r;
}

/* ---- event handlers: each returns -1 when the event lacks what it needs ---- */

static void td_update_timing(struct td_kernel *k)
{
	if (!k->has_stats) {
		k->timed = k->time_count;
		k->total_ns = k->time_total_ns;
	}
	if (k->launch_events > k->launches)
		k->launches = k->launch_events;
}

static int td_on_record(struct trace_dir *td, const struct event *ev)
{
	if (td->feeding < td->n_traces) {
		struct td_trace *t = &td->traces[td->feeding];
		td_set_str(&t->host, event_get(ev, "host"));
		td_set_str(&t->argv, event_get(ev, "argv"));
		t->rank = (int)event_get_int(ev, "rank", -1);
	}
	if (td->feeding > 0) /* the job's header is its first trace's */
		return 0;
	td_set_str(&td->record_argv, event_get(ev, "argv"));
	td_set_str(&td->record_version, event_get(ev, "version"));
	td->record_t_ns = event_get_u64(ev, "t", 0);
	td->record_pid = (uint32_t)event_get_int(ev, "pid", 0);
	return 0;
}

static int td_on_hello(struct trace_dir *td, const struct event *ev, struct td_process *p)
{
	p->ppid = (uint32_t)event_get_int(ev, "ppid", 0);
	if (p->ppid)
		p->ppid += (uint32_t)td->feeding << TD_PID_SHIFT;
	td_set_str(&p->exe, event_get(ev, "exe"));
	td_set_str(&p->hook_version, event_get(ev, "hook"));
	td_set_str(&p->driver, event_get(ev, "driver"));
	return 0;
}

static int td_on_device(struct trace_dir *td, const struct event *ev, uint32_t pid)
{
	int ord = (int)event_get_int(ev, "ordinal", 0);
	struct td_device *d = NULL;
	for (int i = 0; i < td->n_devices; i++)
		if (td->devices[i].pid == pid && td->devices[i].ordinal == ord)
			d = &td->devices[i];
	if (!d)
		d = td_push((void **)&td->devices, &td->n_devices, &td->caps[CAP_DEVICES], sizeof *d);
	if (!d)
		return 0;
	d->pid = pid;
	d->ordinal = ord;
	td_set_str(&d->name, event_get(ev, "name"));
	d->cc = (int)event_get_int(ev, "cc", 0);
	td_set_str(&d->arch, event_get(ev, "arch"));
	d->sms = (int)event_get_int(ev, "sms", 0);
	d->clock_khz = (int)event_get_int(ev, "clock_khz", 0);
	return 0;
}

static int td_on_module(struct trace_dir *td, const struct event *ev, uint32_t pid)
{
	long long mid = event_get_int(ev, "mid", -1);
	if (mid < 0)
		return -1;
	struct td_module *m = td_push((void **)&td->modules, &td->n_modules, &td->caps[CAP_MODULES], sizeof *m);
	if (!m)
		return 0;
	m->pid = pid;
	m->mid = (uint32_t)mid;
	m->api = td_strdup(event_get(ev, "api"));
	m->kind = td_strdup(event_get(ev, "kind"));
	m->source = td_strdup(event_get(ev, "source"));
	m->size = event_get_u64(ev, "size", 0);
	m->n_ptx = (int)event_get_int(ev, "ptx", 0);
	m->n_sass = (int)event_get_int(ev, "sass", 0);
	return 0;
}

static int td_on_kernel(struct trace_dir *td, const struct event *ev, struct td_kernel *k)
{
	k->mid = (uint32_t)event_get_int(ev, "mid", 0);
	k->amd = td_module_amd(td, k->pid, k->mid);
	const char *name = event_get(ev, "name");
	if (name && (!k->name || strcmp(k->name, name) != 0)) {
		td_set_str(&k->name, name);
		free(k->demangled);
		k->demangled = demangle(name);
	}
	k->has_ptx = event_get_int(ev, "ptx", 0) != 0;
	free(k->ptx_reason);
	k->ptx_reason = k->has_ptx ? NULL : td_strdup(event_get(ev, "reason"));
	return 0;
}

static int td_config_equal(const struct td_config *a, const struct td_config *b)
{
	return memcmp(a->grid, b->grid, sizeof a->grid) == 0 &&
	       memcmp(a->block, b->block, sizeof a->block) == 0 && a->smem == b->smem && a->dev == b->dev;
}

static void td_add_config(struct td_kernel *k, const struct td_config *c)
{
	k->last = *c;
	k->has_config = 1;
	for (int i = 0; i < k->n_configs; i++)
		if (td_config_equal(&k->configs[i], c))
			return;
	struct td_config *nc = realloc(k->configs, (size_t)(k->n_configs + 1) * sizeof *nc);
	if (!nc)
		return;
	k->configs = nc;
	k->configs[k->n_configs++] = *c;
}

static int td_on_launch(struct trace_dir *td, const struct event *ev, struct td_kernel *k)
{
	struct td_config c = {{0}, {0}, 0, -1};
	int has = td_parse_dims(event_get(ev, "grid"), c.grid) == 0 &&
		  td_parse_dims(event_get(ev, "block"), c.block) == 0;
	c.smem = (uint32_t)event_get_int(ev, "smem", 0);
	long long dev = event_get_int(ev, "dev", -1);
	c.dev = dev >= 0 && dev < 65536 ? (int)dev : -1;
	if (c.dev >= 0 && c.dev < TD_DEVICES)
		k->devs |= 1u << c.dev;
	if (has)
		td_add_config(k, &c);
	k->launch_events++;
	int occ = (int)event_get_int(ev, "occ", 0);
	if (occ > 0)
		k->occ = occ;
	long long seq = event_get_int(ev, "seq", -1);
	if (event_get_int(ev, "probed", 0) && seq >= 0) {
		struct td_result *r = td_result_get(td, k, (uint64_t)seq);
		if (r) {
			r->config = c;
			r->has_config = has;
			r->occ = occ > 0 ? occ : 0;
			trace_dir_snapshot_allocs(td, k->pid, r);
		}
	}
	td_update_timing(k);
	return 0;
}

/* devs=0:40,1:60 (cumulative, like launches): launches per device. */
static void td_parse_devs(struct td_kernel *k, const char *v)
{
	while (v && *v) {
		char *end;
		unsigned long d = strtoul(v, &end, 10);
		if (end == v || *end != ':')
			return;
		v = end + 1;
		unsigned long long n = strtoull(v, &end, 10);
		if (end == v)
			return;
		if (d < TD_DEVICES && n) {
			k->dev_launches[d] = n;
			k->devs |= 1u << d;
		}
		v = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			return;
	}
}

static int td_on_stats(struct trace_dir *td, const struct event *ev, struct td_kernel *k)
{
	(void)td;
	k->has_stats = 1;
	k->launches = event_get_u64(ev, "launches", k->launches);
	k->timed = event_get_u64(ev, "timed", 0);
	k->total_ns = event_get_u64(ev, "total_ns", 0);
	k->min_ns = event_get_u64(ev, "min_ns", 0);
	k->max_ns = event_get_u64(ev, "max_ns", 0);
	/* `probe` lines say a reason once; stats count every declined launch */
	uint64_t probed = event_get_u64(ev, "probed", 0);
	if (probed > k->probed_started)
		k->probed_started = probed;
	uint64_t declined = event_get_u64(ev, "declined", 0);
	if (declined > k->declined)
		k->declined = declined;
	uint64_t deferred = event_get_u64(ev, "deferred", 0);
	if (deferred > k->deferred)
		k->deferred = deferred;
	td_parse_devs(k, event_get(ev, "devs"));
	td_update_timing(k);
	return 0;
}

static int td_on_time(struct trace_dir *td, const struct event *ev, struct td_kernel *k)
{
	(void)td;
	long long ns = event_get_int(ev, "ns", -1);
	if (ns < 0)
		return -1;
	k->time_count++;
	k->time_total_ns += (uint64_t)ns;
	if (!k->has_stats) {
		if (!k->min_ns || (uint64_t)ns < k->min_ns)
			k->min_ns = (uint64_t)ns;
		if ((uint64_t)ns > k->max_ns)
			k->max_ns = (uint64_t)ns;
	}
	td_update_timing(k);
	return 0;
}

static int td_on_instrument(struct trace_dir *td, const struct event *ev, struct td_kernel *k)
{
	(void)td;
	td_set_str(&k->instrument_status, event_get(ev, "status"));
	free(k->instrument_reason);
	k->instrument_reason = td_strdup(event_get(ev, "reason"));
	td_set_str(&k->instrument_probes, event_get(ev, "probes"));
	k->regs_orig = (int)event_get_int(ev, "regs_orig", -1);
	k->regs_probed = (int)event_get_int(ev, "regs_probed", -1);
	k->occ_orig = (int)event_get_int(ev, "occ_orig", -1);
	k->occ_probed = (int)event_get_int(ev, "occ_probed", -1);
	const char *addr = event_get(ev, "addr");
	k->addr_at_exit = addr ? !strcmp(addr, "exit") : -1;
	k->sites = (int)event_get_int(ev, "sites", -1);
	const char *jit = event_get(ev, "ms_jit");
	k->ms_jit = jit ? strtod(jit, NULL) : 0;
	td_set_str(&k->instrument_jit, event_get(ev, "jit"));
	return 0;
}

static int td_on_source(struct trace_dir *td, const struct event *ev, struct td_kernel *k)
{
	(void)td;
	const char *err = event_get(ev, "error");
	k->source_saved = err ? -1 : 1;
	td_set_str(&k->source_error, err);
	return 0;
}

static int td_on_probe(struct trace_dir *td, const struct event *ev, struct td_kernel *k)
{
	(void)td;
	const char *st = event_get(ev, "status");
	if (st && strcmp(st, "declined") == 0) {
		k->declined++;
		td_set_str(&k->declined_reason, event_get(ev, "reason"));
	}
	return 0;
}

static int td_on_result(struct trace_dir *td, const struct event *ev, struct td_kernel *k)
{
	long long seq = event_get_int(ev, "seq", -1);
	const char *file = event_get(ev, "file");
	if (seq < 0 || !file)
		return -1;
	struct td_result *r = td_result_get(td, k, (uint64_t)seq);
	if (!r)
		return 0;
	td_set_str(&r->file, file);
	free(r->path);
	r->path = NULL;
	const char *dir = td->feeding < td->n_traces ? td->traces[td->feeding].path : td->path;
	if (td_safe_relpath(file) && asprintf(&r->path, "%s/%s", dir ? dir : ".", file) < 0)
		r->path = NULL;
	r->maps = event_get_u64(ev, "maps", 0);
	r->records = event_get_u64(ev, "records", 0);
	r->dropped = event_get_u64(ev, "dropped", 0);
	r->bytes = event_get_u64(ev, "bytes", 0);
	r->ns = event_get_u64(ev, "ns", 0);
	return 0;
}

static int td_on_graph(struct trace_dir *td, const struct event *ev, struct td_process *p)
{
	long long kid = event_get_int(ev, "kid", -1);
	if (kid >= 0) {
		struct td_kernel *k = td_kernel_get(td, p->pid, (uint32_t)kid);
		if (k)
			k->graph_nodes++;
	} else {
		p->graph_launches += event_get_u64(ev, "launches", 0);
	}
	return 0;
}

static int td_on_warn(struct trace_dir *td, const struct event *ev, uint32_t pid)
{
	struct td_warning *w = td_push((void **)&td->warnings, &td->n_warnings,
				       &td->caps[CAP_WARNINGS], sizeof *w);
	if (!w)
		return 0;
	w->pid = pid;
	w->t_ns = event_get_u64(ev, "t", 0);
	w->msg = td_strdup(event_get(ev, "msg") ? event_get(ev, "msg") : "(no message)");
	return 0;
}

typedef int (*td_kernel_fn)(struct trace_dir *, const struct event *, struct td_kernel *);

static const struct {
	const char *type;
	td_kernel_fn fn;
} td_kernel_events[] = {
	{"kernel", td_on_kernel},   {"launch", td_on_launch}, {"stats", td_on_stats},
	{"time", td_on_time},       {"instrument", td_on_instrument},
	{"probe", td_on_probe},     {"result", td_on_result},     {"source", td_on_source},
};

/* Events about one process: -1 malformed, 1 unknown type, 0 applied. */
static int td_apply(struct trace_dir *td, const struct event *ev, uint32_t pid)
{
	for (size_t i = 0; i < sizeof td_kernel_events / sizeof td_kernel_events[0]; i++) {
		if (strcmp(ev->type, td_kernel_events[i].type) != 0)
			continue;
		long long kid = event_get_int(ev, "kid", -1);
		if (kid < 0 || kid > UINT32_MAX || !td_process_get(td, pid))
			return -1;
		struct td_kernel *k = td_kernel_get(td, pid, (uint32_t)kid);
		return k ? td_kernel_events[i].fn(td, ev, k) : 0;
	}
	struct td_process *p = td_process_get(td, pid);
	if (!p)
		return 0;
	if (strcmp(ev->type, "hello") == 0)
		return td_on_hello(td, ev, p);
	if (strcmp(ev->type, "self") == 0)
		return 0; /* NTOP_SELF_TIME's diagnostics: bench/app_cost.sh reads them from events.log */
	if (strcmp(ev->type, "device") == 0)
		return td_on_device(td, ev, pid);
	if (strcmp(ev->type, "module") == 0)
		return td_on_module(td, ev, pid);
	if (strcmp(ev->type, "graph") == 0)
		return td_on_graph(td, ev, p);
	if (strcmp(ev->type, "warn") == 0)
		return td_on_warn(td, ev, pid);
	if (strcmp(ev->type, "alloc") == 0)
		return trace_dir_on_alloc(td, ev, pid);
	if (strcmp(ev->type, "free") == 0)
		return trace_dir_on_free(td, ev, pid);
	if (strcmp(ev->type, "lost") == 0) {
		td->lost_events += event_get_u64(ev, "events", 0);
		return 0;
	}
	if (strcmp(ev->type, "idle") == 0)
		return 0; /* td_count_line */
	if (strcmp(ev->type, "results") == 0) {
		p->results_pending = event_get_u64(ev, "pending", 0);
		p->results_written = event_get_u64(ev, "written", 0);
		p->results_failed = event_get_u64(ev, "failed", 0);
		if (p->results_pending > p->results_pending_max)
			p->results_pending_max = p->results_pending;
		/* dev_peak: the hook's own peak (older hooks: what each line saw) */
		uint64_t pooled = event_get_u64(ev, "dev_peak", event_get_u64(ev, "dev_pooled", 0));
		if (pooled > p->map_pooled_max)
			p->map_pooled_max = pooled;
		p->map_given = event_get_u64(ev, "dev_given", 0);
		const char *at = event_get(ev, "at");
		p->results_final = at && strcmp(at, "final") == 0;
		p->results_draining = at && strcmp(at, "exit") == 0;
		return 0;
	}
	if (strcmp(ev->type, "exit") == 0) {
		p->exited = 1;
		p->exit_launches = event_get_u64(ev, "launches", 0);
		return 0;
	}
	return 1;
}

/* A process's lines, and whether the last said it was idle with all of
 * them sent (hook_events.c's `idle lines=N`: N lines made before it). */
static void td_count_line(struct trace_dir *td, const struct event *ev, uint32_t pid)
{
	struct td_process *p = trace_dir_process(td, pid);
	if (!p)
		return;
	if (strcmp(ev->type, "idle") == 0) {
		p->quiet = event_get_u64(ev, "lines", UINT64_MAX) == p->lines;
	} else if (strcmp(ev->type, "lost") != 0) {
		p->lines++;
		p->quiet = 0;
	}
}

void trace_dir_feed(struct trace_dir *td, const char *line, size_t len)
{
	struct event ev;
	td->lines++;
	if (event_parse(line, len, &ev) < 0) {
		td->malformed_lines++;
		return;
	}
	long long pid = event_get_int(&ev, "pid", -1);
	int rc;
	if (td->feeding > 0 && pid >= 0 && pid < (1ll << TD_PID_SHIFT))
		pid += (long long)td->feeding << TD_PID_SHIFT;
	else if (td->feeding > 0)
		pid = -1; /* an id past 2^22 would meet another trace's */
	if (pid < 0 || pid > UINT32_MAX)
		rc = -1;
	else if (strcmp(ev.type, "record") == 0)
		rc = td_on_record(td, &ev);
	else if (strcmp(ev.type, "end") == 0)
		rc = trace_dir_on_end(td, &ev);
	else
		rc = td_apply(td, &ev, (uint32_t)pid);
	if (pid >= 0 && pid <= UINT32_MAX && strcmp(ev.type, "record") != 0 && strcmp(ev.type, "end") != 0)
		td_count_line(td, &ev, (uint32_t)pid);
	if (rc < 0)
		td->malformed_lines++;
	else if (rc > 0)
		td->unknown_lines++;
	event_done(&ev);
}

/* ---- lifecycle ---- */

struct trace_dir *trace_dir_create(const char *path)
{
	struct trace_dir *td = calloc(1, sizeof *td);
	struct td_index *ix = calloc(1, sizeof *ix);
	if (!td || !ix) {
		free(td);
		free(ix);
		return NULL;
	}
	td->index = ix;
	if (path && (!(td->path = strdup(path)) || trace_dir_begin_trace(td, path) < 0)) {
		trace_dir_free(td);
		return NULL;
	}
	td->feeding = 0;
	return td;
}

static void td_feed_line(void *arg, const char *line, size_t len)
{
	trace_dir_feed(arg, line, len);
}

/* One trace directory's events.log into td (its lines take td->feeding's
 * ids), then what a recording cut short left beside it. */
static int td_load_one(struct trace_dir *td, const char *path, char **cause)
{
	char *log;
	if (asprintf(&log, "%s/events.log", path) < 0)
		return cause_set(cause, "out of memory");
	int fd = trace_file_open(AT_FDCWD, log, cause);
	if (fd < 0) {
		cause_wrap(cause, "%s", log);
		free(log);
		return -1;
	}
	struct trace_lines tl = { 0, 0, 0 };
	int rc = trace_lines_read(fd, td_feed_line, td, &tl);
	close(fd);
	if (rc < 0) {
		cause_set(cause, "%s: read error", log);
		free(log);
		return -1;
	}
	/* a line the writer did not finish would lie: not applied, but said */
	td->truncated_last_line |= tl.cut;
	td->malformed_lines += tl.too_long;
	trace_dir_recover(td);
	free(log);
	return 0;
}

int trace_dir_load_job(char *const *paths, int n, struct trace_dir **out, char **cause)
{
	*out = NULL;
	struct trace_dir *td = n > 0 ? trace_dir_create(paths[0]) : NULL;
	if (!td)
		return cause_set(cause, n > 0 ? "out of memory" : "no trace directory");
	for (int i = 0; i < n; i++) {
		if ((i > 0 && trace_dir_begin_trace(td, paths[i]) < 0 && cause_set(cause, "out of memory")) ||
		    td_load_one(td, paths[i], cause) < 0) {
			trace_dir_free(td);
			return -1;
		}
	}
	trace_dir_end_job(td);
	*out = td;
	return 0;
}

int trace_dir_load(const char *path, struct trace_dir **out, char **cause)
{
	char *paths[] = { (char *)path };
	return trace_dir_load_job(paths, 1, out, cause);
}

void trace_dir_free(struct trace_dir *td)
{
	if (!td)
		return;
	for (int i = 0; i < td->n_procs; i++) {
		free(td->procs[i].exe);
		free(td->procs[i].hook_version);
		free(td->procs[i].driver);
	}
	for (int i = 0; i < td->n_devices; i++) {
		free(td->devices[i].name);
		free(td->devices[i].arch);
	}
	for (int i = 0; i < td->n_modules; i++) {
		free(td->modules[i].api);
		free(td->modules[i].kind);
		free(td->modules[i].source);
	}
	for (int i = 0; i < td->n_kernels; i++) {
		struct td_kernel *k = &td->kernels[i];
		free(k->name);
		free(k->demangled);
		free(k->ptx_reason);
		free(k->instrument_status);
		free(k->instrument_reason);
		free(k->source_error);
		free(k->instrument_probes);
		free(k->instrument_jit);
		free(k->declined_reason);
		free(k->configs);
		free(k->results);
	}
	for (int i = 0; i < td->n_results; i++) {
		free(td->results[i].file);
		free(td->results[i].path);
		free(td->results[i].allocs);
	}
	free(td->live);
	for (int i = 0; i < td->n_warnings; i++)
		free(td->warnings[i].msg);
	struct td_index *ix = td->index;
	if (ix) {
		free(ix->keys);
		free(ix->vals);
		free(ix);
	}
	free(td->procs);
	free(td->devices);
	free(td->modules);
	free(td->kernels);
	free(td->results);
	free(td->warnings);
	free(td->record_argv);
	free(td->record_version);
	free(td->path);
	trace_dir_free_traces(td);
	free(td);
}
