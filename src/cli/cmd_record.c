/* ntop record: run a program with the hook and keep what it reports.
 *
 * Order matters for the user: everything that can fail on our side (options,
 * hook present, probes verified, trace directory created) fails before the
 * application starts, so a typo never costs a long run. Then the program is
 * spawned through the session library (session.h: argv, no shell, the hook
 * first on LD_LIBRARY_PATH, the event socket as NTOP_EVENT_SOCK, live
 * control through <dir>/control); every line any process of the program
 * sends goes to events.log and into a live trace model for the closing
 * summary. Ctrl-C
 * and Ctrl-\ reach the application from the terminal; ntop ignores them and
 * keeps recording until the application is gone. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/sessions.h"
#include "engine/probe/verify.h"
#include "common/cause.h"
#include "cli/session.h"
#include "common/fdio.h"
#include "common/timeutil.h"
#include "trace/events.h"
#include "trace/trace_dir.h"

#define REC_DRAIN_NS 2000000000ull /* children may still send events after the app exits */

struct rec_opts {
	const char **probes;
	int n_probes;
	const char **regions; /* -r NAME=SPEC */
	int n_regions;
	char **derived;       /* per probe: its text with the -r regions, or NULL */
	const char **kernels;
	int n_kernels;
	const char *out;
	char *out_owned;      /* -o with %h %r %p expanded */
	const char *every, *limit;
	char budget[24];     /* --map-budget in bytes, "" when not given */
	const char *sample;  /* --sample-blocks: auto, off, N */
	int no_audit;        /* --no-audit */
	int wait_build;      /* --wait-build */
	char **prog; /* NULL-terminated argv of the program */
};

struct rec_session {
	struct session *sess; /* directory, events.log, the program (session.h) */
	const char *dir;      /* absolute trace directory (the session's) */
	char **copies;        /* absolute paths of the probe copies */
	int n_copies;
	char **twins;         /* their GCN versions' copies, dir/probes/amd/NAME */
	int n_twins;
	char *probes_dir;     /* dir/probes when created */
	struct trace_dir *model;
};

