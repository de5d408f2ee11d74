/* ntop export: draws one probed launch of a kernel from a trace directory to
 * a PNG, or writes its records as CSV. The kernel is found by name and its
 * probed launch chosen; then
 *  - --view timeline: the block_sched map analysed (viz/block_sched.h), laid
 *    out (viz/timeline.h) and drawn (viz/render_png.h);
 *  - --view dmat: the dmat map binned (viz/dmat.h) and drawn as a dense
 *    memory access timeline (viz/render_dmat_png.h);
 * both with a theme (viz/theme.h);
 *  - --view records: one map's records streamed out as CSV
 *    (export_records.h);
 *  - --format perfetto: block scheduling as Chrome trace-event JSON, of one
 *    launch or the whole trace (export_perfetto.h).
 * Files go where -o or --dir says, else into the current directory: never
 * into the trace directory unless asked (it may be read-only, or someone
 * else's). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/export_perfetto.h"
#include "cli/export_records.h"
#include "common/cause.h"
#include "common/demangle.h"
#include "trace/result.h"
#include "trace/trace_dir.h"
#include "tui/export.h"
#include "viz/block_sched.h"
#include "viz/dmat.h"
#include "viz/dmat_alloc.h"
#include "viz/render_dmat_png.h"
#include "viz/regions.h"
#include "viz/render_png.h"
#include "viz/render_regions_png.h"
#include "viz/theme.h"
#include "viz/timeline.h"

enum ex_view { EX_VIEW_TIMELINE, EX_VIEW_DMAT, EX_VIEW_RECORDS, EX_VIEW_REGIONS };

struct ex_args {
	char *dirs[64];      /* DIR and the job's further traces (read as one) */
	int n_dirs;
	const char *dir, *kernel, *out, *theme, *view;
	const char *format;  /* --format: NULL = the view's own (PNG, CSV) */
	int perfetto;        /* --format perfetto */
	const char *outdir;  /* --dir */
	char *path;          /* the file written (resolved), "-" for stdout */
	const char *map; /* --map (records): NULL = the first map */
	unsigned long pid, kid, launch, width, height;
	long long lanes;     /* regions: warps of block N (N + 1), of SM N (-(N + 1)), or 0 */
	int csv;             /* regions as CSV (--format csv or -o *.csv) */
	unsigned long page_size; /* bytes (dmat); 0: the model's default */
	enum ex_view view_id;
	int dmat;        /* --view dmat */
	int sized;       /* --width or --height given */
	int themed;      /* --theme given */
	int time;        /* -1 auto: global when the records allow it (timeline), sm (dmat) */
	enum tl_color color;
};

