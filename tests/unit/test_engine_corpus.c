/* The whole engine over the PTX corpus: every kernel of every .ptx file in
 * tests/corpus/ptx, instrumented with every probe file we ship (.toml files
 * in probes/) and with NEUTRINO's (tests/data/neutrino_<name>.toml and the
 * corpus of its shipped probes in both layouts, tests/corpus/neutrino), and
 * every result assembled with ptxas (two at a time: ptxas dominates), in
 * both forms (engine.h: map addresses kept from the entry, or computed at
 * each exit). For the light block_sched probe the unprobed kernel is
 * assembled too, and the registers the probe adds are held to the bounds
 * measured with ptxas 13.0, per form (NEUTRINO reports ~4 on average; our
 * probe keeps two u64 values live, the entry form two addresses more).
 * Every probed kernel, in those two forms and the 1-D launch-shape form,
 * is also held to tests/corpus/probed.digest (a 64-bit FNV-1a digest of its
 * PTX per file, kernel, probe and form): a change of the probed output shows
 * as the lines that differ. NTOP_UPDATE_DIGESTS=1 rewrites the file, for a
 * change that means to alter the probed PTX (say so in its commit). */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/ptx/assemble.h"
#include "engine/engine.h"
#include "engine/probe/probe.h"
#include "engine/ptx/ptx.h"
#include "testlib.h"

#define MAX_PROBES 32
#define WORKERS 2
#define N_FORMS 3
#define DIGESTS "tests/corpus/probed.digest"
static const unsigned FORMS[N_FORMS] = { 0, ENGINE_ADDR_AT_EXIT, ENGINE_BLOCK_1D | ENGINE_GRID_1D };
static const char *const FORM_NAMES[N_FORMS] = { "entry", "exit", "1d" };
#define REG_PROBE "probes/block_sched.toml"
/* mean and most extra registers, per form: exit (measured 4.9 and 12; 9.0
 * on average before exit-time addressing), entry (measured 8.3 and 18) */
static const double REG_MEAN_MAX[2] = { 10.0, 6.0 };
static const int REG_ONE_MAX[2] = { 20, 13 };

struct job {
	char what[512];
	char *ptx;
	int n_maps;
	int ok;
	int registers;
	int base;    /* job of the unprobed kernel (block_sched jobs), else -1 */
	int form;    /* 0: addresses at entry, 1: at exit (ENGINE_ADDR_AT_EXIT) */
	char *cause;
};

/* One line per probed kernel: "digest file kernel probe form". */
static char **digests;
static int n_digests, cap_digests;

static uint64_t fnv1a64(const char *s, size_t n)
{
	uint64_t h = 14695981039346656037ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

static void add_digest(const char *file, const char *kernel, const char *pname, int form, const char *ptx)
{
	if (n_digests == cap_digests) {
		cap_digests = cap_digests ? cap_digests * 2 : 256;
		digests = realloc(digests, (size_t)cap_digests * sizeof *digests);
	}
	char *line = NULL;
	if (asprintf(&line, "%016llx %s %s %s %s", (unsigned long long)fnv1a64(ptx, strlen(ptx)), file, kernel,
		     pname, FORM_NAMES[form]) < 0)
		line = NULL;
	digests[n_digests++] = line;
}

static struct job *jobs;
static int n_jobs, cap_jobs, next_job;
static pthread_mutex_t job_lock = PTHREAD_MUTEX_INITIALIZER;

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names in dir ending in suffix (and starting with prefix). */
static int list_dir(const char *dir, const char *prefix, const char *suffix, char ***out)
{
	DIR *d = opendir(dir);
	int n = 0;
	*out = NULL;
	if (!d)
		return 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name), sl = strlen(suffix);
		if (len <= sl || strcmp(e->d_name + len - sl, suffix) ||
		    strncmp(e->d_name, prefix, strlen(prefix)))
			continue;
		*out = realloc(*out, (size_t)(n + 1) * sizeof **out);
		(*out)[n++] = strdup(e->d_name);
	}
	closedir(d);
	if (n)
		qsort(*out, (size_t)n, sizeof **out, cmp_str);
	return n;
}

/* Every memory access: its address and size (ADDR on every operand form the
 * corpus has, BYTES on every type and cp.async size), lane 0 of each warp.
 * "cp.async.bulk.global" takes every bulk copy and reduction with a global
 * side (also cp.reduce.async.bulk: dotted parts match in order) but not
 * cp.async.bulk.commit_group / wait_group, which have no address. */