static void record_help(void)
{
	printf("Usage: ntop record [-p PROBE]... [-r NAME=SPEC]... [-k PATTERN]... [-o DIR]\n"
	       "                   [--every N] [--limit N] [--map-budget SIZE]\n"
	       "                   [--sample-blocks N|auto|off] [--wait-build] [--no-audit]\n"
	       "                   [--] PROGRAM [ARGS...]\n"
	       "\n"
	       "Runs PROGRAM with ntop's driver hook and records every GPU module, kernel and\n"
	       "launch it makes into a trace directory. With -p, matching kernels run an\n"
	       "instrumented copy and each probed launch leaves a result file. HIP 5\n"
	       "programs go through ntop's HIP stand-in when a real libamdhip64.so.5 is found;\n"
	       "a built-in probe then also takes its GCN version (probes/amd/) for AMD kernels.\n"
	       "\n"
	       "Options:\n"
	       "  -p, --probe PROBE     probe to apply: a built-in name (see 'ntop probes') or a\n"
	       "                        .toml file; repeatable. Verified before PROGRAM starts.\n"
	       "  -r, --region NAME=SPEC  the regions the regions probe (-p regions) records,\n"
	       "                        replacing its defaults; repeatable. SPEC: FILE:LINE or\n"
	       "                        FILE:FIRST-LAST (source lines: the PTX's line info),\n"
	       "                        @tensor @load @store @wait @async (instruction\n"
	       "                        classes), @loop:FILE:LINE (each iteration of the\n"
	       "                        innermost loop holding that line)\n"
	       "  -k, --kernel PATTERN  probe only kernels matching PATTERN: a substring of the\n"
	       "                        mangled or demangled name, or a glob with * ? [ ];\n"
	       "                        repeatable (default: every kernel with PTX)\n"
	       "  -o, --output DIR      trace directory (default ./ntop-trace/DATE-TIME_PID);\n"
	       "                        must not exist, or be an empty directory of yours\n"
	       "                        (no link, not writable by group or others). In a\n"
	       "                        multi-node job: %%h the host, %%r the rank (RANK,\n"
	       "                        SLURM_PROCID, OMPI_COMM_WORLD_RANK, PMI_RANK), %%p\n"
	       "                        ntop's pid, %%%% a percent sign\n"
	       "      --every N         probe every Nth launch of a matching kernel (default 1)\n"
	       "      --limit N         at most N probed launches per kernel and process (100)\n"
	       "      --map-budget SIZE map memory, suffixes K M G (default 1G): one launch's\n"
	       "                        maps take at most half of it (block sampling beyond);\n"
	       "                        spare map buffers: twice it, or 1/4 of GPU memory\n"
	       "      --sample-blocks N|auto|off\n"
	       "                        maps that grow with threads x cap (dmat) or warps x cap\n"
	       "                        (regions): keep the records of 1 block in N (a power of\n"
	       "                        two); auto (default) samples launches whose maps would\n"
	       "                        take more than 64 MiB (regions: 2 MiB; NTOP_MAP_TARGET,\n"
	       "                        NTOP_WARP_MAP_TARGET) or half the budget, as few blocks\n"
	       "                        skipped as fit; off keeps every block, declining\n"
	       "                        launches over half the budget. Skipped blocks store\n"
	       "                        nothing (NVIDIA: not even counts)\n"
	       "      --wait-build      a kernel's first matching launch waits while its probed\n"
	       "                        copy is built (the driver's JIT: 10-100 ms a kernel)\n"
	       "                        and is probed. Default: copies are built off the\n"
	       "                        app's threads (by ptxas or nvJitLink where found,\n"
	       "                        which hold none of the app's launches;\n"
	       "                        NTOP_ASSEMBLER) and launches\n"
	       "                        run unprobed until theirs is ready (counted as\n"
	       "                        deferred; a kernel launched once may never be probed)\n"
	       "      --no-audit        no loader audit module in PROGRAM's LD_AUDIT: libraries\n"
	       "                        it opens by absolute path (the driver, NVRTC, nvJitLink)\n"
	       "                        then bypass ntop's stand-ins, and ROCm 6/7 HIP runtimes\n"
	       "                        run unhooked (for an app that misbehaves under\n"
	       "                        LD_AUDIT; doc/hook.md)\n"
	       "  -h, --help            this text\n"
	       "\n"
	       "Ctrl-C goes to PROGRAM; ntop keeps recording until it exits, then prints a\n"
	       "summary and exits with PROGRAM's status (128+N if signal N killed it; 127 if\n"
	       "it could not be started; 2 for ntop's own usage errors).\n"
	       "\n"
	       "Environment: NTOP_HOOK_DIR (directory holding the hook's libcuda.so.1),\n"
	       "NTOP_PROBES_DIR (built-in probes), NTOP_REAL_LIBAMDHIP64 (the real HIP\n"
	       "runtime), and the hook's NTOP_TIME_LAUNCHES (sample: a kernel's first\n"
	       "launch, then one per NTOP_TIME_GAP_MS, 10; all; off), NTOP_PROBE_ASYNC (0:\n"
	       "what --wait-build does), NTOP_ASSEMBLER (auto, jit, ptxas, nvjitlink),\n"
	       "NTOP_PTXAS, NTOP_MAP_BUDGET, NTOP_LOG, NTOP_KEEP_PTX (see\n"
	       "doc/hook.md). To change the probes while PROGRAM runs, write DIR/control\n"
	       "(see doc/control.md). HIP kernels' probed copies are always built on the\n"
	       "launch.\n"
	       "\n"
	       "Examples:\n"
	       "  ntop record ./app                       # list and time kernels only\n"
	       "  ntop record -p block_sched -k sgemm -- ./bench --size 4096\n"
	       "  ntop record -p ./mem.toml --every 10 --limit 5 -o trace1 python train.py\n"
	       "  ntop record -p regions -r load=attn.py:40-55 -r mma=@tensor -- python attn.py\n"
	       "  ntop report trace1\n"
	       "  srun ntop record -p block_sched -o run7-%%h-r%%r -- python train.py\n"
	       "  torchrun --nproc-per-node 8 --no-python ntop record -o run7-%%h-r%%r -- python train.py\n"
	       "  ntop report run7-*            # the ranks' traces as one job\n");
}

