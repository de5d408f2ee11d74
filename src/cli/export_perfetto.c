/* Chrome trace-event JSON for Perfetto (export_perfetto.h): collects the
 * launches, blocks and warps, gives each a track where it overlaps nothing, and
 * writes one event per line so the file streams and diffs well. */
#include "cli/export_perfetto.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/export_perfetto_int.h"
#include "common/cause.h"

#define PF_LANES 1000           /* tracks per kernel or SM: tid = key * 1000 + lane */
#define PF_SM_TID 1000000000ull /* SM tracks after the kernels' */
#define PF_WARP_TID 2000000000ull /* warp tracks after the SMs' */

/* ---- collecting ---- */

/* The blocks and warps of every probed launch o selects; launches with
 * neither are counted in st->skipped. */
static int pf_gpu_read(const struct trace_dir *td, const struct pf_opts *o, struct pf_set *s, struct pf_stats *st,
		char **cause)
{
	for (int i = 0; i < td->n_results; i++) {
		const struct td_result *tr = &td->results[i];
		if (o->one && (tr->pid != o->pid || tr->kid != o->kid || tr->seq != o->seq))
			continue;
		const struct td_kernel *k = trace_dir_kernel(td, tr->pid, tr->kid);
		int occ = tr->occ > 0 ? tr->occ : k ? k->occ : 0;
		int dev = td_result_dev(tr);
		uint64_t tpid = tr->pid;
		if (dev >= 0 && td_process_n_devices(td, tr->pid) > 1)
			tpid += (uint64_t)(dev + 1) * PF_PID_GPU;
		int b = pf_launch_blocks(tr, occ, td_device_amd(trace_dir_device(td, tr->pid)), tpid, o, s, st);
		int w = b < 0 ? 0 : pf_launch_warps(tr, tpid, o, s, st);
		if (b < 0 || w < 0)
			return cause_set(cause, "out of memory collecting the blocks and warps");
		if (b == 0 && w == 0)
			st->skipped++;
		else
			st->probed++;
	}
	return 0;
}

/* ---- tracks ---- */