static void export_help(void)
{
	printf("Usage: ntop export DIR -k KERNEL [-o FILE.png | --dir OUTDIR] [options]\n"
	       "       ntop export DIR -k KERNEL --view records [--map NAME] [-o FILE.csv]\n"
	       "       ntop export DIR [-k KERNEL] --format perfetto [-o FILE.json]\n"
	       "       ntop export DIR DIR... --format perfetto [-o FILE.json]   (a job's traces)\n"
	       "\n"
	       "Draws a probed launch recorded in trace directory DIR as a PNG. The block\n"
	       "scheduling timeline (--view timeline, needs the block_sched probe) has one\n"
	       "lane per SM, each block a bar from its first warp's start to its last warp's\n"
	       "end, blocks resident at the same time stacked inside the lane. The header\n"
	       "gives blocks, waves per SM, mean running and scheduling cycles per SM and\n"
	       "the SMs used.\n"
	       "\n"
	       "The dense memory access timeline (--view dmat, needs the dmat probe) has time\n"
	       "across and memory pages up (untouched ranges collapsed to a dashed line); a\n"
	       "pixel's colour counts the accesses to its pages in its time (log scale).\n"
	       "\n"
	       "The warps view (--view regions, needs the regions probe) has a lane per warp\n"
	       "of one block (--block N) or of the warps one SM ran (--sm N; default: the SM\n"
	       "that ran block 0), each warp's regions as bars over its life, coloured per\n"
	       "region, and a legend with each region's share of the warps' time. As CSV\n"
	       "(--format csv, or -o FILE.csv): every warp's every segment, one line each:\n"
	       "block,warp,smid,region,name,start,end,cycles,begin_line,end_line (start and\n"
	       "end in SM cycles; lines as FILE:LINE, or ptx:LINE without line information).\n"
	       "\n"
	       "The records (--view records) of one map of the launch go out as CSV, one line\n"
	       "per record: block,thread,unit,slot then the map's fields. block is the block's\n"
	       "linear index, thread the thread's linear index in its block (warp maps: the\n"
	       "warp's first thread), unit the map's unit (thread or warp) index, slot the\n"
	       "record's index in its unit. Only records inside each unit's count are\n"
	       "written (never unused slots); units of blocks that were not sampled are left\n"
	       "out. Fields named addr, address, *_addr or *_address are written in 0x hex,\n"
	       "all others in decimal, as stored (dmat: access = bytes | kind << 18 | site\n"
	       "<< 21, kind 1 load, 2 store, 3 atomic, 4 async load, 5 async store, site the\n"
	       "instruction's index in the launch's site table; traces from before sites were\n"
	       "recorded have sizekind = bytes | kind << 24); a map without field names gets\n"
	       "one raw column of the record's bytes in hex.\n"
	       "\n"
	       "--format perfetto writes block scheduling and warps' regions as Chrome\n"
	       "trace-event JSON, which ui.perfetto.dev and chrome://tracing open: of the\n"
	       "kernel's probed launch with -k, of every probed launch in the trace without. Per process, a track per\n"
	       "kernel with its launches, and a track per SM (more, 'SM 12 slot 2', where\n"
	       "blocks overlap) with a slice per block: its index, x/y/z, warps and cycles\n"
	       "in the slice's args. Times: the global timer when the records have it, else\n"
	       "SM cycles from each SM's first block at the launch's host time. Launches\n"
	       "with regions records (-k with --view regions: that launch) add a track per\n"
	       "warp ('warp 3.1 SM 5 seq 7'; --block N or --sm N for some of them): its life\n"
	       "as a slice, each region segment inside it with its cycles and source line\n"
	       "(SM cycles from each SM's first warp).\n"
	       "\n"
	       "The file goes to -o FILE (a directory: the default name inside it; - for\n"
	       "stdout, CSV and JSON only), else into --dir OUTDIR, else into the current\n"
	       "directory, named KERNEL-kKID-pPID-SEQ-VIEW.png/.csv/.json (whole-trace\n"
	       "Perfetto: TRACE-perfetto.json). Never into the trace directory unless asked.\n"
	       "A write taking over a second shows its progress on stderr when that is a\n"
	       "terminal.\n"
	       "\n"
	       "Options:\n"
	       "  -k, --kernel NAME      kernel to draw: part of its demangled or mangled name\n"
	       "      --pid PID          the process, when several ran a kernel of that name\n"
	       "      --kid KID          the kernel id ('ntop report' shows it in [ ]), when one\n"
	       "                         process loaded several kernels of that name\n"
	       "      --launch N         the Nth probed launch of the kernel (1 = first);\n"
	       "                         default: the last one with results for the view\n"
	       "      --view timeline|dmat|records|regions  what to export (default timeline)\n"
	       "      --block N | --sm N regions: the warps of block N (linear index) or of\n"
	       "                         SM N as lanes (perfetto: the warps written)\n"
	       "      --format perfetto  the timeline and warps as trace-event JSON\n"
	       "      --map NAME         records: the map to write (default: the first one)\n"
	       "  -o, --output FILE      the file to write (PNG, CSV for records, JSON for\n"
	       "                         perfetto), or a directory for the default name; -\n"
	       "                         for stdout (records, perfetto)\n"
	       "      --dir OUTDIR       write the default name into OUTDIR (default: .)\n"
	       "      --width W          image width in pixels (default %d, at least %d)\n"
	       "      --height H         image height in pixels (default %d, at least %d)\n"
	       "      --theme NAME|PATH  dark (default), light, colorblind, mono, or a .toml file\n"
	       "      --time sm|global   x axis: SM clock cycles, every SM from its own first\n"
	       "                         block (SM clocks are independent); or global timer\n"
	       "                         time aligned across SMs. Default: global when the\n"
	       "                         records have the global timer, else sm. dmat: sm\n"
	       "                         counts cycles from each block's first access\n"
	       "                         (default); global needs a gtime field\n"
	       "      --color index|duration  timeline: bar colour by block index (default)\n"
	       "                         or by duration; with duration, blocks ending in the\n"
	       "                         last 10%% of the kernel (the tail) are outlined\n"
	       "      --page-size N      dmat: bytes per page row, a power of two from %u\n"
	       "                         to 1G, suffixes K M G (default 4K)\n"
	       "  -h, --help             this text\n"
	       "\n"
	       "Examples:\n"
	       "  ntop export ntop-trace/20261101-120000_4242 -k vecadd -o vecadd.png\n"
	       "  ntop export trace1 -k sgemm --launch 2 --color duration --time sm -o sgemm.png\n"
	       "  ntop export trace1 -k 'fill_kernel<float>' --theme light --width 2400 --height 1200 -o fill.png\n"
	       "  ntop export trace1 -k sgemm --view dmat --page-size 64K -o sgemm-dmat.png\n"
	       "  ntop export trace1 -k copy --view records -o copy-dmat.csv\n"
	       "  ntop export trace1 -k attn --view regions --sm 3 -o attn-warps.png\n"
	       "  ntop export trace1 -k attn --view regions -o attn-regions.csv\n"
	       "  ntop export trace1 --format perfetto -o trace1.json   (open in ui.perfetto.dev)\n"
	       "  ntop export trace1 -k sgemm --format perfetto --dir /tmp\n",
	       RP_DEFAULT_W, RP_MIN_W, RP_DEFAULT_H, RP_MIN_H, DMAT_PAGE_MIN);
}

/* ---- arguments ---- */

static int ex_enum(const char *opt, const char *v, const char *a, const char *b, int *out)
{
	if (strcmp(v, a) == 0)
		*out = 0;
	else if (strcmp(v, b) == 0)
		*out = 1;
	else
		return cli_usage("export", "%s takes %s or %s, not '%s'", opt, a, b, v);
	return 0;
}

static int ex_number(const char *opt, const char *v, unsigned long *out)
{
	if (cli_parse_ulong(v, out) < 0 || *out == 0 || *out > 1000000)
		return cli_usage("export", "%s takes a positive number, not '%s'", opt, v);
	return 0;
}

enum ex_opt_id {
	EX_KERNEL, EX_OUTPUT, EX_THEME, EX_VIEW, EX_PID, EX_LAUNCH, EX_WIDTH, EX_HEIGHT, EX_TIME, EX_COLOR, EX_PAGE,
	EX_MAP, EX_FORMAT, EX_DIR, EX_BLOCK, EX_SM, EX_KID
};

static const struct {
	const char *s, *l;
} ex_opts[] = {
	[EX_KERNEL] = {"-k", "--kernel"}, [EX_OUTPUT] = {"-o", "--output"}, [EX_THEME] = {NULL, "--theme"},
	[EX_VIEW] = {NULL, "--view"},     [EX_PID] = {NULL, "--pid"},       [EX_LAUNCH] = {NULL, "--launch"},
	[EX_WIDTH] = {NULL, "--width"},   [EX_HEIGHT] = {NULL, "--height"}, [EX_TIME] = {NULL, "--time"},
	[EX_COLOR] = {NULL, "--color"},    [EX_PAGE] = {NULL, "--page-size"}, [EX_MAP] = {NULL, "--map"},
	[EX_FORMAT] = {NULL, "--format"},  [EX_DIR] = {NULL, "--dir"},   [EX_BLOCK] = {NULL, "--block"},
	[EX_SM] = {NULL, "--sm"},         [EX_KID] = {NULL, "--kid"},
};