/* ---- options ---- */

static int rec_push(const char ***v, int *n, const char *s)
{
	const char **nv = realloc(*v, (size_t)(*n + 1) * sizeof *nv);
	if (!nv)
		return -1;
	nv[(*n)++] = s;
	*v = nv;
	return 0;
}

/* 0 ok, 1 help printed, 2 usage error. */
static int rec_parse(int argc, char **argv, struct rec_opts *o)
{
	int i = 1;
	for (; i < argc; i++) {
		const char *a = argv[i], *v;
		int r;
		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (a[0] != '-' || a[1] == 0)
			break;
		if (cli_is_help(a)) {
			record_help();
			return 1;
		}
		if (strcmp(a, "--no-audit") == 0) {
			o->no_audit = 1;
			continue;
		}
		if (strcmp(a, "--wait-build") == 0) {
			o->wait_build = 1;
			continue;
		}
		if ((r = cli_opt("record", argc, argv, &i, "-p", "--probe", &v)) != 0) {
			if (r < 0 || rec_push(&o->probes, &o->n_probes, v) < 0)
				return 2;
		} else if ((r = cli_opt("record", argc, argv, &i, "-r", "--region", &v)) != 0) {
			if (r < 0 || rec_push(&o->regions, &o->n_regions, v) < 0)
				return 2;
		} else if ((r = cli_opt("record", argc, argv, &i, "-k", "--kernel", &v)) != 0) {
			if (r < 0 || rec_push(&o->kernels, &o->n_kernels, v) < 0)
				return 2;
		} else if ((r = cli_opt("record", argc, argv, &i, "-o", "--output", &v)) != 0) {
			if (r < 0)
				return 2;
			o->out = v;
		} else if ((r = cli_opt("record", argc, argv, &i, NULL, "--every", &v)) != 0) {
			unsigned long n;
			if (r < 0)
				return 2;
			if (cli_parse_ulong(v, &n) < 0 || n == 0)
				return cli_usage("record", "--every needs a positive integer, not '%s'", v);
			o->every = v;
		} else if ((r = cli_opt("record", argc, argv, &i, NULL, "--limit", &v)) != 0) {
			unsigned long n;
			if (r < 0)
				return 2;
			if (cli_parse_ulong(v, &n) < 0)
				return cli_usage("record", "--limit needs a non-negative integer, not '%s'", v);
			o->limit = v;
		} else if ((r = cli_opt("record", argc, argv, &i, NULL, "--map-budget", &v)) != 0) {
			uint64_t n;
			if (r < 0)
				return 2;
			if (cli_parse_size(v, &n) < 0 || n == 0)
				return cli_usage("record", "--map-budget needs a size like 512M or 4G, not '%s'", v);
			snprintf(o->budget, sizeof o->budget, "%llu", (unsigned long long)n);
		} else if ((r = cli_opt("record", argc, argv, &i, NULL, "--sample-blocks", &v)) != 0) {
			unsigned long n;
			if (r < 0)
				return 2;
			if (strcmp(v, "auto") && strcmp(v, "off") &&
			    (cli_parse_ulong(v, &n) < 0 || n == 0 || (n & (n - 1)) || n > (1ul << 31)))
				return cli_usage("record", "--sample-blocks takes auto, off or a power of two (1, 2, 4, ...), not '%s'", v);
			o->sample = v;
		} else {
			return cli_usage("record", "unknown option '%s'", a);
		}
	}
	if (i >= argc)
		return cli_usage("record", "no program to run");
	o->prog = argv + i;
	for (int k = 0; k < o->n_kernels; k++)
		if (strchr(o->kernels[k], '\n') || !o->kernels[k][0])
			return cli_usage("record", "kernel pattern must be non-empty and on one line");
	return 0;
}

