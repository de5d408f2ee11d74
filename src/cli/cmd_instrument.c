/* ntop instrument: the probe engine offline, on a file instead of a running
 * application. Takes what the hook would see (PTX text, a fatbin, a cubin, or
 * a host binary with an embedded .nv_fatbin), picks the PTX, finds the kernel
 * by a forgiving name match, and writes the probed PTX so it can be read,
 * diffed or assembled with ptxas. AMD inputs (code objects, offload bundles,
 * HIP binaries) go to cmd_instrument_amd.c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/demangle.h"
#include "engine/ptx/assemble.h"
#include "engine/engine.h"
#include "engine/image/image.h"
#include "engine/ptx/ptx.h"

struct ins_opts {
	const char **probes;
	int n_probes;
	const char **regions; /* -r NAME=SPEC */
	int n_regions;
	int all_sites;
	const char *kernel, *image, *out, *arch;
	int assemble;
	int addr_at_exit;
	unsigned shape; /* ENGINE_BLOCK_1D, ENGINE_GRID_1D */
	int sm;
};

static void instrument_help(void)
{
	printf("Usage: ntop instrument -p PROBE [-p PROBE]... -k NAME IMAGE -o OUT\n"
	       "                       [-r NAME=SPEC]... [--sites] [--arch sm_XX|gfxNNN]\n"
	       "                       [--assemble] [--addr-at-exit] [--1d | --1d-block | --1d-grid]\n"
	       "\n"
	       "Runs the probe engine on one kernel of IMAGE without a GPU: IMAGE is a PTX\n"
	       "file, a fatbin, or an executable/shared library with embedded PTX (.nv_fatbin).\n"
	       "A cubin holds SASS only and cannot be probed. Writes the probed PTX to OUT and\n"
	       "prints line counts, instrumented sites (with their source lines when the PTX\n"
	       "has line information: nvcc -lineinfo or -G, Triton, Numba), time per phase\n"
	       "and the maps. Device functions the kernel calls are instrumented too.\n"
	       "\n"
	       "AMD GPUs: IMAGE may also be a code object, an offload bundle (plain or\n"
	       "compressed) or a HIP executable/library (.hip_fatbin); OUT is then the probed\n"
	       "code object, checked to disassemble to the kernel plus exactly the inserted\n"
	       "code. Probes are the GCN ones (probes/amd/, isa = \"gcn\"); --arch gfxNNN\n"
	       "picks the code object (default: the first). Needs LLVM 19 (llvm-mc-19,\n"
	       "llvm-objdump-19). Nothing here was run on an AMD GPU (doc/amdgpu.md).\n"
	       "\n"
	       "Options:\n"
	       "  -p, --probe PROBE   built-in probe name or .toml file (repeatable)\n"
	       "  -k, --kernel NAME   kernel to probe: exact or partial mangled or demangled\n"
	       "                      name; several matches are listed and nothing is written\n"
	       "  -o, --output FILE   where to write the probed PTX\n"
	       "  -r, --region NAME=SPEC  a region for the probe that records regions\n"
	       "                      (-p regions), replacing its defaults; repeatable. SPEC:\n"
	       "                      FILE:LINE or FILE:FIRST-LAST (source lines), @tensor,\n"
	       "                      @load, @store, @wait, @async (instruction classes), or\n"
	       "                      @loop:FILE:LINE (each iteration of the innermost loop\n"
	       "                      holding that line)\n"
	       "      --sites         list every site (default: the first 40)\n"
	       "      --arch sm_XX    device to pick PTX for (default: the highest PTX in IMAGE);\n"
	       "                      gfxNNN[:xnack-...] for AMD images\n"
	       "      --assemble      also run ptxas on the pruned and probed PTX and print the\n"
	       "                      registers each uses ($NTOP_PTXAS, else PATH's,\n"
	       "                      $TRITON_PTXAS_PATH, $CUDA_HOME/bin's or the toolkit's)\n"
	       "      --addr-at-exit  compute each unit's map addresses at every exit instead\n"
	       "                      of once at entry: fewer registers, slower exits (the hook\n"
	       "                      uses it when the entry form would cut occupancy or spill)\n"
	       "      --1d-block      the probed code assumes 1D blocks (ntid.y = ntid.z = 1) and\n"
	       "                      reads no y/z thread index: cheaper, and WRONG for any other\n"
	       "                      block shape (the hook builds it only for launches of that\n"
	       "                      shape, and a separate copy for others)\n"
	       "      --1d-grid       the same for 1D grids (nctaid.y = nctaid.z = 1)\n"
	       "      --1d            both\n"
	       "  -h, --help          this text\n"
	       "\n"
	       "Exit status: 0 written, 1 the engine or ptxas failed, 2 usage error or an\n"
	       "ambiguous kernel name.\n"
	       "\n"
	       "Examples:\n"
	       "  ntop instrument -p block_sched -k vecadd vecadd.ptx -o vecadd.probed.ptx\n"
	       "  ntop instrument -p block_sched -k sgemm --arch sm_90 ./bench -o s.ptx --assemble\n"
	       "  ntop instrument -p regions -r load=attn.py:40-55 -r mma=@tensor -k attn k.ptx -o p.ptx\n");
}