/* --block N / --sm N: a non-negative index. */
static int ex_lanes(struct ex_args *a, const char *opt, const char *v, int sign)
{
	unsigned long n;
	if (cli_parse_ulong(v, &n) < 0 || n > 1ul << 40)
		return cli_usage("export", "%s takes a block or SM index, not '%s'", opt, v);
	if (a->lanes)
		return cli_usage("export", "--block or --sm, not both");
	a->lanes = sign * ((long long)n + 1);
	return 0;
}

/* "4096", "4k", "64K", "2M", "1G": a power of two in the model's range. */
static int ex_page_size(const char *v, unsigned long *out)
{
	uint64_t n = 0;
	if (cli_parse_size(v, &n) < 0 || n < DMAT_PAGE_MIN || n > DMAT_PAGE_MAX || (n & (n - 1)))
		return cli_usage("export", "--page-size takes a power of two from %u to 1G bytes (4K, 64K, 2M), not '%s'",
				 DMAT_PAGE_MIN, v);
	*out = (unsigned long)n;
	return 0;
}

/* Stores option `id`'s value; -1 after a usage message. */
static int ex_set(struct ex_args *a, enum ex_opt_id id, const char *v)
{
	int c = 0;
	switch (id) {
	case EX_KERNEL: a->kernel = v; return 0;
	case EX_OUTPUT: a->out = v; return 0;
	case EX_THEME: a->theme = v; a->themed = 1; return 0;
	case EX_VIEW: a->view = v; return 0;
	case EX_PID: return ex_number("--pid", v, &a->pid) ? -1 : 0;
	case EX_KID: return ex_number("--kid", v, &a->kid) ? -1 : 0;
	case EX_LAUNCH: return ex_number("--launch", v, &a->launch) ? -1 : 0;
	case EX_MAP: a->map = v; return 0;
	case EX_FORMAT: a->format = v; return 0;
	case EX_DIR: a->outdir = v; return 0;
	case EX_WIDTH: a->sized = 1; return ex_number("--width", v, &a->width) ? -1 : 0;
	case EX_HEIGHT: a->sized = 1; return ex_number("--height", v, &a->height) ? -1 : 0;
	case EX_TIME: return ex_enum("--time", v, "sm", "global", &a->time) ? -1 : 0;
	case EX_COLOR:
		if (ex_enum("--color", v, "index", "duration", &c))
			return -1;
		a->color = c ? TL_COLOR_DURATION : TL_COLOR_INDEX;
		return 0;
	case EX_PAGE: return ex_page_size(v, &a->page_size) ? -1 : 0;
	case EX_BLOCK: return ex_lanes(a, "--block", v, 1) ? -1 : 0;
	case EX_SM: return ex_lanes(a, "--sm", v, -1) ? -1 : 0;
	}
	return -1;
}

/* One option at argv[*i]: 1 consumed, 0 not one of ours, 2 usage error. */
static int ex_opt(struct ex_args *a, int argc, char **argv, int *i)
{
	for (size_t k = 0; k < sizeof ex_opts / sizeof ex_opts[0]; k++) {
		const char *v;
		int r = cli_opt("export", argc, argv, i, ex_opts[k].s, ex_opts[k].l, &v);
		if (r < 0)
			return 2;
		if (r > 0)
			return ex_set(a, (enum ex_opt_id)k, v) < 0 ? 2 : 1;
	}
	return 0;
}

/* -1 after a usage message. */
static int ex_view_parse(struct ex_args *a)
{
	static const char *const names[] = {[EX_VIEW_TIMELINE] = "timeline", [EX_VIEW_DMAT] = "dmat",
					    [EX_VIEW_RECORDS] = "records", [EX_VIEW_REGIONS] = "regions"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strcmp(a->view, names[i]) == 0) {
			a->view_id = (enum ex_view)i;
			a->dmat = a->view_id == EX_VIEW_DMAT;
			return 0;
		}
	cli_usage("export", "--view %s: only 'timeline', 'dmat', 'records' and 'regions' can be exported", a->view);
	return -1;
}

/* --format: the view's own, or perfetto for the timeline; -1 after a usage message. */
static int ex_format_parse(struct ex_args *a)
{
	size_t ol = a->out ? strlen(a->out) : 0;
	if (a->view_id == EX_VIEW_REGIONS && ((a->format && !strcmp(a->format, "csv")) ||
					      (!a->format && ol > 4 && !strcmp(a->out + ol - 4, ".csv"))))
		a->csv = 1;
	if (!a->format)
		return 0;
	const char *own = a->view_id == EX_VIEW_RECORDS ? "csv" : "png";
	if (strcmp(a->format, own) == 0 || a->csv)
		return 0;
	if (strcmp(a->format, "perfetto") != 0) {
		cli_usage("export", "--format %s: the formats are png (timeline, dmat), csv (records) and perfetto", a->format);
		return -1;
	}
	if (a->view_id != EX_VIEW_TIMELINE && a->view_id != EX_VIEW_REGIONS) {
		cli_usage("export", "--format perfetto exports the timeline (block_sched) and the warps (regions), not --view %s",
			  a->view);
		return -1;
	}
	a->perfetto = 1;
	return 0;
}

/* -o and --dir; -1 after a usage message. */
static int ex_out_check(const struct ex_args *a)
{
	struct stat st;
	if (a->out && a->outdir) {
		cli_usage("export", "-o or --dir, not both (-o may name a directory)");
		return -1;
	}
	int err = !a->outdir ? 0 : stat(a->outdir, &st) < 0 ? errno : !S_ISDIR(st.st_mode) ? ENOTDIR : 0;
	if (err) {
		cli_usage("export", "--dir %s: %s", a->outdir, strerror(err));
		return -1;
	}
	if (a->out && strcmp(a->out, "-") == 0 && a->view_id != EX_VIEW_RECORDS && !a->perfetto && !a->csv) {
		cli_usage("export", "-o -: a PNG does not go to stdout; give -o FILE.png");
		return -1;
	}
	return 0;
}

