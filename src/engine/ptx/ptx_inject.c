/* The instrumenter (see ptx_inject.h): the driver, which sets up the probes
 * and their maps, has the body walked (ptx_inject_walk.c) and fills in the
 * result. The files are listed in ptx_inject_int.h.
 *
 * Registers: ours are %ntop_*; each probe's own registers (every `.reg` in
 * its snippets) are renamed to %ntop_p<k>_<name> and declared once in the
 * prologue, so a probe can never clash with the kernel, with another probe,
 * or with itself when its snippet is inserted at many sites, and a register
 * set at entry is still there at exit (block_sched's start clock).
 *
 * Cost (the probed kernel should run as fast as the original): the entry
 * snippets come first, so an entry clock reads before anything of ours.
 * Then, by default, each unit's count address, a static cursor's record
 * start and the lane-0 test are computed once and kept in registers
 * (%ntop_hc<i>, %ntop_hr<i>, %ntop_lane0): the exit code is then stores
 * alone, and a warp leaves as soon as the kernel's last store is issued.
 * Measured on an H100, computing them at the exit instead (~40
 * instructions after the kernel's work, keeping warps resident) cost a
 * memory-bound copy 1.21x against 1.14x. Those registers live through the
 * kernel, so ENGINE_ADDR_AT_EXIT computes them at each exit instead, for
 * kernels whose occupancy they would cut (the hook measures and picks).
 * Addresses are computed once per site: only thread_linear differs within
 * a block, the rest is block-uniform and ptxas keeps it in uniform
 * registers. Entry and exit
 * snippets run exactly once per thread in a fixed order, so a map whose
 * SAVEs all sit there has its cursor known here: no cursor register, the
 * count is a constant the host is told rather than a store per unit
 * (unless a .func can `exit`: engine.h), a record past cap is dropped at
 * instrumentation time. Only SAVEs at instruction tracepoints need a live cursor and record
 * address. A SAVE goes out in as few (vector) stores as alignment allows.
 *
 * Warp maps store only from lane 0 (thread_linear % 32 == 0): lane 0 exists
 * in every warp, even the partial last warp of a block whose size is not a
 * multiple of 32, and reaches exactly one kernel exit, so a warp-level
 * entry/exit probe writes exactly one record per warp. At exits the warp
 * maps' snippets and stores sit behind one branch that only lane 0 takes
 * (our own code: the kernel's reconvergence is untouched; ptxas turns it
 * into an early EXIT of the other lanes). Instruction tracepoints on warp
 * maps record what lane 0 executes. Every lane keeps its own cursor; only
 * lane 0's reaches memory. */
#include "engine/ptx/ptx_inject_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"

/* Gives ip's probe the next map number. */
static int setup_map(struct inj *in, struct iprobe *ip)
{
	const struct probe *p = ip->p;
	if (in->n_maps == ENGINE_MAX_MAPS)
		return cause_set(in->cause, "more than %d maps", ENGINE_MAX_MAPS);
	uint64_t capb = (uint64_t)p->map.cap * p->map.rec_size;
	if (capb == 0 || capb > UINT32_MAX)
		return cause_set(in->cause, "probe '%s': map holds %llu bytes per unit (need 1..4 GiB)",
				 p->name, (unsigned long long)capb);
	ip->map = in->n_maps;
	struct imap *m = &in->maps[in->n_maps++];
	m->pr = ip->index;
	m->cap_bytes = (uint32_t)capb;
	m->rec_size = p->map.rec_size;
	m->slot_major = engine_map_slot_major(&p->map);
	m->sampled = engine_map_sampled(&p->map);
	m->block = p->map.level == PROBE_LEVEL_BLOCK;
	m->warp = p->map.level == PROBE_LEVEL_WARP || m->block;
	in->any_warp |= m->warp;
	return 0;
}