static int ins_parse_arch(const char *s, int *sm)
{
	unsigned long v;
	char num[16];
	if (strncmp(s, "sm_", 3) == 0 || strncmp(s, "compute_", 8) == 0)
		s = strchr(s, '_') + 1;
	size_t n = strspn(s, "0123456789");
	if (n == 0 || n >= sizeof num || (s[n] && strcmp(s + n, "a") && strcmp(s + n, "f")))
		return -1;
	memcpy(num, s, n);
	num[n] = 0;
	if (cli_parse_ulong(num, &v) < 0 || v < 10 || v > 1000)
		return -1;
	*sm = (int)v;
	return 0;
}

static int ins_parse(int argc, char **argv, struct ins_opts *o)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
		int r;
		if (cli_is_help(a)) {
			instrument_help();
			return 1;
		}
		if ((r = cli_opt("instrument", argc, argv, &i, "-p", "--probe", &v)) != 0) {
			const char **np = r > 0 ? realloc(o->probes, (size_t)(o->n_probes + 1) * sizeof *np) : NULL;
			if (!np)
				return 2;
			np[o->n_probes++] = v;
			o->probes = np;
		} else if ((r = cli_opt("instrument", argc, argv, &i, "-k", "--kernel", &v)) != 0) {
			if (r < 0)
				return 2;
			o->kernel = v;
		} else if ((r = cli_opt("instrument", argc, argv, &i, "-o", "--output", &v)) != 0) {
			if (r < 0)
				return 2;
			o->out = v;
		} else if ((r = cli_opt("instrument", argc, argv, &i, NULL, "--arch", &v)) != 0) {
			if (r < 0)
				return 2;
			if (strncmp(v, "gfx", 3) && ins_parse_arch(v, &o->sm) < 0)
				return cli_usage("instrument", "--arch wants sm_XX (e.g. sm_90) or gfxNNN, not '%s'", v);
			o->arch = v;
		} else if ((r = cli_opt("instrument", argc, argv, &i, "-r", "--region", &v)) != 0) {
			const char **nr = r > 0 ? realloc(o->regions, (size_t)(o->n_regions + 1) * sizeof *nr) : NULL;
			if (!nr)
				return 2;
			nr[o->n_regions++] = v;
			o->regions = nr;
		} else if (strcmp(a, "--sites") == 0) {
			o->all_sites = 1;
		} else if (strcmp(a, "--assemble") == 0) {
			o->assemble = 1;
		} else if (strcmp(a, "--addr-at-exit") == 0) {
			o->addr_at_exit = 1;
		} else if (strcmp(a, "--1d") == 0) {
			o->shape = ENGINE_BLOCK_1D | ENGINE_GRID_1D;
		} else if (strcmp(a, "--1d-block") == 0) {
			o->shape |= ENGINE_BLOCK_1D;
		} else if (strcmp(a, "--1d-grid") == 0) {
			o->shape |= ENGINE_GRID_1D;
		} else if (a[0] == '-' && a[1]) {
			return cli_usage("instrument", "unknown option '%s'", a);
		} else if (o->image) {
			return cli_usage("instrument", "one image at a time ('%s' and '%s')", o->image, a);
		} else {
			o->image = a;
		}
	}
	if (!o->n_probes)
		return cli_usage("instrument", "give a probe with -p");
	if (!o->kernel)
		return cli_usage("instrument", "give the kernel with -k");
	if (!o->image)
		return cli_usage("instrument", "give the image (PTX, fatbin or executable) to instrument");
	if (!o->out)
		return cli_usage("instrument", "give the output file with -o");
	return 0;
}