static int ex_parse(struct ex_args *a, int argc, char **argv)
{
	memset(a, 0, sizeof *a);
	a->time = -1;
	a->view = "timeline";
	a->width = RP_DEFAULT_W;
	a->height = RP_DEFAULT_H;
	a->theme = "dark";
	for (int i = 1; i < argc; i++) {
		int r = ex_opt(a, argc, argv, &i);
		if (r == 2)
			return CLI_EXIT_USAGE;
		if (r == 1)
			continue;
		if (argv[i][0] == '-' && argv[i][1])
			return cli_usage("export", "unknown option '%s'", argv[i]);
		if (a->n_dirs == (int)(sizeof a->dirs / sizeof a->dirs[0]))
			return cli_usage("export", "at most %d trace directories", a->n_dirs);
		a->dirs[a->n_dirs++] = argv[i];
		if (!a->dir)
			a->dir = argv[i];
	}
	if (!a->dir)
		return cli_usage("export", "which trace directory? (ntop record prints it)");
	if (ex_view_parse(a) < 0 || ex_format_parse(a) < 0 || ex_out_check(a) < 0)
		return CLI_EXIT_USAGE;
	if (a->n_dirs > 1 && (!a->perfetto || a->kernel))
		return cli_usage("export", "several trace directories (a job) go to --format perfetto whole, without "
					   "-k; a launch's PNG or CSV comes from its own trace");
	if (!a->kernel && !a->perfetto)
		return cli_usage("export", "which kernel? give -k NAME ('ntop report %s' lists them)", a->dir);
	if (a->page_size && !a->dmat)
		return cli_usage("export", "--page-size is for --view dmat");
	if (a->map && a->view_id != EX_VIEW_RECORDS)
		return cli_usage("export", "--map is for --view records");
	if (a->lanes && a->view_id != EX_VIEW_REGIONS)
		return cli_usage("export", "--block and --sm are for --view regions");
	if ((a->view_id == EX_VIEW_RECORDS || a->perfetto) && (a->sized || a->color != TL_COLOR_INDEX || a->themed))
		return cli_usage("export", "%s: --width, --height, --theme and --color are for PNGs",
				 a->perfetto ? "--format perfetto writes JSON" : "--view records writes CSV");
	if (a->view_id == EX_VIEW_RECORDS && a->time >= 0)
		return cli_usage("export", "--view records writes CSV: --time does not apply");
	char *cause = NULL;
	if (render_png_check_size((int)a->width, (int)a->height, &cause) < 0) {
		cli_usage("export", "bad size: %s", cause);
		free(cause);
		return CLI_EXIT_USAGE;
	}
	return 0;
}

/* ---- finding the kernel and its launch ---- */

static const char *ex_kname(const struct td_kernel *k)
{
	return k->demangled ? k->demangled : k->name ? k->name : "(unnamed)";
}

static int ex_matches(const struct td_kernel *k, const char *want, int exact)
{
	if (exact)
		return (k->name && strcmp(k->name, want) == 0) || (k->demangled && strcmp(k->demangled, want) == 0);
	return (k->name && strstr(k->name, want)) || (k->demangled && strstr(k->demangled, want));
}

/* The one kernel the name picks; NULL after printing why (*rc set). */
static const struct td_kernel *ex_find_kernel(const struct trace_dir *td, const struct ex_args *a, int *rc)
{
	*rc = CLI_EXIT_USAGE;
	for (int exact = 1; exact >= 0; exact--) {
		const struct td_kernel *hit = NULL;
		int n = 0;
		for (int i = 0; i < td->n_kernels; i++) {
			const struct td_kernel *k = &td->kernels[i];
			if ((!a->pid || k->pid == a->pid) && (!a->kid || k->kid == a->kid) && ex_matches(k, a->kernel, exact)) {
				hit = k;
				n++;
			}
		}
		if (n == 1)
			return hit;
		if (n == 0)
			continue;
		cli_err("'%s' matches %d kernels; give more of the name%s:", a->kernel, n,
			a->pid ? " or --kid" : ", --pid or --kid");
		for (int i = 0; i < td->n_kernels; i++) {
			const struct td_kernel *k = &td->kernels[i];
			if ((!a->pid || k->pid == a->pid) && (!a->kid || k->kid == a->kid) && ex_matches(k, a->kernel, exact))
				fprintf(stderr, "  pid %u kid %u  %s  (%d probed launch%s)\n", k->pid, k->kid, ex_kname(k),
					k->n_results, k->n_results == 1 ? "" : "es");
		}
		return NULL;
	}
	cli_err("no kernel matches '%s' in %s (%d kernel%s in the trace; 'ntop report %s' lists them)", a->kernel,
		a->dir, td->n_kernels, td->n_kernels == 1 ? "" : "s", a->dir);
	return NULL;
}

/* The probe whose results the view needs (records: any; named for hints). */
static const char *ex_probe_name(const struct ex_args *a)
{
	return a->view_id == EX_VIEW_DMAT ? "dmat" : a->view_id == EX_VIEW_RECORDS ? "PROBE"
	       : a->view_id == EX_VIEW_REGIONS ? "regions" : "block_sched";
}

/* Probed launches without a result: not "never probed", but why the
 * results are missing. */
static int ex_results_missing(const struct trace_dir *td, const struct td_kernel *k)
{
	const struct td_process *p = trace_dir_process(td, k->pid);
	cli_err("kernel %s: %llu probed launch%s, but no result reached the trace", ex_kname(k),
		(unsigned long long)k->probed_started, k->probed_started == 1 ? "" : "es");
	if (p && td_process_results_lost(p))
		fprintf(stderr, "  pid %u lost %llu results (write errors, or it ended before they were written)\n",
			p->pid, (unsigned long long)td_process_results_lost(p));
	else if (p && !p->exited)
		fprintf(stderr, "  pid %u never reached its exit (killed or crashed) before writing them\n", p->pid);
	else
		fprintf(stderr, "  their result lines are missing from events.log (lost events: %llu)\n",
			(unsigned long long)td->lost_events);
	return 1;
}