static const char MEMTRACE[] =
	"[mem]\n"
	"position = \"ld:st:atom:red:cp.async.ca:cp.async.cg:cp.async.bulk.global\"\n"
	"datamodel = \"warp:16\"\n"
	"before = \"SAVE.u64 {ADDR}; SAVE.u32 {BYTES, SMID};\"\n";

/* Appends dir/prefix*.toml to names[n..]; returns the new count. */
static int add_dir(char **names, int n, const char *dir, const char *prefix)
{
	char **files;
	int nf = list_dir(testlib_src(dir), prefix, ".toml", &files);
	CHECKF(n + nf <= MAX_PROBES, "%s: %d probe files, room for %d", dir, nf, MAX_PROBES - n);
	for (int i = 0; i < nf; i++) {
		char rel[512];
		snprintf(rel, sizeof rel, "%s/%s", dir, files[i]);
		if (n < MAX_PROBES)
			names[n++] = strdup(rel);
		free(files[i]);
	}
	free(files);
	return n;
}

static int load_probes(struct probe **probes, char **names)
{
	int n = 0;
	char *mcause = NULL;
	CHECKF(probe_load_string(MEMTRACE, "memtrace.toml", &probes[n], &mcause) == 0, "memtrace: %s",
	       mcause ? mcause : "");
	free(mcause);
	if (probes[n])
		names[n++] = strdup("memtrace (inline)");
	int loaded = n;
	char **files;
	int nf = list_dir(testlib_src("probes"), "", ".toml", &files);
	for (int i = 0; i < nf; i++) {
		char rel[512];
		snprintf(rel, sizeof rel, "probes/%s", files[i]);
		names[n] = strdup(rel);
		free(files[i]);
		n++;
	}
	free(files);
	n = add_dir(names, n, "tests/data", "neutrino_");
	n = add_dir(names, n, "tests/corpus/neutrino", "");
	for (int i = loaded; i < n && i < MAX_PROBES; i++) {
		char *cause = NULL;
		struct probe *p = NULL;
		int rc = probe_load_file(testlib_src(names[i]), &p, &cause);
		CHECKF(rc == 0, "%s: %s", names[i], cause ? cause : "");
		free(cause);
		if (rc == 0) {
			probes[loaded] = p;
			names[loaded] = names[i];
			loaded++;
		} else {
			free(names[i]);
		}
	}
	return loaded;
}

static int add_job(const char *what, char *ptx, int n_maps)
{
	if (n_jobs == cap_jobs) {
		cap_jobs = cap_jobs ? cap_jobs * 2 : 64;
		jobs = realloc(jobs, (size_t)cap_jobs * sizeof *jobs);
	}
	struct job *j = &jobs[n_jobs++];
	memset(j, 0, sizeof *j);
	snprintf(j->what, sizeof j->what, "%s", what);
	j->ptx = ptx;
	j->n_maps = n_maps;
	j->base = -1;
	return n_jobs - 1;
}

static void *worker(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&job_lock);
		int i = next_job < n_jobs ? next_job++ : -1;
		pthread_mutex_unlock(&job_lock);
		if (i < 0)
			return NULL;
		struct job *j = &jobs[i];
		char arch[32];
		struct assemble_info info = { .registers = -1 };
		if (assemble_pick_arch(j->ptx, 0, arch, sizeof arch) < 0) {
			j->cause = strdup("no .target");
			continue;
		}
		j->ok = assemble_ptxas(j->ptx, strlen(j->ptx), arch, NULL, &info, &j->cause) == 0;
		j->registers = j->ok ? info.registers : -1;
		if (j->ok)
			assemble_info_done(&info);
	}
}