/* The probe whose hooks record regions: one at most. */
static int setup_regions(struct inj *in)
{
	for (int k = 0; k < in->n_pr; k++) {
		int has = 0;
		for (int h = 0; h < in->pr[k].p->n_hooks; h++)
			has |= in->pr[k].p->hooks[h].kind == PROBE_TP_REGION;
		if (!has)
			continue;
		if (in->rprobe)
			return cause_set(in->cause, "probes '%s' and '%s' both record regions: one at a time",
					 in->rprobe->p->name, in->pr[k].p->name);
		in->rprobe = &in->pr[k];
	}
	return 0;
}

static int setup_probes(struct inj *in, struct probe *const *probes, int n_probes)
{
	in->pr = calloc((size_t)(n_probes ? n_probes : 1), sizeof *in->pr);
	if (!in->pr)
		return cause_set(in->cause, "out of memory");
	for (int k = 0; k < n_probes; k++) {
		struct iprobe *ip = &in->pr[in->n_pr++];
		ip->p = probes[k];
		ip->index = k;
		ip->map = -1;
		if (ip->p->has_map && setup_map(in, ip) < 0)
			return -1;
	}
	in->has_exit_work = in->n_maps > 0;
	for (int k = 0; k < in->n_pr; k++) {
		for (int h = 0; h < in->pr[k].p->n_hooks; h++)
			if (in->pr[k].p->hooks[h].kind == PROBE_TP_EXIT)
				in->has_exit_work = 1;
		if (ptx_inject_snip_prepare(in, &in->pr[k]) < 0)
			return -1;
	}
	for (int i = 0; i < in->n_maps; i++) {
		in->any_dyn_warp |= in->maps[i].dynamic && in->maps[i].warp;
		in->maps[i].count_static = !in->maps[i].dynamic && !in->func_exit;
	}
	return setup_regions(in);
}

/* Can a thread leave the kernel other than through the kernel's own
 * ret/exit (where our exit code sits)? Through an `exit` in a .func, or in
 * a .func whose body is not in this module (declared only: linked later). */
static int module_func_exits(const struct ptx_module *m)
{
	for (int t = 0; t < m->n_items; t++) {
		const struct ptx_func *f = m->items[t].kind == PTX_TOP_FUNC ? m->items[t].func : NULL;
		if (!f || f->is_entry)
			continue;
		if (f->is_decl)
			return 1;
		for (int i = 0; i < f->n_body; i++)
			if (f->body[i].kind == PTX_INSN && f->body[i].insn.opcode &&
			    ptx_opcode_matches(f->body[i].insn.opcode, "exit"))
				return 1;
	}
	return 0;
}

static int append_params(struct inj *in)
{
	struct ptx_func *f = in->kernel;
	char **params = realloc(f->params, (size_t)(f->n_params + in->n_maps + 1) * sizeof *params);
	if (!params)
		return cause_set(in->cause, "out of memory");
	f->params = params;
	int n0 = f->n_params;
	for (int i = 0; i < in->n_maps; i++) {
		char *p = NULL;
		if (asprintf(&p, ".param .u64 ntop_map%d", i) < 0) {
			while (f->n_params > n0)
				free(f->params[--f->n_params]);
			return cause_set(in->cause, "out of memory");
		}
		f->params[f->n_params++] = p;
	}
	if (in->n_maps)
		f->has_param_list = 1;
	return 0;
}

/* Frees a body made by the walk: our statements (the originals still
 * belong to their function). */
static void body_free(struct ptx_stmt *out, const unsigned char *mine, int n)
{
	for (int i = 0; i < n; i++)
		if (mine[i])
			free(out[i].text);
	free(out);
}

/* Every walk succeeded: the new bodies replace the old, whose statements
 * were moved over except those replaced by code of ours. */
static void swap_bodies(struct inj *in)
{
	for (int b = 0; b < in->n_bodies; b++) {
		struct walked_body *w = &in->bodies[b];
		for (int i = 0; i < w->n_dropped; i++)
			ptx_stmt_clear(&w->f->body[w->dropped[i]]);
		free(w->f->body);
		w->f->body = w->out;
		w->f->n_body = w->n_out;
		w->out = NULL;
		w->n_out = 0;
	}
}