static int ex_never_probed(const struct trace_dir *td, const struct td_kernel *k, const struct ex_args *a)
{
	if (k->probed_started)
		return ex_results_missing(td, k);
	cli_err("kernel %s was never probed (%llu launch%s, no results)", ex_kname(k),
		(unsigned long long)k->launches, k->launches == 1 ? "" : "es");
	if (k->instrument_status && strcmp(k->instrument_status, "failed") == 0)
		fprintf(stderr, "  instrumenting it failed: %s\n", k->instrument_reason ? k->instrument_reason : "?");
	else if (!k->has_ptx)
		fprintf(stderr, "  it has no PTX: %s\n", k->ptx_reason ? k->ptx_reason : "SASS only");
	if (k->declined)
		fprintf(stderr, "  %llu probed launch%s declined: %s\n", (unsigned long long)k->declined,
			k->declined == 1 ? " was" : "es were", k->declined_reason ? k->declined_reason : "?");
	fprintf(stderr, "  record it with: ntop record -p %s -k '%s' -- APP\n", ex_probe_name(a), a->kernel);
	return CLI_EXIT_USAGE;
}

static int ex_find_map(const struct result *r, const struct ex_args *a)
{
	if (a->view_id == EX_VIEW_RECORDS)
		return export_records_find_map(r, a->map);
	if (a->view_id == EX_VIEW_REGIONS)
		return regions_find_map(r);
	return a->dmat ? dmat_find_map(r) : block_sched_find_map(r);
}

static void ex_no_results(const struct td_kernel *k, const struct ex_args *a)
{
	if (a->view_id != EX_VIEW_RECORDS)
		cli_err("kernel %s has no %s results to draw a %s from", ex_kname(k), ex_probe_name(a),
			a->dmat ? "DMAT" : a->view_id == EX_VIEW_REGIONS ? "warps view" : "timeline");
	else if (a->map)
		cli_err("kernel %s has no map '%s' to export", ex_kname(k), a->map);
	else
		cli_err("kernel %s has no map records to export", ex_kname(k));
}

static void ex_no_block_sched(const struct result *r)
{
	fprintf(stderr, "  launch seq %llu recorded probes %s; maps:", (unsigned long long)r->seq,
		r->probes && *r->probes ? r->probes : "(none named)");
	for (int i = 0; i < r->n_maps; i++)
		fprintf(stderr, " %s", r->maps[i].map.name);
	fprintf(stderr, "%s\n", r->n_maps ? "" : " none");
}

/* Reads the chosen launch's result; *which = its position among the kernel's results. */
static struct result *ex_load_launch(const struct trace_dir *td, const struct td_kernel *k,
				     const struct ex_args *a, int *which, int *rc)
{
	*rc = CLI_EXIT_USAGE;
	if (a->launch > (unsigned long)k->n_results) {
		cli_err("kernel %s has %d probed launch%s; --launch takes 1..%d", ex_kname(k), k->n_results,
			k->n_results == 1 ? "" : "es", k->n_results);
		return NULL;
	}
	int lo = a->launch ? (int)a->launch - 1 : 0, hi = a->launch ? (int)a->launch - 1 : k->n_results - 1;
	int unreadable = 0, shown = 0;
	for (int i = hi; i >= lo; i--) {
		const struct td_result *tr = &td->results[k->results[i]];
		struct result *r = NULL;
		char *cause = NULL;
		/* dmat: header and counts only, the model streams the records */
		int (*rd)(const char *, struct result **, char **) =
			a->view_id == EX_VIEW_DMAT ? result_read_head : result_read;
		if (!tr->path || rd(tr->path, &r, &cause) < 0) {
			cli_err("launch seq %llu: %s", (unsigned long long)tr->seq,
				!tr->path ? "its result path points outside the trace directory"
					  : cause ? cause : "unreadable result file");
			free(cause);
			unreadable++;
			continue;
		}
		if (ex_find_map(r, a) >= 0) {
			*which = i;
			*rc = 0;
			return r;
		}
		if (!shown++)
			ex_no_results(k, a);
		ex_no_block_sched(r);
		result_free(r);
	}
	if (shown && a->view_id != EX_VIEW_RECORDS)
		fprintf(stderr, "  record it with: ntop record -p %s -k '%s' -- APP\n", ex_probe_name(a), a->kernel);
	if (unreadable && !shown)
		*rc = 1; /* the files were there but broken: the work failed */
	return NULL;
}

/* ---- drawing ---- */

static void ex_titles(const struct trace_dir *td, const struct td_kernel *k, const struct result *r, int which,
		      char *title, size_t tlen, char *sub, size_t slen)
{
	char *dem = demangle(r->kernel ? r->kernel : k->name);
	snprintf(title, tlen, "%s", dem ? dem : k->name ? k->name : "(unnamed)");
	free(dem);
	const struct td_device *d = trace_dir_launch_device(td, k, r->seq);
	char dev[160] = "", gpu[24] = "";
	if (d && td_process_n_devices(td, k->pid) > 1)
		snprintf(gpu, sizeof gpu, "GPU %d: ", d->ordinal);
	if (d && d->name)
		snprintf(dev, sizeof dev, "  %s%s (%d %s, %.2f GHz)", gpu, d->name, d->sms, d->arch ? "CUs" : "SMs",
			 d->clock_khz / 1e6);
	else if (r->device_sms)
		snprintf(dev, sizeof dev, "  sm_%u, %u SMs", r->device_cc, r->device_sms);
	snprintf(sub, slen,
		 "pid %u  launch seq %llu (probed launch %d of %d)  grid %ux%ux%u  block %ux%ux%u  smem %u B%s",
		 r->pid, (unsigned long long)r->seq, which + 1, k->n_results, r->grid[0], r->grid[1], r->grid[2],
		 r->block[0], r->block[1], r->block[2], r->smem, dev);
}