/* ---- probe copies ---- */

static int rec_copy_file(const char *from, const char *to)
{
	int in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -1;
	int out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (out < 0) {
		int e = errno;
		close(in);
		errno = e;
		return -1;
	}
	char buf[65536];
	ssize_t n;
	int rc = 0;
	while ((n = read(in, buf, sizeof buf)) > 0)
		if (fdio_write_all(out, buf, (size_t)n) < 0) {
			rc = -1;
			break;
		}
	if (n < 0)
		rc = -1;
	close(in);
	if (close(out) < 0)
		rc = -1;
	return rc;
}

/* The probe at path with the -r regions (o->derived[i]), loaded and
 * verified as the hook will load it. */
static int rec_derive(struct rec_opts *o, int i, const char *path, struct probe **p, char **cause)
{
	size_t len = 0;
	char *text = fdio_read_file(path, PROBE_FILE_MAX, &len);
	int rc = text ? probe_text_with_regions(text, path, o->regions, o->n_regions, &o->derived[i], cause)
		      : cause_set(cause, "%s: cannot read it", path);
	free(text);
	probe_free(*p);
	*p = NULL;
	if (rc == 0 && probe_load_string(o->derived[i], path, p, cause) == 0 && verify_probe(*p, cause) == 0)
		return 0;
	probe_free(*p);
	*p = NULL;
	return -1;
}

/* Resolves and verifies every probe (before anything is created): fills
 * paths[] and names[] (n_probes entries each); with -r, the probe that
 * records regions gets them (o->derived). */
static int rec_verify_probes(struct rec_opts *o, char **paths, char **names)
{
	int with_regions = 0;
	o->derived = calloc((size_t)o->n_probes + 1, sizeof *o->derived);
	for (int i = 0; o->derived && i < o->n_probes; i++) {
		char *cause = NULL;
		struct probe *p = NULL;
		paths[i] = cli_probe_path(o->probes[i], &cause);
		int rc = !paths[i] || cli_probe_load_verified(paths[i], &p, &cause) < 0 ? -1 : 0;
		if (rc == 0 && o->n_regions && probe_has_regions(p) && !with_regions++)
			rc = rec_derive(o, i, paths[i], &p, &cause);
		if (rc < 0) {
			cli_err("probe %s: %s", o->probes[i], cause ? cause : "cannot load");
			free(cause);
			return -1;
		}
		names[i] = strdup(p->name);
		probe_free(p);
	}
	if (o->n_regions && !with_regions) {
		cli_err("-r gives regions, and no probe given records them (-p regions)");
		return -1;
	}
	return o->derived ? 0 : -1;
}

/* Writes text (a probe with the -r regions) as `to`, which must be new. */
static int rec_write_new(const char *text, const char *to)
{
	int out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (out < 0)
		return -1;
	int rc = fdio_write_all(out, text, strlen(text));
	if (close(out) < 0)
		rc = -1;
	return rc;
}

/* Copies one probe into DIR/probes/ (its derived text when it has one),
 * renaming on a clash of base names. */
static char *rec_copy_probe(const struct rec_session *s, const char *path, const char *derived)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	for (int k = 1; k < 100; k++) {
		char *dst;
		int r = k == 1 ? asprintf(&dst, "%s/%s", s->probes_dir, base)
			       : asprintf(&dst, "%s/%d-%s", s->probes_dir, k, base);
		if (r < 0)
			return NULL;
		if ((derived ? rec_write_new(derived, dst) : rec_copy_file(path, dst)) == 0)
			return dst;
		int e = errno;
		free(dst);
		if (e != EEXIST) {
			cli_err("cannot copy %s into %s: %s", path, s->probes_dir, strerror(e));
			return NULL;
		}
	}
	return NULL;
}

