/* The engine pipeline: parse (only the kernel and what it reaches) -> verify
 * the probes -> inject -> emit, timing each phase. Every failure names its
 * phase in the cause ("verify: ...", "inject: ..."). */
#include "engine/engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"
#include "common/timeutil.h"
#include "engine/ptx/ptx.h"
#include "engine/ptx/ptx_inject.h"
#include "engine/probe/verify.h"

static double engine_ms_since(uint64_t t0)
{
	return (double)(time_mono_ns() - t0) / 1e6;
}

static int engine_count_lines(const char *s, size_t len)
{
	int n = 0;
	for (const char *p = s, *end = s + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		n++;
		if (!nl)
			break;
		p = nl + 1;
	}
	return n;
}

static void engine_copy_target(struct engine_result *res, const struct ptx_module *m)
{
	const char *t = m->target ? m->target : "";
	size_t n = strcspn(t, ", \t");
	if (n >= sizeof res->target)
		n = sizeof res->target - 1;
	memcpy(res->target, t, n);
	res->target[n] = 0;
}

static int engine_collect_globals(struct engine_result *res, const struct ptx_module *m,
				  const char *kernel, char **cause)
{
	const struct ptx_top **vars = NULL;
	int n = 0;
	if (ptx_used_vars(m, kernel, &vars, &n) < 0)
		return cause_set(cause, "globals: cannot list the kernel's module variables");
	int rc = 0;
	for (int i = 0; i < n && rc == 0; i++) {
		const struct ptx_top *v = vars[i];
		if (!v->name || !v->space)
			continue;
		int is_const = !strcmp(v->space, ".const");
		if (!is_const && strcmp(v->space, ".global"))
			continue;
		if (res->n_globals == ENGINE_MAX_GLOBALS ||
		    strlen(v->name) >= sizeof res->globals[0].name) {
			rc = cause_set(cause, "globals: the kernel uses more than %d module variables or a name too long (%s)",
				       ENGINE_MAX_GLOBALS, v->name);
			break;
		}
		struct engine_global *g = &res->globals[res->n_globals++];
		strcpy(g->name, v->name);
		g->is_const = is_const;
	}
	free(vars);
	return rc;
}

static int engine_verify(struct probe *const *probes, int n_probes, char **cause)
{
	for (int i = 0; i < n_probes; i++) {
		if (!probes[i])
			return cause_set(cause, "verify: probe %d is missing", i);
		if (probes[i]->isa != PROBE_ISA_PTX)
			return cause_set(cause, "probe %s is written for AMD GPUs (isa = \"gcn\"), not for PTX",
					 probes[i]->name);
		if (verify_probe(probes[i], cause) < 0)
			return cause_wrap(cause, "verify");
	}
	return 0;
}

static void engine_fill_maps(struct engine_result *res, const struct ptx_inject_result *ir,
			     struct probe *const *probes)
{
	res->n_params_orig = ir->n_params_orig;
	res->n_maps = ir->n_maps;
	for (int i = 0; i < ir->n_maps; i++) {
		const struct probe *p = probes[ir->map_probe[i]];
		struct engine_map *em = &res->maps[i];
		em->map = p->map;
		snprintf(em->probe, sizeof em->probe, "%s", p->name);
		em->param_index = ir->n_params_orig + i;
		em->count_static = ir->count_static[i];
		em->count_bytes = ir->count_bytes[i];
		em->count_clear = ir->count_clear[i];
	}
	res->stats.sites = ir->sites;
	res->stats.sites_in_funcs = ir->sites_in_funcs;
	res->stats.funcs_probed = ir->funcs_probed;
	res->stats.funcs_why = ir->funcs_why;
	res->stats.sites_no_addr = ir->sites_no_addr;
}

int engine_instrument(const char *ptx, size_t len, const char *kernel,
		      struct probe *const *probes, int n_probes, unsigned flags,
		      struct engine_result *res, char **cause)
{
	memset(res, 0, sizeof *res);
	if (!ptx || !kernel || n_probes < 0 || (n_probes && !probes))
		return cause_set(cause, "engine: bad arguments");
	struct ptx_module *m = NULL;
	struct ptx_inject_result ir;
	res->stats.lines_in = engine_count_lines(ptx, len);

	uint64_t t0 = time_mono_ns();
	if (ptx_parse_kernel(ptx, len, kernel, &m, cause) < 0) {
		cause_wrap(cause, "parse");
		goto fail;
	}
	res->stats.ms_parse = engine_ms_since(t0);
	engine_copy_target(res, m);
	if (engine_collect_globals(res, m, kernel, cause) < 0)
		goto fail;

	t0 = time_mono_ns();
	res->pruned_ptx = ptx_emit(m, NULL);
	if (!res->pruned_ptx) {
		cause_set(cause, "emit: out of memory");
		goto fail;
	}
	res->stats.lines_pruned = engine_count_lines(res->pruned_ptx, strlen(res->pruned_ptx));
	res->stats.ms_emit = engine_ms_since(t0);

	t0 = time_mono_ns();
	if (engine_verify(probes, n_probes, cause) < 0)
		goto fail;
	if (ptx_inject(m, kernel, probes, n_probes, flags, &ir, &res->sites, cause) < 0) {
		cause_wrap(cause, "inject");
		goto fail;
	}
	engine_fill_maps(res, &ir, probes);
	res->stats.ms_inject = engine_ms_since(t0);

	t0 = time_mono_ns();
	res->ptx = ptx_emit(m, &res->ptx_len);
	if (!res->ptx) {
		cause_set(cause, "emit: out of memory");
		goto fail;
	}
	res->stats.lines_probed = engine_count_lines(res->ptx, res->ptx_len);
	res->stats.ms_emit += engine_ms_since(t0);
	ptx_free(m);
	return 0;
fail:
	ptx_free(m);
	engine_result_done(res);
	return -1;
}

void engine_result_done(struct engine_result *res)
{
	if (!res)
		return;
	free(res->ptx);
	free(res->pruned_ptx);
	engine_sites_done(&res->sites);
	memset(res, 0, sizeof *res);
}