/* Structure every probed kernel must have, whatever the probe. */
static void check_result(const char *what, const struct engine_result *r)
{
	CHECKF(r->ptx && r->ptx_len == strlen(r->ptx), "%s: ptx length", what);
	CHECKF(r->pruned_ptx && strstr(r->pruned_ptx, "ntop_") == NULL, "%s: pruned PTX is probed", what);
	CHECKF(r->target[0] == 's' && r->target[1] == 'm', "%s: target '%s'", what, r->target);
	CHECKF(r->stats.lines_in >= r->stats.lines_pruned && r->stats.lines_probed > r->stats.lines_pruned,
	       "%s: lines %d %d %d", what, r->stats.lines_in, r->stats.lines_pruned, r->stats.lines_probed);
	for (int i = 0; i < r->n_maps; i++) {
		char pat[64];
		snprintf(pat, sizeof pat, ".param .u64 ntop_map%d", i);
		CHECKF(strstr(r->ptx, pat) != NULL, "%s: no %s", what, pat);
		CHECKF(r->maps[i].param_index == r->n_params_orig + i, "%s: map %d param %d", what, i,
		       r->maps[i].param_index);
		snprintf(pat, sizeof pat, "[ntop_map%d];", i);
		CHECKF(strstr(r->ptx, pat) != NULL, "%s: map %d never addressed", what, i);
		snprintf(pat, sizeof pat, "st.global.u32 [%%ntop_hc%d], ", i);
		int stored = strstr(r->ptx, pat) != NULL || strstr(r->ptx, "st.global.u32 [%ntop_ca], ") != NULL;
		CHECKF(stored == !r->maps[i].count_static, "%s: map %d count %s, the plan says %s", what, i,
		       stored ? "stored" : "never stored", r->maps[i].count_static ? "not stored" : "stored");
	}
	CHECKF(r->stats.sites >= 1, "%s: %d sites", what, r->stats.sites);
}

/* One kernel, one probe, one form: checked, digested, and queued for
 * ptxas (with the unprobed kernel beside block_sched's, once: its job in
 * *base); the 1-D form is digested only. */
static void instrument_one(const char *text, size_t len, const char *kernel, struct probe *probe,
			   const char *pname, int form, const char *file, int *base)
{
	char what[512], *cause = NULL;
	snprintf(what, sizeof what, "%s %s [%s] %s", file, kernel, pname, FORM_NAMES[form]);
	struct engine_result r;
	int rc = engine_instrument(text, len, kernel, &probe, 1, FORMS[form], &r, &cause);
	CHECKF(rc == 0, "%s: %s", what, cause ? cause : "");
	free(cause);
	if (rc < 0)
		return;
	check_result(what, &r);
	add_digest(file, kernel, pname, form, r.ptx);
	if (form == 2) {
		engine_result_done(&r);
		return;
	}
	int j = add_job(what, r.ptx, r.n_maps);
	jobs[j].form = form;
	r.ptx = NULL;
	if (!strcmp(pname, REG_PROBE)) {
		if (*base < 0) {
			char b[512];
			snprintf(b, sizeof b, "%.480s unprobed", what);
			*base = add_job(b, r.pruned_ptx, 0);
			r.pruned_ptx = NULL;
		}
		jobs[j].base = *base;
	}
	engine_result_done(&r);
}

static int instrument_file(const char *name, struct probe **probes, char **pnames, int n_probes)
{
	char rel[512];
	snprintf(rel, sizeof rel, "tests/corpus/ptx/%s", name);
	size_t len = 0;
	char *text = testlib_slurp(testlib_src(rel), &len);
	CHECKF(text != NULL, "cannot read %s", rel);
	if (!text)
		return 0;
	struct ptx_module *m = NULL;
	char *cause = NULL;
	int kernels = 0;
	CHECKF(ptx_parse(text, len, &m, &cause) == 0, "%s: %s", name, cause ? cause : "");
	const char **entries = NULL;
	int n_entries = 0;
	if (m && ptx_list_entries(m, &entries, &n_entries) == 0) {
		for (int k = 0; k < n_entries; k++) {
			kernels++;
			for (int p = 0; p < n_probes; p++) {
				int base = -1;
				for (int form = 0; form < N_FORMS; form++)
					instrument_one(text, len, entries[k], probes[p], pnames[p], form, name, &base);
			}
		}
	}
	free(entries);
	ptx_free(m);
	free(cause);
	free(text);
	return kernels;
}

static int cmp_digest_key(const void *a, const void *b)
{
	/* by everything after the digest: file, kernel, probe, form */
	return strcmp(*(char *const *)a + 17, *(char *const *)b + 17);
}

/* The probed PTX against tests/corpus/probed.digest: every line that
 * differs, is new or is gone is a failure (the first 20 printed). */