static int ex_draw(const struct trace_dir *td, const struct td_kernel *k, const struct result *r, int which,
		   const struct ex_args *a, const struct theme *th)
{
	int occ = td->results[k->results[which]].occ;
	struct block_sched *bs = NULL;
	struct timeline *tl = NULL;
	struct rp_image img = {0};
	char *cause = NULL;
	int rc = 1;
	if (block_sched_analyze(r, block_sched_find_map(r), occ > 0 ? occ : k->occ, &bs, &cause) < 0)
		goto out;
	enum tl_time mode = a->time == 0 ? TL_TIME_SM : TL_TIME_GLOBAL;
	struct tl_device dev = { r->sm_clock_khz, r->device_sms, td_device_amd(trace_dir_device(td, k->pid)) };
	if (timeline_create(bs, mode, &dev, &tl, &cause) < 0)
		goto out;
	if (a->time < 0)
		tl->note[0] = 0; /* auto: falling back to SM cycles is expected, not news */
	struct tl_view v;
	timeline_view_fit(tl, &v);
	char title[512], sub[512];
	ex_titles(td, k, r, which, title, sizeof title, sub, sizeof sub);
	struct rp_opts o;
	render_png_opts_init(&o);
	o.width = (int)a->width;
	o.height = (int)a->height;
	o.color = a->color;
	o.title = title;
	o.subtitle = sub;
	if (render_png_draw(tl, &v, th, &o, &img, &cause) < 0 || render_png_write(a->path, &img, &cause) < 0)
		goto out;
	printf("wrote %s: %dx%d, %llu blocks on %u %ss, %s%s time, colour by %s, theme %s\n", a->path, img.w, img.h,
	       (unsigned long long)bs->n_blocks_recorded, bs->n_sms, tl->lane, tl->time == TL_TIME_SM ? tl->lane : "",
	       tl->time == TL_TIME_SM ? "-cycle" : "global",
	       a->color == TL_COLOR_INDEX ? "index" : "duration", th->name);
	if (tl->note[0])
		printf("note: %s\n", tl->note);
	rc = 0;
out:
	if (rc)
		cli_err("%s", cause ? cause : "export failed");
	free(cause);
	rp_image_free(&img);
	timeline_free(tl);
	block_sched_free(bs);
	return rc;
}

static int ex_draw_dmat(const struct trace_dir *td, const struct td_kernel *k, const struct result *r,
			int which, const struct ex_args *a, const struct theme *th)
{
	struct dmat *m = NULL;
	struct rp_image img = {0};
	char *cause = NULL;
	int rc = 1;
	struct dmat_opts mo;
	dmat_opts_init(&mo);
	mo.page_size = a->page_size ? a->page_size : DMAT_PAGE_DEFAULT;
	mo.time = a->time == 1 ? DMAT_TIME_GLOBAL : DMAT_TIME_SM;
	mo.amd = td_device_amd(trace_dir_device(td, k->pid));
	const struct td_result *tr = &td->results[k->results[which]];
	struct dmat_alloc *allocs = NULL;
	int n_allocs = 0;
	if (dmat_allocs_from_trace(tr, &allocs, &n_allocs) < 0)
		n_allocs = 0; /* out of memory: ranges labelled by address */
	mo.allocs = allocs;
	mo.n_allocs = n_allocs;
	int opened = dmat_open(tr->path, dmat_find_map(r), &mo, &m, &cause);
	dmat_allocs_free(allocs, n_allocs); /* the model keeps copies */
	if (opened < 0)
		goto out;
	struct dmat_view v;
	dmat_view_fit(m, &v);
	char title[512], sub[512], ps[32], acc[32];
	ex_titles(td, k, r, which, title, sizeof title, sub, sizeof sub);
	struct rdp_opts o;
	render_dmat_png_opts_init(&o);
	o.width = (int)a->width;
	o.height = (int)a->height;
	o.title = title;
	o.subtitle = sub;
	if (render_dmat_png_draw(m, &v, th, &o, &img, &cause) < 0 || png_canvas_write(a->path, &img, &cause) < 0)
		goto out;
	dmat_fmt_bytes(m->page_size, ps, sizeof ps);
	snprintf(acc, sizeof acc, "%llu", (unsigned long long)m->accesses);
	printf("wrote %s: %dx%d, %s accesses in %llu pages of %s (%u range%s), %s time, theme %s\n", a->path, img.w,
	       img.h, acc, (unsigned long long)m->n_rows, ps, m->n_runs, m->n_runs == 1 ? "" : "s",
	       m->time != DMAT_TIME_SM ? "global" : mo.amd ? "CU-cycle" : "SM-cycle", th->name);
	if (m->dropped)
		printf("note: %llu accesses past the map's cap of %u per thread were dropped\n",
		       (unsigned long long)m->dropped, r->maps[m->map_index].map.cap);
	if (m->note[0])
		printf("note: %s\n", m->note);
	rc = 0;
out:
	if (rc)
		cli_err("%s", cause ? cause : "export failed");
	free(cause);
	png_canvas_free(&img);
	dmat_free(m);
	return rc;
}

/* ---- where to ---- */

/* The default file name: KERNEL-kKID-pPID-SEQ-WHAT.EXT as the UI names its
 * exports, or TRACE-perfetto.json for a whole trace. */
static char *ex_default_name(const struct ex_args *a, const struct trace_dir *td, const struct td_kernel *k,
			     uint64_t seq)
{
	const char *ext = a->perfetto ? "json" : a->view_id == EX_VIEW_RECORDS || a->csv ? "csv" : "png";
	char name[EXPORT_NAME_MAX + 1], *p = NULL;
	if (k) {
		export_safe_name(k->name, name, sizeof name);
		if (asprintf(&p, "%s-k%u-p%u-%llu-%s.%s", name, k->kid, k->pid, (unsigned long long)seq,
			     a->perfetto ? "perfetto" : a->view, ext) < 0)
			return NULL;
		return p;
	}
	char *dir = strdup(td->path ? td->path : "trace");
	size_t n = dir ? strlen(dir) : 0;
	while (n > 1 && dir[n - 1] == '/')
		dir[--n] = 0;
	const char *base = dir ? strrchr(dir, '/') : NULL;
	export_safe_name(base ? base + 1 : dir, name, sizeof name);
	free(dir);
	return asprintf(&p, "%s-perfetto.json", name) < 0 ? NULL : p;
}

/* a->path: -o as given (a directory: the default name inside it), else the
 * default name in --dir or the current directory; -1 out of memory. */