/* A probe's GCN version beside it (DIR/amd/NAME: the built-in ones have
 * one), copied as probes/amd/ + the copy's name: HIP's stand-in runs it on
 * AMD kernels in place of the PTX probe (doc/amdgpu.md). */
static int rec_copy_twin(struct rec_session *s, const char *path, const char *copy)
{
	const char *slash = strrchr(path, '/'), *base = strrchr(copy, '/') + 1;
	char *twin = NULL, *dir = NULL, *dst = NULL;
	int rc = 0;
	if (!slash || asprintf(&twin, "%.*s/amd/%s", (int)(slash - path), path, slash + 1) < 0)
		return 0;
	if (access(twin, R_OK) == 0 && asprintf(&dir, "%s/amd", s->probes_dir) >= 0 &&
	    asprintf(&dst, "%s/%s", dir, base) >= 0) {
		char **v = realloc(s->twins, (size_t)(s->n_twins + 1) * sizeof *v);
		if (v)
			s->twins = v;
		if (!v || (mkdir(dir, 0700) < 0 && errno != EEXIST) || rec_copy_file(twin, dst) < 0) {
			cli_err("cannot copy %s into %s: %s", twin, dir, v ? strerror(errno) : "out of memory");
			rc = -1;
		} else {
			s->twins[s->n_twins++] = dst;
			dst = NULL;
		}
	}
	free(twin);
	free(dir);
	free(dst);
	return rc;
}

/* The hook reads the copies: the trace keeps exactly what was probed. */
static int rec_copy_probes(struct rec_session *s, const struct rec_opts *o, char **paths)
{
	if (!o->n_probes)
		return 0;
	if (asprintf(&s->probes_dir, "%s/probes", s->dir) < 0) {
		s->probes_dir = NULL;
		return -1;
	}
	if (mkdir(s->probes_dir, 0700) < 0) {
		cli_err("cannot create %s: %s", s->probes_dir, strerror(errno));
		free(s->probes_dir);
		s->probes_dir = NULL;
		return -1;
	}
	s->copies = calloc((size_t)o->n_probes, sizeof *s->copies);
	for (int i = 0; s->copies && i < o->n_probes; i++) {
		char *dst = rec_copy_probe(s, paths[i], o->derived ? o->derived[i] : NULL);
		if (!dst)
			return -1;
		s->copies[s->n_copies++] = dst;
		if (rec_copy_twin(s, paths[i], dst) < 0)
			return -1;
		if (strchr(dst, ':')) {
			cli_err("probe path %s contains ':', which NTOP_PROBES cannot carry", dst);
			return -1;
		}
	}
	return s->copies ? 0 : -1;
}

/* Removes what this session created (the program never ran). */
static void rec_cleanup(struct rec_session *s)
{
	for (int i = 0; i < s->n_copies; i++)
		unlink(s->copies[i]);
	for (int i = 0; i < s->n_twins; i++)
		unlink(s->twins[i]);
	if (s->probes_dir) {
		char *amd = NULL;
		if (s->n_twins && asprintf(&amd, "%s/amd", s->probes_dir) >= 0)
			rmdir(amd);
		free(amd);
		rmdir(s->probes_dir);
	}
	if (s->sess)
		session_abandon(s->sess);
}

/* ---- events.log ---- */

static int rec_argc(char **prog)
{
	int n = 0;
	while (prog[n])
		n++;
	return n;
}