/* Highest PTX arch in the image, else its highest SASS arch (so messages
 * name a real device), else 0. */
static int ins_default_sm(const void *img, size_t size)
{
	struct image_entry *e = NULL;
	int n = 0, ptx = 0, any = 0;
	if (image_fatbin_entries(img, size, &e, &n, NULL) < 0)
		return 0;
	for (int i = 0; i < n; i++) {
		if (e[i].is_ptx && e[i].arch > ptx)
			ptx = e[i].arch;
		if (e[i].arch > any)
			any = e[i].arch;
	}
	free(e);
	return ptx ? ptx : any;
}

static int ins_pick_ptx(const struct ins_opts *o, const void *img, size_t size, char **ptx, size_t *len)
{
	enum image_kind kind = image_classify(img, size, NULL);
	static const char *const kinds[] = {"unknown", "PTX", "fatbin", "cubin", "host ELF"};
	if (kind == IMAGE_UNKNOWN) {
		cli_err("%s: not PTX, a fatbin, a cubin or an ELF binary", o->image);
		return -1;
	}
	int sm = o->sm ? o->sm : ins_default_sm(img, size);
	char *cause = NULL;
	if (image_pick_ptx(img, size, sm ? sm : 90, ptx, len, &cause) < 0) {
		cli_err("%s (%s): %s", o->image, kinds[kind], cause ? cause : "no PTX");
		free(cause);
		return -1;
	}
	printf("image: %s (%s)", o->image, kinds[kind]);
	if (kind != IMAGE_PTX)
		printf(", PTX for sm_%d", sm);
	printf("\n");
	return 0;
}

const char *cli_match_kernel(const char *want, const char **names, int n, int *rc)
{
	int exact = -1, n_exact = 0, n_sub = 0;
	int *sub = calloc((size_t)n + 1, sizeof *sub);
	for (int i = 0; sub && i < n; i++) {
		char *dem = demangle(names[i]);
		char *base = demangle_base(names[i]);
		if (!strcmp(names[i], want) || (dem && !strcmp(dem, want)) || (base && !strcmp(base, want))) {
			exact = i;
			n_exact++;
		}
		if (strstr(names[i], want) || (dem && strstr(dem, want)))
			sub[n_sub++] = i;
		free(dem);
		free(base);
	}
	const char *pick = NULL;
	if (n_exact == 1)
		pick = names[exact];
	else if (n_exact == 0 && n_sub == 1)
		pick = names[sub[0]];
	if (pick) {
		char *dem = demangle(pick);
		printf("kernel: %s\n", dem ? dem : pick);
		if (dem && strcmp(dem, pick))
			printf("        %s\n", pick);
		free(dem);
	}
	if (!pick && n_sub == 0) {
		cli_err("no kernel matches '%s'; the image has %d kernel%s:", want, n, n == 1 ? "" : "s");
		*rc = 2;
	} else if (!pick) {
		cli_err("'%s' matches %d kernels; give more of the name:", want, n_sub);
		*rc = 2;
	}
	for (int i = 0; !pick && i < (n_sub ? n_sub : n) && i < 50; i++) {
		char *dem = demangle(names[n_sub ? sub[i] : i]);
		fprintf(stderr, "  %s\n", dem ? dem : names[n_sub ? sub[i] : i]);
		free(dem);
	}
	free(sub);
	return pick;
}