static int pf_launch_cmp(const void *a, const void *b)
{
	const struct pf_launch *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->kid != y->kid)
		return x->kid < y->kid ? -1 : 1;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static int pf_block_cmp(const void *a, const void *b)
{
	const struct pf_block *x = a, *y = b;
	if (x->tpid != y->tpid)
		return x->tpid < y->tpid ? -1 : 1;
	if (x->smid != y->smid)
		return x->smid < y->smid ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static int pf_warp_cmp(const void *a, const void *b)
{
	const struct pf_warp *x = a, *y = b;
	if (x->tpid != y->tpid)
		return x->tpid < y->tpid ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	if (x->smid != y->smid)
		return x->smid < y->smid ? -1 : 1;
	if (x->block != y->block)
		return x->block < y->block ? -1 : 1;
	return x->warp < y->warp ? -1 : x->warp > y->warp;
}

/* The lowest track whose last slice ended by `ts` (ends[] per track of the
 * current group); -1 past PF_LANES. */
static int pf_lane(uint64_t *ends, uint32_t *n, uint64_t ts, uint64_t dur)
{
	uint32_t l = 0;
	while (l < *n && ends[l] > ts)
		l++;
	if (l == PF_LANES)
		return -1;
	if (l == *n)
		(*n)++;
	ends[l] = ts + dur;
	return (int)l;
}

/* Warps sorted by (pid, seq, SM, block, warp), their tracks numbered in turn. */
static void pf_assign_warps(struct pf_set *s)
{
	if (s->n_w)
		qsort(s->w, s->n_w, sizeof *s->w, pf_warp_cmp);
	uint64_t tid = PF_WARP_TID;
	for (size_t i = 0; i < s->n_w; i++) {
		s->w[i].tid0 = tid;
		tid += s->w[i].lanes;
	}
}

/* Sorted by (pid, kid, ts) / (pid, smid, ts), each group's slices on lanes. */
static int pf_assign(struct pf_set *s, struct pf_stats *st, char **cause)
{
	static uint64_t ends[PF_LANES];
	uint32_t n = 0;
	if (s->n_l)
		qsort(s->l, s->n_l, sizeof *s->l, pf_launch_cmp);
	for (size_t i = 0; i < s->n_l; i++) {
		if (i == 0 || s->l[i].pid != s->l[i - 1].pid || s->l[i].kid != s->l[i - 1].kid)
			n = 0;
		int l = pf_lane(ends, &n, s->l[i].ts, s->l[i].dur);
		if (l < 0)
			return cause_set(cause, "kernel %u: more than %d launches at once", s->l[i].kid, PF_LANES);
		s->l[i].lane = (uint32_t)l;
	}
	n = 0;
	if (s->n_b)
		qsort(s->b, s->n_b, sizeof *s->b, pf_block_cmp);
	for (size_t i = 0; i < s->n_b; i++) {
		if (i == 0 || s->b[i].tpid != s->b[i - 1].tpid || s->b[i].smid != s->b[i - 1].smid) {
			st->sm_tracks += n;
			n = 0;
		}
		int l = pf_lane(ends, &n, s->b[i].ts, s->b[i].dur);
		if (l < 0)
			return cause_set(cause, "SM %u: more than %d blocks at once", s->b[i].smid, PF_LANES);
		s->b[i].lane = (uint32_t)l;
	}
	st->sm_tracks += n;
	pf_assign_warps(s);
	return 0;
}

static uint64_t pf_origin(const struct pf_set *s)
{
	uint64_t o = UINT64_MAX;
	for (size_t i = 0; i < s->n_l; i++)
		o = s->l[i].ts < o ? s->l[i].ts : o;
	for (size_t i = 0; i < s->n_b; i++)
		o = s->b[i].ts < o ? s->b[i].ts : o;
	for (size_t i = 0; i < s->n_w; i++)
		o = s->w[i].ts < o ? s->w[i].ts : o;
	return o == UINT64_MAX ? 0 : o;
}

/* ---- writing ---- */

struct pf_out {
	FILE *f;
	struct strbuf sb;    /* one event */
	uint64_t origin;     /* ns */
	int first;
	const struct trace_dir *td;
};

/* Microseconds with three decimals, exact for integer ns. */
static void pf_us(struct cli_json *j, const char *key, uint64_t ns)
{
	cli_json_key(j, key);
	strbuf_printf(j->sb, "%llu.%03llu", (unsigned long long)(ns / 1000), (unsigned long long)(ns % 1000));
}

static void pf_emit(struct pf_out *o)
{
	fputs(o->first ? "\n" : ",\n", o->f);
	o->first = 0;
	fwrite(o->sb.data ? o->sb.data : "", 1, o->sb.len, o->f);
	o->sb.len = 0;
}

/* {"ph":..,"pid":..,"tid":.., then the caller's members and the end. */
static void pf_begin(struct pf_out *o, struct cli_json *j, const char *ph, uint64_t pid, uint64_t tid)
{
	cli_json_object(j, &o->sb);
	cli_json_string(j, "ph", ph);
	cli_json_u64(j, "pid", pid);
	cli_json_u64(j, "tid", tid);
}

static void pf_meta(struct pf_out *o, uint64_t pid, uint64_t tid, const char *what, const char *name, long sort)
{
	struct cli_json j, a;
	pf_begin(o, &j, "M", pid, tid);
	cli_json_string(&j, "name", what);
	cli_json_key(&j, "args");
	cli_json_object(&a, &o->sb);
	if (name)
		cli_json_string(&a, "name", name);
	else
		cli_json_int(&a, "sort_index", sort);
	cli_json_end(&a);
	cli_json_end(&j);
	pf_emit(o);
}

static const char *pf_kname(const struct trace_dir *td, uint32_t pid, uint32_t kid)
{
	const struct td_kernel *k = trace_dir_kernel(td, pid, kid);
	return !k ? "(kernel not in the log)" : k->demangled ? k->demangled : k->name ? k->name : "(unnamed)";
}

static void pf_thread(struct pf_out *o, uint64_t pid, uint64_t tid, const char *name)
{
	pf_meta(o, pid, tid, "thread_name", name, 0);
	pf_meta(o, pid, tid, "thread_sort_index", NULL, (long)tid); /* kernels first, then SMs in order */
}

/* The process of pid, or (pid >= PF_PID_GPU) that process's tracks of one GPU. */
static void pf_process(struct pf_out *o, uint64_t tpid)
{
	uint32_t pid = (uint32_t)(tpid % PF_PID_GPU);
	int gpu = (int)(tpid / PF_PID_GPU) - 1;
	const struct td_process *p = trace_dir_process(o->td, pid);
	const struct td_device *d = gpu >= 0 ? trace_dir_device_of(o->td, pid, gpu) : trace_dir_device(o->td, pid);
	char name[512], where[200] = "";
	const char *exe = p && p->exe ? strrchr(p->exe, '/') : NULL;
	if (gpu >= 0)
		snprintf(where, sizeof where, ", GPU %d%s%s", gpu, d && d->name ? ": " : "", d && d->name ? d->name : "");
	else if (td_process_n_devices(o->td, pid) > 1)
		snprintf(where, sizeof where, ", %d GPUs", td_process_n_devices(o->td, pid));
	else if (d && d->name)
		snprintf(where, sizeof where, ", %s", d->name);
	char who[320];
	snprintf(name, sizeof name, "%s (pid %s%s)", exe ? exe + 1 : p && p->exe ? p->exe : "process",
		 td_process_label(o->td, pid, who, sizeof who), where);
	pf_meta(o, tpid, 0, "process_name", name, 0);
}

/* The kernel slice around launches [i, end) of one kernel (lane 0 track). */
static void pf_kernel(struct pf_out *o, const struct pf_set *s, size_t i, size_t end)
{
	const struct pf_launch *l = &s->l[i];
	uint64_t t0 = l->ts, t1 = l->ts;
	for (size_t k = i; k < end; k++)
		t1 = s->l[k].ts + s->l[k].dur > t1 ? s->l[k].ts + s->l[k].dur : t1;
	uint32_t lanes = 0;
	for (size_t k = i; k < end; k++)
		lanes = s->l[k].lane + 1 > lanes ? s->l[k].lane + 1 : lanes;
	const char *name = pf_kname(o->td, l->pid, l->kid);
	char tname[600];
	for (uint32_t ln = 0; ln < lanes; ln++) {
		if (ln)
			snprintf(tname, sizeof tname, "kernel %u (%u): %s", l->kid, ln + 1, name);
		else
			snprintf(tname, sizeof tname, "kernel %u: %s", l->kid, name);
		pf_thread(o, l->pid, (uint64_t)l->kid * PF_LANES + ln, tname);
	}
	struct cli_json j, a;
	pf_begin(o, &j, "X", l->pid, (uint64_t)l->kid * PF_LANES);
	cli_json_string(&j, "name", name);
	cli_json_string(&j, "cat", "kernel");
	pf_us(&j, "ts", t0 - o->origin);
	pf_us(&j, "dur", t1 - t0);
	cli_json_key(&j, "args");
	cli_json_object(&a, &o->sb);
	cli_json_u64(&a, "kid", l->kid);
	cli_json_u64(&a, "launch_lines", end - i);
	const struct td_kernel *k = trace_dir_kernel(o->td, l->pid, l->kid);
	if (k)
		cli_json_u64(&a, "launches", k->launches);
	cli_json_end(&a);
	cli_json_end(&j);
	pf_emit(o);
}

static void pf_dims3(struct cli_json *j, const char *key, const uint32_t d[3])
{
	cli_json_key(j, key);
	strbuf_printf(j->sb, "[%u,%u,%u]", d[0], d[1], d[2]);
}

static void pf_launch(struct pf_out *o, const struct pf_launch *l)
{
	struct cli_json j, a;
	char name[64];
	snprintf(name, sizeof name, "seq %llu", (unsigned long long)l->seq);
	pf_begin(o, &j, "X", l->pid, (uint64_t)l->kid * PF_LANES + l->lane);
	cli_json_string(&j, "name", name);
	cli_json_string(&j, "cat", "launch");
	pf_us(&j, "ts", l->ts - o->origin);
	pf_us(&j, "dur", l->dur);
	cli_json_key(&j, "args");
	cli_json_object(&a, &o->sb);
	cli_json_u64(&a, "seq", l->seq);
	cli_json_string(&a, "api", l->api);
	if (l->has_config) {
		pf_dims3(&a, "grid", l->grid);
		pf_dims3(&a, "block", l->block);
	}
	cli_json_bool(&a, "probed", l->probed);
	cli_json_string(&a, "duration", l->has_dur ? l->dur_from : "not measured");
	cli_json_end(&a);
	cli_json_end(&j);
	pf_emit(o);
}

static void pf_block(struct pf_out *o, const struct pf_block *b)
{
	struct cli_json j, a;
	char name[64];
	snprintf(name, sizeof name, "block %llu", (unsigned long long)b->index);
	pf_begin(o, &j, "X", b->tpid, PF_SM_TID + (uint64_t)b->smid * PF_LANES + b->lane);
	cli_json_string(&j, "name", name);
	cli_json_string(&j, "cat", "block");
	pf_us(&j, "ts", b->ts - o->origin);
	pf_us(&j, "dur", b->dur);
	cli_json_key(&j, "args");
	cli_json_object(&a, &o->sb);
	cli_json_u64(&a, "block", b->index);
	cli_json_u64(&a, "x", b->xyz[0]);
	cli_json_u64(&a, "y", b->xyz[1]);
	cli_json_u64(&a, "z", b->xyz[2]);
	cli_json_u64(&a, "sm", b->smid);
	cli_json_u64(&a, "warps", b->warps);
	cli_json_string(&a, "kernel", pf_kname(o->td, b->pid, b->kid));
	cli_json_u64(&a, "seq", b->seq);
	cli_json_u64(&a, "start_cycles", b->start_cyc);
	cli_json_u64(&a, "end_cycles", b->end_cyc);
	if (b->gstart)
		cli_json_u64(&a, "gstart_ns", b->gstart);
	cli_json_end(&a);
	cli_json_end(&j);
	pf_emit(o);
}

/* Names of the SM tracks of one process's blocks [i, j) (sorted by SM). */
static void pf_sm_threads(struct pf_out *o, const struct pf_set *s, size_t i, size_t j)
{
	for (size_t k = i, g; k < j; k = g) {
		uint32_t lanes = 0, smid = s->b[k].smid;
		for (g = k; g < j && s->b[g].smid == smid; g++)
			lanes = s->b[g].lane + 1 > lanes ? s->b[g].lane + 1 : lanes;
		/* AMD GPUs' lanes are compute units */
		const char *lane = td_device_amd(trace_dir_device(o->td, s->b[k].pid)) ? "CU" : "SM";
		for (uint32_t l = 0; l < lanes; l++) {
			char name[64];
			if (l)
				snprintf(name, sizeof name, "%s %u slot %u", lane, smid, l + 1);
			else
				snprintf(name, sizeof name, "%s %u", lane, smid);
			pf_thread(o, s->b[k].tpid, PF_SM_TID + (uint64_t)smid * PF_LANES + l, name);
		}
	}
}

/* A warp's tracks and slices: its life, then its region segments. */
static void pf_warp(struct pf_out *o, const struct pf_set *s, const struct pf_warp *w)
{
	char name[96];
	for (uint32_t l = 0; l < w->lanes; l++) {
		int n = snprintf(name, sizeof name, "warp %llu.%u SM %u seq %llu", (unsigned long long)w->block, w->warp,
				 w->smid, (unsigned long long)w->seq);
		if (l && n > 0 && (size_t)n < sizeof name)
			snprintf(name + n, sizeof name - (size_t)n, " (%u)", l + 1);
		pf_thread(o, w->tpid, w->tid0 + l, name);
	}
	struct cli_json j, a;
	snprintf(name, sizeof name, "warp %llu.%u", (unsigned long long)w->block, w->warp);
	pf_begin(o, &j, "X", w->tpid, w->tid0);
	cli_json_string(&j, "name", name);
	cli_json_string(&j, "cat", "warp");
	pf_us(&j, "ts", w->ts - o->origin);
	pf_us(&j, "dur", w->dur);
	cli_json_key(&j, "args");
	cli_json_object(&a, &o->sb);
	cli_json_u64(&a, "block", w->block);
	cli_json_u64(&a, "warp", w->warp);
	cli_json_u64(&a, "sm", w->smid);
	cli_json_string(&a, "kernel", pf_kname(o->td, w->pid, w->kid));
	cli_json_u64(&a, "seq", w->seq);
	cli_json_u64(&a, "entry_cycles", w->entry_cyc);
	cli_json_u64(&a, "exit_cycles", w->exit_cyc);
	cli_json_bool(&a, "truncated", w->truncated);
	cli_json_end(&a);
	cli_json_end(&j);
	pf_emit(o);
	for (uint32_t i = 0; i < w->n_segs; i++) {
		const struct pf_rseg *g = &s->g[w->seg0 + i];
		if (g->lane < 0)
			continue;
		pf_begin(o, &j, "X", w->tpid, w->tid0 + (uint64_t)g->lane);
		cli_json_string(&j, "name", g->name);
		cli_json_string(&j, "cat", "region");
		pf_us(&j, "ts", g->ts - o->origin);
		pf_us(&j, "dur", g->dur);
		cli_json_key(&j, "args");
		cli_json_object(&a, &o->sb);
		cli_json_u64(&a, "start_cycles", g->start_cyc);
		cli_json_u64(&a, "end_cycles", g->end_cyc);
		cli_json_u64(&a, "cycles", g->end_cyc - g->start_cyc);
		cli_json_string(&a, "line", g->where[0] ? g->where : NULL);
		cli_json_end(&a);
		cli_json_end(&j);
		pf_emit(o);
	}
}

static void pf_other(struct pf_out *o, const struct pf_stats *st)
{
	struct cli_json j;
	cli_json_object(&j, &o->sb);
	cli_json_string(&j, "ntop", NTOP_VERSION);
	cli_json_string(&j, "trace", o->td->path);
	cli_json_string(&j, "time", st->sm_clock ? "mixed: see note" : "global timer");
	cli_json_u64(&j, "origin_ns", o->origin);
	cli_json_u64(&j, "blocks", st->blocks);
	cli_json_u64(&j, "warps", st->warps);
	cli_json_u64(&j, "region_slices", st->region_slices - st->region_slices_dropped);
	cli_json_u64(&j, "region_slices_not_drawn", st->region_slices_dropped);
	cli_json_u64(&j, "warps_not_written", st->warps_cut);
	cli_json_u64(&j, "probed_launches_skipped", st->skipped);
	cli_json_string(&j, "note", st->note[0] ? st->note : NULL);
	cli_json_end(&j);
}

/* Every event of pid: process name, kernels and launches, SM tracks,
 * blocks, warps. */
static void pf_write_pid(struct pf_out *o, const struct pf_set *s, uint64_t pid, size_t *li, size_t *bi, size_t *wi,
			 struct cli_progress *pr)
{
	pf_process(o, pid);
	while (*li < s->n_l && s->l[*li].pid == pid) {
		size_t j = *li;
		while (j < s->n_l && s->l[j].pid == pid && s->l[j].kid == s->l[*li].kid)
			j++;
		pf_kernel(o, s, *li, j);
		for (; *li < j; (*li)++)
			pf_launch(o, &s->l[*li]);
	}
	size_t b0 = *bi, j = *bi;
	while (j < s->n_b && s->b[j].tpid == pid)
		j++;
	pf_sm_threads(o, s, b0, j);
	for (; *bi < j; (*bi)++) {
		pf_block(o, &s->b[*bi]);
		if ((*bi & 1023) == 0)
			cli_progress_update(pr, *bi, s->n_b + s->n_w);
	}
	for (; *wi < s->n_w && s->w[*wi].tpid == pid; (*wi)++) {
		pf_warp(o, s, &s->w[*wi]);
		if ((*wi & 255) == 0)
			cli_progress_update(pr, s->n_b + *wi, s->n_b + s->n_w);
	}
}

/* The lowest pid with events left. */
static uint64_t pf_next_pid(const struct pf_set *s, size_t li, size_t bi, size_t wi)
{
	uint64_t pid = UINT64_MAX;
	if (li < s->n_l)
		pid = s->l[li].pid;
	if (bi < s->n_b && s->b[bi].tpid < pid)
		pid = s->b[bi].tpid;
	if (wi < s->n_w && s->w[wi].tpid < pid)
		pid = s->w[wi].tpid;
	return pid;
}

static int pf_write(FILE *f, const struct trace_dir *td, const struct pf_set *s, struct pf_stats *st,
		    struct cli_progress *pr)
{
	struct pf_out o = {f, {0}, pf_origin(s), 1, td};
	strbuf_init(&o.sb);
	fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":", f);
	pf_other(&o, st);
	fwrite(o.sb.data ? o.sb.data : "", 1, o.sb.len, f);
	o.sb.len = 0;
	fputs(",\"traceEvents\":[", f);
	size_t li = 0, bi = 0, wi = 0;
	while (li < s->n_l || bi < s->n_b || wi < s->n_w)
		pf_write_pid(&o, s, pf_next_pid(s, li, bi, wi), &li, &bi, &wi, pr);
	fputs("\n]}\n", f);
	int failed = o.sb.failed;
	strbuf_done(&o.sb);
	return failed ? -1 : 0;
}

int export_perfetto_write(FILE *f, const struct trace_dir *td, const struct pf_opts *o, struct pf_stats *st,
			  struct cli_progress *pr, char **cause)
{
	memset(st, 0, sizeof *st);
	struct pf_set s = {0};
	int rc = -1;
	for (int i = 0; i < td->n_traces; i++)
		if (pf_host_read(td->traces[i].path, (uint32_t)i << TD_PID_SHIFT, o, &s, cause) < 0)
			goto out;
	if (pf_gpu_read(td, o, &s, st, cause) < 0 ||
	    pf_assign(&s, st, cause) < 0)
		goto out;
	st->launches = s.n_l;
	st->blocks = s.n_b;
	if (pf_write(f, td, &s, st, pr) < 0) {
		cause_set(cause, "out of memory writing the JSON");
		goto out;
	}
	rc = fflush(f) == 0 && !ferror(f) ? 0 : cause_set(cause, "write failed: %s", strerror(errno ? errno : EIO));
out:
	pf_set_free(&s);
	return rc;
}