static int ex_resolve_path(struct ex_args *a, const struct trace_dir *td, const struct td_kernel *k, uint64_t seq)
{
	struct stat st;
	if (a->out && (strcmp(a->out, "-") == 0 || stat(a->out, &st) < 0 || !S_ISDIR(st.st_mode)))
		return (a->path = strdup(a->out)) != NULL ? 0 : -1;
	char *name = ex_default_name(a, td, k, seq);
	const char *dir = a->out ? a->out : a->outdir;
	if (!name || !dir) {
		a->path = name;
		return name ? 0 : -1;
	}
	int n = asprintf(&a->path, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", name);
	free(name);
	return n < 0 ? (a->path = NULL, -1) : 0;
}

/* ---- text outputs: CSV, JSON ---- */

/* A CSV or JSON output: the file, or stdout (the summary then goes to
 * stderr, the data being the output). */
struct ex_text {
	FILE *f, *say;
	int to_stdout;
	struct cli_progress pr;
};

static int ex_text_open(const struct ex_args *a, struct ex_text *t)
{
	t->to_stdout = strcmp(a->path, "-") == 0;
	t->f = t->to_stdout ? stdout : fopen(a->path, "w");
	t->say = t->to_stdout ? stderr : stdout;
	if (!t->f) {
		cli_err("cannot write %s: %s", a->path, strerror(errno));
		return -1;
	}
	cli_progress_start(&t->pr, t->to_stdout ? "stdout" : a->path, t->f);
	return 0;
}

/* Closes; on failure says why and removes the partial file. 0 or 1 (the
 * exit status). */
static int ex_text_close(const struct ex_args *a, struct ex_text *t, int rc, char *cause)
{
	cli_progress_end(&t->pr);
	if ((t->to_stdout ? fflush(t->f) : fclose(t->f)) != 0 && rc == 0)
		rc = cause_set(&cause, "write failed: %s", strerror(errno));
	if (rc < 0) {
		cli_err("%s: %s", a->path, cause ? cause : "export failed");
		if (!t->to_stdout)
			remove(a->path);
	}
	free(cause);
	return rc < 0 ? 1 : 0;
}

/* ---- records ---- */

static int ex_write_records(const struct result *r, const struct ex_args *a)
{
	struct ex_text t;
	if (ex_text_open(a, &t) < 0)
		return 1;
	int map = ex_find_map(r, a);
	struct export_records_stats st;
	char *cause = NULL;
	int rc = export_records_write(t.f, r, map, &st, &t.pr, &cause);
	if (ex_text_close(a, &t, rc, cause))
		return 1;
	fprintf(t.say, "wrote %s: %llu records of %llu units, map %s (launch seq %llu), %llu dropped past the cap of %u\n",
		t.to_stdout ? "stdout" : a->path, (unsigned long long)st.records, (unsigned long long)st.units,
		r->maps[map].map.name, (unsigned long long)r->seq, (unsigned long long)st.dropped, r->maps[map].map.cap);
	if (st.unsampled)
		fprintf(t.say, "note: %llu units with records belong to blocks that were not sampled\n",
			(unsigned long long)st.unsampled);
	return 0;
}

/* ---- regions ---- */

/* FILE:LINE of site i of r's table, ptx:LINE without line information. */
static void ex_site_where(const struct result *r, int32_t i, char *buf, size_t n)
{
	const struct engine_site *s = i >= 0 && i < r->sites.n ? &r->sites.s[i] : NULL;
	if (!s)
		snprintf(buf, n, "-");
	else if (s->line > 0 && s->file >= 0)
		snprintf(buf, n, "%s:%d", strrchr(r->sites.files[s->file], '/') ? strrchr(r->sites.files[s->file], '/') + 1
									     : r->sites.files[s->file], s->line);
	else
		snprintf(buf, n, "ptx:%d", s->ptx_line);
}

static int ex_regions_csv(const struct result *r, const struct regions *g, const struct ex_args *a)
{
	struct ex_text t;
	if (ex_text_open(a, &t) < 0)
		return 1;
	fprintf(t.f, "block,warp,smid,region,name,start,end,cycles,begin_line,end_line\n");
	for (uint64_t i = 0; i < g->n_warps; i++) {
		const struct rg_warp *w = &g->warps[i];
		for (uint32_t k = 0; k < w->n_segs; k++) {
			const struct rg_seg *s = &g->segs[w->first_seg + k];
			char name[32], b[192], e[192];
			ex_site_where(r, s->begin_site, b, sizeof b);
			ex_site_where(r, s->end_site, e, sizeof e);
			fprintf(t.f, "%llu,%u,%u,%u,%s,%llu,%llu,%llu,%s,%s\n", (unsigned long long)w->block, w->warp, w->smid,
				s->region, regions_name(g, s->region, name, sizeof name), (unsigned long long)s->start,
				(unsigned long long)s->end, (unsigned long long)(s->end - s->start), b, e);
		}
	}
	if (ex_text_close(a, &t, 0, NULL))
		return 1;
	fprintf(t.say, "wrote %s: %llu segments of %llu warps (launch seq %llu)%s\n", t.to_stdout ? "stdout" : a->path,
		(unsigned long long)g->n_segs, (unsigned long long)g->n_warps, (unsigned long long)r->seq,
		g->warps_truncated ? "; some warps truncated at the cap" : "");
	return 0;
}

static int ex_regions_png(const struct trace_dir *td, const struct td_kernel *k, const struct result *r, int which,
			  const struct regions *g, const struct ex_args *a, const struct theme *th)
{
	uint64_t total = regions_lanes(g, a->lanes, NULL, 0);
	uint64_t *idx = calloc(total ? total : 1, sizeof *idx);
	struct rp_image img = {0};
	char *cause = NULL, title[512], sub[512], head[256];
	if (!idx) {
		cli_err("out of memory");
		return 1;
	}
	regions_lanes(g, a->lanes, idx, total);
	ex_titles(td, k, r, which, title, sizeof title, sub, sizeof sub);
	uint32_t sm = total ? g->warps[idx[0]].smid : 0;
	if (a->lanes > 0)
		snprintf(head, sizeof head, "block %lld: %llu warps", a->lanes - 1, (unsigned long long)total);
	else
		snprintf(head, sizeof head, "SM %u: %llu warps of %llu recorded", a->lanes < 0 ? (uint32_t)(-a->lanes - 1) : sm,
			 (unsigned long long)total, (unsigned long long)g->n_warps);
	struct rr_opts o = { (int)a->width, (int)a->height, title, sub, head };
	int rc = render_regions_png(g, idx, total, th, &o, &img, &cause) < 0 || png_canvas_write(a->path, &img, &cause) < 0;
	if (rc)
		cli_err("%s", cause ? cause : "export failed");
	else
		printf("wrote %s: %dx%d, %s\n", a->path, img.w, img.h, head);
	free(cause);
	free(idx);
	png_canvas_free(&img);
	return rc;
}

static int ex_regions(const struct trace_dir *td, const struct td_kernel *k, const struct result *r, int which,
		      const struct ex_args *a, const struct theme *th)
{
	struct regions *g = NULL;
	char *cause = NULL;
	if (regions_analyze(r, regions_find_map(r), &g, &cause) < 0) {
		cli_err("%s", cause ? cause : "cannot read the regions");
		free(cause);
		return 1;
	}
	int rc = a->csv ? ex_regions_csv(r, g, a) : ex_regions_png(td, k, r, which, g, a, th);
	regions_free(g);
	return rc;
}

/* ---- Perfetto ---- */

/* k and r: the one launch; NULL: the whole trace. */
static int ex_write_perfetto(const struct trace_dir *td, const struct td_kernel *k, const struct result *r,
			     const struct ex_args *a)
{
	struct pf_opts o = {0};
	o.time = a->time;
	o.lanes = a->lanes;
	if (k && r) {
		o.one = 1;
		o.pid = r->pid;
		o.kid = k->kid;
		o.seq = r->seq;
	}
	struct ex_text t;
	if (ex_text_open(a, &t) < 0)
		return 1;
	struct pf_stats st;
	char *cause = NULL;
	int rc = export_perfetto_write(t.f, td, &o, &st, &t.pr, &cause);
	if (ex_text_close(a, &t, rc, cause))
		return 1;
	/* AMD GPUs' lanes are compute units (a trace of one vendor's processes) */
	const char *lane = td->n_devices && td_device_amd(&td->devices[0]) ? "CU" : "SM";
	fprintf(t.say, "wrote %s: %llu blocks of %llu probed launch%s on %u %s tracks, %llu warps, %llu launch slices, %s\n",
		t.to_stdout ? "stdout" : a->path, (unsigned long long)st.blocks, (unsigned long long)st.probed,
		st.probed == 1 ? "" : "es", st.sm_tracks, lane, (unsigned long long)st.warps,
		(unsigned long long)st.launches, st.sm_clock ? "SM-cycle time where noted" : "global timer time");
	if (st.skipped)
		fprintf(t.say, "note: %llu probed launch%s without block_sched or regions records (or unreadable) not drawn\n",
			(unsigned long long)st.skipped, st.skipped == 1 ? "" : "es");
	if (st.warps_cut)
		fprintf(t.say, "note: %llu warps not written: past %u warp and region slices (--block N or --sm N picks fewer)\n",
			(unsigned long long)st.warps_cut, PF_WARP_SLICES_MAX);
	if (st.region_slices_dropped)
		fprintf(t.say, "note: %llu region segments not drawn: they cross more than 8 others in their warp\n",
			(unsigned long long)st.region_slices_dropped);
	if (st.note[0])
		fprintf(t.say, "note: %s\n", st.note);
	return 0;
}

static int ex_run(const struct trace_dir *td, const struct td_kernel *k, const struct result *r, int which,
		  struct ex_args *a, const struct theme *th)
{
	if (ex_resolve_path(a, td, k, r ? r->seq : 0) < 0) {
		cli_err("out of memory");
		return 1;
	}
	if (a->perfetto)
		return ex_write_perfetto(td, k, r, a);
	switch (a->view_id) {
	case EX_VIEW_DMAT: return ex_draw_dmat(td, k, r, which, a, th);
	case EX_VIEW_RECORDS: return ex_write_records(r, a);
	case EX_VIEW_REGIONS: return ex_regions(td, k, r, which, a, th);
	case EX_VIEW_TIMELINE: break;
	}
	return ex_draw(td, k, r, which, a, th);
}

int cmd_export(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (cli_is_help(argv[i])) {
			export_help();
			return 0;
		}
	struct ex_args a;
	int rc = ex_parse(&a, argc, argv);
	if (rc)
		return rc;
	struct theme th;
	char *cause = NULL, *tdir = cli_themes_dir();
	rc = theme_resolve(a.theme, tdir, &th, &cause);
	free(tdir);
	if (rc < 0) {
		cli_usage("export", "--theme: %s", cause);
		free(cause);
		return CLI_EXIT_USAGE;
	}
	struct trace_dir *td = NULL;
	if (trace_dir_load_job(a.dirs, a.n_dirs, &td, &cause) < 0) {
		if (a.n_dirs == 1)
			cli_err("%s is not a trace directory: %s", a.dir, cause ? cause : "cannot read it");
		else /* the cause names the one that is not */
			cli_err("not a trace directory: %s", cause ? cause : "cannot read it");
		free(cause);
		return CLI_EXIT_USAGE;
	}
	const struct td_kernel *k = a.kernel ? ex_find_kernel(td, &a, &rc) : NULL;
	struct result *r = NULL;
	int which = 0;
	if (!a.kernel)
		rc = ex_run(td, NULL, NULL, 0, &a, &th); /* the whole trace (perfetto) */
	else if (k && k->n_results == 0)
		rc = ex_never_probed(td, k, &a);
	else if (k && (r = ex_load_launch(td, k, &a, &which, &rc)) != NULL)
		rc = ex_run(td, k, r, which, &a, &th);
	result_free(r);
	trace_dir_free(td);
	free(a.path);
	return rc;
}
