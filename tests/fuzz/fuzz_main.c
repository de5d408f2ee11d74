/* A standalone driver for the libFuzzer harnesses, for builds without
 * libFuzzer (gcc, CI): replays every seed, then runs mutated inputs made
 * from them, deterministically from a seed, until a count or a time limit.
 * Linked with one harness (its LLVMFuzzerTestOneInput):
 *
 *   fuzz_ntr_replay [-n COUNT] [-t SECONDS] [-s SEED] [-x DICT] [-k ONLY] SEEDS...
 *
 * SEEDS are files or directories (their regular files, not recursive).
 * Mutations: bit flips, interesting integers written over 1-8 bytes,
 * inserted, deleted and duplicated ranges, splices of two seeds, dictionary
 * tokens (libFuzzer's dictionary format: one "token" per line). A crash
 * under a sanitizer writes the input to fuzz-crash-<pid>.bin; `-k N`
 * replays mutation N alone (same seed and corpus) to reproduce one.
 * Prints "<name>: N seeds, M mutated inputs" at the end. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAX_INPUT (1u << 20) /* bytes: seeds are cut here, mutants never grow past it */

struct buf {
	uint8_t *p;
	size_t n;
};

struct corpus {
	struct buf *v;
	size_t n;
};

static struct corpus seeds, dict;
static uint64_t rng;

static uint64_t next_rand(void)
{
	rng ^= rng << 13; /* xorshift64 */
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static size_t below(size_t n)
{
	return n ? (size_t)(next_rand() % n) : 0;
}

static void add(struct corpus *c, const uint8_t *p, size_t n)
{
	struct buf *v = realloc(c->v, (c->n + 1) * sizeof *v);
	if (!v)
		return;
	c->v = v;
	v[c->n].p = malloc(n ? n : 1);
	if (!v[c->n].p)
		return;
	memcpy(v[c->n].p, p, n);
	v[c->n++].n = n;
}

static void add_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return;
	uint8_t *b = malloc(FUZZ_MAX_INPUT);
	size_t n = b ? fread(b, 1, FUZZ_MAX_INPUT, f) : 0;
	fclose(f);
	if (b)
		add(&seeds, b, n);
	free(b);
}

static void add_path(const char *path)
{
	struct stat st;
	if (stat(path, &st) < 0) {
		fprintf(stderr, "fuzz: %s: no such seed\n", path);
		exit(2);
	}
	if (!S_ISDIR(st.st_mode)) {
		add_file(path);
		return;
	}
	DIR *d = opendir(path);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0;
	while (d && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		char **v = realloc(names, (n + 1) * sizeof *v);
		if (!v)
			break;
		names = v;
		if ((names[n] = strdup(e->d_name)) != NULL)
			n++;
	}
	if (d)
		closedir(d);
	for (size_t i = 0; i < n; i++) { /* directory order varies: sort for determinism */
		for (size_t j = i + 1; j < n; j++)
			if (strcmp(names[j], names[i]) < 0) {
				char *t = names[i];
				names[i] = names[j];
				names[j] = t;
			}
		char full[4096];
		snprintf(full, sizeof full, "%s/%s", path, names[i]);
		if (stat(full, &st) == 0 && S_ISREG(st.st_mode))
			add_file(full);
		free(names[i]);
	}
	free(names);
}

/* "token" lines of a libFuzzer dictionary (\xNN and \\ \" escapes). */
static void load_dict(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	while (f && fgets(line, sizeof line, f)) {
		char *q = strchr(line, '"');
		if (line[0] == '#' || !q)
			continue;
		uint8_t tok[512];
		size_t n = 0;
		for (q++; *q && *q != '"' && n < sizeof tok; q++) {
			if (*q == '\\' && q[1] == 'x' && q[2] && q[3]) {
				tok[n++] = (uint8_t)strtol((char[]){ q[2], q[3], 0 }, NULL, 16);
				q += 3;
			} else {
				tok[n++] = (uint8_t)(*q == '\\' && q[1] ? *++q : *q);
			}
		}
		add(&dict, tok, n);
	}
	if (f)
		fclose(f);
}

/* ---- mutations ---- */