static void ins_stats(const struct engine_result *res)
{
	const struct engine_stats *s = &res->stats;
	printf("lines: %d in, %d after pruning, %d probed\n", s->lines_in, s->lines_pruned, s->lines_probed);
	printf("sites: %d instrumented", s->sites);
	if (s->funcs_probed)
		printf(" (in the kernel and %d device function%s)", s->funcs_probed, s->funcs_probed == 1 ? "" : "s");
	if (s->sites_in_funcs)
		printf(" (%d more inside device functions, not instrumented: %s)", s->sites_in_funcs,
		       s->funcs_why ? s->funcs_why : "?");
	if (s->sites_no_addr)
		printf(" (%d with no plain address for ADDR/BYTES, not instrumented)", s->sites_no_addr);
	printf("\ntime: parse %.2f ms, prune %.2f ms, inject %.2f ms, emit %.2f ms\n", s->ms_parse,
	       s->ms_prune, s->ms_inject, s->ms_emit);
	for (int i = 0; i < res->n_maps; i++) {
		const struct probe_map *m = &res->maps[i].map;
		printf("map %s (probe %s): per %s, %u x %u B, kernel parameter %d", m->name, res->maps[i].probe,
		       probe_level_name(m->level), m->cap, m->rec_size, res->maps[i].param_index);
		if (res->maps[i].count_static)
			printf(", no count stores (every unit's count is %u B)", res->maps[i].count_bytes);
		if (engine_map_records_clear(m))
			printf(", records cleared before each launch (folded fields)");
		printf("\n");
	}
	if (res->n_globals)
		printf("module variables used: %d\n", res->n_globals);
}

/* The site table: where each site is, in the source when the PTX says. */
static void ins_sites(const struct engine_result *res, const struct probe *rprobe, int all)
{
	const struct engine_sites *t = &res->sites;
	int lines = 0;
	for (int i = 0; i < t->n; i++)
		lines += t->s[i].line > 0;
	if (!t->n)
		return;
	if (!lines)
		printf("source lines: none in this PTX (nvcc/NVRTC: -lineinfo); sites are named by PTX line\n");
	for (int i = 0; i < t->n && (all || i < 40); i++) {
		const struct engine_site *s = &t->s[i];
		char where[512], what[96];
		if (s->line > 0) {
			const char *f = t->files[s->file], *b = strrchr(f, '/');
			int w = snprintf(where, sizeof where, "%s:%d", b ? b + 1 : f, s->line);
			if (s->at_line > 0 && w > 0 && (size_t)w < sizeof where) {
				const char *g = t->files[s->at_file], *c = strrchr(g, '/');
				snprintf(where + w, sizeof where - (size_t)w, " (inlined at %s:%d)", c ? c + 1 : g, s->at_line);
			}
		} else {
			snprintf(where, sizeof where, "-");
		}
		if (s->kind == ENGINE_SITE_INSN)
			snprintf(what, sizeof what, "%s", s->opcode);
		else
			snprintf(what, sizeof what, "%s %s", s->kind == ENGINE_SITE_BEGIN ? "begin" : "end",
				 rprobe && s->region < rprobe->n_regions ? rprobe->regions[s->region].name : "?");
		char *fn = s->func ? demangle(t->funcs[s->func]) : NULL;
		printf("  site %-4d %-28s %-32s ptx:%d%s%s\n", i, what, where, s->ptx_line, s->func ? " in " : "",
		       s->func ? (fn ? fn : t->funcs[s->func]) : "");
		free(fn);
	}
	if (!all && t->n > 40)
		printf("  ... %d more sites (--sites lists them)\n", t->n - 40);
}