static void check_digests(void)
{
	qsort(digests, (size_t)n_digests, sizeof *digests, cmp_digest_key);
	const char *path = testlib_src(DIGESTS);
	if (getenv("NTOP_UPDATE_DIGESTS")) {
		FILE *f = fopen(path, "w");
		CHECKF(f != NULL, "cannot write %s", path);
		for (int i = 0; f && i < n_digests; i++)
			fprintf(f, "%s\n", digests[i]);
		if (f)
			fclose(f);
		printf("wrote %d digests to %s\n", n_digests, DIGESTS);
		return;
	}
	size_t len = 0;
	char *want = testlib_slurp(path, &len);
	CHECKF(want != NULL, "cannot read %s", path);
	int n_want = 0, differ = 0;
	for (char *line = want, *nl; want && *line; line = nl + 1) {
		nl = strchr(line, '\n');
		if (!nl)
			break;
		*nl = 0;
		n_want++;
		char *key = line;
		char **hit = strlen(line) > 17 ? bsearch(&key, digests, (size_t)n_digests, sizeof *digests,
							 cmp_digest_key) : NULL;
		if (hit && !strcmp(*hit, line)) {
			(*hit)[0] = '=';
			continue;
		}
		if (hit)
			(*hit)[0] = '!';
		if (differ++ < 20)
			printf("probed PTX %s: %s\n", hit ? "differs" : "no longer made", line + 17);
	}
	for (int i = 0; i < n_digests; i++)
		if (digests[i][0] != '=' && digests[i][0] != '!' && differ++ < 20)
			printf("probed PTX new: %s\n", digests[i] + 17);
	CHECKF(differ == 0, "%d probed kernels differ from %s (NTOP_UPDATE_DIGESTS=1 rewrites it)", differ, DIGESTS);
	printf("probed PTX: %d of %d digests as in %s\n", n_want - differ, n_want, DIGESTS);
	free(want);
}

int main(void)
{
	char **files;
	int n_files = list_dir(testlib_src("tests/corpus/ptx"), "", ".ptx", &files);
	struct probe *probes[MAX_PROBES];
	char *pnames[MAX_PROBES];
	int n_probes = load_probes(probes, pnames);
	int kernels = 0;
	for (int i = 0; i < n_files; i++)
		kernels += instrument_file(files[i], probes, pnames, n_probes);

	pthread_t th[WORKERS];
	for (int i = 0; i < WORKERS; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	for (int i = 0; i < WORKERS; i++)
		pthread_join(th[i], NULL);
	int assembled = 0, n_delta[2] = { 0, 0 }, sum_delta[2] = { 0, 0 }, max_delta[2] = { 0, 0 };
	for (int i = 0; i < n_jobs; i++) {
		CHECKF(jobs[i].ok, "%s: %s", jobs[i].what, jobs[i].cause ? jobs[i].cause : "");
		assembled += jobs[i].ok;
		int b = jobs[i].base, f = jobs[i].form;
		if (b >= 0 && jobs[i].ok && jobs[b].ok) {
			int d = jobs[i].registers - jobs[b].registers;
			CHECKF(d <= REG_ONE_MAX[f], "%s: %d -> %d registers", jobs[i].what, jobs[b].registers,
			       jobs[i].registers);
			sum_delta[f] += d;
			max_delta[f] = d > max_delta[f] ? d : max_delta[f];
			n_delta[f]++;
		}
	}
	for (int i = 0; i < n_jobs; i++) {
		free(jobs[i].ptx);
		free(jobs[i].cause);
	}
	check_digests();
	for (int i = 0; i < n_digests; i++)
		free(digests[i]);
	free(digests);
	for (int f = 0; f < 2; f++) {
		if (!n_delta[f])
			continue;
		double mean = (double)sum_delta[f] / n_delta[f];
		printf("%s, addresses at %s: %.2f extra registers on average over %d kernels, %d at most\n",
		       REG_PROBE, f ? "exit" : "entry", mean, n_delta[f], max_delta[f]);
		CHECKF(mean <= REG_MEAN_MAX[f], "%s adds %.2f registers on average (bound %.1f)", REG_PROBE, mean,
		       REG_MEAN_MAX[f]);
	}
	printf("corpus: %d files, %d kernels, %d probe files, %d probed kernels assembled of %d\n",
	       n_files, kernels, n_probes, assembled, n_jobs);
	if (n_files == 0)
		printf("corpus is empty: nothing tested yet\n");
	else
		CHECKF(kernels > 0 && n_probes > 0 && assembled > 0, "files but nothing tested");
	for (int i = 0; i < n_files; i++)
		free(files[i]);
	free(files);
	for (int i = 0; i < n_probes; i++) {
		probe_free(probes[i]);
		free(pnames[i]);
	}
	free(jobs);
	return testlib_report();
}