/* events.log starts with a `record` line saying what was run and how. */
static int rec_open_log(struct rec_session *s, const struct rec_opts *o, char **probe_names)
{
	int argc = 0;
	while (o->prog[argc])
		argc++;
	struct strbuf sb;
	strbuf_init(&sb);
	event_begin(&sb, "record", time_wall_ns(), (int)getpid());
	char *argv = strbuf_join(o->prog, argc, " ");
	event_add(&sb, "argv", argv);
	free(argv);
	event_add(&sb, "version", NTOP_VERSION);
	char cwd[4096];
	event_add(&sb, "cwd", getcwd(cwd, sizeof cwd) ? cwd : "");
	char *pn = strbuf_join(probe_names, o->n_probes, ",");
	event_add(&sb, "probes", pn);
	free(pn);
	char *kn = strbuf_join((char *const *)o->kernels, o->n_kernels, "\n");
	event_add(&sb, "kernels", kn);
	free(kn);
	cli_job_fields(&sb);
	event_end(&sb);
	size_t len;
	char *line = strbuf_finish(&sb, &len), *cause = NULL;
	int rc = line ? session_open_events(s->sess, line, len, &cause) : -1;
	if (rc == 0)
		trace_dir_feed(s->model, line, len);
	else
		cli_err("%s", cause ? cause : "out of memory");
	free(cause);
	free(line);
	return rc;
}

static void rec_feed(void *arg, const char *line, size_t len)
{
	trace_dir_feed(arg, line, len);
}

/* ---- running ---- */

/* While an exiting process still writes results, say how far it got (at
 * most once a second, from its `results at=exit` lines). */
static void rec_progress(const struct rec_session *s, uint64_t *last_ns)
{
	uint64_t now = time_mono_ns();
	if (now - *last_ns < 1000000000ull)
		return;
	const struct trace_dir *td = s->model;
	for (int i = 0; i < td->n_procs; i++) {
		const struct td_process *p = &td->procs[i];
		if (!p->results_draining || p->results_pending == 0)
			continue;
		fprintf(stderr, "ntop: pid %u is writing its results: %llu left, %llu written\n", p->pid,
			(unsigned long long)p->results_pending, (unsigned long long)p->results_written);
		*last_ns = now;
	}
}

/* Copies the events until they are over (the program exited and no process
 * is connected), or until REC_DRAIN_NS after the program exited; reaps it. */
static void rec_pump(struct rec_session *s)
{
	int exited = 0, told = 0;
	uint64_t deadline = 0, said = 0;
	for (;;) {
		int timeout = 200;
		if (exited) {
			uint64_t now = time_mono_ns();
			if (now >= deadline)
				break;
			if ((deadline - now) / 1000000 < 200)
				timeout = (int)((deadline - now) / 1000000) + 1;
		}
		struct pollfd pfd[2];
		int n = session_fds(s->sess, pfd, 2);
		poll(pfd, (nfds_t)n, timeout);
		if (session_read_events(s->sess, rec_feed, s->model) < 0)
			break; /* the program and every connected process are gone */
		session_poll_pid_logs(s->sess, rec_feed, s->model, 0);
		rec_progress(s, &said);
		if (session_events_error(s->sess) && !told++)
			cli_err("writing %s/events.log failed: %s (still waiting for the program)", s->dir,
				strerror(session_events_error(s->sess)));
		if (!exited && session_poll_exit(s->sess)) {
			exited = 1;
			deadline = time_mono_ns() + REC_DRAIN_NS;
		}
	}
	session_wait(s->sess);
}

/* Launches that should have been probed and were not, and results that
 * never reached the disk: never left for the user to notice. */