static void inj_done(struct inj *in, int failed)
{
	for (int k = 0; k < in->n_pr; k++)
		ptx_inject_snip_free(&in->pr[k]);
	free(in->pr);
	free(in->regs);
	free(in->exit_all);
	free(in->exit_lane0);
	free(in->probed);
	free(in->ctx);
	ptx_files_done(&in->files);
	strbuf_done(&in->decls);
	strbuf_done(&in->plain_funcs);
	if (failed)
		body_free(in->out, in->mine, in->n_out);
	free(in->mine);
	for (int b = 0; b < in->n_bodies; b++) {
		if (failed)
			body_free(in->bodies[b].out, in->bodies[b].mine, in->bodies[b].n_out);
		free(in->bodies[b].mine);
		free(in->bodies[b].dropped);
	}
	free(in->bodies);
}

/* The kernel, then every instrumented .func. */
static int walk_all(struct inj *in)
{
	if (ptx_inject_walk_body(in) < 0)
		return -1;
	for (int t = 0; t < in->mod->n_items; t++)
		if (in->probed[t] && ptx_inject_walk_func(in, in->mod->items[t].func) < 0)
			return -1;
	return 0;
}

int ptx_inject(struct ptx_module *m, const char *kernel, struct probe *const *probes,
	       int n_probes, unsigned flags, struct ptx_inject_result *res, struct engine_sites *sites,
	       char **cause)
{
	struct inj in;
	struct engine_sites scratch;
	memset(&in, 0, sizeof in);
	memset(&scratch, 0, sizeof scratch);
	memset(res, 0, sizeof *res);
	if (sites)
		memset(sites, 0, sizeof *sites);
	in.cause = cause;
	in.mod = m;
	in.out_sites = sites ? sites : &scratch;
	in.at_entry = !(flags & ENGINE_ADDR_AT_EXIT);
	in.block_1d = !!(flags & ENGINE_BLOCK_1D);
	in.grid_1d = !!(flags & ENGINE_GRID_1D);
	strbuf_init(&in.decls);
	strbuf_init(&in.plain_funcs);
	in.kernel = ptx_find_func(m, kernel);
	if (!in.kernel || !in.kernel->is_entry || in.kernel->is_decl)
		return cause_set(cause, "no kernel body named %s", kernel);
	if (m->address_size == 32)
		return cause_set(cause, "32-bit PTX (.address_size 32) is not supported");
	int rc = -1;
	in.func_exit = module_func_exits(m);
	if (ptx_files_read(m, &in.files, cause) < 0 || setup_probes(&in, probes, n_probes) < 0)
		goto done;
	if (in.decls.failed) {
		cause_set(cause, "out of memory");
		goto done;
	}
	if (ptx_inject_func_plan(&in) < 0 || walk_all(&in) < 0)
		goto done;
	res->n_params_orig = in.kernel->n_params;
	if (append_params(&in) < 0 || ptx_inject_func_params(&in) < 0 || ptx_inject_sites_finish(&in) < 0)
		goto done;
	swap_bodies(&in);
	if (ptx_inject_plain_funcs(&in) < 0)
		goto done;
	res->n_maps = in.n_maps;
	for (int i = 0; i < in.n_maps; i++) {
		res->map_probe[i] = in.maps[i].pr;
		res->count_static[i] = in.maps[i].count_static;
		res->count_clear[i] = !in.maps[i].count_static && in.func_exit;
		res->count_bytes[i] = inject_sat_add(in.maps[i].entry_bytes, ptx_inject_exit_bytes(&in, i));
	}
	res->sites = in.sites;
	res->sites_no_addr = in.sites_no_addr;
	res->sites_in_funcs = in.sites_in_funcs;
	res->funcs_probed = in.n_probed;
	res->funcs_why = in.sites_in_funcs ? in.funcs_why : NULL;
	rc = 0;
done:
	inj_done(&in, rc < 0);
	engine_sites_done(&scratch);
	if (rc < 0 && sites)
		engine_sites_done(sites);
	return rc;
}