/* Each region and its boundaries; a region no instruction is in, said. */
static void ins_regions(const struct engine_result *res, const struct probe *rprobe)
{
	for (int r = 0; rprobe && r < rprobe->n_regions; r++) {
		int n = 0;
		for (int i = 0; i < res->sites.n; i++)
			n += res->sites.s[i].kind != ENGINE_SITE_INSN && res->sites.s[i].region == r;
		if (n)
			printf("region %s (%s): %d boundaries\n", rprobe->regions[r].name, rprobe->regions[r].spec, n);
		else
			printf("region %s (%s): no instruction of the kernel is in it (warning)\n",
			       rprobe->regions[r].name, rprobe->regions[r].spec);
	}
}

/* The probe that records regions, if any. */
static struct probe *ins_region_probe(struct probe **probes, int n)
{
	for (int i = 0; i < n; i++)
		for (int h = 0; h < probes[i]->n_hooks; h++)
			if (probes[i]->hooks[h].kind == PROBE_TP_REGION)
				return probes[i];
	return NULL;
}

/* A copy built for 1-D launches is wrong for others: said every time. */
static void ins_shape(unsigned shape)
{
	if (shape)
		printf("shape: launches with %s only (unit addresses are wrong for any other shape)\n",
		       shape == ENGINE_BLOCK_1D ? "1-D blocks" : shape == ENGINE_GRID_1D ? "a 1-D grid"
											: "1-D blocks and a 1-D grid");
}

/* ptxas on one PTX text; registers or -1. */
static int ins_ptxas(const char *ptx, size_t len, const char *arch, const char *what)
{
	struct assemble_info info = { .registers = -1 };
	char *cause = NULL;
	int rc = assemble_ptxas(ptx, len, arch, NULL, &info, &cause);
	int regs = rc == 0 ? info.registers : -1;
	if (rc < 0)
		cli_err("ptxas on the %s PTX failed: %s", what, cause ? cause : "?");
	free(cause);
	assemble_info_done(&info);
	return rc < 0 ? -2 : regs;
}

static int ins_assemble(const struct engine_result *res, int sm)
{
	char arch[32];
	if (assemble_pick_arch(res->ptx, sm, arch, sizeof arch) < 0) {
		cli_err("cannot choose a ptxas -arch for target %s", res->target);
		return 1;
	}
	int before = res->pruned_ptx ? ins_ptxas(res->pruned_ptx, strlen(res->pruned_ptx), arch, "pruned") : -1;
	int after = ins_ptxas(res->ptx, res->ptx_len, arch, "probed");
	if (before == -2 || after == -2)
		return 1;
	printf("ptxas -arch=%s: registers %d unprobed, %d probed", arch, before, after);
	if (before >= 0 && after >= 0)
		printf(" (%+d)", after - before);
	printf("\n");
	return 0;
}

static int ins_write(const char *path, const char *s, size_t n)
{
	FILE *f = fopen(path, "w");
	if (!f || fwrite(s, 1, n, f) != n || fclose(f) != 0) {
		cli_err("cannot write %s", path);
		return -1;
	}
	return 0;
}

static int ins_load_probes(const struct ins_opts *o, struct probe **probes)
{
	for (int i = 0; i < o->n_probes; i++) {
		char *cause = NULL;
		char *path = cli_probe_path(o->probes[i], &cause);
		if (!path || cli_probe_load_verified(path, &probes[i], &cause) < 0) {
			cli_err("probe %s: %s", o->probes[i], cause ? cause : "cannot load");
			free(cause);
			free(path);
			return -1;
		}
		free(path);
	}
	if (!o->n_regions)
		return 0;
	struct probe *rp = ins_region_probe(probes, o->n_probes);
	char *cause = NULL;
	if (!rp) {
		cli_err("-r gives regions, and no probe here records them (-p regions)");
		return -1;
	}
	if (probe_set_regions(rp, o->regions, o->n_regions, &cause) < 0) {
		cli_err("-r: %s", cause ? cause : "out of memory");
		free(cause);
		return -1;
	}
	return 0;
}