static void rec_summary_probing(const struct trace_dir *td)
{
	for (int i = 0; i < td->n_kernels; i++) {
		const struct td_kernel *k = &td->kernels[i];
		if (k->probed_started > (uint64_t)k->n_results)
			fprintf(stderr, "ntop: %s (pid %u): %llu probed launch%s left no trace (the process ended "
					"before its results were written)\n", k->name ? k->name : "?", k->pid,
				(unsigned long long)(k->probed_started - (uint64_t)k->n_results),
				k->probed_started - (uint64_t)k->n_results == 1 ? "" : "es");
		if (k->declined)
			fprintf(stderr, "ntop: %s (pid %u): %llu launch%s not probed: %s\n", k->name ? k->name : "?",
				k->pid, (unsigned long long)k->declined, k->declined == 1 ? "" : "es",
				k->declined_reason ? k->declined_reason : "no reason given");
		if (k->deferred)
			fprintf(stderr, "ntop: %s (pid %u): %llu launch%s ran unprobed while its probed copy was "
					"built%s\n", k->name ? k->name : "?", k->pid, (unsigned long long)k->deferred,
				k->deferred == 1 ? "" : "es",
				k->n_results ? "" : " (none probed: --wait-build probes a kernel's first launch)");
	}
	for (int i = 0; i < td->n_procs; i++) {
		const struct td_process *p = &td->procs[i];
		uint64_t lost = td_process_results_lost(p);
		if (p->results_pending_max > 0 || lost)
			fprintf(stderr, "ntop: pid %u: %llu results written, %llu lost, at most %llu waiting to be "
					"written at once\n", p->pid, (unsigned long long)p->results_written,
				(unsigned long long)lost, (unsigned long long)p->results_pending_max);
		if (p->map_given)
			fprintf(stderr, "ntop: pid %u: the app ran out of GPU memory; ntop gave back %.1f MiB of map "
					"buffers so its allocations could succeed\n",
				p->pid, p->map_given / 1048576.0);
	}
}

static void rec_summary(const struct rec_session *s)
{
	const struct trace_dir *td = s->model;
	uint64_t launches = 0;
	int with_ptx = 0, with_co = 0, results = 0;
	for (int i = 0; i < td->n_kernels; i++) {
		launches += td->kernels[i].launches;
		*(td->kernels[i].amd ? &with_co : &with_ptx) += td->kernels[i].has_ptx;
	}
	for (int i = 0; i < td->n_results; i++)
		results += td->results[i].file != NULL;
	/* AMD kernels have code objects, not PTX */
	char code[64];
	if (trace_dir_has_amd(td))
		snprintf(code, sizeof code, "%d with PTX, %d with a code object", with_ptx, with_co);
	else
		snprintf(code, sizeof code, "%d with PTX", with_ptx);
	fprintf(stderr, "ntop: %d kernel%s (%s), %llu launch%s, %d probed, %d result%s written, "
			"%d warning%s\n",
		td->n_kernels, td->n_kernels == 1 ? "" : "s", code, (unsigned long long)launches,
		launches == 1 ? "" : "es", td->n_results, results, results == 1 ? "" : "s",
		td->n_warnings, td->n_warnings == 1 ? "" : "s");
	if (td->lost_events)
		fprintf(stderr, "ntop: %llu events never reached the trace (the hook's buffer overflowed, a write "
				"failed, or ntop stopped reading)\n",
			(unsigned long long)td->lost_events);
	rec_summary_probing(td);
	if (td->n_procs == 0)
		fprintf(stderr, "ntop: the hook was not loaded: the program made no CUDA driver calls "
				"through libcuda.so.1\n");
	if (session_dir_gone(s->sess))
		fprintf(stderr, "ntop: the trace directory %s was removed or replaced while recording: no trace was "
				"kept there\n", s->dir);
	else if (session_events_error(s->sess))
		fprintf(stderr, "ntop: trace in %s, incomplete: writing events.log failed (%s)\nntop: next: ntop report "
				"%s\n", s->dir, strerror(session_events_error(s->sess)), s->dir);
	else
		fprintf(stderr, "ntop: trace in %s\nntop: next: ntop report %s\n", s->dir, s->dir);
}

static int rec_exit_status(const char *prog, int status)
{
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);
		cli_err("%s was killed by signal %d (%s)", prog, sig, strsignal(sig));
	}
	return session_exit_code(status);
}

static int rec_check_hook(char **hook_dir)
{
	*hook_dir = cli_hook_dir();
	char *lib = NULL;
	if (*hook_dir && asprintf(&lib, "%s/libcuda.so.1", *hook_dir) < 0)
		lib = NULL;
	if (!lib || access(lib, R_OK) != 0) {
		cli_err("hook library not found: %s/libcuda.so.1 (build the ntop_hook target or reinstall "
			"ntop; NTOP_HOOK_DIR overrides the location)", *hook_dir ? *hook_dir : "?");
		free(lib);
		return -1;
	}
	free(lib);
	return 0;
}