static void put_int(uint8_t *p, size_t room)
{
	static const uint64_t interesting[] = { 0, 1, 2, 7, 8, 16, 64, 127, 128, 255, 256, 0x7fff, 0xffff, 0x10000,
						0x7fffffff, 0x80000000u, 0xffffffffu, 0x100000000ull,
						0x7fffffffffffffffull, 0xffffffffffffffffull };
	uint64_t v = interesting[below(sizeof interesting / sizeof interesting[0])];
	size_t w = (size_t)1 << below(4); /* 1, 2, 4 or 8 bytes, little-endian */
	for (size_t i = 0; i < w && i < room; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void mutate_once(struct buf *b)
{
	size_t n = b->n;
	switch (below(7)) {
	case 0: /* flip a bit */
		if (n)
			b->p[below(n)] ^= (uint8_t)(1u << below(8));
		break;
	case 1: /* an interesting integer */
		if (n) {
			size_t at = below(n);
			put_int(b->p + at, n - at);
		}
		break;
	case 2: { /* delete a range */
		size_t at = below(n), k = below(n - at < 64 ? n - at : 64) + 1;
		if (n && at + k <= n) {
			memmove(b->p + at, b->p + at + k, n - at - k);
			b->n -= k;
		}
		break;
	}
	case 3: /* insert random bytes */
	case 4: { /* or a dictionary token, or a copy of a range */
		uint8_t tmp[512];
		size_t k = 0;
		if (dict.n && below(2)) {
			const struct buf *t = &dict.v[below(dict.n)];
			k = t->n < sizeof tmp ? t->n : sizeof tmp;
			memcpy(tmp, t->p, k);
		} else if (n && below(2)) {
			size_t at = below(n);
			k = below(n - at < sizeof tmp ? n - at : sizeof tmp) + 1;
			memcpy(tmp, b->p + at, k);
		} else {
			k = below(16) + 1;
			for (size_t i = 0; i < k; i++)
				tmp[i] = (uint8_t)next_rand();
		}
		if (n + k > FUZZ_MAX_INPUT)
			break;
		size_t at = below(n + 1);
		memmove(b->p + at + k, b->p + at, n - at);
		memcpy(b->p + at, tmp, k);
		b->n += k;
		break;
	}
	case 5: { /* splice in the tail of another seed */
		const struct buf *o = &seeds.v[below(seeds.n)];
		size_t at = below(n + 1), from = below(o->n + 1), k = o->n - from;
		if (at + k > FUZZ_MAX_INPUT)
			k = FUZZ_MAX_INPUT - at;
		memcpy(b->p + at, o->p + from, k);
		b->n = at + k;
		break;
	}
	default: /* cut short */
		b->n = below(n + 1);
		break;
	}
}

/* Mutation number k: a seed picked and changed 1-8 times, all from k. */
static void make_input(uint64_t seed, uint64_t k, struct buf *out)
{
	rng = (seed ^ (k * 0x9E3779B97F4A7C15ull)) | 1;
	const struct buf *s = &seeds.v[below(seeds.n)];
	memcpy(out->p, s->p, s->n);
	out->n = s->n;
	for (size_t m = below(8) + 1; m > 0; m--)
		mutate_once(out);
}

/* ---- a crash keeps its input ---- */

static struct buf *current;

static void save_current(void)
{
	char name[64];
	snprintf(name, sizeof name, "fuzz-crash-%d.bin", (int)getpid());
	FILE *f = current ? fopen(name, "wb") : NULL;
	if (f) {
		fwrite(current->p, 1, current->n, f);
		fclose(f);
		fprintf(stderr, "fuzz: the input is in %s\n", name);
	}
}

extern void __sanitizer_set_death_callback(void (*cb)(void)) __attribute__((weak));

static void run(struct buf *b)
{
	current = b;
	LLVMFuzzerTestOneInput(b->p, b->n);
	current = NULL;
}

int main(int argc, char **argv)
{
	uint64_t count = 1000, seed = 1, only = 0;
	double limit = 0;
	int have_only = 0, i = 1;
	for (; i + 1 < argc && argv[i][0] == '-' && argv[i][1] && !argv[i][2]; i += 2) {
		switch (argv[i][1]) {
		case 'n': count = strtoull(argv[i + 1], NULL, 10); break;
		case 't': limit = strtod(argv[i + 1], NULL); break;
		case 's': seed = strtoull(argv[i + 1], NULL, 10); break;
		case 'x': load_dict(argv[i + 1]); break;
		case 'k': only = strtoull(argv[i + 1], NULL, 10); have_only = 1; break;
		default: fprintf(stderr, "fuzz: unknown option %s\n", argv[i]); return 2;
		}
	}
	for (; i < argc; i++)
		add_path(argv[i]);
	if (!seeds.n) {
		fprintf(stderr, "usage: %s [-n COUNT] [-t SECONDS] [-s SEED] [-x DICT] [-k ONLY] SEEDS...\n", argv[0]);
		return 2;
	}
	if (__sanitizer_set_death_callback)
		__sanitizer_set_death_callback(save_current);
	struct buf b = { malloc(FUZZ_MAX_INPUT), 0 };
	if (!b.p)
		return 1;
	if (have_only) {
		make_input(seed, only, &b);
		run(&b);
		return 0;
	}
	for (size_t s = 0; s < seeds.n; s++) {
		memcpy(b.p, seeds.v[s].p, seeds.v[s].n);
		b.n = seeds.v[s].n;
		run(&b);
	}
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	uint64_t k = 0;
	for (; k < count; k++) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (limit > 0 && (double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 > limit)
			break;
		make_input(seed, k, &b);
		run(&b);
	}
	const char *name = strrchr(argv[0], '/');
	printf("%s: %zu seeds, %llu mutated inputs (seed %llu)\n", name ? name + 1 : argv[0], seeds.n,
	       (unsigned long long)k, (unsigned long long)seed);
	free(b.p);
	return 0;
}