/* With the PTX in hand: pick the kernel, run the engine, write, report. */
static int ins_run(const struct ins_opts *o, struct probe **probes, const char *ptx, size_t len)
{
	struct ptx_module *mod = NULL;
	const char **names = NULL;
	int n = 0, rc = 1;
	char *cause = NULL;
	if (ptx_parse(ptx, len, &mod, &cause) < 0 || ptx_list_entries(mod, &names, &n) < 0) {
		cli_err("%s: %s", o->image, cause ? cause : "cannot list kernels");
		goto out;
	}
	const char *kernel = cli_match_kernel(o->kernel, names, n, &rc);
	if (!kernel)
		goto out;
	struct engine_result res;
	memset(&res, 0, sizeof res);
	if (engine_instrument(ptx, len, kernel, probes, o->n_probes,
			      (o->addr_at_exit ? ENGINE_ADDR_AT_EXIT : 0) | o->shape, &res, &cause) < 0) {
		cli_err("instrumenting %s failed: %s", kernel, cause ? cause : "?");
		goto out;
	}
	ins_stats(&res);
	ins_sites(&res, ins_region_probe(probes, o->n_probes), o->all_sites);
	ins_regions(&res, ins_region_probe(probes, o->n_probes));
	ins_shape(o->shape);
	rc = ins_write(o->out, res.ptx, res.ptx_len) < 0 ? 1 : 0;
	if (rc == 0)
		printf("wrote %s (%zu bytes, target %s)\n", o->out, res.ptx_len, res.target);
	if (rc == 0 && o->assemble)
		rc = ins_assemble(&res, o->sm);
	engine_result_done(&res);
out:
	free(cause);
	free(names);
	ptx_free(mod);
	return rc;
}

int cmd_instrument(int argc, char **argv)
{
	struct ins_opts o;
	memset(&o, 0, sizeof o);
	int rc = ins_parse(argc, argv, &o);
	if (rc) {
		free(o.probes);
		free(o.regions);
		return rc == 1 ? 0 : rc;
	}
	struct probe **probes = calloc((size_t)o.n_probes, sizeof *probes);
	char *img = NULL, *ptx = NULL;
	size_t size = 0, len = 0;
	rc = 2;
	if (!probes)
		goto out;
	FILE *f = fopen(o.image, "rb");
	if (!f) {
		cli_err("cannot open %s: %s", o.image, strerror(errno)); /* a bad argument: rc 2 */
		goto out;
	}
	rc = 1;
	struct strbuf sb;
	strbuf_init(&sb);
	char buf[65536];
	size_t got;
	while ((got = fread(buf, 1, sizeof buf, f)) > 0)
		strbuf_append(&sb, buf, got);
	fclose(f);
	img = strbuf_finish(&sb, &size);
	if (img && cli_is_amd_image(img, size) && (o.addr_at_exit || o.shape)) {
		rc = cli_usage("instrument", "%s is for PTX, and %s is an AMD image",
			       o.addr_at_exit ? "--addr-at-exit" : "--1d", o.image);
		goto out;
	}
	if (img && cli_is_amd_image(img, size)) {
		rc = cmd_instrument_amd(&(struct cli_amd_instrument){ o.image, o.kernel, o.out, o.arch, o.probes,
								       o.n_probes }, img, size);
		goto out;
	}
	if (img && o.arch && !o.sm) {
		rc = cli_usage("instrument", "--arch %s names an AMD GPU, and %s is no AMD image", o.arch, o.image);
		goto out;
	}
	if (!img || ins_pick_ptx(&o, img, size, &ptx, &len) < 0)
		goto out;
	rc = 2;
	if (ins_load_probes(&o, probes) < 0)
		goto out;
	rc = ins_run(&o, probes, ptx, len);
out:
	for (int i = 0; probes && i < o.n_probes; i++)
		probe_free(probes[i]);
	free(probes);
	free(img);
	free(ptx);
	free(o.probes);
	free(o.regions);
	return rc;
}