static int rec_run(struct rec_session *s, const struct rec_opts *o, const char *hook_dir)
{
	struct session_spawn_opts so = {
		.argv = o->prog, .hook_dir = hook_dir, .probes = s->copies, .n_probes = s->n_copies,
		.kernels = (char *const *)o->kernels, .n_kernels = o->n_kernels, .every = o->every,
		.limit = o->limit, .output = SESSION_OUTPUT_INHERIT,
		.map_budget = o->budget[0] ? o->budget : NULL, .sample = o->sample, .no_audit = o->no_audit,
		.wait_build = o->wait_build,
	};
	char *cause = NULL;
	session_signals_install();
	if (session_spawn(s->sess, &so, &cause) < 0) {
		cli_err("%s", cause ? cause : "cannot run the program");
		free(cause);
		rec_cleanup(s);
		return 127;
	}
	if (session_note(s->sess))
		fprintf(stderr, "ntop: %s\n", session_note(s->sess));
	rec_pump(s);
	session_poll_pid_logs(s->sess, rec_feed, s->model, 1);
	if (session_finish_events(s->sess, &cause) < 0)
		cli_err("%s", cause);
	free(cause);
	rec_summary(s);
	return rec_exit_status(o->prog[0], session_status(s->sess));
}

int cmd_record(int argc, char **argv)
{
	struct rec_opts o;
	memset(&o, 0, sizeof o);
	struct rec_session s;
	memset(&s, 0, sizeof s);
	char *hook_dir = NULL, *cause = NULL;
	char **names = NULL, **paths = NULL;
	int rc = rec_parse(argc, argv, &o);
	if (rc)
		goto out;
	rc = 2;
	names = calloc((size_t)o.n_probes + 1, sizeof *names);
	paths = calloc((size_t)o.n_probes + 1, sizeof *paths);
	if (!names || !paths || rec_check_hook(&hook_dir) < 0 || rec_verify_probes(&o, paths, names) < 0)
		goto out;
	if (o.out && strchr(o.out, '%')) {
		char *expanded = NULL;
		if (cli_job_expand(o.out, &expanded, &cause) < 0) {
			cli_usage("record", "%s", cause);
			goto out;
		}
		o.out = o.out_owned = expanded;
	}
	if (session_create(&s.sess, o.out, &cause) < 0) {
		cli_err("%s", cause ? cause : "cannot create the trace directory");
		goto out;
	}
	s.dir = session_dir(s.sess);
	s.model = trace_dir_create(s.dir);
	if (!s.model || rec_copy_probes(&s, &o, paths) < 0 || rec_open_log(&s, &o, names) < 0) {
		rec_cleanup(&s);
		goto out;
	}
	{
		char *argv_text = strbuf_join(o.prog, rec_argc(o.prog), " "), *why = NULL;
		if (sessions_register(s.dir, argv_text, &why) < 0) /* best effort: ntop ls will not list it */
			fprintf(stderr, "ntop: %s\n", why ? why : "session not registered");
		free(why);
		free(argv_text);
	}
	rc = rec_run(&s, &o, hook_dir);
out:
	free(cause);
	free(o.out_owned);
	session_free(s.sess);
	for (int i = 0; i < o.n_probes; i++) {
		free(names ? names[i] : NULL);
		free(paths ? paths[i] : NULL);
	}
	free(names);
	free(paths);
	for (int i = 0; i < s.n_copies; i++)
		free(s.copies[i]);
	free(s.copies);
	for (int i = 0; i < s.n_twins; i++)
		free(s.twins[i]);
	free(s.twins);
	free(s.probes_dir);
	trace_dir_free(s.model);
	free(hook_dir);
	for (int i = 0; o.derived && i < o.n_probes; i++)
		free(o.derived[i]);
	free(o.derived);
	free(o.probes);
	free(o.regions);
	free(o.kernels);
	return rc;
}
